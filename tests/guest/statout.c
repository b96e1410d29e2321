/* statout: a stat's result at the edges of guest memory and around signals and tracers (issue 16's
 * copy-out on the way back: on seccomp the stub, not the sentry, writes a stat's struct into guest memory
 * as the guest resumes). Each line is a case and its result, compared with a native run:
 *   edges    stat, lstat, fstat, newfstatat (fstat's AT_EMPTY_PATH form too), statx, and readlink, getcwd
 *            and getdents64 (64 bytes: Linux returns the entries that fit before a fault, pvx EFAULT) into NULL, a
 *            read-only page, a PROT_NONE page, a buffer running into an unmapped page, and a buffer in
 *            stack pages not touched yet, 256 KiB below the stack pointer (the kernel's copy grows the
 *            stack, so must pvx's)
 *   signals  20000 stats of one file with an interval timer firing every 200 us and a handler that stats
 *            another file into its own buffer: every result is the right file's
 *   traced   a child traced with PTRACE_SYSCALL stats a file 200 times; at each syscall-exit stop the
 *            parent reads the child's buffer (PTRACE_PEEKDATA): the result is there by then */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#define PG 4096
static const char *file = "/etc/passwd";

static void show(const char *what, long r)
{
	printf("%s: %s\n", what, r < 0 ? strerror(errno) : "ok");
}

static void calls(const char *what, void *buf)
{
	char name[128];
	int fd = open(file, O_RDONLY);

	snprintf(name, sizeof(name), "%s stat", what);
	show(name, syscall(SYS_stat, file, buf));
	snprintf(name, sizeof(name), "%s lstat", what);
	show(name, syscall(SYS_lstat, file, buf));
	snprintf(name, sizeof(name), "%s fstat", what);
	show(name, syscall(SYS_fstat, fd, buf));
	snprintf(name, sizeof(name), "%s newfstatat", what);
	show(name, syscall(SYS_newfstatat, AT_FDCWD, file, buf, 0));
	snprintf(name, sizeof(name), "%s newfstatat empty", what);
	show(name, syscall(SYS_newfstatat, fd, "", buf, AT_EMPTY_PATH));
	snprintf(name, sizeof(name), "%s statx", what);
	show(name, syscall(SYS_statx, AT_FDCWD, file, 0, 0x7ff, buf));
	close(fd);
	/* the other small results written the same way */
	snprintf(name, sizeof(name), "%s readlink", what);
	show(name, syscall(SYS_readlink, "/proc/self/cwd", buf, 64) < 0 ? -1 : 0);
	snprintf(name, sizeof(name), "%s getcwd", what);
	show(name, syscall(SYS_getcwd, buf, 128) < 0 ? -1 : 0);
	int d = open("/", O_RDONLY | O_DIRECTORY);
	snprintf(name, sizeof(name), "%s getdents64", what);
	show(name, syscall(SYS_getdents64, d, buf, 64) < 0 ? -1 : 0);
	close(d);
}

static ino_t want, want2;

/* The deep end of a 256 KiB frame nobody touched: below the stack's pages so far. */
static __attribute__((noinline)) void deep(void)
{
	volatile char big[256 * 1024];
	struct stat *st = (struct stat *)(uintptr_t)(((uintptr_t)big + 64) & ~63UL);

	calls("untouched stack", (void *)st);
	memset((void *)st, 0, sizeof(*st));
	printf("untouched stack stat, ino right: %d\n", stat(file, st) == 0 && st->st_ino == want);
	big[sizeof(big) - 1] = 0;
}

static volatile long bad_handler;

static void on_alarm(int sig)
{
	struct stat st;
	(void)sig;
	if (stat("/", &st) || st.st_ino != want2)
		bad_handler++;
}

int main(int argc, char **argv)
{
	struct stat st;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (stat(file, &st))
		return 1;
	want = st.st_ino;
	if (argc > 1 && !strcmp(argv[1], "edges")) {
		calls("NULL", NULL);
		char *m = mmap(NULL, 3 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		munmap(m + 2 * PG, PG);
		calls("runs into unmapped", m + 2 * PG - 64);
		calls("fits the page", m + 2 * PG - 256);
		mprotect(m, PG, PROT_READ);
		calls("read-only", m);
		mprotect(m, PG, PROT_NONE);
		calls("prot none", m);
		deep();
		return 0;
	}
	if (argc > 1 && !strcmp(argv[1], "signals")) {
		struct stat r;
		if (stat("/", &r))
			return 1;
		want2 = r.st_ino;
		signal(SIGALRM, on_alarm);
		/* 200 us: at 50 us a native run under QEMU's software CPU once printed nothing before its timeout,
		 * most likely spending its time in the handler, whose own stat takes about that long there */
		struct itimerval it = { { 0, 200 }, { 0, 200 } };
		setitimer(ITIMER_REAL, &it, NULL);
		long bad = 0;
		for (int i = 0; i < 20000; i++) {
			memset(&st, 0, sizeof(st));
			if (stat(file, &st) || st.st_ino != want)
				bad++;
		}
		struct itimerval off = { { 0, 0 }, { 0, 0 } };
		setitimer(ITIMER_REAL, &off, NULL);
		printf("signals: %ld wrong, %ld wrong in the handler\n", bad, bad_handler);
		return 0;
	}
	if (argc > 1 && !strcmp(argv[1], "traced")) {
		static struct stat cst;
		pid_t c = fork();
		if (c == 0) {
			ptrace(PTRACE_TRACEME, 0, 0, 0);
			raise(SIGSTOP);
			for (int i = 0; i < 200; i++) {
				memset(&cst, 0, sizeof(cst));
				syscall(SYS_stat, file, &cst);
			}
			_exit(0);
		}
		int status, stops = 0, seen = 0, right = 0;
		waitpid(c, &status, 0);
		ptrace(PTRACE_SETOPTIONS, c, 0, PTRACE_O_TRACESYSGOOD);
		for (;;) {
			ptrace(PTRACE_SYSCALL, c, 0, 0);
			if (waitpid(c, &status, 0) < 0 || WIFEXITED(status) || WIFSIGNALED(status))
				break;
			if (!WIFSTOPPED(status) || WSTOPSIG(status) != (SIGTRAP | 0x80))
				continue;
			long nr = ptrace(PTRACE_PEEKUSER, c, (void *)(8 * 15) /* orig_rax */, 0);
			long rax = ptrace(PTRACE_PEEKUSER, c, (void *)(8 * 10) /* rax */, 0);
			if (nr != SYS_stat)
				continue;
			if (++stops % 2)
				continue;	/* the entry stop */
			seen++;
			errno = 0;
			long ino = ptrace(PTRACE_PEEKDATA, c, (char *)&cst + offsetof(struct stat, st_ino), 0);
			right += rax == 0 && errno == 0 && (ino_t)ino == want;
		}
		printf("traced: %d exit stops, %d with the result in place\n", seen, right);
		return 0;
	}
	return 2;
}

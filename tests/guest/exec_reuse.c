// SPDX-License-Identifier: GPL-2.0
/*
 * execve(2) leaves nothing of the old image (issue 16: exec reuses the
 * stub when the process is alone in it), compared with the native run:
 *   old [fork|thread|spin]  map a secret page at a fixed address, a
 *           MAP_SHARED memfd page and a System V shm attachment at others,
 *           lock a page, set a non-default SSE and x87 rounding mode;
 *           first fail an exec (ENOEXEC, ENOENT): all of it still there;
 *           then exec "probe" -- directly, from a fork child, from a second
 *           thread, or with a thread spinning in guest code and one blocked
 *           in a syscall (both die first)
 *   probe   every old address gives EFAULT to write(2) and SIGSEGV to a
 *           load; the FPU control words are the defaults; one thread
 *   maps    /proc/self/maps without addresses (for the comparison of a
 *           reused stub with a fresh one, in the bats file)
 *   hold    print "ready" and sleep (a host-side look at the stub)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define SECRET_AT ((char *)0x200000000UL)
#define MEMFD_AT ((char *)0x210000000UL)
#define SHM_AT ((char *)0x220000000UL)
#define LOCKED_AT ((char *)0x230000000UL)
#define SECRET "the old image's secret"

static char self[4096];
static const char *mode_after = "probe";

static void die(const char *what)
{
	printf("%s: %s\n", what, strerror(errno));
	exit(1);
}

static void set_fpu(void)
{
	uint32_t mxcsr = 0x7f80;	/* round toward zero, all exceptions masked */
	uint16_t fcw = 0x0f7f;		/* x87: round toward zero */
	__asm__ volatile("ldmxcsr %0" ::"m"(mxcsr));
	__asm__ volatile("fldcw %0" ::"m"(fcw));
	__asm__ volatile("movq %0, %%xmm5" ::"r"(0x5ec7e75ec7e7UL) : "xmm5");
}

static void print_fpu(void)
{
	uint32_t mxcsr;
	uint16_t fcw;
	uint64_t x5;
	__asm__ volatile("stmxcsr %0" : "=m"(mxcsr));
	__asm__ volatile("fnstcw %0" : "=m"(fcw));
	__asm__ volatile("movq %%xmm5, %0" : "=r"(x5));
	printf("mxcsr %#x fcw %#x xmm5 %#lx\n", mxcsr, fcw, (unsigned long)x5);
}

static void *map_at(void *at, int flags, int fd)
{
	void *p = mmap(at, 4096, PROT_READ | PROT_WRITE, flags | MAP_FIXED_NOREPLACE, fd, 0);
	if (p != at)
		die("mmap");
	return p;
}

static void setup(void)
{
	strcpy(map_at(SECRET_AT, MAP_PRIVATE | MAP_ANONYMOUS, -1), SECRET);
	int fd = memfd_create("secret", 0);
	if (fd < 0 || ftruncate(fd, 4096) < 0)
		die("memfd");
	strcpy(map_at(MEMFD_AT, MAP_SHARED, fd), SECRET);
	int id = shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0600);
	if (id < 0)
		die("shmget");
	char *s = shmat(id, SHM_AT, 0);
	if (s != SHM_AT)
		die("shmat");
	shmctl(id, IPC_RMID, NULL);	/* goes with its last attachment: the exec's */
	strcpy(s, SECRET);
	map_at(LOCKED_AT, MAP_PRIVATE | MAP_ANONYMOUS, -1);
	if (mlock(LOCKED_AT, 4096) < 0)
		printf("mlock: %s\n", strerror(errno));
	set_fpu();
}

/* Everything the old image set up is still there (after a failed exec). */
static void check_intact(const char *after)
{
	int same = !strcmp(SECRET_AT, SECRET) && !strcmp(MEMFD_AT, SECRET) && !strcmp(SHM_AT, SECRET);
	printf("after %s: old image %s\n", after, same ? "intact" : "CHANGED");
	print_fpu();
}

static void failed_execs(void)
{
	char *argv[] = { "x", NULL };
	/* a regular executable file that is not ELF and has no "#!": ENOEXEC from the header check */
	int fd = open("notelf", O_WRONLY | O_CREAT | O_TRUNC, 0700);
	if (fd < 0 || write(fd, "just text\n", 10) != 10)
		die("notelf");
	close(fd);
	execve("./notelf", argv, environ);
	printf("exec notelf: %s\n", strerror(errno));
	unlink("notelf");
	execve("/nonexistent/prog", argv, environ);
	printf("exec missing: %s\n", strerror(errno));
	check_intact("failed execs");
	fflush(stdout);
}

static void exec_next(void)
{
	char *argv[] = { self, (char *)mode_after, NULL };
	fflush(stdout);
	execve(self, argv, environ);
	die("execve");
}

static void *exec_thread(void *arg)
{
	(void)arg;
	exec_next();
	return NULL;
}

static void *spinner(void *arg)
{
	(void)arg;
	for (volatile unsigned long n = 0;; n++)
		;
	return NULL;
}

static void *blocker(void *arg)
{
	int *p = arg;
	char c;
	(void)!read(p[0], &c, 1);	/* nobody writes */
	return NULL;
}

static void *caller(void *arg)
{
	(void)arg;
	for (;;)
		getppid();
	return NULL;
}

static int old(const char *how)
{
	setup();
	failed_execs();
	if (!strcmp(how, "fork")) {
		pid_t pid = fork();
		if (pid < 0)
			die("fork");
		if (pid == 0)
			exec_next();
		int st;
		if (waitpid(pid, &st, 0) != pid)
			die("waitpid");
		printf("child: %s %d\n", WIFEXITED(st) ? "exit" : "signal", WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
		check_intact("the child's exec");
		return 0;
	}
	pthread_t th;
	if (!strcmp(how, "thread")) {
		if (pthread_create(&th, NULL, exec_thread, NULL))
			die("pthread_create");
		pause();
	}
	if (!strcmp(how, "spin")) {
		static int p[2];
		if (pipe(p) < 0 || pthread_create(&th, NULL, spinner, NULL) || pthread_create(&th, NULL, blocker, p) ||
		    pthread_create(&th, NULL, caller, NULL))
			die("threads");
		usleep(20000);
	}
	exec_next();
	return 1;
}

static sigjmp_buf jb;

static void on_segv(int sig)
{
	siglongjmp(jb, sig);
}

static void probe_one(const char *name, volatile char *at)
{
	int p[2];
	if (pipe(p) < 0)
		die("pipe");
	long w = write(p[1], (const void *)at, 1);
	printf("%s: write %s", name, w < 0 ? strerror(errno) : "READ IT");
	int sig = sigsetjmp(jb, 1);
	if (!sig) {
		char c = *at;
		printf(", load READ %d\n", c);
	} else {
		printf(", load %s\n", strsignal(sig));
	}
	unsigned char v;
	printf("%s: mincore %s\n", name, mincore((void *)at, 4096, &v) < 0 ? strerror(errno) : "MAPPED");
	close(p[0]);
	close(p[1]);
}

static int probe(void)
{
	print_fpu();	/* first: a signal handler starts with a fresh FPU state, and siglongjmp keeps it */
	signal(SIGSEGV, on_segv);
	probe_one("secret page", SECRET_AT);
	probe_one("memfd page", MEMFD_AT);
	probe_one("shm page", SHM_AT);
	probe_one("locked page", LOCKED_AT);
	struct stat st;
	printf("threads: %ld\n", stat("/proc/self/task", &st) == 0 ? (long)st.st_nlink - 2 : -1L);
	return 0;
}

/* /proc/self/maps without addresses, inode numbers and devices: what is mapped, how, from what. */
static int maps(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512], perms[8], path[256];
	unsigned long off;
	if (!f)
		die("maps");
	while (fgets(line, sizeof(line), f)) {
		path[0] = 0;
		if (sscanf(line, "%*s %7s %lx %*s %*s %255s", perms, &off, path) < 2)
			continue;
		printf("%s %lx %s\n", perms, off, path);
	}
	fclose(f);
	return 0;
}

int main(int argc, char **argv)
{
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n < 0)
		die("readlink");
	self[n] = 0;
	setvbuf(stdout, NULL, _IOLBF, 0);
	const char *m = argc > 1 ? argv[1] : "";
	if (argc > 3)
		mode_after = argv[3];
	if (!strcmp(m, "old"))
		return old(argc > 2 ? argv[2] : "");
	if (!strcmp(m, "probe"))
		return probe();
	if (!strcmp(m, "maps"))
		return maps();
	if (!strcmp(m, "hold")) {
		printf("ready\n");
		sleep(60);
		return 0;
	}
	fprintf(stderr, "usage: exec_reuse old [fork|thread|spin] [probe|maps|hold] | probe | maps | hold\n");
	return 2;
}

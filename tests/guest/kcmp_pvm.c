/* kcmp_pvm: kcmp(2) and process_vm_readv/writev(2) between guest processes. usage: kcmp_pvm MODE
 *   kcmp     files, dups, fork and thread and vfork relations for every type; a consistent order;
 *            EPOLL_TFD; ESRCH, EINVAL, EBADF, EFAULT, ENOENT; a zombie
 *   pvm      read and write a child's memory through several iovecs; partial transfers at an unmapped
 *            page; EFAULT (read-only remote page, bad local); EINVAL (flags, counts > IOV_MAX, negative
 *            length); ESRCH (no process, a zombie); huge lengths end at the other side's total */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

enum { KCMP_FILE, KCMP_VM, KCMP_FILES, KCMP_FS, KCMP_SIGHAND, KCMP_IO, KCMP_SYSVSEM, KCMP_EPOLL_TFD };
static const char *tn[] = { "FILE", "VM", "FILES", "FS", "SIGHAND", "IO", "SYSVSEM", "EPOLL_TFD" };

static long kcmp(pid_t a, pid_t b, int type, unsigned long i1, unsigned long i2)
{
	return syscall(SYS_kcmp, a, b, type, i1, i2);
}

static const char *res(long r)
{
	if (r == 0)
		return "equal";
	if (r == 1 || r == 2)
		return "differ";
	if (r > 0)
		return "bad value";
	switch (errno) {
	case ESRCH: return "ESRCH";
	case EINVAL: return "EINVAL";
	case EBADF: return "EBADF";
	case EFAULT: return "EFAULT";
	case ENOENT: return "ENOENT";
	case EPERM: return "EPERM";
	default: return strerror(errno);
	}
}

static void all_types(const char *what, pid_t a, pid_t b)
{
	printf("%s:", what);
	for (int ty = KCMP_VM; ty <= KCMP_SIGHAND; ty++)
		printf(" %s %s", tn[ty], res(kcmp(a, b, ty, 0, 0)));
	printf("\n");
}

static volatile pid_t thread_tid;
static void *thr(void *a)
{
	(void)a;
	thread_tid = (pid_t)syscall(SYS_gettid);
	for (;;)
		pause();
	return NULL;
}

static void mode_kcmp(void)
{
	pid_t me = getpid();
	int f1 = open("/dev/null", O_RDONLY), f2 = dup(f1), f3 = open("/dev/null", O_RDONLY);
	printf("same fd: %s, dup: %s, another open: %s\n", res(kcmp(me, me, KCMP_FILE, f1, f1)),
	       res(kcmp(me, me, KCMP_FILE, f1, f2)), res(kcmp(me, me, KCMP_FILE, f1, f3)));
	long x = kcmp(me, me, KCMP_FILE, f1, f3), y = kcmp(me, me, KCMP_FILE, f3, f1);
	printf("order antisymmetric: %s\n", x + y == 3 ? "yes" : "no");
	printf("ESRCH: %s\n", res(kcmp(me, 999999, KCMP_FILE, f1, f1)));
	printf("EINVAL 8: %s, -1: %s\n", res(kcmp(me, me, 8, 0, 0)), res(kcmp(me, me, -1, 0, 0)));
	printf("EBADF: %s, %s\n", res(kcmp(me, me, KCMP_FILE, f1, 999)), res(kcmp(me, me, KCMP_FILE, -1, f1)));
	/* epoll */
	int ep = epoll_create1(0), e[2];
	if (pipe(e))
		exit(2);
	int e2 = dup(e[0]);
	struct epoll_event ev = { EPOLLIN, { 0 } };
	printf("epoll_ctl: %s\n", epoll_ctl(ep, EPOLL_CTL_ADD, e[0], &ev) ? "failed" : "ok");
	uint32_t slot[3] = { (uint32_t)ep, (uint32_t)e[0], 0 };
	printf("EPOLL_TFD: %s", res(kcmp(me, me, KCMP_EPOLL_TFD, e[0], (unsigned long)slot)));
	printf(", other file: %s", res(kcmp(me, me, KCMP_EPOLL_TFD, e[1], (unsigned long)slot)));
	printf(", dup: %s", res(kcmp(me, me, KCMP_EPOLL_TFD, e2, (unsigned long)slot)));
	slot[2] = 1;
	printf(", toff 1: %s", res(kcmp(me, me, KCMP_EPOLL_TFD, e[0], (unsigned long)slot)));
	slot[2] = 0, slot[1] = (uint32_t)e2;
	printf(", not registered: %s", res(kcmp(me, me, KCMP_EPOLL_TFD, e[0], (unsigned long)slot)));
	slot[0] = (uint32_t)f3, slot[1] = (uint32_t)e[0];
	printf(", not an epoll: %s", res(kcmp(me, me, KCMP_EPOLL_TFD, e[0], (unsigned long)slot)));
	slot[0] = 999;
	printf(", bad efd: %s", res(kcmp(me, me, KCMP_EPOLL_TFD, e[0], (unsigned long)slot)));
	slot[0] = (uint32_t)ep;
	printf(", bad fd1: %s", res(kcmp(me, me, KCMP_EPOLL_TFD, 999, (unsigned long)slot)));
	printf(", bad slot: %s\n", res(kcmp(me, me, KCMP_EPOLL_TFD, e[0], 8)));
	all_types("self", me, me);
	pthread_t th;
	pthread_create(&th, NULL, thr, NULL);
	while (!thread_tid)
		usleep(1000);
	all_types("thread", me, thread_tid);
	/* a forked child: its fds are the same files, everything else its own */
	int p[2];
	if (pipe(p))
		exit(2);
	pid_t c = fork();
	if (c == 0) {
		char ch;
		close(p[1]);
		if (read(p[0], &ch, 1) < 0)
			_exit(3);
		_exit(0);
	}
	printf("child's inherited fd: %s, its other fd: %s\n", res(kcmp(me, c, KCMP_FILE, f1, f1)),
	       res(kcmp(me, c, KCMP_FILE, f1, f3)));
	all_types("fork child", me, c);
	long o1 = kcmp(me, c, KCMP_VM, 0, 0), o2 = kcmp(c, me, KCMP_VM, 0, 0);
	printf("VM order antisymmetric: %s\n", o1 + o2 == 3 ? "yes" : "no");
	close(p[1]);
	siginfo_t si;
	waitid(P_PID, c, &si, WEXITED | WNOWAIT);	/* a zombie: no mm, no files */
	printf("zombie: FILE %s, VM with itself %s\n", res(kcmp(c, c, KCMP_FILE, 0, 0)), res(kcmp(c, c, KCMP_VM, 0, 0)));
	waitpid(c, NULL, 0);
	/* a vfork child shares our memory */
	static volatile long vm_res = -9;
	c = vfork();
	if (c == 0) {
		vm_res = kcmp(getppid(), getpid(), KCMP_VM, 0, 0);
		_exit(0);
	}
	waitpid(c, NULL, 0);
	printf("vfork child VM: %s\n", res(vm_res));
}

static long rv(pid_t pid, struct iovec *l, unsigned long ln, struct iovec *r, unsigned long rn, unsigned long fl)
{
	return syscall(SYS_process_vm_readv, pid, l, ln, r, rn, fl);
}

static long wv(pid_t pid, struct iovec *l, unsigned long ln, struct iovec *r, unsigned long rn, unsigned long fl)
{
	return syscall(SYS_process_vm_writev, pid, l, ln, r, rn, fl);
}

static void pr(const char *what, long r)
{
	if (r >= 0)
		printf("%s: %ld\n", what, r);
	else
		printf("%s: %s\n", what, res(r));
}

static char text[64] = "hello from the child's memory";

static void mode_pvm(void)
{
	/* two pages, the second unmapped, and a read-only page: the same addresses in the child after fork */
	char *two = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *ro = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int p[2], q[2];
	if (two == MAP_FAILED || ro == MAP_FAILED || pipe(p) || pipe(q))
		exit(2);
	munmap(two + 4096, 4096);
	memset(two, 'a', 4096);
	pid_t c = fork();
	if (c == 0) {
		char ch;
		close(p[1]);
		strcpy(text, "HELLO from the child's memory");
		if (write(q[1], "r", 1) != 1 || read(p[0], &ch, 1) < 0)	/* the parent reads and writes us */
			_exit(3);
		printf("child sees: %s\n", text);
		_exit(0);
	}
	char ch, a[8] = { 0 }, b[32] = { 0 }, big[8192];
	if (read(q[0], &ch, 1) != 1)
		exit(2);
	struct iovec l[2] = { { a, 5 }, { b, 24 } }, r[2] = { { text, 10 }, { text + 10, 19 } };
	pr("readv 2+2 iovecs", rv(c, l, 2, r, 2, 0));
	printf("read: [%s][%s]\n", a, b);
	struct iovec lw = { "WORLD", 5 }, rw = { text, 5 };
	pr("writev", wv(c, &lw, 1, &rw, 1, 0));
	struct iovec lb = { big, sizeof(big) }, rb = { two, 8192 };
	pr("readv across an unmapped page", rv(c, &lb, 1, &rb, 1, 0));
	struct iovec r2[2] = { { text, 10 }, { (void *)8, 10 } };
	pr("readv good then bad remote iovec", rv(c, &lb, 1, r2, 2, 0));
	struct iovec rbad = { (void *)8, 10 };
	pr("readv bad remote", rv(c, &lb, 1, &rbad, 1, 0));
	struct iovec lbad = { (void *)8, 10 };
	pr("readv bad local", rv(c, &lbad, 1, r, 1, 0));
	struct iovec l2[2] = { { a, 5 }, { (void *)8, 10 } };
	pr("readv good then bad local", rv(c, l2, 2, r, 2, 0));
	struct iovec rro = { ro, 10 };
	pr("writev to a read-only page", wv(c, &lw, 1, &rro, 1, 0));
	struct iovec run = { two + 4096, 10 };
	pr("writev to an unmapped page", wv(c, &lw, 1, &run, 1, 0));
	struct iovec rk = { (void *)0xffffffffff600000UL, 10 };
	pr("writev to the kernel half", wv(c, &lw, 1, &rk, 1, 0));
	pr("flags 1", rv(c, &lb, 1, r, 1, 1));
	static struct iovec many[1025];
	for (int i = 0; i < 1025; i++)
		many[i] = (struct iovec){ big, 1 };
	pr("riovcnt 1025", rv(c, &lb, 1, many, 1025, 0));
	pr("liovcnt 1025", rv(c, many, 1025, r, 1, 0));
	pr("riovcnt 1024", rv(c, many, 1024, r, 1, 0));
	struct iovec neg = { big, (size_t)-1 };
	pr("negative remote length", rv(c, &lb, 1, &neg, 1, 0));
	pr("negative local length", rv(c, &neg, 1, r, 1, 0));
	struct iovec huge = { text, 1UL << 40 };
	pr("huge remote length, small local", rv(c, l, 1, &huge, 1, 0));
	/* A huge local length with a small remote one: 10 or EFAULT natively, run to run (Linux 6.18), so not shown. */
	struct iovec zero = { big, 0 };
	pr("zero local length, bad remote array", rv(c, &zero, 1, (struct iovec *)8, 1, 0));
	pr("bad remote array", rv(c, &lb, 1, (struct iovec *)8, 1, 0));
	pr("bad local array", rv(c, (struct iovec *)8, 1, r, 1, 0));
	pr("no such pid", rv(999999, &lb, 1, r, 1, 0));
	close(p[1]);
	siginfo_t si;
	waitid(P_PID, c, &si, WEXITED | WNOWAIT);
	pr("a zombie", rv(c, &lb, 1, r, 1, 0));
	waitpid(c, NULL, 0);
}

int main(int argc, char **argv)
{
	const char *m = argc > 1 ? argv[1] : "";

	setvbuf(stdout, NULL, _IONBF, 0);
	alarm(20);
	if (!strcmp(m, "kcmp"))
		mode_kcmp();
	else if (!strcmp(m, "pvm"))
		mode_pvm();
	else
		return 2;
	return 0;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * fork(2) and the child's memory (issue 16, fork with the host's
 * copy-on-write), compared with the native run:
 *   order   the child's memory is one instant of the parent's, even while
 *           another thread of the parent writes: a thread stores n to a
 *           low page, then to a high page 48 MiB above, so at every instant
 *           low >= high; a child that sees high > low got pages copied at
 *           different times
 *   shared  MAP_SHARED memfd, shared anonymous memory and a SysV segment
 *           stay shared after fork, private memory becomes the child's own
 *   sparse  huge sparse mappings (1 GiB touched at 16 places, 64 GiB of
 *           PROT_NONE reservation) fork quickly and keep their contents
 *   fpu     the child has the parent's floating-point state (rounding mode)
 *   killed  threads fork in a loop while their process is SIGKILLed
 *   threads a process with three busy threads forks: each child has one
 *           thread (the forking one), the memory of that instant, and works
 *   bomb    a fork bomb under RLIMIT_NPROC 16 (not root): exactly 15 forks
 *           succeed, the rest are EAGAIN, and every process is reaped
 *   vfork   vfork + execve of this program, and a vfork child's _exit
 *   execs   fork + exec in a loop: each child's output and status right
 *   hold    a child that stays (for the host-side look at the stubs' fds)
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <sys/resource.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define GAP (48UL << 20)

static volatile uint64_t *low, *high;
static volatile int stop;

static void *writer(void *arg)
{
	(void)arg;
	for (uint64_t n = 1; !stop; n++) {
		*low = n;
		__asm__ volatile("" ::: "memory");	/* x86 keeps stores in order */
		*high = n;
	}
	return NULL;
}

static int wait_status(pid_t pid)
{
	int st;

	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static int order(void)
{
	char *m = mmap(NULL, GAP + 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	pthread_t th;
	int bad = 0, forks = 60;

	if (m == MAP_FAILED)
		return 1;
	memset(m, 1, GAP + 4096);	/* touched: a copying fork has all of it to copy */
	low = (uint64_t *)m;
	high = (uint64_t *)(m + GAP);
	*low = *high = 0;
	pthread_create(&th, NULL, writer, NULL);
	while (!*high)
		;
	for (int i = 0; i < forks; i++) {
		pid_t pid = fork();
		if (pid == 0)
			_exit(*high > *low ? 1 : 0);
		if (wait_status(pid) != 0)
			bad++;
	}
	stop = 1;
	pthread_join(th, NULL);
	printf("order: %d forks, children that saw a later high page than low page: %d\n", forks, bad);
	return 0;
}

static int shared(void)
{
	int mfd = memfd_create("fork_cow", 0);
	int shmid = shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0600);
	if (mfd < 0 || ftruncate(mfd, 4096) < 0 || shmid < 0)
		return 1;
	char *mf = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
	char *an = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	char *pr = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *sh = shmat(shmid, NULL, 0);
	shmctl(shmid, IPC_RMID, NULL);
	if (mf == MAP_FAILED || an == MAP_FAILED || pr == MAP_FAILED || sh == (void *)-1)
		return 1;
	strcpy(mf, "parent"), strcpy(an, "parent"), strcpy(pr, "parent"), strcpy(sh, "parent");
	int p2c[2], c2p[2];
	if (pipe(p2c) || pipe(c2p))
		return 1;
	pid_t pid = fork();
	char b;
	if (pid == 0) {
		printf("child sees at fork: memfd %s, anon %s, private %s, shm %s\n", mf, an, pr, sh);
		strcpy(mf, "child"), strcpy(an, "child"), strcpy(pr, "child"), strcpy(sh, "child");
		fflush(stdout);
		if (write(c2p[1], "x", 1) != 1 || read(p2c[0], &b, 1) != 1)
			_exit(2);
		printf("child sees after the parent wrote: memfd %s, anon %s, private %s, shm %s\n", mf, an, pr, sh);
		_exit(0);
	}
	if (read(c2p[0], &b, 1) != 1)
		return 1;
	printf("parent sees after the child wrote: memfd %s, anon %s, private %s, shm %s\n", mf, an, pr, sh);
	fflush(stdout);
	strcpy(mf, "again"), strcpy(an, "again"), strcpy(pr, "again"), strcpy(sh, "again");
	if (write(p2c[1], "x", 1) != 1)
		return 1;
	printf("child: %d\n", wait_status(pid));
	return 0;
}

static int sparse(void)
{
	size_t big = 1UL << 30, huge = 64UL << 30;
	char *m = mmap(NULL, big, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	char *r = mmap(NULL, huge, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (m == MAP_FAILED || r == MAP_FAILED) {
		printf("mmap: %s\n", strerror(errno));
		return 1;
	}
	for (int i = 0; i < 16; i++)
		m[(big / 16) * i + 123] = (char)('a' + i);
	if (mprotect(r + (huge / 2), 4096, PROT_READ | PROT_WRITE) == 0)
		r[huge / 2] = 'z';
	pid_t pid = fork();
	if (pid == 0) {
		int ok = 1;
		for (int i = 0; i < 16; i++)
			ok &= m[(big / 16) * i + 123] == (char)('a' + i) && m[(big / 16) * i + 4096] == 0;
		ok &= r[huge / 2] == 'z';
		m[123] = 'X';	/* the child's own copy */
		_exit(ok ? 0 : 1);
	}
	int st = wait_status(pid);
	printf("sparse: child saw the parent's pages: %s; parent's page after the child wrote: %c\n",
	       st == 0 ? "yes" : "no", m[123]);
	return 0;
}

static unsigned mxcsr(void)
{
	unsigned v;
	__asm__ volatile("stmxcsr %0" : "=m"(v));
	return v;
}

/* The SSE rounding mode (MXCSR bits 13-14; no libm: the glibc build links none). */
static int fpu(void)
{
	unsigned up = (mxcsr() & ~0x6000u) | 0x4000u;	/* round up */
	__asm__ volatile("ldmxcsr %0" : : "m"(up));
	volatile double one = 1.0, three = 3.0;
	double parent = one / three;
	pid_t pid = fork();
	if (pid == 0) {
		double child = one / three;
		_exit((mxcsr() & 0x6000u) == 0x4000u && child == parent ? 0 : 1);
	}
	printf("fpu: child has the parent's rounding mode: %s\n", wait_status(pid) == 0 ? "yes" : "no");
	return 0;
}

static void *forker(void *arg)
{
	(void)arg;
	for (;;) {
		pid_t pid = fork();
		if (pid == 0)
			_exit(0);
		if (pid > 0)
			waitpid(pid, NULL, 0);
	}
	return NULL;
}

static int killed(void)
{
	int rounds = 20, killed = 0;

	for (int i = 0; i < rounds; i++) {
		pid_t pid = fork();
		if (pid == 0) {
			pthread_t th;
			char *m = mmap(NULL, 8 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			if (m != MAP_FAILED)
				memset(m, 7, 8 << 20);	/* something to copy */
			for (int k = 0; k < 3; k++)
				pthread_create(&th, NULL, forker, NULL);
			forker(NULL);
		}
		struct timespec ts = { 0, (long)(i % 5 + 1) * 3000000 };
		nanosleep(&ts, NULL);
		kill(pid, SIGKILL);
		killed += wait_status(pid) == 128 + SIGKILL;
	}
	/* Grandchildren orphaned by the kills are reparented to us (pid 1) or exit: reap what is left. */
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
	printf("killed: %d of %d forking processes died of SIGKILL\n", killed, rounds);
	pid_t pid = fork();
	if (pid == 0)
		_exit(5);
	printf("a fork afterwards: status %d\n", wait_status(pid));
	return 0;
}

static volatile uint64_t busy[3];

static void *spinner(void *arg)
{
	volatile uint64_t *w = arg;

	while (!stop) {
		(*w)++;
		if (!(*w & 1023))
			getppid();	/* a syscall now and then: the sentry is busy with this thread too */
	}
	return NULL;
}

static int count_tasks(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

static int threads(void)
{
	pthread_t th[3];
	int forks = 20, good = 0;

	for (int i = 0; i < 3; i++)
		pthread_create(&th[i], NULL, spinner, (void *)&busy[i]);
	while (!busy[0] || !busy[1] || !busy[2])
		;
	for (int i = 0; i < forks; i++) {
		uint64_t seen = busy[0];
		pid_t pid = fork();
		if (pid == 0) {
			/* Only the forking thread: the counters stand still here. */
			uint64_t a = busy[0], b;
			struct timespec ts = { 0, 2000000 };
			nanosleep(&ts, NULL);
			b = busy[0];
			_exit(count_tasks() == 1 && a == b && a >= seen ? 0 : 1);
		}
		good += wait_status(pid) == 0;
	}
	stop = 1;
	for (int i = 0; i < 3; i++)
		pthread_join(th[i], NULL);
	printf("threads: %d of %d children had one thread and a still copy\n", good, forks);
	return 0;
}

/* A fork bomb under RLIMIT_NPROC: every process forks until EAGAIN; none exits before all have failed. */
static int bomb(void)
{
	struct rlimit rl;
	struct { int made, failed, other; } *c = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
						      -1, 0);
	if (c == MAP_FAILED || getrlimit(RLIMIT_NPROC, &rl))
		return 1;
	rl.rlim_cur = 16;
	if (setrlimit(RLIMIT_NPROC, &rl))
		return 1;
	c->made = 1;
	int top = getpid(), kids = 0;
	for (;;) {
		/* Counted before the fork and uncounted if it fails: no process can see every one failed while a
		 * fork is in flight or a child has not run yet (then an exit would free a slot for one more). */
		__atomic_fetch_add(&c->made, 1, __ATOMIC_SEQ_CST);
		pid_t pid = fork();
		if (pid == 0) {
			kids = 0;
			continue;
		}
		if (pid > 0) {
			kids++;
			continue;
		}
		__atomic_fetch_sub(&c->made, 1, __ATOMIC_SEQ_CST);
		if (errno != EAGAIN)
			__atomic_fetch_add(&c->other, 1, __ATOMIC_SEQ_CST);
		break;
	}
	__atomic_fetch_add(&c->failed, 1, __ATOMIC_SEQ_CST);
	/* Wait until every process has failed, so no exit frees a slot for another fork. */
	while (__atomic_load_n(&c->failed, __ATOMIC_SEQ_CST) < __atomic_load_n(&c->made, __ATOMIC_SEQ_CST)) {
		struct timespec ts = { 0, 1000000 };
		nanosleep(&ts, NULL);
	}
	int bad = 0;
	for (int i = 0; i < kids; i++) {
		int st;
		if (wait(&st) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
			bad++;
	}
	if (getpid() != top)
		_exit(bad ? 1 : 0);
	printf("bomb: processes %d, forks failed with another error %d, children not reaped or failed %d, left %d\n",
	       c->made, c->other, bad, wait(NULL) < 0 && errno == ECHILD ? 0 : 1);
	return 0;
}

static int vforks(char *self)
{
	int exec_ok = 0, exit_ok = 0, rounds = 20;
	volatile int stack_word = 42;

	for (int i = 0; i < rounds; i++) {
		pid_t pid = vfork();
		if (pid == 0) {
			char *argv[] = { self, "exit", NULL };
			execve(self, argv, (char *[]){ NULL });
			_exit(127);
		}
		exec_ok += wait_status(pid) == 7;
		pid = vfork();
		if (pid == 0)
			_exit(9);
		exit_ok += wait_status(pid) == 9 && stack_word == 42;
	}
	printf("vfork: %d of %d exec'd children exited 7, %d of %d _exit children 9\n", exec_ok, rounds, exit_ok,
	       rounds);
	return 0;
}

static int execs(char *self)
{
	int rounds = 50, good = 0;

	for (int i = 0; i < rounds; i++) {
		int p[2];
		char num[16], buf[32] = { 0 };
		if (pipe(p))
			return 1;
		snprintf(num, sizeof(num), "%d", i);
		pid_t pid = fork();
		if (pid == 0) {
			dup2(p[1], 1);
			close(p[0]);
			char *argv[] = { self, "echo", num, NULL };
			execve(self, argv, (char *[]){ NULL });
			_exit(127);
		}
		close(p[1]);
		ssize_t n = read(p[0], buf, sizeof(buf) - 1);
		close(p[0]);
		char want[32];
		snprintf(want, sizeof(want), "echo %d\n", i);
		good += wait_status(pid) == i % 100 && n > 0 && !strcmp(buf, want);
	}
	printf("execs: %d of %d children said their number and exited with it\n", good, rounds);
	return 0;
}

static int hold(void)
{
	pid_t pid = fork();
	if (pid == 0) {
		printf("ready\n");
		pause();
		_exit(0);
	}
	wait_status(pid);
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 2)
		return 2;
	if (!strcmp(argv[1], "order"))
		return order();
	if (!strcmp(argv[1], "shared"))
		return shared();
	if (!strcmp(argv[1], "sparse"))
		return sparse();
	if (!strcmp(argv[1], "fpu"))
		return fpu();
	if (!strcmp(argv[1], "killed"))
		return killed();
	if (!strcmp(argv[1], "threads"))
		return threads();
	if (!strcmp(argv[1], "bomb"))
		return bomb();
	if (!strcmp(argv[1], "vfork"))
		return vforks(argv[0]);
	if (!strcmp(argv[1], "execs"))
		return execs(argv[0]);
	if (!strcmp(argv[1], "hold"))
		return hold();
	if (!strcmp(argv[1], "exit"))
		return 7;
	if (!strcmp(argv[1], "echo") && argc > 2) {
		printf("echo %s\n", argv[2]);
		return atoi(argv[2]) % 100;
	}
	return 2;
}

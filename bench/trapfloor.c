/*
 * The floor of the seccomp platform's mechanism, measured without pvx: N raw
 * getppid() calls that a SECCOMP_RET_TRAP filter turns into SIGSYS, caught
 * by a handler on an alternate stack with every signal blocked (as the
 * stub's), which sets rax and returns through rt_sigreturn. That is the
 * kernel's part of every seccomp-platform trap; pvx adds the hand-off to the
 * sentry and the emulation. With "handoff", the handler also waits for a
 * thread on another CPU to answer through shared memory (both spinning), as
 * the stub waits for the sentry. Run natively only.
 *   trapfloor [N] [handoff]  ->  "trapfloor N ns_per_call"
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

/* <linux/filter.h> and <linux/seccomp.h>, which musl-gcc does not see */
struct sock_filter {
	unsigned short code;
	unsigned char jt, jf;
	unsigned int k;
};
struct sock_fprog {
	unsigned short len;
	struct sock_filter *filter;
};
#define BPF_STMT(code, k) { (unsigned short)(code), 0, 0, k }
#define BPF_JUMP(code, k, jt, jf) { (unsigned short)(code), jt, jf, k }
#define LD_NR 0x20		/* BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr) = 0 */
#define JEQ_K 0x15		/* BPF_JMP | BPF_JEQ | BPF_K */
#define RET_K 0x06		/* BPF_RET | BPF_K */
#define SECCOMP_RET_TRAP_ 0x00030000U
#define SECCOMP_RET_ALLOW_ 0x7fff0000U
#define SECCOMP_MODE_FILTER_ 2

static int request, reply, handoff;

static void on_sigsys(int sig, siginfo_t *si, void *ucv)
{
	ucontext_t *uc = ucv;

	(void)sig, (void)si;
	if (handoff) {
		__atomic_store_n(&request, 1, __ATOMIC_SEQ_CST);
		while (!__atomic_load_n(&reply, __ATOMIC_ACQUIRE))
			;
		__atomic_store_n(&reply, 0, __ATOMIC_RELAXED);
	}
	uc->uc_mcontext.gregs[REG_RAX] = 1;
}

static int pin(int cpu);

static void *server(void *arg)
{
	(void)arg;
	pin(1);
	for (;;) {
		while (!__atomic_load_n(&request, __ATOMIC_ACQUIRE))
			;
		__atomic_store_n(&request, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&reply, 1, __ATOMIC_SEQ_CST);
	}
	return NULL;
}

static int pin(int cpu)
{
	cpu_set_t s;

	CPU_ZERO(&s);
	CPU_SET(cpu, &s);
	return sched_setaffinity(0, sizeof(s), &s);
}

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 100000;
	static char altstack[1 << 16];
	struct sock_filter f[] = {
		BPF_STMT(LD_NR, 0),
		BPF_JUMP(JEQ_K, SYS_getppid, 0, 1),
		BPF_STMT(RET_K, SECCOMP_RET_TRAP_),
		BPF_STMT(RET_K, SECCOMP_RET_ALLOW_),
	};
	struct sock_fprog prog = { sizeof(f) / sizeof(f[0]), f };
	stack_t ss = { .ss_sp = altstack, .ss_size = sizeof(altstack) };
	struct sigaction sa = { .sa_sigaction = on_sigsys, .sa_flags = SA_SIGINFO | SA_ONSTACK };

	handoff = argc > 2 && !strcmp(argv[2], "handoff");
	if (handoff) {
		pthread_t t;
		if (pin(0) || pthread_create(&t, NULL, server, NULL)) {
			fprintf(stderr, "trapfloor: handoff needs two CPUs\n");
			return 1;
		}
	}
	sigfillset(&sa.sa_mask);
	if (sigaltstack(&ss, NULL) || sigaction(SIGSYS, &sa, NULL) || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER_, &prog)) {
		perror("trapfloor: seccomp");
		return 1;
	}
	for (int i = 0; i < 100; i++)	/* warm up */
		syscall(SYS_getppid);
	double t0 = now_ns();
	for (long i = 0; i < n; i++)
		syscall(SYS_getppid);
	double t1 = now_ns();
	printf("trapfloor %ld %.1f\n", n, (t1 - t0) / n);
	return 0;
}

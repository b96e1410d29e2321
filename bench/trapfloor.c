/*
 * The floor of the seccomp platform's mechanism, measured without pvx: N raw
 * getppid() calls that a SECCOMP_RET_TRAP filter turns into SIGSYS, caught
 * by a handler on an alternate stack with every signal blocked (as the
 * stub's), which sets rax and returns through rt_sigreturn. That is the
 * kernel's part of every seccomp-platform trap; pvx adds the hand-off to the
 * sentry and the emulation. With "handoff", the handler also waits for a
 * thread on another CPU to answer through shared memory (both spinning), as
 * the stub waits for the sentry. With "patched", no signal at all: the
 * model of a patched syscall site (issue 16), a jump into a trampoline that
 * stores the registers a syscall preserves into a shared block, makes the
 * same spinning hand-off, loads them back with the answer in rax and
 * returns: the floor a signal-free trap could reach. With "read FILE", the
 * trapped call is a 4 KiB read() of fd 1000 (which is not open) that the
 * handler answers itself by a pread of FILE into the caller's buffer, with
 * no hand-off: the floor of a stub that served reads of regular files on its
 * own (seccomp_passthrough.md); "native-read FILE" is the same loop of
 * plain preads, with no filter. With "selfret", the handler returns by
 * itself instead of by rt_sigreturn (xrstor of the frame's FPU state,
 * rt_sigprocmask of its mask, the registers, a jump through rcx); with
 * "open", it also runs with the mask it interrupted (SA_NODEFER, an empty
 * sa_mask), so it sets no mask at all: the stub's way since 2026-12-07
 * (stub/stub.c fast_return; seccomp_patch.md section 6). Run natively only.
 *   trapfloor [N] [handoff|patched|selfret|open|read FILE|native-read FILE]  ->  "trapfloor N ns_per_call"
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>
#include "bench.h"

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
static int read_fd = -1;	/* "read": the file the handler reads for fd 1000 */
static long read_size;		/* its size: reads go round it */
#define FAKE_FD 1000
#define READ_LEN 4096

/* The shared block of the "patched" model: the 16 registers, then rflags (as sh->regs would hold them). */
uint64_t tramp_regs[17];
int *tramp_request = &request, *tramp_reply = &reply;
long tramp_getppid(void);

/*
 * The model trampoline: what a patched site would enter instead of
 * "mov $nr,%eax; syscall". A real one is entered by a jmp (no push into the
 * red zone) and finds its block through a per-thread base; here a call and
 * a global stand for them. rcx and r11 are the scratch a syscall allows.
 */
__asm__(".text\n"
	".globl tramp_getppid\n"
	"tramp_getppid:\n"
	"	mov $110, %eax\n"
	"	lea tramp_regs(%rip), %rcx\n"
	"	mov %rax, 0(%rcx)\n	mov %rbx, 8(%rcx)\n	mov %rdx, 16(%rcx)\n	mov %rsi, 24(%rcx)\n"
	"	mov %rdi, 32(%rcx)\n	mov %rbp, 40(%rcx)\n	mov %rsp, 48(%rcx)\n	mov %r8, 56(%rcx)\n"
	"	mov %r9, 64(%rcx)\n	mov %r10, 72(%rcx)\n	mov %r12, 80(%rcx)\n	mov %r13, 88(%rcx)\n"
	"	mov %r14, 96(%rcx)\n	mov %r15, 104(%rcx)\n	pushfq\n	popq 128(%rcx)\n"
	"	mov tramp_request(%rip), %r11\n"
	"	movl $1, (%r11)\n	mfence\n"
	"	mov tramp_reply(%rip), %r11\n"
	"1:	cmpl $0, (%r11)\n	je 1b\n"
	"	movl $0, (%r11)\n"
	"	mov 0(%rcx), %rax\n	mov 8(%rcx), %rbx\n	mov 16(%rcx), %rdx\n	mov 24(%rcx), %rsi\n"
	"	mov 32(%rcx), %rdi\n	mov 40(%rcx), %rbp\n	mov 56(%rcx), %r8\n	mov 64(%rcx), %r9\n"
	"	mov 72(%rcx), %r10\n	mov 80(%rcx), %r12\n	mov 88(%rcx), %r13\n	mov 96(%rcx), %r14\n"
	"	mov 104(%rcx), %r15\n	pushq 128(%rcx)\n	popfq\n"
	"	ret\n");

/* "selfret" and "open": the registers a syscall's return gives, loaded in this order, rsp last, then jmp *%rcx. */
static int selfret, open_mask;
static uint64_t jump_regs[17];	/* r8..r15, rdi, rsi, rbp, rbx, rdx, rax, rcx, eflags, rsp */
void floor_jump(const uint64_t *regs);
__asm__(".text\n"
	".globl floor_jump\n"
	"floor_jump:\n"
	"	mov %rdi, %rsp\n"
	"	pop %r8\n	pop %r9\n	pop %r10\n	pop %r11\n	pop %r12\n	pop %r13\n	pop %r14\n	pop %r15\n"
	"	pop %rdi\n	pop %rsi\n	pop %rbp\n	pop %rbx\n	pop %rdx\n	pop %rax\n	pop %rcx\n"
	"	popfq\n"
	"	pop %rsp\n"
	"	jmp *%rcx\n");

/* Return from the handler without rt_sigreturn (the frame is ours: no checks, unlike the stub's). */
static void self_return(ucontext_t *uc)
{
	greg_t *g = uc->uc_mcontext.gregs;
	char *fp = (char *)uc->uc_mcontext.fpregs;
	uint32_t magic1;

	memcpy(&magic1, fp + 464, 4);
	if (magic1 == 0x46505853U)	/* FP_XSTATE_MAGIC1: an XSAVE frame */
		__asm__ volatile("xrstor64 (%0)" : : "r"(fp), "a"(-1), "d"(-1) : "memory");
	else
		__asm__ volatile("fxrstor64 (%0)" : : "r"(fp) : "memory");
	if (!open_mask)
		syscall(SYS_rt_sigprocmask, SIG_SETMASK, &uc->uc_sigmask, NULL, 8);
	const int order[] = { REG_R8, REG_R9, REG_R10, REG_R11, REG_R12, REG_R13, REG_R14, REG_R15, REG_RDI,
			      REG_RSI, REG_RBP, REG_RBX, REG_RDX, REG_RAX, REG_RCX };
	for (int i = 0; i < 15; i++)
		jump_regs[i] = (uint64_t)g[order[i]];
	jump_regs[15] = ((uint64_t)g[REG_EFL] & 0x40cd5) | 0x202;
	jump_regs[16] = (uint64_t)g[REG_RSP];
	floor_jump(jump_regs);
}

static void on_sigsys(int sig, siginfo_t *si, void *ucv)
{
	ucontext_t *uc = ucv;

	(void)sig, (void)si;
	if (read_fd >= 0) {
		greg_t *g = uc->uc_mcontext.gregs;
		static long at;
		long r = pread(read_fd, (void *)g[REG_RSI], (size_t)g[REG_RDX], at);
		if (r > 0)
			at = (at + r) % (read_size - READ_LEN);
		g[REG_RAX] = r < 0 ? -errno : r;
		return;
	}
	if (handoff) {
		__atomic_store_n(&request, 1, __ATOMIC_SEQ_CST);
		while (!__atomic_load_n(&reply, __ATOMIC_ACQUIRE))
			;
		__atomic_store_n(&reply, 0, __ATOMIC_RELAXED);
	}
	uc->uc_mcontext.gregs[REG_RAX] = 1;
	if (selfret || open_mask)
		self_return(uc);	/* rcx holds rip: a syscall's return */
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
		__atomic_store_n(&tramp_regs[0], 1, __ATOMIC_RELAXED);	/* the answer in rax */
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
	/* "read": read(FAKE_FD) traps; every other call, the handler's pread among them, runs */
	struct sock_filter rf[] = {
		BPF_STMT(LD_NR, 0),
		BPF_JUMP(JEQ_K, SYS_read, 0, 3),
		BPF_STMT(LD_NR, 16),	/* the low half of args[0] */
		BPF_JUMP(JEQ_K, FAKE_FD, 0, 1),
		BPF_STMT(RET_K, SECCOMP_RET_TRAP_),
		BPF_STMT(RET_K, SECCOMP_RET_ALLOW_),
	};
	struct sock_fprog prog = { sizeof(f) / sizeof(f[0]), f };
	stack_t ss = { .ss_sp = altstack, .ss_size = sizeof(altstack) };
	struct sigaction sa = { .sa_sigaction = on_sigsys, .sa_flags = SA_SIGINFO | SA_ONSTACK };

	int patched = argc > 2 && !strcmp(argv[2], "patched");
	int reads = argc > 3 && !strcmp(argv[2], "read"), native_reads = argc > 3 && !strcmp(argv[2], "native-read");
	static char buf[READ_LEN];

	if (reads || native_reads) {
		read_fd = open(argv[3], O_RDONLY | O_CLOEXEC);
		read_size = read_fd < 0 ? 0 : lseek(read_fd, 0, SEEK_END);
		if (read_size < 2 * READ_LEN) {
			fprintf(stderr, "trapfloor: %s: not a file of 8 KiB or more\n", argv[3]);
			return 1;
		}
	}
	if (native_reads) {
		long at = 0;
		double t0 = now_ns();
		for (long i = 0; i < n; i++) {
			if (pread(read_fd, buf, READ_LEN, at) != READ_LEN)
				return 1;
			at = (at + READ_LEN) % (read_size - READ_LEN);
		}
		printf("trapfloor %ld %.1f\n", n, (now_ns() - t0) / n);
		return 0;
	}
	if (reads) {
		prog.filter = rf;
		prog.len = sizeof(rf) / sizeof(rf[0]);
	}

	handoff = argc > 2 && !strcmp(argv[2], "handoff");
	if (handoff || patched) {
		pthread_t t;
		if (pin(0) || pthread_create(&t, NULL, server, NULL)) {
			fprintf(stderr, "trapfloor: handoff needs two CPUs\n");
			return 1;
		}
	}
	if (patched) {
		for (int i = 0; i < 100; i++)
			tramp_getppid();
		double t0 = now_ns();
		for (long i = 0; i < n; i++)
			if (tramp_getppid() != 1)
				return 1;
		printf("trapfloor %ld %.1f\n", n, (now_ns() - t0) / n);
		return 0;
	}
	selfret = argc > 2 && !strcmp(argv[2], "selfret");
	open_mask = argc > 2 && !strcmp(argv[2], "open");
	sigfillset(&sa.sa_mask);
	if (open_mask) {
		sigemptyset(&sa.sa_mask);
		sa.sa_flags |= SA_NODEFER;
	}
	if (sigaltstack(&ss, NULL) || sigaction(SIGSYS, &sa, NULL) || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER_, &prog)) {
		perror("trapfloor: seccomp");
		return 1;
	}
	if (reads) {
		for (int i = 0; i < 100; i++)	/* warm up */
			syscall(SYS_read, FAKE_FD, buf, READ_LEN);
		double t0 = now_ns();
		for (long i = 0; i < n; i++)
			if (syscall(SYS_read, FAKE_FD, buf, READ_LEN) != READ_LEN)
				return 1;
		printf("trapfloor %ld %.1f\n", n, (now_ns() - t0) / n);
		return 0;
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

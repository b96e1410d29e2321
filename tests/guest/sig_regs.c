/* sig_regs: a signal handler must not disturb the interrupted code.
 * usage: sig_regs sync|async|modify|fpu
 *   sync    kill(getpid(), SIGUSR1) by a raw syscall with every GPR set to a marker: the handler runs on
 *           the syscall's return, sees the markers and the syscall result in its ucontext, clobbers the
 *           caller-saved registers, and after rt_sigreturn every register and rax (= the result) is intact.
 *   async   a child signals us while we spin in a register-only loop (no syscalls): the loop must resume
 *           with consistent registers and flags.
 *   modify  the handler edits uc_mcontext (r12, rip skip): rt_sigreturn must load the edited frame.
 *   fpu     xmm registers and MXCSR across a handler that clobbers them; the handler starts with the
 *           default MXCSR (Linux gives handlers a fresh FPU state).
 *   avx     the upper halves of ymm registers across a handler that clobbers them with VEX instructions:
 *           the frame holds the XSAVE state (FP_XSTATE_MAGIC1 in its software bytes), the handler starts
 *           with ymm0's upper half zero, and rt_sigreturn restores it. Prints "no AVX" without AVX.
 * Prints relations only, so native and sandbox output agree. */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <ucontext.h>
#include <unistd.h>

#include "guest.h"

/* registers captured by the asm blocks (globals: addressed rip-relative, no register needed) */
long r_rax, r_rbx, r_rdx, r_rsi, r_rdi, r_rbp, r_r8, r_r9, r_r10, r_r12, r_r13, r_r14, r_r15, r_rsp;
long saved_rbp, saved_rsp;
long after_label_addr;
volatile int sig_got;
/* what the handler saw in its ucontext */
static long h_gregs[NGREG];
static int h_sig, h_code, h_signo;
static long h_pid;
static long h_mxcsr;
static int h_onhandler_stack_ok;

#define M_RBX 0x1b1b1b1b1b1b1b1bL
#define M_RDX 0x2d2d2d2d2d2d2d2dL
#define M_RBP 0x3b3b3b3b3b3b3b3bL
#define M_R8 0x0808080808080808L
#define M_R9 0x0909090909090909L
#define M_R10 0x1010101010101010L
#define M_R12 0x1212121212121212L
#define M_R13 0x1313131313131313L
#define M_R14 0x1414141414141414L
#define M_R15 0x1515151515151515L

static void clobber_caller_saved(void)
{
	__asm__ volatile("mov $-1, %%rax\n\tmov $-2, %%rcx\n\tmov $-3, %%rdx\n\tmov $-4, %%rsi\n\t"
			 "mov $-5, %%rdi\n\tmov $-6, %%r8\n\tmov $-7, %%r9\n\tmov $-8, %%r10\n\tmov $-9, %%r11\n\t"
			 "pcmpeqd %%xmm0, %%xmm0\n\tpcmpeqd %%xmm1, %%xmm1\n\tpcmpeqd %%xmm7, %%xmm7\n\t"
			 "pcmpeqd %%xmm8, %%xmm8\n\tpcmpeqd %%xmm15, %%xmm15\n\t"
			 :
			 :
			 : "rax", "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10", "r11", "xmm0", "xmm1", "xmm7", "xmm8",
			   "xmm15", "memory", "cc");
}

static int modify_mode;
static int avx_mode;
/* avx mode: what the handler saw (ymm0's upper half, the frame's software bytes) */
uint64_t h_ymm0_hi[2]; /* global: addressed from asm */
static int h_xstate;

static void handler(int sig, siginfo_t *si, void *ucv)
{
	ucontext_t *uc = ucv;
	h_sig = sig;
	h_signo = si->si_signo;
	h_code = si->si_code;
	h_pid = si->si_pid;
	memcpy(h_gregs, uc->uc_mcontext.gregs, sizeof h_gregs);
	unsigned int mx;
	__asm__ volatile("stmxcsr %0" : "=m"(mx));
	h_mxcsr = mx;
	long local;
	h_onhandler_stack_ok = (long)&local < h_gregs[REG_RSP] - 128; /* below the red zone */
	if (modify_mode) {
		uc->uc_mcontext.gregs[REG_R12] = 0x7777;
		uc->uc_mcontext.gregs[REG_RAX] = 4242; /* the "result" seen after return */
	}
	if (avx_mode) {
		const uint32_t *sw = (const uint32_t *)((const char *)uc->uc_mcontext.fpregs + 464);
		h_xstate = uc->uc_mcontext.fpregs && sw[0] == 0x46505853U; /* FP_XSTATE_MAGIC1 */
		__asm__ volatile("vextractf128 $1, %%ymm0, h_ymm0_hi(%%rip)\n\t"
				 "vpcmpeqd %%ymm0, %%ymm0, %%ymm0\n\t"
				 "vpcmpeqd %%ymm9, %%ymm9, %%ymm9\n\t"
				 :
				 :
				 : "xmm0", "xmm9", "memory");
	}
	clobber_caller_saved();
	sig_got++;
}

static void install(int flags)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = handler;
	sa.sa_flags = SA_SIGINFO | flags;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGUSR1, &sa, NULL))
		_exit(98);
}

/* kill(getpid(), SIGUSR1) with every other register holding a marker; capture all registers after */
static void marked_kill(long pid)
{
	__asm__ volatile(
		"mov %%rbp, saved_rbp(%%rip)\n\t"
		"mov %%rsp, saved_rsp(%%rip)\n\t"
		"lea 1f(%%rip), %%rax\n\t"
		"mov %%rax, after_label_addr(%%rip)\n\t"
		"mov %[pid], %%rdi\n\t"
		"mov $10, %%rsi\n\t" /* SIGUSR1 */
		"movabs $0x1b1b1b1b1b1b1b1b, %%rbx\n\t"
		"movabs $0x2d2d2d2d2d2d2d2d, %%rdx\n\t"
		"movabs $0x3b3b3b3b3b3b3b3b, %%rbp\n\t"
		"movabs $0x0808080808080808, %%r8\n\t"
		"movabs $0x0909090909090909, %%r9\n\t"
		"movabs $0x1010101010101010, %%r10\n\t"
		"movabs $0x1212121212121212, %%r12\n\t"
		"movabs $0x1313131313131313, %%r13\n\t"
		"movabs $0x1414141414141414, %%r14\n\t"
		"movabs $0x1515151515151515, %%r15\n\t"
		"mov $62, %%eax\n\t" /* SYS_kill */
		"syscall\n"
		"1:\n\t"
		"mov %%rax, r_rax(%%rip)\n\t"
		"mov %%rbx, r_rbx(%%rip)\n\t"
		"mov %%rdx, r_rdx(%%rip)\n\t"
		"mov %%rsi, r_rsi(%%rip)\n\t"
		"mov %%rdi, r_rdi(%%rip)\n\t"
		"mov %%rbp, r_rbp(%%rip)\n\t"
		"mov %%r8, r_r8(%%rip)\n\t"
		"mov %%r9, r_r9(%%rip)\n\t"
		"mov %%r10, r_r10(%%rip)\n\t"
		"mov %%r12, r_r12(%%rip)\n\t"
		"mov %%r13, r_r13(%%rip)\n\t"
		"mov %%r14, r_r14(%%rip)\n\t"
		"mov %%r15, r_r15(%%rip)\n\t"
		"mov %%rsp, r_rsp(%%rip)\n\t"
		"mov saved_rbp(%%rip), %%rbp\n\t"
		:
		: [pid] "m"(pid)
		: "rax", "rbx", "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15",
		  "memory", "cc");
}

static int check(const char *name, long got_v, long want)
{
	if (got_v != want) {
		say("  %s: MISMATCH got %#lx want %#lx\n", name, got_v, want);
		return 1;
	}
	return 0;
}

static int do_sync(int modify)
{
	modify_mode = modify;
	install(0);
	long pid = getpid();
	marked_kill(pid);
	int bad = 0;
	say("handler ran: %s (sig=%d signo=%d code_is_SI_USER=%s pid_is_self=%s)\n", yesno(sig_got == 1), h_sig,
	    h_signo, yesno(h_code == SI_USER), yesno(h_pid == pid));
	/* the frame holds the registers of the interrupted code */
	say("frame: rax(result)=%ld rip_after_syscall=%s rsp=%s\n", h_gregs[REG_RAX],
	    yesno(h_gregs[REG_RIP] == after_label_addr), yesno(h_gregs[REG_RSP] == saved_rsp));
	bad |= check("frame rbx", h_gregs[REG_RBX], M_RBX);
	bad |= check("frame rdx", h_gregs[REG_RDX], M_RDX);
	bad |= check("frame rbp", h_gregs[REG_RBP], M_RBP);
	bad |= check("frame rdi", h_gregs[REG_RDI], pid);
	bad |= check("frame rsi", h_gregs[REG_RSI], SIGUSR1);
	bad |= check("frame r8", h_gregs[REG_R8], M_R8);
	bad |= check("frame r9", h_gregs[REG_R9], M_R9);
	bad |= check("frame r10", h_gregs[REG_R10], M_R10);
	bad |= check("frame r12", h_gregs[REG_R12], M_R12);
	bad |= check("frame r13", h_gregs[REG_R13], M_R13);
	bad |= check("frame r14", h_gregs[REG_R14], M_R14);
	bad |= check("frame r15", h_gregs[REG_R15], M_R15);
	say("frame registers: %s\n", bad ? "BAD" : "ok");
	say("handler stack below interrupted rsp: %s\n", yesno(h_onhandler_stack_ok));
	/* after rt_sigreturn */
	int bad2 = 0;
	bad2 |= check("rax", r_rax, modify ? 4242 : 0);
	bad2 |= check("rbx", r_rbx, M_RBX);
	bad2 |= check("rdx", r_rdx, M_RDX);
	bad2 |= check("rbp", r_rbp, M_RBP);
	bad2 |= check("rdi", r_rdi, pid);
	bad2 |= check("rsi", r_rsi, SIGUSR1);
	bad2 |= check("r8", r_r8, M_R8);
	bad2 |= check("r9", r_r9, M_R9);
	bad2 |= check("r10", r_r10, M_R10);
	bad2 |= check("r12", r_r12, modify ? 0x7777 : M_R12);
	bad2 |= check("r13", r_r13, M_R13);
	bad2 |= check("r14", r_r14, M_R14);
	bad2 |= check("r15", r_r15, M_R15);
	bad2 |= check("rsp", r_rsp, saved_rsp);
	say("registers after sigreturn%s: %s\n", modify ? " (edited frame)" : "", bad2 ? "BAD" : "ok");
	return bad || bad2;
}

/* spin with registers in lockstep until the handler sets `got` (or a bound is hit) */
long loop_out[14];
long loop_rax;
static int do_async(void)
{
	install(SA_RESTART);
	pid_t c = signal_us_later(SIGUSR1, 50000);
	__asm__ volatile(
		"mov %%rbp, saved_rbp(%%rip)\n\t"
		"movabs $0x80000000, %%rax\n\t" /* iteration bound */
		"xor %%ebx, %%ebx\n\t"
		"mov $1, %%ecx\n\t"
		"mov $2, %%edx\n\t"
		"mov $3, %%esi\n\t"
		"mov $4, %%edi\n\t"
		"mov $5, %%ebp\n\t"
		"mov $6, %%r8d\n\t"
		"mov $7, %%r9d\n\t"
		"mov $8, %%r10d\n\t"
		"mov $9, %%r11d\n\t"
		"mov $10, %%r12d\n\t"
		"mov $11, %%r13d\n\t"
		"mov $12, %%r14d\n\t"
		"mov $13, %%r15d\n"
		"2:\n\t"
		"inc %%rbx\n\tinc %%rcx\n\tinc %%rdx\n\tinc %%rsi\n\tinc %%rdi\n\tinc %%rbp\n\t"
		"inc %%r8\n\tinc %%r9\n\tinc %%r10\n\tinc %%r11\n\tinc %%r12\n\tinc %%r13\n\tinc %%r14\n\tinc %%r15\n\t"
		"cmpl $0, sig_got(%%rip)\n\t"
		"jne 3f\n\t"
		"dec %%rax\n\t"
		"jnz 2b\n"
		"3:\n\t"
		"mov %%rax, loop_rax(%%rip)\n\t"
		"mov %%rbx, loop_out+0(%%rip)\n\t"
		"sub $1, %%rcx\n\tmov %%rcx, loop_out+8(%%rip)\n\t"
		"sub $2, %%rdx\n\tmov %%rdx, loop_out+16(%%rip)\n\t"
		"sub $3, %%rsi\n\tmov %%rsi, loop_out+24(%%rip)\n\t"
		"sub $4, %%rdi\n\tmov %%rdi, loop_out+32(%%rip)\n\t"
		"sub $5, %%rbp\n\tmov %%rbp, loop_out+40(%%rip)\n\t"
		"sub $6, %%r8\n\tmov %%r8, loop_out+48(%%rip)\n\t"
		"sub $7, %%r9\n\tmov %%r9, loop_out+56(%%rip)\n\t"
		"sub $8, %%r10\n\tmov %%r10, loop_out+64(%%rip)\n\t"
		"sub $12, %%r14\n\tmov %%r14, loop_out+72(%%rip)\n\t"
		"sub $13, %%r15\n\tmov %%r15, loop_out+80(%%rip)\n\t"
		"sub $10, %%r12\n\tmov %%r12, loop_out+88(%%rip)\n\t"
		"sub $9, %%r11\n\tmov %%r11, loop_out+96(%%rip)\n\t"
		"sub $11, %%r13\n\tmov %%r13, loop_out+104(%%rip)\n\t"
		"mov saved_rbp(%%rip), %%rbp\n\t"
		:
		:
		: "rax", "rbx", "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15",
		  "memory", "cc");
	int st;
	while (waitpid(c, &st, 0) < 0 && errno == EINTR)
		;
	int consistent = 1;
	for (int i = 1; i < 14; i++)
		if (loop_out[i] != loop_out[0]) {
			say("  loop register %d: %ld vs %ld\n", i, loop_out[i], loop_out[0]);
			consistent = 0;
		}
	say("loop stopped by the handler (before the 2^31 iteration bound): %s\n", yesno(loop_rax != 0));
	say("async handler ran: %s, loop iterated: %s, registers consistent after sigreturn: %s\n", yesno(sig_got == 1),
	    yesno(loop_out[0] > 0), yesno(consistent));
	return !(sig_got == 1 && consistent && loop_rax != 0);
}

double xin[4] = { 1.5, -2.25, 3.125, 1e300 };
double xout[4];
unsigned int mx_before, mx_after;
static int do_fpu(void)
{
	install(0);
	long pid = getpid();
	/* round-toward-zero + all exceptions masked: 0x7f80 */
	unsigned int mx = 0x7f80;
	__asm__ volatile("ldmxcsr %0" ::"m"(mx));
	__asm__ volatile("stmxcsr mx_before(%%rip)\n\t"
			 "movsd xin+0(%%rip), %%xmm0\n\t"
			 "movsd xin+8(%%rip), %%xmm1\n\t"
			 "movsd xin+16(%%rip), %%xmm7\n\t"
			 "movsd xin+24(%%rip), %%xmm15\n\t"
			 "mov %[pid], %%rdi\n\t"
			 "mov $10, %%esi\n\t"
			 "mov $62, %%eax\n\t"
			 "syscall\n\t"
			 "movsd %%xmm0, xout+0(%%rip)\n\t"
			 "movsd %%xmm1, xout+8(%%rip)\n\t"
			 "movsd %%xmm7, xout+16(%%rip)\n\t"
			 "movsd %%xmm15, xout+24(%%rip)\n\t"
			 "stmxcsr mx_after(%%rip)\n\t"
			 :
			 : [pid] "m"(pid)
			 : "rax", "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10", "r11", "xmm0", "xmm1", "xmm7", "xmm15",
			   "memory", "cc");
	unsigned int dflt = 0x1f80;
	__asm__ volatile("ldmxcsr %0" ::"m"(dflt));
	say("handler ran: %s\n", yesno(sig_got == 1));
	say("handler MXCSR is the default 0x1f80: %s\n", yesno(h_mxcsr == 0x1f80));
	say("MXCSR restored after sigreturn: %s\n", yesno(mx_after == mx_before && mx_before == 0x7f80));
	int ok = !memcmp(xin, xout, sizeof xin);
	say("xmm0/1/7/15 restored after sigreturn: %s\n", yesno(ok));
	return !(ok && sig_got == 1);
}

/* AVX usable: CPUID.1:ECX OSXSAVE and AVX, and XCR0 enables the SSE and AVX state. */
static int have_avx(void)
{
	unsigned int a = 1, b, c = 0, d, lo, hi;

	__asm__ volatile("cpuid" : "+a"(a), "=b"(b), "+c"(c), "=d"(d));
	if ((c & (3U << 27)) != (3U << 27))
		return 0;
	__asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
	return (lo & 6) == 6;
}

unsigned char yin[64] __attribute__((aligned(32))), yout[64] __attribute__((aligned(32)));
static int do_avx(void)
{
	if (!have_avx()) {
		say("no AVX\n");
		return 0;
	}
	for (int i = 0; i < 64; i++)
		yin[i] = (unsigned char)(0x40 + i);
	install(0);
	avx_mode = 1;
	long pid = getpid();
	__asm__ volatile("vmovdqa yin+0(%%rip), %%ymm0\n\t"
			 "vmovdqa yin+32(%%rip), %%ymm9\n\t"
			 "mov %[pid], %%rdi\n\t"
			 "mov $10, %%esi\n\t"
			 "mov $62, %%eax\n\t"
			 "syscall\n\t"
			 "vmovdqa %%ymm0, yout+0(%%rip)\n\t"
			 "vmovdqa %%ymm9, yout+32(%%rip)\n\t"
			 "vzeroupper\n\t"
			 :
			 : [pid] "m"(pid)
			 : "rax", "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10", "r11", "xmm0", "xmm9", "memory", "cc");
	say("handler ran: %s\n", yesno(sig_got == 1));
	say("frame holds the XSAVE state: %s\n", yesno(h_xstate));
	say("handler starts with ymm0's upper half zero: %s\n", yesno(!h_ymm0_hi[0] && !h_ymm0_hi[1]));
	int ok = !memcmp(yin, yout, sizeof yin);
	say("ymm0/ymm9 (upper halves too) restored after sigreturn: %s\n", yesno(ok));
	return !(ok && sig_got == 1);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "sync";
	if (!strcmp(mode, "sync"))
		return do_sync(0);
	if (!strcmp(mode, "modify"))
		return do_sync(1);
	if (!strcmp(mode, "async"))
		return do_async();
	if (!strcmp(mode, "fpu"))
		return do_fpu();
	if (!strcmp(mode, "avx"))
		return do_avx();
	say("unknown mode %s\n", mode);
	return 2;
}

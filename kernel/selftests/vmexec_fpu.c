// SPDX-License-Identifier: GPL-2.0
/*
 * FPU/SSE/AVX isolation: the guest must not see the caller's vector
 * registers or MXCSR, the caller must get its own back unchanged after a
 * trap, and with a context fpstate buffer the guest's state is saved to and
 * reloaded from that buffer (signal frame xstate format).
 */
#include "vmexec_test.h"

#define T_NR 501
#define NREG 16
#define VSZ 32				/* bytes per register slot */
#define MX_OFF (NREG * VSZ)		/* mxcsr slot after the registers */
#define SLOT_SIZE (MX_OFF + 64)

struct shm {
	unsigned char seen[SLOT_SIZE] __attribute__((aligned(64)));
	unsigned char gpat[SLOT_SIZE] __attribute__((aligned(64)));
};

static struct shm *shm;
static int avx;

#define R16(op, fmt) \
	op(0) op(1) op(2) op(3) op(4) op(5) op(6) op(7) \
	op(8) op(9) op(10) op(11) op(12) op(13) op(14) op(15)
#define ST_Y(n) "vmovdqu %%ymm" #n ", " #n "*32(%[out])\n"
#define LD_Y(n) "vmovdqu " #n "*32(%[in]), %%ymm" #n "\n"
#define ST_X(n) "movdqu %%xmm" #n ", " #n "*32(%[out])\n"
#define LD_X(n) "movdqu " #n "*32(%[in]), %%xmm" #n "\n"
#define XMM_CLOBBERS "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", \
	"xmm7", "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15"

/* guest: record what it sees, load its own pattern, trap; forever */
static void guest(void)
{
	long r;

	for (;;) {
		if (avx)
			asm volatile(R16(ST_Y, 0) "stmxcsr 512(%[out])\n"
				     R16(LD_Y, 0) "ldmxcsr 512(%[in])\n"
				     "syscall\n"
				     : "=a"(r)
				     : "a"(T_NR), [out] "r"(shm->seen), [in] "r"(shm->gpat)
				     : "rcx", "r11", "memory", XMM_CLOBBERS);
		else
			asm volatile(R16(ST_X, 0) "stmxcsr 512(%[out])\n"
				     R16(LD_X, 0) "ldmxcsr 512(%[in])\n"
				     "syscall\n"
				     : "=a"(r)
				     : "a"(T_NR), [out] "r"(shm->seen), [in] "r"(shm->gpat)
				     : "rcx", "r11", "memory", XMM_CLOBBERS);
	}
}

static int same(const unsigned char *a, const unsigned char *b)
{
	return !memcmp(a, b, MX_OFF + 4);
}

/* process_vm_exec with the caller's registers = in, and what is left after in out */
static long vmexec_fpu(pid_t pid, struct process_vm_exec_context *ctx,
		       unsigned long flags, siginfo_t *si,
		       unsigned char *in, unsigned char *out)
{
	register long r10 asm("r10") = (long)si;
	register long r8 asm("r8") = (long)&vmexec_all_signals;
	register long r9 asm("r9") = 8;
	long ret;

again:
	if (avx)
		asm volatile(R16(LD_Y, 0) "ldmxcsr 512(%[in])\n"
			     "syscall\n"
			     R16(ST_Y, 0) "stmxcsr 512(%[out])\n"
			     : "=a"(ret)
			     : "a"(__NR_process_vm_exec), "D"(pid), "S"(ctx), "d"(flags),
			       "r"(r10), "r"(r8), "r"(r9), [in] "r"(in), [out] "r"(out)
			     : "rcx", "r11", "memory", XMM_CLOBBERS);
	else
		asm volatile(R16(LD_X, 0) "ldmxcsr 512(%[in])\n"
			     "syscall\n"
			     R16(ST_X, 0) "stmxcsr 512(%[out])\n"
			     : "=a"(ret)
			     : "a"(__NR_process_vm_exec), "D"(pid), "S"(ctx), "d"(flags),
			       "r"(r10), "r"(r8), "r"(r9), [in] "r"(in), [out] "r"(out)
			     : "rcx", "r11", "memory", XMM_CLOBBERS);
	if (ret == -EINTR) {	/* task work: re-enter, checking the caller again */
		vmexec_eintr++;
		if (!same(in, out))
			return -1000;
		goto again;
	}
	return ret;
}

static void fill(unsigned char *p, unsigned char seed, unsigned int mxcsr)
{
	int i;

	memset(p, 0, SLOT_SIZE);
	for (i = 0; i < NREG * VSZ; i++)
		p[i] = seed + i * 7;
	if (!avx)	/* upper halves are not loaded/stored */
		for (i = 0; i < NREG; i++)
			memset(p + i * VSZ + 16, 0, 16);
	memcpy(p + MX_OFF, &mxcsr, 4);
}

static int is_init(const unsigned char *p)
{
	static unsigned char init[SLOT_SIZE];
	unsigned int mx = 0x1f80;

	memcpy(init + MX_OFF, &mx, 4);
	return same(p, init);
}

int main(void)
{
	static unsigned char cin[SLOT_SIZE] __attribute__((aligned(64)));
	static unsigned char cout[SLOT_SIZE] __attribute__((aligned(64)));
	static unsigned char gexp[SLOT_SIZE];
	struct process_vm_exec_context ctx;
	unsigned char *fpbuf;
	siginfo_t si;
	void *stack;
	long ret;
	pid_t pid;

	avx = __builtin_cpu_supports("avx");
	tap_plan(9);
	tap_diag("testing %s registers", avx ? "ymm0-15" : "xmm0-15");
	stack = shared_alloc(GUEST_STACK_SIZE);
	shm = shared_alloc(sizeof(*shm));
	fpbuf = aligned_alloc(64, 16384);
	memset(fpbuf, 0, 16384);
	fill(cin, 0x10, 0x3f80);		/* caller: round down */
	fill(shm->gpat, 0x80, 0x5f80);	/* guest: round up */
	memcpy(gexp, shm->gpat, SLOT_SIZE);
	pid = spawn_stub();

	/* A: no fpstate buffer: guest starts from the init state */
	guest_ctx_init(&ctx, guest, stack);
	memset(shm->seen, 0xee, SLOT_SIZE);
	ret = vmexec_fpu(pid, &ctx, 0, &si, cin, cout);
	tap_ok(ret == 0 && si.si_signo == SIGSYS && is_init(shm->seen),
	       "guest sees init FPU state, not the caller's (ret %ld)", ret);
	tap_ok(same(cin, cout), "caller's registers and MXCSR intact after the trap");

	ret = vmexec_fpu(pid, &ctx, 0, &si, cin, cout);
	tap_ok(ret == 0 && is_init(shm->seen) && same(cin, cout),
	       "without a buffer the guest state is discarded");

	/* B: with a buffer, first run with PROCESS_VM_EXEC_FPU_INIT */
	guest_ctx_init(&ctx, guest, stack);
	ctx.fpstate = (unsigned long)fpbuf;
	ctx.fpstate_size = 16384;
	memset(fpbuf, 0xaa, 16384);	/* garbage: must be ignored */
	ret = vmexec_fpu(pid, &ctx, PROCESS_VM_EXEC_FPU_INIT, &si, cin, cout);
	tap_ok(ret == 0 && is_init(shm->seen) && same(cin, cout),
	       "FPU_INIT ignores the buffer (ret %ld)", ret);
	tap_ok(!memcmp(fpbuf + 160, gexp, 16) && !memcmp(fpbuf + 24, gexp + MX_OFF, 4),
	       "guest xmm0 and MXCSR saved into the buffer");

	ret = vmexec_fpu(pid, &ctx, 0, &si, cin, cout);
	tap_ok(ret == 0 && same(shm->seen, gexp),
	       "guest state reloaded from the buffer on the next run");
	tap_ok(same(cin, cout), "caller still intact");

	/* C: the sentry edits the guest's xmm0 in the buffer */
	memset(fpbuf + 160, 0x5a, 16);
	ret = vmexec_fpu(pid, &ctx, 0, &si, cin, cout);
	memset(gexp, 0x5a, 16);
	tap_ok(ret == 0 && !memcmp(shm->seen, gexp, 16),
	       "edited buffer content is what the guest sees");

	/* D: a misaligned buffer is refused */
	ctx.fpstate = (unsigned long)fpbuf + 8;
	ret = vmexec_fpu(pid, &ctx, 0, &si, cin, cout);
	tap_ok(ret == -EINVAL && same(cin, cout), "misaligned fpstate: EINVAL (%ld)", ret);

	kill_stub(pid);
	return tap_exit();
}

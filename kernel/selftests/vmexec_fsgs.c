// SPDX-License-Identifier: GPL-2.0
/*
 * fs_base/gs_base isolation (Jann Horn's review point): the guest runs with
 * the bases from the context, WRFSBASE/WRGSBASE in the guest change only
 * the guest's bases (stored back into the context), and the caller's TLS
 * (fs) and gs base are intact after every trap.
 */
#include "vmexec_test.h"
#include <asm/prctl.h>
#include <sys/auxv.h>

#define T_NR 500

struct shm {
	unsigned long fs_word, gs_word;		/* targets of the first bases */
	unsigned long fs_word2, gs_word2;	/* targets of the guest's bases */
	unsigned long newfs, newgs;
	int wr;					/* guest may use WRFSBASE */
};

static struct shm *shm;

static void guest(void)
{
	unsigned long a, b;

	asm volatile("movq %%fs:0, %0" : "=r"(a));
	asm volatile("movq %%gs:0, %0" : "=r"(b));
	raw_syscall3(T_NR, a, b, 1);
	if (shm->wr) {
		asm volatile("wrfsbase %0" : : "r"(shm->newfs));
		asm volatile("wrgsbase %0" : : "r"(shm->newgs));
		raw_syscall3(T_NR, 0, 0, 2);
		asm volatile("movq %%fs:0, %0" : "=r"(a));
		asm volatile("movq %%gs:0, %0" : "=r"(b));
		raw_syscall3(T_NR, a, b, 3);
	}
	for (;;)
		raw_syscall3(T_NR, 0, 0, 4);
}

static unsigned long get_base(int code)
{
	unsigned long v = 0;

	syscall(SYS_arch_prctl, code, &v);
	return v;
}

int main(void)
{
	struct process_vm_exec_context ctx;
	unsigned long myfs, mygs, hw_fs = 0, hw_gs = 0;
	siginfo_t si;
	void *stack;
	long ret;
	pid_t pid;
	int wr = !!(getauxval(AT_HWCAP2) & 2 /* HWCAP2_FSGSBASE */);

	tap_plan(6);
	stack = shared_alloc(GUEST_STACK_SIZE);
	shm = shared_alloc(4096);
	shm->fs_word = 0x1111;
	shm->gs_word = 0x2222;
	shm->fs_word2 = 0x3333;
	shm->gs_word2 = 0x4444;
	shm->newfs = (unsigned long)&shm->fs_word2;
	shm->newgs = (unsigned long)&shm->gs_word2;
	shm->wr = wr;
	pid = spawn_stub();

	/* a gs base for the caller too, to see that it survives */
	syscall(SYS_arch_prctl, ARCH_SET_GS, (unsigned long)&shm->gs_word2 + 8);
	myfs = get_base(ARCH_GET_FS);
	mygs = get_base(ARCH_GET_GS);

	guest_ctx_init(&ctx, guest, stack);
	ctx.fs_base = (unsigned long)&shm->fs_word;
	ctx.gs_base = (unsigned long)&shm->gs_word;
	ret = vmexec_run(pid, &ctx, 0, &si, NULL);
	tap_ok(ret == 0 && ctx.rdx == 1 && ctx.rdi == 0x1111 && ctx.rsi == 0x2222,
	       "guest runs with the context's fs/gs base (%#llx %#llx)",
	       (unsigned long long)ctx.rdi, (unsigned long long)ctx.rsi);
	tap_ok(get_base(ARCH_GET_FS) == myfs && get_base(ARCH_GET_GS) == mygs &&
	       ctx.fs_base == (unsigned long)&shm->fs_word &&
	       ctx.gs_base == (unsigned long)&shm->gs_word,
	       "caller's bases restored, guest's stored");

	if (!wr) {
		tap_ok(1, "# SKIP no FSGSBASE");
		tap_ok(1, "# SKIP no FSGSBASE");
		tap_ok(1, "# SKIP no FSGSBASE");
	} else {
		ret = vmexec_run(pid, &ctx, 0, &si, NULL);
		asm volatile("rdfsbase %0" : "=r"(hw_fs));
		asm volatile("rdgsbase %0" : "=r"(hw_gs));
		tap_ok(ret == 0 && ctx.rdx == 2 && ctx.fs_base == shm->newfs &&
		       ctx.gs_base == shm->newgs,
		       "WRFSBASE/WRGSBASE in the guest land in the context");
		tap_ok(hw_fs == myfs && hw_gs == mygs && get_base(ARCH_GET_FS) == myfs,
		       "caller's fs/gs base registers unchanged (%#lx %#lx)", hw_fs, hw_gs);
		ret = vmexec_run(pid, &ctx, 0, &si, NULL);
		tap_ok(ret == 0 && ctx.rdx == 3 && ctx.rdi == 0x3333 && ctx.rsi == 0x4444,
		       "guest's own bases are reloaded on the next run");
	}
	/* libc TLS (errno lives at %fs) still works */
	errno = 0;
	close(-1);
	tap_ok(errno == EBADF, "caller TLS works (errno %d)", errno);
	kill_stub(pid);
	return tap_exit();
}

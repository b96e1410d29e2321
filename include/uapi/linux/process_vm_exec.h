/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * process_vm_exec(2): run code or one system call in the address space of
 * another process.  Shared between the kernel patch series
 * (kernel/patches/) and the pvx sentry (sentry/platform/vmexec.c).
 *
 *   long process_vm_exec(pid_t pid, struct process_vm_exec_context *ctx,
 *                        unsigned long flags, siginfo_t *info,
 *                        const sigset_t *sigmask, size_t sigsetsize);
 *
 * flags == 0 ("trap mode"): the calling thread switches to the mm of @pid
 * (PTRACE_MODE_ATTACH_REALCREDS is required), loads the guest registers,
 * fs_base/gs_base and FPU state from @ctx and returns to user mode in the
 * guest.  The guest runs until it makes a system call (syscall, int $0x80,
 * sysenter/syscall from compat mode, x32, a call into the vsyscall page),
 * or a signal becomes pending for the thread (faults are signals).  Then
 * the guest state is stored back into @ctx and the call returns in the
 * caller's own context:
 *   0        guest made a system call: info->si_signo = SIGSYS,
 *            si_code = SYS_USER_DISPATCH, si_syscall = nr,
 *            si_arch = AUDIT_ARCH_X86_64 or AUDIT_ARCH_I386,
 *            si_call_addr = address after the syscall instruction;
 *            ctx->orig_rax = nr, ctx->rax = -ENOSYS.  Nothing was executed.
 *   0        a signal in @sigmask was dequeued and stored in @info
 *            (e.g. SIGSEGV of a guest fault, with ctx->cr2/trapno/err).
 *   -EINTR   the guest was interrupted by a signal not in @sigmask (it is
 *            delivered to the caller as usual); @ctx holds the guest
 *            state, re-enter to go on.
 *   -errno   the call failed before the guest ran (EINVAL, EFAULT, ESRCH,
 *            EPERM/EACCES from the ptrace check), or storing the guest
 *            state into @ctx/@info failed (EFAULT; the guest state is lost).
 * Task work queued for the thread (e.g. a delayed fput) runs in the
 * caller's mm without leaving the guest.  While the guest runs, the
 * thread's /proc maps/mem and ptrace view show the guest mm and registers.
 *
 * flags == PROCESS_VM_EXEC_SYSCALL: execute the system call described by
 * ctx->rax (nr) and rdi, rsi, rdx, r10, r8, r9 in the mm of @pid and store
 * its result in ctx->rax; the call itself returns 0.  Only system calls that
 * act on memory or on file descriptors with user buffers are allowed
 * (see the list in the kernel source); others fail with -EINVAL.  Not
 * allowed (-EPERM) if the caller runs under seccomp, because the inner
 * system call would bypass the caller's filter.  @info and @sigmask are
 * ignored and may be NULL.
 *
 * FPU contract: the guest never sees the caller's FPU/SSE/AVX registers and
 * the caller never sees the guest's.  If ctx->fpstate is 0 the guest starts
 * with the initial FPU state and its FPU state is discarded at the trap.  If
 * ctx->fpstate points to a 64-byte aligned buffer of ctx->fpstate_size bytes
 * (at least the signal frame xstate size; 16 KiB is always enough today),
 * the guest FPU state is loaded from it (in the same format as the fpstate
 * of a signal frame, so it can be copied into a guest signal frame as is)
 * and stored back to it at the trap.  Initialize a new guest by running it
 * once with PROCESS_VM_EXEC_FPU_INIT, which ignores the buffer's content.
 *
 * fs_base/gs_base: loaded from ctx->fs_base/gs_base for the guest, stored
 * back at the trap; the caller's are restored.  FS/GS selectors are 0.
 */
#ifndef _UAPI_LINUX_PROCESS_VM_EXEC_H
#define _UAPI_LINUX_PROCESS_VM_EXEC_H

#include <linux/types.h>

/* x86_64 only; a number no mainline kernel uses. */
#define __NR_process_vm_exec		600

/* flags */
#define PROCESS_VM_EXEC_SYSCALL		0x1UL	/* run one syscall, see above */
#define PROCESS_VM_EXEC_FPU_INIT	0x2UL	/* guest starts with init FPU state */

/*
 * The first 256 bytes are laid out exactly like struct sigcontext_64 of
 * <asm/sigcontext.h> (not included here: it clashes with libc's
 * struct sigcontext); the rest is the extension.
 */
struct process_vm_exec_context {
	__u64 r8, r9, r10, r11, r12, r13, r14, r15;
	__u64 rdi, rsi, rbp, rbx, rdx, rax, rcx, rsp, rip;
	__u64 eflags;
	__u16 cs, gs, fs, ss;	/* cs: 0x33 (64-bit) or 0x23 (compat); 0 = 0x33 */
	__u64 err, trapno, oldmask, cr2;	/* out: fault details */
	__u64 fpstate;		/* in: user pointer to guest xstate, or 0 */
	__u64 reserved1[8];
	/* extension */
	__u64 fs_base, gs_base;	/* in/out: guest segment bases */
	__u64 fpstate_size;	/* in: size of the fpstate buffer */
	__u64 orig_rax;		/* out: trapping syscall nr, or -1 */
	__u64 reserved2[4];	/* must be 0 */
};

#define PROCESS_VM_EXEC_CONTEXT_SIZE	320

#endif /* _UAPI_LINUX_PROCESS_VM_EXEC_H */

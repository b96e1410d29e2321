// SPDX-License-Identifier: GPL-2.0
/*
 * The vmexec platform: process_vm_exec(2) (kernel/, our port of Andrei
 * Vagin's 2021 RFC to Linux 6.12; see include/uapi/linux/process_vm_exec.h).
 *
 * The stub process only owns the guest mm. The sentry thread itself runs
 * guest code in that mm: process_vm_exec switches mm, loads the guest's
 * registers, fs/gs base and FPU state, and returns when the guest makes a
 * syscall (a synthetic SIGSYS siginfo) or gets a fault signal. Syscalls the
 * sentry wants in the guest mm (mmap, munmap, mprotect, and read/write for
 * zero-copy I/O) run with PROCESS_VM_EXEC_SYSCALL in the sentry's own task
 * context: the fds are the sentry's, so no fd passing is needed.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/uio.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pvx/hostcred.h"
#include "pvx/interrupt.h"
#include "pvx/log.h"
#include "pvx/sigframe.h"
#include "pvx/stub_abi.h"
#include "platform.h"
#include "uapi/linux/process_vm_exec.h"

_Static_assert(sizeof(struct process_vm_exec_context) == PROCESS_VM_EXEC_CONTEXT_SIZE, "uapi layout");

#define AUDIT_ARCH_X86_64_ 0xc000003eU
#define SYS_USER_DISPATCH_ 2
#define FPSTATE_SIZE (16UL << 10)	/* "16 KiB is always enough today" (uapi header) */

/* A guest thread: the sentry thread runs it, with an FPU state of its own. */
struct vmexec_ctx {
	struct platform_ctx ctx;
	bool fpu_live;		/* fpstate holds the guest's FPU state (else: init) */
	char fpstate[FPSTATE_SIZE] __attribute__((aligned(64)));
};

static struct vmexec_ctx *to_vctx(struct platform_ctx *ctx)
{
	return (struct vmexec_ctx *)ctx;
}

static struct vmexec_ctx *vctx_alloc(void)
{
	struct vmexec_ctx *vc;

	if (posix_memalign((void **)&vc, 64, sizeof(*vc)))
		return NULL;
	memset(vc, 0, offsetof(struct vmexec_ctx, fpstate));
	return vc;
}

static long pvm_exec(pid_t pid, struct process_vm_exec_context *ctx, unsigned long flags, siginfo_t *si,
		     const sigset_t *mask)
{
	const long a[6] = { pid, (long)ctx, (long)flags, (long)si, (long)mask, mask ? 8 : 0 };

	return intr_syscall(__NR_process_vm_exec, a);	/* a kick cannot slip in before it */
}

/* Usable when the running kernel has the call: a bad pid gives ESRCH, not ENOSYS. */
static long vmexec_probe(void)
{
	struct process_vm_exec_context ctx = { 0 };
	long r = pvm_exec(0, &ctx, PROCESS_VM_EXEC_SYSCALL, NULL, NULL);

	return r == -ENOSYS ? -ENOSYS : 0;
}

static bool vmexec_as_release(struct addr_space *as, struct rusage *ru)
{
	bool reaped = false;

	if (!as)
		return false;
	if (as->pid > 0 && stub_unregister(as->pid)) {
		kill(as->pid, SIGKILL);
		reaped = stub_reap(as->pid, 0, ru);
	}
	while (as->ctxs) {
		struct platform_ctx *c = as->ctxs;
		ctx_unlink(c);
		free(c);
	}
	free(as);
	return reaped;
}

/* clone(2) copies the FPU state: so does a new context. */
static long vmexec_ctx_new(struct platform_ctx *parent, struct platform_ctx **out)
{
	struct vmexec_ctx *vc = vctx_alloc(), *pc = to_vctx(parent);

	if (!vc)
		return -ENOMEM;
	vc->fpu_live = pc->fpu_live;
	if (pc->fpu_live)
		memcpy(vc->fpstate, pc->fpstate, sizeof(vc->fpstate));
	ctx_link(parent->as, &vc->ctx, false);
	*out = &vc->ctx;
	return 0;
}

static long vmexec_ctx_start(struct platform_ctx *ctx)
{
	ctx->owner = pthread_self();
	ctx->owned = true;
	return 0;
}

static void vmexec_ctx_release(struct platform_ctx *ctx)
{
	if (ctx->first)
		return;
	ctx_unlink(ctx);
	free(ctx);
}

static long vmexec_as_syscall(struct addr_space *as, long nr, const long args[6])
{
	struct process_vm_exec_context ctx = {
		.rax = (uint64_t)nr, .rdi = (uint64_t)args[0], .rsi = (uint64_t)args[1],
		.rdx = (uint64_t)args[2], .r10 = (uint64_t)args[3], .r8 = (uint64_t)args[4],
		.r9 = (uint64_t)args[5],
	};
	long r = pvm_exec(as->pid, &ctx, PROCESS_VM_EXEC_SYSCALL, NULL, NULL);

	return r < 0 ? r : (long)ctx.rax;
}

#define STUB_USER_TOP PVX_TASK_SIZE_MAX

/* Is the stub blocked in pause()? /proc/PID/syscall starts with the number. */
static bool in_pause(pid_t pid)
{
	char path[64], buf[32] = "";
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/syscall", pid);
	fd = open_privileged(path, O_RDONLY | O_CLOEXEC);	/* 0400 root: not nobody's */
	if (fd < 0)
		return false;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	return n > 3 && !strncmp(buf, "34 ", 3);	/* __NR_pause */
}

static long vmexec_as_new(struct addr_space **out)
{
	long memfd = stub_memfd();
	struct addr_space *as;
	struct vmexec_ctx *first;

	if (memfd < 0)
		return memfd;
	as = calloc(1, sizeof(*as));
	first = vctx_alloc();
	if (!as || !first) {
		free(as);
		free(first);
		return -ENOMEM;
	}
	as->ops = &platform_vmexec;
	as->creator = pthread_self();
	first->ctx.first = true;
	ctx_link(as, &first->ctx, true);
	pid_t pid = stub_start((int)memfd, "vmexec", NULL, 0, false);
	if (pid < 0) {
		vmexec_as_release(as, NULL);
		return pid;
	}
	as->pid = pid;
	stub_register(pid);
	/*
	 * The stub must have exec'd before its mm is the guest's: until then it
	 * is a copy of ours. A harmless syscall in its mm tells us when the
	 * stub image is there (its text at PVX_STUB_BASE is readable).
	 */
	for (int i = 0; i < 4000; i++) {
		char gadget[3];
		struct iovec l = { gadget, 3 }, r = { (void *)STUB_SYSCALL_GADGET, 3 };
		if (process_vm_readv(pid, &l, 1, &r, 1, 0) == 3 && !memcmp(gadget, STUB_SYSCALL_GADGET_BYTES, 3) &&
		    in_pause(pid)) {
			/*
			 * Asleep in pause() with every signal blocked, the stub never
			 * runs its code again: unmap all of it (image, stack) so guest
			 * code finds nothing above its range, as on Linux, but the
			 * host's vDSO and its data, which the guest calls
			 * (AT_SYSINFO_EHDR).
			 */
			uint64_t lo = STUB_USER_TOP, hi = STUB_USER_TOP, vdso = stub_vdso(pid);
			if (!vdso || stub_vdso_span(pid, &lo, &hi) < 0 || vdso < lo || vdso >= hi)
				lo = hi = STUB_USER_TOP, vdso = 0;
			const long a[6] = { (long)PVX_STUB_BASE, (long)(lo - PVX_STUB_BASE) };
			const long b[6] = { (long)hi, (long)(STUB_USER_TOP - hi) };
			long u = vmexec_as_syscall(as, SYS_munmap, a);
			if (u >= 0 && hi < STUB_USER_TOP)
				u = vmexec_as_syscall(as, SYS_munmap, b);
			if (u < 0)
				pr_warn("vmexec: cannot unmap the stub's own pages: %s", strerror((int)-u));
			as->vdso = vdso;
			*out = as;
			return 0;
		}
		usleep(500);
	}
	pr_err("vmexec stub %d did not start", pid);
	vmexec_as_release(as, NULL);
	return -ECHILD;
}

/* The sentry's own fds are valid for PROCESS_VM_EXEC_SYSCALL: nothing to pass. */
static long vmexec_as_get_fd(struct addr_space *as __unused, int host_fd)
{
	return host_fd;
}

static void vmexec_as_put_fd(struct addr_space *as __unused, long as_fd __unused)
{
}

/* Signals of the guest's own making, returned as traps instead of hitting the sentry. */
static const int fault_signals[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS };

static long vmexec_run(struct platform_ctx *pctx, struct pvx_regs *regs, struct pvx_trap *trap)
{
	struct vmexec_ctx *vc = to_vctx(pctx);
	struct addr_space *as = pctx->as;
	struct process_vm_exec_context ctx = {
		.r8 = regs->r8, .r9 = regs->r9, .r10 = regs->r10, .r11 = regs->r11,
		.r12 = regs->r12, .r13 = regs->r13, .r14 = regs->r14, .r15 = regs->r15,
		.rdi = regs->rdi, .rsi = regs->rsi, .rbp = regs->rbp, .rbx = regs->rbx,
		.rdx = regs->rdx, .rax = regs->rax, .rcx = regs->rcx, .rsp = regs->rsp,
		.rip = regs->rip, .eflags = regs->eflags,
		.fs_base = regs->fs_base, .gs_base = regs->gs_base,
		.fpstate = (uint64_t)vc->fpstate, .fpstate_size = sizeof(vc->fpstate),
	};
	sigset_t faults;
	siginfo_t si;
	long r;

	sigemptyset(&faults);
	for (size_t i = 0; i < ARRAY_SIZE(fault_signals); i++)
		sigaddset(&faults, fault_signals[i]);
	memset(trap, 0, sizeof(*trap));
	memset(&si, 0, sizeof(si));
	r = pvm_exec(as->pid, &ctx, vc->fpu_live ? 0 : PROCESS_VM_EXEC_FPU_INIT, &si, &faults);
	if (r < 0 && r != -EINTR)
		return r;
	vc->fpu_live = true;
	regs->r8 = ctx.r8, regs->r9 = ctx.r9, regs->r10 = ctx.r10, regs->r11 = ctx.r11;
	regs->r12 = ctx.r12, regs->r13 = ctx.r13, regs->r14 = ctx.r14, regs->r15 = ctx.r15;
	regs->rdi = ctx.rdi, regs->rsi = ctx.rsi, regs->rbp = ctx.rbp, regs->rbx = ctx.rbx;
	regs->rdx = ctx.rdx, regs->rax = ctx.rax, regs->rcx = ctx.rcx, regs->rsp = ctx.rsp;
	regs->rip = ctx.rip, regs->eflags = ctx.eflags;
	regs->fs_base = ctx.fs_base, regs->gs_base = ctx.gs_base;
	regs->orig_rax = ctx.orig_rax;
	if (r == -EINTR) {	/* a signal for the sentry: nothing happened to the guest */
		trap->kind = TRAP_SIGNAL;
		trap->signo = 0;
		return 0;
	}
	if (si.si_signo == SIGSYS && si.si_code == SYS_USER_DISPATCH_) {
		trap->kind = TRAP_SYSCALL;
		/* int $0x80, sysenter: killed; x32 numbers get ENOSYS from the table. */
		if (si.si_arch != AUDIT_ARCH_X86_64_) {
			trap->kind = TRAP_SIGNAL;
			trap->signo = SIGSYS;
			trap->code = 0x80;
		}
		return 0;
	}
	trap->kind = TRAP_SIGNAL;
	trap->signo = si.si_signo;
	trap->code = si.si_code;
	trap->addr = (uint64_t)si.si_addr;
	return 0;
}

/*
 * No as_cmpxchg32 on vmexec: the gadget run through vmexec_run broke every
 * robust-list test of the VM suite (the owner's death never reached the
 * waiter), so futex words there are changed by guest_cmpxchg32's fallback,
 * a read and a write under the sentry lock, as before (a guest thread
 * running meanwhile on the other CPU can lose an update; README).
 */

/* The ctx's buffer is in signal-frame format already (kernel/patches/0001). */
static long vmexec_fpu_get(struct platform_ctx *ctx, void *buf, size_t len)
{
	struct vmexec_ctx *vc = to_vctx(ctx);
	size_t n;

	if (!vc->fpu_live)
		return 0;
	n = k_fpstate_size(vc->fpstate, sizeof(vc->fpstate));
	if (n > len)
		return -ENOSPC;
	memcpy(buf, vc->fpstate, n);
	return (long)n;
}

/* process_vm_exec loads it with the sigreturn code, which validates it. */
static long vmexec_fpu_set(struct platform_ctx *ctx, const void *buf, size_t len)
{
	struct vmexec_ctx *vc = to_vctx(ctx);

	if (len > sizeof(vc->fpstate))
		return -EINVAL;
	memcpy(vc->fpstate, buf, len);
	vc->fpu_live = true;
	return 0;
}

const struct platform_ops platform_vmexec = {
	.name = "vmexec",
	.probe = vmexec_probe,
	.as_new = vmexec_as_new,
	.as_release = vmexec_as_release,
	.ctx_new = vmexec_ctx_new,
	.ctx_start = vmexec_ctx_start,
	.ctx_release = vmexec_ctx_release,
	.as_syscall = vmexec_as_syscall,
	.as_get_fd = vmexec_as_get_fd,
	.as_put_fd = vmexec_as_put_fd,
	.zero_copy_io = true,
	.run = vmexec_run,
	.fpu_get = vmexec_fpu_get,
	.fpu_set = vmexec_fpu_set,
};

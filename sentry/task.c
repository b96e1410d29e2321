// SPDX-License-Identifier: GPL-2.0
/*
 * The task loop: run the guest until it traps, emulate the syscall from the
 * table or apply the signal's default action, put the result in rax, repeat.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "pvx/log.h"
#include "pvx/task.h"
#include "sentry/platform/platform.h"
#include "sentry/task_run.h"
#include "syscalls/syscalls.h"

struct sandbox sandbox;

/* The one fatal path: say why and dump the guest's registers. */
void task_fatal(struct task *t, const char *why)
{
	const struct pvx_regs *r = &t->regs;

	pr_err("guest task %d: %s", t->tid, why);
	fprintf(stderr,
		"  rip %016lx rsp %016lx rax %016lx orig_rax %016lx\n"
		"  rdi %016lx rsi %016lx rdx %016lx r10 %016lx\n"
		"  r8  %016lx r9  %016lx rbx %016lx rbp %016lx\n"
		"  fs_base %016lx eflags %08lx\n",
		r->rip, r->rsp, r->rax, r->orig_rax, r->rdi, r->rsi, r->rdx, r->r10, r->r8, r->r9,
		r->rbx, r->rbp, r->fs_base, r->eflags);
	t->exiting = true;
	t->exit_status = SIGKILL;
}

/* Signals whose default action is to ignore them (signal(7)). */
static bool default_ignored(int sig)
{
	return sig == SIGCHLD || sig == SIGCONT || sig == SIGURG || sig == SIGWINCH;
}

/*
 * Handler delivery comes with the signals issue; until then a signal the
 * guest did not ignore takes its default action. A synchronous fault
 * (si_code > 0) cannot be ignored, as with force_sig() in Linux.
 */
static void handle_signal(struct task *t, const struct pvx_trap *trap)
{
	int sig = trap->signo;
	bool sync = trap->code > 0;

	if (sig <= 0 || sig >= 64)
		return;
	if (!sync && (default_ignored(sig) || t->sigactions[sig - 1].handler == (uint64_t)SIG_IGN))
		return;
	pr_debug("guest killed by signal %d (code %d, addr %#lx)", sig, trap->code, trap->addr);
	t->exiting = true;
	t->exit_status = sig;
}

int task_run(struct task *t)
{
	const struct platform_ops *ops = t->as->ops;
	struct pvx_trap trap;

	while (!t->exiting) {
		long r = ops->run(t->as, &t->regs, &trap);
		if (r < 0) {
			task_fatal(t, r == -ESRCH ? "the stub process died" : "the platform cannot run the guest");
			break;
		}
		if (trap.kind == TRAP_SIGNAL) {
			handle_signal(t, &trap);
			continue;
		}
		long nr = (long)t->regs.orig_rax;
		const long a[6] = { (long)t->regs.rdi, (long)t->regs.rsi, (long)t->regs.rdx,
				    (long)t->regs.r10, (long)t->regs.r8,  (long)t->regs.r9 };
		if (sandbox.strace)
			strace_enter(t, nr, a);
		long ret = syscall_dispatch(t, nr, a);
		if (sandbox.strace)
			strace_exit(t, nr, a, ret);
		t->regs.rax = (uint64_t)ret;
	}
	return t->exit_status;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * The task loop: run the guest until it traps, emulate the syscall from the
 * table or apply the signal's default action, put the result in rax, repeat.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>

#include "pvx/exec.h"
#include "pvx/interrupt.h"
#include "pvx/kernel.h"
#include "pvx/log.h"
#include "pvx/ptrace.h"
#include "pvx/task.h"
#include "sentry/platform/platform.h"
#include "sentry/kernel/task_run.h"

static const struct syscall_ops *syscalls;	/* set once at start, before any task runs */

/* See pvx/kernel.h. */
void kernel_set_syscalls(const struct syscall_ops *ops)
{
	syscalls = ops;
}

/* See pvx/kernel.h. */
bool kernel_syscall_implemented(long nr)
{
	return syscalls && syscalls->implemented && syscalls->implemented(nr);
}

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

/*
 * A fault or a signal that stopped the guest. A synchronous fault cannot be
 * blocked or ignored (force_sig_fault): it kills unless a handler runs.
 */
static void handle_trap_signal(struct task *t, const struct pvx_trap *trap)
{
	int sig = trap->signo;
	struct sig_info info = { trap->code, 0, 0, trap->addr };

	if (sig <= 0 || sig > 64 || (sig == PVX_SIG_INTERRUPT && trap->code <= 0))
		return;	/* an interruption (task_interrupt): pending signals are delivered below */
	if (sig == SIGSEGV && trap->code == SEGV_ACCERR && mm_keeper_fault(t->mm, trap->addr))
		info.code = SEGV_MAPERR;	/* the host's page there is not the guest's */
	/* A fault below a stack: it grows as Linux's do_user_addr_fault() grows it, or the SIGSEGV goes on. */
	if (sig == SIGSEGV && trap->code == SEGV_MAPERR) {
		mm_set_rlimits(t->mm, t->proc->rlim);
		if (mm_grow_stack(t->mm, trap->addr))
			return;
	}
	if (trap->code > 0) {
		struct sigaction_rec *sa = &t->proc->sigactions[sig - 1];
		if (sa->handler == (uint64_t)SIG_IGN || (t->sigmask & (1UL << (sig - 1)))) {
			memset(sa, 0, sizeof(*sa));
			t->sigmask &= ~(1UL << (sig - 1));
		}
		pr_debug("guest fault: signal %d (code %d, addr %#lx)", sig, trap->code, trap->addr);
	}
	signal_queue(t, sig, &info);
}

int task_run(struct task *t)
{
	struct pvx_trap trap;

	if (t->tracer)	/* a traced child's SIGSTOP or EVENT_STOP comes before any of its code (ret_from_fork) */
		signal_deliver(t, NULL);
	while (!t->exiting) {
		if (t->stop_pending) {	/* a new thread, or one back from a wait: no guest code while stopped */
			jobctl_stop_wait(t);
			continue;
		}
		if (t->ptrace_trap_pending) {
			ptrace_check_interrupt(t);
			continue;
		}
		const struct platform_ops *ops = t->proc->as->ops;	/* execve may change it */
		struct platform_ctx *ctx = t->ctx;
		intr_arm();	/* vmexec: a kick from here on cuts the run short */
		sentry_unlock();
		long r = ops->run(ctx, &t->regs, &trap);
		sentry_lock();
		intr_disarm();
		if (t->exiting)
			break;	/* killed while the guest ran */
		if (r < 0) {
			task_fatal(t, r == -ESRCH ? "the stub process died" : "the platform cannot run the guest");
			break;
		}
		if (trap.kind == TRAP_OUT_FAULT) {	/* the syscall's copy-out faulted in the guest's context */
			if (guest_out_redo())
				t->regs.rax = (uint64_t)-EFAULT;
			continue;
		}
		/* A fault inside a patched syscall site (mm/usertrap.c): run it again, or its syscall, or its cmp. */
		if (trap.kind == TRAP_SIGNAL && (trap.signo == SIGILL || trap.signo == SIGSEGV) &&
		    mm_ut_fixup(t->mm, &t->regs, &trap) &&
		    trap.kind == TRAP_SIGNAL)
			continue;
		if (trap.kind == TRAP_SIGNAL) {
			handle_trap_signal(t, &trap);
			signal_deliver(t, NULL);
			continue;
		}
		/* do_syscall_64() takes the number as an int: the upper half of rax is not looked at. */
		bool traced = t->tracer && t->ptrace_syscall;
		/* Its site may be patched to trap without a signal from now on (not while anyone watches the calls). */
		if (!t->tracer && !sandbox.strace && !trap.patched)
			mm_ut_consider(t->mm, &t->regs);
		if (traced) {	/* syscall-enter stop: the tracer may change the number and arguments */
			t->regs.rax = (uint64_t)-ENOSYS;
			ptrace_syscall_stop(t, true);
			if (t->exiting)
				break;
		}
		long nr = (int)t->regs.orig_rax;
		const long a[6] = { (long)t->regs.rdi, (long)t->regs.rsi, (long)t->regs.rdx,
				    (long)t->regs.r10, (long)t->regs.r8,  (long)t->regs.r9 };
		if (sandbox.strace)
			syscalls->trace_enter(t, nr, a);
		/* A tracer's orig_rax of -1 skips the call: rax (-ENOSYS or the tracer's) is its result. */
		t->ptrace_in_call = true;
		long ret = traced && nr == -1 ? (long)t->regs.rax : syscalls->dispatch(t, nr, a);
		t->ptrace_in_call = false;
		/* A copy_to_guest_ret's copy goes with the next run only when nothing comes between. */
		ret = guest_out_settle(t->ctx, ret,
				       !dnotify_records && !sandbox.strace && !(t->tracer && t->ptrace_syscall) && !t->stop_pending &&
					       !t->ptrace_trap_pending && nr != SYS_rt_sigreturn && !signal_pending(t));
		if (dnotify_records)
			dnotify_poll();	/* what the call changed in watched directories signals before it returns */
		if (sandbox.strace)
			syscalls->trace_exit(t, nr, a, ret);
		if (t->tracer && t->ptrace_syscall && !t->exiting) {	/* syscall-exit stop: it may change rax */
			t->regs.rax = (uint64_t)ret;
			ptrace_syscall_stop(t, false);
			ret = (long)t->regs.rax;
		}
		if (nr == SYS_rt_sigreturn)
			t->regs.rax = (uint64_t)ret;	/* the restored frame, not a result */
		signal_deliver(t, nr == SYS_rt_sigreturn ? NULL : &ret);
		if (nr != SYS_rt_sigreturn)
			t->regs.rax = (uint64_t)ret;
	}
	return t->exit_status;
}

/* A new task tells the parent sleeping in clone how its start went (0 or -errno). */
static void started(struct task *t, struct task *parent, long r)
{
	parent->fork_result = r;
	parent->fork_done = true;
	t->clone_parent = t->fork_parent = NULL;
	t->state = TASK_LIVE;
	sentry_wake_all();
	if (r) {
		t->exiting = true;
		t->exit_status = SIGKILL;
	}
}

/*
 * The thread of every task: build its address space, run it, exit; then
 * stay while a stub this thread made still runs a process (mm_linger).
 */
void *task_thread(void *arg)
{
	struct task *t = arg;

	task_set_current(t);
	sentry_lock();
	t->host_tid = gettid();	/* vmexec: guest code runs on this thread (syscalls/sys_rusage.c) */
	if (t->clone_parent) {
		/* A new thread: its context was made by the parent (syscalls/sys_process.c). */
		struct task *parent = t->clone_parent;
		sentry_unlock();
		long r = t->proc->as->ops->ctx_start(t->ctx);
		sentry_lock();
		if (r && t->proc->leader == t)	/* a CLONE_VM process that could not start: no zombie */
			t->proc->ppid = 0;
		started(t, parent, r);
	} else if (t->fork_parent) {
		/* fork: the parent sleeps in do_fork until fork_done; see syscalls/sys_process.c. */
		struct task *parent = t->fork_parent;
		long r;
		if (t->fork_as) {
			/* The parent's stub forked itself (mm_fork): its first context becomes ours. */
			t->proc->as = t->fork_as;
			t->fork_as = NULL;
			t->ctx = t->proc->as->ctxs;
			r = t->proc->as->ops->ctx_start(t->ctx);
		} else {
			r = sandbox.platform->as_new(&t->proc->as);
			if (!r) {
				t->ctx = t->proc->as->ctxs;	/* the first context, ours */
				r = mm_init(t->mm, t->proc->as);
			}
			if (!r)
				r = mm_copy(t->mm, parent->mm);
			/* The parent's FPU state (a forked stub has it from the host). */
			if (!r && t->fork_fpu && t->fork_fpu_len > 0 &&
			    t->proc->as->ops->fpu_set(t->ctx, t->fork_fpu, (size_t)t->fork_fpu_len) < 0)
				pr_debug("fork: the child's FPU state could not be set");
		}
		free(t->fork_fpu);
		t->fork_fpu = NULL;
		/* schedule_tail(): the child's tid is in its memory before it runs (glibc caches it there). */
		if (!r && t->set_child_tid && copy_to_guest(t->mm, t->set_child_tid, &t->tid, sizeof(int32_t)))
			pr_debug("clone: bad child_tid pointer");
		t->set_child_tid = 0;
		if (r)	/* a fork that failed leaves no child: no SIGCHLD, no zombie for wait() */
			t->proc->ppid = 0;
		started(t, parent, r);
	} else {
		struct task_start *st = t->start_arg;
		const char *why = NULL;
		long r = task_exec(t, st->path, st->argv, st->envp, &why);
		t->state = TASK_LIVE;
		if (r < 0) {
			fprintf(stderr, "pvx: %s: %s\n", st->argv[0], why ? why : strerror((int)-r));
			t->exiting = true;
			t->exit_status = (r == -ENOENT ? 127 : 126) << 8;
		}
	}
	if (!t->exiting)
		task_run(t);
	task_exit(t);	/* t may be freed from here on */
	task_set_current(NULL);	/* mm_linger's waits are no task's */
	mm_linger();
	sentry_unlock();
	return NULL;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * ptrace(2) of guest tasks by guest tasks, as kernel/ptrace.c and the
 * ptrace parts of kernel/signal.c do it (and gVisor's kernel/ptrace.go):
 * the tracer is a guest task, the tracee's stops are sleeps in the sentry
 * (it runs no guest code) until the tracer resumes it, and wait reports
 * them to the tracer's process as (code << 8) | 0x7f, CLD_TRAPPED. This is
 * the guest's ptrace: the host's (the ptrace platform's) never sees it.
 *
 * Who may trace whom: the sandbox has one uid, so Linux's ptrace_may_access
 * passes but for a process made undumpable (PR_SET_DUMPABLE 0, which
 * execve undoes): EPERM, as without CAP_SYS_PTRACE. What is left is
 * ptrace_attach's EPERM for a task of the tracer's own thread group, one
 * already traced or exiting, and pvx's own rule for the sandbox's pid 1
 * (the init of its pid namespace, which it also keeps from stop signals):
 * nobody inside may trace it, as Yama's ptrace_scope 1 answers a
 * descendant that tries.
 *
 * Everything here runs under the sentry lock.
 */
#include <linux/ptrace.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>

#include "pvx/kernel.h"
#include "pvx/ptrace.h"
#include "pvx/task.h"
#include "sentry/platform/platform.h"

#ifndef CLD_TRAPPED
#define CLD_TRAPPED 4
#endif

/* A live thread of process p to be the tracer (the leader when it still runs). */
static struct task *live_thread(struct process *p)
{
	if (!p->leader->exited && !p->leader->exiting)
		return p->leader;
	for (struct task *o = task_next(NULL); o; o = task_next(o))
		if (o->proc == p && !o->exited && !o->exiting)
			return o;
	return NULL;
}

long ptrace_traceme(struct task *t)
{
	struct task *parent = task_find(t->proc->ppid);
	struct task *tracer = parent && parent->proc && parent->state != TASK_ZOMBIE ? live_thread(parent->proc) : NULL;

	if (t->tracer || !tracer)	/* pid 1's parent is outside the sandbox */
		return -EPERM;
	t->tracer = tracer;
	fd_pt_pause(t->files);	/* its reads must reach the sentry's syscall stops */
	t->ptrace_seized = false;
	t->ptrace_opts = 0;
	return 0;
}

long ptrace_attach(struct task *tracer, struct task *t, bool seize, unsigned opts)
{
	static const struct sig_info priv = { SI_KERNEL, 0, 0, 0 };

	if (t->proc == tracer->proc || t->proc->pid == 1)
		return -EPERM;
	/* __ptrace_may_access(): an undumpable process (PR_SET_DUMPABLE 0) needs CAP_SYS_PTRACE, which the sandbox lacks */
	if (t->proc->undumpable)
		return -EPERM;
	if (t->state != TASK_LIVE || t->exiting || t->exited || t->proc->group_exit)
		return -EPERM;
	if (t->tracer)
		return -EPERM;
	t->tracer = tracer;
	fd_pt_pause(t->files);	/* its reads must reach the sentry's syscall stops */
	t->ptrace_seized = seize;
	t->ptrace_opts = seize ? opts : 0;
	t->ptrace_syscall = false;
	if (!seize)
		(void)signal_queue(t, SIGSTOP, &priv);	/* send_sig_info(SIGSTOP, SEND_SIG_PRIV) */
	sentry_wake_all();
	/*
	 * Already in a group stop: it traps for the tracer (JOBCTL_TRAP_STOP),
	 * and attach returns once it has (JOBCTL_TRAPPING), so that the next
	 * request finds it stopped. Its thread only has to wake up to do it.
	 */
	for (int tid = t->tid; !tracer->exiting;) {
		if (!(t->stopped && !t->ptrace_stopped && t->tracer == tracer && !t->exiting))
			break;
		sentry_wait_busy();
		/* Killed and reaped meanwhile (a zombie's parent or autoreap frees it): t is gone, not to be read. */
		if (task_find(tid) != t)
			break;
	}
	return 0;
}

struct task *ptrace_tracee(struct task *tracer, int tid, bool any_state, long *err)
{
	struct task *t = task_find(tid);

	*err = -ESRCH;
	if (!t || !t->tracer || t->tracer->proc != tracer->proc || t->state == TASK_ZOMBIE)
		return NULL;
	/* also the PTRACE_EVENT_EXIT stop of an exiting task; not one that listens (ptrace_freeze_traced) */
	if (!any_state && (!t->ptrace_stopped || t->ptrace_listening))
		return NULL;
	*err = 0;
	return t;
}

void ptrace_resume(struct task *t, int sig, bool syscall)
{
	t->ptrace_syscall = syscall;
	t->ptrace_resume_sig = sig;
	t->ptrace_stopped = false;
	sentry_wake_all();
}

/* __ptrace_unlink(): t is no longer traced. */
static void unlink_tracee(struct task *t)
{
	t->tracer = NULL;
	t->ptrace_opts = 0;
	t->ptrace_seized = false;
	t->ptrace_syscall = false;
	t->ptrace_exit_report = false;
	t->ptrace_code = 0;
}

void ptrace_detach(struct task *t, int sig)
{
	unlink_tracee(t);
	ptrace_resume(t, sig, false);
}

void ptrace_interrupt(struct task *t)
{
	if (t->ptrace_stopped && !t->ptrace_listening)
		return;	/* in a trap already: INTERRUPT does not disturb it */
	t->ptrace_trap_pending = true;	/* a listening tracee re-traps into its stop (ptrace_stop) */
	if (!t->ptrace_stopped)
		task_interrupt(t, false);
	sentry_wake_all();
}

/*
 * PTRACE_LISTEN: the tracee stays stopped, as a process stopped by a
 * signal is, but its trap is over for the tracer: no request reaches it
 * (ptrace_tracee) and wait reports nothing of it, until an event re-traps
 * it with a new PTRACE_EVENT_STOP (ptrace_stop): the SIGCONT that ends its
 * group's stop, a new group stop, PTRACE_INTERRUPT. Only a seized tracee,
 * and only in a PTRACE_EVENT_STOP stop (its last_siginfo says so, as
 * Linux looks); an event that came since the stop began re-traps it at once
 * (JOBCTL_TRAP_NOTIFY). This is what strace does at every group stop.
 */
long ptrace_listen(struct task *t)
{
	if (!t->ptrace_seized || !t->ptrace_si_signo || (t->ptrace_si.code >> 8) != PTRACE_EVENT_STOP)
		return -EIO;
	t->ptrace_listening = true;
	if (t->ptrace_trap_pending)
		sentry_wake_all();
	return 0;
}

void ptrace_notify_continue(struct process *p)
{
	for (struct task *o = task_next(NULL); o; o = task_next(o)) {
		if (o->proc != p || !o->tracer || !o->ptrace_seized || o->exiting || o->state == TASK_ZOMBIE)
			continue;
		o->ptrace_trap_pending = true;
		if (!o->ptrace_stopped)
			task_interrupt(o, false);
	}
	sentry_wake_all();
}

/*
 * do_jobctl_trap()'s PTRACE_EVENT_STOP: its signal (the group's stop
 * signal while a stop is under way or in effect, else SIGTRAP), returned;
 * its code and ptrace_do_notify()'s siginfo in *code and *si.
 */
static int event_stop_sig(struct task *t, int *code, struct sig_info *si)
{
	const struct process *p = t->proc;
	int sig = (p->group_stop_count || p->stop_stopped) && p->stop_sig ? p->stop_sig : SIGTRAP;

	*code = sig | (PTRACE_EVENT_STOP << 8);
	*si = (struct sig_info){ *code, t->tid, 0, 0 };
	t->ptrace_msg = 0;
	return sig;
}

/*
 * do_notify_parent_cldstop(tsk, true, CLD_TRAPPED): SIGCHLD to the
 * tracer's process unless it ignores SIGCHLD or set SA_NOCLDSTOP; its
 * waiters wake either way.
 */
static void notify_tracer(struct task *t, int code)
{
	struct task *tr = t->tracer;

	sentry_wake_all();
	if (!tr || !tr->proc || tr->state == TASK_ZOMBIE)
		return;
	const struct sigaction_rec *sa = &tr->proc->sigactions[SIGCHLD - 1];
	if (sa->handler == (uint64_t)SIG_IGN || (sa->flags & SA_NOCLDSTOP))
		return;
	struct sig_info info = { CLD_TRAPPED, t->tid, code & 0x7f, 0 };
	(void)signal_queue_process(tr->proc, SIGCHLD, &info);
}

/* What the tracer asks of a stopped tracee's thread (ptrace_fpu). */
struct ptrace_fpu_req {
	void *buf;
	size_t len;
	bool write, done;
	long result;
};

/* The tracee's thread serves or fails the tracer's FPU request. */
static void fpu_serve(struct task *t, bool fail)
{
	struct ptrace_fpu_req *q = t->ptrace_fpu;
	const struct platform_ops *ops = t->proc->as ? t->proc->as->ops : NULL;

	if (!q)
		return;
	if (fail || !ops || !ops->fpu_get || !ops->fpu_set)
		q->result = fail ? -ESRCH : -EIO;
	else
		q->result = q->write ? ops->fpu_set(t->ctx, q->buf, q->len) : ops->fpu_get(t->ctx, q->buf, q->len);
	q->done = true;
	t->ptrace_fpu = NULL;
	sentry_wake_all();
}

long ptrace_fpu(struct task *t, void *buf, size_t len, bool write)
{
	struct ptrace_fpu_req q = { buf, len, write, false, 0 };

	if (!t->ptrace_stopped || t->ptrace_fpu || t->exiting)
		return -ESRCH;
	t->ptrace_fpu = &q;
	sentry_wake_all();
	while (!q.done)	/* the tracee serves it, or fails it as it leaves the stop: never left dangling */
		sentry_wait_busy();
	return q.result;
}

/*
 * ptrace_stop(): report code to the tracer and sleep until it resumes t
 * (or detaches, or t is killed). at_exit: the PTRACE_EVENT_EXIT stop, which
 * only SIGKILL ends, as t is exiting already. Returns the resume signal.
 */
static int ptrace_stop(struct task *t, int code, const struct sig_info *si, int signo, int sc_stop, bool at_exit)
{
	if (!t->tracer || (t->exiting && !at_exit) || t->killed)
		return 0;
	t->ptrace_code = code;
	t->ptrace_resume_sig = 0;
	t->ptrace_si_signo = signo;
	t->ptrace_si = *si;
	t->ptrace_sc_stop = sc_stop;
	t->ptrace_stopped = true;
	notify_tracer(t, code);
	while (t->ptrace_stopped && t->tracer && !(at_exit ? t->killed : t->exiting)) {
		if (t->ptrace_fpu) {
			fpu_serve(t, false);
			continue;
		}
		if (t->ptrace_listening && t->ptrace_trap_pending) {
			/* do_jobctl_trap() of a listening tracee: a new PTRACE_EVENT_STOP for the tracer */
			t->ptrace_si_signo = event_stop_sig(t, &code, &t->ptrace_si);
			t->ptrace_listening = false;
			t->ptrace_trap_pending = false;
			jobctl_participate(t);	/* a new group stop re-trapped it: it is in that stop now */
			t->ptrace_code = code;
			notify_tracer(t, code);
			continue;
		}
		sentry_wait_busy();
	}
	fpu_serve(t, true);
	t->ptrace_listening = false;
	t->ptrace_stopped = false;
	t->ptrace_code = 0;
	t->ptrace_sc_stop = 0;
	t->ptrace_si_signo = 0;
	int sig = t->ptrace_resume_sig;
	t->ptrace_resume_sig = 0;
	return t->exiting && !at_exit ? 0 : sig;
}

/* ptrace_do_notify(): an event or syscall stop, with SIGTRAP's siginfo (si_code the exit code). */
static int trap_stop(struct task *t, int code, uint64_t msg, int sc_stop, bool at_exit)
{
	struct sig_info si = { code, t->tid, 0, 0 };

	t->ptrace_msg = msg;
	return ptrace_stop(t, code, &si, SIGTRAP, sc_stop, at_exit);
}

int ptrace_signal(struct task *t, int sig, struct sig_info *si)
{
	int new = ptrace_stop(t, sig, si, sig, 0, false);

	if (!new || t->exiting)
		return 0;
	*si = t->ptrace_si;	/* PTRACE_SETSIGINFO may have changed it */
	if (new != sig) {	/* the tracer's signal: as if it sent it */
		struct sig_info user = { SI_USER, t->tracer ? t->tracer->pid : 0, 0, 0 };
		*si = user;
	}
	if (t->sigmask & (1UL << (new - 1))) {	/* blocked now: pending again */
		(void)signal_queue(t, new, si);
		return 0;
	}
	return new;
}

/*
 * A ptrace stop taken while t sleeps in a syscall (task_block, a wait in
 * the sentry): Linux would cut the call short (-ERESTART*), report its
 * exit stop to a PTRACE_SYSCALL tracer, trap, and restart the call, which
 * a PTRACE_SYSCALL tracer sees as a new entry stop. pvx's call goes on
 * where it slept, but the tracer sees the same stops around the trap, or
 * it takes the call's exit stop for an entry (strace -p of a sleeper).
 */
static uint64_t midcall_begin(struct task *t)
{
	uint64_t rax = t->regs.rax;

	if (!t->ptrace_in_call)
		return rax;
	t->regs.rax = (uint64_t)-ERESTARTSYS;
	if (t->ptrace_syscall) {
		ptrace_syscall_stop(t, false);
		t->regs.rax = (uint64_t)-ERESTARTSYS;	/* the tracer's change of the result has no call to go to */
	}
	return rax;
}

static void midcall_end(struct task *t, uint64_t rax)
{
	if (!t->ptrace_in_call)
		return;
	if (t->tracer && t->ptrace_syscall && !t->exiting) {
		t->regs.rax = (uint64_t)-ENOSYS;
		ptrace_syscall_stop(t, true);
	}
	t->regs.rax = rax;
}

/* A group stop's or PTRACE_EVENT_STOP's trap, which may come while t sleeps in a syscall. */
static void trap_maybe_midcall(struct task *t, int code, const struct sig_info *si, int sig)
{
	uint64_t rax = midcall_begin(t);

	(void)ptrace_stop(t, code, si, sig, 0, false);
	midcall_end(t, rax);
}

void ptrace_group_stop(struct task *t, int sig)
{
	int code = t->ptrace_seized ? sig | (PTRACE_EVENT_STOP << 8) : sig;
	/* ptrace_do_notify()'s siginfo when seized (si_code the event code, si_pid the tracee) */
	struct sig_info si = t->ptrace_seized ? (struct sig_info){ code, t->tid, 0, 0 } : (struct sig_info){ SI_USER, 0, 0, 0 };

	t->ptrace_trap_pending = false;	/* a PTRACE_EVENT_STOP trap clears a pending one (JOBCTL_TRAP_NOTIFY) */
	trap_maybe_midcall(t, code, &si, sig);
}

void ptrace_check_interrupt(struct task *t)
{
	if (!t->ptrace_trap_pending)
		return;
	t->ptrace_trap_pending = false;
	if (t->tracer && t->ptrace_seized) {
		int code;
		struct sig_info si;
		int sig = event_stop_sig(t, &code, &si);
		trap_maybe_midcall(t, code, &si, sig);
	}
}

/* ptrace_event(): the stop if the tracer asked for the event (option bit 1 << event). */
static bool event_stop(struct task *t, int event, uint64_t msg)
{
	if (!t->tracer || !(t->ptrace_opts & (1U << event)))
		return false;
	(void)trap_stop(t, SIGTRAP | (event << 8), msg, 0, event == PTRACE_EVENT_EXIT);
	return true;
}

void ptrace_exec(struct task *t, int old_tid)
{
	static const struct sig_info user = { SI_USER, 0, 0, 0 };

	if (!t->tracer || event_stop(t, PTRACE_EVENT_EXEC, (uint64_t)old_tid))
		return;
	if (!t->ptrace_seized)	/* the classic post-execve SIGTRAP */
		(void)signal_queue(t, SIGTRAP, &user);
}

void ptrace_syscall_stop(struct task *t, bool entry)
{
	if (!t->tracer || !t->ptrace_syscall)
		return;
	int code = SIGTRAP | ((t->ptrace_opts & PTRACE_O_TRACESYSGOOD) ? 0x80 : 0);
	int sig = trap_stop(t, code, 0, entry ? 1 : 2, false);
	/* ptrace_report_syscall(): a signal given with the resume is sent to the tracee. */
	if (sig && !t->exiting)
		(void)signal_queue(t, sig, NULL);
}

int ptrace_clone_link(struct task *t, struct task *c, unsigned long flags, bool thread)
{
	static const struct sig_info priv = { SI_KERNEL, 0, 0, 0 };
	int event;

	if (!t->tracer)
		return 0;
	if (flags & 0x4000 /* CLONE_VFORK */)
		event = PTRACE_EVENT_VFORK;
	else if (thread || (flags & 0xff) != SIGCHLD)
		event = PTRACE_EVENT_CLONE;
	else
		event = PTRACE_EVENT_FORK;
	if (!(t->ptrace_opts & (1U << event)))
		return 0;
	/* ptrace_init_task(): the child is traced alike and stops before it runs. */
	c->tracer = t->tracer;
	c->ptrace_opts = t->ptrace_opts;
	c->ptrace_seized = t->ptrace_seized;
	if (c->ptrace_seized)
		c->ptrace_trap_pending = true;	/* PTRACE_EVENT_STOP */
	else
		(void)signal_queue(c, SIGSTOP, &priv);
	return event;
}

void ptrace_clone_event(struct task *t, int event, int child)
{
	if (event)
		(void)event_stop(t, event, (uint64_t)child);
}

void ptrace_exit_event(struct task *t, int status)
{
	if (!t->killed)
		event_stop(t, PTRACE_EVENT_EXIT, (uint64_t)status);
}

void ptrace_tracer_exit(struct task *t)
{
	/* By tid: a zombie made the parent's may be freed, and its leader with it. */
	for (int tid = 1; tid <= PVX_MAX_TASKS; tid++) {
		struct task *o = task_find(tid);
		if (!o || o->tracer != t)
			continue;
		bool kill = o->ptrace_opts & PTRACE_O_EXITKILL, held = o->ptrace_exit_report;
		ptrace_detach(o, 0);
		if (held)	/* an exit it had not reaped: the parent's now (may free o) */
			task_zombie_untraced(o);
		else if (kill && o->state != TASK_ZOMBIE)
			(void)signal_queue(o, SIGKILL, NULL);
	}
}

void ptrace_tracee_exit(struct task *t)
{
	struct task *tr = t->tracer;

	if (!tr)
		return;
	if (t->proc->leader == t && tr->proc->pid == t->proc->ppid) {	/* the parent hears it anyway */
		unlink_tracee(t);
		return;
	}
	t->ptrace_exit_report = true;
	sentry_wake_all();
	struct sig_info info = task_exit_info(t);
	const struct sigaction_rec *sa = &tr->proc->sigactions[SIGCHLD - 1];
	if (tr->state != TASK_ZOMBIE && sa->handler != (uint64_t)SIG_IGN)
		(void)signal_queue_process(tr->proc, SIGCHLD, &info);
}

bool ptrace_wait_match(const struct task *w, const struct task *c, long pid)
{
	if (!c->tracer || c->tracer->proc != w->proc)
		return false;
	if (pid > 0)
		return c->tid == pid;
	if (pid == 0)
		return c->proc->pgid == w->proc->pgid;
	if (pid < -1)
		return c->proc->pgid == -pid;
	return true;
}

int ptrace_wait_report(struct task *c, bool nowait, int *status, int *child_sig)
{
	/* A leader's exit waits for its traced threads' (delay_group_leader) */
	if (c->ptrace_exit_report && c->state == TASK_ZOMBIE && !(c->proc->leader == c && c->proc->zombie_threads)) {
		int st = *status = c->exit_status;
		*child_sig = WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st);
		if (!nowait)
			unlink_tracee(c);
		return WIFEXITED(st) ? CLD_EXITED : CLD_KILLED;
	}
	if (!c->ptrace_stopped || !c->ptrace_code || c->ptrace_listening)
		return 0;
	*status = (c->ptrace_code << 8) | 0x7f;
	*child_sig = c->ptrace_code;
	if (!nowait)
		c->ptrace_code = 0;
	return CLD_TRAPPED;
}

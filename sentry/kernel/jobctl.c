// SPDX-License-Identifier: GPL-2.0
/*
 * Job control: stop and continue signals, as kernel/signal.c does them
 * (prepare_signal, do_signal_stop, do_notify_parent_cldstop) and as
 * gVisor's task_stop.go and thread_group.go model them for an emulator.
 *
 * A stop signal with the default action, taken by one thread, starts a
 * group stop: every other thread of the process gets stop_pending and a
 * kick. Each thread joins the stop before it runs guest code again: on its
 * way back to the guest (signal_deliver, the task loop), or where it
 * sleeps in the sentry (sentry_wait, task_block): a sleeper is not made to
 * return to the guest first, it stops where it is and then goes on
 * waiting. The last one to join makes the group stopped and tells the
 * parent (SIGCHLD with CLD_STOPPED, and wait's WUNTRACED report). SIGCONT,
 * at the moment it is sent, ends the stop (or the one under way) for every
 * thread and tells the parent CLD_CONTINUED. SIGKILL ends a stopped
 * process at once; other fatal signals wait for SIGCONT, as on Linux.
 *
 * Everything here runs under the sentry lock.
 */
#include <signal.h>
#include <sys/wait.h>

#include "pvx/kernel.h"
#include "pvx/ptrace.h"
#include "pvx/sigqueue.h"
#include "pvx/task.h"

#define BIT(sig) (1UL << ((sig) - 1))
#define STOP_MASK (BIT(SIGSTOP) | BIT(SIGTSTP) | BIT(SIGTTIN) | BIT(SIGTTOU))

/*
 * do_notify_parent_cldstop(): SIGCHLD to the parent unless its action for
 * SIGCHLD is SIG_IGN or has SA_NOCLDSTOP; its waiters wake either way.
 */
static void notify_parent(struct process *p, int why, int status)
{
	struct task *parent = task_find(p->ppid);

	sentry_wake_all();
	if (!parent || !parent->proc || parent->state == TASK_ZOMBIE)
		return;
	const struct sigaction_rec *sa = &parent->proc->sigactions[SIGCHLD - 1];
	if (sa->handler == (uint64_t)SIG_IGN || (sa->flags & SA_NOCLDSTOP))
		return;
	struct sig_info info = { why, p->pid, status, 0 };
	(void)signal_queue_process(parent->proc, SIGCHLD, &info);
}

/* Drop every pending signal of mask in all of p's queues (flush_sigqueue_mask on each). */
static void flush_all(struct process *p, uint64_t mask)
{
	sigq_flush(&p->pending, mask);
	for (struct task *o = task_next(NULL); o; o = task_next(o))
		if (o->proc == p)
			sigq_flush(&o->pending, mask);
}

/*
 * prepare_signal(): a stop signal discards a pending SIGCONT; SIGCONT
 * discards pending stop signals and resumes every thread, whatever its
 * action and mask, and the parent hears of it. Called for every signal
 * sent, before it is queued (or dropped as ignored).
 */
void jobctl_prepare(struct process *p, int sig)
{
	if (p->group_exit)
		return;
	if (sig_default_stop(sig)) {
		flush_all(p, BIT(SIGCONT));
		return;
	}
	if (sig != SIGCONT)
		return;
	flush_all(p, STOP_MASK);
	for (struct task *o = task_next(NULL); o; o = task_next(o))
		if (o->proc == p) {
			o->stop_pending = false;
			o->stopped = false;
		}
	int why = p->stop_stopped ? CLD_CONTINUED : p->group_stop_count ? CLD_STOPPED : 0;
	ptrace_notify_continue(p);
	if (why) {
		p->stop_stopped = false;
		p->stop_continued = true;
		p->group_stop_count = 0;
		p->stop_code = 0;
		/* Linux reports a half-done stop with the group's code, just zeroed (si_status 0). */
		notify_parent(p, why, why == CLD_CONTINUED ? SIGCONT : 0);
	}
	sentry_wake_all();
}

/*
 * will_become_orphaned_pgrp(): no member of process group pgid has a
 * parent in another group of the same session (the shell that would
 * continue it). Zombies do not count.
 */
static bool pgrp_orphaned(int pgid)
{
	for (struct task *m = task_next(NULL); m; m = task_next(m)) {
		if (!m->proc || m->proc->leader != m || m->proc->pgid != pgid || m->state == TASK_ZOMBIE)
			continue;
		struct task *q = task_find(m->proc->ppid);
		if (q && q->proc && q->proc->pgid != pgid && q->proc->sid == m->proc->sid)
			return false;
	}
	return true;
}

/*
 * kill_orphaned_pgrp(): p's group, which has a stopped member, lost its
 * last link to a parent in the session (parent, in another group of it):
 * SIGHUP and SIGCONT to every member, so that nothing stays stopped with
 * nobody left to continue it (POSIX). exit_notify() asks it for the
 * exiting process (a zombie already; parent its parent) and for each
 * child it leaves to init (parent the exiting process).
 */
void jobctl_orphan_kick(const struct process *p, const struct process *parent)
{
	int pgid = p->pgid;
	bool stopped = false;

	if (!parent || parent->pgid == pgid || parent->sid != p->sid || !pgrp_orphaned(pgid))
		return;
	for (struct task *m = task_next(NULL); m && !stopped; m = task_next(m))
		stopped = m->proc && m->proc->leader == m && m->proc->pgid == pgid && m->proc->stop_stopped &&
			  !m->proc->group_exit;	/* a group exit ends the stop (SIGNAL_GROUP_EXIT) */
	if (!stopped)
		return;
	static const struct sig_info kernel_info = { SI_KERNEL, 0, 0, 0 };
	for (int sig = SIGHUP; sig; sig = sig == SIGHUP ? SIGCONT : 0)
		for (struct task *m = task_next(NULL); m; m = task_next(m))
			if (m->proc && m->proc->leader == m && m->proc->pgid == pgid && m->state != TASK_ZOMBIE)
				(void)signal_queue_process(m->proc, sig, &kernel_info);
}

/*
 * task_participate_group_stop(): t has joined the stop (or exits before it
 * could); the last one makes the group stopped and tells the parent.
 */
static void participate(struct task *t)
{
	struct process *p = t->proc;

	t->stop_pending = false;
	if (p->group_stop_count > 0 && --p->group_stop_count == 0) {
		p->stop_stopped = true;
		p->stop_continued = false;
		notify_parent(p, CLD_STOPPED, p->stop_code);
	}
}

void jobctl_participate(struct task *t)
{
	if (t->stop_pending && !t->proc->group_exit)
		participate(t);
}

/*
 * t joins the group stop asked of it and sleeps stopped (TASK_STOPPED, T
 * in /proc) until SIGCONT or SIGKILL. Other fatal signals wait, pending,
 * for SIGCONT: a stopped thread does not want them (wants_signal).
 */
void jobctl_stop_wait(struct task *t)
{
	if (!t->stop_pending || t->exiting || t->exited)
		return;
	participate(t);
	t->stopped = true;
	while (t->stopped && !t->exiting) {
		if (t->tracer) {	/* a traced task stops for its tracer (sentry/kernel/ptrace.c) */
			ptrace_group_stop(t, t->proc->stop_sig ? t->proc->stop_sig : SIGSTOP);
			if (t->tracer || !t->proc->stop_stopped)
				break;	/* resumed by the tracer: it runs though its group is stopped, as on Linux */
			continue;	/* detached while its group is stopped: it stays stopped */
		}
		sentry_wait_busy();
	}
	t->stopped = false;
}

/*
 * do_signal_stop(): t took stop signal sig with the default action. Job
 * control signals do nothing in an orphaned process group; SIGSTOP always
 * stops. The other threads are asked to stop and kicked; t stops now.
 */
void jobctl_stop_signal(struct task *t, int sig)
{
	struct process *p = t->proc;

	if (sig != SIGSTOP && pgrp_orphaned(p->pgid))
		return;
	if (p->group_exit || t->exiting)
		return;
	if (!t->stop_pending) {
		int count = 1;
		p->stop_code = p->stop_sig = sig;
		p->stop_stopped = false;
		for (struct task *o = task_next(NULL); o; o = task_next(o)) {
			if (o == t || o->proc != p || o->state == TASK_ZOMBIE || o->exiting || o->exited || o->stopped)
				continue;
			if (!o->stop_pending) {
				o->stop_pending = true;
				if (o->ptrace_listening)
					o->ptrace_trap_pending = true;	/* ptrace_trap_notify(): it re-traps, and joins */
				task_interrupt(o, false);
			}
			count++;
		}
		t->stop_pending = true;
		p->group_stop_count = count;
		sentry_wake_all();
	}
	jobctl_stop_wait(t);
}

/* task_join_group_stop(): a thread made while a stop is under way joins it. */
void jobctl_attach(struct task *t)
{
	struct process *p = t->proc;

	if (p->group_stop_count > 0 && !p->group_exit) {
		t->stop_pending = true;
		p->group_stop_count++;
	}
}

/* exit_signals(): a thread that ends with a stop pending counts as stopped. */
void jobctl_exit(struct task *t)
{
	if (t->stop_pending && !t->proc->group_exit)
		participate(t);
	t->stop_pending = false;
	t->stopped = false;
}

/*
 * What wait reports of child process c other than its exit
 * (wait_task_stopped, wait_task_continued): with WUNTRACED/WSTOPPED a
 * stop not yet reported, with WCONTINUED a continue; each once, unless
 * nowait. Returns CLD_STOPPED or CLD_CONTINUED with the wait status and
 * si_status, or 0.
 */
int jobctl_wait_report(struct process *c, int options, bool nowait, int *status, int *child_sig)
{
	if ((options & WUNTRACED) && c->stop_stopped && c->stop_code) {
		*child_sig = c->stop_code;
		*status = (c->stop_code << 8) | 0x7f;
		if (!nowait)
			c->stop_code = 0;
		return CLD_STOPPED;
	}
	if ((options & WCONTINUED) && c->stop_continued) {
		*child_sig = SIGCONT;
		*status = 0xffff;
		if (!nowait)
			c->stop_continued = false;
		return CLD_CONTINUED;
	}
	return 0;
}

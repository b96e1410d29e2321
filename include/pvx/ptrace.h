/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ptrace(2) of guest tasks by guest tasks (sentry/kernel/ptrace.c): the
 * links, the stops (a tracee sleeps in the sentry until its tracer resumes
 * it) and what wait reports of them. Nothing here reaches the host's ptrace.
 */
#ifndef PVX_PTRACE_H
#define PVX_PTRACE_H

#include "pvx/task.h"

/* PTRACE_TRACEME: t's parent becomes its tracer. */
long ptrace_traceme(struct task *t) __must_check;
/* PTRACE_ATTACH (a SIGSTOP follows) or PTRACE_SEIZE (with options) of target by tracer. */
long ptrace_attach(struct task *tracer, struct task *target, bool seize, unsigned opts) __must_check;
/*
 * ptrace_check_attach(): the task tid that tracer's process traces, in a
 * ptrace stop unless any_state; NULL with *err -ESRCH otherwise.
 */
struct task *ptrace_tracee(struct task *tracer, int tid, bool any_state, long *err);
/* Let a stopped tracee go on, with signal sig (0: none); syscall: stop at the next syscall entry/exit. */
void ptrace_resume(struct task *t, int sig, bool syscall);
/* PTRACE_DETACH: no longer traced, goes on with sig. */
void ptrace_detach(struct task *t, int sig);
/*
 * The stopped tracee's FPU state in the signal-frame format (fpu_get's,
 * len bytes at most: returns its size) or set from buf: its own sentry
 * thread does it, which alone may use its platform context. -ESRCH when
 * it leaves the stop first.
 */
long ptrace_fpu(struct task *t, void *buf, size_t len, bool write);
/* PTRACE_INTERRUPT (SEIZE only): a running tracee stops with PTRACE_EVENT_STOP; a listening one re-traps. */
void ptrace_interrupt(struct task *t);
/* PTRACE_LISTEN of tracee t, stopped for its tracer: 0, or -EIO (not seized, not a PTRACE_EVENT_STOP stop). */
long ptrace_listen(struct task *t) __must_check;
/*
 * ptrace_trap_notify() for each seized tracee of process p, when a SIGCONT
 * ends or cancels its group stop: a PTRACE_EVENT_STOP trap follows (at once
 * for a listening one).
 */
void ptrace_notify_continue(struct process *p);

/* Stops, taken by the tracee itself (sentry lock held). */
/* Signal-delivery stop for sig (dequeued, info *si): returns the signal to act on, 0 to drop it. */
int ptrace_signal(struct task *t, int sig, struct sig_info *si);
/* A group stop of a traced task: it stops for its tracer instead, until resumed. */
void ptrace_group_stop(struct task *t, int sig);
/* A pending PTRACE_INTERRUPT: the PTRACE_EVENT_STOP stop. */
void ptrace_check_interrupt(struct task *t);
/* After a successful execve (old_tid: its tid before): PTRACE_EVENT_EXEC or SIGTRAP. */
void ptrace_exec(struct task *t, int old_tid);
/* Syscall-enter (true) or -exit stop if resumed with PTRACE_SYSCALL; regs may change. */
void ptrace_syscall_stop(struct task *t, bool entry);
/*
 * fork/vfork/clone is making child c (not yet running): traced too if the
 * options say so. Returns the PTRACE_EVENT_* for ptrace_clone_event, once
 * the child runs, or 0.
 */
int ptrace_clone_link(struct task *t, struct task *c, unsigned long flags, bool thread);
void ptrace_clone_event(struct task *t, int event, int child);
/* The tracee is about to exit with status: PTRACE_EVENT_EXIT stop if asked. */
void ptrace_exit_event(struct task *t, int status);
/* The tracer thread t exits: its tracees are detached (killed with PTRACE_O_EXITKILL). */
void ptrace_tracer_exit(struct task *t);
/* t became a zombie (a leader, or a traced thread): its tracer, unless the parent's, hears of it once in wait. */
void ptrace_tracee_exit(struct task *t);

/* wait: is c a tracee of waiter's process matching pid (wait4's pid argument)? */
bool ptrace_wait_match(const struct task *waiter, const struct task *c, long pid);
/* wait's report of tracee c: CLD_TRAPPED (a stop) or CLD_EXITED/CLD_KILLED (its exit), else 0. */
int ptrace_wait_report(struct task *c, bool nowait, int *status, int *child_sig);

#endif

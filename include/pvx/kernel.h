/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The sentry's task table and its one lock. Each guest task runs on a
 * sentry thread of its own (ptrace wants the tracer to be one thread, and
 * vmexec runs guest code on the calling thread). Like the big kernel lock
 * of old, sentry_lock is held while emulating and released while guest code
 * runs and around host calls that may block (pipe reads, sleeps, wait4).
 */
#ifndef PVX_KERNEL_H
#define PVX_KERNEL_H

#include "pvx/task.h"

void sentry_lock(void);
void sentry_unlock(void);
/* Sleep until sentry_wake_all(); the lock is released while asleep. */
void sentry_wait(void);
/* The same for a wait that is the kernel's work, not a sleep of the guest's (fork waiting for its child's
 * address space): /proc keeps showing the task running, as Linux's fork runs. */
void sentry_wait_busy(void);
/* The same, until CLOCK_MONOTONIC reaches until_ns at the latest (0: no limit). */
void sentry_timedwait(uint64_t until_ns);
void sentry_wake_all(void);
/* The task the calling sentry thread runs (its waits are that task's sleeps). */
void task_set_current(struct task *t);
/* "R (running)", "S (sleeping)", "D (disk sleep)" or "Z (zombie)": t's state for /proc. */
const char *task_state_name(const struct task *t);
/* The lock itself, for condition variables of other parts (sentry/kernel/timer.c). */
pthread_mutex_t *sentry_mutex(void);

/* A new task with a fresh pid (not yet running); NULL when the table is full. */
struct task *task_new(void);
struct task *task_find(int pid);
/* The process of a new leader task (pid = its tid, one thread). */
struct process *process_new(struct task *leader);
/* Make t a new thread of p. */
void thread_attach(struct task *t, struct process *p);
/* execve from a thread: it becomes the leader (its tid the pid). */
void task_take_leader(struct task *t);
/* SIGKILL: every thread of p ends now and its stub is killed. */
void process_kill(struct process *p);
/* exit_group(2) with a wait status: every thread of t's process ends. */
void process_exit_group(struct task *t, int status);
/*
 * t's process dies of signal sig by its default action: process_exit_group,
 * after a core dump for the signals whose action is "core" when
 * RLIMIT_CORE allows (sentry/kernel/coredump.c), which sets WCOREDUMP.
 */
void signal_fatal(struct task *t, int sig);
/* Iterate over tasks: returns the next task after prev (NULL: the first). */
struct task *task_next(struct task *prev);
/*
 * Every fd table's passthrough pauses (seccomp_passthrough.md): the stubs
 * stop serving reads and pipe writes until the next install. For dnotify's
 * F_NOTIFY (reads must reach DN_ACCESS) and a file's first O_ASYNC (pipe
 * writes must reach pipe_wrote's SIGIO).
 */
void pt_pause_all(void);
int sentry_live_tasks(void);
/* Start t's thread running fn(t). */
long task_start(struct task *t, void *(*fn)(void *)) __must_check;
/* The task is done with guest code: zombie, parent notified, resources freed. */
void task_exit(struct task *t);
/* The siginfo of t's exit for whoever waits for it (CLD_EXITED, CLD_DUMPED or CLD_KILLED, t's tid, its code). */
struct sig_info task_exit_info(const struct task *t);
/* A zombie's tracer (not its parent) reaped it or left: its parent hears of the exit now (SIGCHLD, wait). */
void task_zombie_untraced(struct task *t);
/* Free a reaped zombie. */
void task_free(struct task *t);
/* Make t notice a signal: kick its thread out of guest code or a blocking call. */
void task_interrupt(struct task *t, bool kill_stub);
/* A blocking host call with the lock dropped; -EINTR when a signal is pending for t (see kernel.c). */
long task_block(struct task *t, struct addr_space *as, long nr, const long a[6], bool ready);
/* A host call that may block reading in and/or writing out (either may be NULL), lock dropped. */
long io_block(struct task *t, struct addr_space *as, struct file *in, struct file *out, long nr, const long a[6]);
/* Main thread: wait until every task has exited; returns init's wait status. */
int sentry_wait_all(void);

/* Signals (sentry/kernel/signal.c). */
/*
 * Queue sig for target with its siginfo (NULL: kill's SI_USER); wakes the
 * target if it sleeps. 0 (also when it is ignored and dropped), or -EAGAIN:
 * a real-time signal over RLIMIT_SIGPENDING sent other than by kill(2).
 */
long signal_queue(struct task *target, int sig, const struct sig_info *info);
/* Queue sig for the process: the first thread that does not block it takes it. Returns as signal_queue. */
long signal_queue_process(struct process *p, int sig, const struct sig_info *info);
/* f's F_SETSIG signal to its F_SETOWN owner (send_sigio): si_fd fd, si_code code, si_band band. */
struct file;
void signal_sigio(struct file *f, int fd, int code, long band);
/* sigaction(2) set sig's action: if it now ignores sig, its pending instances go. */
void signal_action_changed(struct process *p, int sig);
/* A pending signal the guest does not block: a wait should end (-ERESTARTSYS). */
bool signal_pending(struct task *t);
/* sigsuspend, ppoll, pselect6: mask rules until the call ends; a handler's frame gets the old one. */
void signal_temp_mask(struct task *t, uint64_t mask);
/* The guest's siginfo for a pending signal's record. */
struct k_siginfo;
void signal_siginfo(int sig, const struct sig_info *si, struct k_siginfo *out);
/* Take a pending signal of set without its action (sigtimedwait); 0 if none. */
int signal_dequeue(struct task *t, uint64_t set, struct sig_info *info);
/* Before returning to guest code: run default actions, build handler frames. */
void signal_deliver(struct task *t, long *syscall_ret);
/* rt_sigreturn(2): restore the frame at the guest's rsp; returns the restored rax. */
long signal_return(struct task *t);
/* The vfork parent of t may go on (t exec'd or exited). */
void vfork_release(struct task *t);

/* Job control: stop and continue signals (sentry/kernel/jobctl.c). */
/* prepare_signal(): every signal sent to p, before it is queued (a stop drops SIGCONT, SIGCONT resumes). */
void jobctl_prepare(struct process *p, int sig);
/* t took stop signal sig with the default action: the group stops (not for TSTP/TTIN/TTOU in an orphaned pgrp). */
void jobctl_stop_signal(struct task *t, int sig);
/* t was asked to join a group stop: it does, and sleeps stopped until SIGCONT or death (lock held). */
void jobctl_stop_wait(struct task *t);
/* A new thread of a process whose stop is under way joins it. */
void jobctl_attach(struct task *t);
/* p's link to parent (its parent, now gone or exiting) is gone: an orphaned pgrp with a stopped member gets SIGHUP, SIGCONT. */
void jobctl_orphan_kick(const struct process *p, const struct process *parent);
/* A traced thread asked to join a group stop traps for its tracer instead (ptrace's re-trap): it has joined. */
void jobctl_participate(struct task *t);
/* A thread ends: it no longer holds up its group's stop. */
void jobctl_exit(struct task *t);
/* wait's report of child process c's stop (WUNTRACED) or continue (WCONTINUED): CLD_STOPPED/CLD_CONTINUED or 0. */
int jobctl_wait_report(struct process *c, int options, bool nowait, int *status, int *child_sig);

/* Address spaces shared by processes (sentry/kernel/mm_share.c). */
/* A new empty mm that one process holds; NULL when out of memory. */
struct mm *mm_new(void);
/* c (a new process) runs in p's mm and address space (CLONE_VM without CLONE_THREAD). */
void mm_share(struct process *c, struct process *p);
/* t's process has left mm and as (execve or exit): freed with the stub if it was the last one in it. */
void mm_leave(struct task *t, struct mm *mm, struct addr_space *as);
/* A process that never ran lets go of its mm. */
void mm_drop(struct mm *mm);
/* The empty mm of exited tasks (no address space: guest copies fail with EFAULT). */
struct mm *mm_exited(void);
/* Is every process that runs in as being killed (none, or group_exit)? Then its stub may be killed. */
bool as_only_dying(const struct addr_space *as);
/* A task thread at its end: wait while a stub it made (which dies with it) still runs some process. */
void mm_linger(void);

/*
 * The one way up: what the task loop calls for a trapped syscall. The
 * kernel is given it at start (main.c: syscalls/table.c's), as gVisor's
 * Kernel holds its SyscallTable, so that sentry/kernel/ never names
 * syscalls/.
 */
struct syscall_ops {
	/* Emulate syscall nr for t; returns the value for rax. */
	long (*dispatch)(struct task *t, long nr, const long a[6]);
	/* --strace: a line before and after the call. */
	void (*trace_enter)(struct task *t, long nr, const long a[6]);
	void (*trace_exit)(struct task *t, long nr, const long a[6], long ret);
	/* Does the table emulate nr (not ENOSYS)? /proc/config.gz is made from it. */
	bool (*implemented)(long nr);
};
void kernel_set_syscalls(const struct syscall_ops *ops);
bool kernel_syscall_implemented(long nr);
/* What the kernel gives the file side below it at start (pvx/path.h; sentry/kernel/procfs.c). */
struct fs_kernel_ops;
extern const struct fs_kernel_ops kernel_fs_ops;

/*
 * kcmp(2): 0 if a and b are the same object, else 1 or 2 by an order of
 * type's own that hides the sentry's addresses (sentry/kernel/kcmp.c).
 */
int kcmp_order(const void *a, const void *b, int type);

/* The host signal that interrupts a task thread (sentry/host/interrupt.c). */
#define PVX_SIG_INTERRUPT SIGURG

#endif

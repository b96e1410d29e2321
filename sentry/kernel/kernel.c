// SPDX-License-Identifier: GPL-2.0
/* The task table, task threads and the sentry lock (see include/pvx/kernel.h). */
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>

#include "pvx/fs_share.h"
#include "pvx/futex.h"
#include "pvx/ipc.h"
#include "pvx/keys.h"
#include "pvx/pidfd.h"
#include "pvx/ptrace.h"
#include "pvx/interrupt.h"
#include "pvx/kernel.h"
#include "pvx/mqueue.h"
#include "pvx/log.h"
#include "pvx/rusage.h"
#include "pvx/sigqueue.h"
#include "pvx/mm.h"
#include "pvx/timer.h"
#include "sentry/platform/platform.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed;	/* on CLOCK_MONOTONIC: see sentry_timedwait */
static struct task *tasks[PVX_MAX_TASKS];	/* by tid - 1 */
static int threads;		/* task threads still running */
static int init_status = -1;	/* wait status of pid 1 once it exited */
static __thread struct task *current_task;	/* the task this sentry thread runs (NULL: main, timers) */

void sentry_lock(void)
{
	pthread_mutex_lock(&lock);
}

void sentry_unlock(void)
{
	pthread_mutex_unlock(&lock);
}

__attribute__((constructor)) static void init_changed(void)
{
	pthread_condattr_t attr;

	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&changed, &attr);
	pthread_condattr_destroy(&attr);
}

void task_set_current(struct task *t)
{
	current_task = t;
}

/*
 * A sleeper asked to join a group stop does so where it sleeps (not for a
 * vfork parent: Linux waits for the child killable only), and its caller's
 * loop then looks at its condition again.
 */
static bool stop_here(struct task *t)
{
	if (t && t->ptrace_trap_pending && !t->exiting && !t->exited && !t->in_vfork) {
		ptrace_check_interrupt(t);	/* PTRACE_INTERRUPT of a sleeper: the same, for its tracer */
		return true;
	}
	if (!t || !t->stop_pending || t->exiting || t->exited || t->in_vfork)
		return false;
	jobctl_stop_wait(t);
	return true;
}

/*
 * Every wait of a task thread is a guest task's sleep (wait4, pause,
 * sigsuspend, futex, vfork...): /proc shows it as one (task_state_name).
 */
void sentry_wait(void)
{
	struct task *t = current_task;

	if (stop_here(t))
		return;
	if (t) {
		t->sleeping = true;
		platform_sleep_begin();
	}
	pthread_cond_wait(&changed, &lock);
	if (t) {
		platform_sleep_end();
		t->sleeping = false;
	}
}

/* A stop (job control, ptrace): not runnable either, for the platform. */
void sentry_wait_busy(void)
{
	bool task = current_task != NULL;

	if (task)
		platform_sleep_begin();
	pthread_cond_wait(&changed, &lock);
	if (task)
		platform_sleep_end();
}

void sentry_timedwait(uint64_t until_ns)
{
	if (!until_ns) {
		sentry_wait();
		return;
	}
	struct task *t = current_task;
	struct timespec ts = { (time_t)(until_ns / 1000000000ULL), (long)(until_ns % 1000000000ULL) };

	if (stop_here(t))
		return;
	if (t) {
		t->sleeping = true;
		platform_sleep_begin();
	}
	pthread_cond_timedwait(&changed, &lock, &ts);
	if (t) {
		platform_sleep_end();
		t->sleeping = false;
	}
}

/* The first field after the comm of a host /proc/self/task/TID file (stat: the state), or "". */
static void host_task_field(pid_t tid, const char *file, char *buf, size_t size)
{
	char path[64];

	buf[0] = 0;
	snprintf(path, sizeof(path), "/proc/self/task/%d/%s", (int)tid, file);
	int fd cleanup_close = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, size - 1);
	buf[n > 0 ? n : 0] = 0;
}

/*
 * A task in task_block sleeps only while its host call does: its thread
 * is then asleep in that call (S, or D for disk I/O), not running it nor
 * waiting for the sentry lock again (a futex: then the task is runnable).
 */
static char host_call_state(const struct task *t)
{
	char buf[512];

	host_task_field(t->host_tid, "stat", buf, sizeof(buf));
	const char *p = strrchr(buf, ')');
	char st = p && p[1] == ' ' ? p[2] : 'S';
	if (st != 'S' && st != 'D')
		return 'R';
	host_task_field(t->host_tid, "syscall", buf, sizeof(buf));
	return strtol(buf, NULL, 10) == SYS_futex ? 'R' : st;
}

/*
 * The state /proc/PID/stat and status show, as fs/proc/array.c names them:
 * a task that runs guest code or is in the sentry for it is R; one asleep
 * for the guest is S: in sentry_wait, or in task_block while the host call
 * waits (D if the host says disk sleep); D for a vfork parent (Linux waits
 * for the child TASK_KILLABLE); R while fork waits for its child's address
 * space (sentry_wait_busy: the kernel's work, as Linux's copy); one done with guest code is a zombie, also
 * a leader whose other threads still run; T while in a group stop (jobctl.c).
 */
const char *task_state_name(const struct task *t)
{
	if (t->state == TASK_ZOMBIE || t->exited)
		return "Z (zombie)";
	if (t->stopped && !t->ptrace_stopped)
		return "T (stopped)";
	if (t->ptrace_stopped)
		return "t (tracing stop)";
	if (t->in_host_call) {
		char st = host_call_state(t);
		return st == 'S' ? "S (sleeping)" : st == 'D' ? "D (disk sleep)" : "R (running)";
	}
	if (t->in_vfork)	/* from the clone until the child execs or exits, whatever the thread does meanwhile */
		return "D (disk sleep)";
	if (t->sleeping)
		return "S (sleeping)";
	return "R (running)";
}

pthread_mutex_t *sentry_mutex(void)
{
	return &lock;
}

void sentry_wake_all(void)
{
	pthread_cond_broadcast(&changed);
}

/*
 * Pids are handed out cyclically, as alloc_pid() does, never the lowest free
 * one: a shell that reaped pid N must not see a new child reuse N at once.
 */
struct task *task_new(void)
{
	static int next;	/* index of the next pid to try; pid 1 only ever once */

	for (int k = 0; k < PVX_MAX_TASKS; k++) {
		int i = (next + k) % PVX_MAX_TASKS;
		if (tasks[i] || (i == 0 && next != 0))
			continue;
		next = i + 1;
		struct task *t = calloc(1, sizeof(*t));
		if (!t)
			return NULL;
		t->pid = t->tid = i + 1;
		t->state = TASK_STARTING;
		t->timer_slack_ns = t->default_timer_slack_ns = 50000;	/* init_task's 50 us */
		tasks[i] = t;
		return t;
	}
	return NULL;
}

struct process *process_new(struct task *leader)
{
	struct process *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->mm = mm_new();
	if (!p->mm) {
		free(p);
		return NULL;
	}
	p->pid = p->pgid = p->sid = leader->tid;
	struct timespec boot;
	clock_gettime(CLOCK_BOOTTIME, &boot);
	p->start_ticks = (uint64_t)boot.tv_sec * 100 + (uint64_t)boot.tv_nsec / 10000000;	/* USER_HZ 100 */
	p->leader = leader;
	p->nr_threads = 1;
	if (!(p->sighand = sighand_alloc())) {
		mm_drop(p->mm);
		free(p);
		return NULL;
	}
	p->sigactions = p->sighand->action;
	leader->pid = p->pid;
	leader->proc = p;
	leader->mm = p->mm;
	return p;
}

void thread_attach(struct task *t, struct process *p)
{
	t->proc = p;
	t->pid = p->pid;
	t->mm = p->mm;
	p->nr_threads++;
	jobctl_attach(t);
}

void process_exit_group(struct task *t, int status)
{
	struct process *p = t->proc;
	bool others = false;

	if (!p->group_exit) {
		p->group_exit = true;
		p->exit_status = status;
	}
	for (struct task *o = task_next(NULL); o; o = task_next(o)) {
		if (o->proc != p || o->state == TASK_ZOMBIE)
			continue;
		o->exiting = true;
		if (o != t) {
			o->killed = true;	/* zap_other_threads()'s SIGKILL: no PTRACE_EVENT_EXIT stop */
			others = true;
			task_interrupt(o, false);
		}
	}
	/*
	 * zap_other_threads(): the other threads die now. A kick is not enough:
	 * a guest thread can keep its stub thread from taking any (seccomp), and
	 * nothing of the stub is needed any more -- unless another process runs
	 * in it (a vfork child, or its parent): then the stub goes once those
	 * left are all dying (mm_leave).
	 */
	if (others && p->as && as_only_dying(p->as)) {
		futex_exit_robust_all(p);	/* the others' lists, while their memory can still be read */
		usage_keep_maxrss(p);
		kill(p->as->pid, SIGKILL);
	}
	sentry_wake_all();
}

/* See pvx/kernel.h. */
void pt_pause_all(void)
{
	for (struct task *o = task_next(NULL); o; o = task_next(o))
		if (o->files && o->proc && o->files->pt_as == o->proc->as)
			fd_pt_pause(o->files);
}

struct task *task_find(int pid)
{
	return pid >= 1 && pid <= PVX_MAX_TASKS ? tasks[pid - 1] : NULL;
}

struct task *task_next(struct task *prev)
{
	for (int i = prev ? prev->tid : 0; i < PVX_MAX_TASKS; i++)
		if (tasks[i])
			return tasks[i];
	return NULL;
}

int sentry_live_tasks(void)
{
	int n = 0;

	for (int i = 0; i < PVX_MAX_TASKS; i++)
		n += tasks[i] && tasks[i]->state != TASK_ZOMBIE;
	return n;
}

long task_start(struct task *t, void *(*fn)(void *))
{
	static bool handler_set;
	pthread_attr_t attr;

	if (!handler_set) {
		intr_init(PVX_SIG_INTERRUPT);
		handler_set = true;
	}
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	int r = pthread_create(&t->thread, &attr, fn, t);
	pthread_attr_destroy(&attr);
	if (r)
		return -r;
	threads++;
	platform_set_live_hint(threads);
	return 0;
}

/*
 * A signal for t: its thread leaves a blocking host call (EINTR), and guest
 * code running in the stub traps (ptrace: a signal stop, seccomp: the stub's
 * handler; the vmexec stub blocks it and process_vm_exec sees the thread's
 * signal). The task loop knows PVX_SIG_INTERRUPT from the stub as ours.
 */
void task_interrupt(struct task *t, bool kill_stub)
{
	if (kill_stub && t->proc->as)
		kill(t->proc->as->pid, SIGKILL);
	else if (t->state == TASK_LIVE)
		ctx_kick(t->ctx, PVX_SIG_INTERRUPT);
	if (t->state == TASK_LIVE)
		pthread_kill(t->thread, PVX_SIG_INTERRUPT);
}

/*
 * A host call that may block, made with the sentry lock dropped, as a Linux
 * task sleeps interruptibly: -EINTR when a signal is pending or the task is
 * being killed, before the call or while it blocks (sentry/host/interrupt.c
 * makes sure the kick is not lost). ready says the caller polled and the
 * call will not wait: Linux looks for signals only when it has to wait, so
 * it is made even with a signal pending. A kick that finds nothing to
 * deliver (another thread took a process-directed signal) restarts the
 * call, as a Linux sleeper goes back to sleep. With as, the call runs in
 * that address space (zero-copy I/O). The caller holds references on what
 * the call uses.
 */
long task_block(struct task *t, struct addr_space *as, long nr, const long a[6], bool ready)
{
	for (;; ready = false) {
		if (!ready && !t->exiting && t->stop_pending)
			jobctl_stop_wait(t);	/* stopped here, then the call goes on (as Linux restarts it) */
		if (!ready && !t->exiting && t->ptrace_trap_pending)
			ptrace_check_interrupt(t);	/* PTRACE_INTERRUPT: the same */
		if (signal_pending(t) && (!ready || t->exiting))
			return -EINTR;
		intr_arm();
		t->in_host_call = true;
		sentry_unlock();
		/* A host call that may block: the platform does not count t as runnable meanwhile. */
		bool mine = t == current_task;
		if (mine)
			platform_sleep_begin();
		long r = as ? as->ops->as_syscall(as, nr, a) : intr_syscall(nr, a);
		if (mine)
			platform_sleep_end();
		sentry_lock();
		t->in_host_call = false;
		intr_disarm();
		if (r != -EINTR)
			return r;
	}
}

/* Would I/O on f (NULL: none) not wait? */
static bool io_ready(struct file *f, short ev)
{
	return !f || file_poll(f, ev);
}

/*
 * Host I/O may block (pipes, terminals, a full pipe for sendfile):
 * task_block drops the sentry lock around it, and file references keep a
 * close by another task from freeing the files meanwhile. in is read from,
 * out written to; either may be NULL.
 */
long io_block(struct task *t, struct addr_space *as, struct file *in, struct file *out, long nr, const long a[6])
{
	/* Only with a signal pending does it matter whether the call would wait. */
	bool ready = signal_pending(t) && io_ready(in, POLLIN) && io_ready(out, POLLOUT);

	if (in)
		file_get(in);
	if (out)
		file_get(out);
	long r = task_block(t, as, nr, a, ready);
	file_put(in);
	file_put(out);
	return r;
}

/*
 * de_thread() for execve from a thread that is not the leader (the others
 * have exited): it takes the leader's tid, the old leader's task the
 * caller's tid, and the old leader's sentry thread leaves without ending
 * the process (task_exit).
 */
void task_take_leader(struct task *t)
{
	struct task *l = t->proc->leader;
	int lt = l->tid, tt = t->tid;

	tasks[lt - 1] = t;
	tasks[tt - 1] = l;
	t->tid = lt;
	l->tid = tt;
	t->proc->leader = t;
	sentry_wake_all();
}

/* Free a task; with the leader goes its process. */
void task_free(struct task *t)
{
	tasks[t->tid - 1] = NULL;
	sigq_flush(&t->pending, ~0UL);
	keys_task_free(t);
	task_drop_shared(t);	/* a thread's, or a task that never ran */
	if (t->proc && t->proc->leader == t) {
		keys_process_free(t->proc);
		sigq_flush(&t->proc->pending, ~0UL);
		pidfd_reaped(t->proc);	/* its pidfds say ESRCH from now on, whoever gets the pid next */
		mm_drop(t->proc->mm);	/* a process that never ran; one that exited has left its mm */
		ptimers_release(t->proc);
		free(t->proc->exe);
		free(t->proc->cmdline);
		sighand_put(t->proc->sighand);
		free(t->proc);
	}
	free(t);
}

/* SIGKILL for a process: every thread ends at once, the stub with them. */
void process_kill(struct process *p)
{
	usage_keep_maxrss(p);	/* the stub's VmHWM goes with its mm */
	if (!p->group_exit) {
		p->group_exit = true;
		p->exit_status = SIGKILL;
	}
	/* A stub another process still runs in stays (see process_exit_group): its threads are kicked. */
	bool kill_stub = as_only_dying(p->as);
	if (kill_stub)
		futex_exit_robust_all(p);	/* before the stub and the memory go */
	for (struct task *o = task_next(NULL); o; o = task_next(o)) {
		if (o->proc != p || o->state == TASK_ZOMBIE)
			continue;
		o->exiting = true;
		o->killed = true;
		o->exit_status = SIGKILL;
		task_interrupt(o, kill_stub);
	}
	sentry_wake_all();	/* out of pause, sigsuspend, wait4 */
}

/* pid 1 is gone: like a pid namespace, every other process dies with it. */
static void kill_all_but(struct task *init)
{
	for (struct task *o = task_next(NULL); o; o = task_next(o))
		if (o->proc && o->proc->leader == o && o->proc != init->proc && o->state != TASK_ZOMBIE)
			process_kill(o->proc);
}

void vfork_release(struct task *t)
{
	struct task *p = task_find(t->proc->vfork_parent);

	if (p && p->in_vfork == t->pid) {	/* that thread, still waiting for us */
		p->in_vfork = 0;
		sentry_wake_all();
	}
	t->proc->vfork_parent = 0;
}

/*
 * A thread is done with guest code. clear_child_tid: "when the thread
 * exits, zero at that address and wake one futex waiter" (set_tid_address).
 */
static void thread_exit(struct task *t)
{
	struct process *p = t->proc;

	if (p->as)	/* exit_mm_release(): the robust list first, then clear_child_tid */
		futex_exit_robust(t, t->mm);
	futex_exit_pi(t);	/* exit_pi_state_list(): its PI locks with waiters go to them */
	if (t->clear_child_tid && p->nr_threads > 1 && p->as) {
		uint32_t zero = 0;
		if (!copy_to_guest(t->mm, t->clear_child_tid, &zero, sizeof(zero)))
			futex_wake(t->mm, t->clear_child_tid, 1);
	}
	t->clear_child_tid = 0;
	jobctl_exit(t);
	sigq_flush(&t->pending, ~0UL);	/* its own signals go with it; the process's stay for the others */
	usage_thread_exit(t);
	/* synchronize_group_exit(): the last thread's exit(2) code is the process's. */
	if (--p->nr_threads == 0 && !p->group_exit) {
		p->group_exit = true;
		p->exit_status = t->exit_status;
	}
	if (t->ctx && p->as && p->as->ops->ctx_release)
		p->as->ops->ctx_release(t->ctx);
	t->ctx = NULL;
	sentry_wake_all();
}

/* A task that is not (or no longer) its process's leader goes away with its thread. */
static void thread_gone(struct task *t)
{
	task_free(t);
	threads--;
	platform_set_live_hint(threads);
	sentry_wake_all();
}

/* find_new_reaper(): the nearest ancestor of dying process p that is a living child subreaper, else init (1). */
static int new_reaper(const struct process *p)
{
	for (int depth = 0, pid = p->ppid; pid > 1 && depth < PVX_MAX_TASKS; depth++) {
		struct task *a = task_find(pid);
		if (!a || !a->proc || a->proc->leader != a)
			break;
		if (a->proc->child_subreaper && a->state != TASK_ZOMBIE && !a->proc->group_exit)
			return a->pid;
		pid = a->proc->ppid;
	}
	return 1;
}

struct sig_info task_exit_info(const struct task *t)
{
	int st = t->exit_status;

	return (struct sig_info){ WIFEXITED(st) ? CLD_EXITED : WCOREDUMP(st) ? CLD_DUMPED : CLD_KILLED, t->tid,
				  WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st), 0 };
}

/*
 * do_notify_parent() at a process's exit: SIGCHLD with the exit to its
 * parent. Returns whether the parent reaps nothing (SIGCHLD ignored or
 * SA_NOCLDWAIT): then the zombie goes at once.
 */
static bool notify_parent_exit(struct task *t)
{
	struct task *parent = task_find(t->proc->ppid);

	if (!parent || parent->state == TASK_ZOMBIE)
		return false;
	struct sig_info info = task_exit_info(t);
	const struct sigaction_rec *sa = &parent->proc->sigactions[SIGCHLD - 1];
	/* wait(2): SIGCHLD set to SIG_IGN or SA_NOCLDWAIT: "children ... do not become zombies". */
	bool autoreap = sa->handler == (uint64_t)SIG_IGN || (sa->flags & SA_NOCLDWAIT);
	(void)signal_queue_process(parent->proc, SIGCHLD, &info);
	return autoreap;
}

/* The zombie goes now unless someone will wait for it (its parent, while init lives). */
static void zombie_settle(struct task *t, bool autoreap)
{
	if (t->pid != 1 && (init_status >= 0 || !task_find(t->proc->ppid) || autoreap))
		task_free(t);
}

void task_zombie_untraced(struct task *t)
{
	struct process *p = t->proc;

	if (p->leader != t) {	/* a traced thread's (thread_zombie): release_task() */
		task_free(t);
		struct task *l = p->leader;
		/* The last one: a leader's zombie that waited for it is its parent's now (delay_group_leader). */
		if (--p->zombie_threads == 0 && l->state == TASK_ZOMBIE && !l->ptrace_exit_report)
			zombie_settle(l, notify_parent_exit(l));
	} else if (!p->zombie_threads) {
		zombie_settle(t, notify_parent_exit(t));
	}
	sentry_wake_all();
}

/*
 * exit_notify() of a traced thread that is not its process's leader: a
 * zombie for its tracer to reap (ptrace_tracee_exit: wait reports its
 * exit, SIGCHLD tells), as strace -f expects of every thread it saw
 * start. Its files and fs go now; the leader's zombie waits for it
 * (delay_group_leader, and task_exit). Returns false for a thread that is
 * not traced.
 */
static bool thread_zombie(struct task *t)
{
	struct task *tr = t->tracer;
	struct process *p = t->proc;

	if (!tr || !tr->proc || tr->state == TASK_ZOMBIE || tr->exiting)
		return false;
	if (p->group_exit)
		t->exit_status = p->exit_status;
	task_drop_shared(t);
	t->state = TASK_ZOMBIE;
	p->zombie_threads++;
	ptrace_tracee_exit(t);
	threads--;
	platform_set_live_hint(threads);
	sentry_wake_all();
	return true;
}

void task_exit(struct task *t)
{
	struct process *pr = t->proc;

	ptrace_exit_event(t, pr->group_exit ? pr->exit_status : t->exit_status);
	ptrace_tracer_exit(t);	/* its tracees go on (or die: PTRACE_O_EXITKILL) */
	t->exited = true;
	thread_exit(t);
	if (pr->leader != t) {
		if (!thread_zombie(t))
			thread_gone(t);
		return;
	}
	/* The leader stays until its threads are gone: then the process exits. */
	while (pr->nr_threads > 0 && pr->leader == t)
		sentry_wait();
	if (pr->leader != t) {	/* a thread that exec'd took our pid: go (see task_take_leader) */
		pr->old_leader_gone = true;
		thread_gone(t);
		return;
	}
	if (pr->group_exit)
		t->exit_status = pr->exit_status;
	struct addr_space *as = pr->as;
	struct mm *mm = pr->mm;

	pr->as = NULL;
	pr->mm = t->mm = mm_exited();
	mm_leave(t, mm, as);	/* the stub goes with the last process in it */
	sem_exit(pr);	/* its SEM_UNDO adjustments */
	mq_exit(pr->pid);	/* its mq_notify registrations */
	task_drop_shared(t);	/* exit_files, exit_fs: the last user closes them */
	t->state = TASK_ZOMBIE;
	ptrace_tracee_exit(t);	/* a tracer that is not the parent hears it too */
	pidfd_exited(pr);	/* its pidfds poll readable */
	sigq_flush(&pr->pending, ~0UL);	/* nobody is left to take them */
	vfork_release(t);
	struct task *parent = task_find(t->proc->ppid);
	/*
	 * A tracer that is not the parent hears of the exit first, and alone
	 * (wait_consider_task: "a zombie ptracee is only visible to its
	 * ptracer"): the parent, once the tracer reaped it or is gone
	 * (task_zombie_untraced).
	 */
	bool held = t->ptrace_exit_report || pr->zombie_threads, autoreap = !held && notify_parent_exit(t);
	/*
	 * Orphans go to the nearest living ancestor that is a child subreaper,
	 * else to init (find_new_reaper); each that asked for a parent-death
	 * signal gets it (reparent_leader: SI_USER from the dying parent).
	 */
	int reaper = new_reaper(t->proc);
	for (struct task *c = task_next(NULL); c; c = task_next(c))
		if (c->proc && c->proc->ppid == t->pid) {
			if (c->pdeath_signal && c->state != TASK_ZOMBIE) {
				const struct sig_info pd = { SI_USER, t->pid, 0, 0 };
				(void)signal_queue_process(c->proc, c->pdeath_signal, &pd);
			}
			c->proc->ppid = reaper;
			if (c->proc->leader == c && c->state != TASK_ZOMBIE)
				jobctl_orphan_kick(c->proc, t->proc);
		}
	if (parent && parent->proc && parent->state != TASK_ZOMBIE)
		jobctl_orphan_kick(t->proc, parent->proc);
	if (t->pid == 1) {
		init_status = t->exit_status;
		kill_all_but(t);
	}
	/* Once init is gone nobody will wait: reap at once (init itself stays for its status). */
	if (!held)
		zombie_settle(t, autoreap);
	threads--;
	platform_set_live_hint(threads);
	sentry_wake_all();
}

int sentry_wait_all(void)
{
	sentry_lock();
	while (threads > 0)
		sentry_wait();
	int status = init_status;
	for (int i = 0; i < PVX_MAX_TASKS; i++)
		if (tasks[i])
			task_free(tasks[i]);
	sentry_unlock();
	return status;
}

// SPDX-License-Identifier: GPL-2.0
/* The task table, task threads and the sentry lock (see include/pvx/kernel.h). */
#include <signal.h>
#include <string.h>
#include <sys/wait.h>

#include "pvx/kernel.h"
#include "pvx/log.h"
#include "sentry/platform/platform.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;
static struct task *tasks[PVX_MAX_TASKS];	/* by pid - 1 */
static int threads;		/* task threads still running */
static int init_status = -1;	/* wait status of pid 1 once it exited */
static int live_hint;		/* == threads, readable without the lock */

int sentry_live_hint(void)
{
	return __atomic_load_n(&live_hint, __ATOMIC_RELAXED);
}

void sentry_lock(void)
{
	pthread_mutex_lock(&lock);
}

void sentry_unlock(void)
{
	pthread_mutex_unlock(&lock);
}

void sentry_wait(void)
{
	pthread_cond_wait(&changed, &lock);
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
		t->pid = t->tid = t->pgid = t->sid = i + 1;
		t->cwd_fd = -1;
		t->state = TASK_STARTING;
		tasks[i] = t;
		return t;
	}
	return NULL;
}

struct task *task_find(int pid)
{
	return pid >= 1 && pid <= PVX_MAX_TASKS ? tasks[pid - 1] : NULL;
}

struct task *task_next(struct task *prev)
{
	for (int i = prev ? prev->pid : 0; i < PVX_MAX_TASKS; i++)
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

static void on_interrupt(int sig __unused)
{
}

long task_start(struct task *t, void *(*fn)(void *))
{
	static bool handler_set;
	pthread_attr_t attr;

	if (!handler_set) {
		/* No SA_RESTART: a blocked host call in the task thread returns EINTR. */
		struct sigaction sa = { .sa_handler = on_interrupt };
		sigaction(PVX_SIG_INTERRUPT, &sa, NULL);
		handler_set = true;
	}
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	int r = pthread_create(&t->thread, &attr, fn, t);
	pthread_attr_destroy(&attr);
	if (r)
		return -r;
	threads++;
	__atomic_store_n(&live_hint, threads, __ATOMIC_RELAXED);
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
	if (t->as)
		kill(t->as->pid, kill_stub ? SIGKILL : PVX_SIG_INTERRUPT);
	if (t->state == TASK_LIVE)
		pthread_kill(t->thread, PVX_SIG_INTERRUPT);
}

void task_free(struct task *t)
{
	tasks[t->pid - 1] = NULL;
	free(t->exe);
	free(t->cmdline);
	free(t);
}

/* pid 1 is gone: like a pid namespace, every other task dies with it. */
static void kill_all_but(struct task *init)
{
	for (struct task *o = task_next(NULL); o; o = task_next(o)) {
		if (o == init || o->state == TASK_ZOMBIE)
			continue;
		o->exiting = true;
		o->exit_status = SIGKILL;
		task_interrupt(o, true);
	}
}

void vfork_release(struct task *t)
{
	struct task *p = task_find(t->vfork_parent);

	if (p && p->in_vfork) {
		p->in_vfork = false;
		sentry_wake_all();
	}
	t->vfork_parent = 0;
}

void task_exit(struct task *t)
{
	const struct platform_ops *ops = t->as ? t->as->ops : NULL;

	if (ops)
		ops->as_release(t->as);
	t->as = NULL;
	mm_release(&t->mm);
	if (t->files) {
		fdtable_release(t->files);
		free(t->files);
		t->files = NULL;
	}
	if (t->cwd_fd >= 0)
		close(t->cwd_fd);
	t->cwd_fd = -1;
	t->state = TASK_ZOMBIE;
	vfork_release(t);
	struct task *parent = task_find(t->ppid);
	bool autoreap = false;
	if (parent && parent->state != TASK_ZOMBIE) {
		int st = t->exit_status;
		struct sig_info info = { WIFEXITED(st) ? CLD_EXITED : CLD_KILLED, t->pid,
					 WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st), 0 };
		const struct sigaction_rec *sa = &parent->sigactions[SIGCHLD - 1];
		/* wait(2): SIGCHLD set to SIG_IGN or SA_NOCLDWAIT: "children ... do not become zombies". */
		autoreap = sa->handler == (uint64_t)SIG_IGN || (sa->flags & SA_NOCLDWAIT);
		signal_queue(parent, SIGCHLD, &info);
	}
	/* Orphans go to init, as on Linux (no subreapers here). */
	for (struct task *c = task_next(NULL); c; c = task_next(c))
		if (c->ppid == t->pid)
			c->ppid = 1;
	if (t->pid == 1) {
		init_status = t->exit_status;
		kill_all_but(t);
	}
	/* Once init is gone nobody will wait: reap at once (init itself stays for its status). */
	if (t->pid != 1 && (init_status >= 0 || !task_find(t->ppid) || autoreap))
		task_free(t);
	threads--;
	__atomic_store_n(&live_hint, threads, __ATOMIC_RELAXED);
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

// SPDX-License-Identifier: GPL-2.0
/*
 * ITIMER_REAL (alarm, setitimer, getitimer) and POSIX timers (timer_create)
 * of every process: one sentry thread sleeps until the earliest deadline
 * and queues the signal, which interrupts the task wherever it is (guest
 * code, a blocking call). ITIMER_VIRTUAL and ITIMER_PROF count the
 * process's CPU time, which only the host knows: while one is armed the
 * thread looks every CPU_TICK_NS (Linux's own granularity at HZ=100), and
 * so for POSIX timers on CLOCK_PROCESS_CPUTIME_ID and _THREAD_CPUTIME_ID.
 */
#include <sys/resource.h>
#include <signal.h>
#include <stdlib.h>
#include <time.h>

#include "pvx/kernel.h"
#include "pvx/rusage.h"
#include "pvx/sigqueue.h"
#include "pvx/timer.h"
#include "sentry/platform/platform.h"

static pthread_cond_t timer_changed;
static bool started;

#define CPU_TICK_NS 10000000ULL

uint64_t itimer_cpu_us(const struct process *p, bool prof)
{
	struct guest_usage u;

	usage_of_process(p, &u);
	return u.utime_us + (prof ? u.stime_us : 0);
}

/* See pvx/timer.h. */
long cpuclock_parse(struct task *t, long clk_arg, bool other_procs, struct cpuclock *out)
{
	int clk = (int)clk_arg;	/* a clockid_t: the register's upper half is not the guest's */

	*out = (struct cpuclock){ t->proc, NULL, 2 };
	if (clk == CLOCK_PROCESS_CPUTIME_ID)
		return 0;
	if (clk == CLOCK_THREAD_CPUTIME_ID) {
		out->thread = t;
		return 0;
	}
	if (clk >= 0)
		return 1;
	if ((clk & 7) == 3)
		return -EOPNOTSUPP;	/* CLOCKFD: a dynamic (fd) clock, which pvx has none of */
	int pid = ~(clk >> 3);
	if ((out->which = clk & 3) == 3)
		return -EINVAL;	/* CPUCLOCK_MAX */
	struct task *o = pid ? task_find(pid) : t;
	if (!o || o->state == TASK_ZOMBIE)
		return -EINVAL;
	if (clk & 4) {	/* CPUCLOCK_PERTHREAD: same_thread_group(p, current) */
		if (o->proc != t->proc)
			return -EINVAL;
		out->thread = o;
		return 0;
	}
	if (o->tid != o->pid && o != t)
		return -EINVAL;	/* a process clock names the group leader (or the caller) */
	if (o->proc != t->proc && !other_procs)
		return -EINVAL;
	out->proc = o->proc;
	return 0;
}

/* See pvx/timer.h. */
uint64_t ptimer_now(struct process *p, const struct ptimer *pt)
{
	if (!pt->cpu)
		return timer_now_ns();
	if (!pt->cpu_tid)
		return usage_cpu_ns(p, NULL, pt->cpu_virt ? 1 : 2);
	struct task *t = task_find(pt->cpu_tid);
	if (!t || t->proc != p || t->state == TASK_ZOMBIE)
		return 0;	/* its thread has exited: the clock stands, nothing fires */
	return usage_cpu_ns(p, t, pt->cpu_virt ? 1 : 2);
}

/* Fire p's CPU-time itimers that are due; true while one is armed. */
static bool cpu_itimers(struct process *p)
{
	bool armed = false;

	for (int i = 0; i < 2; i++) {
		if (!p->cpu_itimer[i].expires_us)
			continue;
		uint64_t now = itimer_cpu_us(p, i == 1);
		if (now >= p->cpu_itimer[i].expires_us) {
			struct sig_info info = { SI_KERNEL, 0, 0, 0 };
			uint64_t iv = p->cpu_itimer[i].interval_us;
			p->cpu_itimer[i].expires_us = iv ? MAX(p->cpu_itimer[i].expires_us + iv, now + 1) : 0;
			signal_queue_process(p, i ? SIGPROF : SIGVTALRM, &info);
		}
		armed |= p->cpu_itimer[i].expires_us != 0;
	}
	return armed;
}

/*
 * RLIMIT_CPU, as check_process_timers() applies it: past the soft limit
 * SIGXCPU, and the soft limit moves up a second (so one a second) while it
 * is below the hard one; at the hard limit SIGKILL. True while one is set.
 */
static bool cpu_rlimit(struct process *p)
{
	struct rlimit *rl = &p->rlim[RLIMIT_CPU];
	struct sig_info info = { SI_KERNEL, 0, 0, 0 };

	if (rl->rlim_cur == RLIM_INFINITY)
		return false;
	uint64_t now = itimer_cpu_us(p, true);
	if (rl->rlim_max != RLIM_INFINITY && now >= (uint64_t)rl->rlim_max * 1000000ULL) {
		signal_queue_process(p, SIGKILL, &info);
		return false;
	}
	if (now >= (uint64_t)rl->rlim_cur * 1000000ULL) {
		signal_queue_process(p, SIGXCPU, &info);
		if (rl->rlim_cur < rl->rlim_max)
			rl->rlim_cur++;
	}
	return true;
}

uint64_t timer_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void *timer_thread(void *arg __unused)
{
	/*
	 * Made by whichever task thread armed the first timer, it would keep
	 * that thread's CPU mask: one CPU, when the hand-off policy had pinned
	 * it there (seccomp_place, place_pair_run). It gets every CPU back.
	 */
	place_unpin(0);
	sentry_lock();
	for (;;) {
		uint64_t now = timer_now_ns(), next = 0;
		for (struct task *t = task_next(NULL); t; t = task_next(t)) {
			if (!t->proc || t->proc->leader != t || t->state == TASK_ZOMBIE)
				continue;	/* timers are per process: look at leaders only */
			if (t->proc->itimer_deadline && t->proc->itimer_deadline <= now) {
				struct sig_info info = { SI_KERNEL, 0, 0, 0 };	/* it_real_fn: SEND_SIG_PRIV */
				t->proc->itimer_deadline = t->proc->itimer_interval ? now + t->proc->itimer_interval : 0;
				signal_queue_process(t->proc, SIGALRM, &info);
			}
			if (t->proc->itimer_deadline && (!next || t->proc->itimer_deadline < next))
				next = t->proc->itimer_deadline;
			if ((cpu_itimers(t->proc) | cpu_rlimit(t->proc)) && (!next || now + CPU_TICK_NS < next))
				next = now + CPU_TICK_NS;
			for (int i = 0; t->proc->ptimers && i < PVX_MAX_PTIMERS; i++) {
				struct ptimer *pt = &t->proc->ptimers[i];
				if (!pt->used || !pt->deadline)
					continue;
				/* A CPU-time timer is looked at every CPU_TICK_NS, as the CPU itimers. */
				uint64_t tnow = pt->cpu ? ptimer_now(t->proc, pt) : now;
				if (tnow && pt->deadline <= tnow)
					ptimer_fire(t->proc, i, tnow);
				uint64_t due = pt->cpu ? now + CPU_TICK_NS : pt->deadline;
				if (pt->deadline && (!next || due < next))
					next = due;
			}
		}
		if (!next) {
			pthread_cond_wait(&timer_changed, sentry_mutex());
			continue;
		}
		struct timespec ts = { (time_t)(next / 1000000000ULL), (long)(next % 1000000000ULL) };
		pthread_cond_timedwait(&timer_changed, sentry_mutex(), &ts);
	}
	return NULL;
}

/* Called with the sentry lock held after a task's deadline changed. */
long timer_kick(void)
{
	if (!started) {
		pthread_condattr_t attr;
		pthread_t th;
		pthread_condattr_init(&attr);
		pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
		pthread_cond_init(&timer_changed, &attr);
		pthread_condattr_destroy(&attr);
		if (pthread_create(&th, NULL, timer_thread, NULL))
			return -EAGAIN;
		pthread_detach(th);
		started = true;
	}
	pthread_cond_signal(&timer_changed);
	return 0;
}

/* p's POSIX timer id, NULL if there is none (EINVAL for the guest). */
struct ptimer *ptimer_get(struct process *p, long id)
{
	struct ptimer *pt = p->ptimers;

	if (!pt || id < 0 || id >= PVX_MAX_PTIMERS || !pt[id].used)
		return NULL;
	return &pt[id];
}

/* See pvx/timer.h: the overrun logic of posix_timer_fn and posix_timer_queue_signal. */
void ptimer_fire(struct process *p, int id, uint64_t now)
{
	struct ptimer *pt = &p->ptimers[id];
	uint64_t missed = pt->interval ? (now - pt->deadline) / pt->interval : 0;

	pt->deadline = pt->interval ? pt->deadline + (missed + 1) * pt->interval : 0;
	if (pt->notify == SIGEV_NONE_) {
		pt->overrun = missed > INT32_MAX ? INT32_MAX : (int)missed;
		return;
	}
	struct task *to = (pt->notify & SIGEV_THREAD_ID_) ? task_find(pt->tid) : NULL;
	if (to && (to->proc != p || to->state == TASK_ZOMBIE))
		to = NULL;
	/* Still pending from an earlier expiry: count an overrun instead (posix_timer_queue_signal). */
	struct sig_info *queued = sigq_find_timer(to ? &to->pending : &p->pending, pt->signo, id);
	if (queued) {
		uint64_t n = (uint64_t)queued->status + 1 + missed;
		queued->status = n > INT32_MAX ? INT32_MAX : (int)n;
		return;
	}
	struct sig_info info = { SI_TIMER, id, missed > INT32_MAX ? INT32_MAX : (int)missed, pt->value };
	if (to)
		(void)signal_queue(to, pt->signo, &info);	/* a timer's record does not count: never EAGAIN */
	else
		(void)signal_queue_process(p, pt->signo, &info);
}

/* Its signal was taken: timer_getoverrun reports that signal's count (it_overrun_last). */
void ptimer_delivered(struct process *p, const struct sig_info *info)
{
	if (!info->raw && info->code == SI_TIMER && p->ptimers && info->pid >= 0 && info->pid < PVX_MAX_PTIMERS &&
	    p->ptimers[info->pid].used)
		p->ptimers[info->pid].overrun = info->status;
}

/* See pvx/timer.h. */
void ptimers_release(struct process *p)
{
	free(p->ptimers);
	p->ptimers = NULL;
}

/* The lowest unused timer id of p (its table made on first use); -ENOMEM or -EAGAIN (all used). */
long ptimer_free_id(struct process *p)
{
	if (!p->ptimers && !(p->ptimers = calloc(PVX_MAX_PTIMERS, sizeof(struct ptimer))))
		return -ENOMEM;
	int id = 0;
	while (id < PVX_MAX_PTIMERS && p->ptimers[id].used)
		id++;
	return id == PVX_MAX_PTIMERS ? -EAGAIN : id;
}

// SPDX-License-Identifier: GPL-2.0
/* alarm(2), setitimer(2), getitimer(2) (all three) and POSIX timers; kept and fired by sentry/kernel/timer.c. */
#include <sys/time.h>
#include <time.h>

#include "pvx/kernel.h"
#include "pvx/log.h"
#include "pvx/timer.h"
#include "syscalls/syscalls.h"

#define NS 1000000000ULL

static struct timeval to_tv(uint64_t ns)
{
	return (struct timeval){ (time_t)(ns / NS), (suseconds_t)(ns % NS / 1000) };
}

/* The current ITIMER_REAL as getitimer(2) reports it. */
static struct itimerval current(const struct task *t)
{
	uint64_t now = timer_now_ns();
	uint64_t left = t->proc->itimer_deadline > now ? t->proc->itimer_deadline - now : (t->proc->itimer_deadline ? 1000 : 0);

	return (struct itimerval){ to_tv(t->proc->itimer_interval), to_tv(left) };
}

/* ITIMER_VIRTUAL (which 0) or ITIMER_PROF (1) as getitimer(2) reports it. */
static struct itimerval cpu_current(const struct task *t, int which)
{
	uint64_t exp = t->proc->cpu_itimer[which].expires_us, now = exp ? itimer_cpu_us(t->proc, which) : 0;
	uint64_t left = !exp ? 0 : exp > now ? exp - now : 1;

	return (struct itimerval){ to_tv(t->proc->cpu_itimer[which].interval_us * 1000), to_tv(left * 1000) };
}

long sys_getitimer(struct task *t, const long a[6])
{
	struct itimerval v;

	if (a[0] == ITIMER_REAL)
		v = current(t);
	else if (a[0] == ITIMER_VIRTUAL || a[0] == ITIMER_PROF)
		v = cpu_current(t, a[0] == ITIMER_PROF);
	else
		return -EINVAL;
	return copy_to_guest(t->mm, (uint64_t)a[1], &v, sizeof(v));
}

/* setitimer(2): "A process has only one of each of the three types of timers." */
long sys_setitimer(struct task *t, const long a[6])
{
	struct itimerval nv = { 0 }, old;
	long r;

	if (a[0] != ITIMER_REAL && a[0] != ITIMER_VIRTUAL && a[0] != ITIMER_PROF)
		return -EINVAL;
	old = a[0] == ITIMER_REAL ? current(t) : cpu_current(t, a[0] == ITIMER_PROF);
	if (a[1] && (r = copy_from_guest(t->mm, &nv, (uint64_t)a[1], sizeof(nv))))
		return r;
	if (nv.it_value.tv_usec < 0 || nv.it_value.tv_usec >= 1000000 || nv.it_interval.tv_usec < 0 ||
	    nv.it_interval.tv_usec >= 1000000 || nv.it_value.tv_sec < 0 || nv.it_interval.tv_sec < 0)
		return -EINVAL;
	if (a[2] && (r = copy_to_guest(t->mm, (uint64_t)a[2], &old, sizeof(old))))
		return r;
	uint64_t value = (uint64_t)nv.it_value.tv_sec * NS + (uint64_t)nv.it_value.tv_usec * 1000;
	uint64_t interval = (uint64_t)nv.it_interval.tv_sec * NS + (uint64_t)nv.it_interval.tv_usec * 1000;
	if (a[0] != ITIMER_REAL) {
		int w = a[0] == ITIMER_PROF;
		t->proc->cpu_itimer[w].interval_us = interval / 1000;
		t->proc->cpu_itimer[w].expires_us = value ? itimer_cpu_us(t->proc, w) + MAX(value / 1000, 1) : 0;
		return timer_kick();
	}
	t->proc->itimer_interval = interval;
	t->proc->itimer_deadline = value ? timer_now_ns() + value : 0;
	return timer_kick();
}

/* alarm(2): "returns the number of seconds remaining until any previously scheduled alarm". */
long sys_alarm(struct task *t, const long a[6])
{
	struct itimerval old = current(t);
	unsigned left = (unsigned)old.it_value.tv_sec + (old.it_value.tv_usec >= 500000 || (!old.it_value.tv_sec && old.it_value.tv_usec));

	t->proc->itimer_interval = 0;
	t->proc->itimer_deadline = (unsigned)a[0] ? timer_now_ns() + (unsigned)a[0] * NS : 0;
	long r = timer_kick();
	return r < 0 ? r : (long)left;
}

/*
 * POSIX timers (timer_create(2) and friends) on CLOCK_REALTIME, _MONOTONIC
 * and _BOOTTIME, kept per process and fired by sentry/kernel/timer.c. Deadlines
 * are CLOCK_MONOTONIC instants: an absolute CLOCK_REALTIME time is taken
 * relative to now when it is set, so a later jump of the host's clock does
 * not move it. On CPU-time clocks (the caller's process or thread) deadlines
 * are that clock's ns, looked at every 10 ms (sentry/kernel/timer.c).
 */
struct k_sigevent {
	uint64_t value;
	int32_t signo, notify;
	int32_t tid;
	int32_t pad[11];
};
_Static_assert(sizeof(struct k_sigevent) == 64, "sigevent ABI");

static uint64_t ts_ns(const struct timespec *ts)
{
	return (uint64_t)ts->tv_sec * NS + (uint64_t)ts->tv_nsec;
}

static struct timespec ns_ts(uint64_t ns)
{
	return (struct timespec){ (time_t)(ns / NS), (long)(ns % NS) };
}

long sys_timer_create(struct task *t, const long a[6])
{
	struct k_sigevent ev = { .signo = SIGALRM, .notify = SIGEV_SIGNAL_ };
	long r;

	int cpu_tid = 0;
	bool cpu = false, virt = false;
	struct cpuclock cc;
	switch (a[0]) {
	case CLOCK_REALTIME: case CLOCK_MONOTONIC: case CLOCK_BOOTTIME:
		break;
	default:
		/* another process's CPU clock: not kept (README) */
		if ((r = cpuclock_parse(t, a[0], false, &cc)))
			return r == 1 ? -EINVAL : r;
		cpu = true;
		virt = cc.which == 1;
		cpu_tid = cc.thread ? cc.thread->tid : 0;
	}
	if (a[1] && (r = copy_from_guest(t->mm, &ev, (uint64_t)a[1], sizeof(ev))))
		return r;
	switch (ev.notify) {
	case SIGEV_NONE_:
		break;
	case SIGEV_SIGNAL_ | SIGEV_THREAD_ID_: {
		struct task *to = task_find(ev.tid);
		if (!to || to->proc != t->proc)
			return -EINVAL;
	}
		/* fall through */
	case SIGEV_SIGNAL_:
		if (ev.signo < 1 || ev.signo > 64)
			return -EINVAL;
		break;
	default:
		return -EINVAL;	/* SIGEV_THREAD is the C library's, made of SIGEV_THREAD_ID */
	}
	long id = ptimer_free_id(t->proc);
	if (id < 0)
		return id;
	int32_t uid = (int32_t)id;
	if ((r = copy_to_guest(t->mm, (uint64_t)a[2], &uid, sizeof(uid))))
		return r;
	t->proc->ptimers[id] = (struct ptimer){
		.used = true, .clock = (int)a[0], .notify = ev.notify, .signo = ev.signo, .tid = ev.tid,
		.cpu = cpu, .cpu_virt = virt, .cpu_tid = cpu_tid,
		.value = a[1] ? ev.value : (uint64_t)id,	/* no sigevent: si_value is the timer id */
	};
	return 0;
}

/* What is left until the timer fires, and its interval (timer_gettime). */
static struct itimerspec ptimer_current(struct process *p, const struct ptimer *pt)
{
	uint64_t now = ptimer_now(p, pt);
	uint64_t left = !pt->deadline ? 0 : pt->deadline > now ? pt->deadline - now : 1;

	return (struct itimerspec){ ns_ts(pt->interval), ns_ts(left) };
}

long sys_timer_settime(struct task *t, const long a[6])
{
	struct ptimer *pt = ptimer_get(t->proc, a[0]);
	struct itimerspec nv, old;
	long r;

	if (!pt)
		return -EINVAL;
	if ((r = copy_from_guest(t->mm, &nv, (uint64_t)a[2], sizeof(nv))))
		return r;
	if (nv.it_value.tv_sec < 0 || nv.it_value.tv_nsec < 0 || nv.it_value.tv_nsec >= (long)NS ||
	    nv.it_interval.tv_sec < 0 || nv.it_interval.tv_nsec < 0 || nv.it_interval.tv_nsec >= (long)NS)
		return -EINVAL;
	old = ptimer_current(t->proc, pt);
	if (a[3] && (r = copy_to_guest(t->mm, (uint64_t)a[3], &old, sizeof(old))))
		return r;
	uint64_t value = ts_ns(&nv.it_value), now = ptimer_now(t->proc, pt), deadline = value ? now + value : 0;
	if (value && ((int)a[1] & TIMER_ABSTIME) && pt->cpu) {
		deadline = value;	/* CPU time is the deadline's own clock: past, it fires at the next look */
	} else if (value && ((int)a[1] & TIMER_ABSTIME)) {
		/*
		 * Already past: it fires at once, and with an interval the
		 * periods missed since value count as overruns (hrtimer_forward),
		 * so the deadline stays in the past by as much.
		 */
		struct timespec cnow;
		clock_gettime(pt->clock, &cnow);
		uint64_t c = ts_ns(&cnow);
		deadline = value > c ? now + (value - c) : c - value < now ? now - (c - value) : 1;
	}
	pt->interval = value ? ts_ns(&nv.it_interval) : 0;
	pt->deadline = deadline;
	pt->overrun = 0;
	return timer_kick();
}

long sys_timer_gettime(struct task *t, const long a[6])
{
	struct ptimer *pt = ptimer_get(t->proc, a[0]);

	if (!pt)
		return -EINVAL;
	struct itimerspec cur = ptimer_current(t->proc, pt);
	return copy_to_guest(t->mm, (uint64_t)a[1], &cur, sizeof(cur));
}

long sys_timer_getoverrun(struct task *t, const long a[6])
{
	struct ptimer *pt = ptimer_get(t->proc, a[0]);

	return pt ? pt->overrun : -EINVAL;
}

long sys_timer_delete(struct task *t, const long a[6])
{
	struct ptimer *pt = ptimer_get(t->proc, a[0]);

	if (!pt)
		return -EINVAL;
	*pt = (struct ptimer){ 0 };
	return 0;
}

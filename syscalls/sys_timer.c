// SPDX-License-Identifier: GPL-2.0
/* alarm(2), setitimer(2), getitimer(2): ITIMER_REAL, delivered by sentry/timer.c. */
#include <sys/time.h>

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

long sys_getitimer(struct task *t, const long a[6])
{
	struct itimerval v = current(t);

	if (a[0] != ITIMER_REAL) {
		pr_warn("getitimer(%ld): only ITIMER_REAL is supported", a[0]);
		return a[0] == ITIMER_VIRTUAL || a[0] == ITIMER_PROF ? -ENOSYS : -EINVAL;
	}
	return copy_to_guest(t->mm, (uint64_t)a[1], &v, sizeof(v));
}

/* setitimer(2): "A process has only one of each of the three types of timers." */
long sys_setitimer(struct task *t, const long a[6])
{
	struct itimerval nv = { 0 }, old = current(t);
	long r;

	if (a[0] != ITIMER_REAL) {
		pr_warn("setitimer(%ld): only ITIMER_REAL is supported", a[0]);
		return a[0] == ITIMER_VIRTUAL || a[0] == ITIMER_PROF ? -ENOSYS : -EINVAL;
	}
	if (a[1] && (r = copy_from_guest(t->mm, &nv, (uint64_t)a[1], sizeof(nv))))
		return r;
	if (nv.it_value.tv_usec < 0 || nv.it_value.tv_usec >= 1000000 || nv.it_interval.tv_usec < 0 ||
	    nv.it_interval.tv_usec >= 1000000 || nv.it_value.tv_sec < 0 || nv.it_interval.tv_sec < 0)
		return -EINVAL;
	if (a[2] && (r = copy_to_guest(t->mm, (uint64_t)a[2], &old, sizeof(old))))
		return r;
	uint64_t value = (uint64_t)nv.it_value.tv_sec * NS + (uint64_t)nv.it_value.tv_usec * 1000;
	t->proc->itimer_interval = (uint64_t)nv.it_interval.tv_sec * NS + (uint64_t)nv.it_interval.tv_usec * 1000;
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

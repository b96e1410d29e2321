// SPDX-License-Identifier: GPL-2.0
/* Time and randomness: read from the host's clocks and getrandom. */
#include <sys/random.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>

#include "pvx/kernel.h"
#include "sentry/platform/platform.h"
#include "syscalls/syscalls.h"

/*
 * Which host clock answers for a guest clock id. The CPU-time clocks are
 * the stub's (where guest code runs), not the sentry's; fd-based dynamic
 * clocks (negative ids) are refused.
 */
static long host_clock(struct task *t, long clk, clockid_t *out)
{
	switch (clk) {
	case CLOCK_REALTIME: case CLOCK_MONOTONIC: case CLOCK_MONOTONIC_RAW:
	case CLOCK_REALTIME_COARSE: case CLOCK_MONOTONIC_COARSE: case CLOCK_BOOTTIME:
	case CLOCK_TAI: case CLOCK_REALTIME_ALARM: case CLOCK_BOOTTIME_ALARM:
		*out = (clockid_t)clk;
		return 0;
	case CLOCK_PROCESS_CPUTIME_ID:
	case CLOCK_THREAD_CPUTIME_ID:
		/* MAKE_PROCESS_CPUCLOCK(pid, CPUCLOCK_SCHED) */
		*out = (clockid_t)((~(unsigned)t->proc->as->pid << 3) | 2);
		return 0;
	}
	return -EINVAL;
}

long sys_clock_gettime(struct task *t, const long a[6])
{
	struct timespec ts;
	clockid_t c;
	long r = host_clock(t, a[0], &c);

	if (r)
		return r;
	if (clock_gettime(c, &ts) < 0)
		return neg_errno();
	return copy_to_guest(t->mm, (uint64_t)a[1], &ts, sizeof(ts));
}

long sys_clock_getres(struct task *t, const long a[6])
{
	struct timespec ts;
	clockid_t c;
	long r = host_clock(t, a[0], &c);

	if (r)
		return r;
	if (clock_getres(c, &ts) < 0)
		return neg_errno();
	return a[1] ? copy_to_guest(t->mm, (uint64_t)a[1], &ts, sizeof(ts)) : 0;
}

long sys_gettimeofday(struct task *t, const long a[6])
{
	struct timeval tv;
	struct timezone tz = { 0, 0 };
	long r = 0;

	gettimeofday(&tv, NULL);
	if (a[0])
		r = copy_to_guest(t->mm, (uint64_t)a[0], &tv, sizeof(tv));
	if (!r && a[1])
		r = copy_to_guest(t->mm, (uint64_t)a[1], &tz, sizeof(tz));
	return r;
}

long sys_time(struct task *t, const long a[6])
{
	time_t now = time(NULL);

	if (a[0]) {
		long r = copy_to_guest(t->mm, (uint64_t)a[0], &now, sizeof(now));
		if (r)
			return r;
	}
	return (long)now;
}

static long get_timespec(struct task *t, uint64_t u, struct timespec *ts)
{
	long r = copy_from_guest(t->mm, ts, u, sizeof(*ts));

	if (r)
		return r;
	return ts->tv_sec < 0 || ts->tv_nsec < 0 || ts->tv_nsec >= 1000000000L ? -EINVAL : 0;
}

/* clock_nanosleep(2): only this task's thread sleeps, without the sentry lock. */
long sys_clock_nanosleep(struct task *t, const long a[6])
{
	struct timespec req, rem = { 0, 0 };
	clockid_t c;
	long r = host_clock(t, a[0], &c);

	if (r)
		return r;
	if (a[0] == CLOCK_REALTIME_ALARM || a[0] == CLOCK_BOOTTIME_ALARM)
		return -EPERM;	/* alarm_clock_nsleep(): "if (!capable(CAP_WAKE_ALARM))" */
	if (a[0] == CLOCK_THREAD_CPUTIME_ID)
		return -EOPNOTSUPP;	/* clock_thread has no nsleep: "if (!kc->nsleep) return -EOPNOTSUPP" */
	if ((r = get_timespec(t, (uint64_t)a[2], &req)))
		return r;
	bool relative = !((int)a[1] & TIMER_ABSTIME);
	struct timespec until = req;
	/* As an absolute deadline, so that task_block's restarts do not stretch it. */
	if (relative) {
		if (clock_gettime(c, &until) < 0)
			return neg_errno();
		until.tv_sec += req.tv_sec;
		if ((until.tv_nsec += req.tv_nsec) >= 1000000000L)
			until.tv_sec++, until.tv_nsec -= 1000000000L;
	}
	const long b[6] = { c, TIMER_ABSTIME, (long)&until };
	r = task_block(t, NULL, SYS_clock_nanosleep, b, false);
	if (r == -EINTR && relative && a[3]) {
		struct timespec now;
		clock_gettime(c, &now);
		long long ns = (until.tv_sec - now.tv_sec) * 1000000000LL + (until.tv_nsec - now.tv_nsec);
		if (ns > 0)
			rem = (struct timespec){ (time_t)(ns / 1000000000LL), (long)(ns % 1000000000LL) };
		if (copy_to_guest(t->mm, (uint64_t)a[3], &rem, sizeof(rem)))
			return -EFAULT;
	}
	return r;
}

long sys_nanosleep(struct task *t, const long a[6])
{
	const long b[6] = { CLOCK_MONOTONIC, 0, a[0], a[1] };

	return sys_clock_nanosleep(t, b);
}

long sys_getrandom(struct task *t, const long a[6])
{
	size_t len = MIN((size_t)a[1], 1UL << 20);

	if (a[2] & ~(GRND_NONBLOCK | GRND_RANDOM | 0x4 /* GRND_INSECURE */))
		return -EINVAL;
	cleanup_free char *buf = malloc(len + 1);
	if (!buf)
		return -ENOMEM;
	ssize_t n = getrandom(buf, len, (unsigned)a[2]);
	if (n < 0)
		return neg_errno();
	long r = copy_to_guest(t->mm, (uint64_t)a[0], buf, (size_t)n);
	return r ? r : n;
}

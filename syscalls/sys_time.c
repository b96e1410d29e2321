// SPDX-License-Identifier: GPL-2.0
/* Time and randomness: read from the host's clocks and getrandom. */
#include <sys/random.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>

#include "pvx/kernel.h"
#include "pvx/rusage.h"
#include "pvx/timer.h"
#include "sentry/platform/platform.h"
#include "syscalls/syscalls.h"

/*
 * Which host clock answers for a guest clock id: 0 and *out, or 1 and *cc
 * for a CPU-time clock (of the threads that run the guest's code: see
 * usage_cpu_ns), or -EINVAL (fd-based dynamic clocks too: pvx has none).
 */
static long host_clock(struct task *t, long clk, clockid_t *out, struct cpuclock *cc)
{
	switch ((clockid_t)clk) {
	case CLOCK_REALTIME: case CLOCK_MONOTONIC: case CLOCK_MONOTONIC_RAW:
	case CLOCK_REALTIME_COARSE: case CLOCK_MONOTONIC_COARSE: case CLOCK_BOOTTIME:
	case CLOCK_TAI: case CLOCK_REALTIME_ALARM: case CLOCK_BOOTTIME_ALARM:
		*out = (clockid_t)clk;
		return 0;
	}
	long r = cpuclock_parse(t, clk, true, cc);
	return r == 0 ? 1 : -EINVAL;	/* an fd clock: get_clock_desc() finds no such fd */
}

long sys_clock_gettime(struct task *t, const long a[6])
{
	struct timespec ts;
	struct cpuclock cc;
	clockid_t c;
	long r = host_clock(t, a[0], &c, &cc);

	if (r < 0)
		return r;
	if (r == 1) {
		uint64_t ns = usage_cpu_ns(cc.proc, cc.thread, cc.which);
		ts = (struct timespec){ (time_t)(ns / 1000000000ULL), (long)(ns % 1000000000ULL) };
	} else if (clock_gettime(c, &ts) < 0) {
		return neg_errno();
	}
	return copy_to_guest(t->mm, (uint64_t)a[1], &ts, sizeof(ts));
}

long sys_clock_getres(struct task *t, const long a[6])
{
	struct timespec ts;
	struct cpuclock cc;
	clockid_t c;
	long r = host_clock(t, a[0], &c, &cc);

	if (r < 0)
		return r;
	/* posix_cpu_clock_getres(): 1 ns for CPUCLOCK_SCHED, a tick for the others, as the host's own clocks */
	if (r == 1)
		c = (clockid_t)((~0u << 3) | (unsigned)cc.which);
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

/* *ts plus sec s and nsec ns (nsec < 1 s). */
static void ts_add(struct timespec *ts, time_t sec, long nsec)
{
	ts->tv_sec += sec;
	if ((ts->tv_nsec += nsec) >= 1000000000L)
		ts->tv_sec++, ts->tv_nsec -= 1000000000L;
}

/*
 * clock_nanosleep(2) on a CPU-time clock (posix_cpu_nsleep): until that
 * clock reaches the deadline, looked at every CPU_NSLEEP_NS of wall time at
 * most (a CPU clock cannot run faster than the wall clock times the CPUs, so
 * sleeping the time left, or less, never oversleeps by more than that).
 */
#define CPU_NSLEEP_NS 10000000LL
static long cpu_nanosleep(struct task *t, const long a[6], const struct cpuclock *cc)
{
	struct timespec req, rem = { 0, 0 };
	long r;

	if ((clockid_t)a[0] == CLOCK_THREAD_CPUTIME_ID)
		return -EOPNOTSUPP;	/* clock_thread has no nsleep */
	if (cc->thread)
		return -EINVAL;	/* posix_cpu_nsleep() refuses the caller's thread; pvx, every thread clock */
	if ((r = get_timespec(t, (uint64_t)a[2], &req)))
		return r;
	uint64_t now = usage_cpu_ns(cc->proc, NULL, cc->which);
	uint64_t until = (uint64_t)req.tv_sec * 1000000000ULL + (uint64_t)req.tv_nsec;
	bool relative = !((int)a[1] & TIMER_ABSTIME);
	if (relative)
		until += now;
	while (now < until) {
		struct timespec wake;
		long long step = MIN((long long)(until - now), CPU_NSLEEP_NS);
		clock_gettime(CLOCK_MONOTONIC, &wake);
		ts_add(&wake, 0, (long)step);	/* step < 1 s */
		const long b[6] = { CLOCK_MONOTONIC, TIMER_ABSTIME, (long)&wake };
		r = task_block(t, NULL, SYS_clock_nanosleep, b, false);
		if (r)
			break;
		struct cpuclock again;	/* the lock was dropped: the process may be gone */
		if (cpuclock_parse(t, a[0], true, &again))
			return -EINVAL;
		now = usage_cpu_ns(again.proc, NULL, again.which);
	}
	if (r == -EINTR && relative && a[3]) {
		if (now < until)
			rem = (struct timespec){ (time_t)((until - now) / 1000000000ULL), (long)((until - now) % 1000000000ULL) };
		if (copy_to_guest(t->mm, (uint64_t)a[3], &rem, sizeof(rem)))
			return -EFAULT;
	}
	return r;
}

static long nanosleep_until(struct task *t, clockid_t c, const struct timespec *until, uint64_t rmtp);

/* restart_syscall(2) of a relative sleep: on to the same deadline (hrtimer_nanosleep_restart). */
static long nanosleep_restart(struct task *t)
{
	struct timespec until = t->restart.until;

	return nanosleep_until(t, t->restart.clock, &until, t->restart.rmtp);
}

/*
 * A relative sleep until *until (absolute on clock c), as do_nanosleep:
 * cut short by a signal it writes the time left to rmtp (when given and
 * some is left) and returns -ERESTART_RESTARTBLOCK with the restart block
 * set, so that a stop, an ignored signal or a tracer that drops the
 * signal lets it sleep on through restart_syscall, and a handler makes it
 * EINTR (signal_deliver).
 */
static long nanosleep_until(struct task *t, clockid_t c, const struct timespec *until, uint64_t rmtp)
{
	const long b[6] = { c, TIMER_ABSTIME, (long)until };
	long r = task_block(t, NULL, SYS_clock_nanosleep, b, false);

	if (r != -EINTR)
		return r;
	if (rmtp) {
		struct timespec now;
		clock_gettime(c, &now);
		long long ns = (until->tv_sec - now.tv_sec) * 1000000000LL + (until->tv_nsec - now.tv_nsec);
		if (ns <= 0)
			return 0;
		struct timespec rem = { (time_t)(ns / 1000000000LL), (long)(ns % 1000000000LL) };
		if (copy_to_guest(t->mm, rmtp, &rem, sizeof(rem)))
			return -EFAULT;
	}
	t->restart.fn = nanosleep_restart;
	t->restart.clock = c;
	t->restart.until = *until;
	t->restart.rmtp = rmtp;
	return -ERESTART_RESTARTBLOCK;
}

/* restart_syscall(2): what the restart block says, or EINTR without one (do_no_restart_syscall). */
long sys_restart_syscall(struct task *t, const long a[6])
{
	(void)a;
	return t->restart.fn ? t->restart.fn(t) : -EINTR;
}

/* clock_nanosleep(2): only this task's thread sleeps, without the sentry lock. */
long sys_clock_nanosleep(struct task *t, const long a[6])
{
	struct timespec req;
	struct cpuclock cc;
	clockid_t c;
	long r = host_clock(t, a[0], &c, &cc);

	if (r < 0)
		return r;
	if (r == 1)
		return cpu_nanosleep(t, a, &cc);
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
		ts_add(&until, req.tv_sec, req.tv_nsec);
	}
	t->restart.fn = NULL;	/* do_no_restart_syscall, until this sleep sets its own */
	if (relative)
		return nanosleep_until(t, c, &until, (uint64_t)a[3]);
	/* An absolute sleep restarts as it was, with no restart block and no time left written (hrtimer_nanosleep). */
	const long b[6] = { c, TIMER_ABSTIME, (long)&until };
	r = task_block(t, NULL, SYS_clock_nanosleep, b, false);
	return r == -EINTR ? -ERESTARTNOHAND : r;
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

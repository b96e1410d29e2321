/* timeg: clocks and sleeps (values are checked, not printed, so output is deterministic); restart_syscall
 * with no restart block, and a sleep a handler cuts short whose time left cannot be written. */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "guest.h"

static long long ns(struct timespec t) { return t.tv_sec * 1000000000LL + t.tv_nsec; }
static void on_usr1(int sig) { (void)sig; }

int main(void)
{
	struct timespec a, b, rt, res, rem = { 0, 0 };
	struct timeval tv;

	/* raw syscalls: libc would use the vDSO natively */
	long r = syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &a);
	printf("clock_gettime MONOTONIC = %ld\n", r);
	r = syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &b);
	printf("monotonic non-decreasing: %s\n", yesno(ns(b) >= ns(a)));
	printf("tv_nsec in range: %s\n", yesno(a.tv_nsec >= 0 && a.tv_nsec < 1000000000));

	struct timespec req = { 0, 10 * 1000 * 1000 };
	syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &a);
	r = syscall(SYS_nanosleep, &req, &rem);
	syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &b);
	printf("nanosleep 10ms = %ld, slept >= 10ms: %s, < 2s: %s\n", r, yesno(ns(b) - ns(a) >= 10000000LL),
	       yesno(ns(b) - ns(a) < 2000000000LL));
	struct timespec bad = { 0, 1000000000 };
	errno = 0;
	r = syscall(SYS_nanosleep, &bad, NULL);
	printf("nanosleep tv_nsec=1e9 = %ld %s\n", r, errno == EINVAL ? "EINVAL" : "");
	r = syscall(SYS_clock_nanosleep, CLOCK_MONOTONIC, 0, &req, NULL);
	printf("clock_nanosleep relative = %ld\n", r);
	syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &a);
	struct timespec abs = { a.tv_sec, a.tv_nsec + 20 * 1000 * 1000 };
	if (abs.tv_nsec >= 1000000000) {
		abs.tv_sec++;
		abs.tv_nsec -= 1000000000;
	}
	r = syscall(SYS_clock_nanosleep, CLOCK_MONOTONIC, TIMER_ABSTIME, &abs, NULL);
	syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &b);
	printf("clock_nanosleep TIMER_ABSTIME = %ld, woke after deadline: %s\n", r, yesno(ns(b) >= ns(abs)));
	/* clock_nanosleep returns the error number, it does not set errno */
	r = syscall(SYS_clock_nanosleep, 12345, 0, &req, NULL);
	printf("clock_nanosleep bad clock = %ld %s\n", r, errno == EINVAL ? "EINVAL" : "");
	r = syscall(SYS_clock_nanosleep, CLOCK_THREAD_CPUTIME_ID, 0, &req, NULL);
	printf("clock_nanosleep THREAD_CPUTIME = %ld %s\n", r, errno == EOPNOTSUPP ? "EOPNOTSUPP" : errno == EINVAL ? "EINVAL" : "");

	/* realtime, gettimeofday and time agree (time() is tick-coarse: it may lag by one second) */
	r = syscall(SYS_clock_gettime, CLOCK_REALTIME, &rt);
	long r2 = syscall(SYS_gettimeofday, &tv, NULL);
	time_t t = (time_t)syscall(SYS_time, NULL);
	time_t t2 = 0;
	syscall(SYS_time, &t2);
	printf("clock_gettime REALTIME = %ld, gettimeofday = %ld\n", r, r2);
	printf("realtime after 2020: %s\n", yesno(rt.tv_sec > 1577836800));
	printf("gettimeofday within 2s of realtime: %s\n", yesno(tv.tv_sec - rt.tv_sec <= 2 && tv.tv_sec >= rt.tv_sec));
	printf("time within 2s of realtime: %s, time(&t) agrees: %s\n", yesno(t - rt.tv_sec <= 2 && t >= rt.tv_sec - 1),
	       yesno(t2 - t <= 2 && t2 >= t));
	printf("tv_usec in range: %s\n", yesno(tv.tv_usec >= 0 && tv.tv_usec < 1000000));
	errno = 0;
	r = syscall(SYS_clock_gettime, 12345, &a);
	printf("clock_gettime bad clock = %ld %s\n", r, errno == EINVAL ? "EINVAL" : "");
	r = syscall(SYS_clock_gettime, CLOCK_PROCESS_CPUTIME_ID, &a);
	printf("clock_gettime PROCESS_CPUTIME = %ld\n", r);
	r = syscall(SYS_clock_gettime, CLOCK_BOOTTIME, &a);
	printf("clock_gettime BOOTTIME = %ld\n", r);
	r = syscall(SYS_clock_gettime, CLOCK_MONOTONIC_COARSE, &a);
	printf("clock_gettime MONOTONIC_COARSE = %ld\n", r);
	r = syscall(SYS_clock_gettime, CLOCK_REALTIME_COARSE, &a);
	printf("clock_gettime REALTIME_COARSE = %ld, within 2s of realtime: %s\n", r,
	       yesno(a.tv_sec >= rt.tv_sec - 1 && a.tv_sec - rt.tv_sec <= 2));
	r = syscall(SYS_clock_gettime, CLOCK_THREAD_CPUTIME_ID, &a);
	printf("clock_gettime THREAD_CPUTIME = %ld\n", r);
	r = syscall(SYS_clock_getres, CLOCK_MONOTONIC, &res);
	printf("clock_getres MONOTONIC = %ld, res <= 1ms: %s\n", r, yesno(res.tv_sec == 0 && res.tv_nsec <= 1000000));
	/* the libc wrappers (vDSO natively, syscall in the sandbox) agree with the raw calls */
	clock_gettime(CLOCK_MONOTONIC, &a);
	syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &b);
	printf("libc monotonic <= raw monotonic: %s\n", yesno(ns(a) <= ns(b)));

	/* hostile restarts: no restart block is EINTR; a bad time-left pointer is EFAULT once a signal cuts in */
	errno = 0;
	r = syscall(SYS_restart_syscall);
	printf("restart_syscall, no block = %ld %s\n", r, errno == EINTR ? "EINTR" : "");
	struct sigaction sa = { .sa_handler = on_usr1 };
	sigaction(SIGUSR1, &sa, NULL);
	pid_t c = signal_when_asleep(SIGUSR1);
	struct timespec long_req = { 20, 0 };
	errno = 0;
	r = syscall(SYS_nanosleep, &long_req, (void *)8);
	printf("nanosleep cut short, rem at a bad address = %ld %s\n", r, errno == EFAULT ? "EFAULT" : "");
	wait_child(c);
	c = signal_when_asleep(SIGUSR1);
	errno = 0;
	r = syscall(SYS_clock_nanosleep, CLOCK_MONOTONIC, 0, &long_req, &rem);
	printf("clock_nanosleep cut short by a handler = %ld, time left written: %s\n", r,
	       yesno(rem.tv_sec > 0 && rem.tv_sec <= 20));
	wait_child(c);
	errno = 0;
	r = syscall(SYS_restart_syscall);
	printf("restart_syscall after the handler = %ld %s\n", r, errno == EINTR ? "EINTR" : "");
	return 0;
}

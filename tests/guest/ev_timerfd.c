/* ev_timerfd: timerfd_create/settime/gettime on the clocks pvx supports.
 * usage: ev_timerfd basic|clocks|abstime|periodic|nonblock|errors|fork
 *   basic     create flags, a disarmed timer's gettime, a one-shot timer read (expirations 1), old value back
 *   clocks    CLOCK_MONOTONIC, CLOCK_REALTIME and CLOCK_BOOTTIME timers fire; ALARM clocks need a capability
 *   abstime   TFD_TIMER_ABSTIME: an absolute time in the past fires at once, one 50 ms ahead fires later
 *   periodic  an interval timer counts expirations (read gives at least 3 after 4 periods), gettime shows
 *             the interval, disarming with a zero value
 *   nonblock  TFD_NONBLOCK and O_NONBLOCK: EAGAIN when nothing expired; a blocking read waits; EINTR
 *   errors    EINVAL for bad clocks, flags, nanoseconds, short reads; EBADF, EFAULT; not a timerfd
 *   fork      a child reads the timer it inherited (the same open file)
 * Prints what happened (no times, only comparisons); the caller compares with the native run. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "evnet.h"

#ifndef TFD_TIMER_CANCEL_ON_SET
#define TFD_TIMER_CANCEL_ON_SET (1 << 1)
#endif

static struct itimerspec ms(long value_ms, long interval_ms)
{
	struct itimerspec t = { .it_value = { value_ms / 1000, (value_ms % 1000) * 1000000L },
				.it_interval = { interval_ms / 1000, (interval_ms % 1000) * 1000000L } };
	return t;
}

static long to_ms(struct timespec t)
{
	return t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* read the expiration count; prints it or the error */
static void show_read(const char *what, int fd)
{
	uint64_t n = 0;
	long r = read(fd, &n, sizeof n);
	if (r == 8)
		say("%s: read 8, expirations %llu\n", what, (unsigned long long)n);
	else
		say("%s: %s\n", what, rs(r));
}

static int mode_basic(void)
{
	int t = timerfd_create(CLOCK_MONOTONIC, 0);
	say("create MONOTONIC: %s, FD_CLOEXEC %s\n", t >= 0 ? "ok" : rs(t), yesno(fcntl(t, F_GETFD) & FD_CLOEXEC));
	int tc = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	say("create CLOEXEC|NONBLOCK: FD_CLOEXEC %s, O_NONBLOCK %s\n", yesno(fcntl(tc, F_GETFD) & FD_CLOEXEC),
	    yesno(fcntl(tc, F_GETFL) & O_NONBLOCK));
	struct itimerspec cur;
	memset(&cur, 0x55, sizeof cur);
	long r = timerfd_gettime(t, &cur);
	say("gettime, disarmed: %s, all zero %s\n", rs(r),
	    yesno(!cur.it_value.tv_sec && !cur.it_value.tv_nsec && !cur.it_interval.tv_sec && !cur.it_interval.tv_nsec));
	struct itimerspec v = ms(50, 0), old;
	memset(&old, 0x55, sizeof old);
	r = timerfd_settime(t, 0, &v, &old);
	timerfd_gettime(t, &cur);	/* at once: a say() between could take 50 ms on a slow machine (TCG) */
	say("settime 50 ms: %s, old value zero %s\n", rs(r), yesno(!old.it_value.tv_sec && !old.it_value.tv_nsec));
	say("gettime: remaining in (0, 50] ms %s, interval 0 %s\n", yesno(to_ms(cur.it_value) <= 50 && (cur.it_value.tv_sec || cur.it_value.tv_nsec)),
	    yesno(!cur.it_interval.tv_sec && !cur.it_interval.tv_nsec));
	show_read("blocking read", t);
	timerfd_gettime(t, &cur);
	say("gettime after it fired: zero %s\n", yesno(!cur.it_value.tv_sec && !cur.it_value.tv_nsec));
	v = ms(10000, 0);
	timerfd_settime(t, 0, &v, NULL);
	v = ms(0, 0);
	timerfd_settime(t, 0, &v, &old);
	say("disarm: old value in (9, 10] s %s\n", yesno(to_ms(old.it_value) > 9000 && to_ms(old.it_value) <= 10000));
	struct pollfd p = { t, POLLIN, 0 };
	say("poll, disarmed, 50 ms: %s\n", rs(poll(&p, 1, 50)));
	v = ms(20, 0);
	timerfd_settime(t, 0, &v, NULL);
	say("poll, armed 20 ms: %s\n", rs(poll(&p, 1, 5000)));
	say("revents IN: %s\n", yesno(p.revents & POLLIN));
	show_read("read", t);
	return 0;
}

static int mode_clocks(void)
{
	static const struct {
		const char *name;
		int id;
	} cl[] = { { "MONOTONIC", CLOCK_MONOTONIC }, { "REALTIME", CLOCK_REALTIME }, { "BOOTTIME", CLOCK_BOOTTIME } };
	for (unsigned i = 0; i < sizeof cl / sizeof cl[0]; i++) {
		int t = timerfd_create(cl[i].id, 0);
		struct itimerspec v = ms(30, 0);
		long r = timerfd_settime(t, 0, &v, NULL);
		say("%s: create %s, settime %s\n", cl[i].name, t >= 0 ? "ok" : rs(t), rs(r));
		show_read(cl[i].name, t);
		close(t);
	}
	say("PROCESS_CPUTIME_ID: %s\n", rs(timerfd_create(CLOCK_PROCESS_CPUTIME_ID, 0)));
	say("THREAD_CPUTIME_ID: %s\n", rs(timerfd_create(CLOCK_THREAD_CPUTIME_ID, 0)));
	say("MONOTONIC_RAW: %s\n", rs(timerfd_create(CLOCK_MONOTONIC_RAW, 0)));
	say("REALTIME_COARSE: %s\n", rs(timerfd_create(CLOCK_REALTIME_COARSE, 0)));
	return 0;
}

static int mode_abstime(void)
{
	int t = timerfd_create(CLOCK_MONOTONIC, 0);
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	struct itimerspec v = { .it_value = { now.tv_sec - 1, now.tv_nsec } };
	say("ABSTIME 1 s in the past: %s\n", rs(timerfd_settime(t, TFD_TIMER_ABSTIME, &v, NULL)));
	uint64_t n;
	struct pollfd p = { t, POLLIN, 0 };
	say("poll (fires within a tick): %s\n", rs(poll(&p, 1, 1000)));
	show_read("read", t);
	clock_gettime(CLOCK_MONOTONIC, &now);
	v.it_value = now;
	v.it_value.tv_nsec += 50000000;
	if (v.it_value.tv_nsec >= 1000000000) {
		v.it_value.tv_sec++;
		v.it_value.tv_nsec -= 1000000000;
	}
	timerfd_settime(t, TFD_TIMER_ABSTIME, &v, NULL);
	say("ABSTIME 50 ms ahead, poll at once: %s\n", rs(poll(&p, 1, 0)));
	struct itimerspec cur;
	timerfd_gettime(t, &cur);
	say("gettime is relative: remaining <= 50 ms %s\n", yesno(cur.it_value.tv_sec == 0 && to_ms(cur.it_value) <= 50));
	show_read("blocking read", t);
	struct timespec after;
	clock_gettime(CLOCK_MONOTONIC, &after);
	say("it fired at or after the time asked: %s\n",
	    yesno(after.tv_sec > v.it_value.tv_sec || (after.tv_sec == v.it_value.tv_sec && after.tv_nsec >= v.it_value.tv_nsec)));
	/* REALTIME absolute, with an interval: counts the periods that passed since the start */
	int r = timerfd_create(CLOCK_REALTIME, TFD_NONBLOCK);
	clock_gettime(CLOCK_REALTIME, &now);
	v.it_value = (struct timespec){ now.tv_sec - 10, now.tv_nsec };
	v.it_interval = (struct timespec){ 1, 0 };
	timerfd_settime(r, TFD_TIMER_ABSTIME, &v, NULL);
	/* the expired timer fires from the host's timer interrupt, which on a
	 * kernel without high-resolution timers (the test VM's) comes a tick
	 * later: wait for it rather than read at once */
	struct pollfd rp = { .fd = r, .events = POLLIN };
	poll(&rp, 1, 1000);
	n = 0;
	long rr = read(r, &n, 8);
	/* 11 by the read an instant after the settime (10 or 11 allowed for the tick), one more for each
	 * second the read came later, as a slow machine (QEMU's software CPU) can make it */
	struct timespec read_at;
	clock_gettime(CLOCK_REALTIME, &read_at);
	long late = read_at.tv_sec - now.tv_sec - (read_at.tv_nsec < now.tv_nsec);
	say("REALTIME ABSTIME 10 s ago, period 1 s: %s, expirations 10 or 11 %s\n", rs(rr),
	    yesno(n >= 10 && n <= 11 + (uint64_t)(late > 0 ? late : 0)));
	say("TFD_TIMER_CANCEL_ON_SET on REALTIME ABSTIME: %s\n",
	    rs(timerfd_settime(r, TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET, &v, NULL)));
	return 0;
}

static int mode_periodic(void)
{
	int t = timerfd_create(CLOCK_MONOTONIC, 0);
	struct itimerspec v = ms(20, 20), cur;
	timerfd_settime(t, 0, &v, NULL);
	timerfd_gettime(t, &cur);
	say("gettime: interval 20 ms %s\n", yesno(to_ms(cur.it_interval) == 20));
	usleep(90000);
	uint64_t n = 0;
	long r = read(t, &n, 8);
	say("after 4.5 periods: %s, at least 3 expirations %s\n", rs(r), yesno(n >= 3));
	r = read(t, &n, 8);
	say("next read: %s, expirations %llu (one period)\n", rs(r), (unsigned long long)(n >= 1 ? 1 : 0));
	v = ms(0, 20);
	timerfd_settime(t, 0, &v, NULL);
	timerfd_gettime(t, &cur);
	say("zero value with an interval disarms: %s\n", yesno(!cur.it_value.tv_sec && !cur.it_value.tv_nsec));
	struct pollfd p = { t, POLLIN, 0 };
	say("poll 100 ms: %s\n", rs(poll(&p, 1, 100)));
	/* settime resets the count of expirations not read yet */
	v = ms(10, 0);
	timerfd_settime(t, 0, &v, NULL);
	usleep(30000);
	v = ms(10000, 0);
	timerfd_settime(t, 0, &v, NULL);
	say("re-armed before reading: poll %s\n", rs(poll(&p, 1, 0)));
	return 0;
}

static volatile sig_atomic_t hits;

static void handler(int sig)
{
	(void)sig;
	hits++;
}

static int mode_nonblock(void)
{
	int t = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK);
	show_read("TFD_NONBLOCK, disarmed", t);
	struct itimerspec v = ms(10000, 0);
	timerfd_settime(t, 0, &v, NULL);
	show_read("TFD_NONBLOCK, armed, not expired", t);
	int b = timerfd_create(CLOCK_MONOTONIC, 0);
	fcntl(b, F_SETFL, O_NONBLOCK);
	show_read("O_NONBLOCK by fcntl", b);
	fcntl(b, F_SETFL, 0);
	struct sigaction sa = { .sa_handler = handler };
	sigaction(SIGUSR1, &sa, NULL);
	pid_t k = signal_when_asleep(SIGUSR1);
	show_read("blocking read of a disarmed timer, SIGUSR1 without SA_RESTART", b);
	say("handler ran %d\n", (int)hits);
	wait_child(k);
	sa.sa_flags = SA_RESTART;
	sigaction(SIGUSR1, &sa, NULL);
	v = ms(300, 0);
	timerfd_settime(b, 0, &v, NULL);
	k = signal_us_later(SIGUSR1, 50000);
	show_read("blocking read, 300 ms timer, SIGUSR1 with SA_RESTART", b);
	wait_child(k);
	say("handler ran %d\n", (int)hits);
	return 0;
}

static int mode_errors(void)
{
	say("create clock 99: %s\n", rs(timerfd_create(99, 0)));
	say("create clock -1: %s\n", rs(timerfd_create(-1, 0)));
	say("create bad flags: %s\n", rs(timerfd_create(CLOCK_MONOTONIC, 0x10)));
	int t = timerfd_create(CLOCK_MONOTONIC, 0);
	struct itimerspec v = ms(10, 0);
	v.it_value.tv_nsec = 1000000000;
	say("settime tv_nsec 1e9: %s\n", rs(timerfd_settime(t, 0, &v, NULL)));
	v = ms(10, 0);
	v.it_interval.tv_nsec = -1;
	say("settime interval tv_nsec -1: %s\n", rs(timerfd_settime(t, 0, &v, NULL)));
	v = ms(10, 0);
	v.it_value.tv_sec = -1;
	say("settime tv_sec -1: %s\n", rs(timerfd_settime(t, 0, &v, NULL)));
	v = ms(10, 0);
	say("settime bad flags: %s\n", rs(timerfd_settime(t, 0x100, &v, NULL)));
	say("settime CANCEL_ON_SET without ABSTIME: %s\n", rs(timerfd_settime(t, TFD_TIMER_CANCEL_ON_SET, &v, NULL)));
	say("settime NULL value: %s\n", rs(syscall(SYS_timerfd_settime, t, 0, NULL, NULL)));
	say("settime bad value pointer: %s\n", rs(syscall(SYS_timerfd_settime, t, 0, 8, NULL)));
	say("settime bad old-value pointer: %s\n", rs(syscall(SYS_timerfd_settime, t, 0, &v, 8)));
	say("gettime bad pointer: %s\n", rs(syscall(SYS_timerfd_gettime, t, 8)));
	say("gettime on fd 999: %s\n", rs(syscall(SYS_timerfd_gettime, 999, &v)));
	say("gettime on a pipe: %s\n", rs(syscall(SYS_timerfd_gettime, 1, &v)));
	int p[2];
	if (pipe(p))
		return 90;
	say("settime on a pipe: %s\n", rs(timerfd_settime(p[0], 0, &v, NULL)));
	uint64_t n;
	say("read 4 bytes: %s\n", rs(read(t, &n, 4)));
	v = ms(1, 0);
	timerfd_settime(t, 0, &v, NULL);
	usleep(20000);
	say("read into a bad buffer: %s\n", rs(syscall(SYS_read, t, 8, 8)));
	say("write: %s\n", rs(write(t, &n, 8)));
	say("lseek: %s\n", rs(lseek(t, 0, SEEK_SET)));
	return 0;
}

static int mode_fork(void)
{
	int t = timerfd_create(CLOCK_MONOTONIC, 0);
	struct itimerspec v = ms(30, 0);
	timerfd_settime(t, 0, &v, NULL);
	pid_t k = fork();
	if (k == 0) {
		show_read("child reads the inherited timer", t);
		_exit(0);
	}
	say("child: exit %d\n", wait_child(k));
	int n = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK);
	(void)n;
	fcntl(t, F_SETFL, O_NONBLOCK);
	show_read("parent: the child consumed it", t);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct mode modes[] = {
		{ "basic", mode_basic },       { "clocks", mode_clocks }, { "abstime", mode_abstime },
		{ "periodic", mode_periodic }, { "nonblock", mode_nonblock }, { "errors", mode_errors },
		{ "fork", mode_fork },
	};
	return run_mode("ev_timerfd", modes, sizeof modes / sizeof modes[0], argc, argv);
}

/* timer_posix: timer_create and friends.
 * usage: timer_posix signal|periodic|overrun|gettime|abstime|thread|exec|errors
 *   signal    one-shot CLOCK_MONOTONIC timer: SI_TIMER siginfo with si_value and the timer id
 *   periodic  a 10 ms interval delivers again and again (counted with sigwaitinfo)
 *   overrun   expirations while the signal is blocked and pending count as overruns
 *   gettime   remaining time and interval; settime's old value; disarming; delete
 *   abstime   TIMER_ABSTIME on CLOCK_REALTIME
 *   thread    SIGEV_THREAD (the C library's helper thread runs the callback)
 *   exec      timers are not kept across execve
 *   errors    EINVAL for bad clocks, notify kinds, signals, ids and times
 * Timing-dependent values are printed as relations. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "guest.h"

/* "ok" for a result >= 0, else errno's name */
static const char *ename(long r)
{
	return r >= 0 ? "ok" : errname(errno);
}

static long ms_since(const struct timespec *t0)
{
	struct timespec t1;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (t1.tv_sec - t0->tv_sec) * 1000 + (t1.tv_nsec - t0->tv_nsec) / 1000000;
}

static timer_t make(clockid_t c, int sig, int value)
{
	struct sigevent ev;
	memset(&ev, 0, sizeof ev);
	ev.sigev_notify = SIGEV_SIGNAL;
	ev.sigev_signo = sig;
	ev.sigev_value.sival_int = value;
	timer_t id;
	if (timer_create(c, &ev, &id)) {
		say("timer_create: %s\n", ename(-1));
		exit(90);
	}
	return id;
}

static void arm(timer_t id, long value_ms, long interval_ms, int flags)
{
	struct itimerspec its = { { interval_ms / 1000, interval_ms % 1000 * 1000000 },
				  { value_ms / 1000, value_ms % 1000 * 1000000 } };
	if (timer_settime(id, flags, &its, NULL))
		say("timer_settime: %s\n", ename(-1));
}

static sigset_t only(int sig)
{
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, sig);
	sigprocmask(SIG_BLOCK, &s, NULL);
	return s;
}

static volatile int cb_runs;
static void callback(union sigval v)
{
	__atomic_add_fetch(&cb_runs, v.sival_int, __ATOMIC_SEQ_CST);
}

int main(int argc, char **argv)
{
	const char *m = argc > 1 ? argv[1] : "";
	alarm(20);
	siginfo_t si;
	struct timespec t0;
	if (!strcmp(m, "signal")) {
		sigset_t s = only(SIGUSR1);
		timer_t id = make(CLOCK_MONOTONIC, SIGUSR1, 42);
		clock_gettime(CLOCK_MONOTONIC, &t0);
		arm(id, 30, 0, 0);
		int sig = sigwaitinfo(&s, &si);
		say("got %d after >= 25 ms: %s, SI_TIMER: %s, si_value 42: %s, si_timerid is the id: %s, overrun %d\n", sig,
		    yesno(ms_since(&t0) >= 25), yesno(si.si_code == SI_TIMER), yesno(si.si_value.sival_int == 42),
		    yesno(si.si_timerid == (int)(intptr_t)id), si.si_overrun);
		struct itimerspec cur;
		timer_gettime(id, &cur);
		say("after a one-shot fired: disarmed %s\n", yesno(!cur.it_value.tv_sec && !cur.it_value.tv_nsec));
		return 0;
	}
	if (!strcmp(m, "periodic")) {
		sigset_t s = only(SIGUSR2);
		timer_t id = make(CLOCK_MONOTONIC, SIGUSR2, 7);
		clock_gettime(CLOCK_MONOTONIC, &t0);
		arm(id, 10, 10, 0);
		int n = 0;
		while (n < 5 && sigwaitinfo(&s, &si) == SIGUSR2)
			n++;
		say("5 expiries of a 10 ms timer took >= 45 ms: %s (n=%d)\n", yesno(ms_since(&t0) >= 45), n);
		timer_delete(id);
		return 0;
	}
	if (!strcmp(m, "overrun")) {
		sigset_t s = only(SIGUSR1);
		timer_t id = make(CLOCK_MONOTONIC, SIGUSR1, 1);
		arm(id, 10, 10, 0);
		struct timespec nap = { 0, 95000000 };
		while (nanosleep(&nap, &nap))
			;
		sigwaitinfo(&s, &si);
		int o = timer_getoverrun(id);
		say("blocked 95 ms with a 10 ms timer: si_overrun >= 3: %s, timer_getoverrun = si_overrun: %s\n",
		    yesno(si.si_overrun >= 3), yesno(o == si.si_overrun));
		return 0;
	}
	if (!strcmp(m, "gettime")) {
		timer_t id = make(CLOCK_MONOTONIC, SIGUSR1, 0);
		struct itimerspec cur, old, its = { { 2, 0 }, { 1, 0 } };
		timer_settime(id, 0, &its, NULL);
		timer_gettime(id, &cur);
		say("armed 1 s / 2 s: left between 0.5 and 1 s: %s, interval 2 s: %s\n",
		    yesno(cur.it_value.tv_sec == 0 ? cur.it_value.tv_nsec > 500000000 : cur.it_value.tv_sec == 1 && !cur.it_value.tv_nsec),
		    yesno(cur.it_interval.tv_sec == 2 && !cur.it_interval.tv_nsec));
		struct itimerspec zero = { { 0, 0 }, { 0, 0 } };
		timer_settime(id, 0, &zero, &old);
		say("disarming returns the old interval 2 s: %s\n", yesno(old.it_interval.tv_sec == 2));
		timer_gettime(id, &cur);
		say("now disarmed: %s\n", yesno(!cur.it_value.tv_sec && !cur.it_value.tv_nsec && !cur.it_interval.tv_sec));
		errno = 0;
		say("timer_delete: %s, again: %s\n", ename(timer_delete(id)), ename(timer_delete(id)));
		timer_t ids[3];
		for (int i = 0; i < 3; i++)
			ids[i] = make(CLOCK_REALTIME, SIGUSR1, i);
		say("ids of three new timers differ: %s\n", yesno(ids[0] != ids[1] && ids[1] != ids[2]));
		return 0;
	}
	if (!strcmp(m, "abstime")) {
		sigset_t s = only(SIGUSR1);
		timer_t id = make(CLOCK_REALTIME, SIGUSR1, 3);
		struct timespec now;
		clock_gettime(CLOCK_REALTIME, &now);
		clock_gettime(CLOCK_MONOTONIC, &t0);
		now.tv_nsec += 40000000;
		if (now.tv_nsec >= 1000000000)
			now.tv_sec++, now.tv_nsec -= 1000000000;
		struct itimerspec its = { { 0, 0 }, now };
		timer_settime(id, TIMER_ABSTIME, &its, NULL);
		sigwaitinfo(&s, &si);
		say("absolute CLOCK_REALTIME deadline 40 ms ahead fired after >= 35 ms: %s, value %d\n",
		    yesno(ms_since(&t0) >= 35), si.si_value.sival_int);
		its.it_value.tv_sec -= 100;
		timer_settime(id, TIMER_ABSTIME, &its, NULL);
		sigwaitinfo(&s, &si);
		say("a deadline in the past fires at once: yes\n");
		/* 10 s in the past with a 1 ms interval: the periods missed are the first signal's overruns */
		clock_gettime(CLOCK_REALTIME, &its.it_value);
		its.it_value.tv_sec -= 10;
		its.it_interval.tv_nsec = 1000000;
		timer_settime(id, TIMER_ABSTIME, &its, NULL);
		sigwaitinfo(&s, &si);
		say("10 s past, 1 ms interval: si_overrun about 10000: %s\n", yesno(si.si_overrun >= 9900 && si.si_overrun < 20000));
		/* disarmed, and a signal of the 1 ms period that came meanwhile taken, so the next one is the new arming's */
		struct itimerspec stop = { { 0, 0 }, { 0, 0 } };
		timer_settime(id, 0, &stop, NULL);
		struct timespec zero = { 0, 0 };
		while (sigtimedwait(&s, &si, &zero) == SIGUSR1)
			;
		/* 5 s in the past with a 1 ns interval: more than INT_MAX missed, the count saturates */
		clock_gettime(CLOCK_REALTIME, &its.it_value);
		its.it_value.tv_sec -= 5;
		its.it_interval.tv_nsec = 1;
		timer_settime(id, TIMER_ABSTIME, &its, NULL);
		sigwaitinfo(&s, &si);
		struct itimerspec off = { { 0, 0 }, { 0, 0 } };
		timer_settime(id, 0, &off, NULL);
		say("5 s past, 1 ns interval: si_overrun is INT_MAX: %s\n", yesno(si.si_overrun == 0x7fffffff));
		return 0;
	}
	if (!strcmp(m, "thread")) {
		struct sigevent ev;
		memset(&ev, 0, sizeof ev);
		ev.sigev_notify = SIGEV_THREAD;
		ev.sigev_notify_function = callback;
		ev.sigev_value.sival_int = 1;
		timer_t id;
		say("timer_create(SIGEV_THREAD): %s\n", ename(timer_create(CLOCK_MONOTONIC, &ev, &id)));
		arm(id, 10, 10, 0);
		/* 10 s at most: glibc starts a thread per expiry, slow under QEMU's software CPU (vmexec in CI) */
		for (int i = 0; i < 10000 && __atomic_load_n(&cb_runs, __ATOMIC_SEQ_CST) < 3; i++)
			usleep(1000);
		timer_delete(id);
		say("callback ran at least 3 times: %s\n", yesno(__atomic_load_n(&cb_runs, __ATOMIC_SEQ_CST) >= 3));
		return 0;
	}
	if (!strcmp(m, "exec")) {
		if (argc > 2) {
			struct itimerspec cur;
			errno = 0;
			int r = syscall(SYS_timer_gettime, 0, &cur);
			say("after execve: timer 0 %s\n", ename(r));
			return 0;
		}
		timer_t id = make(CLOCK_MONOTONIC, SIGUSR1, 0);
		arm(id, 5000, 0, 0);
		say("before execve: timer armed\n");
		execl("/proc/self/exe", argv[0], "exec", "again", (char *)NULL);
		return 91;
	}
	if (!strcmp(m, "errors")) {
		timer_t id;
		struct sigevent ev;
		memset(&ev, 0, sizeof ev);
		ev.sigev_notify = SIGEV_SIGNAL;
		ev.sigev_signo = SIGUSR1;
		errno = 0;
		say("clock 77: %s\n", ename(syscall(SYS_timer_create, 77, &ev, &id)));
		ev.sigev_notify = 9;
		errno = 0;
		say("notify 9: %s\n", ename(syscall(SYS_timer_create, CLOCK_MONOTONIC, &ev, &id)));
		ev.sigev_notify = SIGEV_SIGNAL;
		ev.sigev_signo = 99;
		errno = 0;
		say("signal 99: %s\n", ename(syscall(SYS_timer_create, CLOCK_MONOTONIC, &ev, &id)));
		errno = 0;
		say("settime of id 31 (none): %s\n", ename(syscall(SYS_timer_settime, 31, 0, &(struct itimerspec){ 0 }, NULL)));
		int kid;
		ev.sigev_signo = SIGUSR1;
		syscall(SYS_timer_create, CLOCK_MONOTONIC, &ev, &kid);
		struct itimerspec bad = { { 0, 0 }, { 0, 1000000000 } };
		errno = 0;
		say("tv_nsec 1e9: %s\n", ename(syscall(SYS_timer_settime, kid, 0, &bad, NULL)));
		errno = 0;
		say("getoverrun of id -1: %s\n", ename(syscall(SYS_timer_getoverrun, -1)));
		return 0;
	}
	say("usage: timer_posix signal|periodic|overrun|gettime|abstime|thread|exec|errors\n");
	return 2;
}

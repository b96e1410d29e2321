/* timer_cpu: ITIMER_VIRTUAL and ITIMER_PROF count the process's CPU time, not the clock's; so do
 * POSIX timers on CLOCK_PROCESS_CPUTIME_ID and CLOCK_THREAD_CPUTIME_ID (a sleeping thread's never fires).
 * A sleeping process's VIRTUAL timer does not fire; a busy one's does, and an interval repeats;
 * getitimer reports what is left; fork does not inherit them; bad arguments are EINVAL/EFAULT. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "guest.h"

static volatile sig_atomic_t vt, prof, pt1, pt2;

static void on_sig(int s)
{
	if (s == SIGVTALRM)
		vt++;
	else if (s == SIGUSR1)
		pt1++;
	else if (s == SIGUSR2)
		pt2++;
	else
		prof++;
}

static double wall_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Spin until cond or `limit` seconds of the wall clock (spinning, about as much CPU time; never a CPU clock's
 * limit, which would hang where the guest's CPU clock stands still). */
#define SPIN(cond, limit) do { double s_ = wall_now(); while (!(cond) && wall_now() - s_ < (limit)) ; } while (0)

static timer_t cpu_timer(clockid_t c, int sig, long ns, int flags)
{
	struct sigevent ev = { .sigev_notify = SIGEV_SIGNAL, .sigev_signo = sig };
	timer_t id;
	if (timer_create(c, &ev, &id)) {
		say("timer_create(%d): %s\n", (int)c, errname(errno));
		return 0;
	}
	struct itimerspec its = { { 0, 0 }, { ns / 1000000000L, ns % 1000000000L } };
	if (timer_settime(id, flags, &its, NULL))
		say("timer_settime: %s\n", errname(errno));
	return id;
}

/* A thread that sleeps 0.3 s with a 0.05 s timer on its own CPU clock, then spins. */
static void *sleeper(void *arg)
{
	(void)arg;
	timer_t id = cpu_timer(CLOCK_THREAD_CPUTIME_ID, SIGUSR2, 50000000L, 0);
	usleep(300000);
	say("thread timer after the thread slept 0.3 s while main spun: fired %d\n", (int)pt2);
	struct timespec s0, s1;	/* spin until it fires, 10 s of the wall clock at most */
	clock_gettime(CLOCK_MONOTONIC, &s0);
	do
		clock_gettime(CLOCK_MONOTONIC, &s1);
	while (!pt2 && (s1.tv_sec - s0.tv_sec) * 1e9 + (s1.tv_nsec - s0.tv_nsec) < 1e10);
	say("thread timer after the thread spun: fired %d\n", (int)pt2);
	timer_delete(id);
	return NULL;
}

static void posix_cpu_timers(void)
{
	struct sigaction sa = { .sa_handler = on_sig };
	sigaction(SIGUSR1, &sa, NULL);
	sigaction(SIGUSR2, &sa, NULL);

	/*
	 * 0.25 s of CPU, less than the 0.3 s sleep (a clock that counted the sleep would fire), but with room for
	 * what a guest under QEMU's software CPU is charged around the sleep: with 0.1 s it fired once on vmexec
	 * in the VM, where a stall of the emulator counts as the running thread's CPU time.
	 */
	timer_t id = cpu_timer(CLOCK_PROCESS_CPUTIME_ID, SIGUSR1, 250000000L, 0);
	struct itimerspec g;
	timer_gettime(id, &g);
	say("process CPU timer: left within (0, 0.25 s]: %s\n",
	    !g.it_value.tv_sec && g.it_value.tv_nsec > 0 && g.it_value.tv_nsec <= 250000000L ? "yes" : "no");
	usleep(300000);
	say("process CPU timer after sleeping 0.3 s: fired %d\n", (int)pt1);
	SPIN(pt1, 20.0);
	say("process CPU timer after spinning: fired %d\n", (int)pt1);
	timer_delete(id);

	/* An absolute CPU time already past fires at once; an interval repeats. */
	pt1 = 0;
	id = cpu_timer(CLOCK_PROCESS_CPUTIME_ID, SIGUSR1, 1, TIMER_ABSTIME);
	SPIN(pt1, 20.0);
	say("absolute CPU time in the past: fired %d\n", (int)pt1);
	timer_delete(id);
	pt1 = 0;
	id = cpu_timer(CLOCK_PROCESS_CPUTIME_ID, SIGUSR1, 30000000L, 0);
	struct itimerspec iv = { { 0, 30000000L }, { 0, 30000000L } };
	timer_settime(id, 0, &iv, NULL);
	SPIN(pt1 >= 3, 20.0);
	say("an interval CPU timer repeats: %s\n", pt1 >= 3 ? "yes" : "no");
	timer_delete(id);

	/* Hostile clock ids: an fd clock's encoding (~0 << 3 | 3), a thread clock of a tid that is no thread of ours. */
	struct sigevent ev = { .sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIGUSR1 };
	timer_t bad;
	say("timer_create(fd clock encoding): %s\n", errname(timer_create((clockid_t)(~0 << 3 | 3), &ev, &bad) ? errno : 0));
	say("timer_create(thread clock of no thread): %s\n",
	    errname(timer_create((clockid_t)(~4000000 << 3 | 4 | 2), &ev, &bad) ? errno : 0));

	pthread_t th;
	pthread_create(&th, NULL, sleeper, NULL);
	/* main spins 0.25 s by the wall clock (not by a CPU clock: on vmexec the guest's CPU clocks read the
	 * stub's, which runs no guest code there): the process's CPU time grows, the sleeper's does not */
	struct timespec w0, w1;
	clock_gettime(CLOCK_MONOTONIC, &w0);
	do
		clock_gettime(CLOCK_MONOTONIC, &w1);
	while ((w1.tv_sec - w0.tv_sec) * 1e9 + (w1.tv_nsec - w0.tv_nsec) < 2.5e8);
	pthread_join(th, NULL);
}

static double cpu_s(clockid_t c)
{
	struct timespec ts;
	if (clock_gettime(c, &ts))
		return -1;
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static volatile int spin_stop;
static void *spinner(void *arg)
{
	(void)arg;
	while (!spin_stop)
		;
	return NULL;
}

/* Reading the CPU-time clocks: a thread's own, another thread's, the process's, a child's; sleeping on one. */
static void cpu_clocks(void)
{
	clockid_t mine, child_clk;
	struct timespec res;
	pthread_getcpuclockid(pthread_self(), &mine);
	double p0 = cpu_s(CLOCK_PROCESS_CPUTIME_ID), t0 = cpu_s(CLOCK_THREAD_CPUTIME_ID), m0 = cpu_s(mine);
	/* spin until each clock has grown 0.05 s, 20 s of the wall clock at most (a loaded host gives little CPU) */
	SPIN(cpu_s(CLOCK_PROCESS_CPUTIME_ID) - p0 >= 0.05 && cpu_s(CLOCK_THREAD_CPUTIME_ID) - t0 >= 0.05 &&
	     cpu_s(mine) - m0 >= 0.05, 20.0);
	double p1 = cpu_s(CLOCK_PROCESS_CPUTIME_ID), t1 = cpu_s(CLOCK_THREAD_CPUTIME_ID), m1 = cpu_s(mine);
	say("spinning: process clock grew >= 0.05 s: %s\n", p1 - p0 >= 0.05 ? "yes" : "no");
	say("spinning: thread clock grew >= 0.05 s: %s\n", t1 - t0 >= 0.05 ? "yes" : "no");
	say("spinning: pthread_getcpuclockid's clock grew >= 0.05 s: %s\n", m1 - m0 >= 0.05 ? "yes" : "no");

	/* A second thread spins: its clock grows, the sleeping main thread's hardly (it only looks, every 20 ms). */
	pthread_t th;
	spin_stop = 0;
	pthread_create(&th, NULL, spinner, NULL);
	clockid_t thc;
	pthread_getcpuclockid(th, &thc);
	t0 = cpu_s(CLOCK_THREAD_CPUTIME_ID);
	double s0 = cpu_s(thc), s1 = s0, w0 = wall_now();
	while (s1 - s0 < 0.1 && wall_now() - w0 < 20.0) {
		usleep(20000);
		s1 = cpu_s(thc);
	}
	t1 = cpu_s(CLOCK_THREAD_CPUTIME_ID);
	say("the spinning thread's clock read by another grew >= 0.1 s: %s\n", s1 - s0 >= 0.1 ? "yes" : "no");
	say("a sleeping thread's clock grew less than a fifth of the spinner's: %s\n",
	    t1 - t0 < (s1 - s0) / 5 ? "yes" : "no");
	/* clock_nanosleep on the process clock: until the spinner has used 0.1 s more */
	p0 = cpu_s(CLOCK_PROCESS_CPUTIME_ID);
	struct timespec d = { 0, 100000000L };
	int e = clock_nanosleep(CLOCK_PROCESS_CPUTIME_ID, 0, &d, NULL);
	p1 = cpu_s(CLOCK_PROCESS_CPUTIME_ID);
	say("clock_nanosleep(PROCESS_CPUTIME 0.1 s) while a thread spins: %s, clock grew >= 0.1 s: %s\n", errname(e),
	    p1 - p0 >= 0.1 ? "yes" : "no");
	spin_stop = 1;
	pthread_join(th, NULL);
	say("clock_nanosleep(THREAD_CPUTIME): %s\n", errname(clock_nanosleep(CLOCK_THREAD_CPUTIME_ID, 0, &d, NULL)));

	/* A child's process clock, read by its parent while the child waits after spinning. */
	int up[2], down[2];
	pipe(up);
	pipe(down);
	pid_t c = fork();
	if (c == 0) {
		char b;
		SPIN(cpu_s(CLOCK_PROCESS_CPUTIME_ID) >= 0.05, 20.0);
		write(up[1], "x", 1);
		read(down[0], &b, 1);
		_exit(0);
	}
	char b;
	read(up[0], &b, 1);
	e = clock_getcpuclockid(c, &child_clk);
	say("clock_getcpuclockid(child): %s, its clock >= 0.05 s: %s\n", errname(e), cpu_s(child_clk) >= 0.05 ? "yes" : "no");
	struct timespec ts;
	say("clock_gettime(thread clock of another process's thread): %s\n",
	    errname(clock_gettime((clockid_t)(~c << 3 | 4 | 2), &ts) ? errno : 0));
	write(down[1], "x", 1);
	waitpid(c, NULL, 0);

	e = clock_getres(CLOCK_PROCESS_CPUTIME_ID, &res) ? errno : 0;
	say("clock_getres(PROCESS_CPUTIME): %s %ld ns\n", errname(e), res.tv_nsec);
	say("clock_gettime(fd clock encoding): %s\n", errname(clock_gettime((clockid_t)(~999 << 3 | 3), &ts) ? errno : 0));
	say("clock_gettime(CPUCLOCK_MAX): %s\n", errname(clock_gettime((clockid_t)(~0 << 3 | 4 | 3), &ts) ? errno : 0));
	say("clock_gettime(process clock of no process): %s\n",
	    errname(clock_gettime((clockid_t)(~4000000 << 3 | 2), &ts) ? errno : 0));
	say("clock_gettime(CPU clock, bad pointer): %s\n",
	    errname(clock_gettime(CLOCK_PROCESS_CPUTIME_ID, (void *)16) ? errno : 0));
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "clocks")) {
		cpu_clocks();
		return 0;
	}
	if (argc > 1 && !strcmp(argv[1], "posix")) {
		posix_cpu_timers();
		return 0;
	}
	struct sigaction sa = { .sa_handler = on_sig };
	sigaction(SIGVTALRM, &sa, NULL);
	sigaction(SIGPROF, &sa, NULL);

	struct itimerval v = { { 0, 0 }, { 0, 100000 } }, g;
	say("setitimer VIRTUAL 0.1 s: %s\n", errname(setitimer(ITIMER_VIRTUAL, &v, NULL) ? errno : 0));
	getitimer(ITIMER_VIRTUAL, &g);
	say("getitimer: left within (0, 0.2 s]: %s\n",
	    g.it_value.tv_sec == 0 && g.it_value.tv_usec > 0 && g.it_value.tv_usec <= 200000 ? "yes" : "no");
	usleep(300000);
	say("after sleeping 0.3 s (no CPU): fired %d\n", (int)vt);
	SPIN(vt, 20.0);
	say("after spinning: fired %d\n", (int)vt);
	getitimer(ITIMER_VIRTUAL, &g);
	say("a one-shot is off after: %s\n", !g.it_value.tv_sec && !g.it_value.tv_usec ? "yes" : "no");

	struct itimerval p = { { 0, 50000 }, { 0, 50000 } };
	say("setitimer PROF 0.05 s every 0.05 s: %s\n", errname(setitimer(ITIMER_PROF, &p, NULL) ? errno : 0));
	SPIN(prof >= 3, 20.0);
	say("an interval repeats: %s\n", prof >= 3 ? "yes" : "no");
	pid_t c = fork();
	if (c == 0) {
		struct itimerval cg;
		getitimer(ITIMER_PROF, &cg);
		_exit(cg.it_value.tv_sec || cg.it_value.tv_usec || cg.it_interval.tv_usec ? 1 : 0);
	}
	int st;
	waitpid(c, &st, 0);
	say("a forked child has no PROF timer: %s\n", WEXITSTATUS(st) == 0 ? "yes" : "no");
	struct itimerval off = { 0 }, old;
	setitimer(ITIMER_PROF, &off, &old);
	say("disarm returns the interval: %ld us\n", (long)old.it_interval.tv_usec);
	errno = 0;
	say("setitimer(7): %s\n", errname(setitimer(7, &v, NULL) ? errno : 0));
	errno = 0;
	struct itimerval bad = { { 0, 0 }, { 0, 1000000 } };
	say("setitimer usec 1000000: %s\n", errname(setitimer(ITIMER_VIRTUAL, &bad, NULL) ? errno : 0));
	errno = 0;
	say("getitimer into a bad pointer: %s\n", errname(getitimer(ITIMER_PROF, (void *)16) ? errno : 0));
	return 0;
}

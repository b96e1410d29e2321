/* timer_cpu: ITIMER_VIRTUAL and ITIMER_PROF count the process's CPU time, not the clock's.
 * A sleeping process's VIRTUAL timer does not fire; a busy one's does, and an interval repeats;
 * getitimer reports what is left; fork does not inherit them; bad arguments are EINVAL/EFAULT. */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "guest.h"

static volatile sig_atomic_t vt, prof;

static void on_sig(int s)
{
	if (s == SIGVTALRM)
		vt++;
	else
		prof++;
}

static double cpu_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Spin until cond or `limit` seconds of CPU time. */
#define SPIN(cond, limit) do { double s_ = cpu_now(); while (!(cond) && cpu_now() - s_ < (limit)) ; } while (0)

int main(void)
{
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
	SPIN(vt, 3.0);
	say("after spinning: fired %d\n", (int)vt);
	getitimer(ITIMER_VIRTUAL, &g);
	say("a one-shot is off after: %s\n", !g.it_value.tv_sec && !g.it_value.tv_usec ? "yes" : "no");

	struct itimerval p = { { 0, 50000 }, { 0, 50000 } };
	say("setitimer PROF 0.05 s every 0.05 s: %s\n", errname(setitimer(ITIMER_PROF, &p, NULL) ? errno : 0));
	SPIN(prof >= 3, 5.0);
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

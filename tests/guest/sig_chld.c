/* sig_chld: SIGCHLD. usage: sig_chld count|info|ignore|nocldwait
 *   count      a SIGCHLD handler reaps with waitpid(WNOHANG) and counts 5 children (exit codes summed)
 *   info       SA_SIGINFO: si_code CLD_EXITED / CLD_KILLED, si_status, si_pid
 *   ignore     SIGCHLD set to SIG_IGN: children are reaped automatically, wait() fails with ECHILD
 *   nocldwait  SA_NOCLDWAIT with a handler: the handler still runs, children do not become zombies */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guest.h"

static volatile sig_atomic_t reaped, sum, hits;
static void reaper(int s)
{
	(void)s;
	int e = errno, st;
	pid_t p;
	hits++;
	while ((p = waitpid(-1, &st, WNOHANG)) > 0) {
		reaped++;
		sum += WEXITSTATUS(st);
	}
	errno = e;
}

#define NINFO 2
static volatile int i_code[NINFO], i_status[NINFO], i_signo[NINFO];
static volatile pid_t i_pid[NINFO];
static volatile sig_atomic_t ninfo;
static void info(int s, siginfo_t *si, void *uc)
{
	(void)s;
	(void)uc;
	if (ninfo < NINFO) {
		i_signo[ninfo] = si->si_signo;
		i_code[ninfo] = si->si_code;
		i_status[ninfo] = si->si_status;
		i_pid[ninfo] = si->si_pid;
		ninfo++;
	}
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "count";
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sigset_t chld, empty;
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigemptyset(&empty);
	if (!strcmp(mode, "count")) {
		sa.sa_handler = reaper;
		sa.sa_flags = SA_RESTART;
		sigaction(SIGCHLD, &sa, NULL);
		sigprocmask(SIG_BLOCK, &chld, NULL);
		for (int i = 1; i <= 5; i++)
			if (fork() == 0) {
				usleep(i * 10000);
				_exit(i);
			}
		while (reaped < 5)
			sigsuspend(&empty);
		say("reaped=%d sum of exit codes=%d handler ran: %s\n", (int)reaped, (int)sum, hits >= 1 ? "yes" : "no");
		errno = 0;
		int r = wait(NULL);
		say("wait afterwards = %d %s\n", r, errno == ECHILD ? "ECHILD" : "E?");
		return 0;
	}
	if (!strcmp(mode, "info")) {
		sa.sa_sigaction = info;
		sa.sa_flags = SA_SIGINFO;
		sigaction(SIGCHLD, &sa, NULL);
		sigprocmask(SIG_BLOCK, &chld, NULL);
		pid_t a = fork();
		if (a == 0)
			_exit(33);
		while (ninfo < 1)
			sigsuspend(&empty);
		pid_t b = fork();
		if (b == 0) {
			raise(SIGTERM);
			_exit(1);
		}
		while (ninfo < 2)
			sigsuspend(&empty);
		say("first: signo=%d code=%s status=%d pid matches=%s\n", i_signo[0],
		    i_code[0] == CLD_EXITED ? "CLD_EXITED" : "?", i_status[0], i_pid[0] == a ? "yes" : "no");
		say("second: signo=%d code=%s status=%d pid matches=%s\n", i_signo[1],
		    i_code[1] == CLD_KILLED ? "CLD_KILLED" : "?", i_status[1], i_pid[1] == b ? "yes" : "no");
		int st;
		say("waitpid a: %s, waitpid b: %s\n", waitpid(a, &st, 0) == a && WEXITSTATUS(st) == 33 ? "ok" : "bad",
		    waitpid(b, &st, 0) == b && WTERMSIG(st) == SIGTERM ? "ok" : "bad");
		return 0;
	}
	if (!strcmp(mode, "ignore") || !strcmp(mode, "nocldwait")) {
		int nocld = !strcmp(mode, "nocldwait");
		if (nocld) {
			sa.sa_handler = reaper; /* reaps nothing: there are no zombies */
			sa.sa_flags = SA_NOCLDWAIT;
			sigaction(SIGCHLD, &sa, NULL);
		} else {
			signal(SIGCHLD, SIG_IGN);
		}
		int p[2];
		pipe(p);
		for (int i = 0; i < 3; i++)
			if (fork() == 0) {
				close(p[0]);
				_exit(i);
			}
		close(p[1]);
		char b;
		/* EOF once all three are gone */
		for (;;) {
			ssize_t n = read(p[0], &b, 1);
			if (n > 0 || (n < 0 && errno == EINTR))
				continue;
			break;
		}
		errno = 0;
		int r;
		while ((r = wait(NULL)) < 0 && errno == EINTR)
			;
		say("%s: wait() = %d %s, zombies reaped by handler=%d\n", mode, r, errno == ECHILD ? "ECHILD" : "E?",
		    (int)reaped);
		if (nocld) {
			/* natively it has run by now; wait for it 10 s at most, not a fixed 100 ms */
			for (int i = 0; i < 1000 && !hits; i++)
				usleep(10000);
			say("handler ran: %s\n", hits > 0 ? "yes" : "no");
		}
		return 0;
	}
	say("unknown mode\n");
	return 2;
}

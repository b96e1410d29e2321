/* sig_default: default actions and who receives kill().
 * usage: sig_default pipe-default|pipe-ignore|pipe-handler|pipe-child|raise SIG|abort|pgrp
 *   pipe-default   write to a pipe without readers: killed by SIGPIPE (status 141)
 *   pipe-ignore    SIG_IGN: write returns EPIPE
 *   pipe-handler   a handler runs, then write returns EPIPE
 *   pipe-child     a child dies of SIGPIPE; the parent sees WIFSIGNALED/WTERMSIG
 *   raise SIG      raise(SIG) with the default action (e.g. 15 -> status 143)
 *   pgrp           kill(0, sig) reaches every member of the process group and nobody else;
 *                  kill(-pgid, sig) reaches another group */
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

static volatile sig_atomic_t hits;
static void handler(int s) { (void)s; hits++; }

static void describe(const char *who, int st)
{
	if (WIFEXITED(st))
		say("%s: exited %d\n", who, WEXITSTATUS(st));
	else if (WIFSIGNALED(st))
		say("%s: killed by signal %d\n", who, WTERMSIG(st));
	else
		say("%s: status %#x\n", who, st);
}

static int broken_pipe_write(void)
{
	int p[2];
	if (pipe(p))
		return -100;
	close(p[0]);
	errno = 0;
	int r = write(p[1], "x", 1);
	int e = errno;
	say("write to a pipe without readers = %d %s\n", r, e == EPIPE ? "EPIPE" : "E?");
	return r;
}

/*
 * A member of the group: report whether SIGUSR1 arrived, through the exit status (10 yes, 20 no). It says it
 * is ready, then waits until the leader has sent (the sent pipe's EOF: a kill() returns after the signal is
 * pending) and then for the signal itself: 10 s when it should come (expect), 300 ms when it should not. The
 * wait used to be 300 ms from "ready", which a slow machine (QEMU's software CPU) could spend on the
 * leader's forks of the other members before kill(0) ran.
 */
static int sent[2];
static void member(int ready_fd, int expect)
{
	close(sent[1]);
	sigset_t s, empty;
	sigemptyset(&s);
	sigaddset(&s, SIGUSR1);
	sigprocmask(SIG_BLOCK, &s, NULL);
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = handler;
	sigaction(SIGUSR1, &sa, NULL);
	if (write(ready_fd, "r", 1) != 1)
		_exit(50);
	char b;
	while (read(sent[0], &b, 1) < 0 && errno == EINTR)
		;
	sigemptyset(&empty);
	/* wait for USR1 or for the timeout below */
	for (int i = 0; i < (expect ? 1000 : 30) && !hits; i++) {
		sigprocmask(SIG_UNBLOCK, &s, NULL);
		usleep(10000);
		sigprocmask(SIG_BLOCK, &s, NULL);
	}
	_exit(hits ? 10 : 20);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "pipe-default";
	if (!strcmp(mode, "pipe-default")) {
		say("writing to a broken pipe\n");
		broken_pipe_write();
		say("still alive?\n");
		return 0;
	}
	if (!strcmp(mode, "pipe-ignore")) {
		signal(SIGPIPE, SIG_IGN);
		broken_pipe_write();
		return 0;
	}
	if (!strcmp(mode, "pipe-handler")) {
		signal(SIGPIPE, handler);
		broken_pipe_write();
		say("SIGPIPE handler ran %d time(s)\n", (int)hits);
		return 0;
	}
	if (!strcmp(mode, "pipe-child")) {
		int p[2];
		pipe(p);
		pid_t c = fork();
		if (c == 0) {
			close(p[0]);
			usleep(50000);
			for (;;)
				if (write(p[1], "abc", 3) < 0)
					_exit(3);
		}
		close(p[1]);
		char b[3];
		say("parent read %d bytes, closing the read end\n", (int)read(p[0], b, 3));
		close(p[0]);
		int st;
		waitpid(c, &st, 0);
		describe("writer child", st);
		return 0;
	}
	if (!strcmp(mode, "raise") && argc > 2) {
		int sig = atoi(argv[2]);
		say("raising %d\n", sig);
		raise(sig);
		say("survived signal %d\n", sig);
		return 0;
	}
	if (!strcmp(mode, "kill-blocked") && argc > 2) {
		/* SIGKILL (or SIGTERM) ends a child blocked in pause(), sigsuspend(), a pipe read or nanosleep */
		int sig = atoi(argv[2]);
		const char *how[] = { "pause", "sigsuspend", "read", "nanosleep" };
		for (int i = 0; i < 4; i++) {
			int rp[2], hold[2];
			pipe(rp);
			pipe(hold);
			pid_t c = fork();
			if (c == 0) {
				write(rp[1], "r", 1);
				sigset_t empty;
				sigemptyset(&empty);
				char b;
				switch (i) {
				case 0: pause(); break;
				case 1: sigsuspend(&empty); break;
				case 2: read(hold[0], &b, 1); break;
				case 3: sleep(5); break;
				}
				_exit(1);
			}
			char b;
			read(rp[0], &b, 1);
			usleep(30000);
			kill(c, sig);
			int st;
			waitpid(c, &st, 0);
			char who[64];
			snprintf(who, sizeof who, "child in %s, sent %d", how[i], sig);
			describe(who, st);
			close(rp[0]), close(rp[1]), close(hold[0]), close(hold[1]);
		}
		return 0;
	}
	if (!strcmp(mode, "abort")) {
		say("abort()\n");
		abort();
	}
	if (!strcmp(mode, "pgrp")) {
		/* work in a session of our own, so kill(0) can never reach the test runner */
		pid_t leader = fork();
		if (leader == 0) {
			if (setsid() < 0 || getpgrp() != getpid()) {
				say("setsid failed\n");
				_exit(40);
			}
			signal(SIGUSR1, SIG_IGN); /* the leader ignores it */
			int rp[2];
			pipe(rp);
			if (pipe(sent))
				_exit(43);
			pid_t kids[4];
			for (int i = 0; i < 3; i++) {
				kids[i] = fork();
				if (kids[i] == 0) {
					signal(SIGUSR1, SIG_DFL);
					member(rp[1], 1);
				}
			}
			/* the fourth goes to its own group: kill(0) must not reach it */
			kids[3] = fork();
			if (kids[3] == 0) {
				setpgid(0, 0);
				signal(SIGUSR1, SIG_DFL);
				member(rp[1], 0);
			}
			setpgid(kids[3], kids[3]);
			char b;
			for (int i = 0; i < 4; i++)
				if (read(rp[0], &b, 1) != 1)
					_exit(41);
			if (getpgrp() != getpid())
				_exit(42);
			say("kill(0, SIGUSR1) = %d\n", kill(0, SIGUSR1));
			close(sent[1]);
			close(sent[0]);
			for (int i = 0; i < 4; i++) {
				int st;
				waitpid(kids[i], &st, 0);
				char who[32];
				snprintf(who, sizeof who, "member %d%s", i, i == 3 ? " (own group)" : "");
				describe(who, st);
			}
			/* now a group by pgid: a new member group, signalled from outside it */
			if (pipe(sent))
				_exit(43);
			pid_t g = fork();
			if (g == 0) {
				setpgid(0, 0);
				signal(SIGUSR1, SIG_DFL);
				member(rp[1], 1);
			}
			setpgid(g, g);
			read(rp[0], &b, 1);
			say("kill(-pgid, SIGUSR1) = %d\n", kill(-g, SIGUSR1));
			close(sent[1]);
			close(sent[0]);
			int st;
			waitpid(g, &st, 0);
			describe("other group member", st);
			errno = 0;
			int r = kill(-99999, SIGUSR1);
			say("kill(-99999) = %d %s\n", r, errno == ESRCH ? "ESRCH" : "E?");
			_exit(0);
		}
		int st;
		waitpid(leader, &st, 0);
		describe("session leader", st);
		return 0;
	}
	say("unknown mode\n");
	return 2;
}

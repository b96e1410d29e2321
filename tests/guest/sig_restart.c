/* sig_restart: blocking syscalls interrupted by a signal from a child, with and without SA_RESTART.
 * usage: sig_restart read|write|wait4|nanosleep|poll|select|pause [restart]
 * A child waits until the parent sleeps in the call (/proc/PID/stat), sends SIGUSR1, then unblocks
 * the call (writes "data", drains the pipe or exits) once the parent says it returned, or after a wait if
 * it does not: 150 ms when the call should be restarted, 10 s when it should fail with EINTR. The parent
 * looks whether the unblocking happened before it says so, so a slow machine (QEMU's software CPU, where
 * delivering the signal alone can take longer than 150 ms) cannot change the answer; only a wrong one
 * waits for the timeout. Linux: read, write and wait4 are restarted under SA_RESTART and fail with EINTR
 * without it; nanosleep, poll, select and pause always fail with EINTR once a handler ran. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "guest.h"

static const char *ename(int e)
{
	switch (e) {
	case 0: return "0";
	case EINTR: return "EINTR";
	case EAGAIN: return "EAGAIN";
	case ECHILD: return "ECHILD";
	case EPIPE: return "EPIPE";
	case EINVAL: return "EINVAL";
	default: return "E?";
	}
}

static volatile sig_atomic_t hits;
static void on_usr1(int s) { (void)s; hits++; }

int main(int argc, char **argv)
{
	const char *op = argc > 1 ? argv[1] : "read";
	int restart = argc > 2 && !strcmp(argv[2], "restart");
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_usr1;
	sa.sa_flags = restart ? SA_RESTART : 0;
	sigaction(SIGUSR1, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	for (int attempt = 0; attempt < 5; attempt++) {
		int p[2], ack[2];
		if (pipe(p) || pipe(ack))
			return 90;
		int is_write = !strcmp(op, "write");
		if (is_write) {
			/* fill the pipe so the next write blocks */
			fcntl(p[1], F_SETFL, O_NONBLOCK);
			char buf[4096];
			memset(buf, 'x', sizeof buf);
			while (write(p[1], buf, sizeof buf) > 0)
				;
			while (write(p[1], buf, 1) > 0)
				;
			fcntl(p[1], F_SETFL, 0);
		}
		hits = 0;
		pid_t parent = getpid();
		pid_t c = fork();
		if (c < 0)
			return 91;
		if (c == 0) {
			/* once the parent sleeps in the call (10 s at most): a fixed 50 ms could end before a slow
			 * machine (QEMU's software CPU) had the parent back from fork(), or land between its
			 * check of hits below and the call, which then blocks until the 10 s timeout */
			for (int i = 0; i < 10000 && !proc_asleep(parent); i++)
				usleep(1000);
			kill(parent, SIGUSR1);
			close(ack[1]);
			int expect_restart = restart && (!strcmp(op, "read") || is_write || !strcmp(op, "wait4"));
			struct pollfd af = { .fd = ack[0], .events = POLLIN };
			while (poll(&af, 1, expect_restart ? 150 : 10000) < 0 && errno == EINTR)
				;
			if (is_write) {
				char buf[65536];
				close(p[1]);
				fcntl(p[0], F_SETFL, O_NONBLOCK);
				while (read(p[0], buf, sizeof buf) > 0)
					;
				usleep(100000);
				_exit(0);
			}
			if (write(p[1], "data", 4) != 4)
				_exit(1);
			_exit(7);
		}
		close(ack[0]);
		if (hits) /* the signal came before we blocked: try again */
			goto retry;
		long r;
		int e;
		char buf[16] = "";
		errno = 0;
		if (!strcmp(op, "read")) {
			r = read(p[0], buf, sizeof buf - 1);
		} else if (is_write) {
			r = write(p[1], "y", 1);
		} else if (!strcmp(op, "wait4")) {
			int st = 0;
			r = wait4(c, &st, 0, NULL);
			e = errno;
			if (r == c) {
				say("wait4 returned the child, exit status %d\n", WEXITSTATUS(st));
				r = 1;
				c = -1;
			}
			errno = e;
		} else if (!strcmp(op, "nanosleep")) {
			struct timespec req = { 2, 0 }, rem = { 0, 0 };
			r = nanosleep(&req, &rem);
			e = errno;
			say("rem set: %s, rem < 2s: %s\n", rem.tv_sec || rem.tv_nsec ? "yes" : "no",
			    rem.tv_sec < 2 ? "yes" : "no");
			errno = e;
		} else if (!strcmp(op, "poll")) {
			struct pollfd pf = { .fd = p[0], .events = POLLIN };
			r = poll(&pf, 1, 2000);
		} else if (!strcmp(op, "select")) {
			fd_set rf;
			FD_ZERO(&rf);
			FD_SET(p[0], &rf);
			struct timeval tv = { 2, 0 };
			r = select(p[0] + 1, &rf, NULL, NULL, &tv);
		} else if (!strcmp(op, "pause")) {
			r = pause();
		} else {
			say("unknown op %s\n", op);
			return 2;
		}
		e = r < 0 ? errno : 0;
		say("%s%s: returned %ld %s, handler ran %d time(s)\n", op, restart ? " (SA_RESTART)" : "", r, ename(e),
		    (int)hits);
		if (!strcmp(op, "read") && r > 0)
			say("read got <%s>\n", buf);
		/*
		 * An interrupted call returns at the signal, a restarted one when the child unblocks it
		 * 150 ms later. Ask the pipe whether that happened (data in it, or room again after the
		 * child drained it) rather than the clock: a slow fork on a loaded machine delays both.
		 */
		struct pollfd ev = { .fd = is_write ? p[1] : p[0], .events = is_write ? POLLOUT : POLLIN };
		int unblocked = (!strcmp(op, "read") && r > 0) || poll(&ev, 1, 0) == 1;	/* a read took the data */
		say("returned after the unblocking event: %s\n", unblocked ? "yes" : "no");
		close(ack[1]);	/* the child may unblock now */
		if (c > 0) {
			int st;
			while ((r = waitpid(c, &st, 0)) < 0 && errno == EINTR)
				;
			say("child exit %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
		}
		return 0;
retry:
		close(ack[1]);
		waitpid(c, NULL, 0);
		close(p[0]);
		close(p[1]);
	}
	say("signal always arrived too early\n");
	return 3;
}

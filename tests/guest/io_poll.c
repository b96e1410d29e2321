/* io_poll: readiness on pipes with poll, ppoll, select and pselect6.
 * usage: io_poll ready|select|timeout|ppoll-mask|pselect-mask|mask-wait|errors
 *   ready        poll revents of pipe ends: empty, data, full, writer gone, reader gone, bad fd, fd -1
 *   select       select/pselect sets for the same cases; EBADF for a closed fd in a set
 *   timeout      timeouts expire; select(2) and raw ppoll/pselect6 write back the time that remained
 *   ppoll-mask   ppoll's signal mask: a blocked pending signal it unblocks ends the wait (EINTR, handler
 *                runs, old mask back after); with an fd ready the call returns it and the signal stays pending
 *   pselect-mask the same with pselect
 *   mask-wait    a signal sent while ppoll/pselect wait with it unblocked only by their mask
 *   errors       EINVAL for a bad sigsetsize, a negative timeout; EFAULT for a bad pollfd array
 * Prints what happened; the caller compares with the native run. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/select.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "guest.h"

static volatile sig_atomic_t hits, blocked_in_handler;

static int is_blocked(int sig)
{
	sigset_t cur;
	sigprocmask(SIG_BLOCK, NULL, &cur);
	return sigismember(&cur, sig);
}

static void handler(int sig)
{
	hits++;
	blocked_in_handler = is_blocked(sig);
}

static void revents(const char *what, int fd, short ev)
{
	struct pollfd p = { fd, ev, 0 };
	int r = poll(&p, 1, 0);
	say("%s: poll = %d revents%s%s%s%s%s\n", what, r, p.revents & POLLIN ? " IN" : "",
	    p.revents & POLLOUT ? " OUT" : "", p.revents & POLLHUP ? " HUP" : "", p.revents & POLLERR ? " ERR" : "",
	    p.revents & POLLNVAL ? " NVAL" : "");
}

static int mode_ready(void)
{
	int p[2];
	if (pipe(p))
		return 90;
	revents("empty pipe, read end", p[0], POLLIN);
	revents("empty pipe, write end", p[1], POLLOUT);
	if (write(p[1], "x", 1) != 1)
		return 91;
	revents("1 byte in, read end", p[0], POLLIN | POLLOUT);
	fcntl(p[1], F_SETFL, O_NONBLOCK);
	char big[4096] = { 0 };
	while (write(p[1], big, sizeof big) > 0)
		;
	revents("full pipe, write end", p[1], POLLOUT);
	close(p[1]);
	revents("writer closed, data left", p[0], POLLIN);
	while (read(p[0], big, sizeof big) > 0)
		;
	revents("writer closed, drained", p[0], POLLIN);
	close(p[0]);
	if (pipe(p))
		return 92;
	close(p[0]);
	revents("reader closed, write end", p[1], POLLOUT);
	revents("fd 999 (not open)", 999, POLLIN);

	struct pollfd set[3] = { { -1, POLLIN, 0 }, { p[1], POLLOUT, 0 }, { -5, POLLIN, 0 } };
	int r = poll(set, 3, 0);
	say("fds -1, write end, -5: poll = %d, revents %#x %#x %#x\n", r, set[0].revents, set[1].revents & POLLOUT,
	    set[2].revents);
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	r = poll(NULL, 0, 30);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	long ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
	say("poll(NULL, 0, 30 ms) = %d after at least 30 ms: %s\n", r, yesno(ms >= 29));
	return 0;
}

static int mode_select(void)
{
	int p[2];
	if (pipe(p))
		return 90;
	fd_set rd, wr;
	struct timeval tv = { 0, 0 };
	FD_ZERO(&rd);
	FD_ZERO(&wr);
	FD_SET(p[0], &rd);
	FD_SET(p[1], &wr);
	int r = select(p[1] + 1, &rd, &wr, NULL, &tv);
	say("empty pipe: select = %d, read end readable %s, write end writable %s\n", r, yesno(FD_ISSET(p[0], &rd)),
	    yesno(FD_ISSET(p[1], &wr)));
	if (write(p[1], "x", 1) != 1)
		return 91;
	FD_ZERO(&rd);
	FD_SET(p[0], &rd);
	struct timespec ts = { 0, 0 };
	r = pselect(p[0] + 1, &rd, NULL, NULL, &ts, NULL);
	say("1 byte in: pselect = %d, readable %s\n", r, yesno(FD_ISSET(p[0], &rd)));
	close(p[1]);
	char c;
	if (read(p[0], &c, 1) != 1)
		return 92;
	FD_ZERO(&rd);
	FD_SET(p[0], &rd);
	r = select(p[0] + 1, &rd, NULL, NULL, &tv);
	say("writer closed (EOF): select = %d, readable %s\n", r, yesno(FD_ISSET(p[0], &rd)));
	int closed = p[1];
	FD_ZERO(&rd);
	FD_SET(closed, &rd);
	errno = 0;
	r = select(closed + 1, &rd, NULL, NULL, &tv);
	say("closed fd in the read set: select = %d %s\n", r, errname(errno));
	r = select(0, NULL, NULL, NULL, &(struct timeval){ 0, 20000 });
	say("select(0, no sets, 20 ms) = %d\n", r);
	return 0;
}

static int mode_timeout(void)
{
	int p[2];
	if (pipe(p))
		return 90;
	fd_set rd;
	FD_ZERO(&rd);
	FD_SET(p[0], &rd);
	struct timeval tv = { 0, 40000 };
	int r = select(p[0] + 1, &rd, NULL, NULL, &tv);
	say("select on an empty pipe, 40 ms: %d, timeval left %ld.%06ld\n", r, (long)tv.tv_sec, (long)tv.tv_usec);

	/* ready before the timeout: select leaves what remained */
	if (write(p[1], "x", 1) != 1)
		return 91;
	FD_ZERO(&rd);
	FD_SET(p[0], &rd);
	tv = (struct timeval){ 5, 0 };
	r = select(p[0] + 1, &rd, NULL, NULL, &tv);
	say("select with data, 5 s: %d, time left between 4 s and 5 s: %s\n", r,
	    yesno(tv.tv_sec == 4 || (tv.tv_sec == 5 && tv.tv_usec == 0)));
	char c;
	if (read(p[0], &c, 1) != 1)
		return 92;

	/* the raw calls: libc copies the timeout for ppoll and pselect, the system calls update it */
	struct pollfd pf = { p[0], POLLIN, 0 };
	struct timespec ts = { 0, 30000000 };
	long rr = syscall(SYS_ppoll, &pf, 1, &ts, NULL, 8);
	say("raw ppoll, empty pipe, 30 ms: %ld, timespec left %ld.%09ld\n", rr, (long)ts.tv_sec, ts.tv_nsec);
	FD_ZERO(&rd);
	FD_SET(p[0], &rd);
	ts = (struct timespec){ 0, 30000000 };
	rr = syscall(SYS_pselect6, p[0] + 1, &rd, NULL, NULL, &ts, NULL);
	say("raw pselect6, empty pipe, 30 ms: %ld, timespec left %ld.%09ld\n", rr, (long)ts.tv_sec, ts.tv_nsec);
	if (write(p[1], "x", 1) != 1)
		return 93;
	ts = (struct timespec){ 7, 0 };
	rr = syscall(SYS_ppoll, &pf, 1, &ts, NULL, 8);
	say("raw ppoll with data, 7 s: %ld, time left between 6 s and 7 s: %s\n", rr,
	    yesno(ts.tv_sec == 6 || (ts.tv_sec == 7 && ts.tv_nsec == 0)));
	if (read(p[0], &c, 1) != 1)
		return 94;

	/* personality STICKY_TIMEOUTS: the timeouts are left as given */
	syscall(SYS_personality, 0x4000000 /* STICKY_TIMEOUTS */);
	FD_ZERO(&rd);
	FD_SET(p[0], &rd);
	tv = (struct timeval){ 0, 20000 };
	r = select(p[0] + 1, &rd, NULL, NULL, &tv);
	say("STICKY_TIMEOUTS select, 20 ms: %d, timeval left %ld.%06ld\n", r, (long)tv.tv_sec, (long)tv.tv_usec);
	ts = (struct timespec){ 0, 20000000 };
	rr = syscall(SYS_ppoll, &pf, 1, &ts, NULL, 8);
	say("STICKY_TIMEOUTS raw ppoll, 20 ms: %ld, timespec left %ld.%09ld\n", rr, (long)ts.tv_sec, ts.tv_nsec);
	FD_ZERO(&rd);
	FD_SET(p[0], &rd);
	ts = (struct timespec){ 0, 20000000 };
	rr = syscall(SYS_pselect6, p[0] + 1, &rd, NULL, NULL, &ts, NULL);
	say("STICKY_TIMEOUTS raw pselect6, 20 ms: %ld, timespec left %ld.%09ld\n", rr, (long)ts.tv_sec, ts.tv_nsec);
	syscall(SYS_personality, 0);
	return 0;
}

/* SIGUSR1 blocked and pending, then a wait whose mask unblocks it. */
static int mask_mode(int use_pselect)
{
	const char *name = use_pselect ? "pselect" : "ppoll";
	struct sigaction sa = { .sa_handler = handler };
	sigaction(SIGUSR1, &sa, NULL);
	sigset_t usr1, empty;
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	sigemptyset(&empty);
	sigprocmask(SIG_BLOCK, &usr1, NULL);
	int p[2];
	if (pipe(p))
		return 90;

	raise(SIGUSR1);
	struct pollfd pf = { p[0], POLLIN, 0 };
	struct timespec ts = { 2, 0 };
	fd_set rd;
	FD_ZERO(&rd);
	FD_SET(p[0], &rd);
	errno = 0;
	int r = use_pselect ? pselect(p[0] + 1, &rd, NULL, NULL, &ts, &empty) : ppoll(&pf, 1, &ts, &empty);
	int e = errno;
	sigset_t pend;
	sigpending(&pend);
	say("%s, nothing ready, SIGUSR1 pending and unblocked by its mask: %d %s, handler ran %d, blocked in the "
	    "handler %s, blocked again after %s, still pending %s\n",
	    name, r, errname(e), (int)hits, yesno(blocked_in_handler), yesno(is_blocked(SIGUSR1)),
	    yesno(sigismember(&pend, SIGUSR1)));

	hits = 0;
	raise(SIGUSR1);
	if (write(p[1], "x", 1) != 1)
		return 91;
	FD_ZERO(&rd);
	FD_SET(p[0], &rd);
	errno = 0;
	r = use_pselect ? pselect(p[0] + 1, &rd, NULL, NULL, &ts, &empty) : ppoll(&pf, 1, &ts, &empty);
	e = errno;
	sigpending(&pend);
	say("%s, fd ready, SIGUSR1 pending: %d %s, handler ran %d, still pending %s, blocked %s\n", name, r,
	    errname(e), (int)hits, yesno(sigismember(&pend, SIGUSR1)), yesno(is_blocked(SIGUSR1)));
	sigprocmask(SIG_UNBLOCK, &usr1, NULL);
	say("after unblocking: handler ran %d\n", (int)hits);

	/*
	 * A mask that blocks: the signal waits for the end of the call. The sender ends the call by writing
	 * the pipe after its kill, so no timeout races the sender's start (a fork under QEMU's software CPU
	 * took longer than the 80 ms timeout this once had).
	 */
	hits = 0;
	sigprocmask(SIG_UNBLOCK, &usr1, NULL);
	char buf[8];
	if (read(p[0], buf, sizeof buf) != 1)
		return 92;
	pid_t c = signal_when_asleep_then(SIGUSR1, p[1]);
	ts = (struct timespec){ 20, 0 };
	FD_ZERO(&rd);
	FD_SET(p[0], &rd);
	errno = 0;
	r = use_pselect ? pselect(p[0] + 1, &rd, NULL, NULL, &ts, &usr1) : ppoll(&pf, 1, &ts, &usr1);
	e = errno;
	say("%s with a mask blocking SIGUSR1 sent during the wait: %d %s (the fd the sender wrote after it), "
	    "handler ran %d by then\n",
	    name, r, errname(e), (int)hits);
	wait_child(c);
	say("after the call: handler ran %d\n", (int)hits);
	return 0;
}

static int mode_mask_wait(void)
{
	struct sigaction sa = { .sa_handler = handler };
	sigaction(SIGUSR2, &sa, NULL);
	sigset_t usr2, empty;
	sigemptyset(&usr2);
	sigaddset(&usr2, SIGUSR2);
	sigemptyset(&empty);
	sigprocmask(SIG_BLOCK, &usr2, NULL);
	int p[2];
	if (pipe(p))
		return 90;
	for (int k = 0; k < 2; k++) {
		hits = 0;
		pid_t c = signal_us_later(SIGUSR2, 30000);
		struct pollfd pf = { p[0], POLLIN, 0 };
		fd_set rd;
		FD_ZERO(&rd);
		FD_SET(p[0], &rd);
		errno = 0;
		int r = k ? pselect(p[0] + 1, &rd, NULL, NULL, NULL, &empty) : ppoll(&pf, 1, NULL, &empty);
		int e = errno;
		say("%s waiting forever, SIGUSR2 blocked but for its mask, sent 30 ms later: %d %s, handler ran %d, "
		    "blocked again %s\n",
		    k ? "pselect" : "ppoll", r, errname(e), (int)hits, yesno(is_blocked(SIGUSR2)));
		wait_child(c);
	}
	return 0;
}

static int mode_errors(void)
{
	int p[2];
	if (pipe(p))
		return 90;
	struct pollfd pf = { p[0], POLLIN, 0 };
	struct timespec ts = { 0, 0 };
	sigset_t empty;
	sigemptyset(&empty);
	errno = 0;
	long r = syscall(SYS_ppoll, &pf, 1, &ts, &empty, 4);
	say("ppoll, sigsetsize 4: %ld %s\n", r, errname(errno));
	errno = 0;
	r = syscall(SYS_ppoll, &pf, 1, &ts, NULL, 4);
	say("ppoll, no mask, sigsetsize 4: %ld %s\n", r, errname(errno));
	struct timespec neg = { -1, 0 };
	errno = 0;
	r = syscall(SYS_ppoll, &pf, 1, &neg, NULL, 8);
	say("ppoll, negative timeout: %ld %s\n", r, errname(errno));
	struct { const sigset_t *ss; size_t len; } sig = { &empty, 4 };
	fd_set rd;
	FD_ZERO(&rd);
	FD_SET(p[0], &rd);
	errno = 0;
	r = syscall(SYS_pselect6, p[0] + 1, &rd, NULL, NULL, &ts, &sig);
	say("pselect6, ss_len 4: %ld %s\n", r, errname(errno));
	errno = 0;
	r = syscall(SYS_poll, (void *)16, 1, 0);
	say("poll, bad pollfd pointer: %ld %s\n", r, errname(errno));
	errno = 0;
	r = syscall(SYS_select, p[0] + 1, (void *)16, NULL, NULL, &(struct timeval){ 0, 0 });
	say("select, bad fd_set pointer: %ld %s\n", r, errname(errno));
	return 0;
}

int main(int argc, char **argv)
{
	const char *m = argc > 1 ? argv[1] : "";
	alarm(20); /* a wait that never ends fails the run (SIGALRM) instead of hanging it */
	if (!strcmp(m, "ready"))
		return mode_ready();
	if (!strcmp(m, "select"))
		return mode_select();
	if (!strcmp(m, "timeout"))
		return mode_timeout();
	if (!strcmp(m, "ppoll-mask"))
		return mask_mode(0);
	if (!strcmp(m, "pselect-mask"))
		return mask_mode(1);
	if (!strcmp(m, "mask-wait"))
		return mode_mask_wait();
	if (!strcmp(m, "errors"))
		return mode_errors();
	say("usage: io_poll ready|select|timeout|ppoll-mask|pselect-mask|mask-wait|errors\n");
	return 2;
}

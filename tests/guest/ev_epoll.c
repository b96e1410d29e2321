/* ev_epoll: epoll_create/create1/ctl/wait/pwait/pwait2 on every kind of file.
 * usage: ev_epoll basic|lt-et|oneshot|exclusive|nested|kinds|eintr|pwait-mask|pwait2|hostile|closed|fork|dups
 *   basic       create/create1 flags and errors; ctl ADD/MOD/DEL and their errors (EEXIST, ENOENT, EPERM on a
 *               regular file, EINVAL for a bad op or epfd == fd); the data word comes back untouched
 *   lt-et       level-triggered events repeat while data is left; edge-triggered ones come once per new write
 *   oneshot     EPOLLONESHOT disarms after one event until EPOLL_CTL_MOD re-arms
 *   exclusive   EPOLLEXCLUSIVE accepted on ADD only, not with ONESHOT; an exclusive waiter in a child is woken
 *   nested      an epoll inside an epoll reports readiness; cycles are refused with ELOOP, self with EINVAL
 *   kinds       readiness on pipes, eventfd, socketpair, a TCP listener, timerfd and signalfd; HUP and RDHUP
 *   eintr       a blocked epoll_wait is interrupted by a signal: EINTR, even with SA_RESTART
 *   pwait-mask  epoll_pwait's sigmask: a pending signal it unblocks ends the wait (EINTR, handler ran),
 *               unless an fd is ready; the old mask is back after
 *   pwait2      epoll_pwait2's timespec timeout: expiry, NULL, bad nanoseconds
 *   hostile     bad pointers (EFAULT), maxevents <= 0 or too big (EINVAL), the epoll added to itself
 *   closed      a closed registered fd leaves the set unless a dup keeps the open file alive; EBADF
 *   fork        a child shares the epoll set (the same open file) with its parent
 * Prints what happened; the caller compares with the native run. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "evnet.h"

static volatile sig_atomic_t hits;

static void handler(int sig)
{
	(void)sig;
	hits++;
}

/* A handler for sig with or without SA_RESTART. */
static void on(int sig, int flags)
{
	struct sigaction sa = { .sa_handler = handler, .sa_flags = flags };
	sigemptyset(&sa.sa_mask);
	sigaction(sig, &sa, NULL);
}

/* The names of the bits in an epoll event mask. */
static const char *evs(uint32_t e)
{
	static char b[4][96];
	static int next;
	next = (next + 1) % 4;
	char *s = b[next];
	s[0] = 0;
	if (e & EPOLLIN) strcat(s, " IN");
	if (e & EPOLLOUT) strcat(s, " OUT");
	if (e & EPOLLPRI) strcat(s, " PRI");
	if (e & EPOLLERR) strcat(s, " ERR");
	if (e & EPOLLHUP) strcat(s, " HUP");
	if (e & EPOLLRDHUP) strcat(s, " RDHUP");
	if (!s[0]) strcat(s, " none");
	return s;
}

static int add(int ep, int fd, uint32_t events, uint64_t data)
{
	struct epoll_event ev = { .events = events, .data.u64 = data };
	return epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
}

/* epoll_wait for at most 8 events, printing the count and each event's mask and data. */
static int show_wait(const char *what, int ep, int timeout)
{
	struct epoll_event ev[8];
	int n = epoll_wait(ep, ev, 8, timeout);
	say("%s: %s", what, rs(n));
	for (int i = 0; i < n; i++)
		say(" [%s data %#llx]", evs(ev[i].events) + 1, (unsigned long long)ev[i].data.u64);
	say("\n");
	return n;
}

static int mode_basic(void)
{
	/* the raw syscall: some libcs check size themselves, some ignore it */
	say("epoll_create(0): %s\n", rs(syscall(SYS_epoll_create, 0)));
	say("epoll_create(-1): %s\n", rs(syscall(SYS_epoll_create, -1)));
	int a = syscall(SYS_epoll_create, 1);
	say("epoll_create(1): %s\n", a >= 0 ? "ok" : rs(a));
	say("epoll_create1(0x1234): %s\n", rs(epoll_create1(0x1234)));
	int ep = epoll_create1(EPOLL_CLOEXEC);
	say("epoll_create1(EPOLL_CLOEXEC): %s, FD_CLOEXEC %s\n", ep >= 0 ? "ok" : rs(ep),
	    yesno(fcntl(ep, F_GETFD) & FD_CLOEXEC));
	say("epoll_create1(0) FD_CLOEXEC: %s\n", yesno(fcntl(a, F_GETFD) & FD_CLOEXEC));

	int p[2];
	if (pipe(p))
		return 90;
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = 0xdeadbeefcafef00dULL };
	say("ADD read end: %s\n", rs(epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &ev)));
	say("ADD it again: %s\n", rs(epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &ev)));
	say("MOD write end, not in the set: %s\n", rs(epoll_ctl(ep, EPOLL_CTL_MOD, p[1], &ev)));
	say("DEL write end, not in the set: %s\n", rs(epoll_ctl(ep, EPOLL_CTL_DEL, p[1], &ev)));
	say("op 99: %s\n", rs(epoll_ctl(ep, 99, p[0], &ev)));
	say("ADD the epoll to itself: %s\n", rs(epoll_ctl(ep, EPOLL_CTL_ADD, ep, &ev)));
	say("epfd is a pipe: %s\n", rs(epoll_ctl(p[1], EPOLL_CTL_ADD, p[0], &ev)));
	say("fd 999 (not open): %s\n", rs(epoll_ctl(ep, EPOLL_CTL_ADD, 999, &ev)));
	say("epfd 999 (not open): %s\n", rs(epoll_ctl(999, EPOLL_CTL_ADD, p[0], &ev)));
	int f = open("/proc/self/exe", O_RDONLY);
	say("ADD a regular file: %s\n", rs(epoll_ctl(ep, EPOLL_CTL_ADD, f, &ev)));
	say("DEL with a NULL event: %s\n", rs(epoll_ctl(ep, EPOLL_CTL_DEL, p[0], NULL)));
	say("DEL again: %s\n", rs(epoll_ctl(ep, EPOLL_CTL_DEL, p[0], NULL)));
	say("ADD with a NULL event: %s\n", rs(epoll_ctl(ep, EPOLL_CTL_ADD, p[0], NULL)));
	ev.events = EPOLLIN;
	say("ADD again: %s\n", rs(epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &ev)));

	show_wait("empty pipe, timeout 0", ep, 0);
	show_wait("empty pipe, timeout 30 ms", ep, 30);
	if (write(p[1], "ab", 2) != 2)
		return 91;
	show_wait("2 bytes in", ep, 0);
	ev.events = EPOLLIN | EPOLLOUT;
	ev.data.u64 = 0xffffffffffffffffULL;
	say("ADD write end, data all ones: %s\n", rs(epoll_ctl(ep, EPOLL_CTL_ADD, p[1], &ev)));
	ev.data.u64 = 0x0123456789abcdefULL;
	say("MOD read end, new data: %s\n", rs(epoll_ctl(ep, EPOLL_CTL_MOD, p[0], &ev)));
	show_wait("both ends", ep, 0);
	ev.events = 0;
	say("MOD read end, no events: %s\n", rs(epoll_ctl(ep, EPOLL_CTL_MOD, p[0], &ev)));
	show_wait("read end masked", ep, 0);
	close(f);
	return 0;
}

static int mode_lt_et(void)
{
	int p[2], ep = epoll_create1(0);
	if (pipe2(p, O_NONBLOCK))
		return 90;
	add(ep, p[0], EPOLLIN, 1);
	if (write(p[1], "abcd", 4) != 4)
		return 91;
	show_wait("level, 4 bytes", ep, 0);
	show_wait("level, again without reading", ep, 0);
	char c[8];
	say("read 2: %s\n", rs(read(p[0], c, 2)));
	show_wait("level, 2 bytes left", ep, 0);
	say("read rest: %s\n", rs(read(p[0], c, 8)));
	show_wait("level, drained", ep, 0);

	int q[2], et = epoll_create1(0);
	if (pipe2(q, O_NONBLOCK))
		return 92;
	add(et, q[0], EPOLLIN | EPOLLET, 2);
	show_wait("edge, empty", et, 0);
	if (write(q[1], "abcd", 4) != 4)
		return 93;
	show_wait("edge, 4 bytes", et, 0);
	show_wait("edge, again without reading", et, 0);
	say("read 2: %s\n", rs(read(q[0], c, 2)));
	show_wait("edge, after a partial read", et, 0);
	if (write(q[1], "e", 1) != 1)
		return 94;
	show_wait("edge, one more byte written", et, 0);
	show_wait("edge, again", et, 0);
	say("read all: %s\n", rs(read(q[0], c, 8)));
	say("then: %s\n", rs(read(q[0], c, 8)));

	/* EPOLLOUT edge on the write end: reported once, again when space frees after it was full */
	int w = epoll_create1(0);
	add(w, q[1], EPOLLOUT | EPOLLET, 3);
	show_wait("edge OUT, empty pipe", w, 0);
	show_wait("edge OUT, again", w, 0);
	char big[4096] = { 0 };
	long total = 0, r;
	while ((r = write(q[1], big, sizeof big)) > 0)
		total += r;
	say("filled the pipe: %s\n", total > 0 ? "yes" : "no");
	show_wait("edge OUT, full", w, 0);
	while (read(q[0], big, sizeof big) > 0)
		;
	show_wait("edge OUT, drained", w, 0);
	return 0;
}

static int mode_oneshot(void)
{
	int p[2], ep = epoll_create1(0);
	if (pipe(p))
		return 90;
	add(ep, p[0], EPOLLIN | EPOLLONESHOT, 7);
	if (write(p[1], "x", 1) != 1)
		return 91;
	show_wait("oneshot, data", ep, 0);
	show_wait("oneshot, fired once already", ep, 0);
	if (write(p[1], "y", 1) != 1)
		return 92;
	show_wait("oneshot, more data, still disarmed", ep, 0);
	struct epoll_event ev = { .events = EPOLLIN | EPOLLONESHOT, .data.u64 = 8 };
	say("MOD re-arms: %s\n", rs(epoll_ctl(ep, EPOLL_CTL_MOD, p[0], &ev)));
	show_wait("oneshot, re-armed", ep, 0);
	show_wait("oneshot, disarmed again", ep, 0);
	say("ADD while disarmed: %s\n", rs(add(ep, p[0], EPOLLIN, 9)));
	say("DEL while disarmed: %s\n", rs(epoll_ctl(ep, EPOLL_CTL_DEL, p[0], NULL)));
	return 0;
}

static int mode_exclusive(void)
{
	int ep = epoll_create1(0), e = eventfd(0, EFD_NONBLOCK);
	say("ADD EPOLLEXCLUSIVE: %s\n", rs(add(ep, e, EPOLLIN | EPOLLEXCLUSIVE, 1)));
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = 2 };
	say("MOD an exclusive entry: %s\n", rs(epoll_ctl(ep, EPOLL_CTL_MOD, e, &ev)));
	int e2 = eventfd(0, 0);
	say("ADD EXCLUSIVE|ONESHOT: %s\n", rs(add(ep, e2, EPOLLIN | EPOLLEXCLUSIVE | EPOLLONESHOT, 3)));
	int inner = epoll_create1(0);
	say("ADD an epoll with EXCLUSIVE: %s\n", rs(add(ep, inner, EPOLLIN | EPOLLEXCLUSIVE, 4)));
	say("ADD it without EXCLUSIVE: %s\n", rs(add(ep, e2, EPOLLIN, 5)));
	ev.events = EPOLLIN | EPOLLEXCLUSIVE;
	ev.data.u64 = 6;
	say("MOD it with EXCLUSIVE: %s\n", rs(epoll_ctl(ep, EPOLL_CTL_MOD, e2, &ev)));

	/* two children each wait on their own exclusive epoll of the same eventfd; one write wakes at least one */
	int res[2];
	if (pipe(res))
		return 90;
	pid_t kids[2];
	for (int i = 0; i < 2; i++) {
		kids[i] = fork();
		if (kids[i] == 0) {
			int mine = epoll_create1(0);
			add(mine, e, EPOLLIN | EPOLLEXCLUSIVE, 10 + i);
			struct epoll_event got;
			int n = epoll_wait(mine, &got, 1, 3000);
			char c = n == 1 ? 'w' : 't';
			if (write(res[1], &c, 1) != 1)
				_exit(3);
			_exit(0);
		}
	}
	usleep(200000);
	uint64_t one = 1;
	if (write(e, &one, 8) != 8)
		return 91;
	int woken = 0;
	for (int i = 0; i < 2; i++) {
		char c;
		if (read(res[0], &c, 1) == 1 && c == 'w')
			woken++;
		wait_child(kids[i]);
	}
	say("exclusive waiters woken by one write: at least one %s\n", yesno(woken >= 1));
	return 0;
}

static int mode_nested(void)
{
	int p[2], outer = epoll_create1(0), inner = epoll_create1(0);
	if (pipe(p))
		return 90;
	say("inner ADD pipe: %s\n", rs(add(inner, p[0], EPOLLIN, 1)));
	say("outer ADD inner: %s\n", rs(add(outer, inner, EPOLLIN, 2)));
	show_wait("outer, pipe empty", outer, 0);
	if (write(p[1], "x", 1) != 1)
		return 91;
	show_wait("outer, pipe has data", outer, 0);
	show_wait("inner, pipe has data", inner, 0);
	say("inner ADD outer (a cycle): %s\n", rs(add(inner, outer, EPOLLIN, 3)));
	say("outer ADD outer: %s\n", rs(add(outer, outer, EPOLLIN, 4)));
	/* a chain deeper than EP_MAX_NESTS (4) is refused */
	int chain[7];
	chain[0] = inner;
	int deepest = 0;
	for (int i = 1; i < 7; i++) {
		chain[i] = epoll_create1(0);
		int r = add(chain[i], chain[i - 1], EPOLLIN, 100 + i);
		say("chain level %d: %s\n", i, rs(r));
		if (r)
			break;
		deepest = i;
	}
	say("deepest chain level accepted: %d\n", deepest);
	/* a blocked outer wait wakes when the inner one becomes ready */
	char c;
	if (read(p[0], &c, 1) != 1)
		return 92;
	pid_t k = fork();
	if (k == 0) {
		usleep(100000);
		if (write(p[1], "z", 1) != 1)
			_exit(3);
		_exit(0);
	}
	show_wait("outer, blocked until a child writes", outer, 5000);
	say("child: exit %d\n", wait_child(k));
	return 0;
}

static int mode_kinds(void)
{
	int ep = epoll_create1(0);

	int p[2];
	if (pipe(p))
		return 90;
	add(ep, p[1], EPOLLOUT, 0x10);
	show_wait("pipe write end", ep, 0);
	epoll_ctl(ep, EPOLL_CTL_DEL, p[1], NULL);
	add(ep, p[0], EPOLLIN | EPOLLRDHUP, 0x11);
	close(p[1]);
	show_wait("pipe read end, writer closed", ep, 0);
	epoll_ctl(ep, EPOLL_CTL_DEL, p[0], NULL);

	int e = eventfd(0, EFD_NONBLOCK);
	add(ep, e, EPOLLIN, 0x20);
	show_wait("eventfd 0", ep, 0);
	uint64_t v = 3;
	if (write(e, &v, 8) != 8)
		return 91;
	show_wait("eventfd 3", ep, 0);
	epoll_ctl(ep, EPOLL_CTL_DEL, e, NULL);

	int sv[2];
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
		say("socketpair: %s\n", rs(-1));
	add(ep, sv[0], EPOLLIN | EPOLLRDHUP, 0x30);
	show_wait("socketpair, nothing sent", ep, 0);
	if (write(sv[1], "hi", 2) != 2)
		say("socketpair write failed\n");
	show_wait("socketpair, 2 bytes", ep, 0);
	shutdown(sv[1], SHUT_WR);
	show_wait("socketpair, peer shut down writing", ep, 0);
	close(sv[1]);
	show_wait("socketpair, peer closed", ep, 0);
	epoll_ctl(ep, EPOLL_CTL_DEL, sv[0], NULL);

	int l = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t al = sizeof a;
	bind(l, (struct sockaddr *)&a, sizeof a);
	listen(l, 4);
	getsockname(l, (struct sockaddr *)&a, &al);
	say("tcp listener: %s\n", rs(add(ep, l, EPOLLIN, 0x40)));
	show_wait("tcp listener, no client", ep, 0);
	int c = socket(AF_INET, SOCK_STREAM, 0);
	say("connect: %s\n", rs(connect(c, (struct sockaddr *)&a, sizeof a)));
	show_wait("tcp listener, a client connected", ep, 1000);
	epoll_ctl(ep, EPOLL_CTL_DEL, l, NULL);
	int s = accept(l, NULL, NULL);
	add(ep, c, EPOLLOUT, 0x41);
	show_wait("tcp client", ep, 0);
	epoll_ctl(ep, EPOLL_CTL_DEL, c, NULL);
	add(ep, s, EPOLLIN | EPOLLRDHUP, 0x42);
	close(c);
	show_wait("tcp server side, client closed", ep, 1000);
	epoll_ctl(ep, EPOLL_CTL_DEL, s, NULL);

	int t = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK);
	say("timerfd: %s\n", rs(add(ep, t, EPOLLIN, 0x50)));
	show_wait("timerfd, disarmed", ep, 0);
	struct itimerspec its = { .it_value = { 0, 20 * 1000 * 1000 } };
	timerfd_settime(t, 0, &its, NULL);
	show_wait("timerfd, 20 ms, blocking wait", ep, 5000);
	epoll_ctl(ep, EPOLL_CTL_DEL, t, NULL);

	sigset_t m;
	sigemptyset(&m);
	sigaddset(&m, SIGUSR1);
	sigprocmask(SIG_BLOCK, &m, NULL);
	int sf = signalfd(-1, &m, SFD_NONBLOCK);
	say("signalfd: %s\n", rs(add(ep, sf, EPOLLIN, 0x60)));
	show_wait("signalfd, nothing pending", ep, 0);
	kill(getpid(), SIGUSR1);
	show_wait("signalfd, SIGUSR1 pending", ep, 0);
	struct signalfd_siginfo si;
	long got = read(sf, &si, sizeof si);
	say("read signalfd: %s signo %s\n", rs(got), si.ssi_signo == SIGUSR1 ? "SIGUSR1" : "?");
	show_wait("signalfd, consumed", ep, 0);
	return 0;
}

static int mode_eintr(void)
{
	int p[2], ep = epoll_create1(0);
	if (pipe(p))
		return 90;
	add(ep, p[0], EPOLLIN, 1);
	struct epoll_event ev;
	on(SIGUSR1, 0);
	pid_t k = signal_when_asleep(SIGUSR1);
	int r = epoll_wait(ep, &ev, 1, -1);
	say("epoll_wait forever, SIGUSR1 without SA_RESTART: %s, handler ran %d\n", rs(r), (int)hits);
	wait_child(k);
	on(SIGUSR1, SA_RESTART);
	hits = 0;
	k = signal_when_asleep(SIGUSR1);
	r = epoll_wait(ep, &ev, 1, -1);
	say("epoll_wait forever, SIGUSR1 with SA_RESTART: %s, handler ran %d\n", rs(r), (int)hits);
	wait_child(k);
	hits = 0;
	k = signal_when_asleep(SIGUSR1);
	r = epoll_wait(ep, &ev, 1, 5000);
	say("epoll_wait 5 s, SIGUSR1 with SA_RESTART: %s, handler ran %d\n", rs(r), (int)hits);
	wait_child(k);
	/* a signal that is ignored does not interrupt; the wait ends by its timeout */
	signal(SIGUSR2, SIG_IGN);
	k = signal_us_later(SIGUSR2, 50000);
	r = epoll_wait(ep, &ev, 1, 400);
	say("epoll_wait 400 ms, SIGUSR2 ignored: %s\n", rs(r));
	wait_child(k);
	return 0;
}

static int is_blocked(int sig)
{
	sigset_t cur;
	sigprocmask(SIG_BLOCK, NULL, &cur);
	return sigismember(&cur, sig);
}

static int is_pending(int sig)
{
	sigset_t s;
	sigpending(&s);
	return sigismember(&s, sig);
}

static int mode_pwait_mask(void)
{
	int p[2], ep = epoll_create1(0);
	if (pipe(p))
		return 90;
	add(ep, p[0], EPOLLIN, 1);
	on(SIGUSR1, 0);
	sigset_t block, empty;
	sigemptyset(&block);
	sigaddset(&block, SIGUSR1);
	sigemptyset(&empty);
	sigprocmask(SIG_BLOCK, &block, NULL);
	kill(getpid(), SIGUSR1);
	struct epoll_event ev;
	int r = epoll_pwait(ep, &ev, 1, 5000, &empty);
	say("epoll_pwait, nothing ready, SIGUSR1 pending, unblocked by its mask: %s, handler ran %d, blocked after %s\n",
	    rs(r), (int)hits, yesno(is_blocked(SIGUSR1)));
	hits = 0;
	kill(getpid(), SIGUSR1);
	if (write(p[1], "x", 1) != 1)
		return 91;
	r = epoll_pwait(ep, &ev, 1, 5000, &empty);
	say("epoll_pwait, fd ready, SIGUSR1 pending: %s, handler ran %d, still pending %s, blocked %s\n", rs(r),
	    (int)hits, yesno(is_pending(SIGUSR1)), yesno(is_blocked(SIGUSR1)));
	sigprocmask(SIG_UNBLOCK, &block, NULL);
	say("unblocked by hand: handler ran %d\n", (int)hits);
	char c;
	if (read(p[0], &c, 1) != 1)
		return 92;
	/* a signal sent during the wait, unblocked only by the wait's mask */
	sigprocmask(SIG_BLOCK, &block, NULL);
	hits = 0;
	pid_t k = signal_us_later(SIGUSR1, 100000);
	r = epoll_pwait(ep, &ev, 1, -1, &empty);
	say("epoll_pwait forever, SIGUSR1 sent meanwhile: %s, handler ran %d, blocked again %s\n", rs(r), (int)hits,
	    yesno(is_blocked(SIGUSR1)));
	wait_child(k);
	/* a mask that blocks it: the signal stays pending and the wait times out */
	sigprocmask(SIG_UNBLOCK, &block, NULL);
	hits = 0;
	k = signal_us_later(SIGUSR1, 50000);
	r = epoll_pwait(ep, &ev, 1, 400, &block);
	say("epoll_pwait 400 ms, its mask blocks SIGUSR1 sent meanwhile: %s, handler ran during the wait %s\n", rs(r),
	    yesno(hits && r != 0));
	wait_child(k);
	say("after the wait: handler ran %d\n", (int)hits);
	say("bad sigsetsize: %s\n", rs(syscall(SYS_epoll_pwait, ep, &ev, 1, 0, &empty, 4)));
	say("NULL sigmask, timeout 0: %s\n", rs(syscall(SYS_epoll_pwait, ep, &ev, 1, 0, NULL, 8)));
	return 0;
}

#ifndef SYS_epoll_pwait2
#define SYS_epoll_pwait2 441
#endif

static int mode_pwait2(void)
{
	int p[2], ep = epoll_create1(0);
	if (pipe(p))
		return 90;
	add(ep, p[0], EPOLLIN, 0xabc);
	struct epoll_event ev;
	struct timespec ts = { 0, 30 * 1000 * 1000 };
	say("pwait2 30 ms, nothing ready: %s\n", rs(syscall(SYS_epoll_pwait2, ep, &ev, 1, &ts, NULL, 8)));
	struct timespec bad = { 0, 1000000000L };
	say("pwait2 tv_nsec 1e9: %s\n", rs(syscall(SYS_epoll_pwait2, ep, &ev, 1, &bad, NULL, 8)));
	struct timespec neg = { -1, 0 };
	say("pwait2 tv_sec -1: %s\n", rs(syscall(SYS_epoll_pwait2, ep, &ev, 1, &neg, NULL, 8)));
	say("pwait2 bad timespec pointer: %s\n", rs(syscall(SYS_epoll_pwait2, ep, &ev, 1, (void *)8, NULL, 8)));
	pid_t k = fork();
	if (k == 0) {
		usleep(100000);
		if (write(p[1], "x", 1) != 1)
			_exit(3);
		_exit(0);
	}
	ev.data.u64 = 0;
	long r = syscall(SYS_epoll_pwait2, ep, &ev, 1, NULL, NULL, 8);
	say("pwait2 NULL timeout, a child writes: %s data %#llx\n", rs(r), (unsigned long long)ev.data.u64);
	wait_child(k);
	struct timespec zero = { 0, 0 };
	say("pwait2 zero timeout, data ready: %s\n", rs(syscall(SYS_epoll_pwait2, ep, &ev, 1, &zero, NULL, 8)));
	sigset_t empty;
	sigemptyset(&empty);
	on(SIGUSR1, 0);
	sigset_t block;
	sigemptyset(&block);
	sigaddset(&block, SIGUSR1);
	char c;
	if (read(p[0], &c, 1) != 1)
		return 91;
	sigprocmask(SIG_BLOCK, &block, NULL);
	kill(getpid(), SIGUSR1);
	struct timespec five = { 5, 0 };
	r = syscall(SYS_epoll_pwait2, ep, &ev, 1, &five, &empty, 8);
	say("pwait2 5 s, SIGUSR1 pending, unblocked by its mask: %s, handler ran %d\n", rs(r), (int)hits);
	return 0;
}

static int mode_hostile(void)
{
	int p[2], ep = epoll_create1(0);
	if (pipe(p))
		return 90;
	add(ep, p[0], EPOLLIN, 1);
	if (write(p[1], "x", 1) != 1)
		return 91;
	struct epoll_event ev[2];
	/* a writable page, then a PROT_NONE one, then a read-only one */
	char *pg = mmap(NULL, 3 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	mprotect(pg + 4096, 4096, PROT_NONE);
	mprotect(pg + 8192, 4096, PROT_READ);
	void *none = pg + 4096, *ro = pg + 8192;
	say("wait, events in a PROT_NONE page: %s\n", rs(epoll_wait(ep, none, 2, 0)));
	say("wait, events read-only: %s\n", rs(epoll_wait(ep, ro, 2, 0)));
	say("wait, events a kernel address: %s\n", rs(epoll_wait(ep, (void *)0xffff880000000000UL, 2, 0)));
	say("wait, events NULL: %s\n", rs(syscall(SYS_epoll_wait, ep, NULL, 2, 0)));
	say("wait, the event straddles into PROT_NONE: %s\n", rs(epoll_wait(ep, (void *)(pg + 4096 - 6), 2, 0)));
	say("wait, 1 event fits before PROT_NONE, 2 asked: %s\n", rs(epoll_wait(ep, (void *)(pg + 4096 - 12), 2, 0)));
	say("wait, maxevents 0: %s\n", rs(syscall(SYS_epoll_wait, ep, ev, 0, 0)));
	say("wait, maxevents -1: %s\n", rs(syscall(SYS_epoll_wait, ep, ev, -1, 0)));
	say("wait, maxevents INT_MAX: %s\n", rs(syscall(SYS_epoll_wait, ep, ev, INT_MAX, 0)));
	say("wait, maxevents INT_MAX/12+1: %s\n", rs(syscall(SYS_epoll_wait, ep, ev, INT_MAX / 12 + 1, 0)));
	say("wait on a pipe fd: %s\n", rs(epoll_wait(p[0], ev, 2, 0)));
	say("wait on fd -1: %s\n", rs(epoll_wait(-1, ev, 2, 0)));
	say("ctl MOD, event in a PROT_NONE page: %s\n", rs(epoll_ctl(ep, EPOLL_CTL_MOD, p[0], none)));
	say("ctl DEL, event in a PROT_NONE page (not read): %s\n", rs(epoll_ctl(ep, EPOLL_CTL_DEL, p[0], none)));
	say("ctl ADD, event read-only: %s\n", rs(epoll_ctl(ep, EPOLL_CTL_ADD, p[0], ro)));
	say("ctl ADD, event a kernel address: %s\n", rs(epoll_ctl(ep, EPOLL_CTL_ADD, p[1], (void *)0xffff880000000000UL)));
	say("ctl ADD the epoll to itself: %s\n", rs(add(ep, ep, EPOLLIN, 2)));
	say("ctl ADD fd -1: %s\n", rs(add(ep, -1, EPOLLIN, 3)));
	say("ctl ADD EPOLLWAKEUP and unknown bits: %s\n", rs(add(ep, p[1], EPOLLOUT | 0x00ff0000, 4)));
	say("still works: %s\n", rs(epoll_wait(ep, ev, 2, 0)));
	say("pwait, bad sigmask pointer: %s\n", rs(syscall(SYS_epoll_pwait, ep, ev, 2, 0, (void *)8, 8)));
	say("create1 many: ");
	int n = 0;
	for (int i = 0; i < 200; i++) {
		int e = epoll_create1(EPOLL_CLOEXEC);
		if (e < 0)
			break;
		n++;
		close(e);
	}
	say("%d opened and closed\n", n);
	return 0;
}

static int mode_closed(void)
{
	int p[2], ep = epoll_create1(0);
	if (pipe(p))
		return 90;
	add(ep, p[0], EPOLLIN, 0x51);
	if (write(p[1], "x", 1) != 1)
		return 91;
	show_wait("registered", ep, 0);
	int d = dup(p[0]);
	close(p[0]);
	show_wait("fd closed, a dup keeps the file open: still reported", ep, 0);
	say("DEL the closed fd number: %s\n", rs(epoll_ctl(ep, EPOLL_CTL_DEL, p[0], NULL)));
	say("DEL the dup (never added): %s\n", rs(epoll_ctl(ep, EPOLL_CTL_DEL, d, NULL)));
	close(d);
	show_wait("dup closed too: gone from the set", ep, 0);
	/* the fd number reused for another file is a new registration */
	int q[2];
	if (pipe(q))
		return 92;
	say("ADD the reused number: %s\n", rs(add(ep, q[0], EPOLLIN, 0x52)));
	close(q[0]);
	show_wait("closed, no dup", ep, 0);
	int ep2 = dup(ep);
	close(ep);
	say("wait on a dup of the epoll: %s\n", rs(epoll_wait(ep2, (struct epoll_event[1]){}, 1, 0)));
	say("wait on the closed epoll: %s\n", rs(epoll_wait(ep, (struct epoll_event[1]){}, 1, 0)));
	int gone = q[1];
	close(q[1]);
	say("ctl ADD a closed fd: %s\n", rs(add(ep2, gone, EPOLLIN, 0x53)));
	return 0;
}

/*
 * One open file under two fd numbers (a dup, as Go's FileListener makes): two registrations, each with its
 * own data word and its own MOD/DEL; closing one number keeps both while the file is open; closing the
 * last fd of the file takes both out; an epoll closed with registrations of a live file frees nothing of it.
 */
static int mode_dups(void)
{
	int p[2], ep = epoll_create1(0);
	if (pipe(p))
		return 90;
	int d = dup(p[0]);
	say("ADD the fd: %s\n", rs(add(ep, p[0], EPOLLIN, 0x71)));
	say("ADD its dup: %s\n", rs(add(ep, d, EPOLLIN, 0x72)));
	say("ADD the dup again: %s\n", rs(add(ep, d, EPOLLIN, 0x73)));
	if (write(p[1], "x", 1) != 1)
		return 91;
	show_wait("both report", ep, 0);
	struct epoll_event ev = { .events = EPOLLOUT, .data.u64 = 0x74 };
	say("MOD the dup to OUT: %s\n", rs(epoll_ctl(ep, EPOLL_CTL_MOD, d, &ev)));
	show_wait("only the fd reports IN", ep, 0);
	say("DEL the dup: %s\n", rs(epoll_ctl(ep, EPOLL_CTL_DEL, d, NULL)));
	say("DEL the dup again: %s\n", rs(epoll_ctl(ep, EPOLL_CTL_DEL, d, NULL)));
	say("ADD the dup back: %s\n", rs(add(ep, d, EPOLLIN, 0x75)));
	close(p[0]);
	show_wait("the fd closed, the dup open: both still report", ep, 0);
	int e = dup(d);
	close(d);
	show_wait("every fd of the first numbers closed, a third keeps the file: both still report", ep, 0);
	close(e);
	show_wait("the file closed: none", ep, 0);
	int q[2];
	if (pipe(q))
		return 92;
	int ep2 = epoll_create1(0);
	add(ep2, q[0], EPOLLIN, 0x76);
	int d2 = dup(q[0]);
	add(ep2, d2, EPOLLIN, 0x77);
	close(ep2);
	if (write(q[1], "y", 1) != 1)
		return 93;
	char c;
	say("the pipe after its epoll closed: read %s\n", rs((int)read(d2, &c, 1)));
	say("ADD the pipe to the first epoll: %s\n", rs(add(ep, q[0], EPOLLIN, 0x78)));
	return 0;
}

static int mode_fork(void)
{
	int p[2], ep = epoll_create1(0);
	if (pipe(p))
		return 90;
	add(ep, p[0], EPOLLIN, 0x61);
	pid_t k = fork();
	if (k == 0) {
		/* the child adds the write end to the shared set and waits for the parent's byte */
		add(ep, p[1], EPOLLOUT, 0x62);
		show_wait("child: shared set", ep, 5000);
		_exit(0);
	}
	say("child: exit %d\n", wait_child(k));
	show_wait("parent: the child's registration is in the shared set", ep, 0);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct mode modes[] = {
		{ "basic", mode_basic },	 { "lt-et", mode_lt_et },   { "oneshot", mode_oneshot },
		{ "exclusive", mode_exclusive }, { "nested", mode_nested }, { "kinds", mode_kinds },
		{ "eintr", mode_eintr },	 { "pwait-mask", mode_pwait_mask }, { "pwait2", mode_pwait2 },
		{ "hostile", mode_hostile },	 { "closed", mode_closed }, { "fork", mode_fork },
		{ "dups", mode_dups },
	};
	return run_mode("ev_epoll", modes, sizeof modes / sizeof modes[0], argc, argv);
}

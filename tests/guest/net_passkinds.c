/*
 * SCM_RIGHTS of the file kinds the host cannot carry for pvx (issue 13; sentry/fs/fd_pass.c): eventfd,
 * timerfd, epoll, signalfd, inotify and a /proc file, passed to a forked child and to the same process.
 *   kinds     each kind passed; the receiver's fd is the same open file (counter, timer, registrations,
 *             events, offset and flags shared)
 *   inflight  send messages of 64 eventfds without receiving them until the send fails (at most 20), then
 *             close the socket pair and send again (sandbox-only expectations: root natively is not limited)
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "evnet.h"

static long send_fd(int s, int fd)
{
	char c = 'x';
	struct iovec iov = { &c, 1 };
	union {
		char b[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.b, .msg_controllen = sizeof(u.b) };
	struct cmsghdr *c0 = CMSG_FIRSTHDR(&m);
	c0->cmsg_level = SOL_SOCKET;
	c0->cmsg_type = SCM_RIGHTS;
	c0->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c0), &fd, sizeof(int));
	return sendmsg(s, &m, 0);
}

static int recv_fd(int s)
{
	char c;
	struct iovec iov = { &c, 1 };
	union {
		char b[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.b, .msg_controllen = sizeof(u.b) };
	if (recvmsg(s, &m, 0) < 0)
		return -1;
	struct cmsghdr *c0 = CMSG_FIRSTHDR(&m);
	if (!c0 || c0->cmsg_type != SCM_RIGHTS)
		return -2;
	int fd;
	memcpy(&fd, CMSG_DATA(c0), sizeof(int));
	return fd;
}

/* Pass fd to a child over sv, let it run fn on what it got, wait for it. */
static void in_child(int sv[2], int fd, void (*fn)(int))
{
	pid_t p = fork();
	if (p == 0) {
		int got = recv_fd(sv[1]);
		if (got < 0) {
			say("  child: recv %d\n", got);
			_exit(1);
		}
		fn(got);
		_exit(0);
	}
	long r = send_fd(sv[0], fd);
	int st;
	waitpid(p, &st, 0);
	say("  send: %s\n", rs(r));	/* after the child's lines, whatever order they ran in */
}

static void child_eventfd(int fd)
{
	uint64_t v = 5;
	say("  child: write 5: %s\n", rs(write(fd, &v, 8)));
}

static void child_timerfd(int fd)
{
	struct itimerspec cur;
	timerfd_gettime(fd, &cur);
	say("  child: armed, interval %ld s\n", (long)cur.it_interval.tv_sec);
}

static int wpipe = -1;
static void child_epoll(int fd)
{
	struct epoll_event e;
	write(wpipe, "z", 1);
	int n = epoll_wait(fd, &e, 1, 5000);
	say("  child: epoll_wait %d, data %lu\n", n, n > 0 ? (unsigned long)e.data.u64 : 0UL);
}

static void child_inotify(int fd)
{
	char buf[4096];
	int fl = fcntl(fd, F_GETFL);
	long n = read(fd, buf, sizeof buf);
	struct inotify_event *e = (struct inotify_event *)buf;
	say("  child: nonblocking %s, read %s, mask has IN_MODIFY %s\n", fl & O_NONBLOCK ? "yes" : "no",
	    n > 0 ? "events" : rs(n), n > 0 && (e->mask & IN_MODIFY) ? "yes" : "no");
}

static void child_signalfd(int fd)
{
	struct signalfd_siginfo si;
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, SIGUSR1);
	sigprocmask(SIG_BLOCK, &s, NULL);
	raise(SIGUSR1);
	long n = read(fd, &si, sizeof si);
	say("  child: read %s, signal %d (its own, SIGUSR1 %d)\n", rs(n), n > 0 ? (int)si.ssi_signo : 0, SIGUSR1);
}

static void child_proc(int fd)
{
	say("  child: offset %ld\n", (long)lseek(fd, 0, SEEK_CUR));
	char b[4];
	say("  child: read 4: %s\n", rs(read(fd, b, 4)));
}

static int mode_kinds(void)
{
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0)
		return 1;
	uint64_t v;

	say("eventfd\n");
	int efd = eventfd(1, 0);
	in_child(sv, efd, child_eventfd);
	read(efd, &v, 8);
	say("  parent reads %lu (1 + the child's 5)\n", (unsigned long)v);

	say("timerfd\n");
	int tfd = timerfd_create(CLOCK_MONOTONIC, 0);
	struct itimerspec it = { { 7, 0 }, { 100, 0 } };
	timerfd_settime(tfd, 0, &it, NULL);
	in_child(sv, tfd, child_timerfd);

	say("epoll\n");
	int ep = epoll_create1(0), pp[2];
	pipe(pp);
	wpipe = pp[1];
	struct epoll_event e = { .events = EPOLLIN, .data.u64 = 4242 };
	epoll_ctl(ep, EPOLL_CTL_ADD, pp[0], &e);
	in_child(sv, ep, child_epoll);

	say("inotify\n");
	int in = inotify_init1(IN_NONBLOCK);
	int f = open("passkinds.tmp", O_CREAT | O_WRONLY | O_TRUNC, 0644);
	inotify_add_watch(in, "passkinds.tmp", IN_MODIFY);
	write(f, "x", 1);
	in_child(sv, in, child_inotify);
	unlink("passkinds.tmp");

	say("signalfd\n");
	sigset_t ss;
	sigemptyset(&ss);
	sigaddset(&ss, SIGUSR1);
	int sfd = signalfd(-1, &ss, SFD_NONBLOCK);
	in_child(sv, sfd, child_signalfd);
	struct signalfd_siginfo si;
	say("  parent: read %s (nothing pending for it)\n", rs(read(sfd, &si, sizeof si)));

	say("/proc/self/stat\n");
	int pf = open("/proc/self/stat", O_RDONLY);
	char b[8];
	read(pf, b, 3);
	in_child(sv, pf, child_proc);
	say("  parent: offset after the child's read %ld\n", (long)lseek(pf, 0, SEEK_CUR));

	say("to itself, the sender's fd closed before the receive\n");
	int e2 = eventfd(3, 0);
	say("  send: %s\n", rs(send_fd(sv[0], e2)));
	close(e2);
	int got = recv_fd(sv[1]);
	say("  received: %s, read %s", got >= 0 ? "an fd" : rs(got), rs(read(got, &v, 8)));
	say(" = %lu\n", (unsigned long)v);
	return 0;
}

/* Send one message carrying n copies of fd. */
static long send_fds(int s, int fd, int n)
{
	char c = 'x';
	struct iovec iov = { &c, 1 };
	static union {
		char b[CMSG_SPACE(253 * sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.b,
			    .msg_controllen = CMSG_SPACE((size_t)n * sizeof(int)) };
	struct cmsghdr *c0 = CMSG_FIRSTHDR(&m);
	c0->cmsg_level = SOL_SOCKET;
	c0->cmsg_type = SCM_RIGHTS;
	c0->cmsg_len = CMSG_LEN((size_t)n * sizeof(int));
	for (int i = 0; i < n; i++)
		memcpy(CMSG_DATA(c0) + i * sizeof(int), &fd, sizeof(int));
	return sendmsg(s, &m, MSG_DONTWAIT);
}

static int mode_inflight(void)
{
	int sv[2];
	socketpair(AF_UNIX, SOCK_DGRAM, 0, sv);
	int e = eventfd(0, 0);
	int n = 0;
	long r = 0;
	/* 64 fds a message, a few messages: neither the socket buffer nor optmem is what stops it */
	while (n < 20 && (r = send_fds(sv[0], e, 64)) > 0)
		n++;
	say("sent %d messages of 64 fds, then %s\n", n, n < 20 ? rs(r) : "no error");
	close(sv[0]);
	close(sv[1]);
	socketpair(AF_UNIX, SOCK_DGRAM, 0, sv);
	say("after closing the pair, send: %s\n", rs(send_fd(sv[0], e)));
	int got = recv_fd(sv[1]);
	uint64_t v = 9;
	write(e, &v, 8);
	say("received: %s, it reads %s\n", got >= 0 ? "an fd" : rs(got), rs(read(got, &v, 8)));
	return 0;
}

static const struct mode modes[] = {
	{ "kinds", mode_kinds },
	{ "inflight", mode_inflight },
};

int main(int argc, char **argv)
{
	return run_mode("net_passkinds", modes, sizeof(modes) / sizeof(modes[0]), argc, argv);
}

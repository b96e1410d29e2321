/*
 * Socket answers LTP checks (issue 13: the LTP socket and epoll families, natively vs pvx).
 *   raw      socket()/socketpair() of SOCK_RAW with protocol 0: EPROTONOSUPPORT; a protocol past IPPROTO_MAX: EINVAL
 *   connect  a blocking connect, then again (EISCONN); one refused, then a bad family (EAFNOSUPPORT)
 *   levels   get/setsockopt at a level that is not the socket's: EOPNOTSUPP or ENOPROTOOPT as the IP layers say;
 *            MCAST_JOIN_GROUP is an option pvx passes (its answer depends on the network: not printed)
 *   opath    socket calls on an O_PATH fd: EBADF
 *   cmsg     SOL_SOCKET control messages on TCP: SCM_RIGHTS and SCM_CREDENTIALS ignored, others EINVAL
 *   excl     four processes, each blocked in epoll_wait on an epoll of its own holding one pipe with
 *            EPOLLEXCLUSIVE: one write wakes one of them
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "evnet.h"

#ifndef MCAST_JOIN_GROUP
#define MCAST_JOIN_GROUP 42
#endif

static int mode_raw(void)
{
	int sv[2];
	say("socket(INET, RAW, 0): %s\n", rs(socket(AF_INET, SOCK_RAW, 0)));
	say("socket(INET6, RAW, 0): %s\n", rs(socket(AF_INET6, SOCK_RAW, 0)));
	say("socketpair(INET, RAW, 0): %s\n", rs(socketpair(AF_INET, SOCK_RAW, 0, sv)));
	say("socket(INET, STREAM, 300): %s\n", rs(socket(AF_INET, SOCK_STREAM, 300)));
	say("socket(INET, DGRAM, -1): %s\n", rs(socket(AF_INET, SOCK_DGRAM, -1)));
	return 0;
}

static int listener(struct sockaddr_in *a)
{
	int l = socket(AF_INET, SOCK_STREAM, 0);
	socklen_t len = sizeof(*a);
	*a = (struct sockaddr_in){ .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	bind(l, (struct sockaddr *)a, sizeof(*a));
	listen(l, 4);
	getsockname(l, (struct sockaddr *)a, &len);
	return l;
}

static int mode_connect(void)
{
	struct sockaddr_in a;
	int l = listener(&a);
	int c = socket(AF_INET, SOCK_STREAM, 0);
	say("connect: %s\n", rs(connect(c, (struct sockaddr *)&a, sizeof(a))));
	say("connect again: %s\n", rs(connect(c, (struct sockaddr *)&a, sizeof(a))));
	close(l);	/* its port is now closed: connects are refused */
	int d = socket(AF_INET, SOCK_STREAM, 0);
	say("connect to a closed port: %s\n", rs(connect(d, (struct sockaddr *)&a, sizeof(a))));
	struct sockaddr_in bad = a;
	bad.sin_family = 47;
	say("then with family 47: %s\n", rs(connect(d, (struct sockaddr *)&bad, sizeof(bad))));
	say("then again to the port: %s\n", rs(connect(d, (struct sockaddr *)&a, sizeof(a))));
	return 0;
}

static int mode_levels(void)
{
	int t4 = socket(AF_INET, SOCK_STREAM, 0), u4 = socket(AF_INET, SOCK_DGRAM, 0);
	int t6 = socket(AF_INET6, SOCK_STREAM, 0), u6 = socket(AF_INET6, SOCK_DGRAM, 0);
	int v = 1;
	socklen_t l = sizeof(v);
	say("tcp4 get level 500: %s\n", rs(getsockopt(t4, 500, SO_OOBINLINE, &v, &l)));
	say("tcp4 get IPPROTO_UDP: %s\n", rs(getsockopt(t4, IPPROTO_UDP, SO_OOBINLINE, &v, &l)));
	say("tcp4 get IPPROTO_IPV6: %s\n", rs(getsockopt(t4, IPPROTO_IPV6, IPV6_V6ONLY, &v, &l)));
	say("tcp4 set level 500: %s\n", rs(setsockopt(t4, 500, SO_OOBINLINE, &v, sizeof(v))));
	say("tcp4 get IP -1: %s\n", rs(getsockopt(t4, IPPROTO_IP, -1, &v, &l)));
	say("tcp4 get TCP -1: %s\n", rs(getsockopt(t4, IPPROTO_TCP, -1, &v, &l)));
	say("udp4 get IPPROTO_TCP: %s\n", rs(getsockopt(u4, IPPROTO_TCP, TCP_NODELAY, &v, &l)));
	say("udp4 set IPPROTO_TCP: %s\n", rs(setsockopt(u4, IPPROTO_TCP, TCP_NODELAY, &v, sizeof(v))));
	l = sizeof(v);
	say("tcp6 get IPPROTO_IP IP_TOS: %s\n", rs(getsockopt(t6, IPPROTO_IP, IP_TOS, &v, &l)));
	say("tcp6 get level 500: %s\n", rs(getsockopt(t6, 500, 1, &v, &l)));
	say("udp6 get IPPROTO_TCP: %s\n", rs(getsockopt(u6, IPPROTO_TCP, TCP_NODELAY, &v, &l)));
	struct group_req g = { 0 };
	struct sockaddr_in *ga = (struct sockaddr_in *)&g.gr_group;
	ga->sin_family = AF_INET;
	inet_pton(AF_INET, "224.0.0.251", &ga->sin_addr);
	long r = setsockopt(u4, IPPROTO_IP, MCAST_JOIN_GROUP, &g, sizeof(g));
	say("MCAST_JOIN_GROUP reached the IP layer: %s\n", r == 0 || errno != ENOPROTOOPT ? "yes" : "no");
	return 0;
}

static int mode_opath(void)
{
	int f = open(".", O_PATH);
	int v;
	socklen_t l = sizeof(v);
	say("accept: %s\n", rs(accept(f, NULL, NULL)));
	say("getsockopt: %s\n", rs(getsockopt(f, SOL_SOCKET, SO_TYPE, &v, &l)));
	say("send: %s\n", rs(send(f, "x", 1, 0)));
	say("shutdown: %s\n", rs(shutdown(f, SHUT_RDWR)));
	say("listen: %s\n", rs(listen(f, 1)));
	return 0;
}

static long send_cmsg(int s, int type, const void *data, size_t len)
{
	char c = 'x';
	struct iovec iov = { &c, 1 };
	union {
		char b[CMSG_SPACE(64)];
		struct cmsghdr align;
	} u;
	memset(&u, 0, sizeof(u));
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.b, .msg_controllen = CMSG_SPACE(len) };
	struct cmsghdr *h = CMSG_FIRSTHDR(&m);
	h->cmsg_level = SOL_SOCKET;
	h->cmsg_type = type;
	h->cmsg_len = CMSG_LEN(len);
	memcpy(CMSG_DATA(h), data, len);
	return sendmsg(s, &m, 0);
}

static int mode_cmsg(void)
{
	struct sockaddr_in a;
	int l = listener(&a);
	int c = socket(AF_INET, SOCK_STREAM, 0);
	connect(c, (struct sockaddr *)&a, sizeof(a));
	int fd = 0;
	struct ucred uc = { getpid(), getuid(), getgid() };
	int junk = 0;
	say("TCP sendmsg SCM_RIGHTS: %s\n", rs(send_cmsg(c, SCM_RIGHTS, &fd, sizeof(fd))));
	say("TCP sendmsg SCM_CREDENTIALS: %s\n", rs(send_cmsg(c, SCM_CREDENTIALS, &uc, sizeof(uc))));
	say("TCP sendmsg SOL_SOCKET type 999: %s\n", rs(send_cmsg(c, 999, &junk, sizeof(junk))));
	int s = accept(l, NULL, NULL);
	char buf[8];
	say("received: %s\n", rs(recv(s, buf, sizeof(buf), MSG_DONTWAIT)));
	return 0;
}

/* Wait (at most 10 s) until process pid sleeps. */
static void sleeping(pid_t pid)
{
	for (int i = 0; i < 1000 && !asleep(pid); i++)
		usleep(10000);
}

static int mode_excl(void)
{
	int p[2], woke[2];
	pipe(p);
	pipe(woke);
	pid_t kids[4];
	for (int i = 0; i < 4; i++) {
		if ((kids[i] = fork()) == 0) {
			int ep = epoll_create1(0);
			struct epoll_event e = { .events = EPOLLIN | EPOLLEXCLUSIVE };
			epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &e);
			if (epoll_wait(ep, &e, 1, 30000) == 1)
				write(woke[1], "w", 1);
			pause();
			_exit(0);
		}
		sleeping(kids[i]);
	}
	usleep(100000);
	write(p[1], "x", 1);
	/* the first waiter's report, 10 s at most (a fixed 500 ms could pass before a slow machine, QEMU's
	 * software CPU, woke anyone); then 500 ms for any others a wrong wake-up would add */
	struct pollfd wp = { .fd = woke[0], .events = POLLIN };
	poll(&wp, 1, 10000);
	usleep(500000);
	fcntl(woke[0], F_SETFL, O_NONBLOCK);
	char buf[8];
	long n = read(woke[0], buf, sizeof buf);
	say("one write woke %ld of 4\n", n < 0 ? 0L : n);
	for (int i = 0; i < 4; i++) {
		kill(kids[i], SIGKILL);
		waitpid(kids[i], NULL, 0);
	}
	return 0;
}

static const struct mode modes[] = {
	{ "raw", mode_raw },
	{ "connect", mode_connect },
	{ "levels", mode_levels },
	{ "opath", mode_opath },
	{ "cmsg", mode_cmsg },
	{ "excl", mode_excl },
};

int main(int argc, char **argv)
{
	return run_mode("net_errs", modes, sizeof(modes) / sizeof(modes[0]), argc, argv);
}

/* net_inet: AF_INET and AF_INET6 TCP and UDP over loopback only (127.0.0.1 and ::1).
 * usage: net_inet tcp4|tcp6|udp4|udp6|nonblock|flags|sockopt|ioctl|families|errors
 *        net_inet connect ADDR PORT   (connect, print the result and the first line read)
 *        net_inet serve ADDR          (listen on ADDR port 0, print "port N", answer one client, for the host side)
 *   tcp4/tcp6  socket, bind to port 0, getsockname, listen, connect, accept/accept4 (flags), getpeername,
 *              data both ways, 4 MiB through with partial reads/writes, shutdown, EOF, reset by a close with
 *              unread data (ECONNRESET), connect to a closed port (ECONNREFUSED), EADDRINUSE
 *   udp4/udp6  bind, sendto/recvfrom with addresses, connect, send/recv, MSG_TRUNC, sendmsg/recvmsg,
 *              sendmmsg/recvmmsg, a connected socket to a closed port (ECONNREFUSED)
 *   nonblock   non-blocking connect: EINPROGRESS, poll for POLLOUT, SO_ERROR; to a closed port: SO_ERROR
 *              ECONNREFUSED; accept on an empty non-blocking listener EAGAIN
 *   flags      MSG_PEEK, MSG_DONTWAIT, MSG_WAITALL (data in two parts), MSG_NOSIGNAL, MSG_OOB refused on UDP
 *   sockopt    SO_REUSEADDR, SO_REUSEPORT, SO_RCVBUF/SO_SNDBUF (doubled), TCP_NODELAY, SO_ERROR, SO_TYPE,
 *              SO_KEEPALIVE, SO_LINGER, SO_RCVTIMEO (EAGAIN), IPV6_V6ONLY, unknown options
 *   ioctl      FIONREAD/SIOCINQ on TCP and UDP, SIOCOUTQ, FIONBIO, FIONREAD on a listener
 *   families   other families and types: EAFNOSUPPORT, EPROTONOSUPPORT, ESOCKTNOSUPPORT
 *   errors     EADDRNOTAVAIL, EOPNOTSUPP, EINVAL, ENOTCONN, EPIPE, EFAULT on bad pointers and lengths
 * Prints what happened; the caller compares with the native run. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <net/if.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "evnet.h"

/* <linux/sockios.h> is not in musl's headers */
#ifndef SIOCINQ
#define SIOCINQ FIONREAD
#endif
#ifndef SIOCOUTQ
#define SIOCOUTQ 0x5411
#endif
#ifndef AF_DECnet
#define AF_DECnet 12
#endif
#ifndef AF_ECONET
#define AF_ECONET 19
#endif

static int fam = AF_INET;

/* a loopback address of the current family, port in host order */
static struct sockaddr_storage lo(int port, socklen_t *len)
{
	struct sockaddr_storage s = { 0 };
	if (fam == AF_INET) {
		struct sockaddr_in *a = (struct sockaddr_in *)&s;
		a->sin_family = AF_INET;
		a->sin_port = htons(port);
		a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		*len = sizeof *a;
	} else {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)&s;
		a->sin6_family = AF_INET6;
		a->sin6_port = htons(port);
		a->sin6_addr = in6addr_loopback;
		*len = sizeof *a;
	}
	return s;
}

static int port_of(const struct sockaddr_storage *s)
{
	return ntohs(s->ss_family == AF_INET ? ((const struct sockaddr_in *)s)->sin_port
					     : ((const struct sockaddr_in6 *)s)->sin6_port);
}

/* "loopback" when the address is 127.0.0.1 or ::1, else "other" */
static const char *which_addr(const struct sockaddr_storage *s)
{
	if (s->ss_family == AF_INET)
		return ((const struct sockaddr_in *)s)->sin_addr.s_addr == htonl(INADDR_LOOPBACK) ? "127.0.0.1" : "other";
	if (s->ss_family == AF_INET6)
		return !memcmp(&((const struct sockaddr_in6 *)s)->sin6_addr, &in6addr_loopback, 16) ? "::1" : "other";
	return "not inet";
}

/* a socket of the current family bound to loopback port 0; *port gets the port it got */
static int bound(int type, int *port)
{
	int s = socket(fam, type, 0);
	socklen_t l;
	struct sockaddr_storage a = lo(0, &l);
	if (s < 0 || bind(s, (struct sockaddr *)&a, l))
		return -1;
	l = sizeof a;
	getsockname(s, (struct sockaddr *)&a, &l);
	*port = port_of(&a);
	return s;
}

static int connect_to(int s, int port)
{
	socklen_t l;
	struct sockaddr_storage a = lo(port, &l);
	return connect(s, (struct sockaddr *)&a, l);
}

/* a listening TCP socket on loopback; *port gets its port */
static int listener(int *port)
{
	int l = bound(SOCK_STREAM, port);
	if (l >= 0 && listen(l, 8))
		return -1;
	return l;
}

/* a port nobody listens on: bound then closed */
static int closed_port(int type)
{
	int port, s = bound(type, &port);
	close(s);
	return port;
}

static void show_recv(const char *what, int fd, size_t n, int flags)
{
	char b[256];
	if (n > sizeof b - 1)
		n = sizeof b - 1;
	long r = recv(fd, b, n, flags);
	if (r >= 0) {
		b[(size_t)r < n ? (size_t)r : n] = 0;	/* MSG_TRUNC returns more than was copied */
		say("%s: %ld \"%s\"\n", what, r, b);
	} else {
		say("%s: %s\n", what, rs(r));
	}
}

/* wait up to 5 s for fd to be readable */
static void wait_in(int fd)
{
	struct pollfd p = { fd, POLLIN, 0 };
	poll(&p, 1, 5000);
}

static int mode_tcp(void)
{
	int port;
	int l = socket(fam, SOCK_STREAM, 0);
	say("socket: %s\n", l >= 0 ? "ok" : rs(l));
	socklen_t al;
	struct sockaddr_storage a = lo(0, &al);
	say("bind port 0: %s\n", rs(bind(l, (struct sockaddr *)&a, al)));
	socklen_t gl = sizeof a;
	say("getsockname: %s\n", rs(getsockname(l, (struct sockaddr *)&a, &gl)));
	port = port_of(&a);
	say("address %s, a port was chosen %s, length ok %s\n", which_addr(&a), yesno(port > 0), yesno(gl == al));
	say("listen: %s\n", rs(listen(l, 8)));
	int c = socket(fam, SOCK_STREAM, 0);
	say("connect: %s\n", rs(connect_to(c, port)));
	struct sockaddr_storage peer, cl;
	socklen_t pl = sizeof peer, cll = sizeof cl;
	int s = accept(l, (struct sockaddr *)&peer, &pl);
	say("accept: %s, peer address %s\n", s >= 0 ? "ok" : rs(s), which_addr(&peer));
	getsockname(c, (struct sockaddr *)&cl, &cll);
	say("accept's peer address is the client's name: %s\n", yesno(port_of(&peer) == port_of(&cl) && pl == cll));
	struct sockaddr_storage gp;
	socklen_t gpl = sizeof gp;
	long gr = getpeername(c, (struct sockaddr *)&gp, &gpl);
	say("getpeername of the client: %s, the listener's port %s\n", rs(gr), yesno(port_of(&gp) == port));
	say("send: %s\n", rs(send(c, "hello", 5, 0)));
	say("write: %s\n", rs(write(c, " tcp", 4)));
	wait_in(s);
	usleep(20000);
	show_recv("server recv", s, 100, MSG_WAITALL & 0);
	say("server write: %s\n", rs(write(s, "reply", 5)));
	show_recv("client read", c, 5, MSG_WAITALL);

	/* accept4 with flags */
	int c2 = socket(fam, SOCK_STREAM, 0);
	connect_to(c2, port);
	int s2 = accept4(l, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	say("accept4 NONBLOCK|CLOEXEC: %s, O_NONBLOCK %s, FD_CLOEXEC %s\n", s2 >= 0 ? "ok" : rs(s2),
	    yesno(fcntl(s2, F_GETFL) & O_NONBLOCK), yesno(fcntl(s2, F_GETFD) & FD_CLOEXEC));
	show_recv("recv on it, nothing sent", s2, 10, 0);
	int s3 = -1, c3 = socket(fam, SOCK_STREAM, 0);
	connect_to(c3, port);
	s3 = accept(l, NULL, NULL);
	say("accept without flags: O_NONBLOCK %s\n", yesno(fcntl(s3, F_GETFL) & O_NONBLOCK));

	/* 4 MiB through, the reader in a child */
	pid_t k = fork();
	if (k == 0) {
		static unsigned char buf[65536];
		long total = 0, r;
		int ok = 1;
		while ((r = read(s, buf, sizeof buf)) > 0) {
			for (long i = 0; i < r; i++)
				ok &= buf[i] == (unsigned char)((total + i) * 7);
			total += r;
		}
		say("child: received %ld bytes, pattern ok %s, then %s\n", total, yesno(ok), rs(r));
		_exit(0);
	}
	close(s);
	static unsigned char big[4 << 20];
	for (long i = 0; i < (long)sizeof big; i++)
		big[i] = (unsigned char)(i * 7);
	long sent = 0, r = 0;
	while (sent < (long)sizeof big && (r = write(c, big + sent, sizeof big - sent)) > 0)
		sent += r;
	long sh = shutdown(c, SHUT_WR);
	int st = wait_child(k);	/* the child prints first: then the order of lines is fixed */
	say("sent %ld bytes\n", sent);
	say("shutdown SHUT_WR: %s\n", rs(sh));
	say("child: exit %d\n", st);
	say("send after SHUT_WR: %s\n", rs(send(c, "x", 1, MSG_NOSIGNAL)));
	show_recv("client read, the child closed", c, 10, 0);
	say("shutdown again: %s\n", rs(shutdown(c, SHUT_RDWR)));

	/* a close with unread data resets the connection */
	say("send to the accept4 socket: %s\n", rs(send(c2, "unread", 6, 0)));
	usleep(50000);
	close(s2);
	wait_in(c2);
	show_recv("recv after the peer closed with unread data", c2, 10, 0);
	show_recv("recv again", c2, 10, 0);

	int c4 = socket(fam, SOCK_STREAM, 0);
	say("connect to a closed port: %s\n", rs(connect_to(c4, closed_port(SOCK_STREAM))));
	int l2 = socket(fam, SOCK_STREAM, 0);
	a = lo(port, &al);
	say("bind the listener's port: %s\n", rs(bind(l2, (struct sockaddr *)&a, al)));
	close(l);
	close(c3);
	close(s3);
	return 0;
}

static int mode_tcp4(void)
{
	fam = AF_INET;
	return mode_tcp();
}

static int mode_tcp6(void)
{
	fam = AF_INET6;
	return mode_tcp();
}

static int mode_udp(void)
{
	int pa, pb;
	int a = bound(SOCK_DGRAM, &pa), b = bound(SOCK_DGRAM, &pb);
	say("two bound UDP sockets: %s\n", yesno(a >= 0 && b >= 0 && pa != pb));
	socklen_t l;
	struct sockaddr_storage to = lo(pa, &l), from;
	say("sendto a: %s\n", rs(sendto(b, "datagram one", 12, 0, (struct sockaddr *)&to, l)));
	say("sendto a, empty: %s\n", rs(sendto(b, "", 0, 0, (struct sockaddr *)&to, l)));
	char buf[64] = { 0 };
	socklen_t fl = sizeof from;
	wait_in(a);
	long r = recvfrom(a, buf, sizeof buf - 1, 0, (struct sockaddr *)&from, &fl);
	say("recvfrom: %s \"%s\" from %s, b's port %s\n", rs(r), buf, which_addr(&from), yesno(port_of(&from) == pb));
	show_recv("recv the empty datagram", a, 10, 0);
	say("send unconnected: %s\n", rs(send(a, "x", 1, 0)));
	say("connect a to b: %s\n", rs(connect_to(a, pb)));
	say("send connected: %s\n", rs(send(a, "truncated", 9, 0)));
	wait_in(b);
	show_recv("recv 4 with MSG_TRUNC", b, 4, MSG_TRUNC);

	/* sendmsg with two iovecs, recvmsg with two */
	struct iovec iv[2] = { { "gather", 6 }, { "ed", 2 } };
	struct msghdr mh = { .msg_iov = iv, .msg_iovlen = 2 };
	say("sendmsg 2 iovecs: %s\n", rs(sendmsg(a, &mh, 0)));
	char p1[4] = { 0 }, p2[8] = { 0 };
	struct iovec rv[2] = { { p1, 3 }, { p2, 7 } };
	struct msghdr rh = { .msg_iov = rv, .msg_iovlen = 2, .msg_name = &from, .msg_namelen = sizeof from };
	wait_in(b);
	r = recvmsg(b, &rh, 0);
	say("recvmsg: %s \"%s\" + \"%s\", name %s, a's port %s\n", rs(r), p1, p2, which_addr(&from),
	    yesno(port_of(&from) == pa));

	/* sendmmsg of 3, recvmmsg of up to 4 */
	struct mmsghdr mm[3];
	struct iovec mv[3] = { { "m1", 2 }, { "mm2", 3 }, { "mmm3", 4 } };
	memset(mm, 0, sizeof mm);
	for (int i = 0; i < 3; i++) {
		mm[i].msg_hdr.msg_iov = &mv[i];
		mm[i].msg_hdr.msg_iovlen = 1;
	}
	r = sendmmsg(a, mm, 3, 0);
	say("sendmmsg 3: %s, lengths %u %u %u\n", rs(r), mm[0].msg_len, mm[1].msg_len, mm[2].msg_len);
	usleep(20000);
	struct mmsghdr rm[4];
	char rb[4][8];
	struct iovec rvv[4];
	memset(rm, 0, sizeof rm);
	memset(rb, 0, sizeof rb);
	for (int i = 0; i < 4; i++) {
		rvv[i] = (struct iovec){ rb[i], 7 };
		rm[i].msg_hdr.msg_iov = &rvv[i];
		rm[i].msg_hdr.msg_iovlen = 1;
	}
	wait_in(b);
	r = recvmmsg(b, rm, 4, MSG_DONTWAIT, NULL);
	say("recvmmsg 4, MSG_DONTWAIT: %s:", rs(r));
	for (int i = 0; i < r; i++)
		say(" %u \"%s\"", rm[i].msg_len, rb[i]);
	say("\n");
	say("recvmmsg, nothing left: %s\n", rs(recvmmsg(b, rm, 4, MSG_DONTWAIT, NULL)));
	say("sendmmsg, vlen 0: %s\n", rs(sendmmsg(a, mm, 0, 0)));

	/* a connected socket to a closed port learns ECONNREFUSED */
	int c = socket(fam, SOCK_DGRAM, 0);
	connect_to(c, closed_port(SOCK_DGRAM));
	say("send to a closed port: %s\n", rs(send(c, "x", 1, 0)));
	struct pollfd pf = { c, POLLIN, 0 };
	poll(&pf, 1, 2000);
	say("poll: ERR %s\n", yesno(pf.revents & POLLERR));
	show_recv("recv", c, 10, MSG_DONTWAIT);
	show_recv("recv again", c, 10, MSG_DONTWAIT);
	int sp;
	say("listen on UDP: %s\n", rs(listen(bound(SOCK_DGRAM, &sp), 1)));
	return 0;
}

static int mode_udp4(void)
{
	fam = AF_INET;
	return mode_udp();
}

static int mode_udp6(void)
{
	fam = AF_INET6;
	return mode_udp();
}

static int mode_nonblock(void)
{
	int port, l = listener(&port);
	int c = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	long r = connect_to(c, port);
	say("non-blocking connect: %s\n", r == 0 || errno == EINPROGRESS ? "0 or EINPROGRESS" : rs(r));
	struct pollfd p = { c, POLLOUT, 0 };
	r = poll(&p, 1, 5000);
	say("poll POLLOUT: %s, OUT %s\n", rs(r), yesno(p.revents & POLLOUT));
	int err = -1;
	socklen_t el = sizeof err;
	getsockopt(c, SOL_SOCKET, SO_ERROR, &err, &el);
	say("SO_ERROR: %s\n", ename(err));
	r = connect_to(c, port);
	say("connect again: %s\n", r == 0 || errno == EISCONN ? "0 or EISCONN" : rs(r));
	say("and again: %s\n", rs(connect_to(c, port)));
	int s = accept(l, NULL, NULL);
	say("accepted: %s\n", yesno(s >= 0));
	show_recv("recv, nothing sent", c, 10, 0);
	write(s, "nb", 2);
	wait_in(c);
	show_recv("recv", c, 10, 0);

	int d = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	r = connect_to(d, closed_port(SOCK_STREAM));
	say("non-blocking connect to a closed port: %s\n",
	    r < 0 && (errno == EINPROGRESS || errno == ECONNREFUSED) ? "EINPROGRESS or ECONNREFUSED" : rs(r));
	if (r < 0 && errno == EINPROGRESS) {
		p = (struct pollfd){ d, POLLOUT, 0 };
		poll(&p, 1, 5000);
	} else {
		p.revents = POLLOUT | POLLERR | POLLHUP;
	}
	say("poll: OUT %s ERR %s HUP %s\n", yesno(p.revents & POLLOUT), yesno(p.revents & POLLERR), yesno(p.revents & POLLHUP));
	err = -1;
	getsockopt(d, SOL_SOCKET, SO_ERROR, &err, &el);
	if (r < 0 && errno == ECONNREFUSED)
		err = ECONNREFUSED;
	say("SO_ERROR: %s\n", ename(err));
	err = -1;
	getsockopt(d, SOL_SOCKET, SO_ERROR, &err, &el);
	say("SO_ERROR read again: %s\n", ename(err));

	int nl = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	int np;
	nl = listener(&np);
	fcntl(nl, F_SETFL, O_NONBLOCK);
	say("accept, non-blocking, no client: %s\n", rs(accept(nl, NULL, NULL)));
	/* a blocking accept woken by a client in a child */
	fcntl(nl, F_SETFL, 0);
	pid_t k = fork();
	if (k == 0) {
		usleep(100000);
		int cc = socket(AF_INET, SOCK_STREAM, 0);
		_exit(connect_to(cc, np) ? 3 : 0);
	}
	int as = accept(nl, NULL, NULL);
	say("blocking accept, a child connects later: %s\n", as >= 0 ? "ok" : rs(as));
	say("child: exit %d\n", wait_child(k));
	return 0;
}

static int mode_flags(void)
{
	int port, l = listener(&port);
	int c = socket(AF_INET, SOCK_STREAM, 0);
	connect_to(c, port);
	int s = accept(l, NULL, NULL);
	send(c, "peekaboo", 8, 0);
	wait_in(s);
	usleep(20000);
	show_recv("MSG_PEEK 4", s, 4, MSG_PEEK);
	show_recv("MSG_PEEK 100", s, 100, MSG_PEEK);
	show_recv("recv 100", s, 100, 0);
	show_recv("MSG_DONTWAIT, empty", s, 100, MSG_DONTWAIT);
	pid_t k = fork();
	if (k == 0) {
		send(c, "first-", 6, 0);
		usleep(150000);
		send(c, "second", 6, 0);
		_exit(0);
	}
	show_recv("MSG_WAITALL 12, sent in two parts", s, 12, MSG_WAITALL);
	wait_child(k);
	k = fork();
	if (k == 0) {
		send(c, "part", 4, 0);
		usleep(150000);
		shutdown(c, SHUT_WR);
		_exit(0);
	}
	show_recv("MSG_WAITALL 12, 4 sent then EOF", s, 12, MSG_WAITALL);
	wait_child(k);
	show_recv("recv at EOF", s, 12, 0);
	signal(SIGPIPE, SIG_IGN);
	close(s);
	usleep(50000);
	send(c, "x", 1, MSG_NOSIGNAL);
	usleep(50000);
	long r = send(c, "x", 1, MSG_NOSIGNAL);
	say("send MSG_NOSIGNAL to a closed peer: %s\n", r < 0 && (errno == EPIPE || errno == ECONNRESET) ? "EPIPE or ECONNRESET" : rs(r));
	int u, up;
	u = bound(SOCK_DGRAM, &up);
	say("MSG_OOB on UDP: %s\n", rs(send(u, "x", 1, MSG_OOB)));
	return 0;
}

static void show_int_opt(const char *what, int s, int level, int opt)
{
	int v = -1;
	socklen_t l = sizeof v;
	long r = getsockopt(s, level, opt, &v, &l);
	say("%s: %s value %d length %d\n", what, rs(r), v, (int)l);
}

static int mode_sockopt(void)
{
	int one = 1, s = socket(AF_INET, SOCK_STREAM, 0);
	show_int_opt("SO_TYPE", s, SOL_SOCKET, SO_TYPE);
	show_int_opt("SO_PROTOCOL", s, SOL_SOCKET, SO_PROTOCOL);
	show_int_opt("SO_REUSEADDR", s, SOL_SOCKET, SO_REUSEADDR);
	say("set SO_REUSEADDR: %s\n", rs(setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one)));
	show_int_opt("SO_REUSEADDR", s, SOL_SOCKET, SO_REUSEADDR);
	int big = 65536;
	say("set SO_RCVBUF 65536: %s\n", rs(setsockopt(s, SOL_SOCKET, SO_RCVBUF, &big, sizeof big)));
	show_int_opt("SO_RCVBUF (doubled)", s, SOL_SOCKET, SO_RCVBUF);
	say("set SO_SNDBUF 65536: %s\n", rs(setsockopt(s, SOL_SOCKET, SO_SNDBUF, &big, sizeof big)));
	show_int_opt("SO_SNDBUF (doubled)", s, SOL_SOCKET, SO_SNDBUF);
	show_int_opt("TCP_NODELAY", s, IPPROTO_TCP, TCP_NODELAY);
	say("set TCP_NODELAY: %s\n", rs(setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one)));
	show_int_opt("TCP_NODELAY", s, IPPROTO_TCP, TCP_NODELAY);
	show_int_opt("SO_KEEPALIVE", s, SOL_SOCKET, SO_KEEPALIVE);
	say("set SO_KEEPALIVE: %s\n", rs(setsockopt(s, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one)));
	show_int_opt("SO_KEEPALIVE", s, SOL_SOCKET, SO_KEEPALIVE);
	show_int_opt("SO_ERROR", s, SOL_SOCKET, SO_ERROR);
	struct linger lg = { 1, 5 };
	say("set SO_LINGER 1 5: %s\n", rs(setsockopt(s, SOL_SOCKET, SO_LINGER, &lg, sizeof lg)));
	struct linger lg2 = { 0, 0 };
	socklen_t ll = sizeof lg2;
	long r = getsockopt(s, SOL_SOCKET, SO_LINGER, &lg2, &ll);
	say("SO_LINGER: %s %d %d\n", rs(r), lg2.l_onoff, lg2.l_linger);
	say("set SO_RCVBUF, length 2: %s\n", rs(setsockopt(s, SOL_SOCKET, SO_RCVBUF, &big, 2)));
	say("set an unknown SOL_SOCKET option: %s\n", rs(setsockopt(s, SOL_SOCKET, 9999, &one, sizeof one)));
	say("set an unknown TCP option: %s\n", rs(setsockopt(s, IPPROTO_TCP, 9999, &one, sizeof one)));
	say("set, bad value pointer: %s\n", rs(setsockopt(s, SOL_SOCKET, SO_REUSEADDR, (void *)8, 4)));
	say("IPV6_V6ONLY on an AF_INET socket: %s\n", rs(setsockopt(s, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one)));
	int s6 = socket(AF_INET6, SOCK_STREAM, 0);
	say("set IPV6_V6ONLY: %s\n", rs(setsockopt(s6, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one)));
	show_int_opt("IPV6_V6ONLY", s6, IPPROTO_IPV6, IPV6_V6ONLY);

	/* SO_RCVTIMEO: a recv with nothing to read gives EAGAIN after the timeout */
	int port, l = listener(&port), c = socket(AF_INET, SOCK_STREAM, 0);
	connect_to(c, port);
	struct timeval tv = { 0, 100000 };
	say("set SO_RCVTIMEO 100 ms: %s\n", rs(setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv)));
	show_recv("recv, nothing sent", c, 10, 0);
	struct timeval got = { 9, 9 };
	socklen_t gl = sizeof got;
	r = getsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &got, &gl);
	say("SO_RCVTIMEO: %s %ld.%06ld\n", rs(r), (long)got.tv_sec, (long)got.tv_usec);
	show_int_opt("SO_ACCEPTCONN of the listener", l, SOL_SOCKET, SO_ACCEPTCONN);
	show_int_opt("SO_ACCEPTCONN of the client", c, SOL_SOCKET, SO_ACCEPTCONN);

	/* SO_REUSEPORT lets two sockets bind the same port */
	int r1 = socket(AF_INET, SOCK_STREAM, 0), r2 = socket(AF_INET, SOCK_STREAM, 0);
	setsockopt(r1, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one);
	setsockopt(r2, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one);
	socklen_t al;
	struct sockaddr_storage a = lo(0, &al);
	bind(r1, (struct sockaddr *)&a, al);
	al = sizeof a;
	getsockname(r1, (struct sockaddr *)&a, &al);
	say("bind the same port with SO_REUSEPORT: %s\n", rs(bind(r2, (struct sockaddr *)&a, al)));
	int r3 = socket(AF_INET, SOCK_STREAM, 0);
	say("and without it: %s\n", rs(bind(r3, (struct sockaddr *)&a, al)));
	return 0;
}

static int mode_ioctl(void)
{
	int port, l = listener(&port), c = socket(AF_INET, SOCK_STREAM, 0);
	connect_to(c, port);
	int s = accept(l, NULL, NULL), n = -1;
	long r = ioctl(s, FIONREAD, &n);
	say("FIONREAD, nothing sent: %s value %d\n", rs(r), n);
	send(c, "0123456789", 10, 0);
	wait_in(s);
	usleep(20000);
	r = ioctl(s, FIONREAD, &n);
	say("FIONREAD after 10 bytes: %s value %d\n", rs(r), n);
	r = ioctl(s, SIOCINQ, &n);
	say("SIOCINQ: %s value %d\n", rs(r), n);
	n = -1;
	r = ioctl(c, SIOCOUTQ, &n);
	say("SIOCOUTQ of the sender, data acked: %s value %d\n", rs(r), n);
	say("FIONREAD on the listener: %s\n", rs(ioctl(l, FIONREAD, &n)));
	say("FIONREAD, bad pointer: %s\n", rs(ioctl(s, FIONREAD, (int *)8)));
	int one = 1;
	say("FIONBIO 1: %s\n", rs(ioctl(c, FIONBIO, &one)));
	say("O_NONBLOCK now: %s\n", yesno(fcntl(c, F_GETFL) & O_NONBLOCK));
	show_recv("recv", c, 10, 0);
	say("an unknown ioctl: %s\n", rs(ioctl(c, 0x89ff, &n)));
	say("TCGETS on a socket: %s\n", rs(ioctl(c, 0x5401, &n)));

	int up, u = bound(SOCK_DGRAM, &up), v = socket(AF_INET, SOCK_DGRAM, 0);
	connect_to(v, up);
	send(v, "abc", 3, 0);
	send(v, "defgh", 5, 0);
	wait_in(u);
	usleep(20000);
	n = -1;
	r = ioctl(u, FIONREAD, &n);
	say("UDP FIONREAD, 2 datagrams: %s value %d (the first one's size)\n", rs(r), n);

	n = -1;
	r = ioctl(s, SIOCATMARK, &n);
	say("SIOCATMARK on TCP: %s value %d\n", rs(r), n);
	say("SIOCATMARK on TCP, NULL: %s\n", rs(ioctl(s, SIOCATMARK, NULL)));
	say("SIOCATMARK on UDP: %s\n", rs(ioctl(u, SIOCATMARK, &n)));
	struct ifconf ifc = { .ifc_len = 0, .ifc_buf = NULL };
	r = ioctl(u, SIOCGIFCONF, &ifc);
	say("SIOCGIFCONF length query: %s, whole ifreqs: %s\n", rs(r),
	    yesno(ifc.ifc_len >= (int)sizeof(struct ifreq) && ifc.ifc_len % (int)sizeof(struct ifreq) == 0));
	struct ifreq reqs[64];
	ifc = (struct ifconf){ .ifc_len = sizeof(reqs), .ifc_req = reqs };
	r = ioctl(u, SIOCGIFCONF, &ifc);
	int lo = 0;
	for (int i = 0; r == 0 && i < ifc.ifc_len / (int)sizeof(struct ifreq); i++)
		lo |= !strcmp(reqs[i].ifr_name, "lo") &&
		      ((struct sockaddr_in *)&reqs[i].ifr_addr)->sin_addr.s_addr == htonl(INADDR_LOOPBACK);
	say("SIOCGIFCONF: %s, lo 127.0.0.1 listed: %s, buffer pointer kept: %s\n", rs(r), yesno(lo),
	    yesno(ifc.ifc_req == reqs));
	ifc = (struct ifconf){ .ifc_len = sizeof(struct ifreq), .ifc_req = reqs };
	r = ioctl(u, SIOCGIFCONF, &ifc);
	say("SIOCGIFCONF room for one: %s, length %d\n", rs(r), ifc.ifc_len);
	ifc = (struct ifconf){ .ifc_len = sizeof(reqs), .ifc_buf = (char *)8 };
	say("SIOCGIFCONF bad buffer: %s\n", rs(ioctl(u, SIOCGIFCONF, &ifc)));
	say("SIOCGIFCONF bad ifconf: %s\n", rs(ioctl(u, SIOCGIFCONF, (void *)8)));
	return 0;
}

static int mode_families(void)
{
	say("AF_INET STREAM: %s\n", rs(socket(AF_INET, SOCK_STREAM, 0) >= 0 ? 0 : -1));
	say("AF_INET6 DGRAM: %s\n", rs(socket(AF_INET6, SOCK_DGRAM, 0) >= 0 ? 0 : -1));
	say("AF_INET STREAM IPPROTO_TCP: %s\n", rs(socket(AF_INET, SOCK_STREAM, IPPROTO_TCP) >= 0 ? 0 : -1));
	say("AF_INET STREAM IPPROTO_UDP: %s\n", rs(socket(AF_INET, SOCK_STREAM, IPPROTO_UDP)));
	say("AF_INET DGRAM IPPROTO_TCP: %s\n", rs(socket(AF_INET, SOCK_DGRAM, IPPROTO_TCP)));
	say("AF_INET SEQPACKET: %s\n", rs(socket(AF_INET, SOCK_SEQPACKET, 0)));
	say("AF_INET type 99: %s\n", rs(socket(AF_INET, 99, 0)));
	say("AF_INET6 STREAM protocol 250: %s\n", rs(socket(AF_INET6, SOCK_STREAM, 250)));
	say("AF_IPX: %s\n", rs(socket(AF_IPX, SOCK_DGRAM, 0)));
	say("AF_DECnet: %s\n", rs(socket(AF_DECnet, SOCK_SEQPACKET, 0)));
	say("AF_ECONET: %s\n", rs(socket(AF_ECONET, SOCK_DGRAM, 0)));
	say("family 99: %s\n", rs(socket(99, SOCK_STREAM, 0)));
	say("family -1: %s\n", rs(socket(-1, SOCK_STREAM, 0)));
	say("AF_UNSPEC: %s\n", rs(socket(AF_UNSPEC, SOCK_STREAM, 0)));
	int sv[2];
	say("socketpair AF_INET6: %s\n", rs(socketpair(AF_INET6, SOCK_DGRAM, 0, sv)));
	return 0;
}

static int mode_errors(void)
{
	int s = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = inet_addr("192.0.2.1") };
	say("bind 192.0.2.1 (not local): %s\n", rs(bind(s, (struct sockaddr *)&a, sizeof a)));
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	say("bind, length 8: %s\n", rs(bind(s, (struct sockaddr *)&a, 8)));
	say("bind, bad pointer: %s\n", rs(bind(s, (struct sockaddr *)8, sizeof a)));
	struct sockaddr_in6 a6 = { .sin6_family = AF_INET6, .sin6_addr = in6addr_loopback };
	say("bind an AF_INET6 address to an AF_INET socket: %s\n", rs(bind(s, (struct sockaddr *)&a6, sizeof a6)));
	say("send, not connected: %s\n", rs(send(s, "x", 1, MSG_NOSIGNAL)));
	say("recv, not connected: %s\n", rs(recv(s, &a, 1, 0)));
	socklen_t l = sizeof a;
	say("getpeername, not connected: %s\n", rs(getpeername(s, (struct sockaddr *)&a, &l)));
	say("accept, not listening: %s\n", rs(accept(s, NULL, NULL)));
	say("shutdown, not connected: %s\n", rs(shutdown(s, SHUT_RDWR)));
	int port, lst = listener(&port);
	say("connect a listening socket: %s\n", rs(connect_to(lst, port)));
	l = 3;
	struct sockaddr_in g;
	long r = getsockname(lst, (struct sockaddr *)&g, &l);
	say("getsockname, length 3: %s, length now %d\n", rs(r), (int)l);
	say("getsockname, bad address pointer: %s\n", rs(syscall(SYS_getsockname, lst, 8, &(socklen_t){ 16 })));
	int c0 = socket(AF_INET, SOCK_STREAM, 0);
	connect_to(c0, port);
	l = sizeof g;
	say("accept a client, bad address pointer: %s\n", rs(syscall(SYS_accept4, lst, 8, &l, 0)));
	int c = socket(AF_INET, SOCK_STREAM, 0);
	connect_to(c, port);
	int as = accept(lst, NULL, NULL);
	say("send, bad buffer: %s\n", rs(send(c, (void *)8, 10, MSG_NOSIGNAL)));
	send(c, "abc", 3, 0);
	wait_in(as);
	say("recv, bad buffer: %s\n", rs(recv(as, (void *)8, 10, 0)));
	say("sendto with an address on a connected TCP socket: %s\n",
	    rs(sendto(c, "y", 1, 0, (struct sockaddr *)&a6, sizeof a6)));
	say("sendmmsg, bad vector: %s\n", rs(syscall(SYS_sendmmsg, c, 8, 2, 0)));
	say("recvmmsg, bad vector: %s\n", rs(syscall(SYS_recvmmsg, as, 8, 2, MSG_DONTWAIT, NULL)));
	int u = socket(AF_INET, SOCK_DGRAM, 0);
	say("UDP send, no destination: %s\n", rs(send(u, "x", 1, 0)));
	struct sockaddr_in big = { .sin_family = AF_INET, .sin_port = htons(9), .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	static char huge[70000];
	say("UDP datagram of 70000 bytes: %s\n", rs(sendto(u, huge, sizeof huge, 0, (struct sockaddr *)&big, sizeof big)));
	return 0;
}

/* connect ADDR PORT: the guest side of the network tests */
static int do_connect(const char *addr, const char *port)
{
	struct sockaddr_storage a = { 0 };
	socklen_t l;
	if (strchr(addr, ':')) {
		struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&a;
		a6->sin6_family = AF_INET6;
		a6->sin6_port = htons(atoi(port));
		inet_pton(AF_INET6, addr, &a6->sin6_addr);
		l = sizeof *a6;
	} else {
		struct sockaddr_in *a4 = (struct sockaddr_in *)&a;
		a4->sin_family = AF_INET;
		a4->sin_port = htons(atoi(port));
		inet_pton(AF_INET, addr, &a4->sin_addr);
		l = sizeof *a4;
	}
	int s = socket(a.ss_family, SOCK_STREAM, 0);
	if (s < 0) {
		say("socket: %s\n", rs(s));
		return 1;
	}
	long r = connect(s, (struct sockaddr *)&a, l);
	say("connect: %s\n", rs(r));
	if (r)
		return 1;
	char b[128] = { 0 };
	r = read(s, b, sizeof b - 1);
	say("read: %s %s", rs(r), b);
	return 0;
}

/* serve ADDR: listen on port 0, print the port, answer one client with a line (host side, native) */
static int do_serve(const char *addr)
{
	fam = strchr(addr, ':') ? AF_INET6 : AF_INET;
	int port, l = listener(&port);
	if (l < 0) {
		say("listen: %s\n", rs(l));
		return 1;
	}
	say("port %d\n", port);
	alarm(120);
	int s = accept(l, NULL, NULL);
	if (write(s, "hello from the host\n", 20) != 20)
		return 1;
	close(s);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct mode modes[] = {
		{ "tcp4", mode_tcp4 },		 { "tcp6", mode_tcp6 },	  { "udp4", mode_udp4 },
		{ "udp6", mode_udp6 },		 { "nonblock", mode_nonblock }, { "flags", mode_flags },
		{ "sockopt", mode_sockopt },	 { "ioctl", mode_ioctl }, { "families", mode_families },
		{ "errors", mode_errors },
	};
	if (argc == 4 && !strcmp(argv[1], "connect"))
		return do_connect(argv[2], argv[3]);
	if (argc == 3 && !strcmp(argv[1], "serve"))
		return do_serve(argv[2]);
	return run_mode("net_inet", modes, sizeof modes / sizeof modes[0], argc, argv);
}

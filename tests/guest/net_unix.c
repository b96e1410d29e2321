/* net_unix: AF_UNIX sockets: socketpair, stream, dgram and seqpacket, named sockets in the current directory
 * (run with --rw), abstract names, SCM_RIGHTS and SCM_CREDENTIALS/SO_PEERCRED.
 * usage: net_unix stream|dgram|seqpacket|named|abstract|rights|creds|errors
 *        net_unix bind PATH | connect PATH | connect-abstract NAME   (one call, its result printed)
 *        net_unix serve-abstract NAME | serve-path PATH   (listen, print "listening", answer one client)
 *        net_unix serve-fd PATH FILE   (listen, print "listening", pass FILE's fd to one client)
 *        net_unix recv-fd PATH   (connect, print the fds received) | forge-creds (SCM_CREDENTIALS not one's own)
 *   stream     socketpair(SOCK_STREAM): data both ways, flags, EAGAIN, shutdown, EOF, EPIPE and SIGPIPE
 *   dgram      socketpair and named datagram sockets: boundaries kept, MSG_TRUNC, sendto/recvfrom addresses
 *   seqpacket  socketpair and a named listener: boundaries, truncation, EOF after close
 *   named      bind/listen/connect/accept by path: the socket file, EADDRINUSE, ENOENT, ECONNREFUSED,
 *              getsockname/getpeername, a client in a child process
 *   abstract   abstract names: bind, EADDRINUSE, connect, autobind, names are not files
 *   rights     SCM_RIGHTS: fds passed parent -> child and child -> parent, several in one message,
 *              MSG_CMSG_CLOEXEC, MSG_CTRUNC, EBADF for a closed fd
 *   creds      SO_PEERCRED and SCM_CREDENTIALS show the peer's pid, uid and gid (compared, not printed)
 *   errors     EAFNOSUPPORT, EPROTONOSUPPORT, ESOCKTNOSUPPORT/EPROTOTYPE, ENOTSOCK, EFAULT, bad lengths
 * Prints what happened; the caller compares with the native run. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "evnet.h"

/* A sockaddr_un for path (or, when abstract, "\0" path); *len gets its length. */
static struct sockaddr_un addr(const char *path, int abstract, socklen_t *len)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	size_t n = strlen(path);
	if (n > sizeof a.sun_path - 1 - abstract)
		n = sizeof a.sun_path - 1 - abstract;
	memcpy(a.sun_path + abstract, path, n);
	*len = offsetof(struct sockaddr_un, sun_path) + abstract + n + !abstract;
	return a;
}

static int bind_path(int s, const char *path)
{
	socklen_t l;
	struct sockaddr_un a = addr(path, 0, &l);
	return bind(s, (struct sockaddr *)&a, l);
}

static int connect_path(int s, const char *path)
{
	socklen_t l;
	struct sockaddr_un a = addr(path, 0, &l);
	return connect(s, (struct sockaddr *)&a, l);
}

/* read up to n bytes and print them as a string */
static void show_read(const char *what, int fd, size_t n, int flags)
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

static volatile sig_atomic_t sigpipes;

static void on_sigpipe(int sig)
{
	(void)sig;
	sigpipes++;
}

static int mode_stream(void)
{
	int sv[2];
	long r;
	say("socketpair STREAM: %s\n", rs(socketpair(AF_UNIX, SOCK_STREAM, 0, sv)));
	say("write a->b: %s\n", rs(write(sv[0], "hello", 5)));
	say("write a->b again: %s\n", rs(write(sv[0], " world", 6)));
	show_read("read b, 100", sv[1], 100, 0);
	say("write b->a: %s\n", rs(send(sv[1], "back", 4, 0)));
	show_read("read a", sv[0], 100, 0);
	show_read("read a, MSG_DONTWAIT, empty", sv[0], 100, MSG_DONTWAIT);
	int t;
	socklen_t tl = sizeof t;
	getsockopt(sv[0], SOL_SOCKET, SO_TYPE, &t, &tl);
	say("SO_TYPE is SOCK_STREAM: %s\n", yesno(t == SOCK_STREAM));
	getsockopt(sv[0], SOL_SOCKET, SO_DOMAIN, &t, &tl);
	say("SO_DOMAIN is AF_UNIX: %s\n", yesno(t == AF_UNIX));
	getsockopt(sv[0], SOL_SOCKET, SO_ACCEPTCONN, &t, &tl);
	say("SO_ACCEPTCONN: %d\n", t);

	int nb[2];
	say("socketpair NONBLOCK|CLOEXEC: %s\n", rs(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, nb)));
	say("O_NONBLOCK %s FD_CLOEXEC %s\n", yesno(fcntl(nb[0], F_GETFL) & O_NONBLOCK),
	    yesno(fcntl(nb[1], F_GETFD) & FD_CLOEXEC));
	show_read("read empty nonblocking", nb[0], 10, 0);
	char big[65536] = { 0 };
	long total = 0;
	while ((r = write(nb[0], big, sizeof big)) > 0)
		total += r;
	say("fill: %s, wrote something %s\n", rs(r), yesno(total > 0));

	say("shutdown a SHUT_WR: %s\n", rs(shutdown(sv[0], SHUT_WR)));
	show_read("read b after the shutdown", sv[1], 100, 0);
	say("write a after SHUT_WR, MSG_NOSIGNAL: %s\n", rs(send(sv[0], "x", 1, MSG_NOSIGNAL)));
	say("write b->a still works: %s\n", rs(write(sv[1], "ok", 2)));
	show_read("read a", sv[0], 100, 0);
	say("shutdown 99: %s\n", rs(shutdown(sv[0], 99)));
	close(sv[1]);
	show_read("read a, peer closed", sv[0], 100, 0);
	struct sigaction sa = { .sa_handler = on_sigpipe };
	sigaction(SIGPIPE, &sa, NULL);
	int pp[2];
	socketpair(AF_UNIX, SOCK_STREAM, 0, pp);
	close(pp[1]);
	r = write(pp[0], "x", 1);
	say("write, peer closed: %s, SIGPIPE %d\n", rs(r), (int)sigpipes);
	r = send(pp[0], "x", 1, MSG_NOSIGNAL);
	say("send MSG_NOSIGNAL, peer closed: %s, SIGPIPE %d\n", rs(r), (int)sigpipes);
	return 0;
}

static int mode_dgram(void)
{
	int sv[2];
	say("socketpair DGRAM: %s\n", rs(socketpair(AF_UNIX, SOCK_DGRAM, 0, sv)));
	say("send 3: %s\n", rs(send(sv[0], "one", 3, 0)));
	say("send 5: %s\n", rs(send(sv[0], "three", 5, 0)));
	say("send 0: %s\n", rs(send(sv[0], "", 0, 0)));
	show_read("recv 100", sv[1], 100, 0);
	show_read("recv 2 of 5, MSG_TRUNC", sv[1], 2, MSG_TRUNC);
	show_read("recv the empty datagram", sv[1], 100, 0);
	show_read("recv none left, MSG_DONTWAIT", sv[1], 100, MSG_DONTWAIT);
	char b[8];
	struct iovec iov = { b, 2 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	send(sv[0], "abcdef", 6, 0);
	long r = recvmsg(sv[1], &mh, 0);
	say("recvmsg 2 of 6: %s, MSG_TRUNC in flags %s\n", rs(r), yesno(mh.msg_flags & MSG_TRUNC));

	unlink("net_unix.d1");
	unlink("net_unix.d2");
	int a = socket(AF_UNIX, SOCK_DGRAM, 0), c = socket(AF_UNIX, SOCK_DGRAM, 0);
	say("bind d1: %s\n", rs(bind_path(a, "net_unix.d1")));
	say("bind d2: %s\n", rs(bind_path(c, "net_unix.d2")));
	socklen_t l;
	struct sockaddr_un to = addr("net_unix.d1", 0, &l);
	say("sendto d1 by path: %s\n", rs(sendto(c, "dgram", 5, 0, (struct sockaddr *)&to, l)));
	struct sockaddr_un from;
	socklen_t fl = sizeof from;
	char buf[32] = { 0 };
	r = recvfrom(a, buf, sizeof buf - 1, 0, (struct sockaddr *)&from, &fl);
	say("recvfrom: %s \"%s\" from \"%s\"\n", rs(r), buf, from.sun_path);
	say("send unconnected: %s\n", rs(send(a, "x", 1, 0)));
	struct sockaddr_un nowhere = addr("net_unix.none", 0, &l);
	say("sendto a missing path: %s\n", rs(sendto(a, "x", 1, 0, (struct sockaddr *)&nowhere, l)));
	say("connect d1 to d2: %s\n", rs(connect_path(a, "net_unix.d2")));
	say("send connected: %s\n", rs(send(a, "reply", 5, 0)));
	show_read("recv d2", c, 100, 0);
	unlink("net_unix.d1");
	unlink("net_unix.d2");
	return 0;
}

static int mode_seqpacket(void)
{
	int sv[2];
	say("socketpair SEQPACKET: %s\n", rs(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv)));
	send(sv[0], "first", 5, 0);
	send(sv[0], "second", 6, 0);
	show_read("recv 100", sv[1], 100, 0);
	show_read("recv 3 of 6", sv[1], 3, 0);
	close(sv[0]);
	show_read("recv after peer close", sv[1], 100, 0);

	unlink("net_unix.sp");
	int l = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	say("bind: %s\n", rs(bind_path(l, "net_unix.sp")));
	say("listen: %s\n", rs(listen(l, 2)));
	pid_t k = fork();
	if (k == 0) {
		int c = socket(AF_UNIX, SOCK_SEQPACKET, 0);
		if (connect_path(c, "net_unix.sp"))
			_exit(3);
		send(c, "from child", 10, 0);
		send(c, "2nd", 3, 0);
		char b[8];
		if (recv(c, b, sizeof b, 0) != 2)
			_exit(4);
		_exit(0);
	}
	int s = accept(l, NULL, NULL);
	say("accept: %s\n", s >= 0 ? "ok" : rs(s));
	show_read("recv", s, 100, 0);
	show_read("recv", s, 100, 0);
	send(s, "ok", 2, 0);
	say("child: exit %d\n", wait_child(k));
	show_read("recv after the child exited", s, 100, 0);
	unlink("net_unix.sp");
	return 0;
}

static int mode_named(void)
{
	const char *p = "net_unix.sock";
	unlink(p);
	int l = socket(AF_UNIX, SOCK_STREAM, 0);
	say("bind: %s\n", rs(bind_path(l, p)));
	struct stat st;
	long r = lstat(p, &st);
	say("stat: %s, a socket %s\n", rs(r), yesno(S_ISSOCK(st.st_mode)));
	int l2 = socket(AF_UNIX, SOCK_STREAM, 0);
	say("bind the same path again: %s\n", rs(bind_path(l2, p)));
	say("bind the bound socket again: %s\n", rs(bind_path(l, "net_unix.other")));
	int c0 = socket(AF_UNIX, SOCK_STREAM, 0);
	say("connect before listen: %s\n", rs(connect_path(c0, p)));
	say("listen: %s\n", rs(listen(l, 4)));
	say("connect a missing path: %s\n", rs(connect_path(c0, "net_unix.missing")));
	unlink("net_unix.file");
	close(open("net_unix.file", O_CREAT | O_WRONLY, 0644));
	say("connect a regular file: %s\n", rs(connect_path(c0, "net_unix.file")));
	unlink("net_unix.file");
	say("connect a directory: %s\n", rs(connect_path(c0, ".")));

	int c = socket(AF_UNIX, SOCK_STREAM, 0);
	say("connect: %s\n", rs(connect_path(c, p)));
	say("connect again: %s\n", rs(connect_path(c, p)));
	struct sockaddr_un peer;
	socklen_t pl = sizeof peer;
	int s = accept(l, (struct sockaddr *)&peer, &pl);
	say("accept: %s, peer address length %d (unnamed)\n", s >= 0 ? "ok" : rs(s), (int)pl);
	struct sockaddr_un me;
	socklen_t ml = sizeof me;
	getsockname(l, (struct sockaddr *)&me, &ml);
	say("getsockname of the listener: \"%s\" length ok %s\n", me.sun_path,
	    yesno(ml == offsetof(struct sockaddr_un, sun_path) + strlen(p) + 1));
	ml = sizeof me;
	getpeername(c, (struct sockaddr *)&me, &ml);
	say("getpeername of the client: \"%s\"\n", me.sun_path);
	ml = sizeof me;
	say("getpeername of the listener: %s\n", rs(getpeername(l, (struct sockaddr *)&me, &ml)));
	send(c, "ping", 4, 0);
	show_read("server reads", s, 100, 0);

	/* a client in a child process */
	pid_t k = fork();
	if (k == 0) {
		int cc = socket(AF_UNIX, SOCK_STREAM, 0);
		if (connect_path(cc, p))
			_exit(3);
		if (write(cc, "child", 5) != 5)
			_exit(4);
		_exit(0);
	}
	int s2 = accept(l, NULL, NULL);
	show_read("server reads the child", s2, 100, 0);
	say("child: exit %d\n", wait_child(k));
	close(l);
	int c3 = socket(AF_UNIX, SOCK_STREAM, 0);
	say("connect after the listener closed: %s\n", rs(connect_path(c3, p)));
	say("the socket file is still there: %s\n", yesno(lstat(p, &st) == 0));
	say("unlink: %s\n", rs(unlink(p)));
	int l3 = socket(AF_UNIX, SOCK_STREAM, 0);
	say("bind after unlink: %s\n", rs(bind_path(l3, p)));
	unlink(p);
	/* a path of 108 bytes fills sun_path without a NUL */
	char longp[109];
	memset(longp, 'x', 108);
	longp[108] = 0;
	struct sockaddr_un la = { .sun_family = AF_UNIX };
	memcpy(la.sun_path, longp, 108);
	int l4 = socket(AF_UNIX, SOCK_STREAM, 0);
	unlink(longp);
	say("bind a path of 108 bytes, no NUL: %s\n", rs(bind(l4, (struct sockaddr *)&la, sizeof la)));
	unlink(longp);
	say("bind length > sizeof(sockaddr_un): %s\n", rs(bind(l4, (struct sockaddr *)&la, sizeof la + 1)));
	say("bind in a missing directory: %s\n", rs(bind_path(l4, "net_unix.nodir/s")));
	return 0;
}

static int mode_abstract(void)
{
	char name[64];
	snprintf(name, sizeof name, "pvx-net-unix-%d", (int)getpid());
	socklen_t al;
	struct sockaddr_un a = addr(name, 1, &al);
	int l = socket(AF_UNIX, SOCK_STREAM, 0);
	say("bind abstract: %s\n", rs(bind(l, (struct sockaddr *)&a, al)));
	int l2 = socket(AF_UNIX, SOCK_STREAM, 0);
	say("bind the same name again: %s\n", rs(bind(l2, (struct sockaddr *)&a, al)));
	say("listen: %s\n", rs(listen(l, 2)));
	struct stat st;
	say("a file of that name: %s\n", rs(lstat(name, &st)));
	int c = socket(AF_UNIX, SOCK_STREAM, 0);
	say("connect: %s\n", rs(connect(c, (struct sockaddr *)&a, al)));
	int s = accept(l, NULL, NULL);
	write(c, "abs", 3);
	show_read("read", s, 10, 0);
	struct sockaddr_un got;
	socklen_t gl = sizeof got;
	getsockname(l, (struct sockaddr *)&got, &gl);
	say("getsockname: same length %s, leading NUL %s, same name %s\n", yesno(gl == al), yesno(got.sun_path[0] == 0),
	    yesno(!memcmp(got.sun_path, a.sun_path, al - offsetof(struct sockaddr_un, sun_path))));
	/* the same name with one byte more is another name */
	struct sockaddr_un b = a;
	int c2 = socket(AF_UNIX, SOCK_STREAM, 0);
	say("connect a longer name: %s\n", rs(connect(c2, (struct sockaddr *)&b, al + 1)));
	/* autobind: an empty address gets a name of 5 hex digits */
	int ab = socket(AF_UNIX, SOCK_DGRAM, 0);
	struct sockaddr_un e = { .sun_family = AF_UNIX };
	say("autobind: %s\n", rs(bind(ab, (struct sockaddr *)&e, sizeof(sa_family_t))));
	gl = sizeof got;
	getsockname(ab, (struct sockaddr *)&got, &gl);
	say("autobound name: length %d, leading NUL %s\n", (int)(gl - offsetof(struct sockaddr_un, sun_path)),
	    yesno(got.sun_path[0] == 0));
	close(l);
	int c3 = socket(AF_UNIX, SOCK_STREAM, 0);
	say("connect after the listener closed: %s\n", rs(connect(c3, (struct sockaddr *)&a, al)));
	int l3 = socket(AF_UNIX, SOCK_STREAM, 0);
	say("bind the name again after close: %s\n", rs(bind(l3, (struct sockaddr *)&a, al)));
	return 0;
}

/* send the fds in fds[0..n) with one byte of data over sock */
static long send_fds(int sock, const int *fds, int n)
{
	char cbuf[CMSG_SPACE(8 * sizeof(int))] = { 0 };
	struct iovec iov = { "F", 1 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			     .msg_controllen = CMSG_SPACE(n * sizeof(int)) };
	struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(n * sizeof(int));
	memcpy(CMSG_DATA(cm), fds, n * sizeof(int));
	return sendmsg(sock, &mh, 0);
}

/* receive fds into fds (at most max); returns how many, -1 on error; *flags gets msg_flags */
static int recv_fds(int sock, int *fds, int max, int rflags, size_t cspace, int *flags)
{
	char cbuf[CMSG_SPACE(8 * sizeof(int))] = { 0 }, d;
	struct iovec iov = { &d, 1 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = cspace };
	if (recvmsg(sock, &mh, rflags) < 0)
		return -1;
	*flags = mh.msg_flags;
	int n = 0;
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm))
		if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS)
			for (size_t i = 0; i < (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int) && n < max; i++)
				memcpy(&fds[n++], CMSG_DATA(cm) + i * sizeof(int), sizeof(int));
	return n;
}

static int lowest_free(void)
{
	int fd = dup(0);
	close(fd);
	return fd;
}

static int mode_rights(void)
{
	int sv[2], p[2];
	socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
	if (pipe(p))
		return 90;
	pid_t k = fork();
	if (k == 0) {
		close(sv[0]);
		close(p[0]);
		close(p[1]);
		int fds[4], fl, want = lowest_free();
		int n = recv_fds(sv[1], fds, 4, 0, CMSG_SPACE(4 * sizeof(int)), &fl);
		say("child: received %d fd, at the lowest free number %s\n", n, yesno(n == 1 && fds[0] == want));
		char b[32] = { 0 };
		say("child: read from the passed pipe: %s \"%s\"\n", rs(read(fds[0], b, sizeof b - 1)), b);
		/* send back a new pipe's read end; write to its other end */
		int q[2];
		if (pipe(q))
			_exit(3);
		if (write(q[1], "from the child", 14) != 14)
			_exit(4);
		say("child: send a pipe back: %s\n", rs(send_fds(sv[1], &q[0], 1)));
		_exit(0);
	}
	close(sv[1]);
	if (write(p[1], "from the parent", 15) != 15)
		return 91;
	long sent = send_fds(sv[0], &p[0], 1);
	close(p[0]);
	int st = wait_child(k);
	say("parent: sent a pipe read end: %s\n", rs(sent));
	say("child: exit %d\n", st);
	int fds[4], fl, n = recv_fds(sv[0], fds, 4, MSG_CMSG_CLOEXEC, CMSG_SPACE(4 * sizeof(int)), &fl);
	say("parent: received %d fd, FD_CLOEXEC (MSG_CMSG_CLOEXEC) %s\n", n,
	    yesno(n == 1 && (fcntl(fds[0], F_GETFD) & FD_CLOEXEC)));
	char b[32] = { 0 };
	say("parent: read from it: %s \"%s\"\n", rs(read(fds[0], b, sizeof b - 1)), b);

	/* three fds in one message, received in order */
	int t[2];
	socketpair(AF_UNIX, SOCK_DGRAM, 0, t);
	int three[3] = { 0, 1, 2 };
	say("send stdin, stdout, stderr: %s\n", rs(send_fds(t[0], three, 3)));
	n = recv_fds(t[1], fds, 4, 0, CMSG_SPACE(4 * sizeof(int)), &fl);
	struct stat a, c;
	int same = n == 3;
	for (int i = 0; same && i < 3; i++) {
		fstat(i, &a);
		fstat(fds[i], &c);
		same = a.st_ino == c.st_ino && a.st_dev == c.st_dev;
	}
	say("received %d, the same files in order %s\n", n, yesno(same));
	/* a control buffer with room for one fd only: MSG_CTRUNC, the others are not installed */
	send_fds(t[0], three, 3);
	int before = lowest_free();
	n = recv_fds(t[1], fds, 4, 0, CMSG_SPACE(sizeof(int)), &fl);
	int after = lowest_free();
	say("room for 2 of 3: got %d, MSG_CTRUNC %s, new fds %d\n", n, yesno(fl & MSG_CTRUNC), after - before);
	int bad = lowest_free();
	say("send a closed fd: %s\n", rs(send_fds(t[0], &bad, 1)));
	int neg = -1;
	say("send fd -1: %s\n", rs(send_fds(t[0], &neg, 1)));
	/* passing the socket itself, then closing both ends: the kernel collects the cycle */
	say("send a socket through itself: %s\n", rs(send_fds(t[0], &t[1], 1)));
	return 0;
}

static int mode_creds(void)
{
	int sv[2];
	socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
	struct ucred uc;
	socklen_t ul = sizeof uc;
	say("SO_PEERCRED of a socketpair: %s\n", rs(getsockopt(sv[0], SOL_SOCKET, SO_PEERCRED, &uc, &ul)));
	say("peer pid is me: %s, uid mine: %s, gid mine: %s\n", yesno(uc.pid == getpid()), yesno(uc.uid == getuid()),
	    yesno(uc.gid == getgid()));

	const char *p = "net_unix.cred";
	unlink(p);
	int l = socket(AF_UNIX, SOCK_STREAM, 0);
	bind_path(l, p);
	listen(l, 2);
	int go[2];
	if (pipe(go))
		return 90;
	pid_t k = fork();
	if (k == 0) {
		int c = socket(AF_UNIX, SOCK_STREAM, 0);
		if (connect_path(c, p))
			_exit(3);
		struct ucred me;
		socklen_t ml = sizeof me;
		getsockopt(c, SOL_SOCKET, SO_PEERCRED, &me, &ml);
		int parent_ok = me.pid == getppid();
		/* a message with explicit credentials, then one without */
		char cbuf[CMSG_SPACE(sizeof(struct ucred))] = { 0 };
		struct iovec iov = { "C", 1 };
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof cbuf };
		struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_CREDENTIALS;
		cm->cmsg_len = CMSG_LEN(sizeof(struct ucred));
		struct ucred mine = { getpid(), getuid(), getgid() };
		memcpy(CMSG_DATA(cm), &mine, sizeof mine);
		char g;
		if (read(go[0], &g, 1) != 1)
			_exit(4);
		long sent = sendmsg(c, &mh, 0);
		if (write(c, "P", 1) != 1)
			_exit(5);
		if (read(go[0], &g, 1) != 1)
			_exit(6);
		say("child: the listener's pid is my parent: %s\n", yesno(parent_ok));
		say("child: sendmsg with SCM_CREDENTIALS: %s\n", rs(sent));
		_exit(0);
	}
	int s = accept(l, NULL, NULL);
	ul = sizeof uc;
	say("SO_PEERCRED of an accepted socket: %s\n", rs(getsockopt(s, SOL_SOCKET, SO_PEERCRED, &uc, &ul)));
	say("peer pid is my child: %s, uid mine: %s, gid mine: %s\n", yesno(uc.pid == k), yesno(uc.uid == getuid()),
	    yesno(uc.gid == getgid()));
	int one = 1;
	say("SO_PASSCRED: %s\n", rs(setsockopt(s, SOL_SOCKET, SO_PASSCRED, &one, sizeof one)));
	if (write(go[1], "g", 1) != 1)
		return 91;
	for (int i = 0; i < 2; i++) {
		char cbuf[CMSG_SPACE(sizeof(struct ucred))] = { 0 }, d;
		struct iovec iov = { &d, 1 };
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof cbuf };
		long r = recvmsg(s, &mh, 0);
		struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
		int got = r == 1 && cm && cm->cmsg_type == SCM_CREDENTIALS;
		struct ucred c = { 0 };
		if (got)
			memcpy(&c, CMSG_DATA(cm), sizeof c);
		say("message %c: SCM_CREDENTIALS %s, pid is my child %s, uid mine %s, gid mine %s\n", r == 1 ? d : '?',
		    yesno(got), yesno(c.pid == k), yesno(c.uid == getuid()), yesno(c.gid == getgid()));
	}
	if (write(go[1], "g", 1) != 1)
		return 92;
	say("child: exit %d\n", wait_child(k));
	int val;
	ul = sizeof val;
	getsockopt(s, SOL_SOCKET, SO_PASSCRED, &val, &ul);
	say("SO_PASSCRED reads back: %d\n", val);
	unlink(p);
	return 0;
}

static int mode_errors(void)
{
	say("socket(AF_UNIX, 99): %s\n", rs(socket(AF_UNIX, 99, 0)));
	say("socket(AF_UNIX, STREAM, 5): %s\n", rs(socket(AF_UNIX, SOCK_STREAM, 5)));
	say("socket(family 99): %s\n", rs(socket(99, SOCK_STREAM, 0)));
	say("socket(AF_MAX+10): %s\n", rs(socket(AF_MAX + 10, SOCK_STREAM, 0)));
	say("socket(AF_APPLETALK): %s\n", rs(socket(AF_APPLETALK, SOCK_DGRAM, 0)));
	say("socket(AF_UNIX, STREAM|0x100000): %s\n", rs(socket(AF_UNIX, SOCK_STREAM | 0x100000, 0)));
	int sv[2];
	say("socketpair(AF_INET, STREAM): %s\n", rs(socketpair(AF_INET, SOCK_STREAM, 0, sv)));
	say("socketpair, bad pointer: %s\n", rs(syscall(SYS_socketpair, AF_UNIX, SOCK_STREAM, 0, 8)));
	int s = socket(AF_UNIX, SOCK_STREAM, 0);
	say("bind NULL address: %s\n", rs(bind(s, NULL, 10)));
	say("bind bad address pointer: %s\n", rs(bind(s, (struct sockaddr *)8, 10)));
	struct sockaddr_un a = { .sun_family = AF_INET };
	say("bind family AF_INET: %s\n", rs(bind(s, (struct sockaddr *)&a, sizeof a)));
	a.sun_family = AF_UNIX;
	say("bind length 1: %s\n", rs(bind(s, (struct sockaddr *)&a, 1)));
	say("bind length -1: %s\n", rs(bind(s, (struct sockaddr *)&a, -1)));
	say("connect on a non-socket fd: %s\n", rs(connect(1, (struct sockaddr *)&a, sizeof a)));
	say("listen on a non-socket fd: %s\n", rs(listen(1, 1)));
	say("listen on fd 999: %s\n", rs(listen(999, 1)));
	say("accept on an unbound socket: %s\n", rs(accept(s, NULL, NULL)));
	say("accept4 bad flags: %s\n", rs(accept4(s, NULL, NULL, 0x40)));
	say("getsockname, bad length pointer: %s\n", rs(getsockname(s, (struct sockaddr *)&a, (socklen_t *)8)));
	socklen_t l = sizeof a;
	say("getpeername, not connected: %s\n", rs(getpeername(s, (struct sockaddr *)&a, &l)));
	say("send, not connected: %s\n", rs(send(s, "x", 1, MSG_NOSIGNAL)));
	say("recv, not connected: %s\n", rs(recv(s, &a, 1, 0)));
	int v = -1;
	l = sizeof v;
	say("getsockopt, unknown level: %s\n", rs(getsockopt(s, 12345, 1, &v, &l)));
	long r = getsockopt(s, SOL_SOCKET, SO_ERROR, &v, &l);
	say("getsockopt SO_ERROR: %s value %d\n", rs(r), v);
	say("getsockopt, bad value pointer: %s\n", rs(getsockopt(s, SOL_SOCKET, SO_TYPE, (void *)8, &l)));
	l = 2;
	r = getsockopt(s, SOL_SOCKET, SO_TYPE, &v, &l);
	say("getsockopt SO_TYPE, length 2: %s length %d\n", rs(r), (int)l);
	socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
	say("send from a bad buffer: %s\n", rs(send(sv[0], (void *)8, 4, 0)));
	write(sv[0], "abcd", 4);
	say("recv into a bad buffer: %s\n", rs(recv(sv[1], (void *)8, 4, 0)));
	struct msghdr mh = { .msg_iov = (struct iovec *)8, .msg_iovlen = 1 };
	say("recvmsg, bad iovec pointer: %s\n", rs(syscall(SYS_recvmsg, sv[1], &mh, 0)));
	say("recvmsg, bad msghdr pointer: %s\n", rs(syscall(SYS_recvmsg, sv[1], 8, 0)));
	say("sendmsg, bad msghdr pointer: %s\n", rs(syscall(SYS_sendmsg, sv[0], 8, 0)));
	mh.msg_iovlen = 100000;
	say("sendmsg, iovlen 100000: %s\n", rs(syscall(SYS_sendmsg, sv[0], &mh, 0)));
	struct iovec iv = { "x", 1 };
	char cb[64] = { 0 };
	struct msghdr bad = { .msg_iov = &iv, .msg_iovlen = 1, .msg_control = cb, .msg_controllen = 8 };
	say("sendmsg, control shorter than a cmsghdr: %s\n", rs(syscall(SYS_sendmsg, sv[0], &bad, 0)));
	bad.msg_control = (void *)8;
	bad.msg_controllen = 32;
	say("sendmsg, bad control pointer: %s\n", rs(syscall(SYS_sendmsg, sv[0], &bad, 0)));
	struct cmsghdr *cm = (struct cmsghdr *)cb;
	cm->cmsg_len = 1000;
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	bad.msg_control = cb;
	bad.msg_controllen = sizeof cb;
	say("sendmsg, cmsg_len past the buffer: %s\n", rs(syscall(SYS_sendmsg, sv[0], &bad, 0)));
	cm->cmsg_len = CMSG_LEN(0);
	cm->cmsg_type = 77;
	say("sendmsg, unknown SOL_SOCKET cmsg type: %s\n", rs(syscall(SYS_sendmsg, sv[0], &bad, 0)));
	cm->cmsg_type = SCM_CREDENTIALS;
	cm->cmsg_len = CMSG_LEN(4);
	say("sendmsg, SCM_CREDENTIALS of 4 bytes: %s\n", rs(syscall(SYS_sendmsg, sv[0], &bad, 0)));
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &(int){ 999 }, sizeof(int));
	say("sendmsg, SCM_RIGHTS of fd 999: %s\n", rs(syscall(SYS_sendmsg, sv[0], &bad, 0)));
	/* more fds than SCM_MAX_FD (253) in one message */
	static char many[CMSG_SPACE(254 * sizeof(int))];
	struct cmsghdr *mc = (struct cmsghdr *)many;
	mc->cmsg_len = CMSG_LEN(254 * sizeof(int));
	mc->cmsg_level = SOL_SOCKET;
	mc->cmsg_type = SCM_RIGHTS;
	memset(CMSG_DATA(mc), 0, 254 * sizeof(int));
	struct msghdr mm = { .msg_iov = &iv, .msg_iovlen = 1, .msg_control = many, .msg_controllen = sizeof many };
	say("sendmsg, 254 fds: %s\n", rs(syscall(SYS_sendmsg, sv[0], &mm, 0)));
	size_t huge = (size_t)1 << 40;	/* the kernel's msg_controllen is 64 bits (musl's field is 32 and a pad) */
	memcpy((char *)&mm + offsetof(struct msghdr, msg_controllen), &huge, sizeof huge);
	say("sendmsg, msg_controllen 2^40: %s\n", rs(syscall(SYS_sendmsg, sv[0], &mm, 0)));
	struct msghdr nm = { .msg_name = &a, .msg_namelen = -1, .msg_iov = &iv, .msg_iovlen = 1 };
	say("sendmsg, msg_namelen -1: %s\n", rs(syscall(SYS_sendmsg, sv[0], &nm, 0)));
	say("recvmsg, msg_namelen -1: %s\n", rs(syscall(SYS_recvmsg, sv[1], &nm, MSG_DONTWAIT)));
	int d[2];
	socketpair(AF_UNIX, SOCK_DGRAM, 0, d);
	say("sendto, address length 200: %s\n", rs(sendto(d[0], "x", 1, 0, (struct sockaddr *)&a, 200)));
	say("sendto, bad address pointer: %s\n", rs(sendto(d[0], "x", 1, 0, (struct sockaddr *)8, sizeof a)));
	say("sendto, path not NUL-terminated, 108 bytes: %s\n", rs(sendto(d[0], "x", 1, 0,
		(struct sockaddr *)&(struct sockaddr_un){ AF_UNIX, { [0 ... 107] = 'q' } }, sizeof(struct sockaddr_un))));
	return 0;
}

/* the single-call modes used by host-side tests */
static int one_call(int argc, char **argv)
{
	int s = socket(AF_UNIX, SOCK_STREAM, 0);
	if (s < 0) {
		say("socket: %s\n", rs(s));
		return 1;
	}
	long r;
	if (!strcmp(argv[1], "bind")) {
		r = bind_path(s, argv[2]);
	} else if (!strcmp(argv[1], "connect")) {
		r = connect_path(s, argv[2]);
	} else {
		socklen_t l;
		struct sockaddr_un a = addr(argv[2], 1, &l);
		r = connect(s, (struct sockaddr *)&a, l);
	}
	say("%s: %s\n", argv[1], rs(r));
	if (r == 0 && strcmp(argv[1], "bind")) {
		char b[64] = { 0 };
		say("read: %s \"%s\"\n", rs(read(s, b, sizeof b - 1)), b);
	}
	(void)argc;
	return r ? 1 : 0;
}

/* serve-fd PATH FILE: the host side of a test of received fds: listen on PATH, send the client FILE's fd */
static int serve_fd(const char *path, const char *file)
{
	socklen_t l;
	struct sockaddr_un a = addr(path, 0, &l);
	int s = socket(AF_UNIX, SOCK_STREAM, 0), fd = open(file, O_RDONLY | O_NONBLOCK);
	if (fd < 0 || bind(s, (struct sockaddr *)&a, l) || listen(s, 1)) {
		say("open/bind/listen: %s\n", rs(-1));
		return 1;
	}
	chmod(path, 0777);
	say("listening\n");
	alarm(120);
	int c = accept(s, NULL, NULL);
	return send_fds(c, &fd, 1) == 1 ? 0 : 1;
}

/* recv-fd PATH: connect, receive what the server passes; print what arrived */
static int recv_fd(const char *path)
{
	int s = socket(AF_UNIX, SOCK_STREAM, 0), fds[4], fl = 0;
	say("connect: %s\n", rs(connect_path(s, path)));
	int before = lowest_free();
	int n = recv_fds(s, fds, 4, 0, CMSG_SPACE(4 * sizeof(int)), &fl);
	say("recv-fd: %d fds, MSG_CTRUNC %s, new fds %d\n", n, yesno(fl & MSG_CTRUNC), lowest_free() - before);
	struct stat st;
	for (int i = 0; i < n; i++)
		if (fstat(fds[i], &st) == 0)
			say("fd: %s\n", S_ISCHR(st.st_mode) ? "char device" : S_ISREG(st.st_mode) ? "regular" : "other");
	return 0;
}

/* forge-creds: SCM_CREDENTIALS naming another pid, uid or gid (EPERM without privilege) */
static int forge_creds(void)
{
	int sv[2];
	socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
	const struct ucred forged[3] = { { getpid() + 1, getuid(), getgid() }, { getpid(), getuid() + 1, getgid() },
					 { getpid(), getuid(), getgid() + 1 } };
	const char *what[3] = { "pid", "uid", "gid" };
	for (int i = 0; i < 4; i++) {
		char cbuf[CMSG_SPACE(sizeof(struct ucred))] = { 0 };
		struct iovec iov = { "C", 1 };
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof cbuf };
		struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_CREDENTIALS;
		cm->cmsg_len = CMSG_LEN(sizeof(struct ucred));
		struct ucred mine = { getpid(), getuid(), getgid() };
		memcpy(CMSG_DATA(cm), i < 3 ? &forged[i] : &mine, sizeof mine);
		say("forged %s: %s\n", i < 3 ? what[i] : "nothing", rs(sendmsg(sv[0], &mh, 0)));
	}
	return 0;
}

/* serve-abstract NAME, serve-path PATH: the host side of the tests that host sockets are not reachable */
static int serve(const char *name, int abstract)
{
	socklen_t l;
	struct sockaddr_un a = addr(name, abstract, &l);
	int s = socket(AF_UNIX, SOCK_STREAM, 0);
	if (bind(s, (struct sockaddr *)&a, l) || listen(s, 1)) {
		say("bind/listen: %s\n", rs(-1));
		return 1;
	}
	say("listening\n");
	alarm(120);
	int c = accept(s, NULL, NULL);
	if (write(c, "hello from the host\n", 20) != 20)
		return 1;
	return 0;
}

int main(int argc, char **argv)
{
	static const struct mode modes[] = {
		{ "stream", mode_stream }, { "dgram", mode_dgram },   { "seqpacket", mode_seqpacket },
		{ "named", mode_named },   { "abstract", mode_abstract }, { "rights", mode_rights },
		{ "creds", mode_creds },   { "errors", mode_errors },
	};
	if (argc == 3 && !strcmp(argv[1], "serve-abstract"))
		return serve(argv[2], 1);
	if (argc == 3 && !strcmp(argv[1], "serve-path"))
		return serve(argv[2], 0);
	if (argc == 4 && !strcmp(argv[1], "serve-fd"))
		return serve_fd(argv[2], argv[3]);
	if (argc == 3 && !strcmp(argv[1], "recv-fd"))
		return recv_fd(argv[2]);
	if (argc == 2 && !strcmp(argv[1], "forge-creds"))
		return forge_creds();
	if (argc == 3 && (!strcmp(argv[1], "bind") || !strcmp(argv[1], "connect") || !strcmp(argv[1], "connect-abstract")))
		return one_call(argc, argv);
	return run_mode("net_unix", modes, sizeof modes / sizeof modes[0], argc, argv);
}

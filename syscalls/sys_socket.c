// SPDX-License-Identifier: GPL-2.0
/*
 * Sockets: socket, socketpair, bind, listen, accept, connect, shutdown,
 * names and options. Each socket is a host socket the sentry owns in the
 * sandbox's network (pvx/socket.h); families and types are checked here
 * before any host call (AF_UNIX, AF_INET, AF_INET6 with TCP and UDP only),
 * addresses copied in and translated (syscalls/sockaddr.c), and every call
 * that may wait does so with the sentry lock dropped, interruptibly.
 * Messages (send*, recv*) are in sys_sockmsg.c.
 */
#include <fcntl.h>
#include <linux/netlink.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>

#include "syscalls/sockaddr.h"

#define SOCK_TYPE_MASK 0xf

/*
 * socket(2)'s checks, in __sys_socket() and __sock_create()'s order, and
 * pvx's own: only AF_UNIX, AF_INET/AF_INET6 with stream (TCP) and
 * datagram (UDP) sockets, and AF_NETLINK's NETLINK_ROUTE (read-only:
 * sentry/fs/netlink.c); raw and packet sockets are refused (EPERM, as for
 * a process without CAP_NET_RAW).
 */
static long socket_check(int family, int type, int protocol)
{
	int base = type & SOCK_TYPE_MASK;

	if (type & ~(SOCK_TYPE_MASK | SOCK_CLOEXEC | SOCK_NONBLOCK))
		return -EINVAL;
	if (family < 0 || family >= AF_MAX)
		return -EAFNOSUPPORT;
	if (base > SOCK_PACKET)
		return -EINVAL;
	if (family == AF_UNIX)
		return 0;	/* unix_create() checks the type and protocol as Linux */
	if (family == AF_NETLINK) {	/* netlink_create()'s checks; only NETLINK_ROUTE is configured */
		if (base != SOCK_RAW && base != SOCK_DGRAM)
			return -ESOCKTNOSUPPORT;
		return protocol == NETLINK_ROUTE ? 0 : -EPROTONOSUPPORT;
	}
	if (family != AF_INET && family != AF_INET6)
		return -EAFNOSUPPORT;
	if (protocol < 0 || protocol >= IPPROTO_MAX)
		return -EINVAL;	/* inet_create() */
	if (base == SOCK_RAW)	/* no raw protocol is a wildcard match for 0; a real one needs CAP_NET_RAW */
		return protocol == 0 ? -EPROTONOSUPPORT : -EPERM;
	if (base == SOCK_STREAM)
		return protocol == 0 || protocol == IPPROTO_TCP ? 0 : -EPROTONOSUPPORT;
	if (base == SOCK_DGRAM)
		return protocol == 0 || protocol == IPPROTO_UDP ? 0 : -EPROTONOSUPPORT;
	return -ESOCKTNOSUPPORT;
}

/* The guest's file for a new host socket, installed at the lowest free fd; the host fd is closed on failure. */
static long install_sock(struct task *t, int hfd, int flags, int family, int type, int protocol,
			 struct file **out)
{
	struct file *f = sock_file_new(hfd, O_RDWR | (flags & SOCK_NONBLOCK ? O_NONBLOCK : 0), family,
				       type & SOCK_TYPE_MASK, protocol);
	if (!f) {
		close(hfd);
		return -ENOMEM;
	}
	((struct sock *)f->priv)->own = sock_cred_of(t);
	long fd = fd_install(t->files, f, flags & SOCK_CLOEXEC, 0);
	if (out && fd >= 0)
		*out = f;
	file_put(f);
	return fd;
}

long sys_socket(struct task *t, const long a[6])
{
	int family = (int)a[0], type = (int)a[1], protocol = (int)a[2];
	long r = socket_check(family, type, protocol);

	if (r < 0)
		return r;
	if (family != AF_UNIX && sandbox.net_blocked)
		return -EACCES;
	int hfd = socket(family, type | SOCK_CLOEXEC, protocol);
	if (hfd < 0)
		return neg_errno();
	return install_sock(t, hfd, type, family, type, protocol, NULL);
}

/* socketpair(2): AF_UNIX only (EOPNOTSUPP for the inet families, after socket()'s checks). */
long sys_socketpair(struct task *t, const long a[6])
{
	int family = (int)a[0], type = (int)a[1], protocol = (int)a[2], hfd[2];
	struct file *f[2] = { NULL, NULL };
	long r = socket_check(family, type, protocol);

	if (r < 0)
		return r;
	if (family != AF_UNIX)
		return -EOPNOTSUPP;
	if (socketpair(family, type | SOCK_CLOEXEC, protocol, hfd) < 0)
		return neg_errno();
	int fds[2];
	if ((r = fds[0] = (int)install_sock(t, hfd[0], type, family, type, protocol, &f[0])) < 0) {
		close(hfd[1]);
		return r;
	}
	if ((r = fds[1] = (int)install_sock(t, hfd[1], type, family, type, protocol, &f[1])) < 0) {
		(void)!fd_close(t->files, fds[0]);
		return r;
	}
	struct sock *s0 = f[0]->priv, *s1 = f[1]->priv;
	s0->pair = s1;
	s1->pair = s0;
	s0->peer = s1->peer = sock_cred_of(t);
	s0->has_peer = s1->has_peer = true;
	if ((r = copy_to_guest(t->mm, (uint64_t)a[3], fds, sizeof(fds)))) {
		(void)!fd_close(t->files, fds[0]);
		(void)!fd_close(t->files, fds[1]);
		return r;
	}
	return 0;
}

long sys_bind(struct task *t, const long a[6])
{
	struct sockaddr_storage sa;
	struct file *f;
	struct sock *s = sock_lookup(t, (int)a[0], &f);
	char path[sizeof(((struct sockaddr_un *)0)->sun_path) + 1];
	long r;

	if (!f)
		return -EBADF;
	if (!s)
		return -ENOTSOCK;
	if ((r = sockaddr_in_guest(t, (uint64_t)a[1], a[2], &sa)))
		return r;
	socklen_t len = (socklen_t)a[2];
	if (s->family == AF_UNIX && sockaddr_unix_path(&sa, len, path)) {
		struct guest_sun g = { .len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(path) + 1) };
		struct sockaddr_un *gu = (struct sockaddr_un *)g.addr;
		gu->sun_family = AF_UNIX;
		memcpy(gu->sun_path, path, strlen(path));
		return sock_bind_path(t, f, path, &g);
	}
	if (s->family == AF_NETLINK)
		return netlink_bind(t, f, &sa, len);
	if (s->family == AF_UNIX && sa.ss_family == AF_UNIX && len > offsetof(struct sockaddr_un, sun_path) &&
	    sandbox.net_blocked)
		return -EACCES;	/* an abstract name would be the host's */
	if (bind(f->host_fd, (struct sockaddr *)&sa, len) < 0)
		return neg_errno();
	if (s->family == AF_UNIX)
		sock_register_name(f);
	return 0;
}

/* listen(2): a connecting peer's SO_PEERCRED is the listener's credentials now (Linux's init_peercred). */
long sys_listen(struct task *t, const long a[6])
{
	struct file *f;
	struct sock *s = sock_lookup(t, (int)a[0], &f);

	if (!f)
		return -EBADF;
	if (!s)
		return -ENOTSOCK;
	if (listen(f->host_fd, (int)a[1]) < 0)
		return neg_errno();
	s->own = sock_cred_of(t);
	return 0;
}

/*
 * The other end of a connected AF_UNIX socket, if it is the sandbox's:
 * a socketpair's, or the one the host names as the peer.
 */
static struct sock *unix_peer(struct file *f)
{
	struct sock *s = f->priv;
	struct sockaddr_storage sa;
	socklen_t len = sizeof(sa);
	const socklen_t off = offsetof(struct sockaddr_un, sun_path);

	if (s->pair)
		return s->pair;
	if (getpeername(f->host_fd, (struct sockaddr *)&sa, &len) < 0 || len <= off)
		return NULL;
	return sock_find_name(((struct sockaddr_un *)&sa)->sun_path, len - off);
}

/* accept(2), accept4(2): the host's accept, lock dropped; the new socket a file of the guest's. */
static long do_accept(struct task *t, int fd, uint64_t uaddr, uint64_t ulenp, int flags)
{
	struct sockaddr_storage sa;
	socklen_t len = sizeof(sa);
	struct file *f, *nf = NULL;
	struct sock *s;

	if (flags & ~(SOCK_CLOEXEC | SOCK_NONBLOCK))
		return -EINVAL;
	if (!(s = sock_lookup(t, fd, &f)))
		return f ? -ENOTSOCK : -EBADF;
	const long a[6] = { f->host_fd, (long)&sa, (long)&len, SOCK_CLOEXEC | (flags & SOCK_NONBLOCK) };
	file_get(f);	/* f and s stay while the call waits, whatever other threads close */
	long hfd = io_block(t, NULL, f, NULL, SYS_accept4, a);
	int family = s->family, type = s->type, protocol = s->protocol;
	file_put(f);
	if (hfd < 0)
		return sock_error(t, hfd, true);
	long nfd = install_sock(t, (int)hfd, flags, family, type, protocol, &nf);
	if (nfd < 0)
		return nfd;
	struct sock *ns = nf->priv;
	if (family == AF_UNIX) {
		struct sock *peer = unix_peer(nf);
		if (peer) {
			ns->peer = peer->own;
			ns->has_peer = true;
		}
	}
	if (uaddr) {
		long r = sockaddr_out(t, &sa, sock_addr_to_guest(&sa, len), uaddr, ulenp);
		if (r < 0) {
			(void)!fd_close(t->files, (int)nfd);
			return r;
		}
	}
	return nfd;
}

long sys_accept(struct task *t, const long a[6])
{
	return do_accept(t, (int)a[0], (uint64_t)a[1], (uint64_t)a[2], 0);
}

long sys_accept4(struct task *t, const long a[6])
{
	return do_accept(t, (int)a[0], (uint64_t)a[1], (uint64_t)a[2], (int)a[3]);
}

/*
 * An AF_INET connect that may wait: started non-blocking on the host (a
 * host connect cut short by the sentry's interrupt could not be retried:
 * EALREADY), then a wait for POLLOUT with the lock dropped and SO_ERROR,
 * as inet_wait_for_connect(), for SO_SNDTIMEO at most. A blocking connect restarted after a signal
 * finds the attempt under way and waits for it again, as on Linux.
 */
/*
 * A connect that finished while no connect() call waited for it leaves the
 * host's socket SS_CONNECTING, where a blocking connect would have left it
 * SS_CONNECTED, or SS_UNCONNECTED after an error; later connects then
 * answer differently (0 for EISCONN, ECONNABORTED for EAFNOSUPPORT). One
 * more non-blocking connect() makes the host settle it as
 * __inet_stream_connect() does at the end of a wait.
 */
static void settle(struct file *f, const struct sockaddr_storage *sa, socklen_t len)
{
	int fl = fcntl(f->host_fd, F_GETFL);

	(void)fcntl(f->host_fd, F_SETFL, fl | O_NONBLOCK);
	(void)!connect(f->host_fd, (const struct sockaddr *)sa, len);
	(void)fcntl(f->host_fd, F_SETFL, fl);
}

static long inet_connect(struct task *t, struct file *f, const struct sockaddr_storage *sa, socklen_t len)
{
	int fl = fcntl(f->host_fd, F_GETFL);
	bool nonblock = fl & O_NONBLOCK;

	if (!nonblock)
		(void)fcntl(f->host_fd, F_SETFL, fl | O_NONBLOCK);
	long r = connect(f->host_fd, (const struct sockaddr *)sa, len) < 0 ? neg_errno() : 0;
	if (!nonblock)
		(void)fcntl(f->host_fd, F_SETFL, fl);
	if (nonblock || (r != -EINPROGRESS && r != -EALREADY))
		return r;
	struct pollfd p = { f->host_fd, POLLOUT, 0 };
	struct timeval tv = { 0, 0 };
	socklen_t tl = sizeof(tv);
	(void)getsockopt(f->host_fd, SOL_SOCKET, SO_SNDTIMEO, &tv, &tl);
	struct timespec to = { tv.tv_sec, tv.tv_usec * 1000 };
	const long pa[6] = { (long)&p, 1, tv.tv_sec || tv.tv_usec ? (long)&to : 0, 0, 8 };
	file_get(f);
	r = task_block(t, NULL, SYS_ppoll, pa, false);
	if (r == 0) {
		r = -EINPROGRESS;	/* SO_SNDTIMEO ran out: inet_stream_connect() says so */
	} else if (r > 0) {
		int err = 0;
		socklen_t el = sizeof(err);
		r = getsockopt(f->host_fd, SOL_SOCKET, SO_ERROR, &err, &el) < 0 ? neg_errno() : -err;
		settle(f, sa, len);
	}
	file_put(f);
	return r;
}

/*
 * connect(2). An unbound AF_UNIX stream or seqpacket socket is first
 * autobound by the sentry, so that the accepting side can tell which of
 * the sandbox's sockets its peer is (SO_PEERCRED); the guest still sees it
 * unnamed. Its own SO_PEERCRED is the listener's.
 */
long sys_connect(struct task *t, const long a[6])
{
	struct sockaddr_storage sa;
	struct file *f;
	struct sock *s = sock_lookup(t, (int)a[0], &f);
	int pathfd;
	long r;

	if (!f)
		return -EBADF;
	if (!s)
		return -ENOTSOCK;
	if ((r = sockaddr_in_guest(t, (uint64_t)a[1], a[2], &sa)))
		return r;
	socklen_t len = (socklen_t)a[2];
	if ((r = sockaddr_to_host(t, s, &sa, &len, &pathfd)))
		return r;
	if (s->family == AF_NETLINK) {	/* the default destination, at once; autobound first as on Linux */
		if ((r = netlink_ensure_bound(t, f)))
			return r;
		return connect(f->host_fd, (struct sockaddr *)&sa, len) < 0 ? neg_errno() : 0;
	}
	if (s->family != AF_UNIX) {
		r = inet_connect(t, f, &sa, len);
		return r == -EINTR ? -ERESTARTSYS : r;
	}
	if (s->type != SOCK_DGRAM && !s->host_name_len) {
		const sa_family_t fam = AF_UNIX;
		if (bind(f->host_fd, (const struct sockaddr *)&fam, sizeof(fam)) == 0) {
			sock_register_name(f);
			s->auto_named = true;
		}
	}
	const long ca[6] = { f->host_fd, (long)&sa, len };
	file_get(f);	/* f and s stay while the call waits, whatever other threads close */
	r = io_block(t, NULL, NULL, f, SYS_connect, ca);
	if (pathfd >= 0)
		close(pathfd);
	if (r == 0) {
		s->own = sock_cred_of(t);
		struct sock *peer = s->type != SOCK_DGRAM ? unix_peer(f) : NULL;
		if (peer) {
			s->peer = peer->own;
			s->has_peer = true;
		}
	}
	file_put(f);
	return r == -EINTR ? -ERESTARTSYS : r;
}

long sys_shutdown(struct task *t, const long a[6])
{
	struct file *f;
	struct sock *s = sock_lookup(t, (int)a[0], &f);

	if (!s)
		return f ? -ENOTSOCK : -EBADF;
	return shutdown(f->host_fd, (int)a[1]) < 0 ? neg_errno() : 0;
}

/* getsockname(2): a name the guest bound as it gave it; otherwise the host's (abstract, inet, unnamed). */
long sys_getsockname(struct task *t, const long a[6])
{
	struct sockaddr_storage sa;
	socklen_t len = sizeof(sa);
	struct file *f;
	struct sock *s = sock_lookup(t, (int)a[0], &f);

	if (!s)
		return f ? -ENOTSOCK : -EBADF;
	memset(&sa, 0, sizeof(sa));
	if (s->guest_name.len) {
		memcpy(&sa, s->guest_name.addr, sizeof(s->guest_name.addr));
		len = s->guest_name.len;
		return sockaddr_out(t, &sa, len, (uint64_t)a[1], (uint64_t)a[2]);
	}
	if (s->auto_named) {
		sa.ss_family = AF_UNIX;
		len = sizeof(sa_family_t);
	} else if (getsockname(f->host_fd, (struct sockaddr *)&sa, &len) < 0) {
		return neg_errno();
	} else {
		len = sock_addr_to_guest(&sa, len);
	}
	return sockaddr_out(t, &sa, len, (uint64_t)a[1], (uint64_t)a[2]);
}

long sys_getpeername(struct task *t, const long a[6])
{
	struct sockaddr_storage sa;
	socklen_t len = sizeof(sa);
	struct file *f;
	struct sock *s = sock_lookup(t, (int)a[0], &f);

	if (!s)
		return f ? -ENOTSOCK : -EBADF;
	if (getpeername(f->host_fd, (struct sockaddr *)&sa, &len) < 0)
		return neg_errno();
	return sockaddr_out(t, &sa, sock_addr_to_guest(&sa, len), (uint64_t)a[1], (uint64_t)a[2]);
}

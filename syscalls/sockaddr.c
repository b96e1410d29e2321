// SPDX-License-Identifier: GPL-2.0
/*
 * Socket addresses between guest memory and the host: copied in and out
 * with Linux's length rules, never a guest pointer handed to the host, and
 * AF_UNIX names translated both ways (paths resolve inside --root; names the
 * host reports are shown as the guest knows them: pvx/socket.h).
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "syscalls/sockaddr.h"

struct sock *sock_lookup(struct task *t, int fd, struct file **fp)
{
	struct file *f = fd_lookup(t->files, fd);

	if (f && (f->flags & O_PATH))
		f = NULL;	/* fdget() does not find an O_PATH file: EBADF */
	*fp = f;
	return sock_of(f);
}

long sockaddr_in_guest(struct task *t, uint64_t uaddr, long ulen, struct sockaddr_storage *a)
{
	memset(a, 0, sizeof(*a));
	if ((int)ulen < 0 || (int)ulen > (int)sizeof(*a))
		return -EINVAL;
	return ulen ? copy_from_guest(t->mm, a, uaddr, (size_t)ulen) : 0;
}

bool sockaddr_unix_path(const struct sockaddr_storage *a, socklen_t len, char *path)
{
	const struct sockaddr_un *u = (const struct sockaddr_un *)a;
	const socklen_t off = offsetof(struct sockaddr_un, sun_path);

	if (a->ss_family != AF_UNIX || len <= off || len > sizeof(*u) || !u->sun_path[0])
		return false;
	size_t n = strnlen(u->sun_path, len - off);	/* unix_mkname_bsd(): the path ends at a NUL or the length */
	memcpy(path, u->sun_path, n);
	path[n] = 0;
	return true;
}

long sockaddr_to_host(struct task *t, struct sock *s, struct sockaddr_storage *a, socklen_t *len, int *pathfd)
{
	struct sockaddr_un *u = (struct sockaddr_un *)a;
	const socklen_t off = offsetof(struct sockaddr_un, sun_path);
	char path[sizeof(u->sun_path) + 1];

	*pathfd = -1;
	if (s->family == AF_NETLINK)
		return netlink_dest_ok(a, *len);
	if (s->family != AF_UNIX || a->ss_family != AF_UNIX)
		return 0;	/* the host checks the family against the socket's */
	if (*len > off && !u->sun_path[0])
		return sandbox.net_blocked ? -EACCES : 0;	/* abstract: the host's, without a namespace */
	if (!sockaddr_unix_path(a, *len, path))
		return 0;
	long fd = sock_lookup_path(t, path);
	if (fd < 0)
		return fd;
	memset(u->sun_path, 0, sizeof(u->sun_path));
	int n = snprintf(u->sun_path, sizeof(u->sun_path), "/proc/self/fd/%ld", fd);
	*len = off + (socklen_t)n + 1;
	*pathfd = (int)fd;
	return 0;
}

long sockaddr_out(struct task *t, struct sockaddr_storage *a, socklen_t klen, uint64_t uaddr, uint64_t ulenp)
{
	int ulen;
	long r;

	if ((r = copy_from_guest(t->mm, &ulen, ulenp, sizeof(ulen))))
		return r;
	if (ulen > (int)klen)
		ulen = (int)klen;
	if (ulen < 0)
		return -EINVAL;
	if (ulen && (r = copy_to_guest(t->mm, uaddr, a, MIN((size_t)ulen, sizeof(*a)))))
		return r;
	int out = (int)klen;
	return copy_to_guest(t->mm, ulenp, &out, sizeof(out));
}

long sock_error(struct task *t, long r, bool nosig)
{
	struct sig_info info = { SI_KERNEL, 0, 0, 0 };

	if (r == -EINTR)
		return -ERESTARTSYS;
	if (r == -EPIPE && !nosig)
		signal_queue(t, SIGPIPE, &info);
	return r;
}

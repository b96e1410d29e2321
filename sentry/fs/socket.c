// SPDX-License-Identifier: GPL-2.0
/*
 * The socket kind of file: a host socket the sentry owns, in the sandbox's
 * network namespace (sentry/host/netns.c). Data moves with the host's calls
 * on it, waiting with the sentry lock dropped like every blocking call; the
 * kind's state (struct sock) is what the host cannot say in the guest's
 * terms: the names the guest bound, and the guest pids and ids of peers
 * (every guest socket is the sentry's, so the host would name the sentry).
 * The registry maps host names of the sandbox's sockets back to them.
 */
#include <fcntl.h>
#include <linux/netlink.h>
#include <net/if.h>
#include <poll.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "pvx/path.h"
#include "pvx/socket.h"
#include "pvx/task.h"
#include "sentry/fs/host_file.h"

#ifndef SIOCINQ
#define SIOCINQ FIONREAD
#endif
#ifndef SIOCOUTQ
#define SIOCOUTQ TIOCOUTQ
#endif

/* The sandbox's sockets with a name the host knows (a bind or the sentry's autobind). */
static struct sock *named;

struct sock_cred sock_cred_of(const struct task *t)
{
	return (struct sock_cred){ t->pid, sandbox.uid, sandbox.gid };
}

struct sock *sock_find_name(const char *sun_path, socklen_t len)
{
	for (struct sock *s = named; s; s = s->next)
		if (s->host_name_len == len && !memcmp(s->host_name, sun_path, len))
			return s;
	return NULL;
}

void sock_register_name(struct file *f)
{
	struct sock *s = f->priv;
	struct sockaddr_storage a;
	socklen_t len = sizeof(a);
	const size_t off = offsetof(struct sockaddr_un, sun_path);

	if (s->host_name_len || getsockname(f->host_fd, (struct sockaddr *)&a, &len) < 0 || len <= off)
		return;
	len = MIN(len - off, (socklen_t)sizeof(s->host_name));
	memcpy(s->host_name, ((struct sockaddr_un *)&a)->sun_path, len);
	s->host_name_len = len;
	s->next = named;
	named = s;
}

static void unregister(struct sock *s)
{
	for (struct sock **p = &named; *p; p = &(*p)->next) {
		if (*p == s) {
			*p = s->next;
			return;
		}
	}
}

socklen_t sock_addr_to_guest(struct sockaddr_storage *a, socklen_t len)
{
	struct sockaddr_un *u = (struct sockaddr_un *)a;
	const socklen_t off = offsetof(struct sockaddr_un, sun_path);
	char guest[PVX_PATH_MAX];

	if (a->ss_family != AF_UNIX || len <= off)
		return len;	/* not unix, unnamed */
	socklen_t n = MIN(len - off, (socklen_t)sizeof(u->sun_path));
	struct sock *s = sock_find_name(u->sun_path, n);
	if (s && s->auto_named)
		return off;
	if (!u->sun_path[0])
		return len;	/* abstract: the same name for the guest */
	if (s) {
		if (!s->guest_name.len)
			return off;
		memcpy(a, s->guest_name.addr, MIN(s->guest_name.len, sizeof(*a)));
		return s->guest_name.len;
	}
	/* A host process's socket: its path as the guest names it, if inside the root. */
	char host[sizeof(u->sun_path) + 1];
	memcpy(host, u->sun_path, n);
	host[n] = 0;
	int fd = host[0] != '/' ? -1 : open(host, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	long r = fd < 0 ? -ENOENT : path_of_fd(fd, guest, sizeof(guest));
	if (fd >= 0)
		close(fd);
	if (r < 0 || strlen(guest) >= sizeof(u->sun_path))
		return off;
	memset(u->sun_path, 0, sizeof(u->sun_path));
	memcpy(u->sun_path, guest, strlen(guest));
	return off + (socklen_t)strlen(guest) + 1;
}

struct sock *sock_of(struct file *f)
{
	return f && (f->ops == &socket_file_ops || f->ops == &netlink_file_ops) ? f->priv : NULL;
}

struct file *sock_file_new(int host_fd, int flags, int family, int type, int protocol)
{
	struct sock *s = calloc(1, sizeof(*s));
	struct file *f = s ? file_new(host_fd, flags, family == AF_NETLINK ? &netlink_file_ops : &socket_file_ops)
			   : NULL;

	if (!f) {
		free(s);
		return NULL;
	}
	s->family = family;
	s->type = type;
	s->protocol = protocol;
	s->dirfd = -1;
	f->priv = s;
	if (family == AF_NETLINK) {	/* one received by SCM_RIGHTS may be bound already */
		struct sockaddr_nl n = { 0 };
		socklen_t l = sizeof(n);
		s->nl_bound = getsockname(host_fd, (struct sockaddr *)&n, &l) == 0 && n.nl_pid;
	}
	return f;
}

/* The host's read or write on the socket, lock dropped; buf is the sentry's, or the guest's with as. */
static long sock_rw(struct task *t, struct addr_space *as, struct file *f, bool write, uint64_t buf, size_t count)
{
	const long a[6] = { f->host_fd, (long)buf, (long)count };

	return fs_kernel->block_io(t, as, write ? NULL : f, write ? f : NULL, write ? SYS_write : SYS_read, a);
}

/* read(2) on a socket is recv with no flags; there is no position (ESPIPE for pread). */
static long sock_read(struct task *t, struct file *f, void *buf, size_t count, off_t off __unused, bool positional)
{
	return positional ? -ESPIPE : sock_rw(t, NULL, f, false, (uint64_t)buf, count);
}

static long sock_write(struct task *t, struct file *f, const void *buf, size_t count, off_t off __unused,
		       bool positional)
{
	return positional ? -ESPIPE : sock_rw(t, NULL, f, true, (uint64_t)buf, count);
}

/* write(2) on a netlink socket: one message batch, checked in the sentry's copy before the host has it. */
static long netlink_write(struct task *t, struct file *f, const void *buf, size_t count, off_t off __unused,
			  bool positional)
{
	long r;

	if (positional)
		return -ESPIPE;
	if ((r = netlink_send_ok(buf, count)) || (r = netlink_ensure_bound(t, f)))
		return r;
	return sock_rw(t, NULL, f, true, (uint64_t)buf, count);
}

/* vmexec: the host kernel moves the data straight to or from guest memory. */
static long sock_rw_in_guest_mm(struct task *t, struct file *f, bool write, uint64_t ubuf, size_t count,
				off_t off __unused, bool positional)
{
	return positional ? -ESPIPE : sock_rw(t, t->proc->as, f, write, ubuf, count);
}

/* The last reference: close the host socket, leave the registry, forget a socketpair's other end. */
static void sock_release(struct file *f)
{
	struct sock *s = f->priv;

	close(f->host_fd);
	if (!s)
		return;
	if (s->host_name_len)
		unregister(s);
	if (s->pair)
		s->pair->pair = NULL;
	if (s->dirfd >= 0)
		close(s->dirfd);
	free(s);
}

static long sock_stat(struct file *f, struct stat *st)
{
	return fstat(f->host_fd, st) < 0 ? neg_errno() : 0;
}

static long sock_seek(struct file *f __unused, off_t off __unused, int whence __unused)
{
	return -ESPIPE;
}

static short sock_poll(struct file *f, short events)
{
	struct pollfd p = { f->host_fd, events, 0 };

	return poll(&p, 1, 0) > 0 ? p.revents : 0;
}

/* Interface queries of struct ifreq (no pointers in it) the host answers for the sandbox's network. */
static const unsigned long ifreq_get[] = {
	SIOCGIFNAME, SIOCGIFINDEX, SIOCGIFFLAGS, SIOCGIFADDR, SIOCGIFNETMASK, SIOCGIFBRDADDR, SIOCGIFDSTADDR,
	SIOCGIFMTU, SIOCGIFHWADDR, SIOCGIFTXQLEN,
};

/*
 * The socket ioctls of type 0x89 (sock_ioctl -> dev_ioctl): the read-only
 * interface queries above go to the host; every other one (setting
 * addresses, flags, routes; SIOCGIFCONF, which holds a pointer) is refused
 * after the ifreq is read, as an unprivileged caller meets it: EPERM for an
 * interface that exists, ENODEV otherwise.
 */
static long ifreq_ioctl(struct task *t, struct file *f, unsigned long cmd, uint64_t arg)
{
	struct ifreq ifr;
	long r;

	if ((r = copy_from_guest(t->mm, &ifr, arg, sizeof(ifr))))
		return r;
	ifr.ifr_name[IFNAMSIZ - 1] = 0;
	for (size_t i = 0; i < ARRAY_SIZE(ifreq_get); i++) {
		if (cmd != ifreq_get[i])
			continue;
		if (ioctl(f->host_fd, cmd, &ifr) < 0)
			return neg_errno();
		return copy_to_guest(t->mm, arg, &ifr, sizeof(ifr));
	}
	return cmd != SIOCGIFCONF && if_nametoindex(ifr.ifr_name) ? -EPERM : -ENODEV;
}

/*
 * SIOCGIFCONF (dev_ifconf): the host's list of interface addresses for the
 * sandbox's network, into the guest's buffer of ifc_len bytes (capped at
 * 64 KiB); a NULL buffer asks only for the length needed.
 */
static long ifconf_ioctl(struct task *t, struct file *f, uint64_t arg)
{
	struct ifconf ifc;
	uint64_t ubuf;
	long r;

	if ((r = copy_from_guest(t->mm, &ifc, arg, sizeof(ifc))))
		return r;
	ubuf = (uint64_t)(uintptr_t)ifc.ifc_buf;
	int len = ifc.ifc_len < 0 ? 0 : MIN(ifc.ifc_len, 65536);
	cleanup_free char *buf = ubuf ? malloc((size_t)len + 1) : NULL;
	if (ubuf && !buf)
		return -ENOMEM;
	ifc.ifc_len = len;
	ifc.ifc_buf = buf;
	if (ioctl(f->host_fd, SIOCGIFCONF, &ifc) < 0)
		return neg_errno();
	if (ubuf && ifc.ifc_len > 0 && (r = copy_to_guest(t->mm, ubuf, buf, (size_t)ifc.ifc_len)))
		return r;
	ifc.ifc_buf = (char *)(uintptr_t)ubuf;
	return copy_to_guest(t->mm, arg, &ifc, sizeof(ifc));
}

/*
 * ioctl(2) on a socket: FIONREAD/SIOCINQ, SIOCOUTQ and SIOCATMARK as the
 * host answers them (ENOTTY for SIOCATMARK but on TCP), SIOCGIFCONF (FIONBIO is file_ioctl's, through setfl),
 * interface queries (ifreq_ioctl). Nothing else reaches the
 * host: ENOTTY, as Linux for a request no layer knows.
 */
static long sock_ioctl(struct task *t, struct file *f, unsigned long cmd, uint64_t arg)
{
	int v;

	switch (cmd) {
	case SIOCINQ:
	case SIOCOUTQ:
	case SIOCATMARK:
		if (ioctl(f->host_fd, cmd, &v) < 0)
			return neg_errno();
		return copy_to_guest(t->mm, arg, &v, sizeof(v));
	case SIOCGIFCONF:
		return ifconf_ioctl(t, f, arg);
	}
	if (_IOC_TYPE(cmd) == 0x89)
		return ifreq_ioctl(t, f, cmd, arg);
	return -ENOTTY;
}

static long sock_mmap(struct file *f __unused)
{
	return -ENODEV;
}

/*
 * A socket is a host socket: the host answers sendfile, fstatfs, flock and
 * the mode of its sockfs inode (its own, no other file's), and SCM_RIGHTS
 * passes it; it has no path (AT_EMPTY_PATH, exec, reopen: file_object's).
 */
static long sock_object(struct file *f, enum file_call call)
{
	switch (call) {
	case FILE_DIR:
	case FILE_PATH:
	case FILE_EXEC:
	case FILE_REOPEN:
		return -ENOENT;
	default:
		return f->host_fd;
	}
}

/* A netlink socket's messages must pass netlink_send_ok: nothing reaches it without the sentry's copy. */
static long netlink_object(struct file *f, enum file_call call)
{
	return call == FILE_SPLICE || call == FILE_SENDFILE ? -EINVAL : sock_object(f, call);
}

const struct file_ops socket_file_ops = {
	.read = sock_read,
	.write = sock_write,
	.rw_in_guest_mm = sock_rw_in_guest_mm,
	.release = sock_release,
	.stat = sock_stat,
	.seek = sock_seek,
	.poll = sock_poll,
	.ioctl = sock_ioctl,
	.mmap = sock_mmap,
	.object = sock_object,
	.getfl = host_getfl,	/* O_NONBLOCK (F_SETFL, FIONBIO) is the host socket's, which its waits follow */
	.setfl = host_setfl,
};

/* AF_NETLINK: no zero-copy write from guest memory, no splice or sendfile into it (sentry/fs/netlink.c). */
const struct file_ops netlink_file_ops = {
	.read = sock_read,
	.write = netlink_write,
	.release = sock_release,
	.stat = sock_stat,
	.seek = sock_seek,
	.poll = sock_poll,
	.ioctl = sock_ioctl,
	.mmap = sock_mmap,
	.object = netlink_object,
	.getfl = host_getfl,
	.setfl = host_setfl,
};

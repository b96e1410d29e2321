// SPDX-License-Identifier: GPL-2.0
/*
 * Messages on sockets: sendto, sendmsg, sendmmsg, recvfrom, recvmsg,
 * recvmmsg. The guest's msghdr, iovecs, address and control messages are
 * copied in and checked with Linux's rules (___sys_sendmsg, __copy_msghdr),
 * the data gathered into a sentry buffer and given to the host's sendmsg or
 * recvmsg with the lock dropped; the host never sees a guest pointer.
 */
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>

#include "syscalls/sockcmsg.h"

#define IOV_MAX_GUEST 1024	/* UIO_MAXIOV */
#define STREAM_CHUNK (1UL << 20)	/* a stream send or receive per host call */
#define DGRAM_MAX (4UL << 20)	/* a datagram bigger than this: EMSGSIZE (hosts' limits are lower) */
#define SEND_FLAGS (MSG_OOB | MSG_DONTROUTE | MSG_DONTWAIT | MSG_EOR | MSG_MORE | MSG_CONFIRM | MSG_FASTOPEN)
#define RECV_FLAGS (MSG_OOB | MSG_PEEK | MSG_TRUNC | MSG_DONTWAIT | MSG_WAITALL | MSG_ERRQUEUE)

/* The guest's struct msghdr and struct mmsghdr (x86-64). */
struct guest_msghdr {
	uint64_t name;
	int32_t namelen;
	uint32_t pad;
	uint64_t iov, iovlen, control, controllen;
	int32_t flags;
	uint32_t pad2;
};
_Static_assert(sizeof(struct guest_msghdr) == 56, "struct msghdr of x86-64");
#define MMSG_SIZE 64
#define MSG_LEN_OFF 56
#define NAMELEN_OFF 8
#define CONTROLLEN_OFF 40
#define FLAGS_OFF 48

/* The guest's iovecs (get_iov, but EMSGSIZE for too many, as ___sys_sendmsg); *total their sum. */
static long get_iovs(struct task *t, const struct guest_msghdr *m, struct iovec **out, size_t *total)
{
	if (m->iovlen > IOV_MAX_GUEST)
		return -EMSGSIZE;
	long r = get_iov(t, m->iov, (long)m->iovlen, out);
	if (r < 0)
		return r;
	*total = (size_t)r;
	return 0;
}

/* One sendmsg of the guest's message m (its iovecs copied in: iov) on f; the bytes sent or -errno. */
static long send_one(struct task *t, struct file *f, struct sock *s, const struct guest_msghdr *m,
		     const struct iovec *iov, size_t total, int flags)
{
	struct sockaddr_storage sa;
	struct host_ctl hc = { 0 };
	size_t done = 0;
	int pathfd = -1;
	cleanup_free char *buf = NULL;
	long r;

	if (m->namelen < 0)
		return -EINVAL;
	socklen_t nl = (socklen_t)MIN(m->namelen, (int)sizeof(sa));
	if (m->name && nl && ((r = sockaddr_in_guest(t, m->name, nl, &sa)) || (r = sockaddr_to_host(t, s, &sa, &nl, &pathfd))))
		return r;
	if (m->controllen > INT_MAX)
		return -ENOBUFS;
	if ((r = cmsg_to_host(t, s, m->control, m->controllen, &hc)))
		goto out;
	bool stream = s->type == SOCK_STREAM;
	r = -EMSGSIZE;
	if (!stream && total > DGRAM_MAX)
		goto out;
	size_t cap = stream ? MIN(total, STREAM_CHUNK) : total;
	buf = malloc(cap + 1);
	r = -ENOMEM;
	if (!buf)
		goto out;
	bool blocking = !(flags & MSG_DONTWAIT) && !(f->flags & O_NONBLOCK);
	do {
		size_t chunk = MIN(total - done, cap);
		if (iov_move(t, iov, m->iovlen, done, buf, chunk, false) < chunk) {
			r = done ? (long)done : -EFAULT;
			goto out;
		}
		if (s->family == AF_NETLINK && ((r = netlink_send_ok(buf, chunk)) || (r = netlink_ensure_bound(t, f))))
			goto out;	/* checked in the sentry's copy, which is what the host gets */
		struct iovec hiov = { buf, chunk };
		struct msghdr hm = { m->name && nl ? &sa : NULL, m->name ? nl : 0, &hiov, 1,
				     done ? NULL : hc.buf, done ? 0 : hc.len, 0 };
		const long a[6] = { f->host_fd, (long)&hm, (flags & SEND_FLAGS) | MSG_NOSIGNAL };
		r = io_block(t, NULL, NULL, f, SYS_sendmsg, a);
		if (r < 0) {
			r = done ? (long)done : sock_error(t, r, flags & MSG_NOSIGNAL);
			goto out;
		}
		s->last_sender = sock_cred_of(t);
		done += (size_t)r;
		if ((size_t)r < chunk)
			break;
	} while (stream && blocking && done < total && !signal_pending(t));
	r = (long)done;
out:
	host_ctl_release(&hc);
	if (pathfd >= 0)
		close(pathfd);
	return r;
}

/* Whose message the host says the sentry sent: the sending socket's last sender, as far as pvx knows it. */
struct sender_arg {
	struct file *f;
	struct sockaddr_storage *from;
	socklen_t fromlen;
};

static struct sock_cred sender_of(void *arg)
{
	struct sender_arg *sa = arg;
	struct sock *s = sa->f->priv, *peer = s->pair;
	const socklen_t off = offsetof(struct sockaddr_un, sun_path);
	struct sockaddr_storage p;
	socklen_t pl = sizeof(p);

	if (!peer && sa->fromlen > off)
		peer = sock_find_name(((struct sockaddr_un *)sa->from)->sun_path, sa->fromlen - off);
	if (!peer && getpeername(sa->f->host_fd, (struct sockaddr *)&p, &pl) == 0 && pl > off)
		peer = sock_find_name(((struct sockaddr_un *)&p)->sun_path, pl - off);
	if (peer && peer->last_sender.pid)
		return peer->last_sender;
	if (s->has_peer)
		return s->peer;
	return (struct sock_cred){ 0, sandbox.uid, sandbox.gid };
}

/* Can the guest's buffer at the first non-empty iovec take data (EFAULT before anything is consumed)? */
static bool first_writable(struct task *t, const struct iovec *iov, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (!iov[i].iov_len)
			continue;
		const struct vma *v = vma_lookup(&t->mm->vmas, (uint64_t)iov[i].iov_base);
		return v && (v->prot & PROT_WRITE);
	}
	return true;
}

/*
 * One recvmsg into the guest's message m (at um in guest memory, whose
 * msg_namelen, msg_controllen and msg_flags are written back when um is set;
 * else the name goes to uname/unamelen as recvfrom's). The bytes received or -errno.
 */
static long recv_one(struct task *t, struct file *f, struct sock *s, const struct guest_msghdr *m,
		     const struct iovec *iov, size_t total, int flags, uint64_t um, uint64_t unamelen)
{
	struct sockaddr_storage from;
	long r;

	if (m->namelen < 0 && um)
		return -EINVAL;
	size_t cap = MIN(total, s->type == SOCK_STREAM ? STREAM_CHUNK : DGRAM_MAX);
	if (!(s->type == SOCK_STREAM && (flags & MSG_TRUNC)) && !first_writable(t, iov, m->iovlen))
		return -EFAULT;	/* (TCP's MSG_TRUNC discards the data: no buffer needed) */
	cleanup_free char *buf = malloc(cap + 1);
	cleanup_free char *ctl = calloc(1, CMSG_SPACE(SCM_MAX_FD * sizeof(int)) + 1024);
	if (!buf || !ctl)
		return -ENOMEM;
	struct iovec hiov = { buf, cap };
	memset(&from, 0, sizeof(from));
	struct msghdr hm = { &from, sizeof(from), &hiov, 1, ctl, CMSG_SPACE(SCM_MAX_FD * sizeof(int)) + 1024, 0 };
	const long a[6] = { f->host_fd, (long)&hm, (flags & RECV_FLAGS) | MSG_CMSG_CLOEXEC };
	long n = io_block(t, NULL, f, NULL, SYS_recvmsg, a);
	if (n < 0)
		return sock_error(t, n, true);
	size_t got = MIN((size_t)n, cap);
	if (iov_move(t, iov, m->iovlen, 0, buf, got, true) < got && got)
		n = -EFAULT;	/* the data is gone, as Linux's copy fault loses it */
	struct guest_ctl gc = { m->control, m->controllen, 0, 0 };
	struct sender_arg sa = { f, &from, hm.msg_namelen };
	if (!hm.msg_controllen)
		hm.msg_control = NULL;
	r = cmsg_to_guest(t, &hm, &gc, flags & MSG_CMSG_CLOEXEC, sender_of, &sa);
	if (n < 0 || r < 0)
		return n < 0 ? n : r;
	socklen_t klen = hm.msg_namelen ? sock_addr_to_guest(&from, hm.msg_namelen) : 0;
	int oflags = hm.msg_flags | gc.flags;
	if (!um) {
		if (m->name && (r = sockaddr_out(t, &from, klen, m->name, unamelen)))
			return r;
		return n;
	}
	if (m->name) {
		int ul = (int)MIN((socklen_t)m->namelen, klen);
		if (ul && (r = copy_to_guest(t->mm, m->name, &from, (size_t)ul)))
			return r;
	}
	int nlen = m->name ? (int)klen : 0;
	uint64_t clen = gc.used;
	if ((r = copy_to_guest(t->mm, um + NAMELEN_OFF, &nlen, sizeof(nlen))) ||
	    (r = copy_to_guest(t->mm, um + CONTROLLEN_OFF, &clen, sizeof(clen))) ||
	    (r = copy_to_guest(t->mm, um + FLAGS_OFF, &oflags, sizeof(oflags))))
		return r;
	return n;
}

/*
 * The socket of guest fd fd (EBADF, ENOTSOCK), its file held until
 * msg_done: a close by another thread while the call waits cannot free it.
 */
static struct sock *msg_sock(struct task *t, int fd, struct file **f, long *err)
{
	struct sock *s = sock_lookup(t, fd, f);

	*err = !*f ? -EBADF : !s ? -ENOTSOCK : 0;
	if (s)
		file_get(*f);
	return s;
}

static long msg_done(struct file *f, long r)
{
	file_put(f);
	return r;
}

/* sendto(2): one buffer, the address as the message's name (EINVAL for a length past the storage). */
long sys_sendto(struct task *t, const long a[6])
{
	struct file *f;
	long r;
	struct sock *s = msg_sock(t, (int)a[0], &f, &r);
	struct iovec iov = { (void *)a[1], (size_t)a[2] };

	if (!s)
		return r;
	if (a[4] && ((int)a[5] < 0 || (int)a[5] > (int)sizeof(struct sockaddr_storage)))
		return msg_done(f, -EINVAL);
	if ((ssize_t)a[2] < 0)
		return msg_done(f, -EINVAL);
	struct guest_msghdr m = { .name = a[5] ? (uint64_t)a[4] : 0, .namelen = a[4] ? (int)a[5] : 0, .iovlen = 1 };
	return msg_done(f, send_one(t, f, s, &m, &iov, iov.iov_len, (int)a[3]));
}

/* recvfrom(2): the sender's address to a[4], its length to a[5], when a[4] is set. */
long sys_recvfrom(struct task *t, const long a[6])
{
	struct file *f;
	long r;
	struct sock *s = msg_sock(t, (int)a[0], &f, &r);
	struct iovec iov = { (void *)a[1], (size_t)a[2] };

	if (!s)
		return r;
	if ((ssize_t)a[2] < 0)
		return msg_done(f, -EINVAL);
	struct guest_msghdr m = { .name = (uint64_t)a[4], .iovlen = 1 };
	return msg_done(f, recv_one(t, f, s, &m, &iov, iov.iov_len, (int)a[3], 0, (uint64_t)a[5]));
}

/* sendmsg of the guest msghdr at um. */
static long sendmsg_at(struct task *t, struct file *f, struct sock *s, uint64_t um, int flags)
{
	struct guest_msghdr m;
	cleanup_free struct iovec *iov = NULL;
	size_t total;
	long r;

	if ((r = copy_from_guest(t->mm, &m, um, sizeof(m))) || (r = get_iovs(t, &m, &iov, &total)))
		return r;
	return send_one(t, f, s, &m, iov, total, flags);
}

/* recvmsg into the guest msghdr at um (its lengths and flags written back). */
static long recvmsg_at(struct task *t, struct file *f, struct sock *s, uint64_t um, int flags)
{
	struct guest_msghdr m;
	cleanup_free struct iovec *iov = NULL;
	size_t total;
	long r;

	if ((r = copy_from_guest(t->mm, &m, um, sizeof(m))) || (r = get_iovs(t, &m, &iov, &total)))
		return r;
	return recv_one(t, f, s, &m, iov, total, flags, um, 0);
}

long sys_sendmsg(struct task *t, const long a[6])
{
	struct file *f;
	long r;
	struct sock *s = msg_sock(t, (int)a[0], &f, &r);

	return s ? msg_done(f, sendmsg_at(t, f, s, (uint64_t)a[1], (int)a[2])) : r;
}

long sys_recvmsg(struct task *t, const long a[6])
{
	struct file *f;
	long r;
	struct sock *s = msg_sock(t, (int)a[0], &f, &r);

	return s ? msg_done(f, recvmsg_at(t, f, s, (uint64_t)a[1], (int)a[2])) : r;
}

/*
 * sendmmsg(2): "returns the number of messages sent from msgvec; if this is
 * less than vlen, the caller can retry"; an error only when the first fails.
 */
long sys_sendmmsg(struct task *t, const long a[6])
{
	struct file *f;
	long r;
	struct sock *s = msg_sock(t, (int)a[0], &f, &r);
	unsigned vlen = MIN((unsigned)a[2], IOV_MAX_GUEST), i;

	if (!s)
		return r;
	for (i = 0; i < vlen; i++) {
		uint64_t um = (uint64_t)a[1] + (uint64_t)i * MMSG_SIZE;
		r = sendmsg_at(t, f, s, um, (int)a[3]);
		if (r < 0)
			break;
		unsigned len = (unsigned)r;
		if ((r = copy_to_guest(t->mm, um + MSG_LEN_OFF, &len, sizeof(len))))
			break;
	}
	return msg_done(f, i ? (long)i : r);
}

/*
 * recvmmsg(2): up to vlen messages; MSG_WAITFORONE makes every receive after
 * the first non-blocking; the timeout is checked after each message, as
 * Linux does. An error after some messages is left for the next call.
 */
long sys_recvmmsg(struct task *t, const long a[6])
{
	struct file *f;
	long r;
	struct sock *s = msg_sock(t, (int)a[0], &f, &r);
	unsigned vlen = MIN((unsigned)a[2], IOV_MAX_GUEST), i;
	int flags = (int)a[3];
	struct timespec to, now;
	uint64_t deadline = 0;

	if (!s)
		return r;
	if (a[4]) {
		if ((r = copy_from_guest(t->mm, &to, (uint64_t)a[4], sizeof(to))))
			return msg_done(f, r);
		if (to.tv_sec < 0 || to.tv_nsec < 0 || to.tv_nsec >= 1000000000L)
			return msg_done(f, -EINVAL);
		clock_gettime(CLOCK_MONOTONIC, &now);
		deadline = (uint64_t)(now.tv_sec + to.tv_sec) * 1000000000ULL + (uint64_t)(now.tv_nsec + to.tv_nsec);
	}
	for (i = 0; i < vlen; i++) {
		uint64_t um = (uint64_t)a[1] + (uint64_t)i * MMSG_SIZE;
		r = recvmsg_at(t, f, s, um, i && (flags & MSG_WAITFORONE) ? flags | MSG_DONTWAIT : flags);
		if (r < 0)
			break;
		unsigned len = (unsigned)r;
		if ((r = copy_to_guest(t->mm, um + MSG_LEN_OFF, &len, sizeof(len))))
			break;
		if (deadline) {
			clock_gettime(CLOCK_MONOTONIC, &now);
			if ((uint64_t)now.tv_sec * 1000000000ULL + (uint64_t)now.tv_nsec >= deadline) {
				i++;
				break;
			}
		}
	}
	return msg_done(f, i ? (long)i : r);
}

// SPDX-License-Identifier: GPL-2.0
/*
 * Control messages between the guest and the host socket. Out: the guest's
 * buffer is copied in and walked with Linux's rules (__scm_send: CMSG_OK or
 * EINVAL), SCM_RIGHTS guest fds become the host fds of the files (each file
 * held until the host call is done), SCM_CREDENTIALS are checked against the
 * guest's own pid and ids and sent as the sentry's. In: host fds received
 * become guest files, each checked by the file policy as an open would be
 * (fstat of the fd; refused ones are closed, MSG_CTRUNC), at most as many as
 * the guest's buffer holds (scm_detach_fds); credentials are shown in guest
 * pids and ids; put_cmsg()'s truncation rules throughout.
 */
#include <fcntl.h>
#include <linux/netlink.h>
#include <string.h>
#include <sys/stat.h>

#include "pvx/policy.h"
#include "syscalls/sockcmsg.h"

#define CTL_MAX 65536	/* a bigger control buffer than net.core.optmem_max allows: ENOBUFS */

void host_ctl_release(struct host_ctl *hc)
{
	for (int i = 0; i < hc->nheld; i++)
		file_put(hc->held[i]);
	hc->nheld = 0;
	for (int i = 0; i < hc->ntokens; i++)
		close(hc->tokens[i]);
	hc->ntokens = 0;
	free(hc->buf);
	hc->buf = NULL;
}

/* Append a host cmsg of level/type with len bytes of data to hc->buf. */
static void put_host(struct host_ctl *hc, int level, int type, const void *data, size_t len)
{
	struct cmsghdr *c = (struct cmsghdr *)(hc->buf + hc->len);

	c->cmsg_len = CMSG_LEN(len);
	c->cmsg_level = level;
	c->cmsg_type = type;
	memcpy(CMSG_DATA(c), data, len);
	hc->len += CMSG_SPACE(len);
}

/* SCM_RIGHTS: each guest fd's file, held; its host fd into fds, or a token for a file the host cannot carry. */
static long rights_out(struct task *t, struct host_ctl *hc, const int *gfd, int n, int *fds, int *nfds)
{
	if (*nfds + n > SCM_MAX_FD)
		return -EINVAL;
	for (int i = 0; i < n; i++) {
		struct file *f = fd_lookup(t->files, gfd[i]);
		if (!f)
			return -EBADF;
		long hfd = file_object(f, FILE_PASS);
		if (hfd < 0) {
			if ((hfd = pass_token(f)) < 0)
				return hfd;
			hc->tokens[hc->ntokens++] = (int)hfd;
		}
		hc->held[hc->nheld++] = file_get(f);
		fds[(*nfds)++] = (int)hfd;
	}
	return 0;
}

#ifndef SO_TIMESTAMPING_NEW
#define SO_TIMESTAMPING_NEW 65
#endif

/*
 * A SOL_SOCKET control message on a socket other than AF_UNIX, as
 * __sock_cmsg_send() takes it: SCM_RIGHTS and SCM_CREDENTIALS are
 * AF_UNIX's and ignored, SO_MARK needs CAP_NET_ADMIN (EPERM: never the
 * sentry's), timestamping and SCM_TXTIME are values the host checks, the
 * rest EINVAL.
 */
static long inet_sol_socket(struct host_ctl *hc, int type, const char *data, size_t dlen)
{
	switch (type) {
	case SCM_RIGHTS:
	case SCM_CREDENTIALS:
		return 0;
	case SO_MARK:
		return -EPERM;
	case SO_TIMESTAMPING_OLD:
	case SO_TIMESTAMPING_NEW:
	case SCM_TXTIME:
		put_host(hc, SOL_SOCKET, type, data, dlen);
		return 0;
	default:
		return -EINVAL;
	}
}

long cmsg_to_host(struct task *t, struct sock *s, uint64_t uctl, size_t ulen, struct host_ctl *hc)
{
	int fds[SCM_MAX_FD], nfds = 0;
	long r;

	memset(hc, 0, sizeof(*hc));
	if (!ulen)
		return 0;
	if (ulen > CTL_MAX)
		return -ENOBUFS;
	cleanup_free char *g = malloc(ulen);
	hc->buf = calloc(1, ulen + CMSG_SPACE(sizeof(fds)) + CMSG_SPACE(sizeof(struct ucred)));
	if (!g || !hc->buf)
		return -ENOMEM;
	if ((r = copy_from_guest(t->mm, g, uctl, ulen)))
		return r;
	for (size_t off = 0; off + sizeof(struct cmsghdr) <= ulen;) {
		struct cmsghdr c;
		memcpy(&c, g + off, sizeof(c));
		if (c.cmsg_len < sizeof(struct cmsghdr) || c.cmsg_len > ulen - off)
			return -EINVAL;	/* !CMSG_OK */
		const char *data = g + off + CMSG_LEN(0);
		size_t dlen = c.cmsg_len - CMSG_LEN(0);
		if (c.cmsg_level == SOL_SOCKET && s->family != AF_UNIX) {
			if ((r = inet_sol_socket(hc, c.cmsg_type, data, dlen)))
				return r;
		} else if (c.cmsg_level == SOL_SOCKET) {
			if (c.cmsg_type == SCM_RIGHTS) {
				int gfd[SCM_MAX_FD + 1];
				int n = (int)MIN(dlen / sizeof(int), (size_t)SCM_MAX_FD + 1);
				memcpy(gfd, data, (size_t)n * sizeof(int));
				if ((r = rights_out(t, hc, gfd, n, fds, &nfds)))
					return r;
			} else if (c.cmsg_type == SCM_CREDENTIALS) {
				struct ucred uc;
				if (dlen != sizeof(uc))
					return -EINVAL;
				memcpy(&uc, data, sizeof(uc));
				if (uc.pid != t->pid || uc.uid != sandbox.uid || uc.gid != sandbox.gid)
					return -EPERM;	/* scm_check_creds(): the guest's own only */
				uc = (struct ucred){ getpid(), getuid(), getgid() };
				put_host(hc, SOL_SOCKET, SCM_CREDENTIALS, &uc, sizeof(uc));
			} else {
				return -EINVAL;
			}
		} else if (s->family != AF_UNIX) {
			put_host(hc, c.cmsg_level, c.cmsg_type, data, dlen);	/* IP/IPv6/UDP: values, no pointers */
		}
		off += CMSG_ALIGN(c.cmsg_len);
	}
	if (nfds)
		put_host(hc, SOL_SOCKET, SCM_RIGHTS, fds, (size_t)nfds * sizeof(int));
	return 0;
}

/* put_cmsg(): one cmsg into the guest's buffer as far as it fits (MSG_CTRUNC when it does not). */
static long put_guest(struct task *t, struct guest_ctl *gc, int level, int type, const void *data, size_t len)
{
	size_t room = gc->len - gc->used;
	struct cmsghdr h = { CMSG_LEN(len), level, type };
	long r;

	if (!gc->uctl || room < sizeof(h)) {
		gc->flags |= MSG_CTRUNC;
		return 0;
	}
	if (room < h.cmsg_len) {
		gc->flags |= MSG_CTRUNC;
		h.cmsg_len = room;
	}
	uint64_t at = gc->uctl + gc->used;
	if ((r = copy_to_guest(t->mm, at, &h, sizeof(h))) ||
	    (r = copy_to_guest(t->mm, at + sizeof(h), data, h.cmsg_len - sizeof(h))))
		return r;
	gc->used += MIN(CMSG_SPACE(len), room);
	return 0;
}

/* A received host fd as a guest file: a socket of a family pvx has, or what the file policy lets through. */
static struct file *received_file(int hfd)
{
	struct stat st;
	int fl = fcntl(hfd, F_GETFL);

	if (fl < 0 || fstat(hfd, &st) < 0)
		return NULL;
	struct file *passed = pass_received(&st);
	if (passed) {
		close(hfd);	/* the token's: the file is the one sent */
		return passed;
	}
	if (S_ISSOCK(st.st_mode)) {
		int v[3];
		socklen_t l = sizeof(int);
		const int opt[3] = { SO_DOMAIN, SO_TYPE, SO_PROTOCOL };
		for (int i = 0; i < 3; i++, l = sizeof(int))
			if (getsockopt(hfd, SOL_SOCKET, opt[i], &v[i], &l) < 0)
				return NULL;
		if (v[0] != AF_UNIX && v[0] != AF_INET && v[0] != AF_INET6 && (v[0] != AF_NETLINK || v[2] != NETLINK_ROUTE))
			return NULL;
		return sock_file_new(hfd, fl, v[0], v[1], v[2]);
	}
	if (policy_check(hfd, &st, fl, fl) < 0)
		return NULL;
	return file_new(hfd, fl, file_kind_of(hfd));
}

/* scm_detach_fds(): as many of the host fds as fit become guest fds; the others are closed. */
static long rights_in(struct task *t, struct guest_ctl *gc, const int *hfd, int n, bool cloexec)
{
	size_t room = gc->uctl && gc->len - gc->used > CMSG_LEN(0) ? gc->len - gc->used : 0;
	int max = room ? (int)((room - CMSG_LEN(0)) / sizeof(int)) : 0;
	int gfd[SCM_MAX_FD], k = 0;

	for (int i = 0; i < n; i++) {
		struct file *f = k < max ? received_file(hfd[i]) : NULL;
		long fd = f ? fd_install(t->files, f, cloexec, 0) : -EBADF;
		if (f)
			file_put(f);
		else
			close(hfd[i]);
		if (fd < 0) {
			gc->flags |= MSG_CTRUNC;
			continue;
		}
		gfd[k++] = (int)fd;
	}
	if (!k)
		return 0;
	return put_guest(t, gc, SOL_SOCKET, SCM_RIGHTS, gfd, (size_t)k * sizeof(int));
}

long cmsg_to_guest(struct task *t, struct msghdr *hm, struct guest_ctl *gc, bool cloexec,
		   struct sock_cred (*sender)(void *arg), void *arg)
{
	long r = 0;

	for (struct cmsghdr *c = CMSG_FIRSTHDR(hm); c; c = CMSG_NXTHDR(hm, c)) {
		size_t dlen = c->cmsg_len - CMSG_LEN(0);
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
			long e = rights_in(t, gc, (const int *)CMSG_DATA(c), (int)(dlen / sizeof(int)), cloexec);
			r = r ?: e;
		} else if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS && dlen == sizeof(struct ucred)) {
			struct ucred uc;
			memcpy(&uc, CMSG_DATA(c), sizeof(uc));
			if (uc.pid == getpid()) {
				struct sock_cred sc = sender(arg);
				uc = (struct ucred){ sc.pid, sc.uid, sc.gid };
			} else {
				uc.pid = 0;	/* a process outside the sandbox has no pid in it */
			}
			r = r ?: put_guest(t, gc, SOL_SOCKET, SCM_CREDENTIALS, &uc, sizeof(uc));
		} else {
			r = r ?: put_guest(t, gc, c->cmsg_level, c->cmsg_type, CMSG_DATA(c), dlen);
		}
	}
	return r;
}

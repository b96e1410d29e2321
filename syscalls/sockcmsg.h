/* SPDX-License-Identifier: GPL-2.0 */
/* Control messages of sendmsg/recvmsg between the guest and the host (syscalls/sockcmsg.c). */
#ifndef PVX_SYSCALLS_SOCKCMSG_H
#define PVX_SYSCALLS_SOCKCMSG_H

#include <sys/socket.h>

#include "syscalls/sockaddr.h"

#ifndef SCM_MAX_FD
#define SCM_MAX_FD 253
#endif

/* The host's control buffer for a send, and the files whose host fds it passes (held until released). */
struct host_ctl {
	char *buf;
	size_t len;
	struct file *held[SCM_MAX_FD];
	int nheld;
	int tokens[SCM_MAX_FD];	/* host fds made for the send (pass_token), closed with it */
	int ntokens;
};

/* The guest's control buffer of a receive: where, how big, how much is used, MSG_CTRUNC. */
struct guest_ctl {
	uint64_t uctl;
	size_t len, used;
	int flags;
};

/* Copy in and translate the guest's control messages for socket s (EINVAL, EBADF, EPERM, EFAULT, ENOBUFS). */
long cmsg_to_host(struct task *t, struct sock *s, uint64_t uctl, size_t ulen, struct host_ctl *hc) __must_check;
void host_ctl_release(struct host_ctl *hc);

/*
 * The host's control messages of hm out to the guest: fds installed
 * (FD_CLOEXEC with cloexec), credentials of the sentry shown as sender(arg)'s.
 */
long cmsg_to_guest(struct task *t, struct msghdr *hm, struct guest_ctl *gc, bool cloexec,
		   struct sock_cred (*sender)(void *arg), void *arg) __must_check;

#endif

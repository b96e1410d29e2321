/* SPDX-License-Identifier: GPL-2.0 */
/* Socket addresses between the guest and the host (syscalls/sockaddr.c), shared by sys_socket.c and sys_sockmsg.c. */
#ifndef PVX_SYSCALLS_SOCKADDR_H
#define PVX_SYSCALLS_SOCKADDR_H

#include <sys/socket.h>

#include "pvx/socket.h"
#include "syscalls/syscalls.h"

/* fd's socket (EBADF, ENOTSOCK); *fp gets its file. */
struct sock *sock_lookup(struct task *t, int fd, struct file **fp);

/* move_addr_to_kernel(): EINVAL for a length < 0 or > sizeof(struct sockaddr_storage), EFAULT. */
long sockaddr_in_guest(struct task *t, uint64_t uaddr, long ulen, struct sockaddr_storage *a) __must_check;

/*
 * The address a connect or sendto of socket s names, ready for the host:
 * an AF_UNIX path looked up inside --root becomes /proc/self/fd/N of the
 * socket file found (*pathfd = N, the caller closes it); abstract names are
 * refused (EACCES) when the sandbox has no network namespace of its own.
 * A netlink destination other than the kernel is refused (EPERM).
 */
long sockaddr_to_host(struct task *t, struct sock *s, struct sockaddr_storage *a, socklen_t *len,
		      int *pathfd) __must_check;

/* move_addr_to_user(): klen bytes of a out to uaddr (as many as the guest's length allows), klen to ulenp. */
long sockaddr_out(struct task *t, struct sockaddr_storage *a, socklen_t len, uint64_t uaddr,
		  uint64_t ulenp) __must_check;

/* A guest AF_UNIX path name in a (len bytes): NUL-terminated into path[109]; false when it is not a path. */
bool sockaddr_unix_path(const struct sockaddr_storage *a, socklen_t len, char *path);

/* The guest's answer for a failed blocking socket call: ERESTARTSYS for EINTR, SIGPIPE for EPIPE unless nosig. */
long sock_error(struct task *t, long r, bool nosig);

#endif

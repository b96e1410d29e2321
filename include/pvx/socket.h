/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Sockets (sentry/fs/socket.c, unix_name.c): host sockets the sentry owns,
 * a file kind of their own. They live in the sandbox's network namespace
 * (sentry/host/netns.c), so abstract AF_UNIX names and every AF_INET port
 * are the sandbox's; named AF_UNIX sockets are files inside --root.
 */
#ifndef PVX_SOCKET_H
#define PVX_SOCKET_H

#include <sys/socket.h>
#include <sys/un.h>

#include "pvx/file.h"

/* Who a socket's peer is for SO_PEERCRED and SCM_CREDENTIALS, in the guest's pids and ids. */
struct sock_cred {
	int pid;
	unsigned uid, gid;
};

/* A guest AF_UNIX address as big as Linux may report (a 108-byte path without NUL gets one more). */
struct guest_sun {
	socklen_t len;
	char addr[sizeof(struct sockaddr_un) + 2];
};

/* The socket kind's state (struct file's priv). */
struct sock {
	int family, type, protocol;	/* type without SOCK_NONBLOCK/SOCK_CLOEXEC */
	int dirfd;			/* O_PATH fd of a named socket's directory (keeps host_name unique), or -1 */
	struct guest_sun guest_name;	/* the name the guest bound (len 0: none it chose) */
	char host_name[sizeof(((struct sockaddr_un *)0)->sun_path)];	/* the name the host knows it by */
	socklen_t host_name_len;	/* of host_name's sun_path bytes; 0: not in the registry */
	bool auto_named;		/* the sentry autobound it, so that its peer can tell who it is */
	struct sock_cred own;		/* the creator's, then the listener's or connector's (Linux's sk_peer_cred) */
	struct sock_cred peer;		/* SO_PEERCRED, once known */
	bool has_peer;
	struct sock_cred last_sender;	/* who last sent on it (SCM_CREDENTIALS of what it sent) */
	struct sock *pair;		/* the other end of a socketpair, while both live */
	bool nl_bound;			/* AF_NETLINK: bound to a port id (sentry/fs/netlink.c) */
	struct sock *next;		/* the registry of named sockets */
};

extern const struct file_ops socket_file_ops, netlink_file_ops;

/* A socket file owning host_fd (flags: O_RDWR | O_NONBLOCK as the guest asked); NULL: ENOMEM (host_fd left open). */
struct file *sock_file_new(int host_fd, int flags, int family, int type, int protocol);
/* The socket state of f, or NULL when f is not a socket (ENOTSOCK). */
struct sock *sock_of(struct file *f);

/* The guest's credentials of task t (its tgid and the sandbox's ids). */
struct sock_cred sock_cred_of(const struct task *t);

/*
 * The socket whose host name (sun_path bytes, len of them) the host reported,
 * if it is one of the sandbox's (named by a guest bind or autobound by the sentry).
 */
struct sock *sock_find_name(const char *sun_path, socklen_t len);
/* Enter s into the registry under the name the host gives it now (after a bind or autobind). */
void sock_register_name(struct file *f);
/*
 * Rewrite an AF_UNIX address the host reported (a peer's, a sender's) as the
 * guest sees it: a guest-bound name as the guest gave it; one the sentry
 * chose as unnamed; a path inside --root as its guest path; other paths
 * unnamed (a host path outside the root is not the guest's to see).
 * Abstract names stay as they are. Returns the new length.
 */
socklen_t sock_addr_to_guest(struct sockaddr_storage *a, socklen_t len);

/*
 * bind(2) of an AF_UNIX path: resolved inside --root like every path (the
 * directory by the O_PATH lookup, the name made in it), EROFS on a read-only
 * root, the socket file's mode from the guest's umask. path is NUL-terminated.
 */
long sock_bind_path(struct task *t, struct file *f, const char *path, const struct guest_sun *gname) __must_check;
/*
 * What connect(2) and sendto(2) to an AF_UNIX path reach: the name looked up
 * inside --root; it must be a socket (ECONNREFUSED, as Linux, for anything
 * else). Returns an O_PATH host fd of that very socket file, for the host
 * call to name as /proc/self/fd/N: nothing is looked up twice.
 */
long sock_lookup_path(struct task *t, const char *path) __must_check;

/*
 * AF_NETLINK (sentry/fs/netlink.c): NETLINK_ROUTE's GET requests only.
 * netlink_send_ok: 0 when every message of buf (the sentry's copy of what
 * the guest sends) is one the host may have, else -EPERM or -EOPNOTSUPP.
 * netlink_dest_ok: a destination other than the kernel is refused (EPERM).
 * netlink_bind: bind(2), port id 0 chosen as Linux's autobind would in the
 * guest's terms; netlink_ensure_bound: that autobind before a send or connect.
 */
long netlink_send_ok(const void *buf, size_t len) __must_check;
long netlink_dest_ok(const struct sockaddr_storage *a, socklen_t len) __must_check;
long netlink_bind(struct task *t, struct file *f, const struct sockaddr_storage *a, socklen_t len) __must_check;
long netlink_ensure_bound(struct task *t, struct file *f) __must_check;

#endif

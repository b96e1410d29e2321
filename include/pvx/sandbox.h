/* SPDX-License-Identifier: GPL-2.0 */
/* The run's configuration, below every layer (defined in sentry/host/sandbox.c). */
#ifndef PVX_SANDBOX_H
#define PVX_SANDBOX_H

#include <stdbool.h>

struct platform_ops;

/* Fixed for the whole run (set by main.c from the command line). */
struct sandbox {
	const struct platform_ops *platform;
	int rootfd;		/* O_PATH fd of --root: every guest path resolves beneath it */
	bool rw;		/* --rw: the root is writable */
	bool strace;		/* --strace: print each guest syscall */
	bool copy_io;		/* PVX_COPY_IO=1: no zero-copy I/O on vmexec (for bench/run) */
	unsigned uid, gid;	/* what the guest is told */
	bool net_host;		/* --network=host: sockets in the host's network namespace */
	bool net_blocked;	/* --network=none without a namespace of its own: AF_INET* EACCES, no abstract names */
};

extern struct sandbox sandbox;

#endif

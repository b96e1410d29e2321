/* SPDX-License-Identifier: GPL-2.0 */
/* Open files and the fd table (sentry/fs/fdtable.c). */
#ifndef PVX_FILE_H
#define PVX_FILE_H

#include <stdbool.h>
#include "pvx/common.h"

/* An open file description (shared by dup'ed fds). */
struct file {
	int refs;
	int host_fd;
	int flags;		/* guest open flags (O_ACCMODE, O_APPEND, ...) */
};

struct fd_entry {
	struct file *file;
	bool cloexec;
};

#define PVX_NR_OPEN 1024	/* RLIMIT_NOFILE soft limit the guest sees */

struct fdtable {
	struct fd_entry fds[PVX_NR_OPEN];
	unsigned nofile;	/* RLIMIT_NOFILE of its process: new fds stay below (0: PVX_NR_OPEN) */
};

struct file *file_new(int host_fd, int flags);
struct file *file_get(struct file *f);
void file_put(struct file *f);

struct file *fd_lookup(struct fdtable *t, int fd);
long fd_install(struct fdtable *t, struct file *f, bool cloexec, int min_fd) __must_check;
long fd_install_at(struct fdtable *t, int fd, struct file *f, bool cloexec) __must_check;
long fd_close(struct fdtable *t, int fd) __must_check;
void fdtable_release(struct fdtable *t);

#endif

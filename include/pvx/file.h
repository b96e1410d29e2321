/* SPDX-License-Identifier: GPL-2.0 */
/* Open files and the fd table (sentry/fs/fdtable.c). */
#ifndef PVX_FILE_H
#define PVX_FILE_H

#include <stdbool.h>
#include <sys/types.h>
#include "pvx/common.h"

struct file;
struct stat;
struct task;

/*
 * What a kind of file does, chosen when the file is made (file_new):
 * handlers call these, never switch on a kind. Today every kind pvx has
 * (host files and directories, pipes, eventfds, memfds, /proc's files) is a
 * host fd the sentry owns, all with host_file_ops (sentry/fs/host_file.c);
 * a kind whose answers pvx makes itself (signalfd, epoll, sockets of the
 * sandbox's network, message queues) brings its own table.
 */
struct file_ops {
	/*
	 * read(2), pread64(2) (positional: at off, the offset unmoved) into the
	 * sentry's buf; write(2), pwrite64(2) from it. They may wait with the
	 * sentry lock dropped: -EINTR when a signal cut the wait short.
	 */
	long (*read)(struct task *t, struct file *f, void *buf, size_t count, off_t off, bool positional);
	long (*write)(struct task *t, struct file *f, const void *buf, size_t count, off_t off, bool positional);
	/* The same straight between the file and guest memory at ubuf (vmexec's zero-copy I/O); NULL: cannot. */
	long (*rw_in_guest_mm)(struct task *t, struct file *f, bool write, uint64_t ubuf, size_t count, off_t off,
			       bool positional);
	/* The last reference went: free what the file holds (not f itself). */
	void (*release)(struct file *f);
	/* fstat(2). */
	long (*stat)(struct file *f, struct stat *st);
	/* lseek(2): the new offset or -errno (ESPIPE where there is none). */
	long (*seek)(struct file *f, off_t off, int whence);
	/* Of events (POLLIN, POLLOUT, ...), those ready now, without waiting. */
	short (*poll)(struct file *f, short events);
	/* ioctl(2) beyond the fd table's FIOCLEX/FIONCLEX; arg is a guest address or value. */
	long (*ioctl)(struct task *t, struct file *f, unsigned long cmd, uint64_t arg);
	/* mmap(2): the host fd mm/ maps for it, or -errno (ENODEV: cannot be mapped). */
	long (*mmap)(struct file *f);
};

/*
 * An open file description (shared by dup'ed fds). host_fd is the host fd
 * that stands for the file: the object itself for host kinds, and for a
 * kind pvx answers itself the host fd whose readiness is the file's (an
 * eventfd the kind keeps in step), so poll, select and epoll wait on host
 * fds for every kind. priv is the kind's own state, freed by its release.
 */
struct file {
	int refs;
	int host_fd;
	int flags;		/* guest open flags (O_ACCMODE, O_APPEND, ...) */
	const struct file_ops *ops;
	void *priv;
};

/* Host fds: files, directories, devices the policy lets through, pipes, eventfds, memfds, /proc's memfds. */
extern const struct file_ops host_file_ops;

struct fd_entry {
	struct file *file;
	bool cloexec;
};

#define PVX_NR_OPEN 1024	/* RLIMIT_NOFILE soft limit the guest sees */

struct fdtable {
	struct fd_entry fds[PVX_NR_OPEN];
	unsigned nofile;	/* RLIMIT_NOFILE of its process: new fds stay below (0: PVX_NR_OPEN) */
};

/* A file of kind ops owning host_fd (the new file holds one reference). */
struct file *file_new(int host_fd, int flags, const struct file_ops *ops);
struct file *file_get(struct file *f);
void file_put(struct file *f);

struct file *fd_lookup(struct fdtable *t, int fd);
long fd_install(struct fdtable *t, struct file *f, bool cloexec, int min_fd) __must_check;
long fd_install_at(struct fdtable *t, int fd, struct file *f, bool cloexec) __must_check;
long fd_close(struct fdtable *t, int fd) __must_check;
void fdtable_release(struct fdtable *t);

#endif

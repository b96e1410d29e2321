// SPDX-License-Identifier: GPL-2.0
/*
 * The inotify kind of file: a host inotify fd the sentry owns. Reads,
 * polls and the watches are the host's (inotify_add_watch is given the
 * object looked up inside the root, syscalls/sys_events.c); the kind of its
 * own answers FIONREAD, the size of the queued events, as Linux's does.
 */
#include <fcntl.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>

#include "pvx/events.h"
#include "pvx/mm.h"
#include "pvx/task.h"

struct file *inotify_file_new(int flags, long *err)
{
	int fd = inotify_init1(IN_CLOEXEC | (flags & IN_NONBLOCK));
	struct file *f;

	if (fd < 0) {
		*err = neg_errno();
		return NULL;
	}
	if (!(f = file_new(fd, O_RDONLY | (flags & O_NONBLOCK), &inotify_file_ops))) {
		close(fd);
		*err = -ENOMEM;
	}
	return f;
}

/* Reads wait with the lock dropped as any host read; a write is EINVAL (the host's). */
static long inotify_read(struct task *t, struct file *f, void *buf, size_t count, off_t off, bool positional)
{
	return host_file_ops.read(t, f, buf, count, off, positional);
}

static long inotify_write(struct task *t, struct file *f, const void *buf, size_t count, off_t off, bool positional)
{
	return host_file_ops.write(t, f, buf, count, off, positional);
}

static void inotify_release(struct file *f)
{
	host_file_ops.release(f);
}

static long inotify_stat(struct file *f, struct stat *st)
{
	return host_file_ops.stat(f, st);
}

static long inotify_seek(struct file *f, off_t off, int whence)
{
	return host_file_ops.seek(f, off, whence);
}

static short inotify_poll(struct file *f, short events)
{
	return host_file_ops.poll(f, events);
}

/* FIONREAD: "the number of bytes available to read" (inotify(7)); the rest as any host fd. */
static long inotify_ioctl(struct task *t, struct file *f, unsigned long cmd, uint64_t arg)
{
	int n;

	if (cmd != FIONREAD)
		return host_file_ops.ioctl(t, f, cmd, arg);
	if (ioctl(f->host_fd, FIONREAD, &n) < 0)
		return neg_errno();
	return copy_to_guest(t->mm, arg, &n, sizeof(n));
}

static long inotify_mmap(struct file *f)
{
	(void)f;
	return -ENODEV;
}

const struct file_ops inotify_file_ops = {
	.read = inotify_read,
	.write = inotify_write,
	.release = inotify_release,
	.stat = inotify_stat,
	.seek = inotify_seek,
	.poll = inotify_poll,
	.ioctl = inotify_ioctl,
	.mmap = inotify_mmap,
};

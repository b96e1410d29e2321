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
#include "sentry/fs/host_file.h"
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

/* FIONREAD: "the number of bytes available to read" (inotify(7)); no other request (ENOTTY). */
static long inotify_ioctl(struct task *t, struct file *f, unsigned long cmd, uint64_t arg)
{
	return cmd == FIONREAD ? host_fionread(t, f, arg) : -ENOTTY;
}

/*
 * Reads wait with the lock dropped as any host read, honouring the host
 * fd's O_NONBLOCK (getfl/setfl); a write is EINVAL (the host's). Its
 * anonymous inode is shared with the host's other ones (anon_object).
 */
const struct file_ops inotify_file_ops = {
	.read = host_read,
	.write = host_write,
	.release = host_release,
	.stat = host_stat,
	.seek = host_seek,	/* noop_llseek: 0 */
	.poll = host_poll,
	.ioctl = inotify_ioctl,
	.rw_vec = host_rw_vec,
	.getfl = host_getfl,
	.setfl = host_setfl,
	.object = anon_object,
};

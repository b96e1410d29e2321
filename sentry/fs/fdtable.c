// SPDX-License-Identifier: GPL-2.0
/*
 * The guest's fd table: guest fd numbers index struct file pointers; a
 * struct file owns one host fd and is shared by dup()ed guest fds, like an
 * open file description. Guest fd numbers are never host fd numbers.
 */
#include <fcntl.h>

#include "pvx/events.h"
#include "pvx/file.h"

/* See pvx/file.h. */
struct file *file_new(int host_fd, int flags, const struct file_ops *ops)
{
	struct file *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	f->refs = 1;
	f->host_fd = host_fd;
	f->flags = flags;
	f->ops = ops;
	return f;
}

struct file *file_get(struct file *f)
{
	f->refs++;
	return f;
}

void file_put(struct file *f)
{
	if (!f || --f->refs > 0)
		return;
	if (f->epoll_regs)
		epoll_file_gone(f);	/* Linux's eventpoll_release: out of every epoll, before its host fd closes */
	f->ops->release(f);
	free(f);
}

struct file *fd_lookup(struct fdtable *t, int fd)
{
	if (fd < 0 || fd >= PVX_NR_OPEN)
		return NULL;
	return t->fds[fd].file;
}

long fd_install_at(struct fdtable *t, int fd, struct file *f, bool cloexec)
{
	if (fd < 0 || fd >= PVX_NR_OPEN)
		return -EBADF;
	struct file *old = t->fds[fd].file;
	t->fds[fd].file = file_get(f);
	t->fds[fd].cloexec = cloexec;
	if (old)
		plock_closed(t, old);
	file_put(old);
	return fd;
}

/* The lowest free fd >= min_fd, as open(2) and F_DUPFD promise. */
long fd_install(struct fdtable *t, struct file *f, bool cloexec, int min_fd)
{
	int limit = t->nofile && t->nofile < PVX_NR_OPEN ? (int)t->nofile : PVX_NR_OPEN;

	if (min_fd < 0)
		return -EINVAL;
	for (int fd = min_fd; fd < limit; fd++)
		if (!t->fds[fd].file)
			return fd_install_at(t, fd, f, cloexec);
	return min_fd >= limit ? -EINVAL : -EMFILE;
}

long fd_close(struct fdtable *t, int fd)
{
	struct file *f = fd_lookup(t, fd);

	if (!f)
		return -EBADF;
	t->fds[fd].file = NULL;
	t->fds[fd].cloexec = false;
	plock_closed(t, f);
	file_put(f);
	return 0;
}

void fdtable_release(struct fdtable *t)
{
	plock_release_all(t);
	for (int fd = 0; fd < PVX_NR_OPEN; fd++) {
		file_put(t->fds[fd].file);
		t->fds[fd].file = NULL;
	}
}

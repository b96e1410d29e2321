// SPDX-License-Identifier: GPL-2.0
/*
 * The guest's fd table: guest fd numbers index struct file pointers; a
 * struct file owns one host fd and is shared by dup()ed guest fds, like an
 * open file description. Guest fd numbers are never host fd numbers.
 */
#include <fcntl.h>
#include <string.h>

#include "pvx/events.h"
#include "pvx/file.h"
#include "pvx/mm.h"

/* See pvx/file.h. */
/* Every open file of the sandbox (under the sentry lock): leases count the opens of an object. */
static struct file *all_files;

struct file *file_new(int host_fd, int flags, const struct file_ops *ops)
{
	struct file *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	f->refs = 1;
	f->host_fd = host_fd;
	f->flags = flags;
	f->ops = ops;
	f->all_next = all_files;
	if (all_files)
		all_files->all_prev = f;
	all_files = f;
	return f;
}

struct file *file_next(struct file *prev)
{
	return prev ? prev->all_next : all_files;
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
	if (f->leased)
		lease_file_gone(f);	/* locks_remove_file: its lease goes with it, its breakers go on */
	if (f->async_counted)
		file_async_files--;	/* pipe writes stop looking for O_ASYNC readers once none is left */
	if (f->all_prev)
		f->all_prev->all_next = f->all_next;
	else
		all_files = f->all_next;
	if (f->all_next)
		f->all_next->all_prev = f->all_prev;
	f->ops->release(f);
	free(f);
}

struct file *fd_lookup(struct fdtable *t, int fd)
{
	if (fd < 0 || (unsigned)fd >= t->size)
		return NULL;
	return t->fds[fd].file;
}

/* Room for fd numbers up to need - 1: the array doubles (64 at least), charged to the sandbox's memory bound. */
static long fd_expand(struct fdtable *t, unsigned need)
{
	unsigned size = t->size ? t->size : 64;

	while (size < need)
		size *= 2;
	size = MIN(size, PVX_NR_OPEN);
	if (size <= t->size)
		return 0;
	uint64_t more = (uint64_t)(size - t->size) * sizeof(*t->fds);
	if (mm_charge(more) < 0)
		return -ENOMEM;
	struct fd_entry *fds = realloc(t->fds, (size_t)size * sizeof(*fds));
	if (!fds) {
		mm_uncharge(more);
		return -ENOMEM;
	}
	memset(fds + t->size, 0, (size_t)(size - t->size) * sizeof(*fds));
	t->fds = fds;
	t->size = size;
	return 0;
}

/* Install f at fd (dup2's newfd): below PVX_NR_OPEN; the caller holds it to RLIMIT_NOFILE where Linux does. */
long fd_install_at(struct fdtable *t, int fd, struct file *f, bool cloexec)
{
	if (fd < 0 || (unsigned)fd >= PVX_NR_OPEN)
		return -EBADF;
	if ((unsigned)fd >= t->size) {
		long r = fd_expand(t, (unsigned)fd + 1);
		if (r < 0)
			return r;
	}
	struct file *old = t->fds[fd].file;
	t->fds[fd].file = file_get(f);
	t->fds[fd].cloexec = cloexec;
	if (old)
		plock_closed(t, old);
	if (old && dnotify_records)
		dnotify_closed(t, old);
	file_put(old);
	return fd;
}

/*
 * The lowest free fd >= min_fd below RLIMIT_NOFILE, as open(2) and F_DUPFD
 * promise. The search starts at next_fd, as Linux's alloc_fd does, so a
 * process with many fds open does not rescan them all on every open.
 */
long fd_install(struct fdtable *t, struct file *f, bool cloexec, int min_fd)
{
	unsigned limit = MIN(t->nofile, PVX_NR_OPEN);

	if (min_fd < 0)
		return -EINVAL;
	if ((unsigned)min_fd >= limit)
		return -EINVAL;
	unsigned fd = MAX((unsigned)min_fd, t->next_fd);
	while (fd < t->size && fd < limit && t->fds[fd].file)
		fd++;
	if (fd >= limit)
		return -EMFILE;
	long r = fd_install_at(t, (int)fd, f, cloexec);
	if (r >= 0 && (unsigned)min_fd <= t->next_fd)
		t->next_fd = fd + 1;
	return r;
}

long fd_close(struct fdtable *t, int fd)
{
	struct file *f = fd_lookup(t, fd);

	if (!f)
		return -EBADF;
	t->fds[fd].file = NULL;
	t->fds[fd].cloexec = false;
	t->next_fd = MIN(t->next_fd, (unsigned)fd);
	plock_closed(t, f);
	if (dnotify_records)
		dnotify_closed(t, f);
	file_put(f);
	return 0;
}

/* A process's first fd table, one user's: empty, new fds below nofile (its RLIMIT_NOFILE). */
struct fdtable *fdtable_new(unsigned nofile)
{
	struct fdtable *t = calloc(1, sizeof(*t));

	if (t) {
		t->nofile = nofile;
		t->users = 1;
	}
	return t;
}

/* fork without CLONE_FILES: the same files at the same numbers (NULL when out of memory). */
struct fdtable *fdtable_dup(const struct fdtable *src)
{
	struct fdtable *t = fdtable_new(src->nofile);
	unsigned used = src->size;

	while (used && !src->fds[used - 1].file)
		used--;
	if (!t || (used && fd_expand(t, used) < 0)) {
		free(t);
		return NULL;
	}
	for (unsigned fd = 0; fd < used; fd++)
		if (src->fds[fd].file)
			t->fds[fd] = (struct fd_entry){ file_get(src->fds[fd].file), src->fds[fd].cloexec };
	t->next_fd = src->next_fd;
	return t;
}

/* The process is done with its fds: every file closed (its record locks first), the table freed. */
void fdtable_release(struct fdtable *t)
{
	plock_release_all(t);
	for (unsigned fd = 0; fd < t->size; fd++) {
		if (dnotify_records && t->fds[fd].file)
			dnotify_closed(t, t->fds[fd].file);
		file_put(t->fds[fd].file);
		t->fds[fd].file = NULL;
	}
	mm_uncharge((uint64_t)t->size * sizeof(*t->fds));
	free(t->fds);
	t->fds = NULL;
	t->size = t->next_fd = 0;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * The inotify kind of file: a host inotify fd the sentry owns. Reads,
 * polls and the watches are the host's (inotify_add_watch is given the
 * object looked up inside the root, syscalls/sys_events.c); the kind of its
 * own answers FIONREAD, the size of the queued events, as Linux's does.
 *
 * The host counts inotify instances and watches per user, and the sentry's
 * user is shared with the host's own programs (root's systemd, say): a
 * guest must not use up their budget. So the sandbox has a share of its
 * own, as Linux's max_user_instances and max_user_watches give a user:
 * EMFILE past PVX_INOTIFY_INSTANCES instances, ENOSPC past
 * PVX_INOTIFY_WATCHES watches. A watch is counted from the add_watch that
 * made it until inotify_rm_watch, its IN_IGNORED event read (a watched file
 * deleted) or the instance's close; one removed by the host and never read
 * about stays counted until then.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>

#include "pvx/events.h"
#include "sentry/fs/host_file.h"
#include "pvx/mm.h"
#include "pvx/task.h"

/* The watch descriptors of one instance that the sandbox's count holds. */
struct inotify_priv {
	int *wds;
	size_t n, cap;
};

static unsigned instances, watches;	/* the sandbox's, under the sentry lock */

struct file *inotify_file_new(int flags, long *err)
{
	if (instances >= PVX_INOTIFY_INSTANCES) {
		*err = -EMFILE;
		return NULL;
	}
	struct inotify_priv *p = calloc(1, sizeof(*p));
	int fd = p ? inotify_init1(IN_CLOEXEC | (flags & IN_NONBLOCK)) : -1;
	struct file *f = NULL;

	if (fd < 0) {
		*err = p ? neg_errno() : -ENOMEM;
		free(p);
		return NULL;
	}
	if (!(f = file_new(fd, O_RDONLY | (flags & O_NONBLOCK), &inotify_file_ops))) {
		close(fd);
		free(p);
		*err = -ENOMEM;
		return NULL;
	}
	f->priv = p;
	instances++;
	return f;
}

static int *wd_find(struct inotify_priv *p, int wd)
{
	for (size_t i = 0; i < p->n; i++)
		if (p->wds[i] == wd)
			return &p->wds[i];
	return NULL;
}

static void wd_forget(struct inotify_priv *p, int wd)
{
	int *w = wd_find(p, wd);

	if (w) {
		*w = p->wds[--p->n];
		watches--;
	}
}

/* Room for one more wd in p: 0 or -ENOMEM. */
static long wds_grow(struct inotify_priv *p)
{
	if (p->n < p->cap)
		return 0;
	size_t cap = p->cap ? 2 * p->cap : 8;
	int *w = realloc(p->wds, cap * sizeof(*w));
	if (!w)
		return -ENOMEM;
	p->wds = w;
	p->cap = cap;
	return 0;
}

long inotify_watch_add(struct file *f, const char *host_path, uint32_t mask)
{
	struct inotify_priv *p = f->priv;
	int wd = inotify_add_watch(f->host_fd, host_path, mask);

	if (wd < 0)
		return neg_errno();
	if (wd_find(p, wd))
		return wd;	/* an existing watch, its mask changed */
	long err = watches >= PVX_INOTIFY_WATCHES ? -ENOSPC : wds_grow(p);
	if (err) {
		(void)!inotify_rm_watch(f->host_fd, wd);
		return err;
	}
	p->wds[p->n++] = wd;
	watches++;
	return wd;
}

long inotify_watch_rm(struct file *f, int wd)
{
	if (inotify_rm_watch(f->host_fd, wd) < 0)
		return neg_errno();
	wd_forget(f->priv, wd);
	return 0;
}

/* read(2): the host's events; an IN_IGNORED one ends its watch's count. */
static long inotify_read(struct task *t, struct file *f, void *buf, size_t count, off_t off, bool positional)
{
	long n = host_read(t, f, buf, count, off, positional);
	struct inotify_event e;

	for (long at = 0; n > 0 && at + (long)sizeof(e) <= n; at += (long)sizeof(e) + e.len) {
		memcpy(&e, (char *)buf + at, sizeof(e));
		if (e.mask & IN_IGNORED)
			wd_forget(f->priv, e.wd);
	}
	return n;
}

static void inotify_release(struct file *f)
{
	struct inotify_priv *p = f->priv;

	watches -= (unsigned)p->n;
	instances--;
	free(p->wds);
	free(p);
	host_release(f);
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
	.read = inotify_read,
	.write = host_write,
	.release = inotify_release,
	.stat = host_stat,
	.seek = host_seek,	/* noop_llseek: 0 */
	.poll = host_poll,
	.ioctl = inotify_ioctl,
	.getfl = host_getfl,
	.setfl = host_setfl,
	.object = anon_object,
	.host_fdinfo = true,
};

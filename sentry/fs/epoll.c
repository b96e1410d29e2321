// SPDX-License-Identifier: GPL-2.0
/*
 * The epoll kind of file: a host epoll fd the sentry owns. epoll_ctl hands
 * the host each target file's host fd (the object itself for host kinds,
 * the readiness eventfd for kinds pvx answers) with the guest's event mask
 * and 64-bit data word untouched, so the host kernel does the triggering,
 * the nesting checks and the bookkeeping.
 */
#include <fcntl.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "pvx/events.h"
#include "pvx/path.h"

/*
 * Linux keys a registration by (file, fd): the same open file may be in
 * one epoll under several fd numbers (a dup'ed listener, Go's FileConn),
 * and MOD or DEL through another fd of it is ENOENT. The host keys by its
 * own (file, fd) too, so the first registration of a file uses its
 * readiness fd and each further one a host dup of it. A registration lasts
 * as long as the guest's open file description (struct file): when one
 * goes, epoll_file_gone takes its registrations out of every epoll, as
 * Linux's eventpoll_release does, and closes the dups.
 */
struct epoll_reg {
	struct file *file;	/* counted in file->epoll_regs, so never dangling */
	int guest_fd;
	int hfd;		/* what the host epoll has: file_ready_fd(file), or a dup of it */
	bool dup;
};

struct epoll_priv {
	int epfd;		/* the host epoll fd */
	struct epoll_reg *regs;
	size_t n, cap;
	struct epoll_priv *next;	/* all epolls of the sentry (epoll_file_gone), under the sentry lock */
};

static struct epoll_priv *all_epolls;
/*
 * The sandbox's registrations. The host counts epoll watches per user
 * (max_user_watches), and the sentry's user is shared with the host's own
 * programs: past PVX_EPOLL_WATCHES a guest gets ENOSPC, as a Linux user
 * past its limit does, and the rest of the host's budget stays theirs.
 */
static size_t watches;

static struct epoll_reg *reg_find(struct epoll_priv *p, const struct file *f, int guest_fd)
{
	for (size_t i = 0; i < p->n; i++)
		if (p->regs[i].file == f && (guest_fd < 0 || p->regs[i].guest_fd == guest_fd))
			return &p->regs[i];
	return NULL;
}

static long reg_add(struct epoll_priv *p, struct epoll_reg r)
{
	if (watches >= PVX_EPOLL_WATCHES)
		return -ENOSPC;
	if (p->n == p->cap) {
		size_t cap = p->cap ? 2 * p->cap : 16;
		struct epoll_reg *n = realloc(p->regs, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		p->regs = n;
		p->cap = cap;
	}
	p->regs[p->n++] = r;
	r.file->epoll_regs++;
	watches++;
	return 0;
}

/* Forget r (the host registration is gone or taken out): its dup closed, its file uncounted. */
static void reg_drop(struct epoll_priv *p, struct epoll_reg *r)
{
	if (r->dup)
		close(r->hfd);
	r->file->epoll_regs--;
	watches--;
	*r = p->regs[--p->n];
}

/* See pvx/events.h. */
void epoll_file_gone(struct file *f)
{
	for (struct epoll_priv *p = all_epolls; p && f->epoll_regs; p = p->next)
		for (struct epoll_reg *r; (r = reg_find(p, f, -1));) {
			(void)!epoll_ctl(p->epfd, EPOLL_CTL_DEL, r->hfd, NULL);
			reg_drop(p, r);
		}
}

/* See pvx/events.h. */
long epoll_target(struct file *ep, int tfd, unsigned long toff, struct file **out)
{
	*out = NULL;
	if (!ep || ep->ops != &epoll_file_ops)
		return -EINVAL;
	struct epoll_priv *p = ep->priv;
	for (size_t i = 0; i < p->n; i++)
		if (p->regs[i].guest_fd == tfd && toff-- == 0) {
			*out = p->regs[i].file;
			return 0;
		}
	return -ENOENT;
}

struct file *epoll_file_new(long *err)
{
	struct epoll_priv *p = calloc(1, sizeof(*p));
	int fd = epoll_create1(EPOLL_CLOEXEC);
	struct file *f = NULL;

	if (fd < 0)
		*err = neg_errno();
	else if (!p || !(f = file_new(fd, O_RDWR, &epoll_file_ops)))
		*err = -ENOMEM;
	if (!f) {
		free(p);
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	p->epfd = fd;
	p->next = all_epolls;
	all_epolls = p;
	f->priv = p;
	return f;
}

/* The host's answer for op on a fresh dup of target's readiness fd: its errors in Linux's order, nothing changed. */
static long host_probe(struct file *ep, int op, struct file *target, struct epoll_event *ev)
{
	int fd = fcntl(file_ready_fd(target), F_DUPFD_CLOEXEC, 0);

	if (fd < 0)
		return neg_errno();
	long r = epoll_ctl(ep->host_fd, op, fd, ev) < 0 ? neg_errno() : 0;
	if (!r && op == EPOLL_CTL_ADD)
		(void)!epoll_ctl(ep->host_fd, EPOLL_CTL_DEL, fd, NULL);
	close(fd);
	return r;
}

long epoll_ctl_file(struct file *ep, int op, struct file *target, int guest_fd, struct epoll_event *ev)
{
	struct epoll_priv *p = ep->ops == &epoll_file_ops ? ep->priv : NULL;
	struct epoll_reg *r = p ? reg_find(p, target, guest_fd) : NULL;
	long err;

	/* Not an epoll, an op or a target the host refuses, or (MOD, DEL) no registration: the host's errors. */
	if (!p || (op != EPOLL_CTL_ADD && op != EPOLL_CTL_MOD && op != EPOLL_CTL_DEL))
		return host_probe(ep, op, target, ev);
	if (op != EPOLL_CTL_ADD) {
		if (!r)
			return (err = host_probe(ep, op, target, ev)) ? err : -ENOENT;
		if (epoll_ctl(p->epfd, op, r->hfd, ev) < 0)
			return neg_errno();
		if (op == EPOLL_CTL_DEL)
			reg_drop(p, r);
		return 0;
	}
	if (r)
		return -EEXIST;
	bool dup = reg_find(p, target, -1) != NULL;
	int hfd = dup ? fcntl(file_ready_fd(target), F_DUPFD_CLOEXEC, 0) : file_ready_fd(target);
	if (hfd < 0)
		return neg_errno();
	if (epoll_ctl(p->epfd, EPOLL_CTL_ADD, hfd, ev) < 0) {
		err = neg_errno();
		goto out_dup;
	}
	if ((err = reg_add(p, (struct epoll_reg){ target, guest_fd, hfd, dup })) < 0) {
		(void)!epoll_ctl(p->epfd, EPOLL_CTL_DEL, hfd, NULL);
		goto out_dup;
	}
	return 0;
out_dup:
	if (dup)
		close(hfd);
	return err;
}

/*
 * The wait itself is the host's epoll_pwait2 on the host epoll, so that
 * the host's wakeups are epoll's own: EPOLLEXCLUSIVE wakes one waiter, not
 * every poller of the epoll fd. A kick that restarts it (task_block: a
 * signal another thread took) waits the whole timeout again, a little
 * longer than Linux, whose wait keeps its end.
 */
long epoll_wait_file(struct task *t, struct file *ep, struct epoll_event *out, int max, struct timespec *to,
		     bool pending)
{
	long r;

	file_get(ep);
	/* Collect without waiting: a pending signal ends only a wait that would sleep. */
	if ((r = epoll_wait(ep->host_fd, out, max, 0)) < 0)
		r = neg_errno();
	if (r == 0 && pending)
		r = -EINTR;
	else if (r == 0 && (!to || to->tv_sec || to->tv_nsec)) {
		const long a[6] = { ep->host_fd, (long)out, max, (long)to, 0, 8 };
		r = fs_kernel->block(t, NULL, SYS_epoll_pwait2, a, false);
	}
	file_put(ep);
	return r;
}

/* epoll files have no read or write: EINVAL, as the host says for its epoll fd. */
static long epoll_read(struct task *t, struct file *f, void *buf, size_t count, off_t off, bool positional)
{
	(void)t, (void)f, (void)buf, (void)count, (void)off, (void)positional;
	return -EINVAL;
}

static long epoll_write(struct task *t, struct file *f, const void *buf, size_t count, off_t off, bool positional)
{
	(void)t, (void)f, (void)buf, (void)count, (void)off, (void)positional;
	return -EINVAL;
}

/* Closing the host epoll fd ends its registrations: the dups go, the files are uncounted. */
static void epoll_release(struct file *f)
{
	struct epoll_priv *p = f->priv;

	while (p->n)
		reg_drop(p, &p->regs[p->n - 1]);
	for (struct epoll_priv **q = &all_epolls; *q; q = &(*q)->next)
		if (*q == p) {
			*q = p->next;
			break;
		}
	close(f->host_fd);
	free(p->regs);
	free(p);
}

/* fstat, lseek (ESPIPE), poll, ioctl (FIONBIO) are the host's on the epoll fd. */
static long epoll_stat(struct file *f, struct stat *st)
{
	return host_file_ops.stat(f, st);
}

static long epoll_seek(struct file *f, off_t off, int whence)
{
	return host_file_ops.seek(f, off, whence);
}

static short epoll_poll(struct file *f, short events)
{
	return host_file_ops.poll(f, events);
}

static long epoll_ioctl(struct task *t, struct file *f, unsigned long cmd, uint64_t arg)
{
	return host_file_ops.ioctl(t, f, cmd, arg);
}

static long epoll_mmap(struct file *f)
{
	(void)f;
	return -ENODEV;
}

const struct file_ops epoll_file_ops = {
	.read = epoll_read,
	.write = epoll_write,
	.release = epoll_release,
	.stat = epoll_stat,
	.seek = epoll_seek,
	.poll = epoll_poll,
	.ioctl = epoll_ioctl,
	.mmap = epoll_mmap,
};

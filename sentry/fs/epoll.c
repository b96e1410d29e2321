// SPDX-License-Identifier: GPL-2.0
/*
 * The epoll kind of file: a host epoll fd the sentry owns. epoll_ctl hands
 * the host each target file's host fd (the object itself for host kinds,
 * the readiness eventfd for kinds pvx answers) with the guest's event mask
 * and 64-bit data word untouched, so the host kernel does the triggering,
 * the nesting checks and the bookkeeping. A registration lives as long as
 * the host fd of the target's struct file, that is as long as the guest's
 * open file description: Linux's rule (it leaves the set when the file goes).
 */
#include <fcntl.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "pvx/events.h"
#include "pvx/path.h"

/*
 * Which guest fd number each registration was added by, keyed by the
 * target's host fd (one entry per host fd: a later ADD overwrites it).
 * Linux keys a registration by (file, fd): MOD or DEL through a dup of the
 * file is ENOENT, which the host, keying by its one fd, cannot tell.
 */
struct epoll_reg {
	int host_fd, guest_fd;
};

struct epoll_priv {
	struct epoll_reg *regs;
	size_t n, cap;
};

static struct epoll_reg *reg_find(struct epoll_priv *p, int host_fd)
{
	for (size_t i = 0; i < p->n; i++)
		if (p->regs[i].host_fd == host_fd)
			return &p->regs[i];
	return NULL;
}

/* Remember that guest_fd added host_fd (replacing what an earlier file of that host fd left). */
static long reg_set(struct epoll_priv *p, int host_fd, int guest_fd)
{
	struct epoll_reg *r = reg_find(p, host_fd);

	if (!r) {
		if (p->n == p->cap) {
			size_t cap = p->cap ? 2 * p->cap : 16;
			struct epoll_reg *n = realloc(p->regs, cap * sizeof(*n));
			if (!n)
				return -ENOMEM;
			p->regs = n;
			p->cap = cap;
		}
		r = &p->regs[p->n++];
	}
	*r = (struct epoll_reg){ host_fd, guest_fd };
	return 0;
}

static void reg_drop(struct epoll_priv *p, int host_fd)
{
	struct epoll_reg *r = reg_find(p, host_fd);

	if (r)
		*r = p->regs[--p->n];
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
	f->priv = p;
	return f;
}

long epoll_ctl_file(struct file *ep, int op, struct file *target, int guest_fd, struct epoll_event *ev)
{
	struct epoll_priv *p = ep->ops == &epoll_file_ops ? ep->priv : NULL;
	struct epoll_reg *r = p ? reg_find(p, file_ready_fd(target)) : NULL;
	long err;

	/* Not an epoll: the host's answer (EPERM for a target that cannot poll first, then EINVAL). */
	if ((op == EPOLL_CTL_MOD || op == EPOLL_CTL_DEL) && r && r->guest_fd != guest_fd)
		return -ENOENT;
	if (epoll_ctl(ep->host_fd, op, file_ready_fd(target), ev) < 0) {
		err = neg_errno();
		if (err == -ENOENT && p)
			reg_drop(p, file_ready_fd(target));
		return err;
	}
	if (!p)
		return 0;
	if (op == EPOLL_CTL_DEL)
		reg_drop(p, file_ready_fd(target));
	else if (op == EPOLL_CTL_ADD && (err = reg_set(p, file_ready_fd(target), guest_fd)) < 0) {
		(void)!epoll_ctl(ep->host_fd, EPOLL_CTL_DEL, file_ready_fd(target), NULL);
		return err;
	}
	return 0;
}

long epoll_wait_file(struct task *t, struct file *ep, struct epoll_event *out, int max, struct timespec *to,
		     bool pending)
{
	struct pollfd pfd = { ep->host_fd, POLLIN, 0 };
	long r;

	file_get(ep);
	for (;;) {
		/* Collect without waiting; then wait for the epoll to be readable with the lock dropped. */
		if ((r = epoll_wait(ep->host_fd, out, max, 0)) < 0)
			r = neg_errno();
		if (r != 0)
			break;
		if (pending) {
			r = -EINTR;
			break;
		}
		if (to && !to->tv_sec && !to->tv_nsec)
			break;
		/* ppoll leaves *to with what remained, so a wait restarted after a stray interrupt keeps its end. */
		const long a[6] = { (long)&pfd, 1, (long)to, 0, 8 };
		if ((r = fs_kernel->block(t, NULL, SYS_ppoll, a, false)) <= 0)
			break;
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

/* Closing the host epoll fd ends its registrations. */
static void epoll_release(struct file *f)
{
	struct epoll_priv *p = f->priv;

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

// SPDX-License-Identifier: GPL-2.0
/*
 * signalfd(2) as a file kind of pvx's own (fs/signalfd.c): reads take the
 * reading task's pending signals of the fd's mask, thread-directed first,
 * with their siginfo in struct signalfd_siginfo (guest pids and ids); a
 * read with nothing pending waits as sigtimedwait does, or is EAGAIN for a
 * nonblocking fd. Readiness is a host eventfd the kernel keeps in step
 * from signal.c (signalfd_sync) wherever pending sets change. Linux polls
 * against the polling task; pvx against the process that made the fd or
 * read it last, which is the same for the common single-owner use.
 */
#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <signal.h>
#include <string.h>
#include <sys/signalfd.h>

#include "pvx/kernel.h"
#include "pvx/sigframe.h"
#include "pvx/signalfd.h"
#include "pvx/sigqueue.h"

#define BIT(sig) (1UL << ((sig) - 1))
#define UNBLOCKABLE (BIT(SIGKILL) | BIT(SIGSTOP))

struct sfd {
	uint64_t mask;
	int owner;		/* pid of the process whose pending signals make it readable */
	bool ready;		/* the eventfd holds a count */
	struct file *file;
	struct sfd *next;
};

static struct sfd *all;	/* every signalfd, under the sentry lock */

/* The signals pending for any thread of the process with pid (0 if it is gone). */
static uint64_t process_pending(int pid)
{
	struct task *l = task_find(pid);
	uint64_t set;

	if (!l || l->proc->pid != pid)
		return 0;
	set = l->proc->pending.set;
	for (struct task *o = task_next(NULL); o; o = task_next(o))
		if (o->proc == l->proc)
			set |= o->pending.set;
	return set;
}

/* Make s's eventfd readable exactly when a signal of its mask is pending for its owner. */
static void sfd_update(struct sfd *s)
{
	bool want = process_pending(s->owner) & s->mask;
	uint64_t v = 1;

	if (want == s->ready)
		return;
	if (want ? write(s->file->host_fd, &v, sizeof(v)) == sizeof(v)
		 : read(s->file->host_fd, &v, sizeof(v)) == sizeof(v))
		s->ready = want;
}

void signalfd_sync(struct process *p)
{
	bool wake = false;

	for (struct sfd *s = all; s; s = s->next) {
		if (s->owner != p->pid)
			continue;
		sfd_update(s);
		wake |= s->ready;
	}
	if (wake)
		sentry_wake_all();	/* readers wait in sentry_wait */
}

struct file *signalfd_new(struct task *t, uint64_t mask, int flags, long *err)
{
	struct sfd *s = calloc(1, sizeof(*s));
	int fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	struct file *f = NULL;

	if (fd < 0)
		*err = neg_errno();
	else if (!s || !(f = file_new(fd, O_RDWR | (flags & O_NONBLOCK), &signalfd_file_ops)))
		*err = -ENOMEM;
	if (!f) {
		free(s);
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	*s = (struct sfd){ mask & ~UNBLOCKABLE, t->proc->pid, false, f, all };
	all = s;
	f->priv = s;
	sfd_update(s);
	return f;
}

long signalfd_set_mask(struct task *t, struct file *f, uint64_t mask)
{
	struct sfd *s = f->priv;

	if (f->ops != &signalfd_file_ops)
		return -EINVAL;
	s->mask = mask & ~UNBLOCKABLE;
	s->owner = t->proc->pid;
	sfd_update(s);
	sentry_wake_all();	/* a blocked reader may now find a signal (Linux wakes signalfd_wqh) */
	return 0;
}

/* The record of a dequeued signal as signalfd_copyinfo() fills it: the fields its layout has. */
static void fill(struct signalfd_siginfo *o, int sig, const struct sig_info *info)
{
	struct k_siginfo k;
	struct { int32_t a, b; uint64_t c, d, e; } u;	/* the union's words */

	signal_siginfo(sig, info, &k);
	memcpy(&u, k.pad2, sizeof(u));
	memset(o, 0, sizeof(*o));
	o->ssi_signo = (uint32_t)k.signo;
	o->ssi_errno = k.errno_;
	o->ssi_code = k.code;
	switch (siginfo_layout(sig, k.code)) {
	case SIL_KILL:
		o->ssi_pid = (uint32_t)u.a, o->ssi_uid = (uint32_t)u.b;
		break;
	case SIL_TIMER:
		o->ssi_tid = (uint32_t)u.a, o->ssi_overrun = (uint32_t)u.b;
		o->ssi_ptr = u.c, o->ssi_int = (int32_t)u.c;
		break;
	case SIL_RT:
		o->ssi_pid = (uint32_t)u.a, o->ssi_uid = (uint32_t)u.b;
		o->ssi_ptr = u.c, o->ssi_int = (int32_t)u.c;
		break;
	case SIL_POLL:
		memcpy(&o->ssi_band, &k.pad2[0], sizeof(o->ssi_band));
		o->ssi_fd = (int32_t)u.c;
		break;
	case SIL_FAULT:
		o->ssi_addr = k.addr;
		break;
	case SIL_CHLD:
		o->ssi_pid = (uint32_t)u.a, o->ssi_uid = (uint32_t)u.b;
		o->ssi_status = (int32_t)u.c, o->ssi_utime = u.d, o->ssi_stime = u.e;
		break;
	case SIL_SYS:
		o->ssi_call_addr = k.sys.call_addr, o->ssi_syscall = k.sys.syscall, o->ssi_arch = k.sys.arch;
		break;
	}
}

/*
 * read(2): "one or more signalfd_siginfo structures"; fewer than one's
 * worth of buffer is EINVAL. With nothing pending it waits with the mask's
 * signals unblocked (as sigtimedwait) so that one sent to the process picks
 * this thread; another signal ends the wait (restartable).
 */
static long sfd_read(struct task *t, struct file *f, void *buf, size_t count, off_t off, bool positional)
{
	struct sfd *s = f->priv;
	struct signalfd_siginfo *out = buf;
	size_t n = count / sizeof(*out), got = 0;
	struct sig_info info;
	int sig;

	(void)off, (void)positional;
	if (!n)
		return -EINVAL;
	s->owner = t->proc->pid;
	for (;;) {
		while (got < n && (sig = signal_dequeue(t, s->mask, &info)))
			fill(&out[got++], sig, &info);
		if (got || (f->flags & O_NONBLOCK))
			break;
		uint64_t real = t->sigmask;
		if (signal_pending(t))
			return -EINTR;
		t->real_blocked = real;
		t->sigmask = real & ~s->mask;
		sentry_wait();
		t->sigmask = real;
		t->real_blocked = 0;
	}
	signalfd_sync(t->proc);
	return got ? (long)(got * sizeof(*out)) : -EAGAIN;
}

static long sfd_write(struct task *t, struct file *f, const void *buf, size_t count, off_t off, bool positional)
{
	(void)t, (void)f, (void)buf, (void)count, (void)off, (void)positional;
	return -EINVAL;
}

static void sfd_release(struct file *f)
{
	struct sfd *s = f->priv;

	for (struct sfd **p = &all; *p; p = &(*p)->next)
		if (*p == s) {
			*p = s->next;
			break;
		}
	close(f->host_fd);
	free(s);
}

/*
 * fstat, lseek (ESPIPE) and FIONBIO are the readiness eventfd's; its poll
 * without POLLOUT (an eventfd is writable, a signalfd never is). An eventfd
 * has no splice operations: splice and tee are EINVAL, vmsplice EBADF, as
 * for Linux's signalfd.
 */
static long sfd_stat(struct file *f, struct stat *st)
{
	return host_file_ops.stat(f, st);
}

static long sfd_seek(struct file *f, off_t off, int whence)
{
	return host_file_ops.seek(f, off, whence);
}

static short sfd_poll(struct file *f, short events)
{
	return (short)(host_file_ops.poll(f, events) & ~POLLOUT);
}

static long sfd_ioctl(struct task *t, struct file *f, unsigned long cmd, uint64_t arg)
{
	return host_file_ops.ioctl(t, f, cmd, arg);
}

static long sfd_mmap(struct file *f)
{
	(void)f;
	return -ENODEV;
}

const struct file_ops signalfd_file_ops = {
	.read = sfd_read,
	.write = sfd_write,
	.release = sfd_release,
	.stat = sfd_stat,
	.seek = sfd_seek,
	.poll = sfd_poll,
	.ioctl = sfd_ioctl,
	.mmap = sfd_mmap,
	.read_consumes = true,
};

// SPDX-License-Identifier: GPL-2.0
/*
 * Event fds: epoll (sentry/fs/epoll.c: a host epoll of the files' host fds),
 * timerfd (a host timerfd: pvx's clocks are the host's, with no offset, so
 * absolute times need no conversion), inotify (a host inotify watching
 * objects looked up inside the root) and signalfd (sentry/kernel/signalfd.c). Thin handlers: arguments in and
 * out through mm/, the work in the kinds below.
 */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <sys/inotify.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <time.h>

#include "pvx/events.h"
#include "pvx/guest_layout.h"
#include "pvx/kernel.h"
#include "pvx/path.h"
#include "pvx/signalfd.h"
#include "syscalls/syscalls.h"

/* Install a new file at the lowest free fd; the caller's reference is dropped either way. */
static long install_file(struct task *t, struct file *f, bool cloexec)
{
	long fd = fd_install(t->files, f, cloexec, 0);

	file_put(f);
	return fd;
}

/* epoll_create1(2): "flags: EPOLL_CLOEXEC"; anything else is EINVAL. */
long sys_epoll_create1(struct task *t, const long a[6])
{
	long err;

	if ((int)a[0] & ~EPOLL_CLOEXEC)
		return -EINVAL;
	struct file *f = epoll_file_new(&err);
	if (!f)
		return err;
	return install_file(t, f, (int)a[0] & EPOLL_CLOEXEC);
}

/* epoll_create(2): "size is ignored, but must be greater than zero". */
long sys_epoll_create(struct task *t, const long a[6])
{
	const long b[6] = { 0 };

	return (int)a[0] <= 0 ? -EINVAL : sys_epoll_create1(t, b);
}

/*
 * epoll_ctl(2): the event is read first (EFAULT before EBADF, as Linux),
 * and only for ADD and MOD; the target is the guest fd's file.
 */
long sys_epoll_ctl(struct task *t, const long a[6])
{
	int op = (int)a[1], fd = (int)a[2];
	struct epoll_event ev = { 0 };
	long r;

	if ((op == EPOLL_CTL_ADD || op == EPOLL_CTL_MOD) &&
	    (r = copy_from_guest(t->mm, &ev, (uint64_t)a[3], sizeof(ev))))
		return r;
	struct file *ep = fd_lookup(t->files, (int)a[0]), *target = fd_lookup(t->files, fd);
	if (!ep || !target)
		return -EBADF;
	return epoll_ctl_file(ep, op, target, fd, &ev);
}

#define EP_MAX_EVENTS (INT_MAX / (int)sizeof(struct epoll_event))
#define EP_CHUNK 1024	/* events taken from the host per call: fewer than asked is a valid answer */

/*
 * do_epoll_wait(): maxevents in (0, EP_MAX_EVENTS], the buffer within the
 * guest's range (access_ok), epfd an epoll; the events are copied out one
 * by one, and a fault on the first is EFAULT, later ones cut the count.
 */
static long epoll_wait_user(struct task *t, int epfd, uint64_t uev, int max, struct timespec *to)
{
	if (max <= 0 || max > EP_MAX_EVENTS)
		return -EINVAL;
	if (uev >= PVX_GUEST_TASK_SIZE || (uint64_t)max * sizeof(struct epoll_event) > PVX_GUEST_TASK_SIZE - uev)
		return -EFAULT;
	struct file *ep = fd_lookup(t->files, epfd);
	if (!ep)
		return -EBADF;
	if (ep->ops != &epoll_file_ops)
		return -EINVAL;
	int n = MIN(max, EP_CHUNK);
	cleanup_free struct epoll_event *ev = calloc((size_t)n, sizeof(*ev));
	if (!ev)
		return -ENOMEM;
	long r = epoll_wait_file(t, ep, ev, n, to, signal_pending(t));
	for (long i = 0; i < r; i++)
		if (copy_to_guest(t->mm, uev + (uint64_t)i * sizeof(*ev), &ev[i], sizeof(*ev)))
			return i ? i : -EFAULT;
	return r;
}

/* A timeout in milliseconds; negative: none. */
static struct timespec *ms_timeout(int ms, struct timespec *ts)
{
	if (ms < 0)
		return NULL;
	*ts = (struct timespec){ ms / 1000, (ms % 1000) * 1000000L };
	return ts;
}

long sys_epoll_wait(struct task *t, const long a[6])
{
	struct timespec ts;

	return epoll_wait_user(t, (int)a[0], (uint64_t)a[1], (int)a[2], ms_timeout((int)a[3], &ts));
}

/* epoll_pwait(2): the sigmask is in force during the wait only (ppoll's rules, syscalls/sys_poll.c). */
long sys_epoll_pwait(struct task *t, const long a[6])
{
	struct timespec ts;
	long r;

	if ((r = poll_mask_set(t, (uint64_t)a[4], a[5])))
		return r;
	return poll_mask_done(t, epoll_wait_user(t, (int)a[0], (uint64_t)a[1], (int)a[2],
						 ms_timeout((int)a[3], &ts)));
}

/* epoll_pwait2(2): a timespec timeout (NULL: none), checked before the mask is set. */
long sys_epoll_pwait2(struct task *t, const long a[6])
{
	struct timespec ts;
	long r;

	if (a[3]) {
		if ((r = copy_from_guest(t->mm, &ts, (uint64_t)a[3], sizeof(ts))))
			return r;
		if (ts.tv_sec < 0 || ts.tv_nsec < 0 || ts.tv_nsec >= 1000000000L)
			return -EINVAL;
	}
	if ((r = poll_mask_set(t, (uint64_t)a[4], a[5])))
		return r;
	return poll_mask_done(t, epoll_wait_user(t, (int)a[0], (uint64_t)a[1], (int)a[2], a[3] ? &ts : NULL));
}

/*
 * timerfd_create(2): the clocks Linux's timerfd takes (the ALARM ones need
 * CAP_WAKE_ALARM on the host, as natively); CPU-time and other clocks EINVAL.
 */
long sys_timerfd_create(struct task *t, const long a[6])
{
	int clk = (int)a[0], flags = (int)a[1];

	if (clk != CLOCK_REALTIME && clk != CLOCK_MONOTONIC && clk != CLOCK_BOOTTIME && clk != CLOCK_REALTIME_ALARM &&
	    clk != CLOCK_BOOTTIME_ALARM)
		return -EINVAL;
	if (flags & ~(TFD_CLOEXEC | TFD_NONBLOCK))
		return -EINVAL;
	int fd = timerfd_create(clk, TFD_CLOEXEC | (flags & TFD_NONBLOCK));
	if (fd < 0)
		return neg_errno();
	struct file *f = file_new(fd, O_RDWR | (flags & O_NONBLOCK), &anon_file_ops);
	if (!f) {
		close(fd);
		return -ENOMEM;
	}
	return install_file(t, f, flags & TFD_CLOEXEC);
}

/*
 * timerfd_settime(2) on the file's host fd: the host checks it is a timerfd
 * (EINVAL otherwise, as Linux; a kind pvx answers has an eventfd there),
 * the flags and the times.
 */
long sys_timerfd_settime(struct task *t, const long a[6])
{
	struct itimerspec nv, ov;
	long r;

	if ((r = copy_from_guest(t->mm, &nv, (uint64_t)a[2], sizeof(nv))))
		return r;
	struct file *f = fd_lookup(t->files, (int)a[0]);
	if (!f)
		return -EBADF;
	if (timerfd_settime(f->host_fd, (int)a[1], &nv, a[3] ? &ov : NULL) < 0)
		return neg_errno();
	return a[3] ? copy_to_guest(t->mm, (uint64_t)a[3], &ov, sizeof(ov)) : 0;
}

long sys_timerfd_gettime(struct task *t, const long a[6])
{
	struct itimerspec v;
	struct file *f = fd_lookup(t->files, (int)a[0]);

	if (!f)
		return -EBADF;
	if (timerfd_gettime(f->host_fd, &v) < 0)
		return neg_errno();
	return copy_to_guest(t->mm, (uint64_t)a[1], &v, sizeof(v));
}

/* inotify_init1(2): IN_NONBLOCK and IN_CLOEXEC; a host inotify fd, read and polled as the host's. */
long sys_inotify_init1(struct task *t, const long a[6])
{
	int flags = (int)a[0];
	long err;

	if (flags & ~(IN_CLOEXEC | IN_NONBLOCK))
		return -EINVAL;
	struct file *f = inotify_file_new(flags, &err);
	if (!f)
		return err;
	return install_file(t, f, flags & IN_CLOEXEC);
}

long sys_inotify_init(struct task *t, const long a[6])
{
	const long b[6] = { 0 };

	(void)a;
	return sys_inotify_init1(t, b);
}

#ifndef IN_MASK_CREATE
#define IN_MASK_CREATE 0x10000000
#endif
#define IN_MASK_CREATE_ IN_MASK_CREATE
#define IN_ALL_BITS_ (IN_ALL_EVENTS | IN_UNMOUNT | IN_Q_OVERFLOW | IN_IGNORED | IN_ONLYDIR | IN_DONT_FOLLOW | \
		      IN_EXCL_UNLINK | IN_MASK_ADD | IN_MASK_CREATE_ | IN_ISDIR | IN_ONESHOT)

/*
 * inotify_add_watch(2): the path is looked up inside the root as stat(2)
 * does (IN_DONT_FOLLOW: a final symlink is not followed), and the host
 * watches that very object through /proc/self/fd of the O_PATH fd: the
 * guest's string never reaches the host. Event names are relative to the
 * watched directory, so the events need no translation. Errors in Linux's
 * order: the mask, the fd, then the path.
 */
long sys_inotify_add_watch(struct task *t, const long a[6])
{
	uint32_t mask = (uint32_t)a[2];
	char path[PVX_PATH_MAX], proc[64];
	cleanup_close int hfd = -1;
	long r;

	if (!(mask & IN_ALL_BITS_) || ((mask & IN_MASK_ADD) && (mask & IN_MASK_CREATE_)))
		return -EINVAL;
	struct file *f = fd_lookup(t->files, (int)a[0]);
	if (!f || (f->flags & O_PATH))
		return -EBADF;
	if (f->ops != &inotify_file_ops)
		return -EINVAL;
	if ((r = strncpy_from_guest(t->mm, path, (uint64_t)a[1], sizeof(path))) < 0)
		return r;
	if ((r = path_lookup(t, AT_FDCWD, path, (mask & IN_DONT_FOLLOW) ? AT_SYMLINK_NOFOLLOW : 0)) < 0)
		return r;
	hfd = (int)r;
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", hfd);
	/* IN_DONT_FOLLOW was the lookup's: the host must follow the magic link to the object. */
	return inotify_watch_add(f, proc, mask & ~IN_DONT_FOLLOW);
}

/* inotify_rm_watch(2): the host's, on the instance's host fd (EINVAL for a bad wd or a non-inotify fd). */
long sys_inotify_rm_watch(struct task *t, const long a[6])
{
	struct file *f = fd_lookup(t->files, (int)a[0]);

	if (!f || (f->flags & O_PATH))
		return -EBADF;
	if (f->ops != &inotify_file_ops)
		return -EINVAL;
	return inotify_watch_rm(f, (int)a[1]);
}

/*
 * signalfd4(2): sizemask must be the kernel's sigset_t, the mask is read
 * before the flags are checked; fd -1 makes a new signalfd, another fd must
 * be one whose mask is replaced (EINVAL otherwise, EBADF if not open).
 */
long sys_signalfd4(struct task *t, const long a[6])
{
	int fd = (int)a[0], flags = (int)a[3];
	uint64_t mask;
	long r;

	if (a[2] != GUEST_SIGSET_SIZE)
		return -EINVAL;
	if ((r = copy_from_guest(t->mm, &mask, (uint64_t)a[1], sizeof(mask))))
		return r;
	if (flags & ~(SFD_CLOEXEC | SFD_NONBLOCK))
		return -EINVAL;
	if (fd != -1) {
		struct file *f = fd_lookup(t->files, fd);
		if (!f)
			return -EBADF;
		return (r = signalfd_set_mask(t, f, mask)) < 0 ? r : fd;
	}
	struct file *f = signalfd_new(t, mask, flags, &r);
	if (!f)
		return r;
	return install_file(t, f, flags & SFD_CLOEXEC);
}

long sys_signalfd(struct task *t, const long a[6])
{
	const long b[6] = { a[0], a[1], a[2], 0 };

	return sys_signalfd4(t, b);
}

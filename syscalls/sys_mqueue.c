// SPDX-License-Identifier: GPL-2.0
/*
 * POSIX message queues: mq_open, mq_unlink, mq_timedsend, mq_timedreceive,
 * mq_notify, mq_getsetattr (ipc/mqueue.c's syscalls): the copies in and
 * out, in Linux's order, over sentry/kernel/mqueue.c.
 */
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <time.h>

#include "pvx/mqueue.h"
#include "pvx/timer.h"
#include "syscalls/syscalls.h"

#define GUEST_NSIG 64

/* getname() and the name as the kernel takes it (the C library strips the leading '/'). */
static long get_name(struct task *t, uint64_t uname, char name[PATH_MAX])
{
	long r = strncpy_from_guest(t->mm, name, uname, PATH_MAX);

	if (r < 0)
		return r;
	return r == 0 ? -ENOENT : 0;
}

/*
 * prepare_timeout(): EFAULT, "EINVAL ... abs_timeout ... invalid", then an
 * absolute CLOCK_REALTIME time as a CLOCK_MONOTONIC deadline (0: none; one
 * already past: now, so a wait ends with ETIMEDOUT at once).
 */
static long get_deadline(struct task *t, uint64_t uts, uint64_t *until)
{
	struct timespec ts, now;
	long r;

	*until = 0;
	if (!uts)
		return 0;
	if ((r = copy_from_guest(t->mm, &ts, uts, sizeof(ts))))
		return r;
	if (ts.tv_sec < 0 || ts.tv_nsec < 0 || ts.tv_nsec >= 1000000000L)
		return -EINVAL;
	clock_gettime(CLOCK_REALTIME, &now);
	uint64_t mono = timer_now_ns();
	if (ts.tv_sec > 4000000000L)
		return 0;	/* past the year 2096: never */
	int64_t left = (ts.tv_sec - now.tv_sec) * 1000000000LL + (ts.tv_nsec - now.tv_nsec);
	*until = left > 0 ? mono + (uint64_t)left : mono;
	return 0;
}

/* mq_open(2): the attributes are copied when given (EFAULT), used with O_CREAT. */
long sys_mq_open(struct task *t, const long a[6])
{
	char name[PATH_MAX];
	struct pvx_mq_attr attr;
	int oflag = (int)a[1];
	long r;

	if (a[3] && copy_from_guest(t->mm, &attr, (uint64_t)a[3], sizeof(attr)))
		return -EFAULT;
	if ((r = get_name(t, (uint64_t)a[0], name)))
		return r;
	return mq_open_name(t, name, oflag, (unsigned)a[2], (oflag & O_CREAT) && a[3] ? &attr : NULL);
}

long sys_mq_unlink(struct task *t, const long a[6])
{
	char name[PATH_MAX];
	long r = get_name(t, (uint64_t)a[0], name);

	return r ? r : mq_unlink_name(t, name);
}

/*
 * mq_timedsend(2): the timeout, "EINVAL msg_prio was greater than or equal
 * to MQ_PRIO_MAX", the fd (EBADF), EMSGSIZE, the message (EFAULT), then
 * room: EAGAIN with O_NONBLOCK, else a wait.
 */
long sys_mq_timedsend(struct task *t, const long a[6])
{
	uint64_t until, len = (uint64_t)a[2];
	long r;

	if ((r = get_deadline(t, (uint64_t)a[4], &until)))
		return r;
	if ((unsigned long)a[3] >= PVX_MQ_PRIO_MAX)
		return -EINVAL;
	if ((r = mq_msgsize(t, (int)a[0])) < 0)
		return r;
	if (len > (uint64_t)r)
		return -EMSGSIZE;
	cleanup_free char *msg = malloc(len + 1);
	if (!msg)
		return -ENOMEM;
	if (copy_from_guest(t->mm, msg, (uint64_t)a[1], len))
		return -EFAULT;
	return mq_send(t, (int)a[0], msg, len, (unsigned)a[3], until);
}

/* mq_timedreceive(2): the timeout, the fd, "EMSGSIZE msg_len was less than the mq_msgsize", then a message. */
long sys_mq_timedreceive(struct task *t, const long a[6])
{
	uint64_t until;
	long r;

	if ((r = get_deadline(t, (uint64_t)a[4], &until)))
		return r;
	return mq_receive(t, (int)a[0], (uint64_t)a[1], (size_t)a[2], (uint64_t)a[3], until);
}

/* The kernel's struct sigevent, as far as mq_notify reads it. */
struct guest_sigevent {
	uint64_t value;
	int32_t signo, notify;
	int32_t pad[12];
};

/*
 * mq_notify(2): "EINVAL sevp->sigev_notify is not one of the permitted
 * values; or ... SIGEV_SIGNAL and sevp->sigev_signo is not a valid signal
 * number", then for SIGEV_THREAD the cookie (EFAULT) and the netlink
 * socket's fd (EBADF; the host says ENOTSOCK or EINVAL for another kind),
 * before the queue's fd (EBADF); a NULL sevp removes our registration.
 */
long sys_mq_notify(struct task *t, const long a[6])
{
	struct guest_sigevent ev = { 0 };
	struct mq_notify_req req = { 0 };
	struct file *sock = NULL;

	if (!a[1])
		return mq_set_notify(t, (int)a[0], NULL);
	if (copy_from_guest(t->mm, &ev, (uint64_t)a[1], sizeof(ev)))
		return -EFAULT;
	if (ev.notify != SIGEV_NONE && ev.notify != SIGEV_SIGNAL && ev.notify != SIGEV_THREAD)
		return -EINVAL;
	if (ev.notify == SIGEV_SIGNAL && (ev.signo < 0 || ev.signo > GUEST_NSIG))
		return -EINVAL;
	if (ev.notify == SIGEV_THREAD) {
		if (copy_from_guest(t->mm, req.cookie, ev.value, sizeof(req.cookie)))
			return -EFAULT;
		sock = fd_lookup(t->files, ev.signo);
		if (!sock)
			return -EBADF;
		req.host_sock = file_get(sock)->host_fd;	/* held: the host registration drops the lock */
	}
	req.notify = ev.notify;
	req.signo = ev.signo;
	req.value = ev.value;
	long r = mq_set_notify(t, (int)a[0], &req);
	if (sock)
		file_put(sock);
	return r;
}

/* mq_getsetattr(2): "EINVAL newattr->mq_flags contained set bits other than O_NONBLOCK". */
long sys_mq_getsetattr(struct task *t, const long a[6])
{
	struct pvx_mq_attr new, old;
	long r;

	if (a[1]) {
		if (copy_from_guest(t->mm, &new, (uint64_t)a[1], sizeof(new)))
			return -EFAULT;
		if (new.mq_flags & ~(long)O_NONBLOCK)
			return -EINVAL;
	}
	if ((r = mq_attr(t, (int)a[0], a[1] ? &new : NULL, &old)))
		return r;
	if (a[2] && copy_to_guest(t->mm, (uint64_t)a[2], &old, sizeof(old)))
		return -EFAULT;
	return 0;
}

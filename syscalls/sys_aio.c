// SPDX-License-Identifier: GPL-2.0
/*
 * Linux AIO: io_setup, io_destroy, io_submit, io_cancel, io_getevents,
 * io_pgetevents (fs/aio.c). A request is done when it is submitted, by the
 * readv family's own I/O (sys_io.c) or fsync, as Linux does buffered AIO:
 * io_submit may wait as a read of a pipe does, and the event is there for
 * io_getevents at once. So nothing is ever in flight for io_cancel
 * (EINVAL, as for a request that already completed). IOCB_CMD_POLL is
 * EINVAL, as on a kernel before 4.18: pvx has no wakeup for a poll request
 * left pending. The contexts are sentry/kernel/aio.c's.
 */
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "pvx/aio.h"
#include "pvx/timer.h"
#include "syscalls/syscalls.h"

#define KIOCB_KEY 0
/* RWF_SUPPORTED of Linux 6.x: kiocb_set_rw_flags' EOPNOTSUPP for the rest. */
#define AIO_RWF_KNOWN 0x7fU	/* HIPRI DSYNC SYNC NOWAIT APPEND NOAPPEND ATOMIC */

/* The guest's copy of its iocb and what io_submit_one found for it. */
struct aio_req {
	struct iocb cb;
	uint64_t ucb;
	struct file *file;
	struct file *resfd;	/* IOCB_FLAG_RESFD's eventfd, or NULL */
};

/* eventfd_ctx_fdget(): EBADF for no fd, EINVAL for a file that is no eventfd. */
static long get_eventfd(struct task *t, int fd, struct file **out)
{
	struct file *f = fd_lookup(t->files, fd);
	char path[32], link[32] = "";

	if (!f)
		return -EBADF;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", f->host_fd);
	if (f->ops != &anon_file_ops || readlink(path, link, sizeof(link) - 1) < 0 ||
	    strcmp(link, "anon_inode:[eventfd]"))
		return -EINVAL;
	*out = file_get(f);
	return 0;
}

/*
 * aio_read(), aio_write(): the flags, the file's mode, the buffer or
 * iovecs and the offset (a stream's is ignored) are io_submit's errors;
 * then the file's I/O, its result into *res.
 */
static long aio_rw(struct task *t, struct aio_req *q, bool write, bool vectored, long *res)
{
	cleanup_free struct iovec *iov = NULL;
	struct iovec one = { (void *)(uintptr_t)q->cb.aio_buf, (size_t)q->cb.aio_nbytes };
	const struct iovec *v = &one;
	size_t cnt = 1, total = one.iov_len;
	int acc = q->file->flags & O_ACCMODE;
	long r;

	if (q->cb.aio_rw_flags & ~AIO_RWF_KNOWN)
		return -EOPNOTSUPP;
	if ((q->file->flags & O_PATH) || acc == (write ? O_RDONLY : O_WRONLY))
		return -EBADF;
	if (vectored) {
		if ((r = get_iov(t, q->cb.aio_buf, (long)q->cb.aio_nbytes, &iov)) < 0)
			return r;
		v = iov;
		cnt = q->cb.aio_nbytes;
		total = (size_t)r;
	}
	off_t off = (off_t)q->cb.aio_offset;
	if (file_seek(q->file, 0, SEEK_CUR) == -ESPIPE)
		off = -1;	/* a pipe, socket or terminal: the kiocb's position means nothing to it */
	else if (off < 0)
		return -EINVAL;	/* rw_verify_area() */
	file_get(q->file);	/* another thread may close the fd while the I/O waits */
	r = io_rw_iov(t, q->file, write, v, cnt, total, off, (int)q->cb.aio_rw_flags);
	file_put(q->file);
	*res = r == -ERESTARTSYS ? -EINTR : r;	/* aio_rw_done() */
	return 0;
}

/* aio_fsync(): "no buffer, offset, size or flags"; EINVAL for a file without fsync. */
static long aio_fsync(struct task *t, struct aio_req *q, bool datasync)
{
	const long a[6] = { q->cb.aio_fildes };

	if (q->cb.aio_buf || q->cb.aio_offset || q->cb.aio_nbytes || q->cb.aio_rw_flags)
		return -EINVAL;
	return datasync ? sys_fdatasync(t, a) : sys_fsync(t, a);
}

/* __io_submit_one() once a slot is reserved: 0 with *res the event's result, or the submit's -errno. */
static long submit_one(struct task *t, struct aio_req *q, long *res)
{
	uint32_t key = KIOCB_KEY;
	long r;

	if (!(q->file = fd_lookup(t->files, (int)q->cb.aio_fildes)))
		return -EBADF;
	if ((q->cb.aio_flags & IOCB_FLAG_RESFD) && (r = get_eventfd(t, (int)q->cb.aio_resfd, &q->resfd)))
		return r;
	if (copy_to_guest(t->mm, q->ucb + offsetof(struct iocb, aio_key), &key, sizeof(key)))
		return -EFAULT;
	switch (q->cb.aio_lio_opcode) {
	case IOCB_CMD_PREAD:
	case IOCB_CMD_PWRITE:
	case IOCB_CMD_PREADV:
	case IOCB_CMD_PWRITEV: {
		bool write = q->cb.aio_lio_opcode == IOCB_CMD_PWRITE || q->cb.aio_lio_opcode == IOCB_CMD_PWRITEV;
		bool vec = q->cb.aio_lio_opcode == IOCB_CMD_PREADV || q->cb.aio_lio_opcode == IOCB_CMD_PWRITEV;
		return aio_rw(t, q, write, vec, res);
	}
	case IOCB_CMD_FSYNC:
	case IOCB_CMD_FDSYNC:
		r = aio_fsync(t, q, q->cb.aio_lio_opcode == IOCB_CMD_FDSYNC);
		if (r == -EINVAL)
			return r;
		break;
	default:	/* IOCB_CMD_POLL too: see above */
		return -EINVAL;
	}
	*res = r;
	return 0;
}

/* io_submit_one(): the iocb (EFAULT), its reserved field and size (EINVAL), a slot (EAGAIN), then the request. */
static long io_submit_one(struct task *t, struct aio_ctx *c, uint64_t ucb)
{
	struct aio_req q = { .ucb = ucb };
	long res = 0, r;

	if (copy_from_guest(t->mm, &q.cb, ucb, sizeof(q.cb)))
		return -EFAULT;
	if (q.cb.aio_reserved2 || (int64_t)q.cb.aio_nbytes < 0)
		return -EINVAL;
	if ((r = aio_reserve(c)))
		return r;
	r = submit_one(t, &q, &res);
	if (r) {
		aio_unreserve(c);
	} else {
		struct io_event ev = { .data = q.cb.aio_data, .obj = ucb, .res = res };
		aio_complete(c, &ev);
		if (q.resfd)
			aio_eventfd_signal(q.resfd->host_fd);
	}
	if (q.resfd)
		file_put(q.resfd);
	return r;
}

/* io_setup(2): "EINVAL ctx_idp is not initialized, or nr_events is 0", EFAULT for the pointer. */
long sys_io_setup(struct task *t, const long a[6])
{
	uint64_t id;
	long r;

	if (copy_from_guest(t->mm, &id, (uint64_t)a[1], sizeof(id)))
		return -EFAULT;
	if (id || (unsigned)a[0] == 0)
		return -EINVAL;
	if ((r = aio_setup(t, (unsigned)a[0], &id)))
		return r;
	if (copy_to_guest(t->mm, (uint64_t)a[1], &id, sizeof(id))) {
		(void)!aio_destroy(t, id);
		return -EFAULT;
	}
	return 0;
}

long sys_io_destroy(struct task *t, const long a[6])
{
	return aio_destroy(t, (uint64_t)a[0]);
}

/*
 * io_submit(2): "EINVAL nr is invalid", then the context; nr is cut to the
 * context's size. The number submitted before the first failure, or that
 * failure when it is the first.
 */
long sys_io_submit(struct task *t, const long a[6])
{
	long nr = a[1], i, r = 0;

	if (nr < 0)
		return -EINVAL;
	struct aio_ctx *c = aio_lookup(t, (uint64_t)a[0]);
	if (!c)
		return -EINVAL;
	nr = MIN(nr, (long)aio_capacity(c));
	aio_hold(c);	/* a request's I/O may drop the lock: an io_destroy meanwhile frees c only after */
	for (i = 0; i < nr; i++) {
		uint64_t ucb;
		if (copy_from_guest(t->mm, &ucb, (uint64_t)a[2] + (uint64_t)i * sizeof(ucb), sizeof(ucb))) {
			r = -EFAULT;
			break;
		}
		if ((r = io_submit_one(t, c, ucb)))
			break;
	}
	aio_drop(c);
	return i ? i : r;
}

/* io_cancel(2): the iocb's key first (EFAULT, EINVAL), the context; nothing is ever in flight: EINVAL. */
long sys_io_cancel(struct task *t, const long a[6])
{
	uint32_t key;

	if (copy_from_guest(t->mm, &key, (uint64_t)a[1] + offsetof(struct iocb, aio_key), sizeof(key)))
		return -EFAULT;
	if (key != KIOCB_KEY || !aio_lookup(t, (uint64_t)a[0]))
		return -EINVAL;
	return -EINVAL;
}

/*
 * do_io_getevents() after the timeout's copy: the context (EINVAL), "EINVAL
 * min_nr is invalid or nr is invalid", a relative timeout (zero or less:
 * no wait).
 */
static long getevents(struct task *t, const long a[6], const struct timespec *ts)
{
	struct aio_ctx *c = aio_lookup(t, (uint64_t)a[0]);
	uint64_t until = 0;

	if (!c)
		return -EINVAL;
	if (a[1] < 0 || a[1] > a[2])
		return -EINVAL;
	if (ts) {
		if (ts->tv_sec < 0 || (ts->tv_sec == 0 && ts->tv_nsec <= 0)) {
			until = 1;
		} else {
			uint64_t now = timer_now_ns();
			uint64_t rel = (uint64_t)ts->tv_sec * 1000000000ULL + (uint64_t)MAX(ts->tv_nsec, 0L);
			until = (uint64_t)ts->tv_sec > UINT64_MAX / 2000000000ULL || rel > UINT64_MAX - now ? 0 : now + rel;
		}
	}
	return aio_getevents(t, c, a[1], a[2], (uint64_t)a[3], until);
}

/* io_getevents(2): "EINTR Interrupted by a signal handler" when no event came. */
long sys_io_getevents(struct task *t, const long a[6])
{
	struct timespec ts;

	if (a[4] && copy_from_guest(t->mm, &ts, (uint64_t)a[4], sizeof(ts)))
		return -EFAULT;
	return getevents(t, a, a[4] ? &ts : NULL);
}

/* io_pgetevents: as io_getevents with { sigmask, sigsetsize } at a[5] set for the wait, as ppoll's. */
long sys_io_pgetevents(struct task *t, const long a[6])
{
	struct { uint64_t mask, size; } usig = { 0, 0 };
	struct timespec ts;
	long r;

	if (a[4] && copy_from_guest(t->mm, &ts, (uint64_t)a[4], sizeof(ts)))
		return -EFAULT;
	if (a[5] && copy_from_guest(t->mm, &usig, (uint64_t)a[5], sizeof(usig)))
		return -EFAULT;
	if ((r = poll_mask_set(t, usig.mask, (long)usig.size)))
		return r;
	return poll_mask_done(t, getevents(t, a, a[4] ? &ts : NULL));
}

// SPDX-License-Identifier: GPL-2.0
/*
 * More kinds of fds and more ways to use them: memfd_create and eventfd
 * (host memfds and eventfds the sentry owns, as pipe2 does pipes),
 * close_range, flock, fadvise64/readahead, and sendfile/copy_file_range
 * (done by the host kernel between the two host fds). Each host fd is the
 * guest's open file description, so locks, seals, counters and offsets
 * behave as on Linux.
 */
#include <fcntl.h>
#include <linux/sched.h>
#include <sys/eventfd.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "pvx/fs_share.h"
#include "pvx/kernel.h"
#include "syscalls/syscalls.h"

#ifndef MFD_NOEXEC_SEAL
#define MFD_NOEXEC_SEAL 0x0008U
#endif
#ifndef MFD_EXEC
#define MFD_EXEC 0x0010U
#endif
#define MFD_KNOWN (MFD_CLOEXEC | MFD_ALLOW_SEALING | MFD_HUGETLB | MFD_NOEXEC_SEAL | MFD_EXEC)
#define MFD_HUGE_SIZES (0x3fU << 26)	/* MFD_HUGE_MASK << MFD_HUGE_SHIFT */
#define MFD_NAME_MAX_LEN 249		/* NAME_MAX - strlen("memfd:") */

#define CLOSE_RANGE_UNSHARE_ (1U << 1)
#define CLOSE_RANGE_CLOEXEC_ (1U << 2)

/* A new host fd, a file of kind ops, becomes the lowest free guest fd; the host fd is closed on failure. */
static long install_host_fd(struct task *t, int host_fd, int flags, bool cloexec, const struct file_ops *ops)
{
	struct file *f = file_new(host_fd, flags, ops);

	if (!f) {
		close(host_fd);
		return -ENOMEM;
	}
	long fd = fd_install(t->files, f, cloexec, 0);
	file_put(f);
	return fd;
}

/*
 * memfd_create(2): "EINVAL flags included unknown bits" or "name was too
 * long" (249 bytes without the NUL), EFAULT for a bad name. The host checks
 * the rest (MFD_EXEC with MFD_NOEXEC_SEAL, the vm.memfd_noexec sysctl, huge
 * page sizes).
 */
long sys_memfd_create(struct task *t, const long a[6])
{
	unsigned flags = (unsigned)a[1];
	char name[MFD_NAME_MAX_LEN + 1];

	if (flags & ~(MFD_KNOWN | (flags & MFD_HUGETLB ? MFD_HUGE_SIZES : 0)))
		return -EINVAL;
	long n = strncpy_from_guest(t->mm, name, (uint64_t)a[0], sizeof(name));
	if (n < 0)
		return n == -ENAMETOOLONG ? -EINVAL : n;
	int fd = memfd_create(name, flags | MFD_CLOEXEC);
	if (fd < 0)
		return neg_errno();
	return install_host_fd(t, fd, O_RDWR, flags & MFD_CLOEXEC, &memfd_file_ops);
}

/*
 * eventfd2(2): a host eventfd; read and write of its 8-byte counter, poll
 * and EFD_SEMAPHORE are the host's, blocking reads and writes go through
 * sys_read/sys_write, which wait with the sentry lock dropped.
 */
long sys_eventfd2(struct task *t, const long a[6])
{
	int flags = (int)a[1];

	if (flags & ~(EFD_CLOEXEC | EFD_NONBLOCK | EFD_SEMAPHORE))
		return -EINVAL;
	int fd = eventfd((unsigned)a[0], EFD_CLOEXEC | (flags & (EFD_NONBLOCK | EFD_SEMAPHORE)));
	if (fd < 0)
		return neg_errno();
	return install_host_fd(t, fd, O_RDWR | (flags & O_NONBLOCK), flags & EFD_CLOEXEC, &anon_file_ops);
}

long sys_eventfd(struct task *t, const long a[6])
{
	const long b[6] = { a[0], 0 };

	return sys_eventfd2(t, b);
}

/*
 * close_range(2): close, or with CLOSE_RANGE_CLOEXEC mark close-on-exec,
 * every open fd in [first, last]. "EINVAL flags is not valid, or first is
 * greater than last." CLOSE_RANGE_UNSHARE unshares the fd table first
 * (unshare(CLONE_FILES)): the range goes from our copy only, and a thread
 * or process sharing the table keeps its fds.
 */
long sys_close_range(struct task *t, const long a[6])
{
	unsigned first = (unsigned)a[0], last = (unsigned)a[1], flags = (unsigned)a[2];

	if (flags & ~(CLOSE_RANGE_UNSHARE_ | CLOSE_RANGE_CLOEXEC_) || first > last)
		return -EINVAL;
	long r;

	if ((flags & CLOSE_RANGE_UNSHARE_) && (r = task_unshare(t, CLONE_FILES)) < 0)
		return r;
	for (unsigned fd = first; fd <= last && fd < t->files->size; fd++) {
		struct fd_entry *e = &t->files->fds[fd];
		if (e->file && (flags & CLOSE_RANGE_CLOEXEC_))
			e->cloexec = true;
		else if (e->file && fd_close(t->files, (int)fd) < 0)
			return -EBADF;	/* cannot happen: it was open */
	}
	return 0;
}

/*
 * The host object of guest fd fd for call (pvx/file.h): its host fd,
 * -errno, or FILE_CALL_DONE (succeeds, nothing to do).
 */
long fd_object(struct task *t, int fd, enum file_call call)
{
	struct file *f = fd_lookup(t->files, fd);

	return f ? file_object(f, call) : -EBADF;
}

/*
 * flock(2) on the host object, so the lock belongs to the guest's open
 * file description (shared by dup and fork) and conflicts with other
 * opens of the file. A lock that must wait does so with the sentry lock
 * dropped; a signal ends the wait (restartable, as Linux's -ERESTARTSYS).
 * As on Linux, a lock that is free is taken even with a signal pending.
 * "EINVAL operation is invalid" also where there is no host object.
 */
long sys_flock(struct task *t, const long a[6])
{
	struct file *f = fd_lookup(t->files, (int)a[0]);
	int op = (int)a[1], type = op & ~LOCK_NB;

	if (!f)
		return -EBADF;
	long hfd = file_object(f, FILE_FLOCK);
	if (hfd == FILE_CALL_DONE)
		return type == LOCK_SH || type == LOCK_EX || type == LOCK_UN ? 0 : -EINVAL;
	if (hfd < 0)
		return hfd;
	if (flock((int)hfd, op | LOCK_NB) == 0)
		return 0;
	if (errno != EWOULDBLOCK || (op & LOCK_NB))
		return neg_errno();
	const long b[6] = { hfd, op };
	file_get(f);
	long r = task_block(t, NULL, SYS_flock, b, false);
	file_put(f);
	return r == -EINTR ? -ERESTARTSYS : r;
}

/* A host call on the host object of a[0] for call, the other arguments as they are. */
static long fd_passthrough(struct task *t, enum file_call call, long nr, const long a[6])
{
	long hfd = fd_object(t, (int)a[0], call);

	if (hfd < 0)
		return hfd;
	long r = syscall(nr, hfd, a[1], a[2], a[3], a[4], a[5]);
	return r < 0 ? neg_errno() : r;
}

#define FADV_LAST 5	/* POSIX_FADV_NOREUSE */

/*
 * fadvise64(2): "EBADF", "ESPIPE fd refers to a pipe or FIFO", "EINVAL
 * advice is invalid": the host's; without a host object, generic_fadvise's
 * checks only.
 */
long sys_fadvise64(struct task *t, const long a[6])
{
	if (fd_object(t, (int)a[0], FILE_FADVISE) == FILE_CALL_DONE)
		return a[2] < 0 || (unsigned long)a[3] > FADV_LAST ? -EINVAL : 0;
	return fd_passthrough(t, FILE_FADVISE, SYS_fadvise64, a);
}

/* readahead(2): "EBADF fd is not ... open for reading", "EINVAL ... not a file type that supports it". */
long sys_readahead(struct task *t, const long a[6])
{
	return fd_passthrough(t, FILE_READAHEAD, SYS_readahead, a);
}

/*
 * sendfile(2) between the two host fds. "If offset is not NULL ... sendfile()
 * will not modify the file offset of in_fd" and *offset is set to the byte
 * after the last one read, even when the call fails (Linux writes it back
 * unconditionally). Writing to a full pipe waits with the lock dropped.
 */
long sys_sendfile(struct task *t, const long a[6])
{
	uint64_t uoff = (uint64_t)a[2];
	off_t off = 0;
	long r;

	if (uoff && (r = copy_from_guest(t->mm, &off, uoff, sizeof(off))))
		return r;
	struct file *in = io_file(t, (int)a[1], O_RDONLY), *out = io_file(t, (int)a[0], O_WRONLY);
	if (!in || !out)
		return -EBADF;
	long hin = file_object(in, FILE_SENDFILE), hout = file_object(out, FILE_SENDFILE);
	if (hin < 0 || hout < 0)
		return hin < 0 ? hin : hout;
	const long b[6] = { hout, hin, uoff ? (long)&off : 0, a[3] };
	r = io_block(t, NULL, in, out, SYS_sendfile, b);
	if (r < 0)
		r = io_error(t, r);
	if (uoff && copy_to_guest(t->mm, uoff, &off, sizeof(off)))
		return -EFAULT;
	return r;
}

/*
 * copy_file_range(2) between the two host fds: the host checks the files
 * (EBADF for modes and O_APPEND, EINVAL for non-regular files, overlaps and
 * flags, EXDEV). The guest's offsets are read first and written back only
 * when bytes were copied, as Linux does.
 */
long sys_copy_file_range(struct task *t, const long a[6])
{
	struct file *in = fd_lookup(t->files, (int)a[0]), *out = fd_lookup(t->files, (int)a[2]);
	uint64_t uin = (uint64_t)a[1], uout = (uint64_t)a[3];
	off_t off_in = 0, off_out = 0;
	long r;

	if (!in || !out)
		return -EBADF;
	if ((uin && (r = copy_from_guest(t->mm, &off_in, uin, sizeof(off_in)))) ||
	    (uout && (r = copy_from_guest(t->mm, &off_out, uout, sizeof(off_out)))))
		return r;
	long hin = file_object(in, FILE_COPY_RANGE), hout = file_object(out, FILE_COPY_RANGE);
	if (hin < 0 || hout < 0)
		return hin < 0 ? hin : hout;
	const long b[6] = { hin, uin ? (long)&off_in : 0, hout, uout ? (long)&off_out : 0, a[4], a[5] };
	r = io_block(t, NULL, in, out, SYS_copy_file_range, b);
	if (r < 0)
		return io_error(t, r);
	if (r > 0 && ((uin && copy_to_guest(t->mm, uin, &off_in, sizeof(off_in))) ||
		      (uout && copy_to_guest(t->mm, uout, &off_out, sizeof(off_out)))))
		return -EFAULT;
	return r;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * The optional file operations, each with Linux's answer for a file whose
 * kind does not have it (include/pvx/file.h): handlers call these, so a
 * kind pvx answers itself (signalfd, epoll, sockets) works with every
 * handler by setting only what is its own.
 */
#include <fcntl.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/stat.h>

#include "pvx/file.h"
#include "pvx/mm.h"
#include "pvx/path.h"
#include "pvx/task.h"

/* See pvx/file.h: a kind without rw_vec reads and writes the one buffer through its read and write. */
long file_rw_vec(struct task *t, struct file *f, bool write, void *buf, size_t count, off_t off, int rwf)
{
	if (f->ops->rw_vec)
		return f->ops->rw_vec(t, f, write, buf, count, off, rwf);
	if (rwf)
		return -EOPNOTSUPP;
	if (write)
		return f->ops->write(t, f, buf, count, off, off != -1);
	return f->ops->read(t, f, buf, count, off, off != -1);
}

/* lseek(2): "ESPIPE fd is associated with a pipe, socket, or FIFO" (no_llseek). */
long file_seek(struct file *f, off_t off, int whence)
{
	return f->ops->seek ? f->ops->seek(f, off, whence) : -ESPIPE;
}

/* A file without poll is always readable and writable (DEFAULT_POLLMASK). */
short file_poll(struct file *f, short events)
{
	return f->ops->poll ? f->ops->poll(f, events) : events & (POLLIN | POLLOUT | POLLRDNORM | POLLWRNORM);
}

/*
 * ioctl(2): FIONBIO is every file's (do_vfs_ioctl: the O_NONBLOCK status
 * flag, as F_SETFL); the rest is the kind's, ENOTTY without.
 */
long file_ioctl(struct task *t, struct file *f, unsigned long cmd, uint64_t arg)
{
	if (cmd == FIONBIO) {
		int on;
		long r = copy_from_guest(t->mm, &on, arg, sizeof(on));
		long fl = r ? r : file_getfl(f);
		if (fl < 0)
			return fl;
		return file_setfl(f, on ? (int)fl | O_NONBLOCK : (int)fl & ~O_NONBLOCK);
	}
	return f->ops->ioctl ? f->ops->ioctl(t, f, cmd, arg) : -ENOTTY;
}

/* mmap(2): "ENODEV The underlying filesystem of the specified file does not support memory mapping." */
long file_mmap(struct file *f)
{
	return f->ops->mmap ? f->ops->mmap(f) : -ENODEV;
}

/* getdents64(2): "ENOTDIR File descriptor does not refer to a directory." */
long file_getdents(struct task *t, struct file *f, void *buf, size_t count)
{
	return f->ops->getdents ? f->ops->getdents(t, f, buf, count) : -ENOTDIR;
}

/* The fcntl commands of some kinds, for a file that is not of one: EBADF for pipe sizes (not a pipe), else EINVAL. */
long file_fcntl_none(int cmd)
{
	return cmd == F_GETPIPE_SZ || cmd == F_SETPIPE_SZ ? -EBADF : -EINVAL;
}

long file_fcntl(struct task *t, struct file *f, int cmd, unsigned long arg)
{
	return f->ops->fcntl ? f->ops->fcntl(t, f, cmd, arg) : file_fcntl_none(cmd);
}

/* F_GETFL: the kind's, or the guest's open flags pvx keeps. */
long file_getfl(struct file *f)
{
	long r = f->ops->getfl ? f->ops->getfl(f) : f->flags & ~O_CLOEXEC;

	return r < 0 ? r : r | (f->flags & O_ASYNC);	/* the guest's own: never set on the host fd */
}

long file_async_files;

#define SETFL_MASK (O_APPEND | O_NONBLOCK | O_NOATIME | O_DIRECT)

/*
 * F_SETFL: "the file access mode and the file creation flags are ignored";
 * pvx keeps O_APPEND and O_NONBLOCK, and O_ASYNC for itself (a host fd
 * with O_ASYNC would signal the sentry): pipes signal their readers.
 */
long file_setfl(struct file *f, int flags)
{
	long r = f->ops->setfl ? f->ops->setfl(f, flags & SETFL_MASK) : 0;

	if (r < 0)
		return r;
	f->flags = (f->flags & ~(O_APPEND | O_NONBLOCK | O_ASYNC)) | (flags & (O_APPEND | O_NONBLOCK | O_ASYNC));
	if (!!(flags & O_ASYNC) != f->async_counted) {
		f->async_counted = flags & O_ASYNC;
		file_async_files += f->async_counted ? 1 : -1;
		if (f->async_counted && file_async_files == 1)
			fs_kernel->pt_pause_all();	/* the stubs' pipe writes would not reach pipe_wrote */
	}
	return 0;
}

/*
 * Linux's answer to each call for a file that is not a host object (an
 * anonymous inode's, as signalfd, epoll and eventfd files are): an errno,
 * FILE_CALL_DONE, or 1 for "the readiness fd answers".
 */
static const long no_object[FILE_NR_CALLS] = {
	[FILE_SENDFILE] = -EINVAL,
	[FILE_COPY_RANGE] = -EINVAL,
	[FILE_FLOCK] = FILE_CALL_DONE,
	[FILE_FADVISE] = FILE_CALL_DONE,
	[FILE_READAHEAD] = -EINVAL,
	[FILE_CHMOD] = FILE_CALL_DONE,
	[FILE_CHOWN] = FILE_CALL_DONE,
	[FILE_UTIMES] = FILE_CALL_DONE,
	[FILE_TRUNCATE] = -EINVAL,
	[FILE_STATFS] = 1,
	[FILE_SYNC] = -EINVAL,
	[FILE_DIR] = -ENOTDIR,
	[FILE_PATH] = -EPERM,
	[FILE_EXEC] = -EACCES,
	[FILE_REOPEN] = -ENXIO,
	[FILE_STATX] = FILE_CALL_DONE,
	[FILE_SPLICE] = -EINVAL,
	[FILE_FALLOCATE] = -ENODEV,
	[FILE_PASS] = -EINVAL,
	[FILE_XATTR] = 1,	/* an anonymous inode's: ENODATA, no names, EPERM */
	[FILE_LOCK] = 1,
};

/*
 * The host fd the host kernel makes call on for f; -errno, or
 * FILE_CALL_DONE for a call that succeeds with nothing to do, where the
 * kind has no host object for it.
 */
long file_object(struct file *f, enum file_call call)
{
	long r = f->ops->object ? f->ops->object(f, call) : -ENOENT;

	if (r != -ENOENT)
		return r;
	return no_object[call] == 1 ? f->host_fd : no_object[call];
}

/* The host fd poll and select wait on. */
int file_ready_fd(struct file *f)
{
	return f->ops->ready_fd ? f->ops->ready_fd(f) : f->host_fd;
}

/* See pvx/file.h. */
const struct file_ops *file_kind_of(int host_fd)
{
	struct stat st;

	if (fstat(host_fd, &st) < 0)
		return &host_file_ops;
	return file_kind_of_mode(st.st_mode);
}

/* See pvx/file.h. */
const struct file_ops *file_kind_of_mode(mode_t mode)
{
	if (S_ISFIFO(mode))
		return &pipe_file_ops;
	if (S_ISDIR(mode))
		return &dir_file_ops;
	return &host_file_ops;
}

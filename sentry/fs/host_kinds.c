// SPDX-License-Identifier: GPL-2.0
/*
 * Kinds that are host fds underneath, each answering what is its own:
 * directories (getdents64), eventfds (the host's anonymous inode is not
 * the guest's to change), memfds (seals, mmap) and the text files /proc
 * makes (read-only, seekable as a seq_file). Pipes are in pipe.c.
 */
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/stat.h>

#include "pvx/mm.h"
#include "pvx/task.h"
#include "pvx/file.h"
#include "sentry/fs/host_file.h"

/* Directories: read is EISDIR (the host's), getdents64 is theirs; no ioctl, mmap or kind fcntl. */
const struct file_ops dir_file_ops = {
	.read = host_read,
	.write = host_write,
	.release = host_release,
	.stat = host_stat,
	.seek = host_seek,
	.poll = host_poll,
	.rw_vec = host_rw_vec,
	.getdents = host_getdents,
	.getfl = host_getfl,
	.setfl = host_setfl,
	.object = host_object,
};

/*
 * The host's eventfds share one anonymous inode with every eventfd,
 * signalfd, epoll and timerfd of the host: its mode, owner, times and
 * flock belong to no guest, so those calls find no host object
 * (file_object answers as for pvx's own anonymous files).
 */
long anon_object(struct file *f, enum file_call call)
{
	switch (call) {
	case FILE_FLOCK:
	case FILE_CHMOD:
	case FILE_CHOWN:
	case FILE_UTIMES:
	case FILE_PATH:
	case FILE_REOPEN:
	case FILE_PASS:		/* a receiver could not tell it from any host anonymous inode: a token goes (fd_pass.c) */
		return -ENOENT;
	default:
		return f->host_fd;
	}
}

/*
 * eventfd(2) and timerfd_create(2): the counter (EFD_SEMAPHORE) or the
 * expirations, and readiness, are the host file's; seek is noop_llseek's.
 */
const struct file_ops anon_file_ops = {
	.read = host_read,
	.write = host_write,
	.rw_in_guest_mm = host_rw_in_guest_mm,
	.release = host_release,
	.stat = host_stat,
	.seek = host_seek,
	.poll = host_poll,
	.rw_vec = host_rw_vec,
	.getfl = host_getfl,
	.setfl = host_setfl,
	.object = anon_object,
	.read_consumes = true,
	.host_fdinfo = true,
};

/* ioctl(2): FIONREAD as for any regular file; no terminal. */
static long memfd_ioctl(struct task *t, struct file *f, unsigned long cmd, uint64_t arg)
{
	return cmd == FIONREAD ? host_fionread(t, f, arg) : -ENOTTY;
}

/* memfd_create(2): a host memfd; data, size, seals and shared mappings are the host file's. */
const struct file_ops memfd_file_ops = {
	.read = host_read,
	.write = host_write,
	.rw_in_guest_mm = host_rw_in_guest_mm,
	.release = host_release,
	.stat = host_stat,
	.seek = host_seek,
	.poll = host_poll,
	.ioctl = memfd_ioctl,
	.mmap = host_mmap,
	.rw_vec = host_rw_vec,
	.fcntl = host_fcntl,	/* "F_ADD_SEALS ... F_GET_SEALS": the host's answers (EPERM, EBUSY) */
	.getfl = host_getfl,
	.setfl = host_setfl,
	.object = host_object,
};

/*
 * lseek(2) on /proc's text, as seq_lseek: SEEK_SET and SEEK_CUR to any
 * offset that is not negative (EINVAL), no SEEK_END, SEEK_DATA or
 * SEEK_HOLE (EINVAL): the text has no size to seek from.
 */
static long procfs_seek(struct file *f, off_t off, int whence)
{
	if (whence != SEEK_SET && whence != SEEK_CUR)
		return -EINVAL;
	return host_seek(f, off, whence);
}

/*
 * fstat(2) as of a /proc file: a regular file of size 0 (its text is made
 * when it is read), not the size of the memfd that holds it.
 */
static long procfs_stat(struct file *f, struct stat *st)
{
	long r = host_stat(f, st);

	if (r < 0)
		return r;
	st->st_size = 0;
	st->st_blocks = 0;
	return 0;
}

/* ioctl(2): FIONREAD is every regular file's (do_vfs_ioctl): the size, 0, less the offset. */
static long procfs_ioctl(struct task *t, struct file *f, unsigned long cmd, uint64_t arg)
{
	if (cmd != FIONREAD)
		return -ENOTTY;
	off_t pos = lseek(f->host_fd, 0, SEEK_CUR);
	int n = (int)-pos;
	return pos < 0 ? neg_errno() : copy_to_guest(t->mm, arg, &n, sizeof(n));
}

/* proc_setattr: "ATTR_MODE ... -EPERM"; the memfd underneath is no file of the guest's. */
static long procfs_object(struct file *f, enum file_call call)
{
	if (call == FILE_XATTR)
		return -EOPNOTSUPP;	/* procfs has no xattr handlers; the memfd underneath is no file of the guest's */
	return call == FILE_CHMOD ? -EPERM : host_object(f, call);
}

/*
 * The text /proc makes (sentry/kernel/procfs.c): a memfd opened read-only.
 * No mmap (ENODEV, as a seq_file), no kind fcntl.
 */
const struct file_ops procfs_file_ops = {
	.read = host_read,
	.write = host_write,
	.rw_in_guest_mm = host_rw_in_guest_mm,
	.release = host_release,
	.stat = procfs_stat,
	.seek = procfs_seek,
	.poll = host_poll,
	.ioctl = procfs_ioctl,
	.rw_vec = host_rw_vec,
	.getfl = host_getfl,
	.setfl = host_setfl,
	.object = procfs_object,
};

// SPDX-License-Identifier: GPL-2.0
/*
 * The host-fd kind of file: what the guest opened is a host fd the sentry
 * owns (a file inside the root, a device the policy lets through, a
 * terminal), and each operation is the host's call on it. The helpers here
 * are shared by the other kinds that are host fds underneath (pipes,
 * directories, eventfds, memfds, /proc's text: sentry/fs/host_kinds.c).
 */
#include <fcntl.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <linux/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <termios.h>

#include "pvx/mm.h"
#include "pvx/path.h"
#include "pvx/task.h"
#include "sentry/fs/host_file.h"

/* The host's read, write or their p variants on the host fd; ubuf is a sentry or (as given) guest address. */
static long host_rw(struct task *t, struct addr_space *as, struct file *f, bool write, uint64_t ubuf, size_t count,
		    off_t off, bool positional)
{
	long nr = write ? (positional ? SYS_pwrite64 : SYS_write) : (positional ? SYS_pread64 : SYS_read);
	const long a[6] = { f->host_fd, (long)ubuf, (long)count, (long)off };

	return fs_kernel->block_io(t, as, write ? NULL : f, write ? f : NULL, nr, a);
}

/* Into the sentry's buffer. */
long host_read(struct task *t, struct file *f, void *buf, size_t count, off_t off, bool positional)
{
	return host_rw(t, NULL, f, false, (uint64_t)buf, count, off, positional);
}

/* From the sentry's buffer. */
long host_write(struct task *t, struct file *f, const void *buf, size_t count, off_t off, bool positional)
{
	return host_rw(t, NULL, f, true, (uint64_t)buf, count, off, positional);
}

/* Run in the guest's address space (vmexec): the host kernel moves the data to or from guest memory. */
long host_rw_in_guest_mm(struct task *t, struct file *f, bool write, uint64_t ubuf, size_t count, off_t off,
			 bool positional)
{
	return host_rw(t, t->proc->as, f, write, ubuf, count, off, positional);
}

/*
 * The host's vectored call on one iovec of buf, so the host applies its
 * own rules to the guest's call (ESPIPE, RWF_* flags and their
 * EOPNOTSUPP, O_APPEND). An empty transfer never waits: an empty pipe
 * reads 0 even with a signal pending.
 */
long host_rw_vec(struct task *t, struct file *f, bool write, void *buf, size_t count, off_t off, int rwf)
{
	struct iovec hiov = { buf, count };
	long nr = rwf ? (write ? SYS_pwritev2 : SYS_preadv2)
		      : off == -1 ? (write ? SYS_writev : SYS_readv) : (write ? SYS_pwritev : SYS_preadv);
	const long a[6] = { f->host_fd, (long)&hiov, 1, (long)off, 0, rwf };

	if (count == 0) {
		long r = syscall(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
		return r < 0 ? neg_errno() : r;
	}
	return fs_kernel->block_io(t, NULL, write ? NULL : f, write ? f : NULL, nr, a);
}

/* Close the host fd. */
void host_release(struct file *f)
{
	close(f->host_fd);
}

/* fstat of the host fd. */
long host_stat(struct file *f, struct stat *st)
{
	return fstat(f->host_fd, st) < 0 ? neg_errno() : 0;
}

/* lseek of the host fd (ESPIPE for pipes, as the host says). */
long host_seek(struct file *f, off_t off, int whence)
{
	off_t r = lseek(f->host_fd, off, whence);

	return r < 0 ? neg_errno() : (long)r;
}

/* The host's poll with no timeout. */
short host_poll(struct file *f, short events)
{
	struct pollfd p = { f->host_fd, events, 0 };

	return poll(&p, 1, 0) > 0 ? p.revents : 0;
}

/* FIONREAD: the host's count (a pipe's bytes, a regular file's size past the offset, a terminal's input). */
long host_fionread(struct task *t, struct file *f, uint64_t arg)
{
	int n;

	if (ioctl(f->host_fd, FIONREAD, &n) < 0)
		return neg_errno();
	return copy_to_guest(t->mm, arg, &n, sizeof(n));
}

/*
 * TCSETSW and TCSETSF wait until the output is written, which a stopped
 * terminal (^S) may never do: with the lock dropped, as any wait. Linux's
 * set_termios() answers -ERESTARTSYS when a signal is pending after that
 * wait, whether or not it waited: so does the kernel's block (ready false).
 */
static long tty_set_drained(struct task *t, struct file *f, unsigned long cmd, void *termios)
{
	const long a[6] = { f->host_fd, (long)cmd, (long)termios };

	file_get(f);
	long r = fs_kernel->block(t, NULL, SYS_ioctl, a, false);
	file_put(f);
	return r == -EINTR ? -ERESTARTSYS : r;
}

#define KERNEL_TERMIOS_SIZE 36	/* struct termios of <asm/termbits.h>, not glibc's */

/* Is the host fd /dev/random or /dev/urandom (char 1:8, 1:9)? */
static bool is_random_dev(int fd)
{
	struct stat st;

	return fstat(fd, &st) == 0 && S_ISCHR(st.st_mode) && major(st.st_rdev) == 1 &&
	       (minor(st.st_rdev) == 8 || minor(st.st_rdev) == 9);
}

/*
 * random(4)'s ioctls: RNDGETENTCNT reads the host's entropy count; the
 * others change the pool and need CAP_SYS_ADMIN, which the sandbox lacks.
 */
static long random_ioctl(struct task *t, struct file *f, unsigned long cmd, uint64_t arg)
{
	int n;

	switch (cmd) {
	case RNDGETENTCNT:
		if (ioctl(f->host_fd, RNDGETENTCNT, &n) < 0)
			return neg_errno();
		return copy_to_guest(t->mm, arg, &n, sizeof(n));
	case RNDADDTOENTCNT: case RNDADDENTROPY: case RNDZAPENTCNT: case RNDCLEARPOOL: case RNDRESEEDCRNG:
		return -EPERM;
	}
	return -ENOTTY;
}

/* ioctl(2): FIONREAD; random(4)'s on /dev/[u]random; terminal requests are passed to a host tty; the rest is ENOTTY. */
static long host_ioctl(struct task *t, struct file *f, unsigned long cmd, uint64_t arg)
{
	char buf[64];
	long r;

	if (cmd == FIONREAD)
		return host_fionread(t, f, arg);
	if (_IOC_TYPE(cmd) == 'R' && is_random_dev(f->host_fd))
		return random_ioctl(t, f, cmd, arg);
	if (!isatty(f->host_fd))
		return -ENOTTY;
	switch (cmd) {
	case TCGETS:
	case TIOCGWINSZ: {
		size_t size = cmd == TCGETS ? KERNEL_TERMIOS_SIZE : sizeof(struct winsize);
		if (ioctl(f->host_fd, cmd, buf) < 0)
			return neg_errno();
		return copy_to_guest(t->mm, arg, buf, size);
	}
	case TCSETS:
	case TCSETSW:
	case TCSETSF:
		if ((r = copy_from_guest(t->mm, buf, arg, KERNEL_TERMIOS_SIZE)))
			return r;
		if (cmd == TCSETS)
			return ioctl(f->host_fd, cmd, buf) < 0 ? neg_errno() : 0;
		return tty_set_drained(t, f, cmd, buf);
	}
	return -ENOTTY;
}

/* mm/ maps the host fd itself (and checks it: an O_PATH fd is EBADF before this). */
long host_mmap(struct file *f)
{
	return f->host_fd;
}

/* getdents64 of the host fd (ENOTDIR, EBADF for O_PATH: the host's). */
long host_getdents(struct task *t __unused, struct file *f, void *buf, size_t count)
{
	long n = syscall(SYS_getdents64, f->host_fd, buf, count);

	return n < 0 ? neg_errno() : n;
}

/*
 * The seals of a host file: the host answers (any shmem file has them,
 * F_SEAL_SEAL at least; EINVAL for other files). Pipes are their own kind.
 */
long host_fcntl(struct task *t __unused, struct file *f, int cmd, unsigned long arg)
{
	switch (cmd) {
	case F_ADD_SEALS:
	case F_GET_SEALS: {
		long r = fcntl(f->host_fd, cmd, (int)arg);
		return r < 0 ? neg_errno() : r;
	}
	}
	return file_fcntl_none(cmd);
}

/* F_GETFL of the host fd (its O_LARGEFILE, O_DIRECT ... as Linux's). */
long host_getfl(struct file *f)
{
	long r = fcntl(f->host_fd, F_GETFL);

	return r < 0 ? neg_errno() : r;
}

/* F_SETFL on the host fd (which checks O_DIRECT, O_NOATIME permission). */
long host_setfl(struct file *f, int flags)
{
	return fcntl(f->host_fd, F_SETFL, flags) < 0 ? neg_errno() : 0;
}

/* The host fd is the object for every call: the host answers. */
long host_object(struct file *f, enum file_call call __unused)
{
	return f->host_fd;
}

const struct file_ops host_file_ops = {
	.passthrough = true,
	.read = host_read,
	.write = host_write,
	.rw_in_guest_mm = host_rw_in_guest_mm,
	.release = host_release,
	.stat = host_stat,
	.seek = host_seek,
	.poll = host_poll,
	.ioctl = host_ioctl,
	.mmap = host_mmap,
	.rw_vec = host_rw_vec,
	.fcntl = host_fcntl,
	.getfl = host_getfl,
	.setfl = host_setfl,
	.object = host_object,
};

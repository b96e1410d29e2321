// SPDX-License-Identifier: GPL-2.0
/*
 * Data I/O and fd manipulation: read/write and their p/v variants, ioctl,
 * fcntl, dup. Data moves host fd <-> sentry bounce buffer <-> guest memory.
 */
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>

#include "pvx/kernel.h"
#include "sentry/platform/platform.h"
#include "syscalls/syscalls.h"

#define IO_CHUNK (1UL << 20)	/* bounce buffer bound: a larger read is a short read */
#define IOV_MAX_GUEST 1024	/* UIO_MAXIOV */

/*
 * Host I/O may block (pipes, terminals): task_block drops the sentry lock
 * around it, and the file reference keeps a close by another task from
 * freeing the file meanwhile.
 */
static long unlocked_io(struct task *t, struct addr_space *as, struct file *f, long nr, const long a[6])
{
	short ev = nr == SYS_read || nr == SYS_pread64 ? POLLIN : POLLOUT;
	/* Only with a signal pending does it matter whether the call would wait. */
	bool ready = signal_pending(t) && poll(&(struct pollfd){ f->host_fd, ev, 0 }, 1, 0) > 0;

	file_get(f);
	long r = task_block(t, as, nr, a, ready);
	file_put(f);
	return r;
}

/* write(2) "EPIPE ... the writing process will also receive a SIGPIPE signal". */
static long epipe(struct task *t, long r)
{
	struct sig_info info = { SI_KERNEL, 0, 0, 0 };

	if (r == -EPIPE)
		signal_queue(t, SIGPIPE, &info);
	return r;
}

/* A blocking read or write cut short to deliver a signal: restartable (SA_RESTART). */
static long io_error(struct task *t, long r)
{
	return r == -EINTR ? -ERESTARTSYS : epipe(t, r);
}

static struct file *io_file(struct task *t, int fd, int need)
{
	struct file *f = fd_lookup(t->files, fd);

	if (!f)
		return NULL;
	int acc = f->flags & O_ACCMODE;
	if (f->flags & O_PATH || (need == O_RDONLY && acc == O_WRONLY) || (need == O_WRONLY && acc == O_RDONLY))
		return NULL;
	return f;
}

/*
 * A read into a buffer whose first page is not writable fails with EFAULT
 * before any data is consumed, as Linux's copy_to_user would on the first byte.
 */
static bool first_page_writable(struct task *t, uint64_t buf)
{
	const struct vma *v = vma_lookup(&t->mm->vmas, buf);

	return v && (v->prot & PROT_WRITE);
}

/*
 * Zero-copy I/O: where the platform can run the host call in the guest's mm
 * (vmexec), the kernel moves the data straight between the file and guest
 * memory, with its own EFAULT semantics. PVX_COPY_IO=1 forces the copy path
 * (for the benchmark that compares them).
 */
static bool zero_copy(struct task *t)
{
	static int forced_copy = -1;

	if (forced_copy < 0)
		forced_copy = getenv("PVX_COPY_IO") && strcmp(getenv("PVX_COPY_IO"), "0");
	return t->proc->as->ops->zero_copy_io && !forced_copy;
}

static long io_in_guest_mm(struct task *t, long nr, struct file *f, uint64_t ubuf, size_t count, off_t off)
{
	const long a[6] = { f->host_fd, (long)ubuf, (long)count, (long)off };
	long r = unlocked_io(t, t->proc->as, f, nr, a);

	return r < 0 ? io_error(t, r) : r;
}

static long do_read(struct task *t, int fd, uint64_t ubuf, size_t count, off_t off, bool positional)
{
	struct file *f = io_file(t, fd, O_RDONLY);

	if (!f)
		return -EBADF;
	if (positional && off < 0)
		return -EINVAL;
	if (count == 0)
		return 0;
	if (zero_copy(t))
		return io_in_guest_mm(t, positional ? SYS_pread64 : SYS_read, f, ubuf, count, off);
	if (!first_page_writable(t, ubuf))
		return -EFAULT;
	count = MIN(count, IO_CHUNK);
	cleanup_free char *buf = malloc(count);
	if (!buf)
		return -ENOMEM;
	const long ra[6] = { f->host_fd, (long)buf, (long)count, (long)off };
	ssize_t n = unlocked_io(t, NULL, f, positional ? SYS_pread64 : SYS_read, ra);
	if (n < 0)
		return io_error(t, n);
	/*
	 * A buffer that runs into an unmapped page: Linux copies up to it and
	 * returns a short count, the file offset moving by what was copied.
	 */
	size_t copied = copy_to_guest_partial(t->mm, ubuf, buf, (size_t)n);
	if (copied < (size_t)n && !positional)
		lseek(f->host_fd, (off_t)copied - n, SEEK_CUR);
	return copied || !n ? (long)copied : -EFAULT;
}

static long do_write(struct task *t, int fd, uint64_t ubuf, size_t count, off_t off, bool positional)
{
	struct file *f = io_file(t, fd, O_WRONLY);
	size_t done = 0;

	if (!f)
		return -EBADF;
	if (positional && off < 0)
		return -EINVAL;
	if (zero_copy(t))
		return io_in_guest_mm(t, positional ? SYS_pwrite64 : SYS_write, f, ubuf, count, off);
	cleanup_free char *buf = malloc(MIN(count, IO_CHUNK) + 1);
	if (!buf)
		return -ENOMEM;
	while (done < count || count == 0) {
		size_t chunk = MIN(count - done, IO_CHUNK);
		long r = copy_from_guest(t->mm, buf, ubuf + done, chunk);
		if (r)
			return done ? (long)done : r;
		const long wa[6] = { f->host_fd, (long)buf, (long)chunk, (long)(off + (off_t)done) };
		ssize_t n = unlocked_io(t, NULL, f, positional ? SYS_pwrite64 : SYS_write, wa);
		if (n < 0)
			return done ? (long)done : io_error(t, n);
		done += (size_t)n;
		if ((size_t)n < chunk || count == 0)
			break;
	}
	return (long)done;
}

long sys_read(struct task *t, const long a[6])
{
	return do_read(t, (int)a[0], (uint64_t)a[1], (size_t)a[2], 0, false);
}

long sys_write(struct task *t, const long a[6])
{
	return do_write(t, (int)a[0], (uint64_t)a[1], (size_t)a[2], 0, false);
}

long sys_pread64(struct task *t, const long a[6])
{
	return do_read(t, (int)a[0], (uint64_t)a[1], (size_t)a[2], (off_t)a[3], true);
}

long sys_pwrite64(struct task *t, const long a[6])
{
	return do_write(t, (int)a[0], (uint64_t)a[1], (size_t)a[2], (off_t)a[3], true);
}

/* Copy in an iovec array; returns the total length or -errno (readv(2) EINVAL rules). */
static long get_iov(struct task *t, uint64_t uiov, long cnt, struct iovec **out)
{
	size_t total = 0;

	if (cnt < 0 || cnt > IOV_MAX_GUEST)
		return -EINVAL;
	struct iovec *iov = calloc((size_t)cnt + 1, sizeof(*iov));
	if (!iov)
		return -ENOMEM;
	long r = copy_from_guest(t->mm, iov, uiov, (size_t)cnt * sizeof(*iov));
	for (long i = 0; !r && i < cnt; i++) {
		if ((ssize_t)iov[i].iov_len < 0 || total + iov[i].iov_len > (size_t)SSIZE_MAX)
			r = -EINVAL;
		total += iov[i].iov_len;
	}
	if (r) {
		free(iov);
		return r;
	}
	*out = iov;
	return (long)MIN(total, IO_CHUNK);
}

long sys_readv(struct task *t, const long a[6])
{
	cleanup_free struct iovec *iov = NULL;
	struct file *f = io_file(t, (int)a[0], O_RDONLY);
	long total = get_iov(t, (uint64_t)a[1], a[2], &iov);

	if (!f)
		return -EBADF;
	if (total <= 0)
		return total;
	cleanup_free char *buf = malloc((size_t)total);
	if (!buf)
		return -ENOMEM;
	const long ra[6] = { f->host_fd, (long)buf, total };
	ssize_t n = unlocked_io(t, NULL, f, SYS_read, ra);
	if (n < 0)
		return io_error(t, n);
	size_t off = 0;
	for (long i = 0; off < (size_t)n; i++) {
		size_t c = MIN(iov[i].iov_len, (size_t)n - off);
		long r = copy_to_guest(t->mm, (uint64_t)iov[i].iov_base, buf + off, c);
		if (r)
			return off ? (long)off : r;
		off += c;
	}
	return n;
}

/* writev(2) gathers into one host write so a pipe sees it atomically. */
long sys_writev(struct task *t, const long a[6])
{
	cleanup_free struct iovec *iov = NULL;
	struct file *f = io_file(t, (int)a[0], O_WRONLY);
	long total = get_iov(t, (uint64_t)a[1], a[2], &iov);

	if (!f)
		return -EBADF;
	if (total < 0)
		return total;
	cleanup_free char *buf = malloc((size_t)total + 1);
	if (!buf)
		return -ENOMEM;
	size_t off = 0;
	for (long i = 0; off < (size_t)total; i++) {
		size_t c = MIN(iov[i].iov_len, (size_t)total - off);
		long r = copy_from_guest(t->mm, buf + off, (uint64_t)iov[i].iov_base, c);
		if (r)
			return r;
		off += c;
	}
	const long wa[6] = { f->host_fd, (long)buf, (long)off };
	ssize_t n = unlocked_io(t, NULL, f, SYS_write, wa);
	return n < 0 ? io_error(t, n) : n;
}

#define KERNEL_TERMIOS_SIZE 36	/* struct termios of <asm/termbits.h>, not glibc's */

/* ioctl(2): terminal requests are passed to a host tty; the rest is ENOTTY. */
long sys_ioctl(struct task *t, const long a[6])
{
	struct file *f = fd_lookup(t->files, (int)a[0]);
	unsigned long cmd = (unsigned long)a[1];
	uint64_t arg = (uint64_t)a[2];
	char buf[64];
	long r;

	if (!f)
		return -EBADF;
	switch (cmd) {
	case FIOCLEX:
	case FIONCLEX:
		t->files->fds[a[0]].cloexec = cmd == FIOCLEX;
		return 0;
	case FIONBIO: {
		int on, fl = fcntl(f->host_fd, F_GETFL);
		if ((r = copy_from_guest(t->mm, &on, arg, sizeof(on))))
			return r;
		return fcntl(f->host_fd, F_SETFL, on ? fl | O_NONBLOCK : fl & ~O_NONBLOCK) < 0 ? neg_errno() : 0;
	}
	}
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
		return ioctl(f->host_fd, cmd, buf) < 0 ? neg_errno() : 0;
	}
	return -ENOTTY;
}

long sys_dup(struct task *t, const long a[6])
{
	struct file *f = fd_lookup(t->files, (int)a[0]);

	return f ? fd_install(t->files, f, false, 0) : -EBADF;
}

/* dup3(2): "EINVAL oldfd was equal to newfd" (dup2 returns newfd instead). */
long sys_dup3(struct task *t, const long a[6])
{
	struct file *f = fd_lookup(t->files, (int)a[0]);

	if (a[2] & ~O_CLOEXEC)
		return -EINVAL;
	if (!f || a[1] < 0 || a[1] >= PVX_NR_OPEN)
		return -EBADF;
	if (a[0] == a[1])
		return -EINVAL;
	return fd_install_at(t->files, (int)a[1], f, a[2] & O_CLOEXEC);
}

long sys_dup2(struct task *t, const long a[6])
{
	const long b[6] = { a[0], a[1], 0 };

	if (a[0] == a[1])
		return fd_lookup(t->files, (int)a[0]) ? a[1] : -EBADF;
	return sys_dup3(t, b);
}

long sys_fcntl(struct task *t, const long a[6])
{
	struct file *f = fd_lookup(t->files, (int)a[0]);
	int fd = (int)a[0], cmd = (int)a[1];
	long r;

	if (!f)
		return -EBADF;
	switch (cmd) {
	case F_DUPFD:
	case F_DUPFD_CLOEXEC:
		if (a[2] < 0 || a[2] >= PVX_NR_OPEN)
			return -EINVAL;
		return fd_install(t->files, f, cmd == F_DUPFD_CLOEXEC, (int)a[2]);
	case F_GETFD:
		return t->files->fds[fd].cloexec ? FD_CLOEXEC : 0;
	case F_SETFD:
		t->files->fds[fd].cloexec = a[2] & FD_CLOEXEC;
		return 0;
	case F_GETFL:
		r = fcntl(f->host_fd, F_GETFL);
		return r < 0 ? neg_errno() : r;
	case F_SETFL:
		r = fcntl(f->host_fd, F_SETFL, (int)(a[2] & (O_APPEND | O_NONBLOCK | O_NOATIME | O_DIRECT)));
		if (r < 0)
			return neg_errno();
		f->flags = (f->flags & ~(O_APPEND | O_NONBLOCK)) | (int)(a[2] & (O_APPEND | O_NONBLOCK));
		return 0;
	}
	return -EINVAL;
}

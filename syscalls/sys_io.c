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
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>

#include "pvx/cred.h"
#include "pvx/guest_layout.h"
#include "pvx/kernel.h"
#include "sentry/platform/platform.h"
#include "syscalls/syscalls.h"

#define IO_CHUNK (1UL << 20)	/* bounce buffer bound: larger I/O is done in chunks */
#define IOV_MAX_GUEST 1024	/* UIO_MAXIOV */

/* write(2) "EPIPE ... the writing process will also receive a SIGPIPE signal". */
static long epipe(struct task *t, long r)
{
	struct sig_info info = { SI_KERNEL, 0, 0, 0 };

	if (r == -EPIPE)
		signal_queue(t, SIGPIPE, &info);
	return r;
}

/* A blocking read or write cut short to deliver a signal: restartable (SA_RESTART). */
long io_error(struct task *t, long r)
{
	return r == -EINTR ? -ERESTARTSYS : epipe(t, r);
}

struct file *io_file(struct task *t, int fd, int need)
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
 * before any data is consumed, as Linux's copy_to_user would on the first
 * byte: the sentry's host read of a pipe or socket takes the data, which
 * no failed copy could put back. A buffer just below a stack (a
 * MAP_GROWSDOWN mapping, which the sentry grows itself: the host mapping is
 * not one) grows it first, as the kernel's fault on its first byte would.
 */
static bool first_page_writable(struct task *t, uint64_t buf)
{
	const struct vma *v = vma_lookup(&t->mm->vmas, buf);

	if (!v && mm_grow_stack(t->mm, buf))
		v = vma_lookup(&t->mm->vmas, buf);
	return v && (v->prot & PROT_WRITE);
}

/*
 * vfs_read's and vfs_write's access_ok(buf, count), before anything else:
 * the range is below x86-64's TASK_SIZE_MAX, even for count 0 (the stub's
 * pages above the guest's part of it are the copy's to refuse, as an
 * unmapped page is).
 */
static bool user_range(uint64_t buf, size_t count)
{
	return buf <= PVX_TASK_SIZE_MAX && count <= PVX_TASK_SIZE_MAX - buf;
}

/*
 * A file whose read the sentry can undo by seeking back (a regular host
 * file or memfd): no check of the buffer first. Linux checks only that it
 * is a user address and copies what the file's read found: nothing at end
 * of file, so a read there into NULL or a read-only page is 0, not EFAULT.
 * read_chunk's copy then fails as copy_to_user would, and seeks back.
 */
static bool is_regular(struct file *f)
{
	struct stat st;

	return f->ops->stat(f, &st) == 0 && S_ISREG(st.st_mode);
}

static bool read_undoable(struct file *f)
{
	return (f->ops == &host_file_ops || f->ops == &memfd_file_ops) && is_regular(f);
}

/*
 * Zero-copy I/O: where the platform can run the host call in the guest's mm
 * (vmexec), the kernel moves the data straight between the file and guest
 * memory, with its own EFAULT semantics. PVX_COPY_IO=1 forces the copy path
 * (for the benchmark that compares them).
 */
static bool zero_copy(struct task *t)
{
	return t->proc->as->ops->zero_copy_io && !sandbox.copy_io;
}

/* The zero-copy read or write of the file's kind, with the guest's answer for an error. */
static long io_in_guest_mm(struct task *t, bool write, struct file *f, uint64_t ubuf, size_t count, off_t off,
			   bool positional)
{
	long r = f->ops->rw_in_guest_mm(t, f, write, ubuf, count, off, positional);

	return r < 0 ? io_error(t, r) : r;
}

/*
 * Linux reads and writes a regular file whole (up to MAX_RW_COUNT), and
 * programs count on it: LTP mmap21 reads an 8 MiB file back with one
 * read(). The sentry's bounce buffer stays IO_CHUNK, so I/O on a regular
 * file larger than that is several host calls; anything else (pipes,
 * sockets, terminals) gets one, and a short count, as it may on Linux.
 * A pending signal ends it early with what was done, as a short count.
 */
static bool more_io(struct task *t, struct file *f, size_t done, size_t count)
{
	return done < count && !signal_pending(t) && is_regular(f);
}

/* One host read of at most IO_CHUNK into the guest's ubuf; returns the bytes it got there or -errno. */
static long read_chunk(struct task *t, struct file *f, char *buf, uint64_t ubuf, size_t count, off_t off,
		       bool positional)
{
	if (!f->ops->read_consumes && !first_page_writable(t, ubuf) && !read_undoable(f))
		return -EFAULT;
	ssize_t n = f->ops->read(t, f, buf, count, off, positional);
	if (n < 0)
		return io_error(t, n);
	/*
	 * A buffer that runs into an unmapped page: Linux copies up to it and
	 * returns a short count, the file offset moving by what was copied.
	 */
	size_t copied = copy_to_guest_partial(t->mm, ubuf, buf, (size_t)n);
	if (copied < (size_t)n && !positional)
		(void)!file_seek(f, (off_t)copied - n, SEEK_CUR);
	return copied || !n ? (long)copied : -EFAULT;
}

static long do_read_once(struct task *t, int fd, uint64_t ubuf, size_t count, off_t off, bool positional);

/*
 * Passthrough's condition (seccomp_passthrough.md): t's fd table is held by
 * the threads of t's process alone, all of them, and none is traced.
 */
static bool pt_one_table(struct task *t)
{
	int holders = 0;

	if (t->proc->nr_threads == 1)
		return t->files->users == 1 && !t->tracer;
	for (struct task *o = task_next(NULL); o; o = task_next(o)) {
		if (o->proc != t->proc || !o->files)
			continue;
		if (o->files != t->files || o->tracer)
			return false;
		holders++;
	}
	return holders == t->files->users;
}

static long do_read(struct task *t, int fd, uint64_t ubuf, size_t count, off_t off, bool positional)
{
	long r = do_read_once(t, fd, ubuf, count, off, positional);

	if (r > 0)
		fd_pt_consider(t, fd, fd_lookup(t->files, fd), pt_one_table, false);	/* seccomp_passthrough.md */
	return r;
}

static long do_read_once(struct task *t, int fd, uint64_t ubuf, size_t count, off_t off, bool positional)
{
	struct file *f = io_file(t, fd, O_RDONLY);
	size_t done = 0;

	if (!f)
		return -EBADF;
	if (!user_range(ubuf, count))
		return -EFAULT;
	if (positional && off < 0)
		return -EINVAL;
	if (count == 0)
		return 0;
	if (zero_copy(t) && f->ops->rw_in_guest_mm) {
		(void)mm_grow_stack(t->mm, ubuf);	/* see first_page_writable */
		return io_in_guest_mm(t, false, f, ubuf, count, off, positional);
	}
	cleanup_free char *buf = malloc(MIN(count, IO_CHUNK));
	if (!buf)
		return -ENOMEM;
	do {
		size_t chunk = MIN(count - done, IO_CHUNK);
		long n = read_chunk(t, f, buf, ubuf + done, chunk, off + (off_t)done, positional);
		if (n < 0)
			return done ? (long)done : n;
		done += (size_t)n;
		if ((size_t)n < chunk)
			break;
	} while (more_io(t, f, done, count));
	return (long)done;
}

/*
 * RLIMIT_FSIZE for a write of *count bytes to a regular file at off
 * (positional) or at its position (its end with O_APPEND): EFBIG and
 * SIGXFSZ at or past the limit, a shorter count below it.
 */
static long write_limit(struct task *t, struct file *f, off_t off, bool positional, size_t *count)
{
	struct stat st;
	uint64_t n = *count;

	if (!*count || t->proc->rlim[RLIMIT_FSIZE].rlim_cur == RLIM_INFINITY || f->ops->stat(f, &st) ||
	    !S_ISREG(st.st_mode))
		return 0;
	if (!positional)
		off = (f->flags & O_APPEND) ? st.st_size : file_seek(f, 0, SEEK_CUR);
	if (off < 0)
		return 0;
	long r = cred_fsize_check(t, (uint64_t)off, &n);
	*count = (size_t)n;
	return r;
}

static long do_write(struct task *t, int fd, uint64_t ubuf, size_t count, off_t off, bool positional)
{
	struct file *f = io_file(t, fd, O_WRONLY);
	size_t done = 0;

	if (!f)
		return -EBADF;
	if (!user_range(ubuf, count))
		return -EFAULT;
	if (positional && off < 0)
		return -EINVAL;
	long lim = write_limit(t, f, off, positional, &count);
	if (lim < 0)
		return lim;
	if (zero_copy(t) && f->ops->rw_in_guest_mm) {
		(void)mm_grow_stack(t->mm, ubuf);	/* see first_page_writable */
		return io_in_guest_mm(t, true, f, ubuf, count, off, positional);
	}
	cleanup_free char *buf = malloc(MIN(count, IO_CHUNK) + 1);
	if (!buf)
		return -ENOMEM;
	while (done < count || count == 0) {
		size_t chunk = MIN(count - done, IO_CHUNK);
		long r = copy_from_guest(t->mm, buf, ubuf + done, chunk);
		if (r) {
			/*
			 * A regular file takes the buffer's head up to its first
			 * page that faults, as generic_perform_write copies it; a
			 * pipe, a socket, a device: EFAULT (or what came before).
			 */
			size_t head = r == -EFAULT && is_regular(f) ? copy_from_guest_partial(t->mm, buf, ubuf + done, chunk) : 0;
			if (!head)
				return done ? (long)done : r;
			chunk = head;
			count = done + head;	/* the last chunk */
		}
		ssize_t n = f->ops->write(t, f, buf, chunk, off + (off_t)done, positional);
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
	long r = do_write(t, (int)a[0], (uint64_t)a[1], (size_t)a[2], 0, false);

	if (r > 0)
		fd_pt_consider(t, (int)a[0], fd_lookup(t->files, (int)a[0]), pt_one_table, true);	/* a pipe's */
	return r;
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
long get_iov(struct task *t, uint64_t uiov, long cnt, struct iovec **out)
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
	return (long)total;
}

#define IOV_BATCH 64	/* guest ranges moved in one host call by iov_move's fast path */

/*
 * iov_move's fast path: the guest ranges of the window [pos, pos+len) in
 * one host call when there are at most IOV_BATCH of them and all of it
 * moves. False sends the caller range by range, for the exact short count
 * at a bad page (moving the same bytes again is harmless).
 */
static bool iov_move_one_call(struct task *t, const struct iovec *iov, size_t n, size_t pos, char *buf, size_t len,
			      bool to_guest)
{
	struct iovec rv[IOV_BATCH];
	size_t k = 0, want = 0;

	for (size_t i = 0; i < n && want < len; i++) {
		if (pos >= iov[i].iov_len) {
			pos -= iov[i].iov_len;
			continue;
		}
		if (k == IOV_BATCH)
			return false;
		size_t c = MIN(iov[i].iov_len - pos, len - want);
		rv[k++] = (struct iovec){ (char *)iov[i].iov_base + pos, c };
		want += c;
		pos = 0;
	}
	return want == len && !copy_guest_vec(t->mm, rv, k, buf, len, to_guest);
}

/* See syscalls.h. */
size_t iov_move(struct task *t, const struct iovec *iov, size_t n, size_t pos, char *buf, size_t len, bool to_guest)
{
	size_t done = 0;

	if (len && iov_move_one_call(t, iov, n, pos, buf, len, to_guest))
		return len;

	for (size_t i = 0; i < n && done < len; i++) {
		if (pos >= iov[i].iov_len) {
			pos -= iov[i].iov_len;
			continue;
		}
		size_t c = MIN(iov[i].iov_len - pos, len - done);
		uint64_t at = (uint64_t)iov[i].iov_base + pos;
		if (to_guest) {
			size_t k = copy_to_guest_partial(t->mm, at, buf + done, c);
			done += k;
			if (k < c)
				break;
		} else {
			if (copy_from_guest(t->mm, buf + done, at, c))
				break;
			done += c;
		}
		pos = 0;
	}
	return done;
}

#define USER_PTR_MAX 0x7fffffffefffUL	/* x86-64's valid_user_address() bound: TASK_SIZE_MAX - 1 */

/*
 * import_iovec's access_ok on every iovec: one that reaches past user
 * space makes the whole call EFAULT before any I/O, where one at an
 * unmapped user address only ends the transfer there (lib/iov_iter.c).
 */
static bool iov_access_ok(const struct iovec *iov, size_t cnt)
{
	for (size_t i = 0; i < cnt; i++) {
		uint64_t base = (uint64_t)iov[i].iov_base, end = base + iov[i].iov_len;
		if (end < base || end > USER_PTR_MAX)
			return false;
	}
	return true;
}

/*
 * A positional call on a file without a position (a pipe, a socket):
 * ESPIPE, before the access mode is looked at (do_preadv tests FMODE_PREAD
 * first: pwritev2 on a pipe's read end is ESPIPE, not EBADF).
 */
static bool no_position(struct task *t, int fd, off_t off)
{
	struct file *f = fd_lookup(t->files, fd);

	return off != -1 && f && !(f->flags & O_PATH) && file_seek(f, 0, SEEK_CUR) == -ESPIPE;
}

/*
 * The reading half of io_rw_iov: scatter reads of up to IO_CHUNK into the
 * guest's iovecs, each the kind's read of the iovecs gathered into one
 * buffer (off -1: the file position).
 */
static long readv_file(struct task *t, struct file *f, const struct iovec *iov, size_t cnt, long total, off_t off,
		       int flags)
{
	size_t done = 0;
	cleanup_free char *buf = malloc(MIN((size_t)total, IO_CHUNK) + 1);
	if (!buf)
		return -ENOMEM;
	do {
		size_t chunk = MIN((size_t)total - done, IO_CHUNK);
		ssize_t n = file_rw_vec(t, f, false, buf, chunk, off == -1 ? -1 : off + (off_t)done, flags);
		if (n < 0)
			return done ? (long)done : io_error(t, n);
		size_t copied = iov_move(t, iov, cnt, done, buf, (size_t)n, true);
		/* As do_read: a short copy moves the file position by what was copied. */
		if (copied < (size_t)n && off == -1)
			(void)!file_seek(f, (off_t)copied - n, SEEK_CUR);
		if (!copied && n)
			return done ? (long)done : -EFAULT;
		done += copied;
		if (copied < chunk)
			break;
	} while (more_io(t, f, done, (size_t)total));
	return (long)done;
}

/*
 * writev, pwritev, pwritev2: gather into one write of the kind per
 * IO_CHUNK, so a pipe sees up to that atomically; only a regular file gets
 * more than one.
 */
static long writev_file(struct task *t, struct file *f, const struct iovec *iov, size_t cnt, long total, off_t off,
			int flags)
{
	size_t done = 0;
	size_t want = (size_t)total;
	long lim = write_limit(t, f, off, off != -1, &want);
	if (lim < 0)
		return lim;
	total = (long)want;
	cleanup_free char *buf = malloc(MIN((size_t)total, IO_CHUNK) + 1);
	if (!buf)
		return -ENOMEM;
	do {
		size_t chunk = MIN((size_t)total - done, IO_CHUNK);
		if (iov_move(t, iov, cnt, done, buf, chunk, false) < chunk)
			return done ? (long)done : -EFAULT;
		ssize_t n = file_rw_vec(t, f, true, buf, chunk, off == -1 ? -1 : off + (off_t)done, flags);
		if (n < 0)
			return done ? (long)done : io_error(t, n);
		done += (size_t)n;
		if ((size_t)n < chunk)
			break;
	} while (more_io(t, f, done, (size_t)total));
	return (long)done;
}

/* See syscalls.h. */
long io_rw_iov(struct task *t, struct file *f, bool write, const struct iovec *iov, size_t cnt, size_t total,
	       off_t off, int rwf)
{
	return write ? writev_file(t, f, iov, cnt, (long)total, off, rwf)
		     : readv_file(t, f, iov, cnt, (long)total, off, rwf);
}

/*
 * readv, writev and their p- and -2 forms: the fd, the guest's iovecs, then
 * io_rw_iov (off -1: the file position).
 */
static long do_rwv(struct task *t, int fd, uint64_t uiov, long cnt, off_t off, int flags, bool write)
{
	cleanup_free struct iovec *iov = NULL;
	struct file *f = io_file(t, fd, write ? O_WRONLY : O_RDONLY);
	long total = get_iov(t, uiov, cnt, &iov);

	/*
	 * A kind with rw_vec makes the host's positional call, which is
	 * ESPIPE itself on a file without a position, before any I/O: the
	 * position is asked about (an lseek) only when the call fails here
	 * or there, for ESPIPE's precedence over the other errors.
	 */
	if (!f || total < 0 || !f->ops->rw_vec) {
		if (no_position(t, fd, off))
			return -ESPIPE;
		if (!f)
			return -EBADF;
		if (total < 0)
			return total;
	}
	long r = iov_access_ok(iov, (size_t)cnt) ? io_rw_iov(t, f, write, iov, (size_t)cnt, (size_t)total, off, flags)
						 : -EFAULT;
	return r < 0 && r != -ESPIPE && no_position(t, fd, off) ? -ESPIPE : r;
}

long sys_readv(struct task *t, const long a[6])
{
	return do_rwv(t, (int)a[0], (uint64_t)a[1], a[2], -1, 0, false);
}

long sys_writev(struct task *t, const long a[6])
{
	return do_rwv(t, (int)a[0], (uint64_t)a[1], a[2], -1, 0, true);
}

/*
 * preadv(2) and pwritev(2) take the offset as (pos_l, pos_h); on x86-64
 * pos_l holds all of it. "EINVAL offset ... is negative", before the fd
 * is looked at.
 */
long sys_preadv(struct task *t, const long a[6])
{
	return a[3] < 0 ? -EINVAL : do_rwv(t, (int)a[0], (uint64_t)a[1], a[2], (off_t)a[3], 0, false);
}

long sys_pwritev(struct task *t, const long a[6])
{
	return a[3] < 0 ? -EINVAL : do_rwv(t, (int)a[0], (uint64_t)a[1], a[2], (off_t)a[3], 0, true);
}

/*
 * preadv2(2): "If offset is -1, then the current file offset is used and
 * updated"; the RWF_* flags (HIPRI, DSYNC, SYNC, NOWAIT, APPEND, ...) go to
 * the host, which answers EOPNOTSUPP for ones it does not know.
 */
long sys_preadv2(struct task *t, const long a[6])
{
	if (a[3] < -1)
		return -EINVAL;
	return do_rwv(t, (int)a[0], (uint64_t)a[1], a[2], (off_t)a[3], (int)a[5], false);
}

long sys_pwritev2(struct task *t, const long a[6])
{
	if (a[3] < -1)
		return -EINVAL;
	return do_rwv(t, (int)a[0], (uint64_t)a[1], a[2], (off_t)a[3], (int)a[5], true);
}

/*
 * ioctl(2): FIOCLEX and FIONCLEX are the fd table's; the rest is the
 * file's (pvx/file.h). An O_PATH fd is EBADF for all (fdget finds none).
 */
long sys_ioctl(struct task *t, const long a[6])
{
	struct file *f = fd_lookup(t->files, (int)a[0]);
	unsigned long cmd = (unsigned long)a[1];

	if (!f || (f->flags & O_PATH))
		return -EBADF;
	if (cmd == FIOCLEX || cmd == FIONCLEX) {
		t->files->fds[a[0]].cloexec = cmd == FIOCLEX;
		return 0;
	}
	return file_ioctl(t, f, cmd, (uint64_t)a[2]);
}

long sys_dup(struct task *t, const long a[6])
{
	struct file *f = fd_lookup(t->files, (int)a[0]);

	return f ? fd_install(t->files, f, false, 0) : -EBADF;
}

/*
 * dup3(2): "EINVAL oldfd was equal to newfd" (dup2 returns newfd instead),
 * checked first as ksys_dup3 does, whether or not the fd is open.
 */
long sys_dup3(struct task *t, const long a[6])
{
	struct file *f = fd_lookup(t->files, (int)a[0]);

	if ((a[2] & ~O_CLOEXEC) || (int)a[0] == (int)a[1])
		return -EINVAL;
	if (!f || (int)a[1] < 0 || (unsigned)a[1] >= MIN(t->files->nofile, PVX_NR_OPEN))
		return -EBADF;	/* dup2(2): "newfd is out of the allowed range" (RLIMIT_NOFILE) */
	return fd_install_at(t->files, (int)a[1], f, a[2] & O_CLOEXEC);
}

long sys_dup2(struct task *t, const long a[6])
{
	const long b[6] = { a[0], a[1], 0 };

	if (a[0] == a[1])
		return fd_lookup(t->files, (int)a[0]) ? a[1] : -EBADF;
	return sys_dup3(t, b);
}

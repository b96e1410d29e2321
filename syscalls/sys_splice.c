// SPDX-License-Identifier: GPL-2.0
/*
 * splice, tee, vmsplice and fallocate: the host's calls on the files' host
 * fds, so pipes, files and their errors are the host kernel's. A kind pvx
 * answers itself has an eventfd as its host fd, which has no splice
 * operations: EINVAL (EBADF for vmsplice), as Linux says for such files.
 * Offsets are copied in and out through mm/, and vmsplice moves guest memory
 * through sentry buffers: the host never sees a guest address.
 */
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>

#include "pvx/kernel.h"
#include "pvx/cred.h"
#include "syscalls/syscalls.h"

#define SPLICE_F_ALL_ (SPLICE_F_MOVE | SPLICE_F_NONBLOCK | SPLICE_F_MORE | SPLICE_F_GIFT)
#define VMSPLICE_MAX (1UL << 20)	/* bytes per call: a pipe takes at most its size, partial counts are valid */

/* An offset argument: NULL, or the guest's loff_t copied into *off (given back as hp). */
static long offset_in(struct task *t, uint64_t uoff, loff_t *off, loff_t **hp)
{
	*hp = NULL;
	if (!uoff)
		return 0;
	*hp = off;
	return copy_from_guest(t->mm, off, uoff, sizeof(*off));
}

/*
 * splice(2): "If fd_in refers to a pipe, then off_in must be NULL" (the
 * host's ESPIPE); the offsets given are updated and the file positions
 * left alone. Waits on a pipe drop the lock and are restartable.
 */
long sys_splice(struct task *t, const long a[6])
{
	loff_t oin, oout, *pin, *pout;
	unsigned flags = (unsigned)a[5];
	long r;

	if (!a[4])
		return 0;
	if (flags & ~SPLICE_F_ALL_)
		return -EINVAL;
	struct file *in = fd_lookup(t->files, (int)a[0]), *out = fd_lookup(t->files, (int)a[2]);
	if (!in || !out)
		return -EBADF;
	if ((r = offset_in(t, (uint64_t)a[3], &oout, &pout)) || (r = offset_in(t, (uint64_t)a[1], &oin, &pin)))
		return r;
	long hin = file_object(in, FILE_SPLICE), hout = file_object(out, FILE_SPLICE);
	if (hin < 0 || hout < 0)
		return hin < 0 ? hin : hout;
	const long h[6] = { hin, (long)pin, hout, (long)pout, a[4], (long)flags };
	r = io_block(t, NULL, in, out, SYS_splice, h);
	if (r < 0)
		return io_error(t, r);
	if ((pin && copy_to_guest(t->mm, (uint64_t)a[1], pin, sizeof(*pin))) ||
	    (pout && copy_to_guest(t->mm, (uint64_t)a[3], pout, sizeof(*pout))))
		return -EFAULT;
	return r;
}

/* tee(2): pipe to pipe without consuming; the host checks both are pipes. */
long sys_tee(struct task *t, const long a[6])
{
	unsigned flags = (unsigned)a[3];

	if (flags & ~SPLICE_F_ALL_)
		return -EINVAL;
	if (!a[2])
		return 0;
	struct file *in = fd_lookup(t->files, (int)a[0]), *out = fd_lookup(t->files, (int)a[1]);
	if (!in || !out)
		return -EBADF;
	long hin = file_object(in, FILE_SPLICE), hout = file_object(out, FILE_SPLICE);
	if (hin < 0 || hout < 0)
		return hin < 0 ? hin : hout;
	const long h[6] = { hin, hout, a[2], (long)flags };
	long r = io_block(t, NULL, in, out, SYS_tee, h);
	return r < 0 ? io_error(t, r) : r;
}

/*
 * User memory into a pipe: the guest's bytes are gathered into pages of
 * their own, mapped for this call only. The host's vmsplice may keep
 * references to them in the pipe (kernels before 6.5 do not copy), so they
 * are never reused: unmapped after, they live until the pipe is read.
 */
static long vmsplice_to_pipe(struct task *t, struct file *f, int hfd, const struct iovec *iov, long cnt, size_t len,
			     unsigned flags)
{
	len = MIN(len, VMSPLICE_MAX);
	char *buf = mmap(NULL, PAGE_ALIGN_UP(len), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED)
		return -ENOMEM;
	size_t got = iov_move(t, iov, (size_t)cnt, 0, buf, len, false);	/* up to the first bad iovec */
	long r = -EFAULT;
	if (got) {
		struct iovec h = { buf, got };
		const long a[6] = { hfd, (long)&h, 1, (long)(flags & ~SPLICE_F_GIFT) };
		r = io_block(t, NULL, NULL, f, SYS_vmsplice, a);
	}
	munmap(buf, PAGE_ALIGN_UP(len));
	return r;
}

/* A pipe's data into user memory: read into the sentry, scattered into the guest's iovecs. */
static long vmsplice_to_user(struct task *t, struct file *f, int hfd, const struct iovec *iov, long cnt, size_t len,
			     unsigned flags)
{
	len = MIN(len, VMSPLICE_MAX);
	cleanup_free char *buf = malloc(len);
	if (!buf)
		return -ENOMEM;
	struct iovec h = { buf, len };
	const long a[6] = { hfd, (long)&h, 1, (long)flags };
	long r = io_block(t, NULL, f, NULL, SYS_vmsplice, a);
	if (r <= 0)
		return r;
	size_t put = iov_move(t, iov, (size_t)cnt, 0, buf, (size_t)r, true);	/* up to the first unwritable page */
	return put == (size_t)r ? r : put ? (long)put : -EFAULT;
}

/*
 * vmsplice(2): the direction is the fd's (written: into the pipe, read: out
 * of it); "fd must refer to a pipe" is the host's EBADF.
 */
long sys_vmsplice(struct task *t, const long a[6])
{
	unsigned flags = (unsigned)a[3];
	struct iovec *iov = NULL;

	if (flags & ~SPLICE_F_ALL_)
		return -EINVAL;
	struct file *f = fd_lookup(t->files, (int)a[0]);
	if (!f || (f->flags & O_PATH))
		return -EBADF;
	long hfd = file_object(f, FILE_SPLICE);
	if (hfd < 0)
		return -EBADF;	/* "fd ... doesn't refer to a pipe" */
	long len = get_iov(t, (uint64_t)a[1], a[2], &iov);
	if (len < 0)
		return len;
	bool to_pipe = (f->flags & O_ACCMODE) != O_RDONLY;
	long r = !len ? 0
		 : to_pipe ? vmsplice_to_pipe(t, f, (int)hfd, iov, a[2], (size_t)len, flags)
			   : vmsplice_to_user(t, f, (int)hfd, iov, a[2], (size_t)len, flags);
	free(iov);
	return r < 0 ? io_error(t, r) : r;
}

/* fallocate(2) on the host fd: modes, EBADF for a read-only fd, ESPIPE, EOPNOTSUPP are the host's. */
long sys_fallocate(struct task *t, const long a[6])
{
	struct file *f = fd_lookup(t->files, (int)a[0]);

	if (!f || (f->flags & O_PATH))
		return -EBADF;
	long hfd = file_object(f, FILE_FALLOCATE);
	if (hfd < 0)
		return hfd;
	/* growing past RLIMIT_FSIZE (inode_newsize_ok()), unless FALLOC_FL_KEEP_SIZE */
	struct stat st;
	int64_t end = (int64_t)((uint64_t)a[2] + (uint64_t)a[3]);	/* the host's EFBIG/EINVAL for the rest */
	if (!((int)a[1] & FALLOC_FL_KEEP_SIZE) && a[2] >= 0 && a[3] > 0 && end > 0 && !fstat((int)hfd, &st) &&
	    end > st.st_size) {
		long r = cred_fsize_check(t, (uint64_t)end - 1, NULL);
		if (r < 0)
			return r;
	}
	return fallocate((int)hfd, (int)a[1], (off_t)a[2], (off_t)a[3]) < 0 ? neg_errno() : 0;
}

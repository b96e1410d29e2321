// SPDX-License-Identifier: GPL-2.0
/*
 * The pipe kind: pipe(2)'s ends and FIFOs opened by path, host pipes the
 * sentry owns. Data, readiness and O_NONBLOCK are the host pipe's; what is
 * the pipe's own (its size, FIONREAD, no seek or mmap) is answered here.
 */
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <sys/stat.h>

#include "pvx/file.h"
#include "pvx/path.h"
#include "sentry/fs/host_file.h"

#define PIPE_PAGE 4096UL
#define PIPE_SIZE_MAX_DEFAULT (1UL << 20)	/* fs.pipe-max-size's default */

/* See pvx/file.h: fs.pipe-max-size of the host, read once. */
unsigned long pipe_max_size(void)
{
	static unsigned long max;
	unsigned long v;

	if (max)
		return max;
	max = PIPE_SIZE_MAX_DEFAULT;
	FILE *fp = fopen("/proc/sys/fs/pipe-max-size", "re");
	if (fp) {
		if (fscanf(fp, "%lu", &v) == 1 && v >= PIPE_PAGE)
			max = v;
		fclose(fp);
	}
	return max;
}

/* round_pipe_size(): a page at least, else the next power of two; 0 past 2^31 (EINVAL). */
static unsigned long round_pipe_size(unsigned long size)
{
	unsigned long r = PIPE_PAGE;

	if (size > (1UL << 31))
		return 0;
	while (r < size)
		r <<= 1;
	return r;
}

/*
 * F_SETPIPE_SZ: "attempts to set the pipe capacity to at least arg bytes
 * ... EPERM An unprivileged user attempted to set the pipe capacity above
 * the limit in /proc/sys/fs/pipe-max-size"; "EBUSY ... less than the
 * amount of buffer space currently used". The guest has no capabilities
 * (capget), so the limit holds even when the sentry itself could pass it
 * (CAP_SYS_RESOURCE as root): pipe buffers are host kernel memory outside
 * --memory. Rounding, EBUSY and the change are the host pipe's.
 */
static long pipe_set_size(struct file *f, unsigned int arg)
{
	unsigned long size = round_pipe_size(arg);
	long cur = fcntl(f->host_fd, F_GETPIPE_SZ);

	if (!size)
		return -EINVAL;
	if (cur < 0)
		return neg_errno();
	if (size > (unsigned long)cur && size > pipe_max_size())
		return -EPERM;
	long r = fcntl(f->host_fd, F_SETPIPE_SZ, (int)size);
	return r < 0 ? neg_errno() : r;
}

/* fcntl(2): F_GETPIPE_SZ and F_SETPIPE_SZ are a pipe's; seals are not (EINVAL). */
static long pipe_fcntl(struct task *t __unused, struct file *f, int cmd, unsigned long arg)
{
	if (cmd == F_SETPIPE_SZ)
		return pipe_set_size(f, (unsigned int)arg);
	if (cmd == F_GETPIPE_SZ) {
		long r = fcntl(f->host_fd, F_GETPIPE_SZ);
		return r < 0 ? neg_errno() : r;
	}
	return file_fcntl_none(cmd);
}

/* ioctl(2): pipe_ioctl has FIONREAD, "the number of bytes in the pipe", on either end; the rest is ENOTTY. */
static long pipe_ioctl(struct task *t, struct file *f, unsigned long cmd, uint64_t arg)
{
	return cmd == FIONREAD ? host_fionread(t, f, arg) : -ENOTTY;
}

/*
 * pipe_write's kill_fasync(&pipe->fasync_readers, SIGIO, POLL_IN): the
 * read ends of this pipe with O_ASYNC signal their owners. Only writes
 * made in the sandbox are seen (a host process's write to a FIFO is not).
 */
static void pipe_wrote(struct file *f)
{
	struct stat st, rst;

	if (!file_async_files || fstat(f->host_fd, &st) < 0)
		return;
	for (struct file *r = file_next(NULL); r; r = file_next(r)) {
		if (r->ops != &pipe_file_ops || !(r->flags & O_ASYNC) || (r->flags & O_ACCMODE) == O_WRONLY ||
		    fstat(r->host_fd, &rst) < 0 || rst.st_ino != st.st_ino || rst.st_dev != st.st_dev)
			continue;
		fs_kernel->sigio(r, r->async_fd, POLL_IN, POLLIN | POLLRDNORM);
	}
}

static long pipe_write(struct task *t, struct file *f, const void *buf, size_t count, off_t off, bool positional)
{
	long r = host_write(t, f, buf, count, off, positional);

	if (r > 0)
		pipe_wrote(f);
	return r;
}

static long pipe_rw_in_guest_mm(struct task *t, struct file *f, bool write, uint64_t ubuf, size_t count, off_t off,
				bool positional)
{
	long r = host_rw_in_guest_mm(t, f, write, ubuf, count, off, positional);

	if (r > 0 && write)
		pipe_wrote(f);
	return r;
}

static long pipe_rw_vec(struct task *t, struct file *f, bool write, void *buf, size_t count, off_t off, int rwf)
{
	long r = host_rw_vec(t, f, write, buf, count, off, rwf);

	if (r > 0 && write)
		pipe_wrote(f);
	return r;
}

/* No seek (ESPIPE), mmap (ENODEV) or getdents (ENOTDIR): the helpers' answers for a NULL op. */
const struct file_ops pipe_file_ops = {
	.read = host_read,
	.write = pipe_write,
	.rw_in_guest_mm = pipe_rw_in_guest_mm,
	.release = host_release,
	.stat = host_stat,
	.poll = host_poll,
	.ioctl = pipe_ioctl,
	.rw_vec = pipe_rw_vec,
	.fcntl = pipe_fcntl,
	.getfl = host_getfl,
	.setfl = host_setfl,
	.object = host_object,
};

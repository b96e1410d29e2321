// SPDX-License-Identifier: GPL-2.0
/*
 * Opens that may wait. fifo(7): "opening the FIFO blocks until the other
 * end is opened also"; a special file's driver may wait in open too (a
 * serial line for its carrier). Such a wait belongs to the guest task that
 * opens, never to the sentry: it runs with the sentry lock dropped through
 * task_block, as a pipe read does, so every other task goes on, and a
 * signal ends it with -ERESTARTSYS, as fifo_open()'s wait_for_partner()
 * does (EINTR, or a restart under SA_RESTART).
 *
 * Nothing here may wait with the lock held, whatever the guest does to the
 * path meanwhile (a regular file swapped for a FIFO by another task): only
 * an object pinned by an fd (path.c's O_PATH lookup, checked by
 * policy_reopen) is opened, and a FIFO's open is the one that may wait.
 */
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "pvx/open_block.h"
#include "pvx/path.h"

/* What F_SETFL can change: the rest of the open flags stay as they are. */
#define SETFL_BITS (O_APPEND | O_NONBLOCK | O_NOATIME | O_DIRECT | O_ASYNC)

/* An fd opened with O_NONBLOCK the guest did not ask for: take it away again. */
static long nonblock_off(long fd, int flags)
{
	if (fd < 0 || (flags & O_NONBLOCK))
		return fd;
	int fl = fcntl((int)fd, F_GETFL);
	if (fl < 0 || fcntl((int)fd, F_SETFL, (fl & SETFL_BITS) & ~O_NONBLOCK) < 0) {
		long r = neg_errno();
		close((int)fd);
		return r;
	}
	return fd;
}

/* Would a blocking open of this object with flags wait for something? */
static bool may_wait(const struct stat *st, int flags)
{
	if (flags & (O_NONBLOCK | O_PATH))
		return false;
	/* fifo(7): "Under Linux, opening a FIFO for read and write will succeed" at once. */
	if (S_ISFIFO(st->st_mode))
		return (flags & O_ACCMODE) != O_RDWR;
	return S_ISCHR(st->st_mode) || S_ISBLK(st->st_mode);
}

/*
 * The open of proc (a /proc/self/fd magic link) that may wait: with the lock
 * dropped and interruptible. A FIFO writer first tries without waiting: a
 * reader is there, and Linux takes it even with a signal pending. A reader
 * cannot tell whether a writer is there without becoming a reader, so with
 * a signal already pending it is cut short at once (Linux would first
 * look for a writer).
 */
static long open_waiting(struct task *t, const char *proc, const struct stat *st, int flags)
{
	bool fifo = S_ISFIFO(st->st_mode);

	if (fifo && (flags & O_ACCMODE) == O_WRONLY) {
		long fd = open(proc, flags | O_NONBLOCK | O_CLOEXEC, 0);
		if (fd >= 0 || errno != ENXIO)
			return fd < 0 ? neg_errno() : nonblock_off(fd, flags);
	}
	const long a[6] = { AT_FDCWD, (long)proc, flags | O_CLOEXEC, 0 };
	/* A device's open does not wait in practice: made even with a signal pending, cut short by a new one. */
	long r = fs_kernel->block(t, NULL, SYS_openat, a, !fifo);
	return r == -EINTR ? -ERESTARTSYS : r;
}

long open_reopen(struct task *t, int fd, int flags)
{
	char proc[64];
	struct stat st;

	flags &= ~O_NOFOLLOW;	/* the magic link is followed by design */
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	if (fstat(fd, &st) < 0)
		return neg_errno();
	if (may_wait(&st, flags))
		return open_waiting(t, proc, &st, flags);
	long r = open(proc, flags | O_CLOEXEC, 0);
	return r < 0 ? neg_errno() : r;
}

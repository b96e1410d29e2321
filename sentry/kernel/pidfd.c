// SPDX-License-Identifier: GPL-2.0
/*
 * pidfds (kernel/pid.c, fs/pidfs.c): a file kind of pvx's own that names a
 * process by its struct process, not by its pid, so a pidfd whose process
 * was reaped says ESRCH even after the pid went to another process. Every
 * pidfd is on one list under the sentry lock; task_exit and task_free tell
 * it when a process exits and when it is freed.
 *
 * Readiness: the host fd is the read end of a pipe the kind owns. A byte
 * goes in when the process exits (EPOLLIN, pidfd_poll's "exit_state"); the
 * write end is closed when it is reaped (EPOLLIN|EPOLLHUP, "!task"). A
 * pipe's read end is never writable, as a pidfd is never.
 */
#include <fcntl.h>
#include <stdio.h>
#include <poll.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pvx/kernel.h"
#include "pvx/path.h"
#include "pvx/pidfd.h"

struct pidfd {
	struct process *proc;	/* NULL once reaped */
	int pid;
	int wfd;		/* the pipe's write end; -1 once reaped */
	bool exited;
	struct pidfd *next;
};

static struct pidfd *all;	/* every pidfd, under the sentry lock */

static void mark_exited(struct pidfd *s)
{
	if (s->exited)
		return;
	s->exited = true;
	(void)!write(s->wfd, "x", 1);
}

static void mark_reaped(struct pidfd *s)
{
	mark_exited(s);
	s->proc = NULL;
	if (s->wfd >= 0)
		close(s->wfd);
	s->wfd = -1;
}

struct file *pidfd_new(struct process *p, int flags, long *err)
{
	struct pidfd *s = calloc(1, sizeof(*s));
	struct file *f = NULL;
	int fds[2] = { -1, -1 };

	if (!s)
		*err = -ENOMEM;
	else if (pipe2(fds, O_CLOEXEC | O_NONBLOCK) < 0)
		*err = neg_errno();
	else if (!(f = file_new(fds[0], O_RDWR | (flags & O_NONBLOCK), &pidfd_file_ops)))
		*err = -ENOMEM;
	if (!f) {
		free(s);
		if (fds[0] >= 0)
			close(fds[0]), close(fds[1]);
		return NULL;
	}
	*s = (struct pidfd){ p, p->pid, fds[1], false, all };
	all = s;
	f->priv = s;
	if (p->leader->state == TASK_ZOMBIE)
		mark_exited(s);
	return f;
}

long pidfd_process(struct file *f, bool live, struct process **out)
{
	*out = NULL;
	if (!f || f->ops != &pidfd_file_ops)
		return -EBADF;
	struct pidfd *s = f->priv;
	if (!s->proc || (live && s->exited))
		return -ESRCH;
	*out = s->proc;
	return 0;
}

int pidfd_pid(struct file *f)
{
	return f && f->ops == &pidfd_file_ops ? ((struct pidfd *)f->priv)->pid : 0;
}

void pidfd_exited(struct process *p)
{
	for (struct pidfd *s = all; s; s = s->next)
		if (s->proc == p)
			mark_exited(s);
}

void pidfd_reaped(struct process *p)
{
	for (struct pidfd *s = all; s; s = s->next)
		if (s->proc == p)
			mark_reaped(s);
}

/* read(2) and write(2): a pidfd has neither (EINVAL, as a file without read_iter/write_iter). */
static long pfd_read(struct task *t, struct file *f, void *buf, size_t count, off_t off, bool positional)
{
	(void)t, (void)f, (void)buf, (void)count, (void)off, (void)positional;
	return -EINVAL;
}

static long pfd_write(struct task *t, struct file *f, const void *buf, size_t count, off_t off, bool positional)
{
	(void)t, (void)f, (void)buf, (void)count, (void)off, (void)positional;
	return -EINVAL;
}

static void pfd_release(struct file *f)
{
	struct pidfd *s = f->priv;

	for (struct pidfd **p = &all; *p; p = &(*p)->next)
		if (*p == s) {
			*p = s->next;
			break;
		}
	if (s->wfd >= 0)
		close(s->wfd);
	close(f->host_fd);
	free(s);
}

/* fstat: a pidfs inode is a read-only regular file of no size; its ino a per-process number, here the pid. */
static long pfd_stat(struct file *f, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_mode = S_IFREG | 0600;
	st->st_nlink = 1;
	st->st_ino = (ino_t)((struct pidfd *)f->priv)->pid;
	st->st_blksize = 4096;
	return 0;
}

static long pfd_seek(struct file *f, off_t off, int whence)
{
	(void)f, (void)off, (void)whence;
	return -ESPIPE;
}

static short pfd_poll(struct file *f, short events)
{
	const struct pidfd *s = f->priv;
	short ev = (short)(s->exited ? POLLIN | POLLRDNORM : 0) | (short)(s->proc ? 0 : POLLHUP);

	return (short)(ev & (events | POLLHUP));
}

static long pfd_mmap(struct file *f)
{
	(void)f;
	return -ENODEV;
}

const struct file_ops pidfd_file_ops = {
	.read = pfd_read,
	.write = pfd_write,
	.release = pfd_release,
	.stat = pfd_stat,
	.seek = pfd_seek,
	.poll = pfd_poll,
	.mmap = pfd_mmap,
};

/* See pvx/pidfd.h: a /proc/PID directory is a host directory the procfs staged, named "/proc/PID" in the guest. */
long pidfd_send_target(struct file *f, struct process **out)
{
	char path[PVX_PATH_MAX];
	long r = pidfd_process(f, false, out);
	int pid, n = 0;

	if (r != -EBADF || !f || f->ops != &dir_file_ops)
		return r;
	if (path_of_fd(f->host_fd, path, sizeof(path)) < 0 || sscanf(path, "/proc/%d%n", &pid, &n) != 1 || path[n])
		return -EBADF;
	struct task *l = task_find(pid);
	if (!l || !l->proc || l->proc->leader != l)
		return -ESRCH;
	*out = l->proc;
	return 0;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * Pipes and readiness: pipe/pipe2 are host pipes the sentry owns;
 * poll/ppoll/select/pselect6 map guest fds to host fds and wait on the host
 * with the sentry lock released, so other guest tasks go on meanwhile.
 */
#include <fcntl.h>
#include <poll.h>
#include <sys/personality.h>
#include <signal.h>
#include <string.h>
#include <sys/select.h>
#include <sys/syscall.h>
#include <time.h>

#include "pvx/kernel.h"
#include "syscalls/syscalls.h"

/* pipe2(2): O_CLOEXEC, O_NONBLOCK and O_DIRECT; the ends are host pipe fds. */
long sys_pipe2(struct task *t, const long a[6])
{
	int flags = (int)a[1], host[2];
	struct file *f[2] = { NULL, NULL };
	long fds[2] = { -1, -1 };
	long r;

	if (flags & ~(O_CLOEXEC | O_NONBLOCK | O_DIRECT))
		return -EINVAL;
	if (pipe2(host, O_CLOEXEC | (flags & (O_NONBLOCK | O_DIRECT))) < 0)
		return neg_errno();
	f[0] = file_new(host[0], O_RDONLY | (flags & O_NONBLOCK), &pipe_file_ops);
	f[1] = file_new(host[1], O_WRONLY | (flags & O_NONBLOCK), &pipe_file_ops);
	if (!f[0] || !f[1]) {
		r = -ENOMEM;
		goto out;
	}
	host[0] = host[1] = -1;
	if ((r = fds[0] = fd_install(t->files, f[0], flags & O_CLOEXEC, 0)) < 0 ||
	    (r = fds[1] = fd_install(t->files, f[1], flags & O_CLOEXEC, 0)) < 0)
		goto out;
	int out[2] = { (int)fds[0], (int)fds[1] };
	r = copy_to_guest(t->mm, (uint64_t)a[0], out, sizeof(out));
out:
	if (r < 0) {
		for (int i = 0; i < 2; i++)
			if (fds[i] >= 0 && fd_close(t->files, (int)fds[i]) < 0)
				fds[i] = -1;
	}
	for (int i = 0; i < 2; i++) {
		if (f[i])
			file_put(f[i]);
		else if (host[i] >= 0)
			close(host[i]);
	}
	return r < 0 ? r : 0;
}

long sys_pipe(struct task *t, const long a[6])
{
	const long b[6] = { a[0], 0 };

	return sys_pipe2(t, b);
}

/*
 * Wait on host fds for guest pollfds. Each guest fd holds a file reference
 * while the lock is dropped, so a close by another task cannot pull the
 * host fd away under us. *to, if any, is left with the time that remained
 * (poll_select_finish). As do_poll(), a signal already pending only ends
 * the call when no fd is ready.
 */
static long poll_host(struct task *t, struct pollfd *pfd, nfds_t n, struct timespec *to)
{
	cleanup_free struct file **held = calloc(n + 1, sizeof(*held));
	cleanup_free int *guest_fd = calloc(n + 1, sizeof(*guest_fd));

	if (!held || !guest_fd)
		return -ENOMEM;
	for (nfds_t i = 0; i < n; i++) {
		guest_fd[i] = pfd[i].fd;
		struct file *f = pfd[i].fd >= 0 ? fd_lookup(t->files, pfd[i].fd) : NULL;
		held[i] = f ? file_get(f) : NULL;
		/* A bad fd polls as POLLNVAL; -1 is skipped: use fds the host reports that way. */
		pfd[i].fd = f ? file_ready_fd(f) : (pfd[i].fd < 0 ? -1 : INT32_MAX);
	}
	bool pending = signal_pending(t);
	struct timespec now = { 0, 0 };
	const long a[6] = { (long)pfd, (long)n, to || pending ? (long)(pending ? &now : to) : 0, 0, 8 };
	long err = task_block(t, NULL, SYS_ppoll, a, pending);
	if (pending && err == 0)
		err = -EINTR;
	for (nfds_t i = 0; i < n; i++) {
		if (held[i])
			file_put(held[i]);
		pfd[i].fd = guest_fd[i];
	}
	return err;
}

/*
 * The signal mask of ppoll and pselect6, in force while they wait. If they
 * return EINTR, the handler's frame carries the old mask (as sigsuspend);
 * otherwise it comes back at once, and a signal it blocks stays pending.
 */
long poll_mask_set(struct task *t, uint64_t umask, long size)
{
	uint64_t mask;
	long r;

	if (!umask)
		return 0;
	if (size != GUEST_SIGSET_SIZE)
		return -EINVAL;
	if ((r = copy_from_guest(t->mm, &mask, umask, sizeof(mask))))
		return r;
	signal_temp_mask(t, mask);
	return 0;
}

long poll_mask_done(struct task *t, long r)
{
	if (t->has_saved_mask && r != -EINTR) {
		t->sigmask = t->saved_mask;
		t->has_saved_mask = false;
	}
	return r;
}

/* Copy the pollfds in, wait, copy the revents out. */
static long poll_user(struct task *t, uint64_t upfd, nfds_t n, struct timespec *to)
{
	long r;

	if (n > t->proc->rlim[RLIMIT_NOFILE].rlim_cur)	/* poll(2): "EINVAL nfds exceeds RLIMIT_NOFILE" */
		return -EINVAL;
	cleanup_free struct pollfd *pfd = calloc(n + 1, sizeof(*pfd));
	if (!pfd)
		return -ENOMEM;
	if ((r = copy_from_guest(t->mm, pfd, upfd, n * sizeof(*pfd))))
		return r;
	r = poll_host(t, pfd, n, to);
	if (r >= 0 && copy_to_guest(t->mm, upfd, pfd, n * sizeof(*pfd)))
		return -EFAULT;
	return r;
}

/* personality(2) STICKY_TIMEOUTS: select, pselect6 and ppoll leave the timeout as given (poll_select_finish). */
static bool sticky_timeouts(const struct task *t)
{
	return t->proc->personality & STICKY_TIMEOUTS;
}

/* ppoll(2): the timeout is left with what remained, as the system call does. */
long sys_ppoll(struct task *t, const long a[6])
{
	struct timespec ts;
	long r;

	if (a[2]) {
		if ((r = copy_from_guest(t->mm, &ts, (uint64_t)a[2], sizeof(ts))))
			return r;
		if (ts.tv_sec < 0 || ts.tv_nsec < 0 || ts.tv_nsec >= 1000000000L)
			return -EINVAL;
	}
	if ((r = poll_mask_set(t, (uint64_t)a[3], a[4])))
		return r;
	r = poll_mask_done(t, poll_user(t, (uint64_t)a[0], (nfds_t)a[1], a[2] ? &ts : NULL));
	if (a[2] && !sticky_timeouts(t))
		(void)!copy_to_guest(t->mm, (uint64_t)a[2], &ts, sizeof(ts));	/* a fault is ignored */
	return r;
}

/* poll(2): "Specifying a negative value in timeout means an infinite timeout." */
long sys_poll(struct task *t, const long a[6])
{
	struct timespec ts = { (int)a[2] / 1000, ((int)a[2] % 1000) * 1000000L };

	return poll_user(t, (uint64_t)a[0], (nfds_t)a[1], (int)a[2] < 0 ? NULL : &ts);
}

/* select(2) as poll: readable = POLLIN|POLLHUP|POLLERR, writable = POLLOUT|POLLERR. */
static long do_select(struct task *t, int nfds, uint64_t urd, uint64_t uwr, uint64_t uex,
		      struct timespec *to)
{
	fd_set in[3], out[3];
	const uint64_t u[3] = { urd, uwr, uex };
	struct pollfd pfd[FD_SETSIZE];
	nfds_t n = 0;
	long r;

	if (nfds < 0 || nfds > FD_SETSIZE)
		return -EINVAL;
	size_t bytes = ((size_t)nfds + 63) / 64 * 8;
	for (int k = 0; k < 3; k++) {
		FD_ZERO(&in[k]);
		FD_ZERO(&out[k]);
		if (u[k] && (r = copy_from_guest(t->mm, &in[k], u[k], bytes)))
			return r;
	}
	for (int fd = 0; fd < nfds; fd++) {
		short ev = (FD_ISSET(fd, &in[0]) ? POLLIN : 0) | (FD_ISSET(fd, &in[1]) ? POLLOUT : 0) |
			   (FD_ISSET(fd, &in[2]) ? POLLPRI : 0);
		if (!ev)
			continue;
		if (!fd_lookup(t->files, fd))
			return -EBADF;
		pfd[n++] = (struct pollfd){ fd, ev, 0 };
	}
	r = poll_host(t, pfd, n, to);
	if (r < 0)
		return r;
	long ready = 0;
	for (nfds_t i = 0; i < n; i++) {
		short re = pfd[i].revents;
		if ((pfd[i].events & POLLIN) && (re & (POLLIN | POLLHUP | POLLERR)))
			FD_SET(pfd[i].fd, &out[0]), ready++;
		if ((pfd[i].events & POLLOUT) && (re & (POLLOUT | POLLERR)))
			FD_SET(pfd[i].fd, &out[1]), ready++;
		if ((pfd[i].events & POLLPRI) && (re & POLLPRI))
			FD_SET(pfd[i].fd, &out[2]), ready++;
	}
	for (int k = 0; k < 3; k++)
		if (u[k] && copy_to_guest(t->mm, u[k], &out[k], bytes))
			return -EFAULT;
	return ready;
}

/* select(2) leaves the timeval with the time that remained (Linux, not POSIX). */
long sys_select(struct task *t, const long a[6])
{
	struct timeval tv;
	struct timespec ts, *to = NULL;
	long r;

	if (a[4]) {
		if ((r = copy_from_guest(t->mm, &tv, (uint64_t)a[4], sizeof(tv))))
			return r;
		if (tv.tv_sec < 0 || tv.tv_usec < 0)
			return -EINVAL;
		ts = (struct timespec){ tv.tv_sec + tv.tv_usec / 1000000, (tv.tv_usec % 1000000) * 1000 };
		to = &ts;
	}
	r = do_select(t, (int)a[0], (uint64_t)a[1], (uint64_t)a[2], (uint64_t)a[3], to);
	if (to && !sticky_timeouts(t)) {
		tv = (struct timeval){ ts.tv_sec, ts.tv_nsec / 1000 };
		(void)!copy_to_guest(t->mm, (uint64_t)a[4], &tv, sizeof(tv));	/* a fault is ignored */
	}
	return r;
}

/* pselect6(2): the sixth argument is { const sigset_t *ss; size_t ss_len; }. */
long sys_pselect6(struct task *t, const long a[6])
{
	struct timespec ts, *to = NULL;
	uint64_t sig[2] = { 0, 0 };
	long r;

	if (a[4]) {
		if ((r = copy_from_guest(t->mm, &ts, (uint64_t)a[4], sizeof(ts))))
			return r;
		if (ts.tv_sec < 0 || ts.tv_nsec < 0 || ts.tv_nsec >= 1000000000L)
			return -EINVAL;
		to = &ts;
	}
	if (a[5] && (r = copy_from_guest(t->mm, sig, (uint64_t)a[5], sizeof(sig))))
		return r;
	if ((r = poll_mask_set(t, sig[0], (long)sig[1])))
		return r;
	r = poll_mask_done(t, do_select(t, (int)a[0], (uint64_t)a[1], (uint64_t)a[2], (uint64_t)a[3], to));
	if (to && !sticky_timeouts(t))
		(void)!copy_to_guest(t->mm, (uint64_t)a[4], &ts, sizeof(ts));	/* a fault is ignored */
	return r;
}

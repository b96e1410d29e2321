// SPDX-License-Identifier: GPL-2.0
/*
 * pidfd_open(2), pidfd_send_signal(2), pidfd_getfd(2), and the pidfd side
 * of waitid(P_PIDFD) and clone's CLONE_PIDFD; the file kind itself is
 * sentry/kernel/pidfd.c. Every guest has the sandbox's one uid, so the
 * ptrace_may_access checks of pidfd_getfd and the kill permission checks
 * always pass.
 *
 * Not here: PIDFD_THREAD and the PIDFD_SIGNAL_* flags (Linux 6.9): EINVAL,
 * as the kernels before them say.
 */
#include <fcntl.h>
#include <signal.h>

#include "pvx/kernel.h"
#include "pvx/pidfd.h"
#include "syscalls/syscalls.h"

#ifndef PIDFD_NONBLOCK
#define PIDFD_NONBLOCK O_NONBLOCK
#endif

/* A new pidfd for p in t's table (always O_CLOEXEC, as pidfd_create()). */
static long install_pidfd(struct task *t, struct process *p, int flags)
{
	long r = 0;
	struct file *f = pidfd_new(p, flags, &r);

	if (!f)
		return r;
	r = fd_install(t->files, f, true, 0);
	file_put(f);
	return r;
}

/*
 * pidfd_open(2): "EINVAL flags is not valid", "EINVAL pid is not valid",
 * "ESRCH The process specified by pid does not exist"; a thread that is
 * not a leader is EINVAL without PIDFD_THREAD. A zombie not yet reaped
 * still has its pid: it gets a pidfd, readable at once.
 */
long sys_pidfd_open(struct task *t, const long a[6])
{
	int pid = (int)a[0];
	unsigned flags = (unsigned)a[1];

	if (flags & ~(unsigned)PIDFD_NONBLOCK)
		return -EINVAL;
	if (pid <= 0)
		return -EINVAL;
	struct task *p = task_find(pid);
	if (!p || !p->proc)
		return -ESRCH;
	if (p->proc->leader != p)
		return -EINVAL;
	return install_pidfd(t, p->proc, (int)flags);
}

/*
 * pidfd_send_signal(2): the signal to the process the pidfd refers to, as
 * kill(2) (siginfo NULL) or rt_sigqueueinfo(2): "EINVAL sig is not valid",
 * "EINVAL the signal number in info differs from sig", "EPERM ... info
 * ... si_code" of a kernel or tkill code for another process, "ESRCH The
 * target process does not exist (i.e., it has terminated and been waited
 * on)", "EBADF pidfd is not a valid PID file descriptor"; a /proc/PID
 * directory fd names its process too.
 */
long sys_pidfd_send_signal(struct task *t, const long a[6])
{
	int sig = (int)a[1];
	uint64_t uinfo = (uint64_t)a[2];
	struct sig_info info = { SI_USER, t->pid, 0, 0 };
	struct process *p;
	long r;

	if (a[3])
		return -EINVAL;
	if ((r = pidfd_send_target(fd_lookup(t->files, (int)a[0]), &p)))
		return r;
	if (uinfo) {
		int32_t signo;
		if ((r = copy_from_guest(t->mm, &signo, uinfo, sizeof(signo))) ||
		    (r = copy_guest_siginfo(t, sig, uinfo, &info)))
			return r;
		if (signo != sig)
			return -EINVAL;
		bool self = p == t->proc && t->tid == p->pid;
		if (!self && (info.code >= 0 || info.code == SI_TKILL))
			return -EPERM;
	}
	if (sig < 0 || sig > 64)
		return -EINVAL;
	if (!sig || p->leader->state == TASK_ZOMBIE)
		return 0;	/* signal 0 checks only; a zombie takes signals and drops them */
	return signal_queue_process(p, sig, &info);
}

/*
 * pidfd_getfd(2): "a duplicate of a file descriptor of another process",
 * close-on-exec: "EINVAL flags is not 0", "EBADF pidfd is not a valid
 * PID file descriptor", "ESRCH The process ... has terminated", "EBADF
 * targetfd is not an open file descriptor in the process referred to by
 * pidfd".
 */
long sys_pidfd_getfd(struct task *t, const long a[6])
{
	struct process *p;
	long r;

	if (a[2])
		return -EINVAL;
	if ((r = pidfd_process(fd_lookup(t->files, (int)a[0]), true, &p)))
		return r;	/* an exited process has no files: ESRCH (__pidfd_fget's PF_EXITING case) */
	struct file *f = p->leader->files ? fd_lookup(p->leader->files, (int)a[1]) : NULL;
	if (!f)
		return -EBADF;
	file_get(f);
	r = fd_install(t->files, f, true, 0);
	file_put(f);
	return r;
}

/* See syscalls.h. A reaped process is nobody's child any more: ECHILD, never its pid's next owner. */
long pidfd_wait_pid(struct task *t, int fd, bool *nonblock)
{
	struct file *f = fd >= 0 ? fd_lookup(t->files, fd) : NULL;
	struct process *p;
	long r;

	*nonblock = false;
	if (fd < 0)
		return -EINVAL;
	if ((r = pidfd_process(f, false, &p)))
		return r == -ESRCH ? -ECHILD : r;
	*nonblock = f->flags & O_NONBLOCK;
	return p->pid;
}

/* See syscalls.h: put_user(pidfd, ...) failing is EFAULT for the clone (the child is made by then). */
long pidfd_for_child(struct task *t, int pid, uint64_t upidfd)
{
	struct task *c = task_find(pid);
	int32_t fd;

	if (!c || !c->proc)
		return -ESRCH;
	long r = install_pidfd(t, c->proc, 0);
	if (r < 0)
		return r;
	fd = (int32_t)r;
	if (copy_to_guest(t->mm, upidfd, &fd, sizeof(fd))) {
		(void)!fd_close(t->files, fd);
		return -EFAULT;
	}
	return 0;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * fcntl(2): the fd table's commands (F_DUPFD*, F_GETFD/F_SETFD), the
 * file's status flags, record locks (sentry/fs/plock.c), leases
 * (sentry/fs/lease.c), the owner and signal of the file's SIGIO
 * (F_SETOWN, F_SETOWN_EX, F_SETSIG: per open file description, as Linux's
 * f_owner), and the kind's own (seals, pipe sizes).
 */
#include <fcntl.h>
#include <limits.h>

#include "pvx/kernel.h"

#ifndef F_DUPFD_QUERY
#define F_DUPFD_QUERY 1027	/* Linux 6.10: do two fds refer to one open file description? */
#endif
#ifndef F_CREATED_QUERY
#define F_CREATED_QUERY 1028	/* Linux 6.12: did this fd's open create the file? */
#endif
#include "syscalls/syscalls.h"

/* find_vpid(): a guest thread (F_OWNER_TID, F_OWNER_PID) or a process group with that id exists. */
static bool owner_exists(int type, int id)
{
	if (type != F_OWNER_PGRP) {
		struct task *p = task_find(id);
		return p && p->proc;
	}
	for (struct task *p = task_next(NULL); p; p = task_next(p))
		if (p->proc && p->proc->pgid == id && p->state != TASK_ZOMBIE)
			return true;
	return false;
}

/* f_setown_ex(): "ESRCH" for an id nobody has; id 0 takes the owner away. */
static long set_owner(struct file *f, int type, int id)
{
	if (type != F_OWNER_TID && type != F_OWNER_PID && type != F_OWNER_PGRP)
		return -EINVAL;
	if (id < 0)
		return -EINVAL;
	if (id && !owner_exists(type, id))
		return -ESRCH;
	f->owner_type = type;
	f->owner_id = id;
	return 0;
}

/* F_GETOWN, F_SETOWN, F_GETOWN_EX, F_SETOWN_EX, F_GETSIG, F_SETSIG. */
static long fcntl_owner(struct task *t, struct file *f, int cmd, unsigned long arg)
{
	struct f_owner_ex ex;
	long r;

	switch (cmd) {
	case F_GETOWN:
		return f->owner_type == F_OWNER_PGRP ? -f->owner_id : f->owner_id;
	case F_SETOWN: {
		int who = (int)arg;
		if (who == INT_MIN)
			return -EINVAL;
		return set_owner(f, who < 0 ? F_OWNER_PGRP : F_OWNER_PID, who < 0 ? -who : who);
	}
	case F_GETOWN_EX:
		ex = (struct f_owner_ex){ f->owner_type, f->owner_id };
		return copy_to_guest(t->mm, arg, &ex, sizeof(ex));
	case F_SETOWN_EX:
		if ((r = copy_from_guest(t->mm, &ex, arg, sizeof(ex))) < 0)
			return r;
		return set_owner(f, ex.type, ex.pid);
	case F_GETSIG:
		return f->signum;
	case F_SETSIG:
		if (arg > 64)
			return -EINVAL;	/* valid_signal() */
		f->signum = (int)arg;
		return 0;
	}
	return -EINVAL;
}

long sys_fcntl(struct task *t, const long a[6])
{
	struct file *f = fd_lookup(t->files, (int)a[0]);
	int fd = (int)a[0], cmd = (int)a[1];

	if (!f)
		return -EBADF;
	/* check_fcntl_cmd(): an O_PATH fd has only these */
	if ((f->flags & O_PATH) && cmd != F_DUPFD && cmd != F_DUPFD_CLOEXEC && cmd != F_GETFD && cmd != F_SETFD &&
	    cmd != F_GETFL && cmd != F_DUPFD_QUERY && cmd != F_CREATED_QUERY)
		return -EBADF;
	switch (cmd) {
	case F_DUPFD:
	case F_DUPFD_CLOEXEC:
		return fd_install(t->files, f, cmd == F_DUPFD_CLOEXEC, (int)a[2]);
	case F_GETFD:
		return t->files->fds[fd].cloexec ? FD_CLOEXEC : 0;
	case F_SETFD:
		t->files->fds[fd].cloexec = a[2] & FD_CLOEXEC;
		return 0;
	case F_GETFL:
		return file_getfl(f);
	case F_DUPFD_QUERY: {
		struct file *o = fd_lookup(t->files, (int)a[2]);
		return o ? o == f : -EBADF;
	}
	case F_CREATED_QUERY:
		return f->created;
	case F_SETFL:
		if ((a[2] & O_ASYNC) && !(f->flags & O_ASYNC))
			f->async_fd = fd;	/* fasync_helper(fd, ...) */
		return file_setfl(f, (int)a[2]);
	case F_GETLK:
	case F_SETLK:
	case F_SETLKW:
	case F_OFD_GETLK:
	case F_OFD_SETLK:
	case F_OFD_SETLKW:
		return plock_fcntl(t, f, cmd, (uint64_t)a[2]);
	case F_SETLEASE:
		return lease_set(t, f, fd, (int)a[2]);
	case F_GETLEASE:
		return lease_get(f);
	case F_NOTIFY: {
		long r = dnotify_fcntl(t, t->files, f, fd, (unsigned)a[2], t->proc->pid);
		/* Reads the stubs serve would signal DN_ACCESS only at the next call: all back to the sentry. */
		if (r == 0)
			pt_pause_all();
		return r;
	}
	case F_GETOWN:
	case F_SETOWN:
	case F_GETOWN_EX:
	case F_SETOWN_EX:
	case F_GETSIG:
	case F_SETSIG:
		return fcntl_owner(t, f, cmd, (unsigned long)a[2]);
	}
	/* The kind's commands (seals, pipe sizes); EINVAL for those no kind has. */
	return file_fcntl(t, f, cmd, (unsigned long)a[2]);
}

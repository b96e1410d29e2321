// SPDX-License-Identifier: GPL-2.0
/*
 * setns(2) (kernel/nsproxy.c). The sandbox has one namespace of each type
 * and every guest process is in it, so a namespace file or a pidfd always
 * names the caller's own namespaces; the guest holds no capability. What
 * Linux answers then is the first failing check of each type's install:
 * user: "EINVAL the caller attempted to join the user namespace in which it
 * is already a member" (userns_install, checked before any capability);
 * time: EUSERS for a multithreaded caller, then EPERM (timens_install);
 * the others: EPERM (no CAP_SYS_ADMIN). So no setns changes anything.
 */
#include <fcntl.h>
#include <sched.h>

#include "pvx/nsfs.h"
#include "pvx/pidfd.h"
#include "syscalls/syscalls.h"

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif
#define SETNS_ALL (CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWNET | CLONE_NEWTIME | CLONE_NEWUSER | \
		   CLONE_NEWPID | CLONE_NEWCGROUP)

/* ns->ops->install for the caller's own namespace of type flag. */
static long install_own(struct task *t, long flag)
{
	if (flag == CLONE_NEWUSER)
		return -EINVAL;
	if (flag == CLONE_NEWTIME && t->proc->nr_threads > 1)
		return -EUSERS;
	return -EPERM;
}

/*
 * setns(fd, nstype): a namespace file, whose type nstype must be (0: any),
 * or a pidfd with a mask of CLONE_NEW* flags (check_setns_flags: none or
 * unknown ones EINVAL), whose namespaces validate_nsset installs in its
 * order (user, mnt, uts, ipc, pid, cgroup, net, time): ESRCH first when the
 * process has exited. Any other fd: EINVAL; O_PATH fds: EBADF (fdget).
 */
long sys_setns(struct task *t, const long a[6])
{
	static const long order[] = { CLONE_NEWUSER, CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC, CLONE_NEWPID,
				      CLONE_NEWCGROUP, CLONE_NEWNET, CLONE_NEWTIME };
	struct file *f = fd_lookup(t->files, (int)a[0]);
	int flags = (int)a[1];
	struct process *p;

	if (!f || (f->flags & O_PATH))
		return -EBADF;
	long type = nsfs_type(f);
	if (type >= 0)
		return flags && type != flags ? -EINVAL : install_own(t, type);
	long r = pidfd_process(f, true, &p);
	if (r == -EBADF)
		return -EINVAL;	/* neither a namespace file nor a pidfd */
	if (!flags || (flags & ~SETNS_ALL))
		return -EINVAL;
	if (r < 0)
		return -ESRCH;	/* exited: no nsproxy to take */
	for (size_t i = 0; i < ARRAY_SIZE(order); i++)
		if (flags & order[i])
			return install_own(t, order[i]);
	return -EINVAL;
}

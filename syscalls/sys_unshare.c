// SPDX-License-Identifier: GPL-2.0
/*
 * unshare(2) (kernel/fork.c ksys_unshare): a task stops sharing its fd
 * table (CLONE_FILES) or working directory and umask (CLONE_FS) with the
 * tasks it was cloned with, and leaves its System V semaphore undo list
 * (CLONE_SYSVSEM). Namespaces are not pvx's to make: the guest never holds
 * CAP_SYS_ADMIN, so every namespace but the user namespace is EPERM, as for
 * an unprivileged Linux user; user namespaces are configured out (EINVAL).
 */
#include <linux/sched.h>

#include "pvx/fs_share.h"
#include "pvx/ipc.h"
#include "pvx/kernel.h"
#include "syscalls/syscalls.h"

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif

#define UNSHARE_NS (CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWNET | CLONE_NEWPID | CLONE_NEWCGROUP | \
		    CLONE_NEWTIME)
#define UNSHARE_ALL (CLONE_THREAD | CLONE_FS | CLONE_SIGHAND | CLONE_VM | CLONE_FILES | CLONE_SYSVSEM | \
		     CLONE_NEWUSER | UNSHARE_NS)

/*
 * check_unshare_flags(): "EINVAL An invalid bit was specified in flags";
 * CLONE_THREAD, CLONE_SIGHAND and CLONE_VM are "not implemented, but
 * pretend it works if there is nothing to unshare": EINVAL for a process
 * with other threads, for handlers shared with another process (sighand
 * users), and for an address space another process runs in.
 */
static long unshare_check(struct task *t, unsigned long flags)
{
	if (flags & ~(unsigned long)UNSHARE_ALL)
		return -EINVAL;
	if ((flags & (CLONE_THREAD | CLONE_SIGHAND | CLONE_VM)) && t->proc->nr_threads > 1)
		return -EINVAL;
	if ((flags & (CLONE_SIGHAND | CLONE_VM)) && t->proc->sighand->users > 1)
		return -EINVAL;
	if ((flags & CLONE_VM) && t->mm->users > 1)
		return -EINVAL;	/* current_is_single_threaded(): another process in our mm */
	return 0;
}

long sys_unshare(struct task *t, const long a[6])
{
	unsigned long flags = (unsigned long)a[0];
	long r;

	/* The implications ksys_unshare() adds before it checks. */
	if (flags & CLONE_NEWUSER)
		flags |= CLONE_THREAD | CLONE_FS;
	if (flags & CLONE_VM)
		flags |= CLONE_SIGHAND;
	if (flags & CLONE_SIGHAND)
		flags |= CLONE_THREAD;
	if (flags & CLONE_NEWNS)
		flags |= CLONE_FS;
	if ((r = unshare_check(t, flags)) < 0)
		return r;
	if (flags & CLONE_NEWUSER)
		return -EINVAL;	/* unshare_userns() without CONFIG_USER_NS */
	if (flags & UNSHARE_NS)
		return -EPERM;	/* unshare_nsproxy_namespaces(): !ns_capable(CAP_SYS_ADMIN) */
	if ((r = task_unshare(t, flags & (CLONE_FILES | CLONE_FS))) < 0)
		return r;
	/* exit_sem(): the undo list is applied when its last user leaves it (our threads share it). */
	if ((flags & CLONE_SYSVSEM) && t->proc->nr_threads == 1)
		sem_exit(t->proc);
	return 0;
}

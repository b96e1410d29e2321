// SPDX-License-Identifier: GPL-2.0
/*
 * The sentry's host file identity: see include/pvx/hostcred.h. setfsuid(2)
 * and setfsgid(2) act on the calling thread only (raw syscalls here, as
 * glibc's wrappers are), and a new thread inherits its creator's, so a drop
 * on the main thread before the first pthread_create reaches every sentry
 * thread.
 *
 * A stub is not the guest's file access: the child that becomes a stub
 * (stub_start, a vfork) and the child of any fork() take root's back at
 * once (hostcred_spawn_child). Its execve
 * would set fsuid to its euid anyway, and that change of credentials would
 * clear the PR_SET_PDEATHSIG the stub sets before exec: a stub would then
 * outlive a killed pvx.
 */
#include <fcntl.h>
#include <grp.h>
#include <pthread.h>
#include <sys/syscall.h>

#include "pvx/hostcred.h"
#include "pvx/log.h"

static bool dropped;
static __thread int raised;	/* nesting depth of hostcred_raise on this thread */

/* The calling thread's fsuid and fsgid (setfs*id(-1) changes nothing and returns them). */
static unsigned fsuid_now(void)
{
	return (unsigned)syscall(SYS_setfsuid, -1);
}

static unsigned fsgid_now(void)
{
	return (unsigned)syscall(SYS_setfsgid, -1);
}

void hostcred_spawn_child(void)
{
	if (!dropped)
		return;
	syscall(SYS_setfsgid, 0);
	syscall(SYS_setfsuid, 0);
}

/* pthread_atfork child handler (a fork's child has a copy of our TLS): async-signal-safe, raw syscalls only. */
static void stub_child(void)
{
	hostcred_spawn_child();
	raised = 0;
}

long hostcred_drop_files(void)
{
	if (setgroups(0, NULL) < 0)
		return neg_errno();
	if (pthread_atfork(NULL, NULL, stub_child))
		return -ENOMEM;
	syscall(SYS_setfsgid, PVX_NOBODY);
	syscall(SYS_setfsuid, PVX_NOBODY);
	/* setfsuid(2) reports no error: read the ids back. */
	if (fsuid_now() != PVX_NOBODY || fsgid_now() != PVX_NOBODY || getgroups(0, NULL) != 0)
		return -EPERM;
	dropped = true;
	return 0;
}

void hostcred_raise(void)
{
	if (!dropped || raised++)
		return;
	syscall(SYS_setfsuid, 0);	/* the kernel gives back the file capabilities with fsuid 0 */
	syscall(SYS_setfsgid, 0);
}

void hostcred_lower(void)
{
	if (!dropped || --raised)
		return;
	syscall(SYS_setfsgid, PVX_NOBODY);
	syscall(SYS_setfsuid, PVX_NOBODY);
	if (fsuid_now() != PVX_NOBODY) {
		pr_err("cannot go back to fsuid %d", PVX_NOBODY);
		abort();	/* never run guest code with root's file access by mistake */
	}
}

int open_privileged(const char *path, int flags)
{
	hostcred_raise();
	int fd = open(path, flags);
	int err = errno;
	hostcred_lower();
	errno = err;
	return fd;
}

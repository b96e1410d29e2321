// SPDX-License-Identifier: GPL-2.0
/*
 * Process identity, exit, signals (recorded), limits and arch state of the
 * single guest task. The guest lives in its own pid space: it is pid 1.
 */
#include <asm/prctl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/sysinfo.h>
#include <sys/utsname.h>
#include <linux/futex.h>
#include <sys/prctl.h>
#include <time.h>

#include "pvx/uts.h"
#include "pvx/cred.h"
#include "pvx/kernel.h"
#include "pvx/log.h"

#include "syscalls/syscalls.h"

/* exit_group(2): every thread of the process ends with this status. */
long sys_exit_group(struct task *t, const long a[6])
{
	process_exit_group(t, ((int)a[0] & 0xff) << 8);
	return 0;
}

/* exit(2): this thread; the process ends with its last thread (status: the leader's). */
long sys_exit(struct task *t, const long a[6])
{
	t->exiting = true;
	t->exit_status = ((int)a[0] & 0xff) << 8;
	return 0;
}

/* The capability number cap exists (cap_valid): the host's bounding set knows it. */
static bool cap_valid(long cap)
{
	return cap >= 0 && prctl(PR_CAPBSET_READ, (unsigned long)cap, 0, 0, 0) >= 0;
}

/*
 * The prctl(2) options of process state beyond sys_prctl's: parent-death
 * signal, child subreaper, timer slack, THP, securebits, ambient
 * capabilities, timing, speculation control; others EINVAL.
 */
static long prctl_more(struct task *t, const long a[6])
{
	const unsigned long arg2 = (unsigned long)a[1];
	int v;

	switch ((int)a[0]) {
	case PR_SET_PDEATHSIG:	/* "EINVAL option is PR_SET_PDEATHSIG and arg2 is not a valid signal number" */
		if (arg2 > 64)
			return -EINVAL;
		t->pdeath_signal = (int)arg2;
		return 0;
	case PR_GET_PDEATHSIG:
		return copy_to_guest(t->mm, arg2, &t->pdeath_signal, sizeof(int));
	case PR_SET_CHILD_SUBREAPER:
		t->proc->child_subreaper = arg2 != 0;
		return 0;
	case PR_GET_CHILD_SUBREAPER:
		v = t->proc->child_subreaper;
		return copy_to_guest(t->mm, arg2, &v, sizeof(v));
	case PR_SET_TIMERSLACK:	/* "If ... is 0, the default value": the slack of the thread's creator */
		t->timer_slack_ns = arg2 ? arg2 : t->default_timer_slack_ns;
		return 0;
	case PR_GET_TIMERSLACK:
		return (long)(t->timer_slack_ns > (uint64_t)LONG_MAX ? LONG_MAX : t->timer_slack_ns);
	case PR_SET_THP_DISABLE:
		if (a[2] || a[3] || a[4])
			return -EINVAL;
		t->proc->thp_disable = arg2 != 0;
		return 0;
	case PR_GET_THP_DISABLE:
		return a[1] || a[2] || a[3] || a[4] ? -EINVAL : t->proc->thp_disable;
	case PR_GET_SECUREBITS:
		return 0;
	case PR_SET_SECUREBITS:	/* cap_task_prctl(): changing them needs CAP_SETPCAP, which the sandbox lacks */
		return -EPERM;
	case PR_CAP_AMBIENT:	/* the ambient set is always empty: nothing may be raised into it */
		if (arg2 == PR_CAP_AMBIENT_CLEAR_ALL)
			return a[2] || a[3] || a[4] ? -EINVAL : 0;
		if (!cap_valid(a[2]) || a[3] || a[4])
			return -EINVAL;
		if (arg2 == PR_CAP_AMBIENT_IS_SET || arg2 == PR_CAP_AMBIENT_LOWER)
			return 0;
		return arg2 == PR_CAP_AMBIENT_RAISE ? -EPERM : -EINVAL;
	case PR_GET_TIMING:
		return PR_TIMING_STATISTICAL;
	case PR_SET_TIMING:
		return arg2 == PR_TIMING_STATISTICAL ? 0 : -EINVAL;
	case PR_GET_SPECULATION_CTRL:	/* the sentry's, which the guest's code runs under */
		if (a[2] || a[3] || a[4])
			return -EINVAL;
		v = prctl(PR_GET_SPECULATION_CTRL, arg2, 0, 0, 0);
		return v < 0 ? neg_errno() : v;
	}
	pr_info("prctl option %ld is not supported", a[0]);	/* --debug only: stderr is the guest's */
	return -EINVAL;
}

/* prctl(2): the thread's name and the flags real programs set; others EINVAL. */
long sys_prctl(struct task *t, const long a[6])
{
	char name[16];
	long r;

	switch ((int)a[0]) {
	case PR_SET_NAME:
		r = strncpy_from_guest(t->mm, name, (uint64_t)a[1], sizeof(name));
		if (r < 0 && r != -ENAMETOOLONG)
			return r;
		name[sizeof(name) - 1] = 0;
		memcpy(t->comm, name, sizeof(name));
		return 0;
	case PR_GET_NAME:
		return copy_to_guest(t->mm, (uint64_t)a[1], t->comm, sizeof(t->comm));
	case PR_GET_DUMPABLE:
		return !t->proc->undumpable;
	case PR_SET_DUMPABLE:	/* SUID_DUMP_DISABLE or SUID_DUMP_USER: whether a fatal signal dumps core */
		if ((unsigned long)a[1] > 1)
			return -EINVAL;
		t->proc->undumpable = !a[1];
		return 0;
	case PR_GET_NO_NEW_PRIVS:	/* nothing in the sandbox can gain privileges on exec */
		return a[1] || a[2] || a[3] || a[4] ? -EINVAL : 1;
	case PR_SET_NO_NEW_PRIVS:
		return a[1] == 1 && !a[2] && !a[3] && !a[4] ? 0 : -EINVAL;
	case PR_GET_KEEPCAPS:
		return t->keepcaps;
	case PR_SET_KEEPCAPS:	/* the calling thread's flag (cap_task_prctl); the sandbox holds no capabilities to keep */
		if ((unsigned long)a[1] > 1)
			return -EINVAL;
		t->keepcaps = a[1];
		return 0;
	case PR_CAPBSET_READ:	/* the bounding set is inherited, so the sentry's is the guest's */
		r = prctl(PR_CAPBSET_READ, (unsigned long)a[1], 0, 0, 0);
		return r < 0 ? neg_errno() : r;
	case PR_CAPBSET_DROP:	/* "EPERM ... the caller does not have the CAP_SETPCAP capability" */
		r = prctl(PR_CAPBSET_READ, (unsigned long)a[1], 0, 0, 0);
		return r < 0 ? neg_errno() : -EPERM;
	}
	return prctl_more(t, a);
}

long sys_getpid(struct task *t, const long a[6] __unused)
{
	return t->pid;
}

long sys_getppid(struct task *t, const long a[6] __unused)
{
	return t->proc->ppid;
}

long sys_gettid(struct task *t, const long a[6] __unused)
{
	return t->tid;
}

long sys_getuid(struct task *t __unused, const long a[6] __unused)
{
	return sandbox.uid;
}

long sys_geteuid(struct task *t __unused, const long a[6] __unused)
{
	return sandbox.uid;
}

long sys_getgid(struct task *t __unused, const long a[6] __unused)
{
	return sandbox.gid;
}

long sys_getegid(struct task *t __unused, const long a[6] __unused)
{
	return sandbox.gid;
}

/*
 * uname(2): the host's kernel identity under the sandbox's own host name;
 * PER_LINUX32 says i686 (override_architecture()).
 */
long sys_uname(struct task *t, const long a[6])
{
	struct utsname u;

	if (uname(&u) < 0)
		return neg_errno();
	snprintf(u.nodename, sizeof(u.nodename), "%s", uts_nodename());
	snprintf(u.domainname, sizeof(u.domainname), "%s", uts_domainname());
	if ((t->proc->personality & PER_MASK) == PER_LINUX32)
		strcpy(u.machine, "i686");
	return copy_to_guest_ret(t->mm, (uint64_t)a[0], &u, sizeof(u), 0);
}

/*
 * personality(2): any value is kept (ksys_personality() checks none) and
 * 0xffffffff only asks. Of its flags pvx acts on ADDR_NO_RANDOMIZE (the
 * next execve lays memory out without ASLR), READ_IMPLIES_EXEC (mmap and
 * mprotect) and PER_LINUX32 (uname); the others change nothing here, as
 * most change nothing on x86-64 Linux (ADDR_COMPAT_LAYOUT's bottom-up
 * mmap is not done).
 */
long sys_personality(struct task *t, const long a[6])
{
	unsigned old = t->proc->personality;

	if ((unsigned)a[0] != 0xffffffff)
		t->proc->personality = (unsigned)a[0];
	return old;
}

/* arch_prctl(2): the guest's fs/gs base live in its registers; CPUID faulting is unavailable. */
long sys_arch_prctl(struct task *t, const long a[6])
{
	uint64_t addr = (uint64_t)a[1];

	switch (a[0]) {
	case ARCH_SET_FS:
	case ARCH_SET_GS:
		if (addr >= PVX_GUEST_TASK_SIZE)
			return -EPERM;
		if (a[0] == ARCH_SET_GS && addr)
			mm_ut_off(t->mm);	/* the usertrap finds its region through GS: every patched site goes back */
		*(a[0] == ARCH_SET_FS ? &t->regs.fs_base : &t->regs.gs_base) = addr;
		return 0;
	case ARCH_GET_FS:
		return copy_to_guest(t->mm, addr, &t->regs.fs_base, sizeof(uint64_t));
	case ARCH_GET_GS:
		return copy_to_guest(t->mm, addr, &t->regs.gs_base, sizeof(uint64_t));
	case ARCH_GET_CPUID:	/* CPUID always runs: pvx offers no CPUID faulting */
		return 1;
	case ARCH_SET_CPUID:	/* set_cpuid_mode() without X86_FEATURE_CPUID_FAULT */
		return -ENODEV;
	}
	return -EINVAL;
}

long sys_set_tid_address(struct task *t, const long a[6])
{
	t->clear_child_tid = (uint64_t)a[0];
	return t->tid;
}

long sys_set_robust_list(struct task *t, const long a[6])
{
	if (a[1] != 24)	/* sizeof(struct robust_list_head) */
		return -EINVAL;
	t->robust_list = (uint64_t)a[0];
	return 0;
}

long sys_sysinfo(struct task *t, const long a[6])
{
	struct sysinfo si;

	if (sysinfo(&si) < 0)
		return neg_errno();
	si.procs = 1;
	return copy_to_guest_ret(t->mm, (uint64_t)a[0], &si, sizeof(si), 0);
}

long sys_sched_yield(struct task *t __unused, const long a[6] __unused)
{
	return 0;
}


// SPDX-License-Identifier: GPL-2.0
/*
 * Credentials, scheduling and resource limits as the guest sees them.
 *
 * The sandbox has one identity: pvx's own uid and gid (and its supplementary
 * groups) for real, effective, saved and fs ids. Files are opened by the
 * sentry under that identity, so a guest that "changes" its uid would gain
 * or lose nothing on the host: set*id to the ids it already has succeeds,
 * to any other id is EPERM, as for a process without CAP_SETUID, and the
 * guest holds no capabilities (capget).
 *
 * Nice values, scheduling policies and resource limits are the process's
 * own, kept here and inherited across fork and execve. Of the limits,
 * RLIMIT_NOFILE (EMFILE), FSIZE (writes, truncate, fallocate), NPROC (fork),
 * CPU (the timer thread), MEMLOCK (mlock) and SIGPENDING are enforced; the
 * rest are recorded and reported.
 */
#include <limits.h>
#include <sched.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "pvx/cred.h"
#include "pvx/kernel.h"
#include "pvx/timer.h"
#include "syscalls/syscalls.h"

#define GROUPS_MAX 1024	/* supplementary groups pvx itself may have; NGROUPS_MAX is 65536 */

#define CAP_SYS_NICE_ 23
#define CAP_SYS_RESOURCE_ 24

/* Each id is -1 (unchanged) or the one the sandbox has. */
static long check_ids(long r, long e, long s, unsigned mine)
{
	const long id[3] = { r, e, s };

	for (int i = 0; i < 3; i++)
		if (id[i] != -1 && (unsigned)id[i] != mine)
			return -EPERM;
	return 0;
}

/* getresuid/getresgid: the one id, as real, effective and saved. */
static long put_three(struct task *t, const long a[6], uint32_t id)
{
	for (int i = 0; i < 3; i++)
		if (copy_to_guest(t->mm, (uint64_t)a[i], &id, sizeof(id)))
			return -EFAULT;
	return 0;
}

long sys_getresuid(struct task *t, const long a[6])
{
	return put_three(t, a, sandbox.uid);
}

long sys_getresgid(struct task *t, const long a[6])
{
	return put_three(t, a, sandbox.gid);
}

long sys_setuid(struct task *t __unused, const long a[6])
{
	return (uint32_t)a[0] == sandbox.uid ? 0 : (int)a[0] == -1 ? -EINVAL : -EPERM;
}

long sys_setgid(struct task *t __unused, const long a[6])
{
	return (uint32_t)a[0] == sandbox.gid ? 0 : (int)a[0] == -1 ? -EINVAL : -EPERM;
}

long sys_setreuid(struct task *t __unused, const long a[6])
{
	return check_ids((int)a[0], (int)a[1], -1, sandbox.uid);
}

long sys_setregid(struct task *t __unused, const long a[6])
{
	return check_ids((int)a[0], (int)a[1], -1, sandbox.gid);
}

long sys_setresuid(struct task *t __unused, const long a[6])
{
	return check_ids((int)a[0], (int)a[1], (int)a[2], sandbox.uid);
}

long sys_setresgid(struct task *t __unused, const long a[6])
{
	return check_ids((int)a[0], (int)a[1], (int)a[2], sandbox.gid);
}

/* setfsuid(2) returns the previous fsuid whether or not it changed it. */
long sys_setfsuid(struct task *t __unused, const long a[6] __unused)
{
	return sandbox.uid;
}

long sys_setfsgid(struct task *t __unused, const long a[6] __unused)
{
	return sandbox.gid;
}

/* getgroups(2): pvx's own supplementary groups; size 0 asks for the count. */
long sys_getgroups(struct task *t, const long a[6])
{
	gid_t g[GROUPS_MAX];
	int n = getgroups(GROUPS_MAX, g);

	if (n < 0)
		return neg_errno();
	if ((int)a[0] < 0)
		return -EINVAL;
	if (a[0] == 0)
		return n;
	if ((int)a[0] < n)
		return -EINVAL;
	return copy_to_guest(t->mm, (uint64_t)a[1], g, (size_t)n * sizeof(gid_t)) ?: n;
}

/* setgroups(2): only the groups the sandbox already has, in any order. */
long sys_setgroups(struct task *t, const long a[6])
{
	gid_t mine[GROUPS_MAX], want[GROUPS_MAX];
	int n = getgroups(GROUPS_MAX, mine);

	if (n < 0)
		return neg_errno();
	if ((long)a[0] < 0 || a[0] > NGROUPS_MAX)
		return -EINVAL;
	if (a[0] > GROUPS_MAX)
		return -EPERM;
	if (copy_from_guest(t->mm, want, (uint64_t)a[1], (size_t)a[0] * sizeof(gid_t)))
		return -EFAULT;
	for (long i = 0; i < a[0]; i++) {
		bool have = false;
		for (int j = 0; j < n && !have; j++)
			have = want[i] == mine[j];
		if (!have)
			return -EPERM;
	}
	return a[0] == n ? 0 : -EPERM;
}

/* capget(2): the guest holds no capabilities. Version 3 headers have two data structs. */
long sys_capget(struct task *t, const long a[6])
{
	struct { uint32_t version; int pid; } hdr;
	const uint32_t v3 = 0x20080522, zero[6] = { 0 };

	if (copy_from_guest(t->mm, &hdr, (uint64_t)a[0], sizeof(hdr)))
		return -EFAULT;
	if (hdr.version != 0x19980330 && hdr.version != 0x20071026 && hdr.version != v3) {
		hdr.version = v3;
		return copy_to_guest(t->mm, (uint64_t)a[0], &hdr, sizeof(hdr)) ?: -EINVAL;
	}
	if (hdr.pid < 0 || (hdr.pid && !task_find(hdr.pid)))
		return hdr.pid < 0 ? -EINVAL : -ESRCH;
	if (!a[1])
		return 0;
	return copy_to_guest(t->mm, (uint64_t)a[1], zero, hdr.version == 0x19980330 ? 12 : 24);
}

/* capset(2): dropping what it does not have is all a guest may do. */
long sys_capset(struct task *t, const long a[6])
{
	uint32_t data[6];
	struct { uint32_t version; int pid; } hdr;

	if (copy_from_guest(t->mm, &hdr, (uint64_t)a[0], sizeof(hdr)))
		return -EFAULT;
	if (hdr.pid && hdr.pid != t->tid)
		return -EPERM;
	size_t len = hdr.version == 0x19980330 ? 12 : 24;
	if (copy_from_guest(t->mm, data, (uint64_t)a[1], len))
		return -EFAULT;
	for (size_t i = 0; i < len / 4; i++)
		if (data[i])
			return -EPERM;
	return 0;
}

/*
 * getpriority/setpriority(2) over the guest's processes. The raw
 * getpriority returns 20 - nice (1..40), the best of the matching set.
 * Lowering a nice value needs CAP_SYS_NICE: only when pvx has it.
 */
static bool prio_match(struct process *p, int which, int who, struct task *t)
{
	switch (which) {
	case PRIO_PROCESS:
		return p->pid == (who ? who : t->pid);
	case PRIO_PGRP:
		return p->pgid == (who ? who : t->proc->pgid);
	default:	/* PRIO_USER: every guest process has the sandbox's uid */
		return !who || (unsigned)who == sandbox.uid;
	}
}

long sys_getpriority(struct task *t, const long a[6])
{
	int which = (int)a[0], who = (int)a[1], best = -1;

	if (which < PRIO_PROCESS || which > PRIO_USER)
		return -EINVAL;
	for (struct task *o = task_next(NULL); o; o = task_next(o)) {
		struct process *p = o->proc;
		if (!p || p->leader != o || o->state == TASK_ZOMBIE || !prio_match(p, which, who, t))
			continue;
		if (20 - p->nice > best)
			best = 20 - p->nice;
	}
	return best < 0 ? -ESRCH : best;
}

long sys_setpriority(struct task *t, const long a[6])
{
	int which = (int)a[0], who = (int)a[1], nice = (int)a[2];
	bool found = false;

	if (which < PRIO_PROCESS || which > PRIO_USER)
		return -EINVAL;
	nice = nice < -20 ? -20 : nice > 19 ? 19 : nice;
	for (struct task *o = task_next(NULL); o; o = task_next(o)) {
		struct process *p = o->proc;
		if (!p || p->leader != o || o->state == TASK_ZOMBIE || !prio_match(p, which, who, t))
			continue;
		found = true;
		if (nice < p->nice && !cred_host_cap(CAP_SYS_NICE_))
			return -EACCES;
		p->nice = nice;
	}
	return found ? 0 : -ESRCH;
}

/*
 * Scheduling policy: every guest thread is SCHED_OTHER at priority 0.
 * Real-time policies would need the host's CAP_SYS_NICE for the stub and
 * are refused (EPERM); SCHED_BATCH and SCHED_IDLE are accepted and reported
 * back as they are only hints to the scheduler.
 */
static struct task *sched_target(struct task *t, int pid)
{
	struct task *p = pid ? task_find(pid) : t;

	return p && p->state != TASK_ZOMBIE ? p : NULL;
}

long sys_sched_getscheduler(struct task *t, const long a[6])
{
	if ((int)a[0] < 0)
		return -EINVAL;
	struct task *p = sched_target(t, (int)a[0]);
	return p ? p->sched_policy | (p->sched_reset_on_fork ? SCHED_RESET_ON_FORK : 0) : -ESRCH;
}

long sys_sched_getparam(struct task *t, const long a[6])
{
	const int prio = 0;

	if ((int)a[0] < 0 || !a[1])
		return -EINVAL;
	if (!sched_target(t, (int)a[0]))
		return -ESRCH;
	return copy_to_guest(t->mm, (uint64_t)a[1], &prio, sizeof(prio));
}

static long set_policy(struct task *t, int pid, int policy, uint64_t uparam)
{
	int prio;

	if (pid < 0 || !uparam)
		return -EINVAL;
	if (copy_from_guest(t->mm, &prio, uparam, sizeof(prio)))
		return -EFAULT;
	struct task *p = sched_target(t, pid);
	if (!p)
		return -ESRCH;
	bool reset = policy == -1 ? p->sched_reset_on_fork : !!(policy & SCHED_RESET_ON_FORK);
	if (policy == -1)
		policy = p->sched_policy;
	policy &= ~SCHED_RESET_ON_FORK;
	switch (policy) {
	case SCHED_OTHER: case SCHED_BATCH: case SCHED_IDLE:
		if (prio != 0)
			return -EINVAL;
		if (p->sched_reset_on_fork && !reset && !cred_host_cap(CAP_SYS_NICE_))
			return -EPERM;	/* "an unprivileged thread cannot reset it" */
		p->sched_policy = policy;
		p->sched_reset_on_fork = reset;
		return 0;
	case SCHED_FIFO: case SCHED_RR:
		return prio < 1 || prio > 99 ? -EINVAL : -EPERM;
	}
	return -EINVAL;
}

long sys_sched_setscheduler(struct task *t, const long a[6])
{
	if ((int)a[1] < 0)
		return -EINVAL;
	return set_policy(t, (int)a[0], (int)a[1], (uint64_t)a[2]);
}

long sys_sched_setparam(struct task *t, const long a[6])
{
	return set_policy(t, (int)a[0], -1, (uint64_t)a[1]);
}

long sys_sched_get_priority_max(struct task *t __unused, const long a[6])
{
	switch (a[0]) {
	case SCHED_FIFO: case SCHED_RR: return 99;
	case SCHED_OTHER: case SCHED_BATCH: case SCHED_IDLE: case 6 /* SCHED_DEADLINE */: return 0;
	}
	return -EINVAL;
}

long sys_sched_get_priority_min(struct task *t __unused, const long a[6])
{
	switch (a[0]) {
	case SCHED_FIFO: case SCHED_RR: return 1;
	case SCHED_OTHER: case SCHED_BATCH: case SCHED_IDLE: case 6 /* SCHED_DEADLINE */: return 0;
	}
	return -EINVAL;
}

/*
 * getcpu(2): the CPU the sentry thread is on now, node 0; the third
 * argument is unused since 2.6.24. The host threads are not moved by
 * sched_setaffinity, so a CPU outside the thread's mask is reported as the
 * mask's first: a thread pinned to one CPU sees that one, as on Linux.
 */
long sys_getcpu(struct task *t, const long a[6])
{
	unsigned cpu = 0, node = 0;
	const unsigned bits = 64 * PVX_CPUMASK_WORDS;
	bool any = false;

	if (syscall(SYS_getcpu, &cpu, &node, NULL) < 0)
		return neg_errno();
	for (unsigned i = 0; i < PVX_CPUMASK_WORDS; i++)
		any |= t->cpumask[i] != 0;
	if (any && (cpu >= bits || !(t->cpumask[cpu / 64] & (1ULL << (cpu % 64))))) {
		for (cpu = 0; cpu < bits && !(t->cpumask[cpu / 64] & (1ULL << (cpu % 64))); cpu++)
			;
	}
	if (a[0] && copy_to_guest(t->mm, (uint64_t)a[0], &cpu, sizeof(cpu)))
		return -EFAULT;
	if (a[1] && copy_to_guest(t->mm, (uint64_t)a[1], &node, sizeof(node)))
		return -EFAULT;
	return 0;
}

/*
 * prlimit64(2) for guest processes: the old limit out, the new one in.
 * Raising a hard limit needs CAP_SYS_RESOURCE (if pvx has it); RLIMIT_NOFILE
 * cannot exceed the fd table (sysctl nr_open's EPERM).
 */
long sys_prlimit64(struct task *t, const long a[6])
{
	struct rlimit rl;
	int res = (int)a[1];

	if ((int)a[0] < 0)
		return -EINVAL;
	struct task *target = (int)a[0] ? task_find((int)a[0]) : t;
	if (!target || target->state == TASK_ZOMBIE)
		return -ESRCH;
	if (res < 0 || res >= RLIM_NLIMITS)
		return -EINVAL;
	struct process *p = target->proc;
	if (a[2]) {
		if (copy_from_guest(t->mm, &rl, (uint64_t)a[2], sizeof(rl)))
			return -EFAULT;
		if (rl.rlim_cur > rl.rlim_max)
			return -EINVAL;
		if (res == RLIMIT_NOFILE && rl.rlim_max > PVX_NR_OPEN)	/* above fs.nr_open */
			return -EPERM;
		if (rl.rlim_max > p->rlim[res].rlim_max && !cred_host_cap(CAP_SYS_RESOURCE_))
			return -EPERM;
	}
	if (a[3] && copy_to_guest(t->mm, (uint64_t)a[3], &p->rlim[res], sizeof(p->rlim[res])))
		return -EFAULT;
	if (a[2]) {
		p->rlim[res] = rl;
		for (struct task *o = NULL; res == RLIMIT_NOFILE && (o = task_next(o));)
			if (o->proc == p && o->files)	/* each fd table of the process's threads */
				o->files->nofile = (unsigned)rl.rlim_cur;
		if (res == RLIMIT_CPU && rl.rlim_cur != RLIM_INFINITY)
			(void)!timer_kick();	/* the timer thread polls it (update_rlimit_cpu) */
	}
	return 0;
}

long sys_getrlimit(struct task *t, const long a[6])
{
	const long b[6] = { 0, a[0], 0, a[1] };

	return sys_prlimit64(t, b);
}

long sys_setrlimit(struct task *t, const long a[6])
{
	const long b[6] = { 0, a[0], a[1], 0 };

	return sys_prlimit64(t, b);
}

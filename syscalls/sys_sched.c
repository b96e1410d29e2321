// SPDX-License-Identifier: GPL-2.0
/*
 * Scheduling hints of a guest thread: its CPU affinity, sched_setattr's
 * policy and nice value, its I/O priority. All are kept per task
 * (sentry/kernel/cred.c) and read back as Linux reports them; none changes
 * where or how the host runs the sentry's threads, which pvx places itself.
 * What needs a capability the guest does not hold (real-time and deadline
 * policies, the real-time I/O class) is EPERM, as for an unprivileged process.
 */
#include <linux/sched.h>
#include <sched.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "pvx/cred.h"
#include "pvx/kernel.h"
#include "syscalls/syscalls.h"

#define CAP_SYS_NICE_ 23

/* A live thread by tid, or t for 0; NULL when none (ESRCH). */
static struct task *sched_task(struct task *t, int pid)
{
	struct task *p = pid ? task_find(pid) : t;

	return p && p->state != TASK_ZOMBIE ? p : NULL;
}

/*
 * sched_setaffinity(2): "If the CPU set specified in mask does not
 * contain any CPU that the thread is permitted to run on, EINVAL"; a mask
 * longer than the kernel's is read only up to the kernel's size (a 1 MiB
 * len copies 128 bytes at most), a shorter one is zero-extended.
 */
long sys_sched_setaffinity(struct task *t, const long a[6])
{
	unsigned char mask[PVX_CPUMASK_WORDS * 8];
	size_t len = MIN((size_t)(unsigned)a[1], sizeof(mask));	/* "unsigned int len" */
	const unsigned char *start;
	long n = cpus_allowed(&start);

	if ((int)a[0] < 0)
		return -ESRCH;	/* find_process_by_pid() of a negative pid */
	if (n > 0)
		len = MIN(len, (size_t)n);
	if (len && copy_from_guest(t->mm, mask, (uint64_t)a[2], len))
		return -EFAULT;
	struct task *p = sched_task(t, (int)a[0]);
	if (!p)
		return -ESRCH;
	return task_set_affinity(p, mask, len);
}

/*
 * sched_getaffinity(2): the raw call returns min(len, the kernel's mask size);
 * EINVAL if len has fewer bits than the machine's CPU numbers or is not of longs.
 */
long sys_sched_getaffinity(struct task *t, const long a[6])
{
	unsigned char mask[PVX_CPUMASK_WORDS * 8];
	size_t len = (unsigned)a[1];

	if (len * 8 < (size_t)cpu_ids() || (len & (sizeof(long) - 1)))
		return -EINVAL;
	struct task *p = (int)a[0] < 0 ? NULL : sched_task(t, (int)a[0]);
	if (!p)
		return -ESRCH;
	long n = task_affinity(p, mask, sizeof(mask));
	if (n < 0)
		return -EINVAL;
	n = MIN((size_t)n, len);	/* min(len, cpumask_size()) */
	long r = copy_to_guest(t->mm, (uint64_t)a[2], mask, (size_t)n);
	return r ? r : n;
}

/*
 * sched_rr_get_interval(2): every guest thread is in the fair class, whose
 * answer is the host's for a thread of its own (pvx's are fair too).
 */
long sys_sched_rr_get_interval(struct task *t, const long a[6])
{
	struct timespec ts;

	if ((int)a[0] < 0)
		return -EINVAL;
	if (!sched_task(t, (int)a[0]))
		return -ESRCH;
	if (syscall(SYS_sched_rr_get_interval, 0, &ts) < 0)
		return neg_errno();
	return copy_to_guest(t->mm, (uint64_t)a[1], &ts, sizeof(ts));
}

#define ATTR_VER0 48	/* SCHED_ATTR_SIZE_VER0 */
#define ATTR_VER1 56
#define FLAG_RESET_ON_FORK 0x01
#define FLAG_KEEP_POLICY 0x08
#define FLAG_KEEP_PARAMS 0x10
#define FLAG_UTIL_CLAMP 0x60
#define FLAG_ALL 0x7f
#define FLAG_SUGOV 0x10000000

struct attr {
	uint32_t size, policy;
	uint64_t flags;
	int32_t nice;
	uint32_t priority;
	uint64_t runtime, deadline, period;
	uint32_t util_min, util_max;
};
_Static_assert(sizeof(struct attr) == ATTR_VER1, "struct sched_attr");

/*
 * sched_copy_attr(): size 0 is VER0; below VER0 or above a page, E2BIG with
 * the kernel's size written back; a larger struct's tail must be zeros.
 */
static long attr_in(struct task *t, uint64_t uattr, struct attr *at)
{
	uint32_t size;
	unsigned char tail[64];

	if (copy_from_guest(t->mm, &size, uattr, sizeof(size)))
		return -EFAULT;
	if (!size)
		size = ATTR_VER0;
	if (size < ATTR_VER0 || size > 4096)
		goto e2big;
	memset(at, 0, sizeof(*at));
	if (copy_from_guest(t->mm, at, uattr, MIN(size, (uint32_t)sizeof(*at))))
		return -EFAULT;
	for (uint64_t off = sizeof(*at); off < size; off += sizeof(tail)) {
		size_t n = MIN(sizeof(tail), size - off);
		if (copy_from_guest(t->mm, tail, uattr + off, n))
			return -EFAULT;
		for (size_t i = 0; i < n; i++)
			if (tail[i])
				goto e2big;
	}
	at->size = size;
	if ((at->flags & FLAG_UTIL_CLAMP) && size < ATTR_VER1)
		return -EINVAL;
	at->nice = at->nice < -20 ? -20 : at->nice > 19 ? 19 : at->nice;
	return 0;
e2big:
	size = sizeof(*at);
	return copy_to_guest(t->mm, uattr, &size, sizeof(size)) ? -EFAULT : -E2BIG;
}

/* __sched_setscheduler() for a caller without CAP_SYS_NICE's real-time rights: its checks in its order. */
static long attr_apply(struct task *p, struct attr *at)
{
	int policy = (int)at->policy;
	bool fair = policy == SCHED_OTHER || policy == SCHED_BATCH || policy == SCHED_IDLE;
	bool rt = policy == SCHED_FIFO || policy == SCHED_RR;
	bool reset = at->flags & FLAG_RESET_ON_FORK;

	if (at->flags & FLAG_KEEP_POLICY)	/* SETPARAM_POLICY: the policy and reset-on-fork stay */
		policy = p->sched_policy, fair = true, rt = false, reset = p->sched_reset_on_fork;
	else if (!fair && !rt && policy != SCHED_DEADLINE)
		return -EINVAL;
	if (at->flags & ~(uint64_t)(FLAG_ALL | FLAG_SUGOV))
		return -EINVAL;
	if (at->priority > 99 || (policy != SCHED_DEADLINE && rt != (at->priority != 0)))
		return -EINVAL;
	if (policy == SCHED_DEADLINE) {	/* __checkparam_dl() first, then "can't set SCHED_DEADLINE at all" */
		if (!at->deadline || at->runtime < 1024 || (at->period && at->period < at->deadline) ||
		    at->deadline < at->runtime || ((at->deadline | at->period) >> 63))
			return -EINVAL;
		return -EPERM;
	}
	if (rt)
		return -EPERM;	/* RLIMIT_RTPRIO aside, the stub would need the host's real-time rights */
	bool nice_ok = cred_host_cap(CAP_SYS_NICE_);
	int nice = (at->flags & FLAG_KEEP_PARAMS) ? p->proc->nice : at->nice;
	if (nice < p->proc->nice && !nice_ok && 20 - nice > (long)p->proc->rlim[RLIMIT_NICE].rlim_cur)
		return -EPERM;
	if (p->sched_policy == SCHED_IDLE && policy != SCHED_IDLE && !nice_ok &&
	    20 - p->proc->nice > (long)p->proc->rlim[RLIMIT_NICE].rlim_cur)
		return -EPERM;
	if (p->sched_reset_on_fork && !reset && !nice_ok)
		return -EPERM;
	if (at->flags & FLAG_SUGOV)
		return -EINVAL;
	if (at->flags & FLAG_UTIL_CLAMP)
		return -EOPNOTSUPP;	/* uclamp_validate() without CONFIG_UCLAMP_TASK */
	p->sched_reset_on_fork = reset;
	if (!(at->flags & FLAG_KEEP_PARAMS)) {	/* __setscheduler_params() is skipped: the policy stays too */
		p->sched_policy = policy;
		p->proc->nice = nice;
	}
	return 0;
}

/* sched_setattr(2): SCHED_OTHER, BATCH and IDLE with a nice value; FIFO, RR and DEADLINE are EPERM. */
long sys_sched_setattr(struct task *t, const long a[6])
{
	struct attr at;

	if (!a[1] || (int)a[0] < 0 || (unsigned)a[2])
		return -EINVAL;
	long r = attr_in(t, (uint64_t)a[1], &at);
	if (r < 0)
		return r;
	if ((int)at.policy < 0)
		return -EINVAL;
	struct task *p = sched_task(t, (int)a[0]);
	if (!p)
		return -ESRCH;
	return attr_apply(p, &at);
}

/* sched_getattr(2): min(size, the kernel's) bytes written, with that size in the size field. */
long sys_sched_getattr(struct task *t, const long a[6])
{
	uint32_t usize = (uint32_t)a[2];

	if (!a[1] || (int)a[0] < 0 || usize > 4096 || usize < ATTR_VER0 || (unsigned)a[3])
		return -EINVAL;
	struct task *p = sched_task(t, (int)a[0]);
	if (!p)
		return -ESRCH;
	struct attr at = {
		.size = MIN(usize, (uint32_t)sizeof(at)),
		.policy = (uint32_t)p->sched_policy,
		.flags = p->sched_reset_on_fork ? FLAG_RESET_ON_FORK : 0,
		.nice = p->proc->nice,
	};
	static const unsigned char zeros[256];
	long r = copy_to_guest(t->mm, (uint64_t)a[1], &at, at.size);
	/* copy_struct_to_user() (Linux 6.13 on): a newer caller's larger struct gets zeros past the kernel's */
	for (uint32_t off = at.size; !r && off < usize; off += sizeof(zeros))
		r = copy_to_guest(t->mm, (uint64_t)a[1] + off, zeros, MIN(sizeof(zeros), (size_t)(usize - off)));
	return r;
}

#define IOPRIO_CLASS(p) (((p) >> 13) & 7)
#define IOPRIO_LEVEL(p) ((p) & 7)
enum { WHO_PROCESS = 1, WHO_PGRP, WHO_USER };

/* ioprio_check_cap(): RT needs CAP_SYS_ADMIN or CAP_SYS_NICE, which the guest does not hold. */
static long ioprio_check(int ioprio)
{
	switch (IOPRIO_CLASS(ioprio)) {
	case 1:	/* RT */
		return -EPERM;
	case 2:	/* BE */
		return IOPRIO_LEVEL(ioprio) >= 8 ? -EINVAL : 0;
	case 3:	/* IDLE */
		return 0;
	case 0:	/* NONE */
		return IOPRIO_LEVEL(ioprio) ? -EINVAL : 0;
	}
	return -EINVAL;
}

/* Does task o belong to ioprio's (which, who) as t asks? Every guest task has the sandbox's uid. */
static bool ioprio_match(const struct task *o, int which, int who, const struct task *t)
{
	if (o->state == TASK_ZOMBIE || o->exited || !o->proc)
		return false;
	if (which == WHO_PGRP)
		return o->proc->pgid == (who ? who : t->proc->pgid);
	return !who || (unsigned)who == sandbox.uid;
}

/* ioprio_set(2): the value is kept by the task (and inherited unless class NONE), as an io_context's. */
long sys_ioprio_set(struct task *t, const long a[6])
{
	int which = (int)a[0], who = (int)a[1], ioprio = (int)a[2];
	long r = ioprio_check(ioprio);
	bool found = false;

	if (r < 0)
		return r;
	if (which == WHO_PROCESS) {
		struct task *p = sched_task(t, who);
		if (!p)
			return -ESRCH;
		p->ioprio = ioprio;
		p->has_ioprio = true;
		return 0;
	}
	if (which != WHO_PGRP && which != WHO_USER)
		return -EINVAL;
	for (struct task *o = task_next(NULL); o; o = task_next(o)) {
		if (!ioprio_match(o, which, who, t))
			continue;
		o->ioprio = ioprio;
		o->has_ioprio = true;
		found = true;
	}
	return found ? 0 : -ESRCH;
}

/* ioprio_best(): class NONE counts as BE level 4; the lower value wins. */
static int ioprio_best(int x, int y)
{
	x = IOPRIO_CLASS(x) ? x : (2 << 13) | 4;
	y = IOPRIO_CLASS(y) ? y : (2 << 13) | 4;
	return MIN(x, y);
}

/* ioprio_get(2): one thread's, or the best of a process group's or the user's. */
long sys_ioprio_get(struct task *t, const long a[6])
{
	int which = (int)a[0], who = (int)a[1];
	long best = -ESRCH;

	if (which == WHO_PROCESS) {
		struct task *p = sched_task(t, who);
		return p ? task_ioprio(p) : -ESRCH;
	}
	if (which != WHO_PGRP && which != WHO_USER)
		return -EINVAL;
	for (struct task *o = task_next(NULL); o; o = task_next(o)) {
		if (!ioprio_match(o, which, who, t))
			continue;
		int v = task_ioprio(o);
		best = best == -ESRCH ? v : ioprio_best((int)best, v);
	}
	return best;
}

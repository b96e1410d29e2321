// SPDX-License-Identifier: GPL-2.0
/*
 * Process identity, exit, signals (recorded), limits and arch state of the
 * single guest task. The guest lives in its own pid space: it is pid 1.
 */
#include <asm/prctl.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/sysinfo.h>
#include <sys/utsname.h>
#include <linux/futex.h>
#include <time.h>

#include "pvx/kernel.h"
#include "pvx/log.h"

#include "syscalls/syscalls.h"

/* exit_group(2); with one task, exit(2) is the same. */
long sys_exit_group(struct task *t, const long a[6])
{
	t->exiting = true;
	t->exit_status = ((int)a[0] & 0xff) << 8;
	return 0;
}

long sys_exit(struct task *t, const long a[6])
{
	return sys_exit_group(t, a);
}

long sys_getpid(struct task *t, const long a[6] __unused)
{
	return t->pid;
}

long sys_getppid(struct task *t, const long a[6] __unused)
{
	return t->ppid;
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

/* uname(2): the host's kernel identity under the sandbox's own host name. */
long sys_uname(struct task *t, const long a[6])
{
	struct utsname u;

	if (uname(&u) < 0)
		return neg_errno();
	strcpy(u.nodename, "pvx");
	strcpy(u.domainname, "(none)");
	return copy_to_guest(&t->mm, (uint64_t)a[0], &u, sizeof(u));
}

/* arch_prctl(2): the guest's fs/gs base live in its registers. */
long sys_arch_prctl(struct task *t, const long a[6])
{
	uint64_t addr = (uint64_t)a[1];

	switch (a[0]) {
	case ARCH_SET_FS:
	case ARCH_SET_GS:
		if (addr >= PVX_GUEST_TASK_SIZE)
			return -EPERM;
		*(a[0] == ARCH_SET_FS ? &t->regs.fs_base : &t->regs.gs_base) = addr;
		return 0;
	case ARCH_GET_FS:
		return copy_to_guest(&t->mm, addr, &t->regs.fs_base, sizeof(uint64_t));
	case ARCH_GET_GS:
		return copy_to_guest(&t->mm, addr, &t->regs.gs_base, sizeof(uint64_t));
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

/* prlimit64(2) on the guest itself: reading is allowed, raising or lowering is not. */
long sys_prlimit64(struct task *t, const long a[6])
{
	struct rlimit rl;

	if ((int)a[0] != 0 && (int)a[0] != t->pid)
		return -ESRCH;
	if (a[1] < 0 || a[1] >= RLIM_NLIMITS)
		return -EINVAL;
	if (a[2])
		return -EPERM;
	if (!a[3])
		return 0;
	if (a[1] == RLIMIT_NOFILE)
		rl = (struct rlimit){ PVX_NR_OPEN, PVX_NR_OPEN };
	else if (a[1] == RLIMIT_STACK)
		rl = (struct rlimit){ PVX_STACK_SIZE, RLIM_INFINITY };
	else if (getrlimit((int)a[1], &rl) < 0)
		return neg_errno();
	return copy_to_guest(&t->mm, (uint64_t)a[3], &rl, sizeof(rl));
}

long sys_getrlimit(struct task *t, const long a[6])
{
	const long b[6] = { 0, a[0], 0, a[1] };

	return sys_prlimit64(t, b);
}

long sys_sysinfo(struct task *t, const long a[6])
{
	struct sysinfo si;

	if (sysinfo(&si) < 0)
		return neg_errno();
	si.procs = 1;
	return copy_to_guest(&t->mm, (uint64_t)a[0], &si, sizeof(si));
}

/* sched_getaffinity(2): the raw call returns the size of the kernel's mask. */
long sys_sched_getaffinity(struct task *t, const long a[6])
{
	size_t len = MIN((size_t)a[1], 1024UL);
	unsigned char mask[1024];

	if ((int)a[0] != 0 && (int)a[0] != t->tid)
		return -ESRCH;
	long n = syscall(SYS_sched_getaffinity, 0, len, mask);
	if (n < 0)
		return neg_errno();
	long r = copy_to_guest(&t->mm, (uint64_t)a[2], mask, (size_t)n);
	return r ? r : n;
}

long sys_sched_yield(struct task *t __unused, const long a[6] __unused)
{
	return 0;
}

/*
 * futex(2) for a single-threaded guest: nobody else can wake a waiter, so
 * FUTEX_WAKE wakes 0 and a FUTEX_WAIT whose value still matches only ends
 * by its timeout. Threads bring a real futex table (the processes issue).
 */
long sys_futex(struct task *t, const long a[6])
{
	int op = (int)a[1] & FUTEX_CMD_MASK;
	uint32_t val;
	long r;

	switch (op) {
	case FUTEX_WAKE:
	case FUTEX_WAKE_BITSET:
		return 0;
	case FUTEX_WAIT:
	case FUTEX_WAIT_BITSET:
		if ((uint64_t)a[0] & 3)
			return -EINVAL;
		if ((r = copy_from_guest(&t->mm, &val, (uint64_t)a[0], sizeof(val))))
			return r;
		if (val != (uint32_t)a[2])
			return -EAGAIN;
		if (!a[3]) {
			pr_warn("single-threaded guest waits on a futex forever");
			return -EDEADLK;
		}
		struct timespec ts;
		if ((r = copy_from_guest(&t->mm, &ts, (uint64_t)a[3], sizeof(ts))))
			return r;
		if (ts.tv_sec < 0 || ts.tv_nsec < 0 || ts.tv_nsec >= 1000000000L)
			return -EINVAL;
		/* FUTEX_WAIT: relative, monotonic; FUTEX_WAIT_BITSET: absolute. */
		clockid_t clk = (int)a[1] & FUTEX_CLOCK_REALTIME ? CLOCK_REALTIME : CLOCK_MONOTONIC;
		sentry_unlock();
		r = -clock_nanosleep(clk, op == FUTEX_WAIT_BITSET ? TIMER_ABSTIME : 0, &ts, NULL);
		sentry_lock();
		return r ? r : -ETIMEDOUT;
	}
	return -ENOSYS;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * Resource usage of guest tasks: what guest code used of the host, read
 * from the host threads that ran it, for getrusage(2), times(2) and the
 * rusage of wait4/waitid (syscalls/sys_rusage.c, sys_process.c).
 *
 * ptrace and seccomp run guest code in the stub: a process's CPU time is
 * its stub's (/proc/STUB/stat counts the stub's exited threads too), a
 * thread's that of its stub thread (/proc/STUB/task/TID/stat). vmexec runs
 * it on the task's own sentry thread (/proc/self/task/TID/stat), so a
 * process adds up its live threads and keeps what exited ones ran in
 * usage_gone. The sentry's emulation of a guest syscall on ptrace and
 * seccomp runs in the sentry, not in the stub: it is not the guest's time
 * and is left out, so their stime is only the traps' cost (and a seccomp
 * stub's brief spin while it waits for the answer, as user time). On
 * vmexec the sentry thread's time includes its emulation: the share a
 * kernel would count as the guest's system time.
 * Linux keeps a process's usage across execve, which gets a new stub on
 * ptrace and seccomp: the old one's is added to usage_gone first. /proc gives clock ticks (10 ms with USER_HZ 100).
 *
 * ru_maxrss is the stub's VmHWM: on every platform the stub owns the
 * guest's mm. Page faults are ru_minflt/ru_majflt of the same threads.
 * Context switches and block I/O are reported as 0: a stub thread switches
 * at every trap, which says nothing about the guest.
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/times.h>
#include <time.h>

#include "pvx/kernel.h"
#include "pvx/log.h"
#include "pvx/rusage.h"
#include "sentry/platform/platform.h"

/* Add u into to: times and faults add up, the peak is the larger. */
static void usage_add(struct guest_usage *to, const struct guest_usage *u)
{
	to->utime_us += u->utime_us;
	to->stime_us += u->stime_us;
	to->minflt += u->minflt;
	to->majflt += u->majflt;
	to->maxrss_kb = MAX(to->maxrss_kb, u->maxrss_kb);
}

/* USER_HZ: what /proc/.../stat counts in. */
static long clk_tck(void)
{
	static long hz;

	if (!hz)
		hz = sysconf(_SC_CLK_TCK) > 0 ? sysconf(_SC_CLK_TCK) : 100;
	return hz;
}

/* Read a small /proc file into buf (NUL-terminated); its length or -errno. */
static long read_proc(const char *path, char *buf, size_t size)
{
	int fd cleanup_close = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return neg_errno();
	ssize_t n = read(fd, buf, size - 1);
	if (n < 0)
		return neg_errno();
	buf[n] = 0;
	return n;
}

/*
 * Add the minflt (10), majflt (12), utime (14) and stime (15) fields of a
 * /proc/.../stat file (proc_pid_stat(5)) to *u.
 */
static long add_stat(struct guest_usage *u, const char *path)
{
	char buf[1024];
	unsigned long minflt, majflt, ut, st;
	long r = read_proc(path, buf, sizeof(buf));

	if (r < 0)
		return r;
	const char *s = strrchr(buf, ')');	/* the comm may hold spaces and parentheses */
	if (!s || sscanf(s + 1, " %*c %*d %*d %*d %*d %*d %*u %lu %*u %lu %*u %lu %lu", &minflt, &majflt, &ut,
			 &st) != 4)
		return -EIO;
	u->utime_us += ut * 1000000UL / (unsigned long)clk_tck();
	u->stime_us += st * 1000000UL / (unsigned long)clk_tck();
	u->minflt += minflt;
	u->majflt += majflt;
	return 0;
}

/* The same for a host thread or process by its ids, logging a failure (the thread may be gone). */
static void add_host(struct guest_usage *u, pid_t pid, pid_t tid)
{
	char path[64];

	if (tid)
		snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", pid, tid);
	else
		snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	long r = add_stat(u, path);
	if (r < 0)
		pr_debug("rusage: %s: %s", path, strerror((int)-r));
}

/* The peak resident set of the stub's mm (VmHWM of /proc/PID/status; none once it died). */
static uint64_t stub_hwm_kb(const struct addr_space *as)
{
	char path[64], buf[4096];
	unsigned long kb = 0;

	if (!as || as->pid <= 0)
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/status", as->pid);
	if (read_proc(path, buf, sizeof(buf)) < 0)
		return 0;
	const char *s = strstr(buf, "\nVmHWM:");
	return s && sscanf(s + 7, "%lu", &kb) == 1 ? kb : 0;
}

/* The larger of kb and the stub's VmHWM, read once (MAX would read the file twice, and could take a 0 the second time). */
static uint64_t hwm_max(uint64_t kb, const struct addr_space *as)
{
	uint64_t hwm = stub_hwm_kb(as);

	return MAX(kb, hwm);
}

/* See pvx/rusage.h: the second field of the stub's /proc/PID/statm. */
unsigned long usage_rss_pages(const struct process *p)
{
	char path[64], buf[128];
	unsigned long size = 0, rss = 0;

	if (!p->as || p->as->pid <= 0)
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/statm", p->as->pid);
	if (read_proc(path, buf, sizeof(buf)) < 0)
		return 0;
	return sscanf(buf, "%lu %lu", &size, &rss) == 2 ? rss : 0;
}

/* RUSAGE_SELF: the exited threads' and left stubs' usage and that of every live thread of p. */
void usage_of_process(const struct process *p, struct guest_usage *u)
{
	*u = p->usage_gone;
	if (p->as && ctx_in_stub(p->as->ctxs)) {
		add_host(u, p->as->pid, 0);
	} else {
		for (struct task *o = task_next(NULL); o; o = task_next(o))
			if (o->proc == p && o->ctx && o->host_tid)	/* ctx: not exited yet */
				add_host(u, getpid(), o->host_tid);
	}
	u->maxrss_kb = hwm_max(u->maxrss_kb, p->as);
}

/* RUSAGE_THREAD: t's host thread; the peak memory is the process's, as on Linux. */
void usage_of_thread(const struct task *t, struct guest_usage *u)
{
	*u = t->usage_exec;
	if (ctx_in_stub(t->ctx))
		add_host(u, t->ctx->as->pid, t->ctx->tid);
	else if (t->ctx && t->host_tid)
		add_host(u, getpid(), t->host_tid);
	u->maxrss_kb = hwm_max(t->proc->usage_gone.maxrss_kb, t->proc->as);
}

/*
 * A host thread's run time (CPUCLOCK_SCHED) in ns; 0 if it is gone. The
 * sentry's own threads by their clock (MAKE_THREAD_CPUCLOCK: readable in the
 * same thread group only), a stub's from /proc/PID/task/TID/schedstat, or
 * in clock ticks from its stat where the kernel has no schedstat
 * (CONFIG_SCHED_INFO off, as in the VM suite's kernel).
 */
static uint64_t sched_ns(pid_t pid, pid_t tid)
{
	char path[64], buf[128];
	unsigned long long ns = 0;
	struct timespec ts;

	if (pid == getpid())
		return clock_gettime((clockid_t)((~(unsigned)tid << 3) | 4 | 2), &ts) == 0
			       ? (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec : 0;
	snprintf(path, sizeof(path), "/proc/%d/task/%d/schedstat", pid, tid);
	if (read_proc(path, buf, sizeof(buf)) >= 0 && sscanf(buf, "%llu", &ns) == 1)
		return ns;
	struct guest_usage u = { 0 };
	add_host(&u, pid, tid);
	return (u.utime_us + u.stime_us) * 1000ULL;
}

/*
 * See pvx/rusage.h. CPUCLOCK_SCHED is what the host's clocks say of the
 * threads that ran guest code (rusage.c's top comment: the stub's, or on
 * vmexec the task's own sentry threads), plus what exited threads and left
 * stubs ran (kept in us); PROF and VIRT are getrusage's times.
 */
uint64_t usage_cpu_ns(const struct process *p, const struct task *t, int which)
{
	struct guest_usage u;

	if (which != 2) {
		if (t)
			usage_of_thread(t, &u);
		else
			usage_of_process(p, &u);
		return (u.utime_us + (which == 1 ? 0 : u.stime_us)) * 1000ULL;
	}
	if (t) {
		uint64_t ns = (t->usage_exec.utime_us + t->usage_exec.stime_us) * 1000ULL;
		if (ctx_in_stub(t->ctx))
			return ns + sched_ns(t->ctx->as->pid, t->ctx->tid);
		return t->ctx && t->host_tid ? ns + sched_ns(getpid(), t->host_tid) : ns;
	}
	uint64_t ns = (p->usage_gone.utime_us + p->usage_gone.stime_us) * 1000ULL;
	if (p->as && ctx_in_stub(p->as->ctxs))
		return ns + stub_cpu_ns(p->as->pid);
	for (struct task *o = task_next(NULL); o; o = task_next(o))
		if (o->proc == p && o->ctx && o->host_tid)	/* ctx: not exited yet */
			ns += sched_ns(getpid(), o->host_tid);
	return ns;
}

/* See pvx/rusage.h. */
void usage_thread_exit(struct task *t)
{
	if (t->ctx && !ctx_in_stub(t->ctx) && t->host_tid)
		add_host(&t->proc->usage_gone, getpid(), t->host_tid);
}

/* See pvx/rusage.h. */
void usage_stub_gone(struct task *t, struct addr_space *as, struct platform_ctx *ctx)
{
	struct process *p = t->proc;

	if (!as)
		return;
	/* exec_mmap(): "setmax_mm_hiwater_rss(&tsk->signal->maxrss, old_mm)". */
	p->usage_gone.maxrss_kb = hwm_max(p->usage_gone.maxrss_kb, as);
	if (!ctx_in_stub(as->ctxs))
		return;	/* vmexec: the sentry threads hold the time, they go on */
	add_host(&p->usage_gone, as->pid, 0);
	if (ctx_in_stub(ctx))
		add_host(&t->usage_exec, as->pid, ctx->tid);
}

/* See pvx/rusage.h. */
void usage_stub_reaped(struct process *p, bool in_stub, const struct rusage *ru)
{
	struct guest_usage u = { .maxrss_kb = ru->ru_maxrss > 0 ? (uint64_t)ru->ru_maxrss : 0 };

	if (in_stub) {
		u.utime_us = (uint64_t)ru->ru_utime.tv_sec * 1000000ULL + (uint64_t)ru->ru_utime.tv_usec;
		u.stime_us = (uint64_t)ru->ru_stime.tv_sec * 1000000ULL + (uint64_t)ru->ru_stime.tv_usec;
		u.minflt = (uint64_t)ru->ru_minflt;
		u.majflt = (uint64_t)ru->ru_majflt;
	}
	usage_add(&p->usage_gone, &u);
}

/* See pvx/rusage.h. */
void usage_keep_maxrss(struct process *p)
{
	p->usage_gone.maxrss_kb = hwm_max(p->usage_gone.maxrss_kb, p->as);
}

/* The struct rusage the guest gets for u. */
void usage_to_rusage(const struct guest_usage *u, struct rusage *ru)
{
	memset(ru, 0, sizeof(*ru));
	ru->ru_utime.tv_sec = (time_t)(u->utime_us / 1000000);
	ru->ru_utime.tv_usec = (suseconds_t)(u->utime_us % 1000000);
	ru->ru_stime.tv_sec = (time_t)(u->stime_us / 1000000);
	ru->ru_stime.tv_usec = (suseconds_t)(u->stime_us % 1000000);
	ru->ru_maxrss = (long)u->maxrss_kb;
	ru->ru_minflt = (long)u->minflt;
	ru->ru_majflt = (long)u->majflt;
}

/*
 * wait_task_zombie(): the waiter gets getrusage(child, RUSAGE_BOTH), and
 * reaping adds the child's usage and its reaped children's to the
 * parent's. A child reaped by itself (SIGCHLD ignored, SA_NOCLDWAIT) is
 * not counted: "This nonconformance is rectified in Linux 2.6.9".
 */
void usage_reap(struct process *parent, const struct process *c, bool nowait, struct rusage *ru)
{
	struct guest_usage u;

	usage_of_process(c, &u);
	usage_add(&u, &c->usage_children);
	if (ru)
		usage_to_rusage(&u, ru);
	if (!nowait)
		usage_add(&parent->usage_children, &u);
}

/* us of CPU time in clock ticks (times(2), /proc). */
clock_t usage_ticks(uint64_t us)
{
	return (clock_t)(us * (uint64_t)clk_tck() / 1000000);
}

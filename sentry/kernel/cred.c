// SPDX-License-Identifier: GPL-2.0
/*
 * What a process may use of the machine: its resource limits and nice
 * value (getrlimit(2), setpriority(2): syscalls/sys_cred.c), set for the
 * first process and copied by fork, and the CPUs every guest thread may
 * run on (sched_getaffinity(2): syscalls/sys_proc.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "pvx/cred.h"
#include "pvx/keys.h"
#include "pvx/sigqueue.h"
#include "pvx/task.h"
#include "pvx/kernel.h"
#include "pvx/sandbox.h"

/*
 * The first process: the host's limits and nice value, but RLIMIT_NOFILE
 * as pvx was given it (*nofile, before pvx raised its own) up to the
 * sandbox's fs.nr_open, its soft limit at most half the sentry's, the
 * loader's stack and at most the sentry's cap on queued signals.
 */
void cred_init(struct process *p, const struct rlimit *nofile)
{
	for (int r = 0; r < RLIM_NLIMITS; r++) {
		struct rlimit rl;
		if (getrlimit(r, &rl) < 0)
			rl = (struct rlimit){ RLIM_INFINITY, RLIM_INFINITY };
		p->rlim[r] = rl;
	}
	/*
	 * Every guest fd is a host fd of the sentry's, whose own limit is the
	 * host's (raised by raise_fd_limit): the first process's soft limit
	 * leaves half of it to the rest of the sandbox, so a guest that fills
	 * its table meets its own EMFILE, not the sentry's (LTP's creat05,
	 * pipe06, fork09 do). Raising it to the hard limit stays allowed.
	 */
	rlim_t host = p->rlim[RLIMIT_NOFILE].rlim_cur;
	p->rlim[RLIMIT_NOFILE] = (struct rlimit){ MIN(MIN(nofile->rlim_cur, host / 2), PVX_NR_OPEN),
						  MIN(nofile->rlim_max, PVX_NR_OPEN) };
	p->rlim[RLIMIT_STACK] = (struct rlimit){ PVX_STACK_SIZE, RLIM_INFINITY };	/* what the loader maps */
	struct rlimit *sq = &p->rlim[RLIMIT_SIGPENDING];	/* the sentry queues no more, whatever the limit */
	sq->rlim_cur = MIN(sq->rlim_cur, (rlim_t)PVX_SIGQ_MAX);
	sq->rlim_max = MIN(sq->rlim_max, (rlim_t)PVX_SIGQ_MAX);
	errno = 0;
	int nice = getpriority(PRIO_PROCESS, 0);
	p->nice = errno ? 0 : nice;
}

/* See pvx/cred.h. */
bool cred_host_cap(int cap)
{
	struct { uint32_t version; int pid; } hdr = { 0x20080522, 0 };
	struct { uint32_t effective, permitted, inheritable; } data[2];

	if (cap < 0 || cap >= 64 || syscall(SYS_capget, &hdr, data) < 0)
		return false;
	return data[cap / 32].effective & (1U << (cap % 32));
}

/* fork: the child's limits and nice value are the parent's (copy_signal, sched_fork). */
void cred_fork(struct process *child, const struct process *parent)
{
	memcpy(child->rlim, parent->rlim, sizeof(child->rlim));
	child->nice = parent->nice;
	child->membarrier_reg = parent->membarrier_reg;	/* dup_mm() copies the mm's membarrier_state */
}

/*
 * The CPUs pvx was started on: what every guest thread may run on. The
 * sentry's own threads get pinned later (sentry/platform/seccomp.c), and a
 * guest must not see that as "one CPU" (nproc, make -j, thread pools).
 */
static unsigned char start_cpus[1024];
static long start_cpus_len;

/* Read at start, before any thread of pvx is pinned. */
__attribute__((constructor)) static void save_start_cpus(void)
{
	start_cpus_len = syscall(SYS_sched_getaffinity, 0, sizeof(start_cpus), start_cpus);
}

/* See pvx/cred.h: the host's possible CPUs' highest number + 1, as /sys says it (else the start mask's). */
int cpu_ids(void)
{
	static int ids;
	char buf[256];

	if (ids)
		return ids;
	int fd = open("/sys/devices/system/cpu/possible", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
	if (fd >= 0)
		close(fd);
	if (n > 0) {
		buf[n] = 0;
		char *last = buf + strcspn(buf, "\n");
		while (last > buf && !(last[-1] == ',' || last[-1] == '-'))
			last--;
		ids = atoi(last) + 1;
	}
	for (long i = 0; ids <= 0 && i < start_cpus_len * 8; i++)
		if (start_cpus[i / 8] & (1 << (i % 8)))
			ids = (int)i + 1;
	return ids > 0 ? ids : 1;
}

/* See pvx/cred.h. */
long cpus_allowed(const unsigned char **mask)
{
	*mask = start_cpus;
	return start_cpus_len;
}

/* See pvx/cred.h. The mask is kept, not applied: the host threads run where pvx runs them. */
long task_affinity(const struct task *t, unsigned char *mask, size_t size)
{
	bool set = false;

	if (start_cpus_len <= 0 || (size_t)start_cpus_len > sizeof(t->cpumask))
		return -EINVAL;
	for (int i = 0; i < PVX_CPUMASK_WORDS; i++)
		set |= t->cpumask[i] != 0;
	memset(mask, 0, size);
	memcpy(mask, set ? (const unsigned char *)t->cpumask : start_cpus, MIN(size, (size_t)start_cpus_len));
	return start_cpus_len;
}

/* See pvx/cred.h: as __sched_setaffinity(), the request and the allowed CPUs; bits past them are ignored. */
long task_set_affinity(struct task *t, const unsigned char *req, size_t len)
{
	unsigned char m[sizeof(t->cpumask)] = { 0 };
	bool any = false;

	if (start_cpus_len <= 0 || (size_t)start_cpus_len > sizeof(m))
		return -EINVAL;
	for (long i = 0; i < start_cpus_len; i++) {
		m[i] = (size_t)i < len ? req[i] & start_cpus[i] : 0;
		any |= m[i] != 0;
	}
	if (!any)
		return -EINVAL;
	memcpy(t->cpumask, m, sizeof(m));
	return 0;
}

#define IOPRIO_CLASS(p) (((p) >> 13) & 7)

/* See pvx/cred.h: copy_io() and sched_fork(). */
void cred_clone_task(struct task *child, const struct task *t, bool new_process)
{
	memcpy(child->cpumask, t->cpumask, sizeof(child->cpumask));
	child->timer_slack_ns = child->default_timer_slack_ns = t->timer_slack_ns;	/* copy_process() */
	child->has_ioprio = t->has_ioprio && IOPRIO_CLASS(t->ioprio) != 0;
	child->ioprio = child->has_ioprio ? t->ioprio : 0;
	child->mempolicy = t->mempolicy;	/* copy_process(): mpol_dup(p->mempolicy) */
	child->sched_reset_on_fork = false;
	if (t->sched_reset_on_fork && new_process && child->proc->nice < 0)
		child->proc->nice = 0;
	keys_clone_task(child, t, new_process);
}

/* See pvx/cred.h: the value set, IOPRIO_DEFAULT (0) without one (block/ioprio.c's get_task_ioprio()). */
int task_ioprio(const struct task *t)
{
	return t->has_ioprio ? t->ioprio : 0;
}

/*
 * See pvx/cred.h: generic_write_check_limits() and inode_newsize_ok():
 * "EFBIG An attempt was made to write a file that exceeds the ... process's
 * file size limit", with SIGXFSZ; a write that starts below it is cut short.
 */
long cred_fsize_check(struct task *t, uint64_t pos, uint64_t *count)
{
	rlim_t limit = t->proc->rlim[RLIMIT_FSIZE].rlim_cur;
	struct sig_info info = { SI_USER, 0, 0, 0 };

	if (limit == RLIM_INFINITY)
		return 0;
	if (pos >= limit) {
		info.pid = t->pid;
		(void)!signal_queue(t, SIGXFSZ, &info);
		return -EFBIG;
	}
	if (count && *count > limit - pos)
		*count = limit - pos;
	return 0;
}

/*
 * See pvx/cred.h: copy_process()'s "EAGAIN ... the RLIMIT_NPROC soft
 * resource limit was encountered", counting every task of the sandbox's
 * one uid, zombies too (until reaped) and the new one; root is exempt.
 */
long cred_nproc_check(const struct task *t)
{
	rlim_t max = t->proc->rlim[RLIMIT_NPROC].rlim_cur;
	rlim_t n = 1;

	if (max == RLIM_INFINITY || sandbox.uid == 0)
		return 0;
	for (struct task *o = task_next(NULL); o; o = task_next(o))
		n++;
	return n > max ? -EAGAIN : 0;
}

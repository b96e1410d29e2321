// SPDX-License-Identifier: GPL-2.0
/*
 * What a process may use of the machine: its resource limits and nice
 * value (getrlimit(2), setpriority(2): syscalls/sys_cred.c), set for the
 * first process and copied by fork, and the CPUs every guest thread may
 * run on (sched_getaffinity(2): syscalls/sys_proc.c).
 */
#include <errno.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "pvx/cred.h"
#include "pvx/sigqueue.h"
#include "pvx/task.h"

/*
 * The first process: the host's limits and nice value, but RLIMIT_NOFILE
 * as pvx was given it (*nofile, before pvx raised its own) up to the
 * sandbox's fs.nr_open, the loader's stack and at most the sentry's cap on
 * queued signals.
 */
void cred_init(struct process *p, const struct rlimit *nofile)
{
	for (int r = 0; r < RLIM_NLIMITS; r++) {
		struct rlimit rl;
		if (getrlimit(r, &rl) < 0)
			rl = (struct rlimit){ RLIM_INFINITY, RLIM_INFINITY };
		p->rlim[r] = rl;
	}
	p->rlim[RLIMIT_NOFILE] = (struct rlimit){ MIN(nofile->rlim_cur, PVX_NR_OPEN), MIN(nofile->rlim_max, PVX_NR_OPEN) };
	p->rlim[RLIMIT_STACK] = (struct rlimit){ PVX_STACK_SIZE, RLIM_INFINITY };	/* what the loader maps */
	struct rlimit *sq = &p->rlim[RLIMIT_SIGPENDING];	/* the sentry queues no more, whatever the limit */
	sq->rlim_cur = MIN(sq->rlim_cur, (rlim_t)PVX_SIGQ_MAX);
	sq->rlim_max = MIN(sq->rlim_max, (rlim_t)PVX_SIGQ_MAX);
	errno = 0;
	int nice = getpriority(PRIO_PROCESS, 0);
	p->nice = errno ? 0 : nice;
}

/* fork: the child's limits and nice value are the parent's (copy_signal, sched_fork). */
void cred_fork(struct process *child, const struct process *parent)
{
	memcpy(child->rlim, parent->rlim, sizeof(child->rlim));
	child->nice = parent->nice;
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

/* See pvx/cred.h. */
long cpus_allowed(const unsigned char **mask)
{
	*mask = start_cpus;
	return start_cpus_len;
}

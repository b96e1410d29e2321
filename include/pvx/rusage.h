/* SPDX-License-Identifier: GPL-2.0 */
/* Resource usage of guest tasks (sentry/kernel/rusage.c); all under the sentry lock. */
#ifndef PVX_RUSAGE_H
#define PVX_RUSAGE_H

#include <sys/resource.h>
#include <sys/times.h>
#include "pvx/task.h"

/* t is done with guest code: keep what its sentry thread ran, when guest code ran there (vmexec). */
void usage_thread_exit(struct task *t);
/* The stub of as is about to be killed (execve, exit): t's process keeps what it ran, t what ctx ran. */
void usage_stub_gone(struct task *t, struct addr_space *as, struct platform_ctx *ctx);
/*
 * The process of the exiting t had the stub that was just reaped with
 * usage ru: it keeps its peak memory, and what guest code ran there when
 * it ran in the stub (in_stub; vmexec runs it on sentry threads).
 */
void usage_stub_reaped(struct process *p, bool in_stub, const struct rusage *ru);
/* p is about to be SIGKILLed: keep its peak memory while its stub still has it. */
void usage_keep_maxrss(struct process *p);
/*
 * Reaping zombie c (wait4, waitid): its usage with its children's into *ru
 * (may be NULL), and into parent's RUSAGE_CHILDREN unless nowait.
 */
void usage_reap(struct process *parent, const struct process *c, bool nowait, struct rusage *ru);
/* RUSAGE_SELF of p: its exited threads', left stubs' and live threads' usage. */
void usage_of_process(const struct process *p, struct guest_usage *u);
/* The guest's resident pages now: its stub's, the stub's own few pages included (/proc/PID/stat's rss). */
unsigned long usage_rss_pages(const struct process *p);
/* RUSAGE_THREAD of t (the peak memory is the process's, as on Linux). */
void usage_of_thread(const struct task *t, struct guest_usage *u);
/*
 * A guest CPU-time clock now, in ns: of t's thread, or (t NULL) of process p;
 * which is Linux's CPUCLOCK_PROF (0: user + system), _VIRT (1: user) or
 * _SCHED (2: run time, ns-exact; the other two count clock ticks).
 */
uint64_t usage_cpu_ns(const struct process *p, const struct task *t, int which);
/* The struct rusage the guest gets for u. */
void usage_to_rusage(const struct guest_usage *u, struct rusage *ru);
/* us of CPU time in clock ticks (USER_HZ). */
clock_t usage_ticks(uint64_t us);

#endif

/* SPDX-License-Identifier: GPL-2.0 */
/* Limits, nice value and allowed CPUs of guest processes (sentry/kernel/cred.c). */
#ifndef PVX_CRED_H
#define PVX_CRED_H

#include <sys/resource.h>

#include "pvx/task.h"

/* Limits and nice value of the first process, and a fork child's. */
void cred_init(struct process *p, const struct rlimit *nofile);
void cred_fork(struct process *child, const struct process *parent);
/* nr_cpu_ids: a sched_getaffinity len below it in bits is EINVAL. */
int cpu_ids(void);
/* Does pvx itself hold capability cap (effective)? Root in a container may not. */
bool cred_host_cap(int cap);
/* The CPU mask pvx was started on (*mask) and its size in bytes, as the raw sched_getaffinity; <0: unknown. */
long cpus_allowed(const unsigned char **mask);

/*
 * The task's CPU mask into mask (size bytes, zero-filled past the host's
 * mask size); returns that size, as the raw sched_getaffinity does, or <0.
 */
long task_affinity(const struct task *t, unsigned char *mask, size_t size) __must_check;
/* sched_setaffinity: req (len bytes) intersected with the CPUs pvx may use; -EINVAL when that is empty. */
long task_set_affinity(struct task *t, const unsigned char *req, size_t len) __must_check;
/* What a new thread or process takes from t: its mask, ioprio (unless class NONE), reset-on-fork's effect. */
void cred_clone_task(struct task *child, const struct task *t, bool new_process);
/* ioprio_get of one task: the value it set, else 0 (class NONE). */
int task_ioprio(const struct task *t);
/* RLIMIT_FSIZE for a write at pos (count cut to the limit, if given) or a size of pos: -EFBIG and SIGXFSZ past it. */
long cred_fsize_check(struct task *t, uint64_t pos, uint64_t *count) __must_check;
/* RLIMIT_NPROC for a new task of t's: -EAGAIN past it. */
long cred_nproc_check(const struct task *t) __must_check;

#endif

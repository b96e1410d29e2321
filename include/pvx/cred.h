/* SPDX-License-Identifier: GPL-2.0 */
/* Limits, nice value and allowed CPUs of guest processes (sentry/kernel/cred.c). */
#ifndef PVX_CRED_H
#define PVX_CRED_H

#include <sys/resource.h>

#include "pvx/task.h"

/* Limits and nice value of the first process, and a fork child's. */
void cred_init(struct process *p, const struct rlimit *nofile);
void cred_fork(struct process *child, const struct process *parent);
/* The CPU mask pvx was started on (*mask) and its size in bytes, as the raw sched_getaffinity; <0: unknown. */
long cpus_allowed(const unsigned char **mask);

#endif

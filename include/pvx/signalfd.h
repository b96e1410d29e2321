/* SPDX-License-Identifier: GPL-2.0 */
/*
 * signalfd (sentry/kernel/signalfd.c): a kind pvx answers itself. A read
 * dequeues the reading task's pending signals of the fd's mask; its host
 * fd is an eventfd kept readable while a signal of the mask is pending in
 * the process that made the fd (or last read it), so poll and epoll wait
 * on it as on any host fd.
 */
#ifndef PVX_SIGNALFD_H
#define PVX_SIGNALFD_H

#include "pvx/task.h"

extern const struct file_ops signalfd_file_ops;

/* A new signalfd of t's process for mask (SIGKILL/SIGSTOP dropped); NULL with *err set. */
struct file *signalfd_new(struct task *t, uint64_t mask, int flags, long *err);
/* signalfd(fd, mask) on an existing one: EINVAL if f is not a signalfd. */
long signalfd_set_mask(struct task *t, struct file *f, uint64_t mask) __must_check;
/* p's pending signals changed: bring its signalfds' readiness up to date and wake their readers. */
void signalfd_sync(struct process *p);

#endif

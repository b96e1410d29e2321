/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pidfds (sentry/kernel/pidfd.c): a file that refers to one guest process,
 * never to a later process that reuses its pid. Its host fd is the read end
 * of a pipe: a byte is written when the process exits (POLLIN) and the
 * write end closed when it is reaped (POLLIN|POLLHUP), as Linux's
 * pidfd_poll says, so poll and epoll wait on it as on any host fd.
 */
#ifndef PVX_PIDFD_H
#define PVX_PIDFD_H

#include "pvx/task.h"

extern const struct file_ops pidfd_file_ops;

/* A new pidfd for p (O_NONBLOCK kept in its flags); NULL with *err set. */
struct file *pidfd_new(struct process *p, int flags, long *err);
/*
 * The process f refers to: -EBADF if f is not a pidfd, -ESRCH once the
 * process has been reaped (*out NULL) or, with live, once it has exited.
 */
long pidfd_process(struct file *f, bool live, struct process **out) __must_check;
/* pidfd_process for pidfd_send_signal, which also takes a /proc/PID directory (tgid_pidfd_to_pid). */
long pidfd_send_target(struct file *f, struct process **out) __must_check;
/* The pid f was opened for (also after the process went). */
int pidfd_pid(struct file *f);
/* p's last thread exited (it is a zombie): its pidfds poll readable. */
void pidfd_exited(struct process *p);
/* p is freed (reaped): its pidfds let go of it and poll POLLHUP. */
void pidfd_reaped(struct process *p);

#endif

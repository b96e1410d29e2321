/* SPDX-License-Identifier: GPL-2.0 */
/*
 * File kinds for events (sentry/fs/epoll.c, sentry/fs/inotify.c): an
 * epoll is a host epoll fd the sentry owns, guest fds translated to their
 * files' host fds (the readiness fd of each kind, pvx/file.h), so level and
 * edge triggering, EPOLLONESHOT, EPOLLEXCLUSIVE, nesting and ELOOP are the
 * host kernel's. timerfd and inotify are host fds of their own kinds.
 */
#ifndef PVX_EVENTS_H
#define PVX_EVENTS_H

#include <sys/epoll.h>
#include <time.h>

#include "pvx/file.h"

extern const struct file_ops epoll_file_ops;

/* A new epoll file (epoll_create1); NULL with *err set. */
struct file *epoll_file_new(long *err);
/*
 * epoll_ctl(2) of target (the file of guest fd guest_fd) in ep; ev is
 * ignored for EPOLL_CTL_DEL. A registration is keyed by (file, fd number)
 * as Linux keys it: the same file under another fd is a registration of
 * its own, and MOD or DEL through an fd that did not add it is ENOENT.
 * Other errors are the host's, in its order.
 */
long epoll_ctl_file(struct file *ep, int op, struct file *target, int guest_fd, struct epoll_event *ev)
	__must_check;
/*
 * kcmp(KCMP_EPOLL_TFD): the file registered in ep under guest fd tfd, the
 * toff'th such registration; -EINVAL if ep is no epoll, -ENOENT if none
 * (get_epoll_tfile_raw_ptr).
 */
long epoll_target(struct file *ep, int tfd, unsigned long toff, struct file **out) __must_check;
/* f's open file description is going (file_put, f->epoll_regs != 0): out of every epoll it is in. */
void epoll_file_gone(struct file *f);
/*
 * Wait for at most max events of ep into out, until *to (NULL: no limit;
 * left with what remained) with the sentry lock dropped. As ep_poll(): a
 * signal already pending (pending: the caller asked the kernel) ends the
 * call only when no event is ready, and an interrupted wait is EINTR.
 */
long epoll_wait_file(struct task *t, struct file *ep, struct epoll_event *out, int max, struct timespec *to,
		     bool pending) __must_check;

/* timerfd is a host timerfd with host_file_ops. */

/* inotify: a host inotify fd (sentry/fs/inotify.c). */
extern const struct file_ops inotify_file_ops;
/* The sandbox's share of the host user's epoll watches (sentry/fs/epoll.c): ENOSPC past it. */
#define PVX_EPOLL_WATCHES 65536
/* The sandbox's share of the host user's inotify budget (see sentry/fs/inotify.c). */
#define PVX_INOTIFY_INSTANCES 32	/* Linux's default max_user_instances is 128 */
#define PVX_INOTIFY_WATCHES 8192	/* ... and its smallest max_user_watches */
/* A new inotify file for inotify_init1's flags (IN_NONBLOCK checked by the caller); NULL with *err set (EMFILE: the share's used). */
struct file *inotify_file_new(int flags, long *err);
/* inotify_add_watch on f's host fd for host_path (the object's /proc/self/fd link): the wd or -errno (ENOSPC: the share's used). */
long inotify_watch_add(struct file *f, const char *host_path, uint32_t mask) __must_check;
/* inotify_rm_watch: 0 or the host's -errno (EINVAL for a wd f does not have). */
long inotify_watch_rm(struct file *f, int wd) __must_check;

#endif

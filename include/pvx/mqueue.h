/* SPDX-License-Identifier: GPL-2.0 */
/*
 * POSIX message queues (sentry/kernel/mqueue.c): the sandbox's one mqueue
 * namespace, as Linux's ipc/mqueue.c. All under the sentry lock; the
 * structs the guest reads and writes are the kernel's (struct mq_attr,
 * struct sigevent), copied by syscalls/sys_mqueue.c.
 */
#ifndef PVX_MQUEUE_H
#define PVX_MQUEUE_H

#include "pvx/file.h"
#include "pvx/task.h"

/* Linux's defaults (ipc/mq_sysctl.c), which /proc/sys/fs/mqueue shows. */
#define PVX_MQ_QUEUES_MAX 256
#define PVX_MQ_MSG_MAX 10
#define PVX_MQ_MSGSIZE_MAX 8192
#define PVX_MQ_MSG_DEFAULT 10
#define PVX_MQ_MSGSIZE_DEFAULT 8192
#define PVX_MQ_PRIO_MAX 32768

/* The kernel's struct mq_attr. */
struct pvx_mq_attr {
	long mq_flags, mq_maxmsg, mq_msgsize, mq_curmsgs, pad[4];
};

/* mq_open(2) of name (as the kernel gets it: no leading '/'); attr NULL: the defaults. The new fd or -errno. */
long mq_open_name(struct task *t, const char *name, int oflag, unsigned mode, const struct pvx_mq_attr *attr)
	__must_check;
long mq_unlink_name(struct task *t, const char *name) __must_check;
/*
 * mq_timedsend(2) and mq_timedreceive(2) after the copies of the timeout
 * (until: CLOCK_MONOTONIC ns, 0: none) and the message: waiting with the
 * sentry lock dropped, ETIMEDOUT at until, ERESTARTSYS at a signal.
 */
/* The mq_msgsize of fd's queue if fd may send (mq_timedsend's EBADF before EMSGSIZE), else -EBADF. */
long mq_msgsize(struct task *t, int fd) __must_check;
long mq_send(struct task *t, int fd, const char *msg, size_t len, unsigned prio, uint64_t until) __must_check;
long mq_receive(struct task *t, int fd, uint64_t umsg, size_t len, uint64_t uprio, uint64_t until) __must_check;
/* mq_notify(2)'s registration, checked: SIGEV_NONE, SIGEV_SIGNAL (signo, value) or SIGEV_THREAD (the cookie for host_sock). */
struct mq_notify_req {
	int notify, signo;
	uint64_t value;
	int host_sock;		/* SIGEV_THREAD: the host fd of the guest's netlink socket */
	unsigned char cookie[32];	/* NOTIFY_COOKIE_LEN */
};
/* mq_notify(2) after the sigevent's checks; req NULL: remove ours. */
long mq_set_notify(struct task *t, int fd, const struct mq_notify_req *req) __must_check;
/* mq_getsetattr(2): *old filled, then O_NONBLOCK from *new (NULL: none). */
long mq_attr(struct task *t, int fd, const struct pvx_mq_attr *new, struct pvx_mq_attr *old) __must_check;
/* A process exits: its registrations go (mqueue_flush_file at its last close), so no reused pid inherits them. */
void mq_exit(int pid);
/* The bytes a queue may hold that count against RLIMIT_MSGQUEUE (mqueue_get_inode's mq_bytes). */
unsigned long mq_queue_bytes(long maxmsg, long msgsize);

#endif

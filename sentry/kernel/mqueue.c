// SPDX-License-Identifier: GPL-2.0
/*
 * POSIX message queues: the sandbox's one mqueue namespace (Linux's
 * ipc/mqueue.c, one IPC namespace per sandbox as the System V side's).
 * A queue is a name, an owner and mode, its limits and its messages,
 * highest priority first and FIFO within a priority, copied into the
 * sentry and charged to the sandbox's memory bound; its bytes as Linux
 * counts them are charged to RLIMIT_MSGQUEUE while it exists. An mqueue
 * fd is a file of this kind whose host fd is one eventfd per queue, kept
 * readable exactly while messages wait, so poll, select and epoll see
 * POLLIN as on Linux (POLLOUT is the eventfd's: always). Reading the fd
 * gives Linux's QSIZE line. Senders and receivers wait on the sentry lock's
 * condition with the lock dropped, as msgsnd/msgrcv do (sentry/kernel/msg.c).
 * An unlinked queue lives on while an fd has it open.
 */
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "pvx/kernel.h"
#include "pvx/mm.h"
#include "pvx/mqueue.h"
#include "pvx/sandbox.h"
#include "pvx/timer.h"

#define HARD_MSGMAX 65536	/* with CAP_SYS_RESOURCE (uid 0 here) */
#define HARD_MSGSIZEMAX (16 * 1024 * 1024)
#define HARD_QUEUESMAX 1024	/* even uid 0's queues stop here: each holds a host eventfd of the sentry's */
#define SI_MESGQ_CODE (-3)
#define FILENT_SIZE 80
/*
 * SIGEV_THREAD registrations at once (ENOMEM past it): each is a host
 * mqueue, counted in the host IPC namespace's queues_max, which every
 * user of the host shares.
 */
#define HOST_MQS_MAX 16

static int host_mqs;	/* the host queues host_thread_notify holds */

struct mq_msg {
	struct mq_msg *next;
	unsigned prio;
	size_t len;
	char text[];
};

struct mq_queue {
	struct mq_queue *next;
	char name[NAME_MAX + 1];
	bool linked;		/* in the namespace (not yet mq_unlink'ed) */
	int opens;		/* open files */
	unsigned mode, uid, gid;
	long maxmsg, msgsize, curmsgs;
	unsigned long qsize;	/* the messages' bytes (QSIZE) */
	unsigned long charged;	/* RLIMIT_MSGQUEUE's share */
	struct mq_msg *head;
	int efd;		/* readable while curmsgs > 0 */
	bool ready;
	int receivers;		/* waiting in mq_timedreceive */
	int notify_pid;		/* 0: no registration */
	int notify, signo;
	uint64_t value;
	int host_mq;		/* SIGEV_THREAD: the host queue whose notification carries the cookie, or -1 */
};

/* An open mqueue file: its queue and the position for read(2). */
struct mq_file {
	struct mq_queue *q;
	off_t pos;
};

/*
 * SIGEV_THREAD as Linux does it for glibc: a 32-byte cookie sent to the
 * guest's netlink socket when the notification fires (NOTIFY_WOKENUP in its
 * last byte) or is removed (NOTIFY_REMOVED). pvx's netlink sockets are the
 * host's, and only the host kernel may send to one, so the sentry registers
 * the same notification on a private host queue of its own (unlinked at
 * once) and fires it by sending that queue a byte; closing it is the
 * removal. The host's registration waits while the socket's receive buffer
 * is full, as Linux's netlink_attachskb: through task_block, with the lock
 * dropped, so a signal or a kill ends it. Without host mqueues
 * (CONFIG_POSIX_MQUEUE off): EINVAL.
 */
static long host_thread_notify(struct task *t, int host_sock, const void *cookie)
{
	static unsigned seq;
	struct { long flags, maxmsg, msgsize, curmsgs, pad[4]; } attr = { 0, 1, 1, 0, { 0 } };
	char name[64];

	if (host_mqs >= HOST_MQS_MAX)
		return -ENOMEM;
	snprintf(name, sizeof(name), "pvx-notify-%d-%u-%lx", (int)getpid(), seq++, (unsigned long)random());
	long hmq = syscall(SYS_mq_open, name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NONBLOCK, 0600, &attr);
	if (hmq < 0)
		return errno == ENOSYS ? -EINVAL : neg_errno();
	(void)!syscall(SYS_mq_unlink, name);
	struct sigevent ev = { .sigev_notify = SIGEV_THREAD, .sigev_signo = host_sock };
	ev.sigev_value.sival_ptr = (void *)cookie;
	host_mqs++;	/* held from here, as the lock drops */
	const long a[6] = { hmq, (long)(uintptr_t)&ev };
	long r = task_block(t, NULL, SYS_mq_notify, a, false);
	if (r < 0) {
		close((int)hmq);
		host_mqs--;
		return r;
	}
	return hmq;
}

/* The registration goes: the host queue's close is its NOTIFY_REMOVED. */
static void notify_clear(struct mq_queue *q)
{
	if (q->host_mq >= 0) {
		close(q->host_mq);
		host_mqs--;
	}
	q->host_mq = -1;
	q->notify_pid = 0;
}

static struct mq_queue *queues;
static int nqueues;
static unsigned long user_bytes;	/* the sandbox's one user's u->mq_bytes */

extern const struct file_ops mq_file_ops;

unsigned long mq_queue_bytes(long maxmsg, long msgsize)
{
	/* sizeof(struct msg_msg) and of struct posix_msg_tree_node on x86-64 */
	return (unsigned long)maxmsg * 48 + (unsigned long)MIN(maxmsg, (long)PVX_MQ_PRIO_MAX) * 48 +
	       (unsigned long)maxmsg * (unsigned long)msgsize;
}

static struct mq_queue *find(const char *name)
{
	for (struct mq_queue *q = queues; q; q = q->next)
		if (q->linked && !strcmp(q->name, name))
			return q;
	return NULL;
}

/* The eventfd readable exactly while messages wait. */
static void sync_ready(struct mq_queue *q)
{
	uint64_t v = 1;
	bool want = q->curmsgs > 0;

	if (want == q->ready)
		return;
	if (want ? write(q->efd, &v, sizeof(v)) == sizeof(v) : read(q->efd, &v, sizeof(v)) == sizeof(v))
		q->ready = want;
}

static void q_free(struct mq_queue *q)
{
	for (struct mq_msg *m = q->head, *n; m; m = n) {
		n = m->next;
		mm_uncharge(sizeof(*m) + m->len);
		free(m);
	}
	user_bytes -= q->charged;
	nqueues--;	/* mqueue_evict_inode(): an unlinked queue counts while an fd holds it */
	notify_clear(q);
	close(q->efd);
	free(q);
}

/* Out of the namespace and freed when neither a name nor an fd holds it. */
static void q_put(struct mq_queue *q)
{
	if (q->linked || q->opens)
		return;
	for (struct mq_queue **p = &queues; *p; p = &(*p)->next)
		if (*p == q) {
			*p = q->next;
			break;
		}
	q_free(q);
}

/* inode_permission() for the sandbox's one identity: uid 0 may do anything. */
static long may(const struct mq_queue *q, int acc)
{
	unsigned granted = q->mode;

	if (sandbox.uid == 0)
		return 0;
	if (sandbox.uid == q->uid)
		granted >>= 6;
	else if (sandbox.gid == q->gid)
		granted >>= 3;
	return (acc & ~granted & 7) ? -EACCES : 0;
}

/* lookup_one_len(): "", ".", ".." and a '/' are EACCES; simple_lookup(): past NAME_MAX ENAMETOOLONG. */
static long name_ok(const char *name)
{
	if (!name[0] || !strcmp(name, ".") || !strcmp(name, "..") || strchr(name, '/'))
		return -EACCES;
	return strlen(name) > NAME_MAX ? -ENAMETOOLONG : 0;
}

/* mqueue_get_inode()'s checks of the attributes and the queue count; the new queue or -errno. */
static long q_create(struct task *t, const char *name, unsigned mode, const struct pvx_mq_attr *attr,
		     struct mq_queue **out)
{
	long maxmsg = PVX_MQ_MSG_DEFAULT, msgsize = PVX_MQ_MSGSIZE_DEFAULT;
	bool cap = sandbox.uid == 0;

	if ((nqueues >= PVX_MQ_QUEUES_MAX && !cap) || nqueues >= HARD_QUEUESMAX)
		return -ENOSPC;
	if (attr) {
		maxmsg = attr->mq_maxmsg;
		msgsize = attr->mq_msgsize;
		if (maxmsg <= 0 || msgsize <= 0)
			return -EINVAL;
		if (maxmsg > (cap ? HARD_MSGMAX : PVX_MQ_MSG_MAX) ||
		    msgsize > (cap ? HARD_MSGSIZEMAX : PVX_MQ_MSGSIZE_MAX))
			return -EINVAL;
	}
	unsigned long bytes = mq_queue_bytes(maxmsg, msgsize);
	if (user_bytes + bytes > t->proc->rlim[RLIMIT_MSGQUEUE].rlim_cur)
		return -EMFILE;
	struct mq_queue *q = calloc(1, sizeof(*q));
	if (!q)
		return -ENOMEM;
	if ((q->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0) {
		free(q);
		return -ENFILE;
	}
	snprintf(q->name, sizeof(q->name), "%s", name);
	q->linked = true;
	q->host_mq = -1;
	q->mode = mode & 0777 & ~t->fs->umask;
	q->uid = sandbox.uid;
	q->gid = sandbox.gid;
	q->maxmsg = maxmsg;
	q->msgsize = msgsize;
	q->charged = bytes;
	user_bytes += bytes;
	q->next = queues;
	queues = q;
	nqueues++;
	*out = q;
	return 0;
}

/* do_mq_open() and prepare_open(). */
long mq_open_name(struct task *t, const char *name, int oflag, unsigned mode, const struct pvx_mq_attr *attr)
{
	struct mq_queue *q;
	long r;

	if ((r = name_ok(name)))
		return r;
	q = find(name);
	if (!q) {
		if (!(oflag & O_CREAT))
			return -ENOENT;
		if ((r = q_create(t, name, mode, attr, &q)))
			return r;
	} else {
		static const int acc[3] = { 4, 2, 6 };
		if ((oflag & (O_CREAT | O_EXCL)) == (O_CREAT | O_EXCL))
			return -EEXIST;
		if ((oflag & O_ACCMODE) == O_ACCMODE)
			return -EINVAL;
		if ((r = may(q, acc[oflag & O_ACCMODE])))
			return r;
	}
	struct mq_file *mf = calloc(1, sizeof(*mf));
	int hfd = dup(q->efd);
	struct file *f = mf && hfd >= 0 ? file_new(hfd, oflag & (O_ACCMODE | O_NONBLOCK), &mq_file_ops) : NULL;
	if (!f) {
		free(mf);
		if (hfd >= 0)
			close(hfd);
		q_put(q);
		return -ENOMEM;
	}
	mf->q = q;
	f->priv = mf;
	q->opens++;
	r = fd_install(t->files, f, oflag & O_CLOEXEC, 0);
	file_put(f);	/* the table holds it now, or nobody does */
	return r;
}

/* mq_unlink(2): the name goes; the queue with its last fd. */
long mq_unlink_name(struct task *t, const char *name)
{
	(void)t;
	long r = name_ok(name);
	if (r)
		return r;
	struct mq_queue *q = find(name);
	if (!q)
		return -ENOENT;
	q->linked = false;
	q_put(q);
	return 0;
}

/* The queue of fd, if the file may do acc (O_RDONLY: receive, O_WRONLY: send, -1: either); NULL: EBADF. */
static struct file *mq_fd(struct task *t, int fd, int acc)
{
	struct file *f = fd_lookup(t->files, fd);

	if (!f || f->ops != &mq_file_ops)
		return NULL;
	int mode = f->flags & O_ACCMODE;
	if ((acc == O_RDONLY && mode == O_WRONLY) || (acc == O_WRONLY && mode == O_RDONLY))
		return NULL;
	return f;
}

static struct mq_queue *q_of(struct file *f)
{
	return ((struct mq_file *)f->priv)->q;
}

/* Wait on the lock's condition for q to change: 0, or -ERESTARTSYS / -ETIMEDOUT. */
static long q_wait(struct task *t, uint64_t until)
{
	if (signal_pending(t))
		return -ERESTARTSYS;
	if (until && timer_now_ns() >= until)
		return -ETIMEDOUT;
	sentry_timedwait(until);
	return 0;
}

/* __do_notify(): the registration fires once, on a message into an empty queue nobody waits to receive. */
static void notify(struct task *t, struct mq_queue *q)
{
	if (!q->notify_pid || q->curmsgs != 1 || q->receivers)
		return;
	struct task *owner = task_find(q->notify_pid);
	if (q->notify == SIGEV_SIGNAL && q->signo && owner && owner->proc->pid == q->notify_pid) {
		struct sig_info info = { .code = SI_MESGQ_CODE, .raw = true };
		info.fields[0] = (uint32_t)t->proc->pid | (uint64_t)sandbox.uid << 32;	/* si_pid, si_uid */
		info.fields[1] = q->value;	/* si_value */
		(void)signal_queue_process(owner->proc, q->signo, &info);
	}
	if (q->notify == SIGEV_THREAD && q->host_mq >= 0 && owner && owner->proc->pid == q->notify_pid) {
		(void)!syscall(SYS_mq_timedsend, q->host_mq, "", 1, 0, NULL);	/* the host sends the cookie */
		close(q->host_mq);
		host_mqs--;
		q->host_mq = -1;	/* fired: no NOTIFY_REMOVED after */
	}
	notify_clear(q);
}

void mq_exit(int pid)
{
	for (struct mq_queue *q = queues; q; q = q->next)
		if (q->notify_pid == pid)
			notify_clear(q);
}

long mq_msgsize(struct task *t, int fd)
{
	struct file *f = mq_fd(t, fd, O_WRONLY);

	return f ? q_of(f)->msgsize : -EBADF;
}

long mq_send(struct task *t, int fd, const char *msg, size_t len, unsigned prio, uint64_t until)
{
	struct file *f = mq_fd(t, fd, O_WRONLY);
	long r = 0;

	if (!f)
		return -EBADF;
	struct mq_queue *q = q_of(f);
	if ((long)len > q->msgsize)
		return -EMSGSIZE;
	if ((r = mm_charge(sizeof(struct mq_msg) + len)))
		return r;
	struct mq_msg *m = malloc(sizeof(*m) + len);
	if (!m) {
		mm_uncharge(sizeof(struct mq_msg) + len);
		return -ENOMEM;
	}
	*m = (struct mq_msg){ .prio = prio, .len = len };
	memcpy(m->text, msg, len);
	file_get(f);	/* q lives while we wait, whoever closes the fd */
	while (q->curmsgs >= q->maxmsg) {
		r = -EAGAIN;
		if ((f->flags & O_NONBLOCK) || (r = q_wait(t, until)))
			break;
	}
	if (q->curmsgs < q->maxmsg) {
		struct mq_msg **p = &q->head;
		while (*p && (*p)->prio >= prio)
			p = &(*p)->next;
		m->next = *p;
		*p = m;
		q->curmsgs++;
		q->qsize += len;
		m = NULL;
		r = 0;
		notify(t, q);
		sync_ready(q);
		sentry_wake_all();
	}
	if (m) {
		mm_uncharge(sizeof(*m) + m->len);
		free(m);
	}
	file_put(f);
	return r;
}

long mq_receive(struct task *t, int fd, uint64_t umsg, size_t len, uint64_t uprio, uint64_t until)
{
	struct file *f = mq_fd(t, fd, O_RDONLY);
	long r = 0;

	if (!f)
		return -EBADF;
	struct mq_queue *q = q_of(f);
	if (len < (size_t)q->msgsize)	/* a size_t, as Linux compares it */
		return -EMSGSIZE;
	file_get(f);
	q->receivers++;
	while (!q->head) {
		r = -EAGAIN;
		if ((f->flags & O_NONBLOCK) || (r = q_wait(t, until)))
			break;
	}
	q->receivers--;
	struct mq_msg *m = q->head;
	if (m) {
		q->head = m->next;
		q->curmsgs--;
		q->qsize -= m->len;
		sync_ready(q);
		sentry_wake_all();	/* room for senders */
		/* Taken: lost on EFAULT, as Linux's store_msg after msg_get. */
		r = copy_to_guest(t->mm, umsg, m->text, m->len);
		if (!r && uprio)
			r = copy_to_guest(t->mm, uprio, &m->prio, sizeof(m->prio));
		if (!r)
			r = (long)m->len;
		mm_uncharge(sizeof(*m) + m->len);
		free(m);
	}
	file_put(f);
	return r;
}

/* do_mq_notify() after the sigevent's checks: EBUSY while another process is registered. */
long mq_set_notify(struct task *t, int fd, const struct mq_notify_req *req)
{
	struct file *f = mq_fd(t, fd, -1);
	long hmq = -1;

	if (!f)
		return -EBADF;
	struct mq_queue *q = q_of(f);
	if (!req) {
		if (q->notify_pid == t->proc->pid)
			notify_clear(q);
		return 0;
	}
	if (q->notify_pid)
		return -EBUSY;
	if (req->notify == SIGEV_THREAD) {
		file_get(f);	/* q lives while the host registration drops the lock */
		hmq = host_thread_notify(t, req->host_sock, req->cookie);
		file_put(f);
		if (hmq < 0)
			return hmq;
		if (q->notify_pid) {	/* another process came first meanwhile */
			close((int)hmq);
			host_mqs--;
			return -EBUSY;
		}
		q->host_mq = (int)hmq;
	}
	q->notify_pid = t->proc->pid;
	q->notify = req->notify;
	q->signo = req->signo;
	q->value = req->value;
	return 0;
}

long mq_attr(struct task *t, int fd, const struct pvx_mq_attr *new, struct pvx_mq_attr *old)
{
	struct file *f = mq_fd(t, fd, -1);

	if (!f)
		return -EBADF;
	struct mq_queue *q = q_of(f);
	*old = (struct pvx_mq_attr){ .mq_flags = f->flags & O_NONBLOCK, .mq_maxmsg = q->maxmsg,
				     .mq_msgsize = q->msgsize, .mq_curmsgs = q->curmsgs };
	if (new)
		f->flags = (f->flags & ~O_NONBLOCK) | (int)(new->mq_flags & O_NONBLOCK);
	return 0;
}

/* mqueue_read_file(): the queue's QSIZE line, from the file's position. */
static long mqf_read(struct task *t, struct file *f, void *buf, size_t count, off_t off, bool positional)
{
	struct mq_file *mf = f->priv;
	struct mq_queue *q = mf->q;
	char text[FILENT_SIZE];
	(void)t;

	int pid = q->notify_pid;
	int n = snprintf(text, sizeof(text), "QSIZE:%-10lu NOTIFY:%-5d SIGNO:%-5d NOTIFY_PID:%-6d\n", q->qsize,
			 pid ? q->notify : 0, pid && q->notify == SIGEV_SIGNAL ? q->signo : 0, pid);
	off_t at = positional ? off : mf->pos;
	if (at < 0)
		return -EINVAL;
	if (at >= n)
		return 0;
	size_t c = MIN(count, (size_t)(n - at));
	memcpy(buf, text + at, c);
	if (!positional)
		mf->pos = at + (off_t)c;
	return (long)c;
}

/* No write operation: vfs_write's EINVAL. */
static long mqf_write(struct task *t, struct file *f, const void *buf, size_t count, off_t off, bool positional)
{
	(void)t, (void)f, (void)buf, (void)count, (void)off, (void)positional;
	return -EINVAL;
}

static void mqf_release(struct file *f)
{
	struct mq_file *mf = f->priv;

	close(f->host_fd);
	if (mf) {
		mf->q->opens--;
		q_put(mf->q);
		free(mf);
	}
}

/* The inode's: a regular file of the queue's mode and owner, FILENT_SIZE long. */
static long mqf_stat(struct file *f, struct stat *st)
{
	struct mq_queue *q = q_of(f);
	long r = host_file_ops.stat(f, st);

	if (r)
		return r;
	st->st_mode = S_IFREG | q->mode;
	st->st_uid = q->uid;
	st->st_gid = q->gid;
	st->st_size = FILENT_SIZE;
	st->st_nlink = q->linked;
	return 0;
}

/* default_llseek on the QSIZE text. */
static long mqf_seek(struct file *f, off_t off, int whence)
{
	struct mq_file *mf = f->priv;
	off_t base = whence == SEEK_SET ? 0 : whence == SEEK_CUR ? mf->pos : whence == SEEK_END ? FILENT_SIZE : -1;

	if (base < 0 || base + off < 0)
		return -EINVAL;
	return mf->pos = base + off;
}

/* mqueue_poll_file(): POLLIN with messages, POLLOUT with room. */
static short mqf_poll(struct file *f, short events)
{
	struct mq_queue *q = q_of(f);
	short r = 0;

	if (q->curmsgs)
		r |= POLLIN | POLLRDNORM;
	if (q->curmsgs < q->maxmsg)
		r |= POLLOUT | POLLWRNORM;
	return (short)(r & (events | POLLERR | POLLHUP));
}

const struct file_ops mq_file_ops = {
	.read = mqf_read,
	.write = mqf_write,
	.release = mqf_release,
	.stat = mqf_stat,
	.seek = mqf_seek,
	.poll = mqf_poll,
};

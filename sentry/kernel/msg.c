// SPDX-License-Identifier: GPL-2.0
/*
 * System V message queues (Linux's ipc/msg.c). A queue is a list of
 * messages copied into the sentry and charged to the sandbox's memory
 * bound; msgsnd waits while the queue is full (q_qbytes, as
 * msg_fits_inqueue() counts) and msgrcv while nothing matches, both on the
 * sentry lock's condition, woken by every change of the queue, ending with
 * EINTR on a signal (never restarted) and EIDRM when the queue is removed
 * (a waiter keeps its memory until it has seen that). Receivers select as
 * find_msg() does: any, a type, any but a type (MSG_EXCEPT), the lowest
 * type up to |type|, or with MSG_COPY the n-th message, left in place (as
 * Linux built with CONFIG_CHECKPOINT_RESTORE, which distributions are).
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "pvx/ipc.h"
#include "pvx/kernel.h"

#ifndef MSG_COPY
#define MSG_COPY 040000
#endif

#define PVX_MSGSSZ 16
#define PVX_MSGSEG 0xffff
#define PVX_MSGPOOL (PVX_MSGMNI * PVX_MSGMNB / 1024)

struct msg {
	struct msg *next;
	long type;
	size_t size;
	char text[];
};

struct msg_queue {
	struct ipc_obj perm;	/* first: the table holds &perm */
	struct msg *head, **tail;
	uint64_t cbytes, qnum, qbytes;
	long stime, rtime, ctime;
	int lspid, lrpid;
	bool removed;
	int waiters;
};

enum search { SEARCH_ANY, SEARCH_EQUAL, SEARCH_NOTEQUAL, SEARCH_LESSEQUAL, SEARCH_NUMBER };

static struct ipc_ids msg_ids = { .limit = PVX_MSGMNI };
static uint64_t msg_hdrs, msg_bytes;	/* MSG_INFO's counts over all queues */

static struct msg_queue *q_of(struct ipc_obj *o)
{
	return (struct msg_queue *)o;
}

static void msg_free(struct msg *m)
{
	mm_uncharge(sizeof(*m) + m->size);
	free(m);
}

static void q_free(struct msg_queue *q)
{
	for (struct msg *m = q->head, *n; m; m = n) {
		n = m->next;
		msg_free(m);
	}
	free(q);
}

/* freeque(): out of the table; its messages and memory go once no waiter holds it. */
static void q_remove(struct msg_queue *q)
{
	ipc_del(&msg_ids, &q->perm);
	msg_hdrs -= q->qnum;
	msg_bytes -= q->cbytes;
	q->removed = true;
	if (!q->waiters)
		q_free(q);
	sentry_wake_all();
}

static long newque(int key, int flags)
{
	struct msg_queue *q = calloc(1, sizeof(*q));
	long r;

	if (!q)
		return -ENOMEM;
	q->tail = &q->head;
	q->qbytes = PVX_MSGMNB;
	q->ctime = ipc_now();
	if ((r = ipc_add(&msg_ids, &q->perm, key, flags)) < 0)
		free(q);
	return r;
}

/* msgget(2). */
long msg_get(struct task *t, int key, int flags)
{
	(void)t;
	if (key == IPC_PRIVATE)
		return newque(key, flags);
	struct ipc_obj *o = ipc_find_key(&msg_ids, key);
	if (!o)
		return flags & IPC_CREAT ? newque(key, flags) : -ENOENT;
	if ((flags & IPC_CREAT) && (flags & IPC_EXCL))
		return -EEXIST;
	long r = ipc_perms(o, flags);
	return r ? r : o->id;
}

/* Sleep until q changes, holding it: -EIDRM (freed if we were its last waiter) or -EINTR, or 0: try again. */
static long q_wait(struct task *t, struct msg_queue *q)
{
	q->waiters++;
	sentry_wait();
	q->waiters--;
	if (q->removed) {
		if (!q->waiters)
			q_free(q);
		return -EIDRM;
	}
	return signal_pending(t) ? -EINTR : 0;
}

/* msgsnd(2), as ksys_msgsnd(): the type (EFAULT), "EINVAL ... msgsz was greater than MSGMAX", the text. */
long msg_snd(struct task *t, int id, uint64_t msgp, uint64_t size, int flags)
{
	long type, r;

	if ((r = copy_from_guest(t->mm, &type, msgp, sizeof(type))))
		return r;
	if (size > PVX_MSGMAX || (long)size < 0 || id < 0 || type < 1)
		return -EINVAL;
	if ((r = mm_charge(sizeof(struct msg) + size)))
		return r;
	struct msg *m = malloc(sizeof(*m) + size);
	if (!m) {
		mm_uncharge(sizeof(struct msg) + size);
		return -ENOMEM;
	}
	*m = (struct msg){ .type = type, .size = size };
	if ((r = copy_from_guest(t->mm, m->text, msgp + sizeof(long), size)))
		goto out;
	struct ipc_obj *o = ipc_lookup(&msg_ids, id);
	r = -EINVAL;
	if (!o)
		goto out;
	struct msg_queue *q = q_of(o);
	for (;;) {
		if ((r = ipc_perms(o, S_IWUGO)))
			goto out;
		if (size + q->cbytes <= q->qbytes && 1 + q->qnum <= q->qbytes)
			break;
		r = -EAGAIN;
		if (flags & IPC_NOWAIT)
			goto out;
		r = -EINTR;
		if (signal_pending(t))
			goto out;
		if ((r = q_wait(t, q)))
			goto out;
	}
	q->lspid = t->proc->pid;
	q->stime = ipc_now();
	*q->tail = m;
	q->tail = &m->next;
	q->cbytes += size;
	q->qnum++;
	msg_hdrs++;
	msg_bytes += size;
	sentry_wake_all();
	return 0;
out:
	msg_free(m);
	return r;
}

/* convert_mode(). */
static enum search search_mode(long *type, int flags)
{
	if (flags & MSG_COPY)
		return SEARCH_NUMBER;
	if (*type == 0)
		return SEARCH_ANY;
	if (*type < 0) {
		*type = *type == LONG_MIN ? LONG_MAX : -*type;
		return SEARCH_LESSEQUAL;
	}
	return flags & MSG_EXCEPT ? SEARCH_NOTEQUAL : SEARCH_EQUAL;
}

/* find_msg(): the link that points at the message wanted, or NULL. */
static struct msg **find_msg(struct msg_queue *q, long type, enum search mode)
{
	struct msg **found = NULL;
	long count = 0;

	for (struct msg **p = &q->head; *p; p = &(*p)->next) {
		long mt = (*p)->type;
		bool ok = mode == SEARCH_ANY || mode == SEARCH_NUMBER || (mode == SEARCH_EQUAL && mt == type) ||
			  (mode == SEARCH_NOTEQUAL && mt != type) || (mode == SEARCH_LESSEQUAL && mt <= type);
		if (!ok)
			continue;
		if (mode == SEARCH_LESSEQUAL && mt != 1) {
			found = p;
			type = mt - 1;
		} else if (mode != SEARCH_NUMBER || count == type) {
			return p;
		}
		count++;
	}
	return found;
}

/* Take the message at *p off q (or, for MSG_COPY, a copy of it stays). */
static struct msg *take(struct task *t, struct msg_queue *q, struct msg **p)
{
	struct msg *m = *p;

	*p = m->next;
	if (q->tail == &m->next)
		q->tail = p;
	q->qnum--;
	q->cbytes -= m->size;
	msg_hdrs--;
	msg_bytes -= m->size;
	q->rtime = ipc_now();
	q->lrpid = t->proc->pid;
	sentry_wake_all();	/* room for senders */
	return m;
}

/* msgrcv(2), as do_msgrcv() and do_msg_fill(): the bytes of text copied, or -errno. */
long msg_rcv(struct task *t, int id, uint64_t msgp, uint64_t size, long type, int flags)
{
	if (id < 0 || (long)size < 0)
		return -EINVAL;
	if ((flags & MSG_COPY) && ((flags & MSG_EXCEPT) || !(flags & IPC_NOWAIT)))
		return -EINVAL;
	enum search mode = search_mode(&type, flags);
	struct ipc_obj *o = ipc_lookup(&msg_ids, id);
	if (!o)
		return -EINVAL;
	struct msg_queue *q = q_of(o);
	struct msg *m;
	long r;
	for (;;) {
		if ((r = ipc_perms(o, S_IRUGO)))
			return r;
		struct msg **p = find_msg(q, type, mode);
		if (p) {
			if (size < (*p)->size && !(flags & MSG_NOERROR))
				return -E2BIG;
			if (flags & MSG_COPY) {
				if (MIN(size, (uint64_t)PVX_MSGMAX) < (*p)->size)
					return -EINVAL;	/* copy_msg(): "dst->m_ts < src->m_ts" */
				m = *p;
				break;
			}
			m = take(t, q, p);
			break;
		}
		if (flags & IPC_NOWAIT)
			return -ENOMSG;
		if (signal_pending(t))
			return -EINTR;
		if ((r = q_wait(t, q)))
			return r;
	}
	size_t n = MIN(size, m->size);
	r = copy_to_guest(t->mm, msgp, &m->type, sizeof(long));
	if (!r)
		r = copy_to_guest(t->mm, msgp + sizeof(long), m->text, n);
	if (!(flags & MSG_COPY))
		msg_free(m);	/* taken: lost on EFAULT, as on Linux */
	return r ? r : (long)n;
}

static void fill_ds(const struct msg_queue *q, struct msqid64_ds *ds)
{
	*ds = (struct msqid64_ds){ .msg_stime = q->stime, .msg_rtime = q->rtime, .msg_ctime = q->ctime,
				   .msg_cbytes = q->cbytes, .msg_qnum = q->qnum, .msg_qbytes = q->qbytes,
				   .msg_lspid = q->lspid, .msg_lrpid = q->lrpid };
	ipc_fill_perm(&q->perm, &ds->msg_perm);
}

static long msg_info(struct task *t, int cmd, uint64_t buf)
{
	struct msginfo mi = { .msgpool = PVX_MSGPOOL, .msgmap = PVX_MSGMNB, .msgmax = PVX_MSGMAX,
			      .msgmnb = PVX_MSGMNB, .msgmni = PVX_MSGMNI, .msgssz = PVX_MSGSSZ,
			      .msgtql = PVX_MSGMNB, .msgseg = PVX_MSGSEG };
	int max = ipc_max_idx(&msg_ids);

	if (cmd == MSG_INFO) {
		mi.msgpool = msg_ids.in_use;
		mi.msgmap = (int)MIN(msg_hdrs, (uint64_t)INT_MAX);
		mi.msgtql = (int)MIN(msg_bytes, (uint64_t)INT_MAX);
	}
	if (copy_to_guest(t->mm, buf, &mi, sizeof(mi)))
		return -EFAULT;
	return max < 0 ? 0 : max;
}

/* msgctl(2), as ksys_msgctl(). */
long msg_ctl(struct task *t, int id, int cmd, uint64_t buf)
{
	struct msqid64_ds ds;
	struct ipc_obj *o;
	long r;

	if (id < 0 || cmd < 0)
		return -EINVAL;
	switch (cmd) {
	case IPC_INFO:
	case MSG_INFO:
		return msg_info(t, cmd, buf);
	case IPC_STAT:
	case MSG_STAT:
	case MSG_STAT_ANY:
		o = cmd == IPC_STAT ? ipc_lookup(&msg_ids, id) : ipc_at(&msg_ids, id);
		if (!o)
			return -EINVAL;
		if (cmd != MSG_STAT_ANY && (r = ipc_perms(o, S_IRUGO)))
			return r;
		fill_ds(q_of(o), &ds);
		if (copy_to_guest(t->mm, buf, &ds, sizeof(ds)))
			return -EFAULT;
		return cmd == IPC_STAT ? 0 : o->id;
	case IPC_SET:
		if (copy_from_guest(t->mm, &ds, buf, sizeof(ds)))
			return -EFAULT;
		break;
	case IPC_RMID:
		break;
	default:
		return -EINVAL;
	}
	if (!(o = ipc_lookup(&msg_ids, id)))
		return -EINVAL;
	if ((r = ipc_owner(o)))
		return r;
	struct msg_queue *q = q_of(o);
	if (cmd == IPC_RMID) {
		q_remove(q);
		return 0;
	}
	if (ds.msg_qbytes > PVX_MSGMNB && sandbox.uid != 0)	/* CAP_SYS_RESOURCE */
		return -EPERM;
	if (ds.msg_perm.uid == (unsigned)-1 || ds.msg_perm.gid == (unsigned)-1)
		return -EINVAL;
	ipc_set_perm(o, &ds.msg_perm);
	q->qbytes = ds.msg_qbytes;
	q->ctime = ipc_now();
	sentry_wake_all();
	return 0;
}

/* /proc/sysvipc/msg's lines (sysvipc_msg_proc_show()). */
long msg_proc_text(FILE *out)
{
	fprintf(out, "       key      msqid perms      cbytes       qnum lspid lrpid   uid   gid  cuid  cgid"
		     "      stime      rtime      ctime\n");
	for (int i = 0; i <= ipc_max_idx(&msg_ids); i++) {
		struct ipc_obj *o = ipc_at(&msg_ids, i);
		if (!o)
			continue;
		struct msg_queue *q = q_of(o);
		fprintf(out, "%10d %10d  %4o  %10lu %10lu %5u %5u %5u %5u %5u %5u %10lu %10lu %10lu\n", o->key, o->id,
			o->mode, q->cbytes, q->qnum, q->lspid, q->lrpid, o->uid, o->gid, o->cuid, o->cgid, q->stime,
			q->rtime, q->ctime);
	}
	return 0;
}

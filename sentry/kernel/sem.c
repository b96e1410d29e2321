// SPDX-License-Identifier: GPL-2.0
/*
 * System V semaphores (Linux's ipc/sem.c). semop applies all its
 * operations or none (perform_atomic_semop()); one that cannot proceed
 * sleeps under the sentry lock's condition like a futex waiter and tries
 * again whenever something changed (sentry_wake_all after every change of
 * values), ending with EINTR on a signal (semop is never restarted), EAGAIN
 * at its timeout, EIDRM when the set is removed. A waiter keeps the set
 * alive (waiters count) until it has seen the removal.
 *
 * SEM_UNDO adjustments live in one list of (process, set) entries: a
 * process's are applied when it exits (exit_sem()), SETVAL and SETALL clear
 * a set's, and entries of a removed set are dropped with it. A fork child
 * starts with none (no CLONE_SYSVSEM); threads share their process's.
 * The sets' memory is charged to the sandbox's bound (--memory), as
 * Linux's GFP_ACCOUNT charges the memcg: SEMMNS semaphores would otherwise
 * be gigabytes of the sentry's.
 */
#include <stdlib.h>
#include <string.h>

#include "pvx/ipc.h"
#include "pvx/kernel.h"
#include "pvx/timer.h"

struct sem {
	int val, pid;
};

struct sem_set {
	struct ipc_obj perm;	/* first: the table holds &perm */
	int nsems;
	bool removed;
	int waiters;		/* tasks sleeping in semop on it: it is freed after the last one leaves */
	long otime, ctime;
	struct sem *sems;
};

/* One process's SEM_UNDO adjustments for one set (Linux's struct sem_undo). */
struct sem_undo {
	struct sem_undo *next;
	const struct process *proc;
	struct sem_set *set;
	short adj[];
};

/* A task sleeping in semop: which semaphore it waits on and whether for zero (GETNCNT, GETZCNT). */
struct sem_waiter {
	struct sem_waiter *next;
	struct sem_set *set;
	int num;
	bool zero;
};

static struct ipc_ids sem_ids = { .limit = PVX_SEMMNI };
static int used_sems;
static struct sem_undo *undos;
static struct sem_waiter *waiting;

static struct sem_set *set_of(struct ipc_obj *o)
{
	return (struct sem_set *)o;
}

static uint64_t set_bytes(int nsems)
{
	return sizeof(struct sem_set) + (uint64_t)nsems * sizeof(struct sem);
}

static void set_free(struct sem_set *s)
{
	mm_uncharge(set_bytes(s->nsems));
	free(s->sems);
	free(s);
}

static uint64_t undo_bytes(const struct sem_set *s)
{
	return sizeof(struct sem_undo) + (uint64_t)s->nsems * sizeof(short);
}

/* Drop the undo entries of set s (all processes), or of process p (all sets). */
static void undo_drop(const struct sem_set *s, const struct process *p)
{
	for (struct sem_undo **u = &undos; *u;) {
		struct sem_undo *e = *u;
		if ((s && e->set == s) || (p && e->proc == p)) {
			*u = e->next;
			mm_uncharge(undo_bytes(e->set));
			free(e);
		} else {
			u = &e->next;
		}
	}
}

/* freeary(): out of the table at once; the memory once the last waiter has left. */
static void set_remove(struct sem_set *s)
{
	undo_drop(s, NULL);
	ipc_del(&sem_ids, &s->perm);
	used_sems -= s->nsems;
	s->removed = true;
	if (!s->waiters)
		set_free(s);
	sentry_wake_all();
}

static long newary(struct task *t, int key, int nsems, int flags)
{
	long r;

	if (!nsems)
		return -EINVAL;
	if (used_sems + nsems > PVX_SEMMNS || sem_ids.in_use >= sem_ids.limit)
		return -ENOSPC;
	if ((r = mm_charge(set_bytes(nsems))))
		return r;
	struct sem_set *s = calloc(1, sizeof(*s));
	if (s)
		s->sems = calloc((size_t)nsems, sizeof(struct sem));
	if (!s || !s->sems) {
		free(s);
		mm_uncharge(set_bytes(nsems));
		return -ENOMEM;
	}
	s->nsems = nsems;
	if ((r = ipc_add(&sem_ids, &s->perm, key, flags)) < 0) {
		set_free(s);
		return r;
	}
	s->ctime = ipc_now();
	used_sems += nsems;
	(void)t;
	return r;
}

/* semget(2). */
long sem_get(struct task *t, int key, int nsems, int flags)
{
	if (nsems < 0 || nsems > PVX_SEMMSL)
		return -EINVAL;
	if (key == IPC_PRIVATE)
		return newary(t, key, nsems, flags);
	struct ipc_obj *o = ipc_find_key(&sem_ids, key);
	if (!o)
		return flags & IPC_CREAT ? newary(t, key, nsems, flags) : -ENOENT;
	if ((flags & IPC_CREAT) && (flags & IPC_EXCL))
		return -EEXIST;
	if (nsems > set_of(o)->nsems)
		return -EINVAL;
	long r = ipc_perms(o, flags);
	return r ? r : o->id;
}

static struct sem_undo *undo_find(const struct process *p, const struct sem_set *s)
{
	for (struct sem_undo *u = undos; u; u = u->next)
		if (u->proc == p && u->set == s)
			return u;
	return NULL;
}

/*
 * perform_atomic_semop(): 0 when every op applied (then the values, pids
 * and undo adjustments are changed), 1 when one must wait (*block: its
 * index), -EAGAIN for a waiting op with IPC_NOWAIT, -ERANGE past SEMVMX or
 * an adjustment past SEMAEM. u is the caller's undo entry (when SEM_UNDO).
 */
static long try_ops(struct sem_set *s, const struct sembuf *ops, unsigned n, struct sem_undo *u, int pid,
		    unsigned *block)
{
	int vals[PVX_SEMOPM];	/* each op's new value, as applied so far */
	unsigned i;

	for (i = 0; i < n; i++) {
		const struct sembuf *op = &ops[i];
		int cur = s->sems[op->sem_num].val;
		for (unsigned j = 0; j < i; j++)	/* an earlier op on the same semaphore */
			if (ops[j].sem_num == op->sem_num)
				cur = vals[j];
		int v = cur + op->sem_op;
		if ((!op->sem_op && cur) || v < 0) {
			*block = i;
			return op->sem_flg & IPC_NOWAIT ? -EAGAIN : 1;
		}
		if (v > PVX_SEMVMX)
			return -ERANGE;
		if ((op->sem_flg & SEM_UNDO) && u) {
			int adj = u->adj[op->sem_num];
			for (unsigned j = 0; j < i; j++)
				if (ops[j].sem_num == op->sem_num && (ops[j].sem_flg & SEM_UNDO))
					adj -= ops[j].sem_op;
			adj -= op->sem_op;
			if (adj < -PVX_SEMAEM - 1 || adj > PVX_SEMAEM)
				return -ERANGE;
		}
		vals[i] = v;
	}
	for (i = 0; i < n; i++) {
		s->sems[ops[i].sem_num].val = vals[i];
		s->sems[ops[i].sem_num].pid = pid;
		if ((ops[i].sem_flg & SEM_UNDO) && u)
			u->adj[ops[i].sem_num] = (short)(u->adj[ops[i].sem_num] - ops[i].sem_op);
	}
	s->otime = ipc_now();
	return 0;
}

/* The caller's undo entry for s, made when missing (find_alloc_undo()). */
static long undo_get(const struct process *p, struct sem_set *s, struct sem_undo **out)
{
	struct sem_undo *u = undo_find(p, s);

	if (!u) {
		long r = mm_charge(undo_bytes(s));	/* a set's worth per process: the sandbox's memory too */
		if (r)
			return r;
		u = calloc(1, undo_bytes(s));
		if (!u) {
			mm_uncharge(undo_bytes(s));
			return -ENOMEM;
		}
		u->proc = p;
		u->set = s;
		u->next = undos;
		undos = u;
	}
	*out = u;
	return 0;
}

/* Sleep in semop until the ops can go, a signal, the deadline or the set's removal. */
static long wait_ops(struct task *t, struct sem_set *s, const struct sembuf *ops, unsigned n, bool undo,
		     uint64_t until)
{
	struct sem_waiter w = { .set = s };
	unsigned block = 0;
	long r;

	s->waiters++;
	w.next = waiting;
	waiting = &w;
	for (;;) {
		struct sem_undo *u = NULL;
		if (s->removed) {
			r = -EIDRM;
			break;
		}
		if (undo && (r = undo_get(t->proc, s, &u)))
			break;
		r = try_ops(s, ops, n, u, t->proc->pid, &block);
		if (r <= 0) {
			if (!r)
				sentry_wake_all();
			break;
		}
		w.num = ops[block].sem_num;
		w.zero = !ops[block].sem_op;
		if (signal_pending(t)) {
			r = -EINTR;
			break;
		}
		if (until && timer_now_ns() >= until) {
			r = -EAGAIN;
			break;
		}
		sentry_timedwait(until);
	}
	for (struct sem_waiter **p = &waiting; *p; p = &(*p)->next)
		if (*p == &w) {
			*p = w.next;
			break;
		}
	if (--s->waiters == 0 && s->removed)
		set_free(s);
	return r;
}

/* semtimedop(2), as do_semtimedop() after the copies: the checks in Linux's order. */
long sem_op(struct task *t, int id, struct sembuf *ops, unsigned n, uint64_t until)
{
	unsigned max = 0;
	bool undo = false, alter = false;

	for (unsigned i = 0; i < n; i++) {
		max = MAX(max, ops[i].sem_num);
		undo |= !!(ops[i].sem_flg & SEM_UNDO);
		alter |= ops[i].sem_op != 0;
	}
	struct ipc_obj *o = ipc_lookup(&sem_ids, id);
	if (!o)
		return -EINVAL;
	struct sem_set *s = set_of(o);
	if (max >= (unsigned)s->nsems)
		return -EFBIG;
	long r = ipc_perms(o, alter ? S_IWUGO : S_IRUGO);
	if (r)
		return r;
	struct sem_undo *u = NULL;
	unsigned block;
	if (undo && (r = undo_get(t->proc, s, &u)))
		return r;
	r = try_ops(s, ops, n, u, t->proc->pid, &block);
	if (r == 0)
		sentry_wake_all();
	if (r <= 0)
		return r;
	return wait_ops(t, s, ops, n, undo, until);
}

/* count_semcnt(): the tasks waiting for semaphore num to grow (or to be zero). */
static int count_waiting(const struct sem_set *s, int num, bool zero)
{
	int n = 0;

	for (const struct sem_waiter *w = waiting; w; w = w->next)
		n += w->set == s && w->num == num && w->zero == zero;
	return n;
}

static void clear_adj(const struct sem_set *s, int num)
{
	for (struct sem_undo *u = undos; u; u = u->next)
		if (u->set == s) {
			if (num < 0)
				memset(u->adj, 0, (size_t)s->nsems * sizeof(short));
			else
				u->adj[num] = 0;
		}
}

static long sem_info(struct task *t, int cmd, uint64_t buf)
{
	struct seminfo si = { .semmni = PVX_SEMMNI, .semmns = PVX_SEMMNS, .semmsl = PVX_SEMMSL,
			      .semopm = PVX_SEMOPM, .semvmx = PVX_SEMVMX, .semmnu = PVX_SEMMNS,
			      .semmap = PVX_SEMMNS, .semume = PVX_SEMOPM, .semusz = 20, .semaem = PVX_SEMAEM };
	int max = ipc_max_idx(&sem_ids);

	if (cmd == SEM_INFO) {
		si.semusz = sem_ids.in_use;
		si.semaem = used_sems;
	}
	if (copy_to_guest(t->mm, buf, &si, sizeof(si)))
		return -EFAULT;
	return max < 0 ? 0 : max;
}

static long sem_stat(struct task *t, int id, int cmd, uint64_t buf)
{
	struct ipc_obj *o = cmd == IPC_STAT ? ipc_lookup(&sem_ids, id) : ipc_at(&sem_ids, id);
	long r;

	if (!o)
		return -EINVAL;
	if (cmd != SEM_STAT_ANY && (r = ipc_perms(o, S_IRUGO)))
		return r;
	struct sem_set *s = set_of(o);
	struct semid64_ds ds = { .sem_otime = s->otime, .sem_ctime = s->ctime, .sem_nsems = (unsigned long)s->nsems };
	ipc_fill_perm(o, &ds.sem_perm);
	if (copy_to_guest(t->mm, buf, &ds, sizeof(ds)))
		return -EFAULT;
	return cmd == IPC_STAT ? 0 : o->id;
}

/* GETALL and SETALL (semctl_main()): the values as unsigned shorts at the guest's array. */
static long sem_all(struct task *t, struct sem_set *s, int cmd, uint64_t buf)
{
	unsigned short *v = calloc((size_t)s->nsems, sizeof(*v));
	long r = 0;

	if (!v)
		return -ENOMEM;
	if (cmd == GETALL) {
		for (int i = 0; i < s->nsems; i++)
			v[i] = (unsigned short)s->sems[i].val;
		r = copy_to_guest(t->mm, buf, v, (size_t)s->nsems * sizeof(*v));
	} else if (!(r = copy_from_guest(t->mm, v, buf, (size_t)s->nsems * sizeof(*v)))) {
		for (int i = 0; i < s->nsems && !r; i++)
			if (v[i] > PVX_SEMVMX)
				r = -ERANGE;
		for (int i = 0; i < s->nsems && !r; i++) {
			s->sems[i].val = v[i];
			s->sems[i].pid = t->proc->pid;
		}
		if (!r) {
			clear_adj(s, -1);
			s->ctime = ipc_now();
			sentry_wake_all();
		}
	}
	free(v);
	return r;
}

/* semctl(2), as ksys_semctl(): arg is the union semun (a value or a guest pointer). */
long sem_ctl(struct task *t, int id, int num, int cmd, uint64_t arg)
{
	struct semid64_ds ds;
	long r;

	if (id < 0)
		return -EINVAL;
	switch (cmd) {
	case IPC_INFO:
	case SEM_INFO:
		return sem_info(t, cmd, arg);
	case IPC_STAT:
	case SEM_STAT:
	case SEM_STAT_ANY:
		return sem_stat(t, id, cmd, arg);
	case SETVAL:
		if ((int)arg > PVX_SEMVMX || (int)arg < 0)
			return -ERANGE;
		break;
	case IPC_SET:
		if (copy_from_guest(t->mm, &ds, arg, sizeof(ds)))
			return -EFAULT;
		break;
	case GETALL: case GETVAL: case GETPID: case GETNCNT: case GETZCNT: case SETALL: case IPC_RMID:
		break;
	default:
		return -EINVAL;
	}
	struct ipc_obj *o = ipc_lookup(&sem_ids, id);
	if (!o)
		return -EINVAL;
	struct sem_set *s = set_of(o);
	if (cmd == IPC_SET || cmd == IPC_RMID) {
		if ((r = ipc_owner(o)))
			return r;
		if (cmd == IPC_RMID) {
			set_remove(s);
			return 0;
		}
		if (ds.sem_perm.uid == (unsigned)-1 || ds.sem_perm.gid == (unsigned)-1)
			return -EINVAL;
		ipc_set_perm(o, &ds.sem_perm);
		s->ctime = ipc_now();
		return 0;
	}
	bool write = cmd == SETALL || cmd == SETVAL;
	if ((r = ipc_perms(o, write ? S_IWUGO : S_IRUGO)))
		return r;
	if (cmd == GETALL || cmd == SETALL)
		return sem_all(t, s, cmd, arg);
	if (num < 0 || num >= s->nsems)
		return -EINVAL;
	switch (cmd) {
	case GETVAL: return s->sems[num].val;
	case GETPID: return s->sems[num].pid;
	case GETNCNT: return count_waiting(s, num, false);
	case GETZCNT: return count_waiting(s, num, true);
	}
	/* SETVAL */
	s->sems[num].val = (int)arg;
	s->sems[num].pid = t->proc->pid;
	clear_adj(s, num);
	s->ctime = ipc_now();
	sentry_wake_all();
	return 0;
}

/* exit_sem(): each adjustment added, the value clamped to [0, SEMVMX], as Linux applies them. */
void sem_exit(struct process *p)
{
	bool changed = false;

	for (struct sem_undo *u = undos; u; u = u->next) {
		if (u->proc != p)
			continue;
		for (int i = 0; i < u->set->nsems; i++) {
			if (!u->adj[i])
				continue;
			struct sem *m = &u->set->sems[i];
			m->val = MIN(MAX(m->val + u->adj[i], 0), PVX_SEMVMX);
			m->pid = p->pid;
			changed = true;
		}
	}
	undo_drop(NULL, p);
	if (changed)
		sentry_wake_all();
}

/* /proc/sysvipc/sem's lines (sysvipc_sem_proc_show()). */
long sem_proc_text(FILE *out)
{
	fprintf(out, "       key      semid perms      nsems   uid   gid  cuid  cgid      otime      ctime\n");
	for (int i = 0; i <= ipc_max_idx(&sem_ids); i++) {
		struct ipc_obj *o = ipc_at(&sem_ids, i);
		if (!o)
			continue;
		struct sem_set *s = set_of(o);
		fprintf(out, "%10d %10d  %4o %10u %5u %5u %5u %5u %10lu %10lu\n", o->key, o->id, o->mode,
			(unsigned)s->nsems, o->uid, o->gid, o->cuid, o->cgid, s->otime, s->ctime);
	}
	return 0;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * Futexes: a table of waiters under the sentry lock (futex(2) itself, which
 * decodes the op and the timeout, is syscalls/sys_futex.c).
 *
 * A waiter reads the futex word and queues itself while holding the sentry
 * lock; a waker takes the same lock before it looks for waiters. The guest
 * changes the word with plain atomics in its own memory and then calls
 * FUTEX_WAKE, so a wake can never fall between a waiter's compare and its
 * sleep: the usual futex argument, with the sentry lock as the hash-bucket
 * lock.
 *
 * Keys, as get_futex_key() makes them: a word in a MAP_SHARED mapping is
 * (the mapped inode, offset in it) unless the op is FUTEX_PRIVATE_FLAG, so
 * that processes sharing memory meet on it however each mapped it: the same
 * file opened and mapped separately, at another address or offset of the
 * mapping, or a shared anonymous mapping (a memfd) inherited through fork.
 * Anything else is (address space, address).
 *
 * FUTEX_WAKE_OP changes the guest word with guest_cmpxchg32 (mm/), which
 * runs a lock cmpxchg in the guest's own address space: atomic against the
 * guest's threads on other CPUs, unlike a read and a write through
 * process_vm_readv/writev.
 *
 * Not here: the PI ops and FUTEX_WAIT_REQUEUE_PI: ENOSYS. Robust lists:
 * sentry/kernel/robust.c.
 */
#include <linux/futex.h>
#include <sys/mman.h>

#include "pvx/futex.h"
#include "pvx/kernel.h"
#include "pvx/timer.h"

struct futex_key {
	const struct mm *mm;	/* NULL for a shared mapping's inode */
	uint64_t dev, ino;	/* the inode, for shared mappings */
	uint64_t off;		/* address, or offset in the inode */
};

struct futex_waiter {
	struct futex_waiter *next, *prev;
	struct futex_key key;
	uint32_t bitset;
	bool woken;
	bool *any;	/* futex_waitv: set when any waiter of the sleeper is woken */
};

static struct futex_waiter head = { &head, &head };

static struct futex_key key_of(struct mm *mm, uint64_t uaddr, bool private)
{
	const struct vma *v = private ? NULL : vma_lookup(&mm->vmas, uaddr);

	if (v && (v->flags & MAP_SHARED) && v->file)
		return (struct futex_key){ NULL, v->file->dev, v->file->ino, v->off + (uaddr - v->start) };
	return (struct futex_key){ mm, 0, 0, uaddr };
}

/*
 * get_futex_key(): a shared futex's key comes from the page, so a word
 * that cannot be read (unmapped, PROT_NONE, a file page past its end) is
 * EFAULT; a private key is the address alone and is never checked.
 */
static long key_get(struct mm *mm, uint64_t uaddr, bool private, struct futex_key *k)
{
	uint32_t word;

	if (uaddr & 3)
		return -EINVAL;	/* "naturally aligned" */
	if (uaddr > PVX_GUEST_TASK_SIZE - sizeof(word))
		return -EFAULT;	/* access_ok */
	if (!private && copy_from_guest(mm, &word, uaddr, sizeof(word)))
		return -EFAULT;
	*k = key_of(mm, uaddr, private);
	return 0;
}

static bool key_eq(struct futex_key a, struct futex_key b)
{
	return a.mm == b.mm && a.dev == b.dev && a.ino == b.ino && a.off == b.off;
}

static void unqueue(struct futex_waiter *w)
{
	w->prev->next = w->next;
	w->next->prev = w->prev;
	w->next = w->prev = w;
}

/*
 * Wake up to n waiters on key k whose bitset meets bitset. As Linux's
 * loops ("if (++ret >= nr_wake) break" after the wake), an n of 0 or less
 * still wakes one.
 */
static int wake(struct futex_key k, int n, uint32_t bitset)
{
	int woken = 0;

	for (struct futex_waiter *w = head.next, *next; w != &head; w = next) {
		next = w->next;
		if (!key_eq(w->key, k) || !(w->bitset & bitset))
			continue;
		unqueue(w);
		w->woken = true;
		if (w->any)
			*w->any = true;
		if (++woken >= n)
			break;
	}
	if (woken)
		sentry_wake_all();
	return woken;
}

/* The clear_child_tid wake of an exiting thread: a shared key where the word is in shared memory. */
int futex_wake(struct mm *mm, uint64_t uaddr, int n)
{
	return wake(key_of(mm, uaddr, false), n, FUTEX_BITSET_MATCH_ANY);
}

/* FUTEX_WAKE and FUTEX_WAKE_BITSET. */
int futex_wake_bitset(struct mm *mm, uint64_t uaddr, bool private, int n, uint32_t bitset)
{
	struct futex_key k;
	long r = key_get(mm, uaddr, private, &k);

	return r < 0 ? (int)r : wake(k, n, bitset);
}

/* Queue t on the word's key and sleep until woken, a signal or the deadline (see pvx/futex.h). */
long futex_wait(struct task *t, uint64_t uaddr, uint32_t val, uint64_t until, bool timed, bool private,
		uint32_t bitset)
{
	struct futex_waiter w = { .bitset = bitset };
	uint32_t cur;
	long r;

	if ((r = copy_from_guest(t->mm, &cur, uaddr, sizeof(cur))))
		return r;
	if (cur != val)
		return -EAGAIN;
	w.key = key_of(t->mm, uaddr, private);
	w.next = &head;
	w.prev = head.prev;
	head.prev->next = &w;
	head.prev = &w;
	for (;;) {
		if (w.woken)
			return 0;
		if (signal_pending(t)) {
			r = timed ? -EINTR : -ERESTARTSYS;
			break;
		}
		if (until && timer_now_ns() >= until) {
			r = -ETIMEDOUT;
			break;
		}
		sentry_timedwait(until);
	}
	unqueue(&w);
	return r;
}

/* Wake n waiters of uaddr's key and move up to n2 more to uaddr2's, after the FUTEX_CMP_REQUEUE check. */
long futex_requeue(struct task *t, uint64_t uaddr, int n, int n2, uint64_t uaddr2, bool cmp, uint32_t val3,
		   bool private)
{
	uint32_t cur;
	long r;
	int moved = 0;

	if (n < 0 || n2 < 0)
		return -EINVAL;
	struct futex_key k1, k2;
	if ((r = key_get(t->mm, uaddr, private, &k1)) || (r = key_get(t->mm, uaddr2, private, &k2)))
		return r;
	if (cmp) {
		if ((r = copy_from_guest(t->mm, &cur, uaddr, sizeof(cur))))
			return r;
		if (cur != val3)
			return -EAGAIN;
	}
	int woken = wake(k1, n, FUTEX_BITSET_MATCH_ANY);
	for (struct futex_waiter *w = head.next; w != &head && moved < n2; w = w->next)
		if (key_eq(w->key, k1)) {
			w->key = k2;
			moved++;
		}
	return woken + moved;
}

#define ATOMIC_OP_TRIES 100000	/* cmpxchg retries against guest threads changing the word meanwhile */

/*
 * arch_futex_atomic_op_inuser(): *uaddr = *uaddr OP oparg, atomically,
 * *old = what it was; -ENOSYS for an op code Linux has not (before the word
 * is touched), -EFAULT. A cmpxchg loop: the word is read, the new value
 * computed, and stored only if the word is still what was read. A guest
 * that changes the word for ever between our read and our cmpxchg gets
 * EAGAIN after ATOMIC_OP_TRIES (the sentry lock is held meanwhile).
 */
static long atomic_op(struct mm *mm, uint64_t uaddr, unsigned op, uint32_t oparg, uint32_t *old)
{
	uint32_t cur, want, prev;
	long r;

	if (op > FUTEX_OP_XOR)
		return -ENOSYS;
	if ((r = copy_from_guest(mm, &cur, uaddr, sizeof(cur))))
		return r;
	for (int i = 0; i < ATOMIC_OP_TRIES; i++) {
		switch (op) {
		case FUTEX_OP_SET: want = oparg; break;
		case FUTEX_OP_ADD: want = cur + oparg; break;
		case FUTEX_OP_OR: want = cur | oparg; break;
		case FUTEX_OP_ANDN: want = cur & ~oparg; break;
		default: want = cur ^ oparg; break;	/* FUTEX_OP_XOR */
		}
		if ((r = guest_cmpxchg32(mm, uaddr, cur, want, &prev)))
			return r;
		if (prev == cur) {
			*old = cur;
			return 0;
		}
		cur = prev;
	}
	return -EAGAIN;
}

/*
 * futex_atomic_op_inuser(): decode FUTEX_OP(op, oparg, cmp, cmparg), run
 * the op on uaddr, and say whether the old value meets the comparison
 * (1/0). oparg and cmparg are 12-bit signed; with FUTEX_OP_OPARG_SHIFT the
 * op's argument is 1 << oparg, a shift outside 0..31 taken mod 32 (Linux
 * only logs it). A bad cmp is -ENOSYS after the op has run, as Linux.
 */
static long wake_op_atomic(struct mm *mm, uint64_t uaddr, uint32_t encoded)
{
	unsigned op = (encoded & 0x70000000) >> 28, cmp = (encoded & 0x0f000000) >> 24;
	int32_t oparg = (int32_t)(encoded << 8) >> 20, cmparg = (int32_t)(encoded << 20) >> 20;
	int32_t old;
	long r;

	if (encoded & (FUTEX_OP_OPARG_SHIFT << 28))
		oparg = (int32_t)(1U << (oparg & 31));
	if ((r = atomic_op(mm, uaddr, op, (uint32_t)oparg, (uint32_t *)&old)))
		return r;
	switch (cmp) {
	case FUTEX_OP_CMP_EQ: return old == cmparg;
	case FUTEX_OP_CMP_NE: return old != cmparg;
	case FUTEX_OP_CMP_LT: return old < cmparg;
	case FUTEX_OP_CMP_GE: return old >= cmparg;
	case FUTEX_OP_CMP_LE: return old <= cmparg;
	case FUTEX_OP_CMP_GT: return old > cmparg;
	}
	return -ENOSYS;
}

/*
 * FUTEX_WAKE_OP (futex_wake_op in kernel/futex/waitwake.c): the op on
 * uaddr2, then wake up to n waiters of uaddr and, if the old value of
 * uaddr2 met the comparison, up to n2 of uaddr2. Returns how many woke.
 */
long futex_wake_op(struct task *t, uint64_t uaddr, int n, int n2, uint64_t uaddr2, uint32_t encoded, bool private)
{
	struct futex_key k1, k2;
	long r, met;

	if ((r = key_get(t->mm, uaddr, private, &k1)) || (r = key_get(t->mm, uaddr2, private, &k2)))
		return r;
	if ((met = wake_op_atomic(t->mm, uaddr2, encoded)) < 0)
		return met;
	r = wake(k1, n, FUTEX_BITSET_MATCH_ANY);
	if (met)
		r += wake(k2, n2, FUTEX_BITSET_MATCH_ANY);
	return r;
}

/*
 * futex_waitv(2), its vector already read and checked (sys_futex.c):
 * queue a waiter on each word whose value is the expected one, under the
 * sentry lock, and sleep until one is woken (its index; when several
 * were, the last one's, as futex_unqueue_multiple), EAGAIN when a word
 * differs (unless one was woken meanwhile), ETIMEDOUT at until (ns of
 * CLOCK_MONOTONIC, 0: none), ERESTARTSYS on a signal.
 */
long futex_waitv(struct task *t, const struct futex_waitv_req *v, int n, uint64_t until)
{
	struct futex_waiter w[FUTEX_WAITV_MAX];
	bool any = false;
	int queued = 0;
	long r = 0;

	for (int i = 0; i < n && !r; i++)
		r = key_get(t->mm, v[i].uaddr, v[i].private, &w[i].key);
	if (r)
		return r;
	for (; queued < n; queued++) {
		uint32_t cur;
		if ((r = copy_from_guest(t->mm, &cur, v[queued].uaddr, sizeof(cur))))
			break;
		if (cur != v[queued].val) {
			r = -EAGAIN;
			break;
		}
		w[queued].bitset = FUTEX_BITSET_MATCH_ANY;
		w[queued].woken = false;
		w[queued].any = &any;
		w[queued].next = &head;
		w[queued].prev = head.prev;
		head.prev->next = &w[queued];
		head.prev = &w[queued];
	}
	while (!r && !any) {
		if (signal_pending(t))
			r = -ERESTARTSYS;
		else if (until && timer_now_ns() >= until)
			r = -ETIMEDOUT;
		else
			sentry_timedwait(until);
	}
	long woken = -1;
	for (int i = 0; i < queued; i++) {
		if (w[i].woken)
			woken = i;
		else
			unqueue(&w[i]);
	}
	return woken >= 0 ? woken : r;
}

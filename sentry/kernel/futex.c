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
 * PI futexes (FUTEX_LOCK_PI..., the requeue-PI pair): below. Robust
 * lists: sentry/kernel/robust.c.
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
	/* PI waiters (FUTEX_LOCK_PI*): woken means handed the lock. */
	bool pi;
	bool rqpi;		/* FUTEX_WAIT_REQUEUE_PI, not requeued yet: it waits for rq_key's lock */
	struct futex_key rq_key;
	struct task *task;	/* the waiting thread */
	struct task *owner;	/* who holds the lock, by the word when it queued or by the last hand-off */
	struct mm *mm;		/* where the word is, for a hand-off at the owner's exit */
	uint64_t uaddr;
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
 * Wake up to n waiters on key k whose bitset meets bitset. As Linux's wake
 * loops ("if (++ret >= nr_wake) break" after the wake), an n of 0 or less
 * still wakes one, unless exact (futex_requeue counts before it wakes).
 * A PI waiter on k makes it -EINVAL, as "if (this->pi_state ||
 * this->rt_waiter)" does: the word is a PI lock, not a plain futex.
 */
static int wake_n(struct futex_key k, int n, uint32_t bitset, bool exact)
{
	int woken = 0, r = 0;

	for (struct futex_waiter *w = head.next, *next; w != &head && (!exact || woken < n); w = next) {
		next = w->next;
		if (!key_eq(w->key, k))
			continue;
		if (w->pi || w->rqpi) {
			r = -EINVAL;
			break;
		}
		if (!(w->bitset & bitset))
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
	return r ? r : woken;
}

static int wake(struct futex_key k, int n, uint32_t bitset)
{
	return wake_n(k, n, bitset, false);
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

/* Queue w and sleep until it is woken (0), the deadline (-ETIMEDOUT) or a signal (-EINTR); it leaves the queue. */
static long sleep_queued(struct task *t, struct futex_waiter *w, uint64_t until)
{
	long r;

	w->next = &head;
	w->prev = head.prev;
	head.prev->next = w;
	head.prev = w;
	for (;;) {
		if (w->woken)
			return 0;
		if (signal_pending(t)) {
			r = -EINTR;
			break;
		}
		if (until && timer_now_ns() >= until) {
			r = -ETIMEDOUT;
			break;
		}
		sentry_timedwait(until);
	}
	unqueue(w);
	return r;
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
	r = sleep_queued(t, &w, until);
	return r == -EINTR && !timed ? -ERESTARTSYS : r;
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
	int woken = wake_n(k1, n, FUTEX_BITSET_MATCH_ANY, true);
	if (woken < 0)
		return woken;
	for (struct futex_waiter *w = head.next; w != &head && moved < n2; w = w->next)
		if (key_eq(w->key, k1) && !w->pi && !w->rqpi) {
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
	if ((r = wake(k1, n, FUTEX_BITSET_MATCH_ANY)) < 0 || !met)
		return r;
	long r2 = wake(k2, n2, FUTEX_BITSET_MATCH_ANY);
	return r2 < 0 ? r2 : r + r2;
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
		w[queued] = (struct futex_waiter){ .key = w[queued].key, .bitset = FUTEX_BITSET_MATCH_ANY, .any = &any };
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

/*
 * PI futexes (kernel/futex/pi.c): the word is a lock, 0 when free, else
 * the owner's tid with FUTEX_WAITERS when someone sleeps on it (the
 * owner's unlock must then come to the kernel) and FUTEX_OWNER_DIED when
 * its last owner died holding it. Changes to the word are cmpxchg's in the
 * guest's mm (guest_cmpxchg32), so a guest thread's own atomic lock or
 * unlock at the same time is never lost.
 *
 * Priority inheritance itself is a no-op: pvx schedules nothing by
 * priority (the host does), so there is no owner to boost. Waiters are
 * handed the lock in the order they queued (Linux: priority order, then
 * FIFO; every guest thread has the same priority to pvx).
 */

/* The first waiter queued on k, PI or not. */
static struct futex_waiter *top_waiter(struct futex_key k)
{
	for (struct futex_waiter *w = head.next; w != &head; w = w->next)
		if (key_eq(w->key, k))
			return w;
	return NULL;
}

/* Every PI waiter of k now waits for owner (a lock taken or handed on). */
static void set_owner(struct futex_key k, struct task *owner)
{
	for (struct futex_waiter *w = head.next; w != &head; w = w->next)
		if (w->pi && key_eq(w->key, k))
			w->owner = owner;
}

/* Hand the lock to waiter w: the word is already its; it wakes owning it. */
static void hand_to(struct futex_waiter *w)
{
	unqueue(w);
	w->woken = true;
	set_owner(w->key, w->task);
	sentry_wake_all();
}

/*
 * FUTEX_LOCK_PI, FUTEX_LOCK_PI2, FUTEX_TRYLOCK_PI (futex_lock_pi and
 * futex_lock_pi_atomic): take a free word (keeping FUTEX_OWNER_DIED);
 * EDEADLK when the caller owns it; ESRCH when its owner tid is no thread
 * of the sandbox or one that has exited (attach_to_pi_owner,
 * handle_exit_race); EINVAL when plain waiters sleep on the word or the
 * word names another owner than the one its waiters wait for
 * (attach_to_pi_state). Else set FUTEX_WAITERS and (trylock: EAGAIN after
 * that, as Linux leaves the bit) sleep until an unlock or the owner's exit
 * hands the lock over (0), the deadline (ETIMEDOUT; until: CLOCK_MONOTONIC
 * ns, 0: none) or a signal (restarted whatever SA_RESTART says:
 * ERESTARTNOINTR).
 */
/*
 * futex_lock_pi_atomic() for thread t on the word at uaddr of mm (key k):
 * 1 when t took it, 0 when t must wait (FUTEX_WAITERS is set, *owner holds
 * it), or -errno (see futex_lock_pi). set_waiters: a lock taken on t's
 * behalf by a requeue keeps FUTEX_WAITERS (the requeuer queues more).
 */
static long pi_attach(struct mm *mm, uint64_t uaddr, struct futex_key k, struct task *t, bool set_waiters,
		      struct task **owner)
{
	const uint32_t tid = (uint32_t)t->tid;
	uint32_t uval, prev;
	long r;

	for (int tries = 0; tries < ATOMIC_OP_TRIES; tries++) {
		if ((r = copy_from_guest(mm, &uval, uaddr, sizeof(uval))))
			return r;
		if ((uval & FUTEX_TID_MASK) == tid)
			return -EDEADLK;
		struct futex_waiter *top = top_waiter(k);
		if (top && !top->pi)
			return -EINVAL;
		uint32_t owner_tid = uval & FUTEX_TID_MASK;
		if (!owner_tid) {	/* free, or no owner (OWNER_DIED, stray WAITERS): take it, as Linux does */
			uint32_t nv = (uval & FUTEX_OWNER_DIED) | tid | (top || set_waiters ? FUTEX_WAITERS : 0);
			if ((r = guest_cmpxchg32(mm, uaddr, uval, nv, &prev)))
				return r;
			if (prev != uval)
				continue;
			if (top)
				set_owner(k, t);
			return 1;
		}
		struct task *o = task_find((int)owner_tid);
		if (top && top->owner && top->owner != o)
			return -EINVAL;
		if (!(uval & FUTEX_WAITERS)) {	/* set before the owner is looked at, as Linux */
			if ((r = guest_cmpxchg32(mm, uaddr, uval, uval | FUTEX_WAITERS, &prev)))
				return r;
			if (prev != uval)
				continue;
		}
		if (!o || !o->proc || o->exited)
			return -ESRCH;	/* the word is as read: another change would have failed the cmpxchg */
		*owner = o;
		return 0;
	}
	return -EAGAIN;
}

long futex_lock_pi(struct task *t, uint64_t uaddr, bool private, uint64_t until, bool trylock)
{
	struct futex_key k;
	struct task *owner;
	long r;

	if ((r = key_get(t->mm, uaddr, private, &k)))
		return r;
	for (;;) {
		if ((r = pi_attach(t->mm, uaddr, k, t, false, &owner)))
			return r > 0 ? 0 : r;
		if (owner->exiting) {	/* wait_for_owner_exiting(): its robust walk may free the word */
			if (signal_pending(t))
				return -ERESTARTNOINTR;
			sentry_timedwait(timer_now_ns() + 1000000);
			continue;
		}
		if (trylock)
			return -EAGAIN;
		struct futex_waiter w = { .key = k, .pi = true, .task = t, .owner = owner, .mm = t->mm,
					  .uaddr = uaddr, .bitset = FUTEX_BITSET_MATCH_ANY };
		r = sleep_queued(t, &w, until);
		return r == -EINTR ? -ERESTARTNOINTR : r;
	}
}

/*
 * FUTEX_WAIT_REQUEUE_PI (futex_wait_requeue_pi): wait on the plain word
 * uaddr like FUTEX_WAIT, for a FUTEX_CMP_REQUEUE_PI to uaddr2 that either
 * takes the PI lock uaddr2 for us (0) or moves us to its waiters, to be
 * handed it by an unlock (0). Still on uaddr: ETIMEDOUT, or a restart
 * after a signal; once moved: ETIMEDOUT, or EAGAIN after a signal (Linux
 * saves the restart that would fail on the changed word anyway).
 */
long futex_wait_requeue_pi(struct task *t, uint64_t uaddr, uint32_t val, uint64_t until, uint64_t uaddr2,
			   bool private)
{
	struct futex_key k1, k2;
	uint32_t cur;
	long r;

	if (uaddr == uaddr2)
		return -EINVAL;
	if ((r = key_get(t->mm, uaddr2, private, &k2)) || (r = key_get(t->mm, uaddr, private, &k1)))
		return r;
	if ((r = copy_from_guest(t->mm, &cur, uaddr, sizeof(cur))))
		return r;
	if (cur != val)
		return -EAGAIN;
	if (key_eq(k1, k2))
		return -EINVAL;
	struct futex_waiter w = { .key = k1, .rqpi = true, .rq_key = k2, .task = t, .mm = t->mm, .uaddr = uaddr2,
				  .bitset = FUTEX_BITSET_MATCH_ANY };
	r = sleep_queued(t, &w, until);
	if (r == -EINTR)
		return w.pi ? -EAGAIN : -ERESTARTNOINTR;
	return r;
}

/*
 * FUTEX_CMP_REQUEUE_PI (futex_requeue with requeue_pi): n must be 1 and
 * the words differ (EINVAL); *uaddr must be val3 (EAGAIN). The first
 * waiter of uaddr (every one must be a FUTEX_WAIT_REQUEUE_PI waiter for
 * uaddr2, else EINVAL) is given the lock uaddr2 if it is free
 * (futex_proxy_trylock_atomic), and woken; then waiters move to uaddr2's
 * PI waiters until "task_count - nr_wake >= nr_requeue" (so n2 + 1 of them
 * when none was given the lock, as Linux). Returns woken + moved.
 */
long futex_cmp_requeue_pi(struct task *t, uint64_t uaddr, int n, int n2, uint64_t uaddr2, uint32_t val3,
			  bool private)
{
	struct futex_key k1, k2;
	struct task *owner = NULL;
	uint32_t cur;
	int count = 0;
	long r;

	if (n < 0 || n2 < 0 || uaddr == uaddr2 || n != 1)
		return -EINVAL;
	if ((r = key_get(t->mm, uaddr, private, &k1)) || (r = key_get(t->mm, uaddr2, private, &k2)))
		return r;
	if (key_eq(k1, k2))
		return -EINVAL;
	if ((r = copy_from_guest(t->mm, &cur, uaddr, sizeof(cur))))
		return r;
	if (cur != val3)
		return -EAGAIN;
	struct futex_waiter *top = top_waiter(k1);
	if (!top)
		return 0;
	if (!top->rqpi || !key_eq(top->rq_key, k2))
		return -EINVAL;
	if ((r = pi_attach(t->mm, uaddr2, k2, top->task, true, &owner)) < 0)
		return r;
	if (r == 1) {
		unqueue(top);
		top->woken = true;
		owner = top->task;
		count++;
		sentry_wake_all();
	}
	r = 0;
	for (struct futex_waiter *w = head.next; w != &head && count - n < n2; w = w->next) {
		if (!key_eq(w->key, k1))
			continue;
		if (!w->rqpi || !key_eq(w->rq_key, k2)) {
			r = -EINVAL;
			break;
		}
		w->key = k2;
		w->rqpi = false;
		w->pi = true;
		w->owner = owner;
		count++;
	}
	return r ? r : count;
}

/*
 * FUTEX_UNLOCK_PI (futex_unlock_pi): only the owner (EPERM); the first
 * waiter gets the lock (the word: its tid | FUTEX_WAITERS, wake_futex_pi),
 * or the word becomes 0 (FUTEX_OWNER_DIED and stray bits go too).
 */
long futex_unlock_pi(struct task *t, uint64_t uaddr, bool private)
{
	const uint32_t tid = (uint32_t)t->tid;
	struct futex_key k;
	uint32_t uval, prev;
	long r;

	for (int tries = 0; tries < ATOMIC_OP_TRIES; tries++) {
		if ((r = copy_from_guest(t->mm, &uval, uaddr, sizeof(uval))))
			return r;
		if ((uval & FUTEX_TID_MASK) != tid)
			return -EPERM;
		if ((r = key_get(t->mm, uaddr, private, &k)))
			return r;
		struct futex_waiter *top = top_waiter(k);
		if (top && !top->pi)
			return -EINVAL;
		uint32_t nv = top ? FUTEX_WAITERS | (uint32_t)top->task->tid : 0;
		if ((r = guest_cmpxchg32(t->mm, uaddr, uval, nv, &prev)))
			return r;
		if (prev != uval)
			continue;
		if (top)
			hand_to(top);
		return 0;
	}
	return -EAGAIN;
}

/*
 * exit_pi_state_list(): t is gone (after its robust list set
 * FUTEX_OWNER_DIED on the locks it registered): each lock it held with
 * waiters goes to its first waiter, the word its tid | FUTEX_WAITERS |
 * FUTEX_OWNER_DIED, robust lock or not (fixup_pi_state_owner: "if
 * (!pi_state->owner) newtid |= FUTEX_OWNER_DIED"), so a waiter never
 * sleeps on a dead owner.
 */
void futex_exit_pi(struct task *t)
{
	for (struct futex_waiter *w = head.next; w != &head; w = w->next) {
		if (!w->pi || w->owner != t)
			continue;
		struct futex_waiter *top = w;	/* the first PI waiter of its word */
		for (struct futex_waiter *x = head.next; x != w; x = x->next)
			if (x->pi && key_eq(x->key, w->key)) {
				top = x;
				break;
			}
		uint32_t cur, prev;
		for (int tries = 0; tries < 100 && !copy_from_guest(top->mm, &cur, top->uaddr, sizeof(cur)); tries++) {
			uint32_t nv = FUTEX_OWNER_DIED | FUTEX_WAITERS | (uint32_t)top->task->tid;
			if (guest_cmpxchg32(top->mm, top->uaddr, cur, nv, &prev) || prev == cur)
				break;
		}
		hand_to(top);
		w = &head;	/* the queue changed: from the start */
	}
}

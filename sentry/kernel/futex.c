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
 * Not here: FUTEX_WAKE_OP (needs an atomic read-modify-write on guest
 * memory; glibc >= 2.25 and musl do not use it), the PI ops and
 * FUTEX_WAIT_REQUEUE_PI: ENOSYS. Robust lists: sentry/kernel/robust.c.
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

/* Wake up to n waiters on key k whose bitset meets bitset. */
static int wake(struct futex_key k, int n, uint32_t bitset)
{
	int woken = 0;

	for (struct futex_waiter *w = head.next, *next; w != &head && woken < n; w = next) {
		next = w->next;
		if (!key_eq(w->key, k) || !(w->bitset & bitset))
			continue;
		unqueue(w);
		w->woken = true;
		woken++;
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

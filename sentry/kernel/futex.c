// SPDX-License-Identifier: GPL-2.0
/*
 * futex(2): a table of waiters under the sentry lock.
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
 * FUTEX_WAIT_REQUEUE_PI: ENOSYS. Robust lists are recorded, not walked.
 */
#include <linux/futex.h>
#include <sys/mman.h>
#include <time.h>

#include "pvx/kernel.h"
#include "pvx/log.h"
#include "syscalls/syscalls.h"

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

int futex_wake(struct mm *mm, uint64_t uaddr, int n)
{
	return wake(key_of(mm, uaddr, false), n, FUTEX_BITSET_MATCH_ANY);
}

static uint64_t now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* The CLOCK_MONOTONIC deadline of a wait, in ns; 0 = none. */
static long deadline(struct task *t, uint64_t uts, int op, bool realtime, uint64_t *out)
{
	struct timespec ts;
	long r;

	*out = 0;
	if (!uts)
		return 0;
	if ((r = copy_from_guest(t->mm, &ts, uts, sizeof(ts))))
		return r;
	if (ts.tv_sec < 0 || ts.tv_nsec < 0 || ts.tv_nsec >= 1000000000L)
		return -EINVAL;
	uint64_t v = (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
	uint64_t mono = now_ns(CLOCK_MONOTONIC);
	if (op == FUTEX_WAIT) {		/* relative */
		*out = mono + v;
	} else {			/* FUTEX_WAIT_BITSET: absolute on its clock */
		uint64_t now = realtime ? now_ns(CLOCK_REALTIME) : mono;
		*out = v > now ? mono + (v - now) : mono;
	}
	return 0;
}

static long futex_wait(struct task *t, uint64_t uaddr, uint32_t val, uint64_t uts, int op, int flags,
		       uint32_t bitset)
{
	struct futex_waiter w = { .bitset = bitset };
	uint64_t until;
	uint32_t cur;
	long r;

	if (!bitset)
		return -EINVAL;
	if ((r = deadline(t, uts, op, flags & FUTEX_CLOCK_REALTIME, &until)))
		return r;
	if ((r = copy_from_guest(t->mm, &cur, uaddr, sizeof(cur))))
		return r;
	if (cur != val)
		return -EAGAIN;
	w.key = key_of(t->mm, uaddr, flags & FUTEX_PRIVATE_FLAG);
	w.next = &head;
	w.prev = head.prev;
	head.prev->next = &w;
	head.prev = &w;
	for (;;) {
		if (w.woken)
			return 0;
		if (signal_pending(t)) {
			r = uts ? -EINTR : -ERESTARTSYS;
			break;
		}
		if (until && now_ns(CLOCK_MONOTONIC) >= until) {
			r = -ETIMEDOUT;
			break;
		}
		sentry_timedwait(until);
	}
	unqueue(&w);
	return r;
}

/* FUTEX_REQUEUE / FUTEX_CMP_REQUEUE: wake n, move up to n2 waiters to uaddr2. */
static long futex_requeue(struct task *t, uint64_t uaddr, int n, int n2, uint64_t uaddr2, bool cmp, uint32_t val3,
			  bool private)
{
	uint32_t cur;
	long r;
	int moved = 0;

	if (n < 0 || n2 < 0)
		return -EINVAL;
	if (cmp) {
		if ((r = copy_from_guest(t->mm, &cur, uaddr, sizeof(cur))))
			return r;
		if (cur != val3)
			return -EAGAIN;
	}
	struct futex_key k1 = key_of(t->mm, uaddr, private), k2 = key_of(t->mm, uaddr2, private);
	int woken = wake(k1, n, FUTEX_BITSET_MATCH_ANY);
	for (struct futex_waiter *w = head.next; w != &head && moved < n2; w = w->next)
		if (key_eq(w->key, k1)) {
			w->key = k2;
			moved++;
		}
	return woken + moved;
}

long sys_futex(struct task *t, const long a[6])
{
	int op = (int)a[1] & FUTEX_CMD_MASK, flags = (int)a[1] & ~FUTEX_CMD_MASK;
	uint64_t uaddr = (uint64_t)a[0];
	bool private = flags & FUTEX_PRIVATE_FLAG;

	if (uaddr & 3)
		return -EINVAL;
	if ((flags & FUTEX_CLOCK_REALTIME) && op != FUTEX_WAIT && op != FUTEX_WAIT_BITSET)
		return -ENOSYS;
	switch (op) {
	case FUTEX_WAIT:
		return futex_wait(t, uaddr, (uint32_t)a[2], (uint64_t)a[3], op, flags, FUTEX_BITSET_MATCH_ANY);
	case FUTEX_WAIT_BITSET:
		return futex_wait(t, uaddr, (uint32_t)a[2], (uint64_t)a[3], op, flags, (uint32_t)a[5]);
	case FUTEX_WAKE:
		return wake(key_of(t->mm, uaddr, private), (int)a[2], FUTEX_BITSET_MATCH_ANY);
	case FUTEX_WAKE_BITSET:
		if (!(uint32_t)a[5])
			return -EINVAL;
		return wake(key_of(t->mm, uaddr, private), (int)a[2], (uint32_t)a[5]);
	case FUTEX_REQUEUE:
		return futex_requeue(t, uaddr, (int)a[2], (int)a[3], (uint64_t)a[4], false, 0, private);
	case FUTEX_CMP_REQUEUE:
		return futex_requeue(t, uaddr, (int)a[2], (int)a[3], (uint64_t)a[4], true, (uint32_t)a[5], private);
	}
	if (op <= FUTEX_CMP_REQUEUE_PI)	/* a real op pvx lacks, not a bad number */
		pr_warn("futex op %d is not supported", op);
	return -ENOSYS;
}

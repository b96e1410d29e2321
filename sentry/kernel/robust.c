// SPDX-License-Identifier: GPL-2.0
/*
 * Robust futex lists (set_robust_list(2)), walked when their thread is
 * done with its memory, as Linux's exit_robust_list() and
 * handle_futex_death() do (kernel/futex/core.c): every lock on the list
 * (and the one in list_op_pending) still owned by the thread gets
 * FUTEX_OWNER_DIED, and one waiter is woken if FUTEX_WAITERS is set, so the
 * next locker sees EOWNERDEAD instead of sleeping for ever.
 *
 * Everything here is guest memory the guest can forge: a bad pointer, an
 * unaligned word or a failed read ends the walk; a cycle ends after
 * ROBUST_LIST_LIMIT entries. Nothing is trusted but the read values.
 *
 * The word changes with a cmpxchg in the guest's mm (guest_cmpxchg32),
 * retried while the guest's live threads change it meanwhile (setting
 * FUTEX_WAITERS), as handle_futex_death does. A PI lock with waiters is
 * then handed to the first of them (futex_exit_pi, after this walk).
 */
#include <linux/futex.h>

#include "pvx/futex.h"
#include "pvx/kernel.h"

#define ROBUST_LIST_LIMIT 2048	/* Linux's: stops a cyclic list */
#define ROBUST_CMPXCHG_TRIES 1000	/* retries of one word's cmpxchg against the guest's own changes */

/* struct robust_list_head of the x86-64 ABI, as the guest wrote it. */
struct guest_robust_head {
	uint64_t next;		/* struct robust_list *: the first entry, or the head itself */
	int64_t futex_offset;	/* from an entry to its futex word */
	uint64_t list_op_pending;
};
_Static_assert(sizeof(struct guest_robust_head) == 24, "robust_list_head of the x86-64 ABI");

/* Read a list pointer: bit 0 marks a PI futex (fetch_robust_entry). */
static long fetch_entry(struct mm *mm, uint64_t uaddr, uint64_t *entry, bool *pi)
{
	uint64_t v;
	long r = copy_from_guest(mm, &v, uaddr, sizeof(v));

	if (r)
		return r;
	*entry = v & ~1ULL;
	*pi = v & 1;
	return 0;
}

/*
 * handle_futex_death(): the word at uaddr, if tid still owns it, becomes
 * FUTEX_OWNER_DIED (keeping FUTEX_WAITERS) and one waiter is woken. A
 * pending op on an unowned non-PI word wakes a waiter the unlock may have
 * missed. -EFAULT/-EINVAL end the walk.
 */
static long futex_death(struct mm *mm, uint64_t uaddr, int tid, bool pi, bool pending)
{
	uint32_t uval, mval, nval;
	long r;

	if (uaddr & 3)
		return -EINVAL;
	if ((r = copy_from_guest(mm, &uval, uaddr, sizeof(uval))))
		return r;
	for (int tries = 0;; tries++) {
		uint32_t owner = uval & FUTEX_TID_MASK;
		if (pending && !pi && !owner) {
			futex_wake(mm, uaddr, 1);
			return 0;
		}
		if (owner != (uint32_t)tid)
			return 0;
		mval = (uval & FUTEX_WAITERS) | FUTEX_OWNER_DIED;
		if ((r = guest_cmpxchg32(mm, uaddr, uval, mval, &nval)))
			return r;
		if (nval == uval)
			break;
		if (tries >= ROBUST_CMPXCHG_TRIES)
			return -EAGAIN;	/* a guest rewriting the word without end: the walk stops */
		uval = nval;
	}
	if (!pi && (uval & FUTEX_WAITERS))
		futex_wake(mm, uaddr, 1);
	return 0;
}

/* See pvx/futex.h. */
void futex_exit_robust(struct task *t, struct mm *mm)
{
	uint64_t head = t->robust_list, entry, next, pending;
	struct guest_robust_head h;
	bool pi, next_pi, pip;

	t->robust_list = 0;	/* walked once: at exit, exit_group, a kill or execve */
	if (!head || !mm || copy_from_guest(mm, &h, head, sizeof(h)))
		return;
	entry = h.next & ~1ULL;
	pi = h.next & 1;
	pending = h.list_op_pending & ~1ULL;
	pip = h.list_op_pending & 1;
	for (int limit = ROBUST_LIST_LIMIT; entry != head && limit > 0; limit--) {
		/* The next pointer first: the death handling may let another thread free this entry. */
		long rc = fetch_entry(mm, entry, &next, &next_pi);
		if (entry != pending && futex_death(mm, entry + (uint64_t)h.futex_offset, t->tid, pi, false))
			return;
		if (rc)
			return;
		entry = next;
		pi = next_pi;
	}
	if (pending)
		(void)futex_death(mm, pending + (uint64_t)h.futex_offset, t->tid, pip, true);
}

/* futex_exit_robust for every thread of p, while its stub is still there to read (exit_group, SIGKILL). */
void futex_exit_robust_all(struct process *p)
{
	if (!p->as)
		return;
	for (struct task *o = task_next(NULL); o; o = task_next(o))
		if (o->proc == p && o->robust_list)
			futex_exit_robust(o, p->mm);
}

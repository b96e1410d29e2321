/* SPDX-License-Identifier: GPL-2.0 */
/* Futex waiters (sentry/kernel/futex.c); all under the sentry lock. */
#ifndef PVX_FUTEX_H
#define PVX_FUTEX_H

#include <stdbool.h>
#include <stdint.h>
#include "pvx/task.h"

/* Wake up to n waiters on the guest word at uaddr of mm (shared key where it is shared memory). */
int futex_wake(struct mm *mm, uint64_t uaddr, int n);
/* FUTEX_WAKE(_BITSET): wake up to n waiters whose bitset meets bitset. */
int futex_wake_bitset(struct mm *mm, uint64_t uaddr, bool private, int n, uint32_t bitset);
/*
 * FUTEX_WAIT(_BITSET): sleep while the word at uaddr is val, until woken,
 * a signal (EINTR when timed, else ERESTARTSYS) or CLOCK_MONOTONIC until
 * (ns, 0: none; ETIMEDOUT). EAGAIN when the word is not val.
 */
long futex_wait(struct task *t, uint64_t uaddr, uint32_t val, uint64_t until, bool timed, bool private,
		uint32_t bitset);
/* FUTEX_REQUEUE / FUTEX_CMP_REQUEUE: wake n, move up to n2 waiters to uaddr2. */
long futex_requeue(struct task *t, uint64_t uaddr, int n, int n2, uint64_t uaddr2, bool cmp, uint32_t val3,
		   bool private);
/* FUTEX_WAKE_OP: the encoded op on uaddr2, then the wakes (sentry/kernel/futex.c). */
long futex_wake_op(struct task *t, uint64_t uaddr, int n, int n2, uint64_t uaddr2, uint32_t encoded, bool private);

#define FUTEX_WAITV_MAX 128
/* One entry of a futex_waitv(2) vector, read and checked. */
struct futex_waitv_req {
	uint64_t uaddr;
	uint32_t val;
	bool private;
};
/* futex_waitv(2): the index of a woken entry, -EAGAIN, -ETIMEDOUT (until: CLOCK_MONOTONIC ns), -ERESTARTSYS. */
long futex_waitv(struct task *t, const struct futex_waitv_req *v, int n, uint64_t until);

/*
 * PI futexes (sentry/kernel/futex.c): FUTEX_LOCK_PI/LOCK_PI2/TRYLOCK_PI
 * (until: CLOCK_MONOTONIC ns, 0: none) and FUTEX_UNLOCK_PI; futex_exit_pi
 * hands the locks a gone thread held to their waiters.
 */
long futex_lock_pi(struct task *t, uint64_t uaddr, bool private, uint64_t until, bool trylock);
long futex_unlock_pi(struct task *t, uint64_t uaddr, bool private);
/* FUTEX_WAIT_REQUEUE_PI and FUTEX_CMP_REQUEUE_PI. */
long futex_wait_requeue_pi(struct task *t, uint64_t uaddr, uint32_t val, uint64_t until, uint64_t uaddr2,
			   bool private);
long futex_cmp_requeue_pi(struct task *t, uint64_t uaddr, int n, int n2, uint64_t uaddr2, uint32_t val3,
			  bool private);
void futex_exit_pi(struct task *t);

/*
 * Walk t's robust futex list in mm (its memory, still mapped) and mark the
 * locks t still holds FUTEX_OWNER_DIED (sentry/kernel/robust.c); the list
 * is forgotten. At thread exit, execve, and for all threads of a process
 * before exit_group or SIGKILL takes its stub away (futex_exit_robust_all).
 */
void futex_exit_robust(struct task *t, struct mm *mm);
void futex_exit_robust_all(struct process *p);

#endif

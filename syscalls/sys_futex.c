// SPDX-License-Identifier: GPL-2.0
/*
 * futex(2): decode the op and the timeout; the waiter table is the
 * kernel's (sentry/kernel/futex.c).
 *
 * Robust lists: sentry/kernel/robust.c.
 */
#include <linux/futex.h>
#include <time.h>

#include "pvx/futex.h"
#include "pvx/log.h"
#include "syscalls/syscalls.h"

/* clk now, in ns. */
static uint64_t now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/*
 * The CLOCK_MONOTONIC deadline of a wait, in ns; 0 = none. A time past
 * what 64 bits of ns hold (timespec64_to_ktime saturates at KTIME_MAX) is
 * a wait without end.
 */
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
	if ((uint64_t)ts.tv_sec >= INT64_MAX / 1000000000ULL - 1)
		return 0;
	uint64_t v = (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
	uint64_t mono = now_ns(CLOCK_MONOTONIC);
	if (op == FUTEX_WAIT) {		/* relative */
		*out = mono + v;
	} else {			/* FUTEX_WAIT_BITSET: absolute on its clock */
		uint64_t now = realtime ? now_ns(CLOCK_REALTIME) : mono;
		*out = v > now ? mono + (v - now) : mono;
	}
	if (*out < mono)
		*out = 0;	/* wrapped: never */
	return 0;
}

/* FUTEX_WAIT(_BITSET): a zero bitset is EINVAL before the timeout is read, as before. */
static long wait_op(struct task *t, uint64_t uaddr, uint32_t val, uint64_t uts, int op, int flags, uint32_t bitset)
{
	uint64_t until;
	long r;

	if (!bitset)
		return -EINVAL;
	if ((r = deadline(t, uts, op, flags & FUTEX_CLOCK_REALTIME, &until)))
		return r;
	return futex_wait(t, uaddr, val, until, uts != 0, flags & FUTEX_PRIVATE_FLAG, bitset);
}

long sys_futex(struct task *t, const long a[6])
{
	int op = (int)a[1] & FUTEX_CMD_MASK, flags = (int)a[1] & ~FUTEX_CMD_MASK;
	uint64_t uaddr = (uint64_t)a[0], until;
	bool private = flags & FUTEX_PRIVATE_FLAG;
	long r;

	if ((uaddr & 3) && op != FUTEX_UNLOCK_PI)	/* it reads the word first: EPERM before EINVAL */
		return -EINVAL;
	if ((flags & FUTEX_CLOCK_REALTIME) && op != FUTEX_WAIT && op != FUTEX_WAIT_BITSET && op != FUTEX_LOCK_PI2 &&
	    op != FUTEX_WAIT_REQUEUE_PI)
		return -ENOSYS;
	switch (op) {
	case FUTEX_WAIT:
		return wait_op(t, uaddr, (uint32_t)a[2], (uint64_t)a[3], op, flags, FUTEX_BITSET_MATCH_ANY);
	case FUTEX_WAIT_BITSET:
		return wait_op(t, uaddr, (uint32_t)a[2], (uint64_t)a[3], op, flags, (uint32_t)a[5]);
	case FUTEX_WAKE:
		return futex_wake_bitset(t->mm, uaddr, private, (int)a[2], FUTEX_BITSET_MATCH_ANY);
	case FUTEX_WAKE_BITSET:
		if (!(uint32_t)a[5])
			return -EINVAL;
		return futex_wake_bitset(t->mm, uaddr, private, (int)a[2], (uint32_t)a[5]);
	case FUTEX_REQUEUE:
		return futex_requeue(t, uaddr, (int)a[2], (int)a[3], (uint64_t)a[4], false, 0, private);
	case FUTEX_CMP_REQUEUE:
		return futex_requeue(t, uaddr, (int)a[2], (int)a[3], (uint64_t)a[4], true, (uint32_t)a[5], private);
	case FUTEX_LOCK_PI:	/* an absolute CLOCK_REALTIME timeout */
	case FUTEX_LOCK_PI2:	/* absolute, CLOCK_MONOTONIC unless FUTEX_CLOCK_REALTIME */
		if ((r = deadline(t, (uint64_t)a[3], FUTEX_WAIT_BITSET,
				  op == FUTEX_LOCK_PI || (flags & FUTEX_CLOCK_REALTIME), &until)))
			return r;
		return futex_lock_pi(t, uaddr, private, until, false);
	case FUTEX_TRYLOCK_PI:
		return futex_lock_pi(t, uaddr, private, 0, true);
	case FUTEX_UNLOCK_PI:
		return futex_unlock_pi(t, uaddr, private);
	case FUTEX_WAIT_REQUEUE_PI:	/* absolute, as FUTEX_WAIT_BITSET */
		if ((r = deadline(t, (uint64_t)a[3], FUTEX_WAIT_BITSET, flags & FUTEX_CLOCK_REALTIME, &until)))
			return r;
		return futex_wait_requeue_pi(t, uaddr, (uint32_t)a[2], until, (uint64_t)a[4], private);
	case FUTEX_CMP_REQUEUE_PI:
		return futex_cmp_requeue_pi(t, uaddr, (int)a[2], (int)(uint32_t)a[3], (uint64_t)a[4], (uint32_t)a[5],
					    private);
	case FUTEX_WAKE_OP:	/* val2, the second count, comes in the timeout's place */
		return futex_wake_op(t, uaddr, (int)a[2], (int)(uint32_t)a[3], (uint64_t)a[4], (uint32_t)a[5], private);
	}
	return -ENOSYS;
}

/* struct futex_waitv of the uapi. */
struct guest_futex_waitv {
	uint64_t val, uaddr;
	uint32_t flags, reserved;
};
_Static_assert(sizeof(struct guest_futex_waitv) == 24, "struct futex_waitv");

/*
 * futex_waitv(2) (kernel/futex/syscalls.c): "wait on multiple futexes,
 * wake on any"; flags 0, 1..128 entries, each FUTEX_32 with or without
 * FUTEX_PRIVATE_FLAG, a value that fits 32 bits, no reserved bits; an
 * absolute timeout on CLOCK_MONOTONIC or CLOCK_REALTIME. Checked in
 * Linux's order: flags and count, the clock and timeout, then the vector.
 */
long sys_futex_waitv(struct task *t, const long a[6])
{
	struct futex_waitv_req v[FUTEX_WAITV_MAX];
	struct guest_futex_waitv gv;
	uint64_t uv = (uint64_t)a[0], until = 0;
	unsigned n = (unsigned)a[1];
	clockid_t clk = (clockid_t)a[4];
	long r;

	if ((unsigned)a[2] || !n || n > FUTEX_WAITV_MAX || !uv)
		return -EINVAL;
	if (a[3]) {
		if (clk != CLOCK_REALTIME && clk != CLOCK_MONOTONIC)
			return -EINVAL;
		if ((r = deadline(t, (uint64_t)a[3], FUTEX_WAIT_BITSET, clk == CLOCK_REALTIME, &until)))
			return r;
	}
	for (unsigned i = 0; i < n; i++) {
		if (copy_from_guest(t->mm, &gv, uv + i * sizeof(gv), sizeof(gv)))
			return -EFAULT;
		if ((gv.flags & ~(3U | FUTEX_PRIVATE_FLAG)) || gv.reserved || (gv.flags & 3) != 2 /* FUTEX_32 */ ||
		    gv.val >> 32)
			return -EINVAL;
		v[i] = (struct futex_waitv_req){ gv.uaddr, (uint32_t)gv.val, gv.flags & FUTEX_PRIVATE_FLAG };
	}
	return futex_waitv(t, v, (int)n, until);
}

/*
 * get_robust_list(2): "returns the head of the robust futex list of the
 * thread whose thread ID is specified in pid" (0: the caller); ESRCH
 * "No thread with the thread ID pid could be found". Every guest has the
 * sandbox's one uid, so ptrace_may_access never says EPERM. The length
 * is stored first, as Linux's put_user order.
 */
long sys_get_robust_list(struct task *t, const long a[6])
{
	int pid = (int)a[0];
	struct task *o = pid ? task_find(pid) : t;
	uint64_t len = 24;	/* sizeof(struct robust_list_head) */
	long r;

	if (!o || !o->proc || o->state == TASK_ZOMBIE || o->exited)
		return -ESRCH;
	if ((r = copy_to_guest(t->mm, (uint64_t)a[2], &len, sizeof(len))))
		return r;
	return copy_to_guest(t->mm, (uint64_t)a[1], &o->robust_list, sizeof(o->robust_list));
}

/* Helpers shared by the thread test guests (tests/guest/thread_*.c): raw futex, gettid, sleeping and
 * bounded waiting. Output rule for these guests: only main prints, after the threads it checks are
 * joined, and only values that do not depend on scheduling. */
#ifndef PVX_TEST_THREAD_UTIL_H
#define PVX_TEST_THREAD_UTIL_H

#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "guest.h"

/* <linux/futex.h> is not on musl-gcc's include path */
#ifndef FUTEX_WAIT
#define FUTEX_WAIT 0
#define FUTEX_WAKE 1
#define FUTEX_REQUEUE 3
#define FUTEX_CMP_REQUEUE 4
#define FUTEX_WAIT_BITSET 9
#define FUTEX_WAKE_BITSET 10
#define FUTEX_PRIVATE_FLAG 128
#define FUTEX_CLOCK_REALTIME 256
#define FUTEX_BITSET_MATCH_ANY 0xffffffff
#endif

/* Every guest arms this at start: a hang is killed by SIGALRM (status 142), it never stalls the suite. */
#define GUEST_ALARM 20

/* futex(2) with its fourth argument as a timeout (WAIT ops; WAKE_BITSET with ts NULL) */
static __attribute__((unused)) long futex_wait_op(int *uaddr, int op, int val, const struct timespec *ts,
						  unsigned bitset)
{
	return syscall(SYS_futex, uaddr, op, val, ts, NULL, bitset);
}

/* futex(2) with its fourth argument as the count val2 (REQUEUE ops) */
static __attribute__((unused)) long futex_op2(int *uaddr, int op, int val, long val2, int *uaddr2, int val3)
{
	return syscall(SYS_futex, uaddr, op, val, (void *)val2, uaddr2, val3);
}

static __attribute__((unused)) long futex_wake(int *uaddr, int op, int n)
{
	return syscall(SYS_futex, uaddr, op, n, NULL, NULL, 0);
}

static __attribute__((unused)) long mono_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000L + t.tv_nsec / 1000000;
}

static __attribute__((unused)) void sleep_ms(long ms)
{
	struct timespec t = { ms / 1000, (ms % 1000) * 1000000L };
	while (nanosleep(&t, &t) < 0 && errno == EINTR)
		;
}

/* Sleep 1 ms at a time until *p >= want (read atomically) or ~10 s pass; returns whether it got there. */
static __attribute__((unused)) int wait_for(const int *p, int want)
{
	for (int i = 0; i < 10000; i++) {
		if (__atomic_load_n(p, __ATOMIC_ACQUIRE) >= want)
			return 1;
		sleep_ms(1);
	}
	return 0;
}

/* How many threads sleep in FUTEX_WAIT on *w (whose value is v), counted without waking them:
 * FUTEX_CMP_REQUEUE moves them all to a scratch word and a second one moves them back. priv is 0 or
 * FUTEX_PRIVATE_FLAG; scratch must be in memory every waiter sees (like *w). Negative: requeue failed. */
static __attribute__((unused)) long futex_queued(int *w, int v, int priv, int *scratch)
{
	long c = futex_op2(w, FUTEX_CMP_REQUEUE | priv, 0, INT_MAX, scratch, v);
	if (c > 0 && futex_op2(scratch, FUTEX_CMP_REQUEUE | priv, 0, INT_MAX, w, *scratch) != c)
		return -1;
	return c;
}

/* Wait until n threads sleep in FUTEX_WAIT on *w, so that later wake counts are exact (a waiter that
 * announced itself may not have reached the kernel yet). Falls back to a long sleep when requeue fails.
 * Returns whether n were seen. */
static __attribute__((unused)) int wait_queued(int *w, int v, int n, int priv, int *scratch)
{
	for (int i = 0; i < 4000; i++) {
		long c = futex_queued(w, v, priv, scratch);
		if (c < 0) {
			sleep_ms(200);
			return 0;
		}
		if (c >= n)
			return 1;
		sleep_ms(2);
	}
	return 0;
}

#endif

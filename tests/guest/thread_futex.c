/* thread_futex: futex(2) itself, between threads. usage: thread_futex MODE
 *   eagain   FUTEX_WAIT when the word differs: EAGAIN; FUTEX_WAKE with nobody waiting: 0
 *   errors   EFAULT, EINVAL (unaligned, bitset 0, bad timeout, negative requeue count), ENOSYS (bad op)
 *   timeout  FUTEX_WAIT relative, FUTEX_WAIT_BITSET absolute (CLOCK_MONOTONIC and FUTEX_CLOCK_REALTIME):
 *            ETIMEDOUT no earlier than the timeout; a deadline in the past; woken before the timeout: 0
 *   wake     5 waiters: FUTEX_WAKE(2) wakes and counts 2, the rest stay queued, then 3, then 0
 *   requeue  FUTEX_CMP_REQUEUE (EAGAIN on a stale value, wake 1 + requeue 2) and FUTEX_REQUEUE
 *   bitset   FUTEX_WAKE_BITSET wakes only waiters whose FUTEX_WAIT_BITSET mask intersects
 *   private  wake, requeue and bitset again with FUTEX_PRIVATE_FLAG
 *   shared   across fork on MAP_SHARED memory: FUTEX_WAKE wakes the child, FUTEX_WAKE_PRIVATE does not
 * Wake counts are exact because waiters are first counted in the kernel's queue (wait_queued). */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "thread_util.h"

static const char *ename(long r, int e)
{
	if (r >= 0)
		return "";
	switch (e) {
	case EAGAIN: return "EAGAIN";
	case ETIMEDOUT: return "ETIMEDOUT";
	case EINVAL: return "EINVAL";
	case EFAULT: return "EFAULT";
	case ENOSYS: return "ENOSYS";
	case EINTR: return "EINTR";
	case EPERM: return "EPERM";
	default: return "E?";
	}
}

/* "r" or "-1 ENAME" for a futex result */
static const char *res(long r, int e)
{
	static char b[4][32];
	static int k;
	char *s = b[k++ % 4];
	if (r >= 0)
		snprintf(s, 32, "%ld", r);
	else
		snprintf(s, 32, "%ld %s", r, ename(r, e));
	return s;
}

static int woken;

struct waiter {
	pthread_t t;
	int *word, op, val;
	unsigned bitset;
	struct timespec ts;
	int has_ts;
	long ret;
	int err, done;
};

static void *waiter_fn(void *p)
{
	struct waiter *w = p;
	w->ret = futex_wait_op(w->word, w->op, w->val, w->has_ts ? &w->ts : NULL, w->bitset);
	w->err = errno;
	__atomic_store_n(&w->done, 1, __ATOMIC_RELEASE);
	__atomic_add_fetch(&woken, 1, __ATOMIC_ACQ_REL);
	return NULL;
}

static void start_waiter(struct waiter *w, int *word, int op, unsigned bitset)
{
	*w = (struct waiter){ .word = word, .op = op, .val = *word, .bitset = bitset };
	pthread_create(&w->t, NULL, waiter_fn, w);
}

static int all_returned_zero(struct waiter *w, int n)
{
	int ok = 1;
	for (int i = 0; i < n; i++) {
		pthread_join(w[i].t, NULL);
		ok &= w[i].ret == 0;
	}
	return ok;
}

static int mode_eagain(void)
{
	int word = 5;
	long r = futex_wait_op(&word, FUTEX_WAIT, 4, NULL, 0);
	say("FUTEX_WAIT(word=5, val=4) = %s\n", res(r, errno));
	r = futex_wait_op(&word, FUTEX_WAIT | FUTEX_PRIVATE_FLAG, 6, NULL, 0);
	say("FUTEX_WAIT_PRIVATE(word=5, val=6) = %s\n", res(r, errno));
	r = futex_wait_op(&word, FUTEX_WAIT_BITSET | FUTEX_PRIVATE_FLAG, 0, NULL, FUTEX_BITSET_MATCH_ANY);
	say("FUTEX_WAIT_BITSET_PRIVATE(word=5, val=0) = %s\n", res(r, errno));
	r = futex_wake(&word, FUTEX_WAKE, 1);
	say("FUTEX_WAKE with nobody waiting = %s\n", res(r, errno));
	r = futex_wake(&word, FUTEX_WAKE | FUTEX_PRIVATE_FLAG, INT_MAX);
	say("FUTEX_WAKE_PRIVATE with nobody waiting = %s\n", res(r, errno));
	return 0;
}

static int mode_errors(void)
{
	static int words[4];
	int *unaligned = (int *)((char *)words + 2);
	long r = futex_wait_op(NULL, FUTEX_WAIT, 0, NULL, 0);
	say("FUTEX_WAIT(NULL) = %s\n", res(r, errno));
	r = futex_wait_op((int *)8, FUTEX_WAIT | FUTEX_PRIVATE_FLAG, 0, NULL, 0);
	say("FUTEX_WAIT_PRIVATE(bad pointer) = %s\n", res(r, errno));
	r = futex_wait_op(unaligned, FUTEX_WAIT, 0, NULL, 0);
	say("FUTEX_WAIT(unaligned) = %s\n", res(r, errno));
	r = futex_wake(unaligned, FUTEX_WAKE | FUTEX_PRIVATE_FLAG, 1);
	say("FUTEX_WAKE_PRIVATE(unaligned) = %s\n", res(r, errno));
	r = syscall(SYS_futex, &words[0], 99, 0, NULL, NULL, 0);
	say("futex(op 99) = %s\n", res(r, errno));
	r = futex_wait_op(&words[0], FUTEX_WAIT_BITSET, 0, NULL, 0);
	say("FUTEX_WAIT_BITSET(bitset 0) = %s\n", res(r, errno));
	r = futex_wait_op(&words[0], FUTEX_WAKE_BITSET, 1, NULL, 0);
	say("FUTEX_WAKE_BITSET(bitset 0) = %s\n", res(r, errno));
	r = futex_wake(&words[0], FUTEX_WAKE | FUTEX_CLOCK_REALTIME, 1);
	say("FUTEX_WAKE|FUTEX_CLOCK_REALTIME = %s\n", res(r, errno));
	struct timespec bad = { 0, 1000000000L };
	r = futex_wait_op(&words[0], FUTEX_WAIT, 0, &bad, 0);
	say("FUTEX_WAIT(tv_nsec=1e9) = %s\n", res(r, errno));
	bad = (struct timespec){ -1, 0 };
	r = futex_wait_op(&words[0], FUTEX_WAIT, 0, &bad, 0);
	say("FUTEX_WAIT(tv_sec=-1) = %s\n", res(r, errno));
	r = futex_wait_op(&words[0], FUTEX_WAIT, 0, (struct timespec *)8, 0);
	say("FUTEX_WAIT(bad timeout pointer) = %s\n", res(r, errno));
	r = futex_op2(&words[0], FUTEX_CMP_REQUEUE, 1, -1, &words[1], 0);
	say("FUTEX_CMP_REQUEUE(nr_requeue=-1) = %s\n", res(r, errno));
	/* a shared futex's key is its page: unreadable words are EFAULT; a private key is only the address */
	int *gone = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	munmap(gone, 4096);
	int *none = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	r = futex_wake(gone, FUTEX_WAKE, 1);
	say("FUTEX_WAKE(unmapped) = %s\n", res(r, errno));
	r = futex_wake(none, FUTEX_WAKE, 1);
	say("FUTEX_WAKE(PROT_NONE) = %s\n", res(r, errno));
	r = futex_wake(gone, FUTEX_WAKE | FUTEX_PRIVATE_FLAG, 1);
	say("FUTEX_WAKE_PRIVATE(unmapped) = %s\n", res(r, errno));
	words[0] = 0;
	r = futex_op2(&words[0], FUTEX_CMP_REQUEUE, 1, 1, gone, 0);
	say("FUTEX_CMP_REQUEUE(uaddr2 unmapped) = %s\n", res(r, errno));
	r = futex_op2(&words[0], FUTEX_CMP_REQUEUE, 1, 1, none, 0);
	say("FUTEX_CMP_REQUEUE(uaddr2 PROT_NONE) = %s\n", res(r, errno));
	r = futex_op2(none, FUTEX_REQUEUE, 1, 1, &words[0], 0);
	say("FUTEX_REQUEUE(uaddr PROT_NONE) = %s\n", res(r, errno));
	return 0;
}

/* deadline_ms: the mono_ms() when an absolute deadline was computed (the wait counts from there), or -1 */
static long deadline_ms = -1;

/* a timed wait that must time out: "ETIMEDOUT, waited at least the timeout: yes" */
static void timed(const char *what, int op, const struct timespec *ts, unsigned bitset, long min_ms)
{
	int word = 0;
	long t0 = deadline_ms >= 0 ? deadline_ms : mono_ms();
	long r = futex_wait_op(&word, op, 0, ts, bitset);
	int e = errno;
	long waited = mono_ms() - t0;
	if (min_ms)
		say("%s = %s, waited at least the timeout: %s\n", what, res(r, e), yesno(waited >= min_ms));
	else
		say("%s = %s\n", what, res(r, e));
	deadline_ms = -1;
}

static struct timespec abs_after(clockid_t clk, long ms)
{
	struct timespec t;
	deadline_ms = mono_ms();
	clock_gettime(clk, &t);
	t.tv_nsec += (ms % 1000) * 1000000L;
	t.tv_sec += ms / 1000 + t.tv_nsec / 1000000000L;
	t.tv_nsec %= 1000000000L;
	return t;
}

static int mode_timeout(void)
{
	/* the kernel never wakes early; 45 rather than 50 tolerates a coarse clock reading */
	struct timespec rel = { 0, 50 * 1000000L }, zero = { 0, 0 };
	timed("FUTEX_WAIT 50 ms", FUTEX_WAIT, &rel, 0, 45);
	timed("FUTEX_WAIT_PRIVATE 50 ms", FUTEX_WAIT | FUTEX_PRIVATE_FLAG, &rel, 0, 45);
	timed("FUTEX_WAIT timeout 0", FUTEX_WAIT, &zero, 0, 0);
	struct timespec dl = abs_after(CLOCK_MONOTONIC, 50);
	timed("FUTEX_WAIT_BITSET CLOCK_MONOTONIC deadline +50 ms", FUTEX_WAIT_BITSET, &dl, FUTEX_BITSET_MATCH_ANY,
	      45);
	dl = abs_after(CLOCK_REALTIME, 50);
	timed("FUTEX_WAIT_BITSET|FUTEX_CLOCK_REALTIME deadline +50 ms", FUTEX_WAIT_BITSET | FUTEX_CLOCK_REALTIME,
	      &dl, FUTEX_BITSET_MATCH_ANY, 45);
	dl = abs_after(CLOCK_REALTIME, 50);
	timed("FUTEX_WAIT_BITSET_PRIVATE|FUTEX_CLOCK_REALTIME deadline +50 ms",
	      FUTEX_WAIT_BITSET | FUTEX_PRIVATE_FLAG | FUTEX_CLOCK_REALTIME, &dl, FUTEX_BITSET_MATCH_ANY, 45);
	dl = abs_after(CLOCK_REALTIME, 0);
	dl.tv_sec -= 10;
	timed("FUTEX_WAIT_BITSET|FUTEX_CLOCK_REALTIME deadline in the past", FUTEX_WAIT_BITSET | FUTEX_CLOCK_REALTIME,
	      &dl, FUTEX_BITSET_MATCH_ANY, 0);
	dl = (struct timespec){ 1, 0 }; /* 1 s after boot: long gone */
	timed("FUTEX_WAIT_BITSET CLOCK_MONOTONIC deadline in the past", FUTEX_WAIT_BITSET, &dl,
	      FUTEX_BITSET_MATCH_ANY, 0);

	/* woken long before a 10 s timeout */
	static int word, scratch;
	struct waiter w;
	w = (struct waiter){ .word = &word, .op = FUTEX_WAIT, .val = 0, .ts = { 10, 0 }, .has_ts = 1 };
	pthread_create(&w.t, NULL, waiter_fn, &w);
	int q = wait_queued(&word, 0, 1, 0, &scratch);
	__atomic_store_n(&word, 1, __ATOMIC_RELEASE);
	long r = futex_wake(&word, FUTEX_WAKE, INT_MAX);
	pthread_join(w.t, NULL);
	say("waiter with a 10 s timeout queued: %s, FUTEX_WAKE = %ld, its FUTEX_WAIT = %s\n", yesno(q), r,
	    res(w.ret, w.err));
	return 0;
}

static const char *opname(const char *op, int priv)
{
	static char b[4][48];
	static int k;
	char *s = b[k++ % 4];
	snprintf(s, 48, "%s%s", op, priv ? "_PRIVATE" : "");
	return s;
}

static int run_wake(int priv)
{
	static int word, scratch;
	enum { N = 5 };
	struct waiter w[N];
	woken = 0;
	word = 0;
	for (int i = 0; i < N; i++)
		start_waiter(&w[i], &word, FUTEX_WAIT | priv, 0);
	int q = wait_queued(&word, 0, N, priv, &scratch);
	say("%d waiters in %s: %s\n", N, opname("FUTEX_WAIT", priv), yesno(q));
	long r = futex_wake(&word, FUTEX_WAKE | priv, 2);
	int got = wait_for(&woken, 2);
	sleep_ms(20); /* a wrong implementation that woke more gets time to show it */
	say("%s(2) = %ld, threads woken: %d (%s), still queued: %ld\n", opname("FUTEX_WAKE", priv), r,
	    __atomic_load_n(&woken, __ATOMIC_ACQUIRE), yesno(got), futex_queued(&word, 0, priv, &scratch));
	r = futex_wake(&word, FUTEX_WAKE | priv, INT_MAX);
	int ok = all_returned_zero(w, N);
	say("%s(INT_MAX) = %ld, every FUTEX_WAIT returned 0: %s\n", opname("FUTEX_WAKE", priv), r, yesno(ok));
	r = futex_wake(&word, FUTEX_WAKE | priv, INT_MAX);
	say("%s again = %ld\n", opname("FUTEX_WAKE", priv), r);
	return 0;
}

static int run_requeue(int priv)
{
	static int w1, w2, scratch;
	enum { N = 5 };
	struct waiter w[N];
	woken = 0;
	for (int i = 0; i < N; i++)
		start_waiter(&w[i], &w1, FUTEX_WAIT | priv, 0);
	int q = wait_queued(&w1, 0, N, priv, &scratch);
	say("%d waiters on word 1: %s\n", N, yesno(q));
	long r = futex_op2(&w1, FUTEX_CMP_REQUEUE | priv, 1, 2, &w2, 1);
	say("%s(wake 1, requeue 2, stale val3) = %s\n", opname("FUTEX_CMP_REQUEUE", priv), res(r, errno));
	r = futex_op2(&w1, FUTEX_CMP_REQUEUE | priv, 1, 2, &w2, 0);
	wait_for(&woken, 1);
	sleep_ms(20);
	say("%s(wake 1, requeue 2) = %s, woken %d, queued on word 1: %ld, on word 2: %ld\n",
	    opname("FUTEX_CMP_REQUEUE", priv), res(r, errno), __atomic_load_n(&woken, __ATOMIC_ACQUIRE),
	    futex_queued(&w1, 0, priv, &scratch), futex_queued(&w2, 0, priv, &scratch));
	r = futex_wake(&w2, FUTEX_WAKE | priv, INT_MAX);
	wait_for(&woken, 3);
	say("%s(word 2) = %ld\n", opname("FUTEX_WAKE", priv), r);
	r = futex_op2(&w1, FUTEX_REQUEUE | priv, 0, INT_MAX, &w2, 0);
	sleep_ms(20);
	say("%s(wake 0, requeue all) = %s, woken %d, queued on word 1: %ld, on word 2: %ld\n",
	    opname("FUTEX_REQUEUE", priv), res(r, errno), __atomic_load_n(&woken, __ATOMIC_ACQUIRE),
	    futex_queued(&w1, 0, priv, &scratch), futex_queued(&w2, 0, priv, &scratch));
	long a = futex_wake(&w2, FUTEX_WAKE | priv, 1);
	wait_for(&woken, 4);
	long b = futex_wake(&w2, FUTEX_WAKE | priv, INT_MAX);
	int ok = all_returned_zero(w, N);
	say("%s(word 2) 1 then all = %ld %ld, every FUTEX_WAIT returned 0: %s\n", opname("FUTEX_WAKE", priv), a, b,
	    yesno(ok));
	return 0;
}

static int run_bitset(int priv)
{
	static int word, scratch;
	struct waiter w[3];
	woken = 0;
	start_waiter(&w[0], &word, FUTEX_WAIT_BITSET | priv, 0x1);
	start_waiter(&w[1], &word, FUTEX_WAIT_BITSET | priv, 0x2);
	start_waiter(&w[2], &word, FUTEX_WAIT_BITSET | priv, 0x3);
	int q = wait_queued(&word, 0, 3, priv, &scratch);
	say("3 waiters in %s with masks 1, 2, 3: %s\n", opname("FUTEX_WAIT_BITSET", priv), yesno(q));
	long r = futex_wait_op(&word, FUTEX_WAKE_BITSET | priv, INT_MAX, NULL, 0x4);
	say("%s(mask 4) = %s\n", opname("FUTEX_WAKE_BITSET", priv), res(r, errno));
	r = futex_wait_op(&word, FUTEX_WAKE_BITSET | priv, INT_MAX, NULL, 0x2);
	wait_for(&woken, 2);
	sleep_ms(20);
	say("%s(mask 2) = %s, woken: mask1 %s mask2 %s mask3 %s\n", opname("FUTEX_WAKE_BITSET", priv), res(r, errno),
	    yesno(__atomic_load_n(&w[0].done, __ATOMIC_ACQUIRE)), yesno(__atomic_load_n(&w[1].done, __ATOMIC_ACQUIRE)),
	    yesno(__atomic_load_n(&w[2].done, __ATOMIC_ACQUIRE)));
	r = futex_wake(&word, FUTEX_WAKE | priv, INT_MAX);
	int ok = all_returned_zero(w, 3);
	say("%s (any mask) = %ld, every wait returned 0: %s\n", opname("FUTEX_WAKE", priv), r, yesno(ok));
	return 0;
}

static int mode_shared(void)
{
	int *mem = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	int *word = &mem[0], *scratch = &mem[16];
	pid_t c = fork();
	if (c == 0) {
		long r = futex_wait_op(word, FUTEX_WAIT, 0, NULL, 0);
		_exit(r == 0 ? 0 : 10);
	}
	int q = wait_queued(word, 0, 1, 0, scratch);
	say("child waiting in FUTEX_WAIT on MAP_SHARED memory: %s\n", yesno(q));
	long r = futex_wake(word, FUTEX_WAKE | FUTEX_PRIVATE_FLAG, INT_MAX);
	say("FUTEX_WAKE_PRIVATE from the parent = %ld (private futexes are per address space)\n", r);
	__atomic_store_n(word, 1, __ATOMIC_RELEASE);
	r = futex_wake(word, FUTEX_WAKE, INT_MAX);
	say("FUTEX_WAKE from the parent = %ld, child's FUTEX_WAIT returned 0 and it exited %d\n", r, wait_child(c));
	return 0;
}

int main(int argc, char **argv)
{
	alarm(GUEST_ALARM);
	const char *mode = argc > 1 ? argv[1] : "eagain";
	if (!strcmp(mode, "eagain"))
		return mode_eagain();
	if (!strcmp(mode, "errors"))
		return mode_errors();
	if (!strcmp(mode, "timeout"))
		return mode_timeout();
	if (!strcmp(mode, "wake"))
		return run_wake(0);
	if (!strcmp(mode, "requeue"))
		return run_requeue(0);
	if (!strcmp(mode, "bitset"))
		return run_bitset(0);
	if (!strcmp(mode, "private"))
		return run_wake(FUTEX_PRIVATE_FLAG) | run_requeue(FUTEX_PRIVATE_FLAG) | run_bitset(FUTEX_PRIVATE_FLAG);
	if (!strcmp(mode, "shared"))
		return mode_shared();
	say("unknown mode\n");
	return 2;
}

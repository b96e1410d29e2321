/* futex_ops: FUTEX_WAKE_OP and futex_waitv(2) (issue 15), run natively and under pvx and compared.
 * usage: futex_ops MODE
 *   wakeop     every op and comparison FUTEX_OP can encode (bad ones: ENOSYS), shifts, wake counts
 *   wakeop_err unaligned, NULL, read-only, PROT_NONE, unmapped, kernel and stub-range second words
 *   race       two threads add to a word with lock xadd while a third adds to it with FUTEX_WAKE_OP: the sum
 *   waitv      woken index, EAGAIN, timeouts on both clocks, a signal, a shared word woken by another process
 *   waitv_err  flags, counts 0/129, bad clocks, entries (size, NUMA, reserved, 64-bit values), pointers, times */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "futex_guest.h"

/* FUTEX_OP of <linux/futex.h> */
#define FUTEX_OP_SET 0
#define FUTEX_OP_ADD 1
#define FUTEX_OP_OPARG_SHIFT 8
#define FUTEX_OP_CMP_EQ 0
#define FUTEX_OP_CMP_NE 1
#define FUTEX_OP_CMP_LT 2
#define FUTEX_OP_CMP_LE 3
#define FUTEX_OP_CMP_GT 4
#define FUTEX_OP_CMP_GE 5
#define FUTEX_OP(op, oparg, cmp, cmparg) \
	(((op & 0xf) << 28) | ((cmp & 0xf) << 24) | ((oparg & 0xfff) << 12) | (cmparg & 0xfff))
#ifndef SYS_futex_waitv
#define SYS_futex_waitv 449
#endif
#ifndef FUTEX_32
#define FUTEX_32 2
#endif

struct waitv {
	uint64_t val, uaddr;
	uint32_t flags, reserved;
};

static long fx(void *u, int op, long val, long val2, void *u2, unsigned val3)
{
	return syscall(SYS_futex, u, op, val, val2, u2, val3);
}

static long waitv(struct waitv *w, unsigned n, unsigned flags, struct timespec *ts, int clk)
{
	return syscall(SYS_futex_waitv, w, n, flags, ts, clk);
}


/* One thread per word index: FUTEX_WAIT on it (private), counting the wake-ups it got. */
static volatile int woke[8];
static void *waiter(void *arg)
{
	int i = (int)(intptr_t)arg;
	uint32_t v = words[i];
	if (fx(&words[i], FUTEX_WAIT_PRIVATE, v, 0, 0, 0) == 0)
		__atomic_add_fetch(&woke[i], 1, __ATOMIC_SEQ_CST);
	return NULL;
}

/* Each FUTEX_OP the uapi defines, and the codes beyond them. */
static void mode_wakeop(void)
{
	static const int opargs[] = { 0, 1, 5, -1, 2047, -2048 };
	static const int cmpargs[] = { 0, 7, -1 };
	for (unsigned op = 0; op < 8; op++)
		for (unsigned cmp = 0; cmp < 8; cmp++)
			for (unsigned a = 0; a < sizeof(opargs) / sizeof(opargs[0]); a++) {
				words[1] = 7;
				unsigned enc = (op & 7) << 28 | (cmp & 15) << 24 | (opargs[a] & 0xfff) << 12 |
					       (cmpargs[a % 3] & 0xfff);
				long r = fx(&words[0], FUTEX_WAKE_OP_PRIVATE, 1, 1, &words[1], enc);
				say("op %u cmp %u oparg %d cmparg %d: %ld %s word %#x\n", op, cmp, opargs[a],
				    cmpargs[a % 3], r, en(r), words[1]);
			}
	/* FUTEX_OP_OPARG_SHIFT: 1 << oparg; a shift outside 0..31 is taken mod 32. */
	static const int shifts[] = { 0, 4, 31, 32, 33, -1, 2047 };
	for (unsigned s = 0; s < sizeof(shifts) / sizeof(shifts[0]); s++)
		for (unsigned op = 0; op < 5; op++) {
			words[1] = 0x10;
			unsigned enc = (op | FUTEX_OP_OPARG_SHIFT) << 28 | (shifts[s] & 0xfff) << 12;
			long r = fx(&words[0], FUTEX_WAKE_OP, 1, 1, &words[1], enc);
			say("shift op %u by %d: %ld %s word %#x\n", op, shifts[s], r, en(r), words[1]);
		}
	/* The comparison picks whether waiters of the second word wake; counts of 0 still wake one (Linux). */
	struct { int n1, n2, cmp, cmparg; } cases[] = {
		{ 1, 1, FUTEX_OP_CMP_EQ, 0 }, { 1, 1, FUTEX_OP_CMP_NE, 0 }, { 2, 3, FUTEX_OP_CMP_GE, 0 },
		{ 0, 0, FUTEX_OP_CMP_EQ, 0 }, { 5, 0, FUTEX_OP_CMP_LT, 1 }, { 3, 2, FUTEX_OP_CMP_GT, 5 },
	};
	for (unsigned c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		pthread_t th[6];
		memset((void *)woke, 0, sizeof(woke));
		words[2] = words[3] = 0;
		for (int i = 0; i < 6; i++)
			pthread_create(&th[i], NULL, waiter, (void *)(intptr_t)(2 + i % 2));
		settle();
		long r = fx(&words[2], FUTEX_WAKE_OP_PRIVATE, cases[c].n1, cases[c].n2, &words[3],
			    FUTEX_OP(FUTEX_OP_ADD, 1, cases[c].cmp, cases[c].cmparg));
		/* the r it says it woke record themselves (10 s at most: a woken thread shows S until it runs), then
		 * settle() gives any it woke beyond r time to show */
		for (int k = 0; k < 1000 && woke[2] + woke[3] < r; k++)
			usleep(10000);
		settle();
		say("wake %d/%d cmp %d %d: returned %ld, woke %d and %d, word2 %u\n", cases[c].n1, cases[c].n2,
		    cases[c].cmp, cases[c].cmparg, r, woke[2], woke[3], words[3]);
		fx(&words[2], FUTEX_WAKE_PRIVATE, 10, 0, 0, 0);
		fx(&words[3], FUTEX_WAKE_PRIVATE, 10, 0, 0, 0);
		for (int i = 0; i < 6; i++)
			pthread_join(th[i], NULL);
	}
	/* The shared (not _PRIVATE) form, in MAP_SHARED memory woken across fork. */
	uint32_t *sh = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	pid_t pid = fork();
	if (pid == 0) {
		long r = fx(&sh[0], FUTEX_WAIT, 0, 0, 0, 0);
		_exit(r == 0 ? 0 : 1);
	}
	settle_proc(pid);
	long r = fx(&sh[1], FUTEX_WAKE_OP, 0, 1, &sh[0], FUTEX_OP(FUTEX_OP_SET, 9, FUTEX_OP_CMP_EQ, 0));
	int st;
	waitpid(pid, &st, 0);
	say("shared: returned %ld, word %u, child status %d\n", r, sh[0], WEXITSTATUS(st));
}

static void probe(const char *what, void *u1, void *u2)
{
	long r = fx(u1, FUTEX_WAKE_OP_PRIVATE, 1, 1, u2, FUTEX_OP(FUTEX_OP_ADD, 1, FUTEX_OP_CMP_EQ, 0));
	say("%s: %ld %s\n", what, r, en(r));
	r = fx(u1, FUTEX_WAKE_OP, 1, 1, u2, FUTEX_OP(FUTEX_OP_ADD, 1, FUTEX_OP_CMP_EQ, 0));
	say("%s (shared): %ld %s\n", what, r, en(r));
}

static void mode_wakeop_err(void)
{
	char *ro = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *none = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *gone = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	munmap(gone, 4096);
	char *w = (char *)words;

	probe("good", w, w + 4);
	probe("unaligned uaddr", w + 1, w + 4);
	probe("unaligned uaddr2", w, w + 6);
	probe("NULL uaddr2", w, NULL);
	probe("read-only uaddr2", w, ro);
	say("read-only word after: %u\n", *(uint32_t *)ro);
	probe("PROT_NONE uaddr2", w, none);
	probe("unmapped uaddr2", w, gone);
	probe("unmapped uaddr", gone, w + 4);
	probe("kernel uaddr2", w, (void *)0xffff888000000000UL);
	probe("last user word", w, (void *)0x7ffffffffffcUL);
	/* Where pvx keeps its stub: text, control page, shared regions. Unmapped for the guest either way. */
	probe("stub text", w, (void *)0x7ff000001000UL);
	probe("stub gadget", w, (void *)0x7ff000001240UL);
	probe("stub control", w, (void *)0x7ff000080000UL);
	probe("stub regions", w, (void *)0x7ff000100000UL);
	probe("just below the stub", w, (void *)0x7feffffffffcUL);
	/* A bad op code never touches the word, even a read-only one: EFAULT or ENOSYS in Linux's order. */
	long r = fx(w, FUTEX_WAKE_OP_PRIVATE, 1, 1, ro, 7u << 28);
	say("bad op on read-only: %ld %s\n", r, en(r));
	r = fx(w, FUTEX_WAKE_OP_PRIVATE, 1, 1, w + 8, 7u << 28 | 0x123);
	say("bad op: %ld %s word %u\n", r, en(r), words[2]);
	r = fx(w, FUTEX_WAKE_OP_PRIVATE | FUTEX_CLOCK_REALTIME, 1, 1, w + 8, 0);
	say("CLOCK_REALTIME flag: %ld %s\n", r, en(r));
}

/* Hammer one word: lock xadd in two threads, FUTEX_WAKE_OP ADD 1 in the main one. */
#define RACE_ADDS 300000
#define RACE_OPS 3000
static volatile int race_go;
static void *adder(void *arg)
{
	(void)arg;
	while (!race_go)
		;
	for (int i = 0; i < RACE_ADDS; i++)
		__atomic_fetch_add(&words[5], 1, __ATOMIC_SEQ_CST);
	return NULL;
}

static void mode_race(void)
{
	pthread_t a, b;
	int fails = 0;

	words[5] = 0;
	pthread_create(&a, NULL, adder, NULL);
	pthread_create(&b, NULL, adder, NULL);
	race_go = 1;
	for (int i = 0; i < RACE_OPS; i++)
		if (fx(&words[4], FUTEX_WAKE_OP_PRIVATE, 1, 1, &words[5], FUTEX_OP(FUTEX_OP_ADD, 1, FUTEX_OP_CMP_EQ, 0)) < 0)
			fails++;
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	say("race: sum %u, expected %u, failed calls %d\n", words[5], 2 * RACE_ADDS + RACE_OPS - fails, fails);
	say("race: %s\n", words[5] == 2u * RACE_ADDS + RACE_OPS && !fails ? "exact" : "LOST UPDATES");
}

static void *waker(void *arg)
{
	int i = (int)(intptr_t)arg;
	settle();
	fx(&words[i], FUTEX_WAKE_PRIVATE, 1, 0, 0, 0);
	return NULL;
}

static void on_alarm(int sig)
{
	(void)sig;
}

static void mode_waitv(void)
{
	struct waitv v[128];
	pthread_t th;
	long r;

	memset(words, 0, 64);
	for (int i = 0; i < 4; i++)
		v[i] = (struct waitv){ 0, (uintptr_t)&words[i], FUTEX_32 | FUTEX_PRIVATE_FLAG, 0 };
	for (int k = 0; k < 4; k++) {
		pthread_create(&th, NULL, waker, (void *)(intptr_t)k);
		r = waitv(v, 4, 0, NULL, 0);
		pthread_join(th, NULL);
		say("waitv woken by a wake of word %d: %ld %s\n", k, r, en(r));
	}
	words[2] = 1;
	r = waitv(v, 4, 0, NULL, 0);
	say("waitv, word 2 differs: %ld %s\n", r, en(r));
	words[2] = 0;
	struct timespec t0, t1, ts = abs_in(CLOCK_MONOTONIC, 100);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	r = waitv(v, 4, 0, &ts, CLOCK_MONOTONIC);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	long ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
	say("waitv monotonic timeout: %ld %s, waited >= 90ms: %s\n", r, en(r), yesno(ms >= 90));
	ts = abs_in(CLOCK_REALTIME, 100);
	r = waitv(v, 4, 0, &ts, CLOCK_REALTIME);
	say("waitv realtime timeout: %ld %s\n", r, en(r));
	ts = (struct timespec){ 1, 0 };	/* long past */
	r = waitv(v, 1, 0, &ts, CLOCK_MONOTONIC);
	say("waitv past deadline: %ld %s\n", r, en(r));
	/* A huge absolute timeout still wakes on FUTEX_WAKE. */
	ts = (struct timespec){ INT64_MAX, 999999999 };
	pthread_create(&th, NULL, waker, (void *)(intptr_t)1);
	r = waitv(v, 2, 0, &ts, CLOCK_REALTIME);
	pthread_join(th, NULL);
	say("waitv huge timeout, woken: %ld %s\n", r, en(r));
	/* A signal: the handler has no SA_RESTART, so EINTR. */
	struct sigaction sa = { .sa_handler = on_alarm };
	sigaction(SIGALRM, &sa, NULL);
	/* repeating: a first expiry that a slow machine delivers before the call starts must not leave it
	 * waiting for ever */
	struct itimerval it = { { 0, 100000 }, { 0, 100000 } }, off = { { 0, 0 }, { 0, 0 } };
	setitimer(ITIMER_REAL, &it, NULL);
	r = waitv(v, 4, 0, NULL, 0);
	setitimer(ITIMER_REAL, &off, NULL);
	say("waitv interrupted: %ld %s\n", r, en(r));
	/* 128 entries, the same word many times: the last woken index is returned. */
	for (int i = 0; i < 128; i++)
		v[i] = (struct waitv){ 0, (uintptr_t)&words[i % 2 ? 7 : 6], FUTEX_32 | FUTEX_PRIVATE_FLAG, 0 };
	pthread_create(&th, NULL, waker, (void *)(intptr_t)7);
	r = waitv(v, 128, 0, NULL, 0);
	pthread_join(th, NULL);
	say("waitv 128, one woken: %ld %s\n", r, en(r));
	/* Shared words: a waitv in MAP_SHARED memory woken by FUTEX_WAKE from another process. */
	uint32_t *sh = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	pid_t pid = fork();
	if (pid == 0) {
		settle_proc(getppid());
		sh[3] = 1;
		fx(&sh[3], FUTEX_WAKE, 1, 0, 0, 0);
		_exit(0);
	}
	struct waitv s2[2] = { { 0, (uintptr_t)&sh[0], FUTEX_32, 0 }, { 0, (uintptr_t)&sh[3], FUTEX_32, 0 } };
	r = waitv(s2, 2, 0, NULL, 0);
	waitpid(pid, NULL, 0);
	say("waitv shared, woken by another process: %ld %s\n", r, en(r));
}

static void vprobe(const char *what, struct waitv *v, unsigned n, unsigned flags, struct timespec *ts, int clk)
{
	long r = waitv(v, n, flags, ts, clk);
	say("%s: %ld %s\n", what, r, en(r));
}

static void mode_waitv_err(void)
{
	static struct waitv v[130];
	struct timespec past = { 0, 0 };
	char *gone = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	munmap(gone, 4096);

	words[0] = 1;	/* every good entry mismatches: EAGAIN at once */
	for (int i = 0; i < 130; i++)
		v[i] = (struct waitv){ 0, (uintptr_t)&words[0], FUTEX_32 | FUTEX_PRIVATE_FLAG, 0 };
	vprobe("good", v, 1, 0, NULL, 0);
	vprobe("128", v, 128, 0, NULL, 0);
	vprobe("nr 0", v, 0, 0, NULL, 0);
	vprobe("nr 129", v, 129, 0, NULL, 0);
	vprobe("flags 1", v, 1, 1, NULL, 0);
	vprobe("NULL waiters", NULL, 1, 0, NULL, 0);
	vprobe("unmapped waiters", (struct waitv *)gone, 1, 0, NULL, 0);
	vprobe("clock BOOTTIME", v, 1, 0, &past, CLOCK_BOOTTIME);
	vprobe("clock BOOTTIME, no timeout", v, 1, 0, NULL, CLOCK_BOOTTIME);
	vprobe("bad timeout pointer", v, 1, 0, (struct timespec *)gone, CLOCK_MONOTONIC);
	struct timespec bad = { 0, 1000000000L };
	vprobe("tv_nsec 1e9", v, 1, 0, &bad, CLOCK_MONOTONIC);
	bad = (struct timespec){ -1, 0 };
	vprobe("tv_sec -1", v, 1, 0, &bad, CLOCK_MONOTONIC);
	vprobe("past timeout, mismatch", v, 1, 0, &past, CLOCK_MONOTONIC);
	static const struct { const char *what; uint64_t val, uaddr; uint32_t flags, res; } e[] = {
		{ "size u8", 0, 0, 0 | FUTEX_PRIVATE_FLAG, 0 },
		{ "size u16", 0, 0, 1, 0 },
		{ "size u64", 0, 0, 3, 0 },
		{ "flag bit 8", 0, 0, FUTEX_32 | 0x100, 0 },
		{ "CLOCK_REALTIME flag", 0, 0, FUTEX_32 | FUTEX_CLOCK_REALTIME, 0 },
		{ "reserved", 0, 0, FUTEX_32, 1 },
		{ "64-bit value", 1ULL << 32, 0, FUTEX_32, 0 },
		{ "unaligned", 0, 2, FUTEX_32 | FUTEX_PRIVATE_FLAG, 0 },
		{ "NULL uaddr", 0, ~0ULL, FUTEX_32 | FUTEX_PRIVATE_FLAG, 0 },
		{ "unmapped uaddr", 0, ~1ULL, FUTEX_32 | FUTEX_PRIVATE_FLAG, 0 },
		{ "unmapped uaddr, shared", 0, ~1ULL, FUTEX_32, 0 },
		{ "kernel uaddr", 0, ~2ULL, FUTEX_32 | FUTEX_PRIVATE_FLAG, 0 },
	};
	for (unsigned i = 0; i < sizeof(e) / sizeof(e[0]); i++) {
		/* the bad entry second: the first is checked and fine */
		v[1] = (struct waitv){ e[i].val, (uintptr_t)&words[0] + e[i].uaddr, e[i].flags, e[i].res };
		if (e[i].uaddr == ~0ULL)
			v[1].uaddr = 0;
		if (e[i].uaddr == ~1ULL)
			v[1].uaddr = (uintptr_t)gone;
		if (e[i].uaddr == ~2ULL)
			v[1].uaddr = 0xffff888000000000ULL;
		vprobe(e[i].what, v, 2, 0, NULL, 0);
	}
}

int main(int argc, char **argv)
{
	static const struct mode modes[] = {
		{ "wakeop", mode_wakeop },
		{ "wakeop_err", mode_wakeop_err },
		{ "race", mode_race },
		{ "waitv", mode_waitv },
		{ "waitv_err", mode_waitv_err },
	};
	return run_mode(argc, argv, modes, sizeof(modes) / sizeof(modes[0]));
}

/* thread_basic: pthread_create/join, ids, TLS, FP state, memory. usage: thread_basic MODE
 *   create      8 threads: values back through pthread_join, getpid() is main's, gettid() differs, TLS fresh
 *   tls         __thread variables (initialised, zeroed, arrays) are per thread while all threads are alive
 *   fp          SSE/x87 results in threads equal main's bit for bit across syscalls; MXCSR and the x87
 *               control word are per thread
 *   nested      threads create threads (a chain 6 deep); pthread_self/pthread_equal
 *   mm          memory mapped or unmapped by one thread is seen by the others; malloc in 4 threads at once
 *   attr        a thread with a 1 MiB stack uses 600 KiB of it; a thread on a caller-supplied stack
 *   stress-seq  200 short-lived threads created and joined one after another
 *   stress-par  5 rounds of 16 threads alive at once */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "thread_util.h"

static __thread int tls_val = 7;

struct create_arg {
	int i;
	pid_t tid, pid;
	int tls_start, tls_end;
};

static void *create_fn(void *p)
{
	struct create_arg *a = p;
	a->tid = gettid();
	a->pid = getpid();
	a->tls_start = tls_val;
	tls_val = 100 + a->i;
	sched_yield();
	sleep_ms(1);
	a->tls_end = tls_val;
	return (void *)(long)(a->i * a->i + 1);
}

static int mode_create(void)
{
	enum { N = 8 };
	pthread_t t[N];
	struct create_arg a[N];
	tls_val = 1; /* main's value: new threads must start from the TLS image (7), not from this */
	for (int i = 0; i < N; i++) {
		a[i] = (struct create_arg){ .i = i };
		int e = pthread_create(&t[i], NULL, create_fn, &a[i]);
		if (e) {
			say("pthread_create %d: error %d\n", i, e);
			return 1;
		}
	}
	char rets[128] = "";
	int pid_ok = 1, tid_ok = 1, distinct = 1, tls_start = 1, tls_own = 1;
	for (int i = 0; i < N; i++) {
		void *r = (void *)-1;
		int e = pthread_join(t[i], &r);
		snprintf(rets + strlen(rets), sizeof rets - strlen(rets), " %ld", e ? -1L : (long)r);
	}
	for (int i = 0; i < N; i++) {
		pid_ok &= a[i].pid == getpid();
		tid_ok &= a[i].tid > 0 && a[i].tid != getpid();
		for (int j = 0; j < i; j++)
			distinct &= a[i].tid != a[j].tid;
		tls_start &= a[i].tls_start == 7;
		tls_own &= a[i].tls_end == 100 + i;
	}
	say("%d threads created and joined, values through pthread_join:%s\n", N, rets);
	say("getpid() in every thread is main's: %s\n", yesno(pid_ok));
	say("gettid() in every thread differs from getpid(): %s, all distinct: %s\n", yesno(tid_ok), yesno(distinct));
	say("main: gettid() == getpid(): %s\n", yesno(gettid() == getpid()));
	say("TLS: new threads start from the initial image: %s, each keeps its own value: %s, main's kept: %s\n",
	    yesno(tls_start), yesno(tls_own), yesno(tls_val == 1));
	return 0;
}

/* tls: all threads hold their values at the same time */
enum { TLS_N = 6 };
static __thread char tls_buf[256] = "thread-local-initialised";
static __thread long tls_zero[64];
static __thread int tls_counter = 5;
static int tls_written, tls_checked;

struct tls_arg {
	int i;
	uintptr_t addr;
	int init_ok, kept_ok;
};

static void *tls_fn(void *p)
{
	struct tls_arg *a = p;
	a->addr = (uintptr_t)&tls_counter;
	a->init_ok = !strcmp(tls_buf, "thread-local-initialised") && tls_counter == 5;
	for (int k = 0; k < 64; k++)
		a->init_ok &= tls_zero[k] == 0;
	memset(tls_buf, 'a' + a->i, sizeof tls_buf);
	for (int k = 0; k < 64; k++)
		tls_zero[k] = a->i * 1000 + k;
	tls_counter = a->i;
	__atomic_add_fetch(&tls_written, 1, __ATOMIC_RELEASE);
	wait_for(&tls_written, TLS_N); /* everyone has written theirs */
	int ok = 1;
	for (int k = 0; k < 256; k++)
		ok &= tls_buf[k] == 'a' + a->i;
	for (int k = 0; k < 64; k++)
		ok &= tls_zero[k] == a->i * 1000 + k;
	for (int k = 0; k < 1000; k++) {
		tls_counter++;
		if (k % 100 == 0)
			getppid();
	}
	ok &= tls_counter == a->i + 1000;
	a->kept_ok = ok;
	__atomic_add_fetch(&tls_checked, 1, __ATOMIC_RELEASE);
	wait_for(&tls_checked, TLS_N); /* nobody exits before all have checked */
	return NULL;
}

static int mode_tls(void)
{
	pthread_t t[TLS_N];
	struct tls_arg a[TLS_N];
	strcpy(tls_buf, "main's");
	tls_counter = -1;
	for (int i = 0; i < TLS_N; i++) {
		a[i] = (struct tls_arg){ .i = i };
		pthread_create(&t[i], NULL, tls_fn, &a[i]);
	}
	for (int i = 0; i < TLS_N; i++)
		pthread_join(t[i], NULL);
	int init = 1, kept = 1, distinct = 1;
	for (int i = 0; i < TLS_N; i++) {
		init &= a[i].init_ok;
		kept &= a[i].kept_ok;
		distinct &= a[i].addr != (uintptr_t)&tls_counter;
		for (int j = 0; j < i; j++)
			distinct &= a[i].addr != a[j].addr;
	}
	say("%d threads: __thread initialised/zeroed in every thread: %s\n", TLS_N, yesno(init));
	say("values kept while all threads held theirs: %s; addresses distinct: %s\n", yesno(kept), yesno(distinct));
	say("main's TLS untouched: %s\n", yesno(!strcmp(tls_buf, "main's") && tls_counter == -1));
	return 0;
}

/* fp: the same computation in threads and in main, values held in registers across syscalls */
static double fp_work(double x)
{
	double a = x * 1.5, b = x / 3.0, c = x + 0.25;
	long double l = (long double)x / 7.0L;
	for (int i = 0; i < 200; i++) {
		__asm__ volatile("" : "+x"(a), "+x"(b), "+x"(c));
		if (i % 20 == 0)
			syscall(SYS_getppid);
		__asm__ volatile("" : "+x"(a), "+x"(b), "+x"(c));
		a = a * 1.000001 + b / (c + 1.0);
		b = b - a * 1e-7;
		c = c * 0.999999 + 0.5;
		l = l * 1.0000001L + (long double)a * 1e-9L;
		if (i % 50 == 0)
			sched_yield();
	}
	return a + b + c + (double)l;
}

/* MXCSR without its sticky exception flags (bits 0-5), which any computation may set */
static unsigned get_mxcsr(void)
{
	unsigned m;
	__asm__ volatile("stmxcsr %0" : "=m"(m));
	return m & ~0x3fu;
}

static void set_mxcsr(unsigned m) { __asm__ volatile("ldmxcsr %0" : : "m"(m)); }

static unsigned short get_x87cw(void)
{
	unsigned short w;
	__asm__ volatile("fnstcw %0" : "=m"(w));
	return w;
}

static void set_x87cw(unsigned short w) { __asm__ volatile("fldcw %0" : : "m"(w)); }

enum { FP_N = 4 };
static int fp_set;

struct fp_arg {
	int i;
	double in, out;
	int ctl_ok;
};

static void *fp_fn(void *p)
{
	struct fp_arg *a = p;
	/* thread 0 rounds up and uses extended precision control differently; the others keep defaults */
	unsigned mx = get_mxcsr();
	unsigned short cw = get_x87cw();
	if (a->i == 0) {
		set_mxcsr((mx & ~0x6000u) | 0x4000u); /* RC = round up */
		set_x87cw((unsigned short)((cw & ~0x0c00) | 0x0800));
		__atomic_store_n(&fp_set, 1, __ATOMIC_RELEASE);
		volatile double one = 1.0, three = 3.0;
		double up = one / three;
		sleep_ms(20);
		syscall(SYS_getppid);
		a->ctl_ok = get_mxcsr() == ((mx & ~0x6000u) | 0x4000u) &&
			    get_x87cw() == (unsigned short)((cw & ~0x0c00) | 0x0800) && up > 0.3333333333333333;
		set_mxcsr(mx);
		set_x87cw(cw);
	} else {
		wait_for(&fp_set, 1); /* thread 0 has changed its own control registers: ours must not move */
		a->ctl_ok = get_mxcsr() == mx && get_x87cw() == cw;
	}
	a->out = fp_work(a->in);
	return NULL;
}

static int mode_fp(void)
{
	pthread_t t[FP_N];
	struct fp_arg a[FP_N];
	unsigned mx = get_mxcsr();
	unsigned short cw = get_x87cw();
	for (int i = 0; i < FP_N; i++) {
		a[i] = (struct fp_arg){ .i = i, .in = 1.25 + i * 3.5 };
		pthread_create(&t[i], NULL, fp_fn, &a[i]);
	}
	for (int i = 0; i < FP_N; i++)
		pthread_join(t[i], NULL);
	int same = 1, ctl = 1;
	for (int i = 0; i < FP_N; i++) {
		double ref = fp_work(a[i].in);
		same &= memcmp(&ref, &a[i].out, sizeof ref) == 0;
		ctl &= a[i].ctl_ok;
	}
	say("%d threads: FP results equal main's bit for bit: %s (thread 1: %.9f)\n", FP_N, yesno(same), a[1].out);
	say("MXCSR and x87 control word are per thread: %s; main's unchanged: %s\n", yesno(ctl),
	    yesno(get_mxcsr() == mx && get_x87cw() == cw));
	return 0;
}

/* nested: each thread creates the next one and joins it */
static pthread_t nested_self[7]; /* [0] main, [d] the thread at depth d */

static void *nested_fn(void *p)
{
	long depth = (long)p;
	nested_self[depth] = pthread_self();
	if (depth == 6)
		return (void *)depth;
	pthread_t t;
	void *r = NULL;
	if (pthread_create(&t, NULL, nested_fn, (void *)(depth + 1)) || pthread_join(t, &r))
		return (void *)-1000L;
	if (!pthread_equal(t, nested_self[depth + 1]))
		return (void *)-2000L;
	return (void *)(depth + (long)r);
}

static int mode_nested(void)
{
	nested_self[0] = pthread_self();
	pthread_t t;
	void *r = NULL;
	pthread_create(&t, NULL, nested_fn, (void *)1L);
	pthread_join(t, &r);
	int eq = pthread_equal(t, nested_self[1]);
	int distinct = 1;
	for (int i = 0; i < 7; i++)
		for (int j = 0; j < i; j++)
			distinct &= !pthread_equal(nested_self[i], nested_self[j]);
	say("chain of threads 6 deep, sum of depths through pthread_join: %ld\n", (long)r);
	say("pthread_self() distinct in each (main included), pthread_equal(created, self): %s\n",
	    yesno(distinct && eq));
	return 0;
}

/* mm: one address space */
static void *mm_map_fn(void *p)
{
	(void)p;
	unsigned char *m = mmap(NULL, 65536, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return NULL;
	for (int i = 0; i < 65536; i++)
		m[i] = (unsigned char)(i * 7);
	return m;
}

static void *mm_unmap_fn(void *p) { return (void *)(long)munmap(p, 65536); }

static void *mm_malloc_fn(void *p)
{
	unsigned seed = (unsigned)(long)p;
	long ok = 1;
	for (int i = 0; i < 2000; i++) {
		seed = seed * 1103515245u + 12345u;
		size_t n = 1 + (seed >> 8) % (i % 50 == 0 ? 300000 : 4000); /* some above the mmap threshold */
		unsigned char *b = malloc(n);
		if (!b)
			return (void *)0L;
		memset(b, (int)(seed & 0xff), n);
		if (i % 3 == 0)
			syscall(SYS_getppid);
		ok &= b[0] == (seed & 0xff) && b[n - 1] == (seed & 0xff);
		free(b);
	}
	return (void *)ok;
}

static int mode_mm(void)
{
	pthread_t t;
	void *r;
	pthread_create(&t, NULL, mm_map_fn, NULL);
	pthread_join(t, &r);
	unsigned char *m = r;
	int seen = m != NULL;
	for (int i = 0; seen && i < 65536; i++)
		seen &= m[i] == (unsigned char)(i * 7);
	say("a thread's mmap and writes are seen by main: %s\n", yesno(seen));
	pthread_create(&t, NULL, mm_unmap_fn, m);
	pthread_join(t, &r);
	errno = 0;
	int pr = mprotect(m, 65536, PROT_READ);
	say("another thread's munmap = %ld, then main's mprotect there = %d %s\n", (long)r, pr,
	    pr < 0 && errno == ENOMEM ? "ENOMEM" : "E?");
	pthread_t ts[4];
	for (long i = 0; i < 4; i++)
		pthread_create(&ts[i], NULL, mm_malloc_fn, (void *)(i + 1));
	int all = 1;
	for (int i = 0; i < 4; i++) {
		pthread_join(ts[i], &r);
		all &= r == (void *)1L;
	}
	say("malloc/free in 4 threads at once, 2000 blocks each: %s\n", yesno(all));
	return 0;
}

/* attr: stacks */
static void *attr_big_fn(void *p)
{
	(void)p;
	volatile char big[600 * 1024];
	for (size_t i = 0; i < sizeof big; i += 512)
		big[i] = (char)i;
	long s = 0;
	for (size_t i = 0; i < sizeof big; i += 512)
		s += big[i] == (char)i;
	return (void *)s;
}

static void *attr_own_fn(void *p)
{
	char here;
	char *lo = p;
	return (void *)(long)(&here > lo && &here < lo + 256 * 1024);
}

static int mode_attr(void)
{
	pthread_attr_t at;
	pthread_t t;
	void *r;
	pthread_attr_init(&at);
	pthread_attr_setstacksize(&at, 1 << 20);
	int e = pthread_create(&t, &at, attr_big_fn, NULL);
	pthread_join(t, &r);
	pthread_attr_destroy(&at);
	say("1 MiB stack: create %d, 600 KiB used, pages right: %ld of %d\n", e, (long)r, 600 * 2);
	char *stk = mmap(NULL, 256 * 1024, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	pthread_attr_init(&at);
	pthread_attr_setstack(&at, stk, 256 * 1024);
	e = pthread_create(&t, &at, attr_own_fn, stk);
	pthread_join(t, &r);
	pthread_attr_destroy(&at);
	say("caller-supplied stack: create %d, thread ran on it: %s\n", e, yesno(r == (void *)1L));
	return 0;
}

/* stress */
static void *ret_arg_fn(void *p) { return p; }

static int mode_stress_seq(void)
{
	long sum = 0;
	int fails = 0;
	for (long i = 0; i < 200; i++) {
		pthread_t t;
		void *r = NULL;
		if (pthread_create(&t, NULL, ret_arg_fn, (void *)i) || pthread_join(t, &r))
			fails++;
		sum += (long)r;
	}
	say("200 threads created and joined one after another: failures %d, sum of results %ld\n", fails, sum);
	return 0;
}

static int par_alive;

static void *par_fn(void *p)
{
	__atomic_add_fetch(&par_alive, 1, __ATOMIC_ACQ_REL);
	return (void *)(long)wait_for(&par_alive, (int)(long)p);
}

static int mode_stress_par(void)
{
	enum { N = 16, ROUNDS = 5 };
	int joined = 0, all_saw = 1, fails = 0;
	for (int round = 0; round < ROUNDS; round++) {
		pthread_t t[N];
		for (int i = 0; i < N; i++)
			if (pthread_create(&t[i], NULL, par_fn, (void *)(long)((round + 1) * N)))
				fails++;
		for (int i = 0; i < N; i++) {
			void *r = NULL;
			if (!pthread_join(t[i], &r))
				joined++;
			all_saw &= r == (void *)1L;
		}
	}
	say("%d rounds of %d threads alive at once: create failures %d, joined %d, all saw %d alive: %s\n", ROUNDS,
	    N, fails, joined, N, yesno(all_saw));
	return 0;
}

int main(int argc, char **argv)
{
	alarm(GUEST_ALARM);
	const char *mode = argc > 1 ? argv[1] : "create";
	if (!strcmp(mode, "create"))
		return mode_create();
	if (!strcmp(mode, "tls"))
		return mode_tls();
	if (!strcmp(mode, "fp"))
		return mode_fp();
	if (!strcmp(mode, "nested"))
		return mode_nested();
	if (!strcmp(mode, "mm"))
		return mode_mm();
	if (!strcmp(mode, "attr"))
		return mode_attr();
	if (!strcmp(mode, "stress-seq"))
		return mode_stress_seq();
	if (!strcmp(mode, "stress-par"))
		return mode_stress_par();
	say("unknown mode\n");
	return 2;
}

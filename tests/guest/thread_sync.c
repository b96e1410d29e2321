/* thread_sync: libc synchronisation between threads (futex underneath). usage: thread_sync MODE
 *   mutex        4 threads x 20000 increments under one pthread_mutex, and with atomic adds: exact totals
 *   mutex-types  trylock EBUSY from another thread, recursive, errorcheck EDEADLK/EPERM
 *   cond         producer-consumer on a 4-slot queue (2 producers, 3 consumers) with pthread_cond; broadcast
 *   barrier      4 threads x 200 rounds of pthread_barrier_wait; one serial thread per round
 *   sem          sem_t ping-pong between two threads, counting semaphore, sem_trywait EAGAIN
 *   rwlock       readers never see a half-done write; exact totals
 *   once-keys    pthread_once runs once among 8 threads; pthread_key destructors run once per thread
 *   timed        pthread_mutex_timedlock, pthread_cond_timedwait, sem_timedwait time out (ETIMEDOUT)
 *   spin         busy-waiting without syscalls: a flag set by another thread is seen, and two threads
 *                hand a token back and forth 200 times (needs true concurrency or preemption)
 *   atomics      lock-free counters and release/acquire message passing between threads */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "thread_util.h"

/* mutex */
static pthread_mutex_t mtx = PTHREAD_MUTEX_INITIALIZER;
static long counter;
static long acounter;

static void *mutex_fn(void *p)
{
	(void)p;
	for (int i = 0; i < 20000; i++) {
		pthread_mutex_lock(&mtx);
		long v = counter;
		if (i % 1000 == 0)
			sched_yield(); /* hold the lock across a syscall now and then: real contention */
		counter = v + 1;
		pthread_mutex_unlock(&mtx);
		__atomic_add_fetch(&acounter, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

static int mode_mutex(void)
{
	pthread_t t[4];
	for (int i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, mutex_fn, NULL);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	say("4 threads x 20000 increments under a mutex: %ld\n", counter);
	say("4 threads x 20000 atomic increments: %ld\n", acounter);
	return 0;
}

/* mutex-types */
static int trylock_res;
static void *trylock_fn(void *p)
{
	pthread_mutex_t *m = p;
	trylock_res = pthread_mutex_trylock(m);
	int e = pthread_mutex_unlock(m); /* not the owner: EPERM for an errorcheck mutex */
	return (void *)(long)e;
}

static const char *ename(int e)
{
	switch (e) {
	case 0: return "0";
	case EBUSY: return "EBUSY";
	case EDEADLK: return "EDEADLK";
	case EPERM: return "EPERM";
	case ETIMEDOUT: return "ETIMEDOUT";
	case EAGAIN: return "EAGAIN";
	case EINTR: return "EINTR";
	case EINVAL: return "EINVAL";
	default: return "E?";
	}
}

static int mode_mutex_types(void)
{
	pthread_mutexattr_t a;
	pthread_mutex_t ec, rec;
	pthread_mutexattr_init(&a);
	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ERRORCHECK);
	pthread_mutex_init(&ec, &a);
	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
	pthread_mutex_init(&rec, &a);
	pthread_mutexattr_destroy(&a);

	pthread_mutex_lock(&ec);
	say("errorcheck: relock by the owner = %s\n", ename(pthread_mutex_lock(&ec)));
	pthread_t t;
	void *r;
	pthread_create(&t, NULL, trylock_fn, &ec);
	pthread_join(t, &r);
	say("errorcheck: trylock from another thread = %s, unlock by a non-owner = %s\n", ename(trylock_res),
	    ename((int)(long)r));
	int u1 = pthread_mutex_unlock(&ec);
	int u2 = pthread_mutex_unlock(&ec);
	say("errorcheck: unlock by the owner = %s, then again = %s\n", ename(u1), ename(u2));

	int l1 = pthread_mutex_lock(&rec), l2 = pthread_mutex_lock(&rec), l3 = pthread_mutex_trylock(&rec);
	pthread_create(&t, NULL, trylock_fn, &rec);
	pthread_join(t, &r);
	int busy = trylock_res;
	pthread_mutex_unlock(&rec);
	pthread_mutex_unlock(&rec);
	pthread_mutex_unlock(&rec);
	pthread_create(&t, NULL, trylock_fn, &rec);
	pthread_join(t, &r);
	say("recursive: lock lock trylock = %s %s %s, other thread's trylock = %s, after 3 unlocks = %s\n",
	    ename(l1), ename(l2), ename(l3), ename(busy), ename(trylock_res));
	return 0;
}

/* cond: bounded queue */
enum { QN = 4, PER_PRODUCER = 5000, PRODUCERS = 2, CONSUMERS = 3 };
static int q[QN], qhead, qlen, producers_left = PRODUCERS;
static pthread_mutex_t qm = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t not_empty = PTHREAD_COND_INITIALIZER, not_full = PTHREAD_COND_INITIALIZER;

static void *producer(void *p)
{
	(void)p;
	for (int v = 1; v <= PER_PRODUCER; v++) {
		pthread_mutex_lock(&qm);
		while (qlen == QN)
			pthread_cond_wait(&not_full, &qm);
		q[(qhead + qlen++) % QN] = v;
		pthread_cond_signal(&not_empty);
		pthread_mutex_unlock(&qm);
	}
	pthread_mutex_lock(&qm);
	if (--producers_left == 0)
		pthread_cond_broadcast(&not_empty); /* consumers waiting on an empty queue: the end */
	pthread_mutex_unlock(&qm);
	return NULL;
}

struct consumed {
	long n, sum;
};

static void *consumer(void *p)
{
	struct consumed *c = p;
	for (;;) {
		pthread_mutex_lock(&qm);
		while (qlen == 0 && producers_left > 0)
			pthread_cond_wait(&not_empty, &qm);
		if (qlen == 0) {
			pthread_mutex_unlock(&qm);
			return NULL;
		}
		int v = q[qhead];
		qhead = (qhead + 1) % QN;
		qlen--;
		pthread_cond_signal(&not_full);
		pthread_mutex_unlock(&qm);
		c->n++;
		c->sum += v;
	}
}

static pthread_mutex_t gm = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gc = PTHREAD_COND_INITIALIZER;
static int go, waiting, woke;

static void *bcast_fn(void *p)
{
	(void)p;
	pthread_mutex_lock(&gm);
	waiting++;
	while (!go)
		pthread_cond_wait(&gc, &gm);
	woke++;
	pthread_mutex_unlock(&gm);
	return NULL;
}

static int mode_cond(void)
{
	pthread_t pt[PRODUCERS], ct[CONSUMERS];
	struct consumed c[CONSUMERS] = { { 0, 0 } };
	for (int i = 0; i < CONSUMERS; i++)
		pthread_create(&ct[i], NULL, consumer, &c[i]);
	for (int i = 0; i < PRODUCERS; i++)
		pthread_create(&pt[i], NULL, producer, NULL);
	for (int i = 0; i < PRODUCERS; i++)
		pthread_join(pt[i], NULL);
	long n = 0, sum = 0;
	for (int i = 0; i < CONSUMERS; i++) {
		pthread_join(ct[i], NULL);
		n += c[i].n;
		sum += c[i].sum;
	}
	say("%d producers, %d consumers, %d-slot queue: consumed %ld items, sum %ld\n", PRODUCERS, CONSUMERS, QN, n,
	    sum);

	enum { B = 6 };
	pthread_t bt[B];
	for (int i = 0; i < B; i++)
		pthread_create(&bt[i], NULL, bcast_fn, NULL);
	for (int k = 0; k < 10000; k++) { /* until all are in pthread_cond_wait (they hold gm until then) */
		pthread_mutex_lock(&gm);
		int w = waiting;
		pthread_mutex_unlock(&gm);
		if (w == B)
			break;
		sleep_ms(1);
	}
	pthread_mutex_lock(&gm);
	go = 1;
	pthread_cond_broadcast(&gc);
	pthread_mutex_unlock(&gm);
	for (int i = 0; i < B; i++)
		pthread_join(bt[i], NULL);
	say("pthread_cond_broadcast woke all %d waiters: %d\n", B, woke);
	return 0;
}

/* barrier */
enum { BT = 4, ROUNDS = 200 };
static pthread_barrier_t bar;
static int slots[ROUNDS][BT];
static int serials;

static void *barrier_fn(void *p)
{
	int me = (int)(long)p, ok = 1;
	for (int r = 0; r < ROUNDS; r++) {
		__atomic_store_n(&slots[r][me], r + 1, __ATOMIC_RELAXED);
		int e = pthread_barrier_wait(&bar);
		if (e == PTHREAD_BARRIER_SERIAL_THREAD)
			__atomic_add_fetch(&serials, 1, __ATOMIC_RELAXED);
		else if (e)
			ok = 0;
		for (int j = 0; j < BT; j++) /* after the barrier every thread's store of this round is visible */
			ok &= __atomic_load_n(&slots[r][j], __ATOMIC_RELAXED) == r + 1;
	}
	return (void *)(long)ok;
}

static int mode_barrier(void)
{
	pthread_t t[BT];
	pthread_barrier_init(&bar, NULL, BT);
	for (long i = 0; i < BT; i++)
		pthread_create(&t[i], NULL, barrier_fn, (void *)i);
	int ok = 1;
	for (int i = 0; i < BT; i++) {
		void *r;
		pthread_join(t[i], &r);
		ok &= r == (void *)1L;
	}
	pthread_barrier_destroy(&bar);
	say("%d threads x %d barrier rounds: all stores visible after each: %s, serial threads: %d\n", BT, ROUNDS,
	    yesno(ok), serials);
	return 0;
}

/* sem */
static sem_t ping, pong, items;
static int turn_log_ok = 1, turn;

static void *pong_fn(void *p)
{
	(void)p;
	for (int i = 0; i < 2000; i++) {
		sem_wait(&ping);
		if (turn != 2 * i + 1)
			turn_log_ok = 0;
		turn++;
		sem_post(&pong);
	}
	return NULL;
}

static void *items_fn(void *p)
{
	(void)p;
	long got = 0;
	for (int i = 0; i < 1000; i++)
		if (sem_wait(&items) == 0)
			got++;
	return (void *)got;
}

static int mode_sem(void)
{
	sem_init(&ping, 0, 0);
	sem_init(&pong, 0, 0);
	sem_init(&items, 0, 0);
	pthread_t t, c;
	pthread_create(&t, NULL, pong_fn, NULL);
	for (int i = 0; i < 2000; i++) {
		if (turn != 2 * i)
			turn_log_ok = 0;
		turn++;
		sem_post(&ping);
		sem_wait(&pong);
	}
	pthread_join(t, NULL);
	say("sem ping-pong 2000 rounds, strictly alternating: %s, turns %d\n", yesno(turn_log_ok), turn);
	pthread_create(&c, NULL, items_fn, NULL);
	for (int i = 0; i < 1000; i++) {
		sem_post(&items);
		if (i % 100 == 0)
			sched_yield();
	}
	void *r;
	pthread_join(c, &r);
	int v = -1;
	sem_getvalue(&items, &v);
	errno = 0;
	int tw = sem_trywait(&items);
	say("counting semaphore: consumer got %ld of 1000, value after %d, sem_trywait = %d %s\n", (long)r, v, tw,
	    ename(errno));
	return 0;
}

/* rwlock */
static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static long rw_a, rw_b;

static void *rw_writer(void *p)
{
	(void)p;
	for (int i = 0; i < 5000; i++) {
		pthread_rwlock_wrlock(&rw);
		rw_a++;
		if (i % 500 == 0)
			sched_yield();
		rw_b++;
		pthread_rwlock_unlock(&rw);
	}
	return NULL;
}

static void *rw_reader(void *p)
{
	(void)p;
	long torn = 0;
	for (int i = 0; i < 5000; i++) {
		pthread_rwlock_rdlock(&rw);
		torn += rw_a != rw_b;
		pthread_rwlock_unlock(&rw);
	}
	return (void *)torn;
}

static int mode_rwlock(void)
{
	pthread_t w[2], r[4];
	for (int i = 0; i < 4; i++)
		pthread_create(&r[i], NULL, rw_reader, NULL);
	for (int i = 0; i < 2; i++)
		pthread_create(&w[i], NULL, rw_writer, NULL);
	long torn = 0;
	for (int i = 0; i < 4; i++) {
		void *x;
		pthread_join(r[i], &x);
		torn += (long)x;
	}
	for (int i = 0; i < 2; i++)
		pthread_join(w[i], NULL);
	say("rwlock: 2 writers x 5000, 4 readers x 5000: torn reads %ld, totals %ld %ld\n", torn, rw_a, rw_b);
	return 0;
}

/* once-keys */
static pthread_once_t once = PTHREAD_ONCE_INIT;
static int once_runs;
static pthread_key_t key;
static long dtor_sum, dtor_calls;

static void once_init(void)
{
	sleep_ms(5); /* others arrive while it runs and must wait for it */
	__atomic_add_fetch(&once_runs, 1, __ATOMIC_RELAXED);
}

static void dtor(void *v)
{
	__atomic_add_fetch(&dtor_sum, (long)v, __ATOMIC_RELAXED);
	__atomic_add_fetch(&dtor_calls, 1, __ATOMIC_RELAXED);
}

static void *once_fn(void *p)
{
	pthread_once(&once, once_init);
	int done = __atomic_load_n(&once_runs, __ATOMIC_RELAXED) == 1;
	pthread_setspecific(key, p);
	sched_yield();
	return (void *)(long)(done && pthread_getspecific(key) == p);
}

static int mode_once_keys(void)
{
	pthread_key_create(&key, dtor);
	pthread_t t[8];
	for (long i = 0; i < 8; i++)
		pthread_create(&t[i], NULL, once_fn, (void *)(i + 1));
	int ok = 1;
	for (int i = 0; i < 8; i++) {
		void *r;
		pthread_join(t[i], &r);
		ok &= r == (void *)1L;
	}
	say("pthread_once among 8 threads: init ran %d time(s), done before any returned: %s\n", once_runs, yesno(ok));
	say("pthread_key destructors: %ld calls, sum of values %ld; main's value unset: %s\n", dtor_calls, dtor_sum,
	    yesno(pthread_getspecific(key) == NULL));
	return 0;
}

/* timed */
static struct timespec deadline_ms(long ms)
{
	struct timespec t;
	clock_gettime(CLOCK_REALTIME, &t);
	t.tv_nsec += (ms % 1000) * 1000000L;
	t.tv_sec += ms / 1000 + t.tv_nsec / 1000000000L;
	t.tv_nsec %= 1000000000L;
	return t;
}

static pthread_mutex_t held = PTHREAD_MUTEX_INITIALIZER;

static void *timedlock_fn(void *p)
{
	(void)p;
	struct timespec d = deadline_ms(50);
	long t0 = mono_ms();
	int e = pthread_mutex_timedlock(&held, &d);
	long waited = mono_ms() - t0;
	return (void *)(long)(e == ETIMEDOUT && waited >= 40 ? 1 : e == 0 ? 2 : 3);
}

static int mode_timed(void)
{
	pthread_mutex_lock(&held);
	pthread_t t;
	void *r;
	pthread_create(&t, NULL, timedlock_fn, NULL);
	pthread_join(t, &r);
	pthread_mutex_unlock(&held);
	say("pthread_mutex_timedlock on a mutex held by main: ETIMEDOUT after the deadline: %s\n",
	    yesno(r == (void *)1L));

	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	pthread_cond_t c = PTHREAD_COND_INITIALIZER;
	pthread_mutex_lock(&m);
	struct timespec d = deadline_ms(50);
	long t0 = mono_ms();
	int e = pthread_cond_timedwait(&c, &m, &d);
	long waited = mono_ms() - t0;
	pthread_mutex_unlock(&m);
	say("pthread_cond_timedwait = %s, waited at least the timeout: %s\n", ename(e), yesno(waited >= 40));

	sem_t s;
	sem_init(&s, 0, 0);
	d = deadline_ms(50);
	t0 = mono_ms();
	errno = 0;
	int sr = sem_timedwait(&s, &d);
	int se = errno;
	waited = mono_ms() - t0;
	say("sem_timedwait = %d %s, waited at least the timeout: %s\n", sr, ename(se), yesno(waited >= 40));
	return 0;
}

/* spin */
static volatile int spin_flag, spin_started;
static int token;

static void *spin_fn(void *p)
{
	(void)p;
	spin_started = 1;
	while (!spin_flag) /* no syscalls: only another CPU or preemption can let main run */
		;
	return (void *)1L;
}

static void *pingpong_fn(void *p)
{
	int me = (int)(long)p;
	for (int i = 0; i < 200; i++) {
		while (__atomic_load_n(&token, __ATOMIC_ACQUIRE) != 2 * i + me)
			;
		__atomic_store_n(&token, 2 * i + me + 1, __ATOMIC_RELEASE);
	}
	return NULL;
}

static int mode_spin(void)
{
	pthread_t t, a, b;
	pthread_create(&t, NULL, spin_fn, NULL);
	while (!spin_started)
		sleep_ms(1);
	sleep_ms(10);
	spin_flag = 1;
	void *r;
	pthread_join(t, &r);
	say("a thread spinning without syscalls saw main's store and ended: %s\n", yesno(r == (void *)1L));
	pthread_create(&a, NULL, pingpong_fn, (void *)0L);
	pthread_create(&b, NULL, pingpong_fn, (void *)1L);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	say("two spinning threads handed a token back and forth: final %d\n", token);
	return 0;
}

/* atomics */
static long lf_counter;
static int mp_data[100], mp_flag;

static void *cas_fn(void *p)
{
	(void)p;
	for (int i = 0; i < 50000; i++) {
		long old = __atomic_load_n(&lf_counter, __ATOMIC_RELAXED);
		while (!__atomic_compare_exchange_n(&lf_counter, &old, old + 1, 1, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
			;
	}
	return NULL;
}

static void *mp_reader(void *p)
{
	(void)p;
	for (int round = 1; round <= 100; round++) {
		while (__atomic_load_n(&mp_flag, __ATOMIC_ACQUIRE) != 2 * round - 1)
			sched_yield();
		for (int i = 0; i < 100; i++)
			if (mp_data[i] != round * 1000 + i)
				return (void *)0L;
		__atomic_store_n(&mp_flag, 2 * round, __ATOMIC_RELEASE);
	}
	return (void *)1L;
}

static int mode_atomics(void)
{
	pthread_t t[4], rd;
	for (int i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, cas_fn, NULL);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	say("4 threads x 50000 compare-and-swap increments: %ld\n", lf_counter);
	pthread_create(&rd, NULL, mp_reader, NULL);
	for (int round = 1; round <= 100; round++) {
		while (__atomic_load_n(&mp_flag, __ATOMIC_ACQUIRE) != 2 * round - 2)
			sched_yield();
		for (int i = 0; i < 100; i++)
			mp_data[i] = round * 1000 + i;
		__atomic_store_n(&mp_flag, 2 * round - 1, __ATOMIC_RELEASE);
	}
	void *r;
	pthread_join(rd, &r);
	say("release/acquire message passing, 100 rounds: reader saw every write: %s\n", yesno(r == (void *)1L));
	return 0;
}

int main(int argc, char **argv)
{
	alarm(GUEST_ALARM);
	const char *mode = argc > 1 ? argv[1] : "mutex";
	static const struct {
		const char *name;
		int (*fn)(void);
	} modes[] = {
		{ "mutex", mode_mutex },     { "mutex-types", mode_mutex_types }, { "cond", mode_cond },
		{ "barrier", mode_barrier }, { "sem", mode_sem },                 { "rwlock", mode_rwlock },
		{ "once-keys", mode_once_keys }, { "timed", mode_timed },         { "spin", mode_spin },
		{ "atomics", mode_atomics },
	};
	for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++)
		if (!strcmp(mode, modes[i].name))
			return modes[i].fn();
	say("unknown mode\n");
	return 2;
}

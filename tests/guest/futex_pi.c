/* futex_pi: PI futexes (FUTEX_LOCK_PI, LOCK_PI2, TRYLOCK_PI, UNLOCK_PI; issue 15), native vs pvx.
 * usage: futex_pi MODE
 *   basic    the owner-TID word protocol: take, EDEADLK, hand-off to a waiter, EPERM, TRYLOCK's EAGAIN
 *   time     timeouts of LOCK_PI (CLOCK_REALTIME) and LOCK_PI2 (either clock), ENOSYS clock flags, a signal
 *   forged   words the guest forged: unknown and exited owner TIDs (ESRCH), OWNER_DIED, WAITERS, bad pointers
 *   death    an owner thread exits holding the lock: its waiter is handed it
 *   exec     a child execs holding a shared lock its parent waits for: exec releases it (futex_exec_release)
 *   requeue  FUTEX_WAIT_REQUEUE_PI / FUTEX_CMP_REQUEUE_PI: the lock taken for the first waiter, the others moved
 *   glibc    PTHREAD_PRIO_INHERIT mutexes: contention, a robust one whose owner dies, a condition variable
 * Words are printed with the owner TID as "me", "A", "B" or "tid?" so native and sandbox runs compare. */
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


static volatile int tid_a, tid_b;

static int gettid_(void)
{
	return (int)syscall(SYS_gettid);
}

/* The word with its TID named. */
static const char *w2s(uint32_t w)
{
	static char b[4][64];
	static int i;
	char *s = b[i++ % 4];
	int tid = (int)(w & FUTEX_TID_MASK);
	const char *who = !tid ? "0" : tid == gettid_() ? "me" : tid == tid_a ? "A" : tid == tid_b ? "B" : "tid?";
	snprintf(s, 64, "%s%s%s", who, w & FUTEX_WAITERS ? "|WAITERS" : "", w & FUTEX_OWNER_DIED ? "|OWNER_DIED" : "");
	return s;
}

static long fx(uint32_t *u, int op, long val, const struct timespec *ts)
{
	return syscall(SYS_futex, u, op, val, ts, NULL, 0);
}

static void step(const char *what, uint32_t *u, int op, const struct timespec *ts)
{
	long r = fx(u, op, 0, ts);
	say("%s: %ld %s word %s\n", what, r, en(r), w2s(*u));
}

/* Thread A: take words[0], signal, hold it until told, unlock (or exit holding it). */
static volatile int a_locked, a_release, a_exit_holding;
static void *thread_a(void *arg)
{
	(void)arg;
	tid_a = gettid_();
	long r = fx(&words[0], FUTEX_LOCK_PI | FUTEX_PRIVATE_FLAG, 0, NULL);
	a_locked = r == 0 ? 1 : -1;
	while (!a_release)
		usleep(1000);
	if (!a_exit_holding)
		fx(&words[0], FUTEX_UNLOCK_PI | FUTEX_PRIVATE_FLAG, 0, NULL);
	return NULL;
}

/* Thread B: block in LOCK_PI on words[0], report, unlock. */
static volatile long b_ret = 1;
static volatile uint32_t b_word;
static void *thread_b(void *arg)
{
	(void)arg;
	tid_b = gettid_();
	long r = fx(&words[0], FUTEX_LOCK_PI | FUTEX_PRIVATE_FLAG, 0, NULL);
	b_word = words[0];
	b_ret = r == 0 ? 0 : -errno;
	if (r == 0)
		fx(&words[0], FUTEX_UNLOCK_PI | FUTEX_PRIVATE_FLAG, 0, NULL);
	return NULL;
}

static void start_a(pthread_t *a, int exit_holding)
{
	a_locked = a_release = 0;
	a_exit_holding = exit_holding;
	pthread_create(a, NULL, thread_a, NULL);
	while (!a_locked)
		usleep(1000);
}

static void mode_basic(void)
{
	pthread_t a, b;

	step("lock free word", &words[0], FUTEX_LOCK_PI, NULL);
	step("lock again", &words[0], FUTEX_LOCK_PI, NULL);
	step("trylock own", &words[0], FUTEX_TRYLOCK_PI, NULL);
	step("unlock", &words[0], FUTEX_UNLOCK_PI, NULL);
	step("unlock free word", &words[0], FUTEX_UNLOCK_PI, NULL);
	step("trylock free word", &words[0], FUTEX_TRYLOCK_PI | FUTEX_PRIVATE_FLAG, NULL);
	step("unlock private", &words[0], FUTEX_UNLOCK_PI | FUTEX_PRIVATE_FLAG, NULL);

	start_a(&a, 0);
	say("A holds it: word %s\n", w2s(words[0]));
	step("trylock held by A", &words[0], FUTEX_TRYLOCK_PI | FUTEX_PRIVATE_FLAG, NULL);
	step("unlock held by A", &words[0], FUTEX_UNLOCK_PI | FUTEX_PRIVATE_FLAG, NULL);
	pthread_create(&b, NULL, thread_b, NULL);
	settle();
	say("B waits: done %s, word %s\n", yesno(b_ret != 1), w2s(words[0]));
	a_release = 1;
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	say("A unlocked: B got it %ld, word then %s, now %s\n", b_ret, w2s(b_word), w2s(words[0]));
	/* Plain waiters on a PI word and PI waiters on a plain one do not mix. */
	start_a(&a, 0);
	pthread_create(&b, NULL, thread_b, NULL);
	settle();
	long r = syscall(SYS_futex, &words[0], 1 | FUTEX_PRIVATE_FLAG, 1, NULL, NULL, 0);
	say("FUTEX_WAKE on a word with PI waiters: %ld %s\n", r, en(r));
	a_release = 1;
	pthread_join(a, NULL);
	pthread_join(b, NULL);
}

static void on_alarm(int sig)
{
	(void)sig;
	say("alarm handler ran\n");
}

static void mode_time(void)
{
	pthread_t a, b;
	struct timespec ts;

	start_a(&a, 0);
	ts = abs_in(CLOCK_REALTIME, 100);
	step("LOCK_PI, realtime deadline", &words[0], FUTEX_LOCK_PI | FUTEX_PRIVATE_FLAG, &ts);
	ts = abs_in(CLOCK_MONOTONIC, 100);
	step("LOCK_PI2, monotonic deadline", &words[0], FUTEX_LOCK_PI2 | FUTEX_PRIVATE_FLAG, &ts);
	ts = abs_in(CLOCK_REALTIME, 100);
	step("LOCK_PI2|CLOCK_REALTIME", &words[0], FUTEX_LOCK_PI2 | FUTEX_PRIVATE_FLAG | FUTEX_CLOCK_REALTIME, &ts);
	step("LOCK_PI|CLOCK_REALTIME", &words[0], FUTEX_LOCK_PI | FUTEX_CLOCK_REALTIME, &ts);
	step("TRYLOCK_PI|CLOCK_REALTIME", &words[0], FUTEX_TRYLOCK_PI | FUTEX_CLOCK_REALTIME, &ts);
	step("UNLOCK_PI|CLOCK_REALTIME", &words[0], FUTEX_UNLOCK_PI | FUTEX_CLOCK_REALTIME, &ts);
	ts = (struct timespec){ 0, 1000000000L };
	step("LOCK_PI, tv_nsec 1e9", &words[0], FUTEX_LOCK_PI | FUTEX_PRIVATE_FLAG, &ts);
	step("LOCK_PI, bad timeout pointer", &words[0], FUTEX_LOCK_PI | FUTEX_PRIVATE_FLAG, (void *)8);
	ts = (struct timespec){ 1, 0 };
	step("LOCK_PI, deadline long past", &words[0], FUTEX_LOCK_PI | FUTEX_PRIVATE_FLAG, &ts);
	/* A huge deadline and a signal without SA_RESTART: LOCK_PI restarts, then gets the lock at the unlock. */
	struct sigaction sa = { .sa_handler = on_alarm };
	sigaction(SIGALRM, &sa, NULL);
	struct itimerval it = { { 0, 0 }, { 0, 100000 } };
	setitimer(ITIMER_REAL, &it, NULL);
	pthread_create(&b, NULL, thread_b, NULL);
	usleep(300 * 1000);
	a_release = 1;
	pthread_join(a, NULL);
	ts = (struct timespec){ INT64_MAX, 999999999 };
	pthread_join(b, NULL);
	say("B after the signal: %ld\n", b_ret);
	start_a(&a, 0);
	step("LOCK_PI2, huge monotonic deadline, no owner change", &words[1], FUTEX_LOCK_PI2 | FUTEX_PRIVATE_FLAG, &ts);
	step("unlock it", &words[1], FUTEX_UNLOCK_PI | FUTEX_PRIVATE_FLAG, NULL);
	a_release = 1;
	pthread_join(a, NULL);
}

static void *exit_at_once(void *arg)
{
	*(volatile int *)arg = gettid_();
	return NULL;
}

static void mode_forged(void)
{
	char *ro = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	words[2] = 0x3ffffff0;
	step("owner tid no thread has", &words[2], FUTEX_LOCK_PI | FUTEX_PRIVATE_FLAG, NULL);
	words[2] = 0x3ffffff0;
	step("trylock, owner tid no thread has", &words[2], FUTEX_TRYLOCK_PI, NULL);
	pthread_t th;
	volatile int gone_tid = 0;
	pthread_create(&th, NULL, exit_at_once, (void *)&gone_tid);
	pthread_join(th, NULL);
	words[2] = (uint32_t)gone_tid;
	long r = fx(&words[2], FUTEX_LOCK_PI | FUTEX_PRIVATE_FLAG, 0, NULL);
	say("owner tid of an exited thread: %ld %s, waiters bit %s\n", r, en(r), yesno(words[2] & FUTEX_WAITERS));
	words[2] = FUTEX_OWNER_DIED;
	step("OWNER_DIED, no owner", &words[2], FUTEX_LOCK_PI | FUTEX_PRIVATE_FLAG, NULL);
	step("unlock it", &words[2], FUTEX_UNLOCK_PI | FUTEX_PRIVATE_FLAG, NULL);
	words[2] = FUTEX_WAITERS;
	step("WAITERS, no owner", &words[2], FUTEX_LOCK_PI | FUTEX_PRIVATE_FLAG, NULL);
	words[2] = (uint32_t)gettid_() | FUTEX_WAITERS | FUTEX_OWNER_DIED;
	step("own tid with WAITERS|OWNER_DIED", &words[2], FUTEX_LOCK_PI | FUTEX_PRIVATE_FLAG, NULL);
	step("unlock that", &words[2], FUTEX_UNLOCK_PI | FUTEX_PRIVATE_FLAG, NULL);
	pthread_t a;
	start_a(&a, 0);
	words[2] = (uint32_t)tid_a;	/* a live thread's */
	step("unlock a word of a live thread", &words[2], FUTEX_UNLOCK_PI | FUTEX_PRIVATE_FLAG, NULL);
	step("lock a forged word of a live thread", &words[2], FUTEX_TRYLOCK_PI | FUTEX_PRIVATE_FLAG, NULL);
	a_release = 1;
	pthread_join(a, NULL);
	char *gone = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	munmap(gone, 4096);
	words[2] = 0;
	step("unaligned", (uint32_t *)((char *)&words[2] + 1), FUTEX_LOCK_PI | FUTEX_PRIVATE_FLAG, NULL);
	step("unaligned unlock", (uint32_t *)((char *)&words[2] + 2), FUTEX_UNLOCK_PI, NULL);
	r = fx((uint32_t *)gone, FUTEX_LOCK_PI | FUTEX_PRIVATE_FLAG, 0, NULL);
	say("unmapped lock: %ld %s\n", r, en(r));
	r = fx((uint32_t *)gone, FUTEX_TRYLOCK_PI, 0, NULL);
	say("unmapped trylock: %ld %s\n", r, en(r));
	r = fx((uint32_t *)gone, FUTEX_UNLOCK_PI, 0, NULL);
	say("unmapped unlock: %ld %s\n", r, en(r));
	r = fx((uint32_t *)ro, FUTEX_LOCK_PI | FUTEX_PRIVATE_FLAG, 0, NULL);
	say("read-only lock: %ld %s, word %u\n", r, en(r), *(uint32_t *)ro);
	r = fx((uint32_t *)0x7ff000001240UL, FUTEX_LOCK_PI | FUTEX_PRIVATE_FLAG, 0, NULL);
	say("stub gadget address: %ld %s\n", r, en(r));
	r = fx((uint32_t *)0xffff888000000000UL, FUTEX_LOCK_PI | FUTEX_PRIVATE_FLAG, 0, NULL);
	say("kernel address: %ld %s\n", r, en(r));
}

static void mode_death(void)
{
	pthread_t a, b;

	start_a(&a, 1);	/* A exits holding words[0] while B waits for it */
	pthread_create(&b, NULL, thread_b, NULL);
	settle();
	a_release = 1;
	pthread_join(b, NULL);
	pthread_join(a, NULL);
	say("A exited holding it: B got it %ld, word then %s, now %s\n", b_ret, w2s(b_word), w2s(words[0]));
	/* No waiter when it exits: the word keeps its dead tid, the next locker gets ESRCH. */
	start_a(&a, 1);
	a_release = 1;
	pthread_join(a, NULL);
	long r = fx(&words[0], FUTEX_LOCK_PI | FUTEX_PRIVATE_FLAG, 0, NULL);
	say("locked after A exited, no waiter: %ld %s\n", r, en(r));
}

/* A FUTEX_WAIT_REQUEUE_PI waiter on words[4] for the lock words[5]: it unlocks what it gets. */
static volatile int rq_owned, rq_errors;
static void *rq_waiter(void *arg)
{
	(void)arg;
	long r = syscall(SYS_futex, &words[4], FUTEX_WAIT_REQUEUE_PI | FUTEX_PRIVATE_FLAG, 0, NULL, &words[5], 0);
	if (r == 0 && (words[5] & FUTEX_TID_MASK) == (uint32_t)gettid_()) {
		__atomic_add_fetch(&rq_owned, 1, __ATOMIC_SEQ_CST);
		fx(&words[5], FUTEX_UNLOCK_PI | FUTEX_PRIVATE_FLAG, 0, NULL);
	} else {
		__atomic_add_fetch(&rq_errors, 1, __ATOMIC_SEQ_CST);
	}
	return NULL;
}

static long rq(uint32_t *u, int n, int n2, uint32_t *u2, uint32_t val3)
{
	return syscall(SYS_futex, u, FUTEX_CMP_REQUEUE_PI | FUTEX_PRIVATE_FLAG, n, (long)n2, u2, val3);
}

static void mode_requeue(void)
{
	pthread_t th[3];
	long r;

	r = rq(&words[4], 2, 1, &words[5], 0);
	say("CMP_REQUEUE_PI n 2: %ld %s\n", r, en(r));
	r = rq(&words[4], 1, -1, &words[5], 0);
	say("CMP_REQUEUE_PI n2 -1: %ld %s\n", r, en(r));
	r = rq(&words[4], 1, 1, &words[4], 0);
	say("CMP_REQUEUE_PI same word: %ld %s\n", r, en(r));
	r = rq(&words[4], 1, 1, &words[5], 7);
	say("CMP_REQUEUE_PI val3 differs: %ld %s\n", r, en(r));
	r = rq(&words[4], 1, 1, &words[5], 0);
	say("CMP_REQUEUE_PI no waiters: %ld %s word %s\n", r, en(r), w2s(words[5]));
	r = syscall(SYS_futex, &words[4], FUTEX_WAIT_REQUEUE_PI | FUTEX_PRIVATE_FLAG, 0, NULL, &words[4], 0);
	say("WAIT_REQUEUE_PI same word: %ld %s\n", r, en(r));
	r = syscall(SYS_futex, &words[4], FUTEX_WAIT_REQUEUE_PI | FUTEX_PRIVATE_FLAG, 3, NULL, &words[5], 0);
	say("WAIT_REQUEUE_PI value differs: %ld %s\n", r, en(r));
	struct timespec ts = abs_in(CLOCK_MONOTONIC, 100);
	r = syscall(SYS_futex, &words[4], FUTEX_WAIT_REQUEUE_PI | FUTEX_PRIVATE_FLAG, 0, &ts, &words[5], 0);
	say("WAIT_REQUEUE_PI deadline: %ld %s\n", r, en(r));
	ts = abs_in(CLOCK_REALTIME, 100);
	r = syscall(SYS_futex, &words[4], FUTEX_WAIT_REQUEUE_PI | FUTEX_PRIVATE_FLAG | FUTEX_CLOCK_REALTIME, 0, &ts,
		    &words[5], 0);
	say("WAIT_REQUEUE_PI realtime deadline: %ld %s\n", r, en(r));

	/* The lock is free: the first waiter gets it, the other two move and get it in turn. */
	for (int i = 0; i < 3; i++)
		pthread_create(&th[i], NULL, rq_waiter, NULL);
	settle();
	r = syscall(SYS_futex, &words[4], FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	say("FUTEX_WAKE on their word: %ld %s\n", r, en(r));
	r = rq(&words[4], 1, 100, &words[5], 0);
	say("CMP_REQUEUE_PI, lock free: %ld %s\n", r, en(r));
	for (int i = 0; i < 3; i++)
		pthread_join(th[i], NULL);
	say("waiters that owned it: %d, errors %d, word %s\n", rq_owned, rq_errors, w2s(words[5]));

	/* The lock is ours: nobody is woken, n2 + 1 move (Linux counts the wake slot), then the rest. */
	rq_owned = rq_errors = 0;
	fx(&words[5], FUTEX_LOCK_PI | FUTEX_PRIVATE_FLAG, 0, NULL);
	for (int i = 0; i < 3; i++)
		pthread_create(&th[i], NULL, rq_waiter, NULL);
	settle();
	r = rq(&words[4], 1, 0, &words[5], 0);
	say("CMP_REQUEUE_PI n2 0, lock held: %ld %s word %s\n", r, en(r), w2s(words[5]));
	r = rq(&words[4], 1, 5, &words[5], 0);
	say("CMP_REQUEUE_PI n2 5, lock held: %ld %s word %s\n", r, en(r), w2s(words[5]));
	r = fx(&words[5], FUTEX_UNLOCK_PI | FUTEX_PRIVATE_FLAG, 0, NULL);
	for (int i = 0; i < 3; i++)
		pthread_join(th[i], NULL);
	say("after our unlock: waiters that owned it: %d, errors %d, word %s\n", rq_owned, rq_errors, w2s(words[5]));
}

static pthread_mutex_t pm, rm;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static long counter;
static int ready, consumed;

static void *contender(void *arg)
{
	(void)arg;
	for (int i = 0; i < 20000; i++) {
		pthread_mutex_lock(&pm);
		counter++;
		pthread_mutex_unlock(&pm);
	}
	return NULL;
}

static void *robust_owner(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&rm);
	usleep(150 * 1000);
	return NULL;	/* exits holding it */
}

static void *consumer(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&pm);
	while (ready < 5) {
		pthread_cond_wait(&cv, &pm);
		consumed++;
	}
	pthread_mutex_unlock(&pm);
	return NULL;
}

static void mode_glibc(void)
{
	pthread_mutexattr_t at;
	pthread_t th[4];

	pthread_mutexattr_init(&at);
	int e = pthread_mutexattr_setprotocol(&at, PTHREAD_PRIO_INHERIT);
	say("setprotocol PRIO_INHERIT: %s\n", errname(e));
	pthread_mutex_init(&pm, &at);
	for (int i = 0; i < 4; i++)
		pthread_create(&th[i], NULL, contender, NULL);
	for (int i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	say("4 threads x 20000 under a PI mutex: %ld\n", counter);
	say("trylock: %s\n", errname(pthread_mutex_trylock(&pm)));
	say("trylock again: %s\n", errname(pthread_mutex_trylock(&pm)));
	say("unlock: %s\n", errname(pthread_mutex_unlock(&pm)));

	/* A condition variable with a PI mutex. */
	pthread_t c;
	pthread_create(&c, NULL, consumer, NULL);
	for (int i = 0; i < 5; i++) {
		usleep(20 * 1000);
		pthread_mutex_lock(&pm);
		ready++;
		pthread_cond_signal(&cv);
		pthread_mutex_unlock(&pm);
	}
	pthread_join(c, NULL);
	say("condvar with a PI mutex: ready %d, woke at least once: %s\n", ready, yesno(consumed > 0));
	struct timespec ts = abs_in(CLOCK_REALTIME, 50);
	pthread_mutex_lock(&pm);
	e = pthread_cond_timedwait(&cv, &pm, &ts);
	pthread_mutex_unlock(&pm);
	say("cond_timedwait with a PI mutex: %s\n", e == ETIMEDOUT ? "ETIMEDOUT" : errname(e));

	/* Robust and PI: the owner thread exits holding it while we wait. */
	pthread_mutexattr_setrobust(&at, PTHREAD_MUTEX_ROBUST);
	pthread_mutex_init(&rm, &at);
	pthread_t o;
	pthread_create(&o, NULL, robust_owner, NULL);
	usleep(50 * 1000);
	e = pthread_mutex_lock(&rm);
	say("robust PI lock after the owner died: %s\n", e == EOWNERDEAD ? "EOWNERDEAD" : errname(e));
	say("consistent: %s\n", errname(pthread_mutex_consistent(&rm)));
	say("unlock: %s\n", errname(pthread_mutex_unlock(&rm)));
	say("lock again: %s\n", errname(pthread_mutex_lock(&rm)));
	pthread_join(o, NULL);
}

/* The child takes the shared word, the parent waits in LOCK_PI, the child execs: the exec hands the lock
 * to the parent with OWNER_DIED as a thread exit would (Linux's futex_exec_release). */
static const char *self;
static void mode_exec(void)
{
	uint32_t *w = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	volatile uint32_t *flag = w + 1;
	pid_t c = fork();
	if (c == 0) {
		fx(w, FUTEX_LOCK_PI, 0, NULL);
		*flag = 1;
		while (*flag != 2)
			usleep(1000);
		settle_proc(getppid());	/* the parent sleeps in LOCK_PI */
		execl(self, self, "none", (char *)NULL);
		_exit(3);
	}
	while (*flag != 1)
		usleep(1000);
	*flag = 2;
	long r = fx(w, FUTEX_LOCK_PI, 0, NULL);
	say("the owner exec'd: LOCK_PI %ld %s, word %s\n", r, en(r), w2s(*w));
	int st;
	waitpid(c, &st, 0);
	say("the child exited %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
}

int main(int argc, char **argv)
{
	self = argv[0];
	static const struct mode modes[] = {
		{ "exec", mode_exec },
		{ "basic", mode_basic },
		{ "time", mode_time },
		{ "forged", mode_forged },
		{ "death", mode_death },
		{ "requeue", mode_requeue },
		{ "glibc", mode_glibc },
	};
	return run_mode(argc, argv, modes, sizeof(modes) / sizeof(modes[0]));
}

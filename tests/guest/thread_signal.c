/* thread_signal: signals and threads. usage: thread_signal MODE
 *   tgkill       pthread_kill, tgkill, tkill and raise run the handler on the target thread (it records
 *                gettid()); tgkill errors: wrong tgid ESRCH, bad tid/signal EINVAL, exited thread ESRCH
 *   process      kill(getpid()) goes to the one thread not blocking the signal; a process-directed signal
 *                blocked everywhere stays pending until some thread unblocks it, and runs there; a
 *                thread-directed one stays pending on its thread only, never moves to another
 *   mask         per-thread masks: inherited at pthread_create, changed by pthread_sigmask/sigprocmask in
 *                one thread only; sigaction in a thread is shared by all
 *   interrupt    a signal to a thread blocked in read/FUTEX_WAIT/nanosleep: EINTR without SA_RESTART,
 *                restarted with it; other threads go on undisturbed
 *   altstack     sigaltstack is per thread, and new threads start without one
 *   fault        SIGSEGV in a thread runs that thread's handler, which recovers with siglongjmp
 *   fault-fatal  SIGSEGV in a thread with no handler kills the whole process (status 139)
 *   kill-fatal   tgkill(SIGTERM) to a thread, default action: the whole process dies (status 143)
 * No sigwait: every signal is taken by a handler that records where it ran. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "thread_util.h"

/* the handler's record: which thread ran it, for which signal, in order; nhits counts the records
 * written (a slot is taken first, nhits raised after it is filled, so a waiter never reads a blank one) */
enum { MAXHITS = 32 };
static int hit_tid[MAXHITS], hit_sig[MAXHITS], nslots, nhits;
static __thread int my_hits;

static void on_sig(int s)
{
	int e = errno;
	int i = __atomic_fetch_add(&nslots, 1, __ATOMIC_ACQ_REL);
	if (i < MAXHITS) {
		hit_tid[i] = gettid();
		hit_sig[i] = s;
	}
	__atomic_fetch_add(&nhits, 1, __ATOMIC_ACQ_REL);
	my_hits++;
	errno = e;
}

static void handle(int sig, int flags)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_sig;
	sa.sa_flags = flags;
	sigaction(sig, &sa, NULL);
}

static const char *ename(int e)
{
	switch (e) {
	case 0: return "0";
	case ESRCH: return "ESRCH";
	case EINVAL: return "EINVAL";
	case EINTR: return "EINTR";
	case EAGAIN: return "EAGAIN";
	case EPERM: return "EPERM";
	default: return "E?";
	}
}

static long sys_tgkill(pid_t tgid, pid_t tid, int sig) { return syscall(SYS_tgkill, tgid, tid, sig); }

/* Worker threads that obey one-byte commands on their own pipe:
 *   'u'/'U' unblock SIGUSR1/SIGUSR2, 'b' block both, 'p' record sigpending, 'm' record the mask;
 * EOF ends the thread, which returns its handler count. SA_RESTART handlers keep the read going. */
enum { NW = 4 };
struct worker {
	pthread_t t;
	int cmd[2];
	pid_t tid;
	int ack;
	int pending, mask; /* bit 0: SIGUSR1, bit 1: SIGUSR2 */
	int last_read;	   /* 0: ended with EOF */
};
static struct worker w[NW];
static int ready;

static int sigbits(const sigset_t *s) { return sigismember(s, SIGUSR1) | sigismember(s, SIGUSR2) << 1; }

static void *worker_fn(void *p)
{
	struct worker *me = p;
	me->tid = gettid();
	__atomic_add_fetch(&ready, 1, __ATOMIC_ACQ_REL);
	char c;
	long n;
	while ((n = read(me->cmd[0], &c, 1)) == 1) {
		sigset_t s;
		sigemptyset(&s);
		if (c == 'u' || c == 'U') {
			sigaddset(&s, c == 'u' ? SIGUSR1 : SIGUSR2);
			pthread_sigmask(SIG_UNBLOCK, &s, NULL);
		} else if (c == 'b') {
			sigaddset(&s, SIGUSR1);
			sigaddset(&s, SIGUSR2);
			pthread_sigmask(SIG_BLOCK, &s, NULL);
		} else if (c == 'p') {
			sigpending(&s);
			me->pending = sigbits(&s);
		} else if (c == 'm') {
			pthread_sigmask(SIG_BLOCK, NULL, &s);
			me->mask = sigbits(&s);
		}
		__atomic_add_fetch(&me->ack, 1, __ATOMIC_ACQ_REL);
	}
	me->last_read = (int)n;
	return (void *)(long)my_hits;
}

static void start_workers(int n)
{
	for (int i = 0; i < n; i++) {
		if (pipe(w[i].cmd))
			_exit(90);
		pthread_create(&w[i].t, NULL, worker_fn, &w[i]);
	}
	wait_for(&ready, n);
}

/* send a command and wait until the worker has done it */
static void command(int i, char c)
{
	int before = __atomic_load_n(&w[i].ack, __ATOMIC_ACQUIRE);
	if (write(w[i].cmd[1], &c, 1) != 1)
		_exit(91);
	wait_for(&w[i].ack, before + 1);
}

/* end the workers; "counts" gets each one's number of handler runs */
static int stop_workers(int n, char *counts, size_t len)
{
	int eof = 1;
	counts[0] = 0;
	for (int i = 0; i < n; i++)
		close(w[i].cmd[1]);
	for (int i = 0; i < n; i++) {
		void *r;
		pthread_join(w[i].t, &r);
		close(w[i].cmd[0]);
		eof &= w[i].last_read == 0;
		snprintf(counts + strlen(counts), len - strlen(counts), " %ld", (long)r);
	}
	return eof;
}

/* index of the worker with this tid, -1 for main, -2 for none */
static int who(pid_t tid)
{
	for (int i = 0; i < NW; i++)
		if (w[i].tid == tid)
			return i;
	return tid == getpid() ? -1 : -2;
}

static int mode_tgkill(void)
{
	handle(SIGUSR1, SA_RESTART);
	start_workers(NW);
	pthread_kill(w[2].t, SIGUSR1);
	wait_for(&nhits, 1);
	sys_tgkill(getpid(), w[3].tid, SIGUSR1);
	wait_for(&nhits, 2);
	syscall(SYS_tkill, w[1].tid, SIGUSR1);
	wait_for(&nhits, 3);
	raise(SIGUSR1); /* the calling thread, before raise returns */
	int n = __atomic_load_n(&nhits, __ATOMIC_ACQUIRE);
	say("pthread_kill(worker 2) ran on worker %d, tgkill(worker 3) on worker %d, tkill(worker 1) on worker %d\n",
	    who(hit_tid[0]), who(hit_tid[1]), who(hit_tid[2]));
	say("raise() in main ran on main before it returned: %s\n", yesno(n == 4 && who(hit_tid[3]) == -1));

	errno = 0;
	long r = sys_tgkill(getpid() + 1000, w[0].tid, SIGUSR1);
	say("tgkill(wrong tgid, worker's tid) = %ld %s\n", r, ename(errno));
	errno = 0;
	r = sys_tgkill(getpid(), w[0].tid, 0);
	say("tgkill(pid, worker's tid, 0) = %ld %s\n", r, ename(errno));
	errno = 0;
	r = sys_tgkill(getpid(), -1, SIGUSR1);
	say("tgkill(pid, -1) = %ld %s\n", r, ename(errno));
	errno = 0;
	r = sys_tgkill(getpid(), w[0].tid, 99);
	say("tgkill(signal 99) = %ld %s\n", r, ename(errno));
	say("pthread_kill(worker, 0) = %s\n", ename(pthread_kill(w[0].t, 0)));

	char counts[64];
	int eof = stop_workers(NW, counts, sizeof counts);
	say("per-worker handler counts:%s; every read() restarted and ended at EOF: %s\n", counts, yesno(eof));
	/* the kernel clears the tid (and so ends pthread_join) a moment before the task is gone */
	int gone = 0;
	for (int k = 0; k < 2000 && !gone; k++) {
		gone = sys_tgkill(getpid(), w[0].tid, 0) < 0 && errno == ESRCH;
		if (!gone)
			sleep_ms(1);
	}
	say("tgkill(pid, joined thread's tid, 0) fails with ESRCH: %s\n", yesno(gone));
	say("handler ran %d times in all\n", __atomic_load_n(&nhits, __ATOMIC_ACQUIRE));
	return 0;
}

static int mode_process(void)
{
	handle(SIGUSR1, SA_RESTART);
	handle(SIGUSR2, SA_RESTART);
	sigset_t both, old;
	sigemptyset(&both);
	sigaddset(&both, SIGUSR1);
	sigaddset(&both, SIGUSR2);
	pthread_sigmask(SIG_BLOCK, &both, &old); /* inherited by the workers */
	start_workers(3);
	command(1, 'u');
	for (int k = 0; k < 5; k++) {
		kill(getpid(), SIGUSR1);
		wait_for(&nhits, k + 1);
	}
	int all1 = 1;
	for (int k = 0; k < 5; k++)
		all1 &= who(hit_tid[k]) == 1 && hit_sig[k] == SIGUSR1;
	say("5 x kill(getpid(), SIGUSR1), only worker 1 not blocking it: all ran on worker 1: %s\n", yesno(all1));

	/* blocked everywhere: pending for the process; then worker 2 unblocks it */
	kill(getpid(), SIGUSR2);
	sleep_ms(30);
	sigset_t pend;
	sigpending(&pend);
	command(0, 'p');
	say("kill(getpid(), SIGUSR2) blocked in every thread: handled %d, pending in main: %s, in worker 0: %s\n",
	    __atomic_load_n(&nhits, __ATOMIC_ACQUIRE) - 5, yesno(sigismember(&pend, SIGUSR2)),
	    yesno(w[0].pending & 2));
	command(2, 'U');
	wait_for(&nhits, 6);
	sigpending(&pend);
	say("worker 2 unblocked SIGUSR2: it ran there: %s, no longer pending: %s\n",
	    yesno(who(hit_tid[5]) == 2 && hit_sig[5] == SIGUSR2), yesno(!sigismember(&pend, SIGUSR2)));

	/* thread-directed: stays with worker 0 although worker 1 would take SIGUSR1 */
	sys_tgkill(getpid(), w[0].tid, SIGUSR1);
	sleep_ms(50);
	int handled = __atomic_load_n(&nhits, __ATOMIC_ACQUIRE) - 6;
	sigpending(&pend);
	command(0, 'p');
	command(1, 'p');
	say("tgkill(worker 0, SIGUSR1) while worker 0 blocks it: handled %d, pending in worker 0: %s, in worker 1: "
	    "%s, in main: %s\n",
	    handled, yesno(w[0].pending & 1), yesno(w[1].pending & 1), yesno(sigismember(&pend, SIGUSR1)));
	command(0, 'u');
	wait_for(&nhits, 7);
	say("worker 0 unblocked SIGUSR1: it ran there: %s\n", yesno(who(hit_tid[6]) == 0));

	char counts[64];
	int eof = stop_workers(3, counts, sizeof counts);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	say("per-worker handler counts:%s; reads ended at EOF: %s; main ran none: %s\n", counts, yesno(eof),
	    yesno(my_hits == 0));
	return 0;
}

static void *sigaction_fn(void *p)
{
	(void)p;
	handle(SIGUSR2, 0); /* in a thread: for the whole process */
	return NULL;
}

static int mode_mask(void)
{
	handle(SIGUSR1, SA_RESTART);
	sigset_t s, cur;
	sigemptyset(&s);
	sigaddset(&s, SIGUSR2);
	pthread_sigmask(SIG_BLOCK, &s, NULL);
	start_workers(1); /* worker 0 born with SIGUSR2 blocked */
	pthread_sigmask(SIG_UNBLOCK, &s, NULL);
	ready = 0;
	if (pipe(w[1].cmd))
		return 90;
	pthread_create(&w[1].t, NULL, worker_fn, &w[1]); /* worker 1 born with nothing blocked */
	wait_for(&ready, 1);
	command(0, 'm');
	command(1, 'm');
	say("inherited at pthread_create: worker 0 blocks SIGUSR2: %s, worker 1 (created after main unblocked it): "
	    "%s\n",
	    yesno(w[0].mask == 2), yesno(w[1].mask == 0));
	command(1, 'b');
	command(1, 'm');
	command(0, 'm');
	pthread_sigmask(SIG_BLOCK, NULL, &cur);
	say("worker 1 blocked both: its mask %d, worker 0's still %d, main's %d\n", w[1].mask, w[0].mask,
	    sigbits(&cur));
	sigprocmask(SIG_BLOCK, &s, NULL); /* sigprocmask in a threaded process: this thread only */
	command(0, 'U');
	command(0, 'm');
	command(1, 'm');
	pthread_sigmask(SIG_BLOCK, NULL, &cur);
	say("main sigprocmask(SIG_BLOCK, SIGUSR2), worker 0 unblocked it: main %d, worker 0 %d, worker 1 %d\n",
	    sigbits(&cur), w[0].mask, w[1].mask);
	sigprocmask(SIG_UNBLOCK, &s, NULL);

	pthread_t t;
	pthread_create(&t, NULL, sigaction_fn, NULL);
	pthread_join(t, NULL);
	raise(SIGUSR2);
	say("handler installed by a thread runs for main's raise(SIGUSR2): %s\n",
	    yesno(nhits == 1 && hit_sig[0] == SIGUSR2 && who(hit_tid[0]) == -1));
	char counts[64];
	stop_workers(2, counts, sizeof counts);
	return 0;
}

/* interrupt: blocked calls in threads. A signal that comes just before a thread blocks is taken without
 * interrupting anything, so the calls that must end with EINTR get the signal again every 20 ms until they
 * return: the outcome does not depend on when the thread got into its call. */
static int fwait1, fwait2, fscratch;
struct blocked {
	pthread_t t;
	int kind; /* 0 read, 1 read (SA_RESTART signal), 2 futex, 3 futex (SA_RESTART), 4 nanosleep */
	int fd;
	long ret;
	int err;
	int hits, done;
	pid_t tid;
	struct timespec rem;
};

static void *blocked_fn(void *p)
{
	struct blocked *b = p;
	char buf[16];
	b->tid = gettid();
	__atomic_add_fetch(&ready, 1, __ATOMIC_ACQ_REL);
	errno = 0;
	if (b->kind <= 1) {
		b->ret = read(b->fd, buf, sizeof buf);
	} else if (b->kind <= 3) {
		b->ret = futex_wait_op(b->kind == 2 ? &fwait1 : &fwait2, FUTEX_WAIT, 0, NULL, 0);
	} else {
		struct timespec ts = { 10, 0 };
		b->ret = nanosleep(&ts, &b->rem);
	}
	b->err = errno;
	b->hits = my_hits;
	__atomic_store_n(&b->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* signal b until its call returns (~5 s at most) */
static void interrupt_until_done(struct blocked *b, int sig)
{
	for (int k = 0; k < 250 && !__atomic_load_n(&b->done, __ATOMIC_ACQUIRE); k++) {
		pthread_kill(b->t, sig);
		sleep_ms(20);
	}
}

static int mode_interrupt(void)
{
	handle(SIGUSR1, 0);
	handle(SIGUSR2, SA_RESTART);
	static const int sig_for[5] = { SIGUSR1, SIGUSR2, SIGUSR1, SIGUSR2, SIGUSR1 };
	struct blocked b[5];
	int p[2][2];
	if (pipe(p[0]) || pipe(p[1]))
		return 90;
	for (int i = 0; i < 5; i++) {
		b[i] = (struct blocked){ .kind = i, .fd = i <= 1 ? p[i][0] : -1 };
		pthread_create(&b[i].t, NULL, blocked_fn, &b[i]);
	}
	wait_for(&ready, 5);
	int q = wait_queued(&fwait1, 0, 1, 0, &fscratch) & wait_queued(&fwait2, 0, 1, 0, &fscratch);
	sleep_ms(50);
	interrupt_until_done(&b[0], SIGUSR1);
	interrupt_until_done(&b[2], SIGUSR1);
	interrupt_until_done(&b[4], SIGUSR1);
	/* the SA_RESTART ones: one signal each, then the call is ended the ordinary way */
	int n = __atomic_load_n(&nhits, __ATOMIC_ACQUIRE);
	pthread_kill(b[1].t, SIGUSR2);
	pthread_kill(b[3].t, SIGUSR2);
	wait_for(&nhits, n + 2);
	sleep_ms(50);
	int still = !__atomic_load_n(&b[1].done, __ATOMIC_ACQUIRE) && !__atomic_load_n(&b[3].done, __ATOMIC_ACQUIRE);
	if (write(p[1][1], "data", 4) != 4) /* the restarted read gets this */
		return 91;
	int q2 = wait_queued(&fwait2, 0, 1, 0, &fscratch); /* the restarted FUTEX_WAIT is back in the queue */
	__atomic_store_n(&fwait2, 1, __ATOMIC_RELEASE);
	long wk = futex_wake(&fwait2, FUTEX_WAKE, INT_MAX);
	for (int i = 0; i < 5; i++)
		pthread_join(b[i].t, NULL);
	int on_target = 1;
	for (int i = 0; i < 5; i++) {
		on_target &= b[i].hits >= 1;
		for (int k = 0; k < MAXHITS && k < nhits; k++)
			if (hit_tid[k] == b[i].tid)
				on_target &= hit_sig[k] == sig_for[i];
	}
	for (int k = 0; k < MAXHITS && k < nhits; k++) {
		int mine = 0;
		for (int i = 0; i < 5; i++)
			mine |= hit_tid[k] == b[i].tid;
		on_target &= mine;
	}
	say("futex waiters queued: %s; handlers ran on their target threads only: %s\n", yesno(q), yesno(on_target));
	say("read, no SA_RESTART: %ld %s\n", b[0].ret, b[0].ret < 0 ? ename(b[0].err) : "");
	say("FUTEX_WAIT, no SA_RESTART: %ld %s\n", b[2].ret, b[2].ret < 0 ? ename(b[2].err) : "");
	say("nanosleep(10 s): %ld %s, time left > 4 s: %s\n", b[4].ret, b[4].ret < 0 ? ename(b[4].err) : "",
	    yesno(b[4].rem.tv_sec >= 4));
	say("SA_RESTART: read and FUTEX_WAIT still blocked after their handler ran: %s\n", yesno(still));
	say("read, SA_RESTART: %ld%s (got the later data)\n", b[1].ret, b[1].ret < 0 ? ename(b[1].err) : "");
	say("FUTEX_WAIT, SA_RESTART: back in the queue: %s, woken %ld, returned %ld\n", yesno(q2), wk, b[3].ret);
	return 0;
}

/* altstack */
static char *alt_lo;
static int on_alt_seen = -1;

static void on_alt(int s)
{
	(void)s;
	char here;
	on_alt_seen = &here >= alt_lo && &here < alt_lo + 65536;
}

static int alt_new_disabled = -1;

static void *alt_new_fn(void *p)
{
	(void)p;
	stack_t cur;
	sigaltstack(NULL, &cur);
	alt_new_disabled = (cur.ss_flags & SS_DISABLE) != 0;
	raise(SIGUSR1);
	return NULL;
}

static void *alt_fn(void *p)
{
	(void)p;
	stack_t ss = { .ss_sp = alt_lo, .ss_size = 65536, .ss_flags = 0 };
	sigaltstack(&ss, NULL);
	raise(SIGUSR1);
	int r1 = on_alt_seen;
	pthread_t t;
	pthread_create(&t, NULL, alt_new_fn, NULL);
	pthread_join(t, NULL);
	return (void *)(long)(r1 * 10 + on_alt_seen);
}

static int mode_altstack(void)
{
	alt_lo = mmap(NULL, 65536, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_alt;
	sa.sa_flags = SA_ONSTACK;
	sigaction(SIGUSR1, &sa, NULL);
	pthread_t t;
	void *r;
	pthread_create(&t, NULL, alt_fn, NULL);
	pthread_join(t, &r);
	long v = (long)r;
	say("thread with sigaltstack: SA_ONSTACK handler ran on it: %s\n", yesno(v / 10 == 1));
	say("thread it created: starts with SS_DISABLE: %s, handler on its normal stack: %s\n",
	    yesno(alt_new_disabled == 1), yesno(v % 10 == 0));
	raise(SIGUSR1);
	stack_t cur;
	sigaltstack(NULL, &cur);
	say("main: no alternate stack (SS_DISABLE): %s, handler on its normal stack: %s\n",
	    yesno(cur.ss_flags & SS_DISABLE), yesno(on_alt_seen == 0));
	return 0;
}

/* fault */
static __thread sigjmp_buf fault_jmp;
static __thread volatile void *fault_addr;
static int fault_tid;

static void on_segv(int s, siginfo_t *si, void *uc)
{
	(void)s;
	(void)uc;
	fault_tid = gettid();
	fault_addr = si->si_addr;
	siglongjmp(fault_jmp, 1);
}

static void *fault_fn(void *p)
{
	(void)p;
	volatile int *bad = (volatile int *)0x1000;
	if (sigsetjmp(fault_jmp, 1) == 0) {
		*bad = 1;
		return (void *)0L;
	}
	return (void *)(long)(fault_addr == (void *)0x1000 ? 1 : 2);
}

static int mode_fault(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_segv;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGSEGV, &sa, NULL);
	pthread_t t;
	void *r;
	pthread_create(&t, NULL, fault_fn, NULL);
	pthread_join(t, &r);
	say("SIGSEGV in a thread: handler ran on it: %s, si_addr right: %s, recovered with siglongjmp: %s\n",
	    yesno(fault_tid != getpid() && fault_tid > 0), yesno(r == (void *)1L), yesno(r != (void *)0L));
	return 0;
}

static void *fatal_fault_fn(void *p)
{
	(void)p;
	*(volatile int *)0x1000 = 1;
	return NULL;
}

static void *forever_fn(void *p)
{
	(void)p;
	for (;;)
		pause();
	return NULL;
}

static int mode_fault_fatal(void)
{
	pthread_t t, f;
	pthread_create(&t, NULL, forever_fn, NULL);
	say("a thread is about to fault with no handler\n");
	pthread_create(&f, NULL, fatal_fault_fn, NULL);
	pthread_join(f, NULL);
	say("not reached\n");
	return 0;
}

static int mode_kill_fatal(void)
{
	pthread_t t;
	pthread_create(&t, NULL, forever_fn, NULL);
	say("SIGTERM (default action) to a thread\n");
	pthread_kill(t, SIGTERM);
	pthread_join(t, NULL);
	say("not reached\n");
	return 0;
}

int main(int argc, char **argv)
{
	alarm(GUEST_ALARM);
	const char *mode = argc > 1 ? argv[1] : "tgkill";
	static const struct {
		const char *name;
		int (*fn)(void);
	} modes[] = {
		{ "tgkill", mode_tgkill },	   { "process", mode_process }, { "mask", mode_mask },
		{ "interrupt", mode_interrupt },   { "altstack", mode_altstack }, { "fault", mode_fault },
		{ "fault-fatal", mode_fault_fatal }, { "kill-fatal", mode_kill_fatal },
	};
	for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++)
		if (!strcmp(mode, modes[i].name))
			return modes[i].fn();
	say("unknown mode\n");
	return 2;
}

/* thread_proc: threads and the process around them. usage: thread_proc MODE
 *   exit-thread     exit(7) in a thread while others block (cond wait, sleep, read, join): status 7,
 *                   atexit handlers run
 *   exit-group      exit_group(9) from a thread: status 9, no atexit
 *   main-exit       main calls pthread_exit; the process lives on; a thread's exit(3) gives status 3
 *   main-exit-last  main calls pthread_exit; when the last thread returns the status is 0
 *   last-exit       main leaves with raw SYS_exit(5), the other thread (woken by main's clear_child_tid)
 *                   with SYS_exit(4): the status is the last thread's, 4 (Linux >= 5.17 records it in
 *                   synchronize_group_exit())
 *   fork            fork in a threaded process: the child has only the calling thread, creates threads of
 *                   its own; the parent's threads go on, wait4 sees the child's status
 *   fork-thread     fork from a non-main thread: the child's tid is its pid, getppid() is the process; the
 *                   main thread reaps it after the forking thread has exited
 *   exec-thread     execve from a non-main thread: the other threads go, the new image keeps the pid
 *   pipe            a thread blocked in read() gets another thread's write; a writer blocked on a full pipe;
 *                   EOF when another thread closes the write end; ping-pong between threads
 *   detached        100 detached threads (attr and pthread_detach) finish on their own; main returns while a
 *                   detached thread is still blocked: status 0 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "thread_util.h"

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t never = PTHREAD_COND_INITIALIZER;
static int blocked_pipe[2], started;

static void *cond_forever(void *p)
{
	(void)p;
	pthread_mutex_lock(&m);
	__atomic_add_fetch(&started, 1, __ATOMIC_ACQ_REL);
	for (;;)
		pthread_cond_wait(&never, &m);
	return NULL;
}

static void *sleep_forever(void *p)
{
	(void)p;
	__atomic_add_fetch(&started, 1, __ATOMIC_ACQ_REL);
	for (;;)
		sleep(100);
	return NULL;
}

static void *read_forever(void *p)
{
	(void)p;
	char c;
	__atomic_add_fetch(&started, 1, __ATOMIC_ACQ_REL);
	for (;;)
		if (read(blocked_pipe[0], &c, 1) <= 0)
			sleep(100);
	return NULL;
}

/* three threads blocked in a futex, nanosleep and read */
static void start_blocked(pthread_t t[3])
{
	if (pipe(blocked_pipe))
		_exit(90);
	pthread_create(&t[0], NULL, cond_forever, NULL);
	pthread_create(&t[1], NULL, sleep_forever, NULL);
	pthread_create(&t[2], NULL, read_forever, NULL);
	wait_for(&started, 3);
	sleep_ms(30); /* they are in their blocking calls by now; the outcome does not depend on it */
}

static void at_exit_handler(void) { say("atexit handler ran\n"); }

static void *exit7_fn(void *p)
{
	(void)p;
	exit(7);
}

static void *exit_group9_fn(void *p)
{
	(void)p;
	syscall(SYS_exit_group, 9);
	return NULL;
}

static int mode_exit(int group)
{
	pthread_t t[3], e;
	atexit(at_exit_handler);
	start_blocked(t);
	say("3 threads blocked; a fourth calls %s\n", group ? "exit_group(9)" : "exit(7)");
	pthread_create(&e, NULL, group ? exit_group9_fn : exit7_fn, NULL);
	pthread_join(t[0], NULL); /* main blocks too */
	say("not reached\n");
	return 1;
}

static void *nap_fn(void *p)
{
	sleep_ms((long)p);
	return p;
}

static pid_t main_pid;

static void *outlive_check_fn(void *p)
{
	int last = (int)(long)p;
	sleep_ms(100);
	pthread_t t;
	int e = pthread_create(&t, NULL, nap_fn, (void *)1L);
	e |= pthread_join(t, NULL);
	say("thread after main's pthread_exit: same pid: %s, can create and join threads: %s\n",
	    yesno(getpid() == main_pid), yesno(e == 0));
	if (last)
		return NULL; /* main-exit-last: returning from the last thread ends the process with 0 */
	exit(3);
}

static int mode_main_exit(int last)
{
	pthread_t t;
	main_pid = getpid();
	pthread_create(&t, NULL, outlive_check_fn, (void *)(long)last);
	say("main calls pthread_exit\n");
	pthread_exit(NULL);
}

/* main's clear_child_tid: the kernel zeroes it and wakes us once main has exited */
static int main_alive = 1;

static void *last_exit_fn(void *p)
{
	(void)p;
	for (int k = 0; k < 100 && __atomic_load_n(&main_alive, __ATOMIC_ACQUIRE); k++) {
		struct timespec ts = { 0, 100 * 1000000L };
		futex_wait_op(&main_alive, FUTEX_WAIT, 1, &ts, 0);
	}
	say("last thread: main has exited: %s; SYS_exit(4)\n", yesno(!main_alive));
	syscall(SYS_exit, 4);
	return NULL;
}

static int mode_last_exit(void)
{
	pthread_t t;
	pthread_create(&t, NULL, last_exit_fn, NULL);
	/* libc no longer needs main's own clear-tid word: main leaves without libc */
	syscall(SYS_set_tid_address, &main_alive);
	say("main: SYS_exit(5)\n");
	syscall(SYS_exit, 5);
	return 1;
}

/* fork */
static int ticks, stop_ticking;

static void *ticker(void *p)
{
	(void)p;
	while (!__atomic_load_n(&stop_ticking, __ATOMIC_ACQUIRE)) {
		__atomic_add_fetch(&ticks, 1, __ATOMIC_ACQ_REL);
		sleep_ms(1);
	}
	return NULL;
}

static void *square_fn(void *p) { return (void *)((long)p * (long)p); }

static int mode_fork(void)
{
	pthread_t tk[2];
	for (int i = 0; i < 2; i++)
		pthread_create(&tk[i], NULL, ticker, NULL);
	wait_for(&ticks, 10);
	pid_t c = fork();
	if (c == 0) {
		int t1 = __atomic_load_n(&ticks, __ATOMIC_ACQUIRE);
		sleep_ms(50);
		int frozen = t1 == __atomic_load_n(&ticks, __ATOMIC_ACQUIRE);
		long sum = 0;
		pthread_t t[3];
		int e = 0;
		for (long i = 0; i < 3; i++)
			e |= pthread_create(&t[i], NULL, square_fn, (void *)(i + 2));
		for (int i = 0; i < 3; i++) {
			void *r = NULL;
			e |= pthread_join(t[i], &r);
			sum += (long)r;
		}
		say("child: the parent's other threads are not in it (ticks frozen): %s\n", yesno(frozen));
		say("child: gettid() == getpid(): %s; created and joined 3 threads: %s, sum %ld\n",
		    yesno(gettid() == getpid()), yesno(e == 0), sum);
		_exit(42);
	}
	int st = wait_child(c);
	int t1 = __atomic_load_n(&ticks, __ATOMIC_ACQUIRE);
	int going = wait_for(&ticks, t1 + 5);
	__atomic_store_n(&stop_ticking, 1, __ATOMIC_RELEASE);
	for (int i = 0; i < 2; i++)
		pthread_join(tk[i], NULL);
	say("parent: child's status %d; its own threads still run: %s\n", st, yesno(going));
	return 0;
}

static int go_pipe[2];

static void *forker_fn(void *p)
{
	pid_t parent = (pid_t)(long)p;
	pid_t c = fork();
	if (c == 0) {
		char b;
		int ok = gettid() == getpid() && getppid() == parent;
		if (read(go_pipe[0], &b, 1) != 1) /* until the forking thread has exited */
			_exit(1);
		ok &= getppid() == parent;
		_exit(ok ? 43 : 2);
	}
	return (void *)(long)c;
}

static int mode_fork_thread(void)
{
	if (pipe(go_pipe))
		return 90;
	pthread_t t;
	void *r;
	pthread_create(&t, NULL, forker_fn, (void *)(long)getpid());
	pthread_join(t, &r);
	pid_t c = (pid_t)(long)r;
	if (write(go_pipe[1], "g", 1) != 1)
		return 91;
	int st = wait_child(c);
	say("fork in a thread that then exited: the main thread reaps the child: status %d\n", st);
	say("(the child saw gettid() == getpid() and getppid() == the process, before and after)\n");
	return 0;
}

/* exec-thread */
static char **exec_argv;

static void *exec_fn(void *p)
{
	char pid[32];
	snprintf(pid, sizeof pid, "%d", (int)(long)p);
	char *args[] = { exec_argv[0], "exec-child", pid, NULL };
	sleep_ms(20);
	execv(exec_argv[0], args);
	say("execv failed: %d\n", errno);
	exit(1);
}

static int mode_exec_thread(char **argv)
{
	pthread_t t[3], e;
	exec_argv = argv;
	start_blocked(t);
	say("3 threads blocked; a fourth calls execve\n");
	pthread_create(&e, NULL, exec_fn, (void *)(long)getpid());
	pthread_join(t[0], NULL);
	say("not reached\n");
	return 1;
}

static int mode_exec_child(const char *pid)
{
	pthread_t t;
	void *r = NULL;
	pthread_create(&t, NULL, square_fn, (void *)9L);
	pthread_join(t, &r);
	say("new image: pid kept: %s, single thread (gettid() == getpid()): %s, threads work: %ld\n",
	    yesno(getpid() == atoi(pid)), yesno(gettid() == getpid()), (long)r);
	return 0;
}

/* pipe */
static int pp[2];

static void *reader_fn(void *p)
{
	(void)p;
	char buf[64];
	long n = read(pp[0], buf, sizeof buf - 1);
	if (n > 0 && n == 5 && !memcmp(buf, "hello", 5))
		return (void *)1L;
	return (void *)n;
}

static void *big_writer(void *p)
{
	(void)p;
	static char chunk[10000];
	for (int i = 0; i < (int)sizeof chunk; i++)
		chunk[i] = (char)(i % 251);
	long total = 0;
	for (int k = 0; k < 20; k++) {
		long off = 0;
		while (off < (long)sizeof chunk) {
			long n = write(pp[1], chunk + off, sizeof chunk - off);
			if (n <= 0)
				return (void *)-1L;
			off += n;
		}
		total += off;
	}
	close(pp[1]);
	return (void *)total;
}

static void *eof_reader(void *p)
{
	(void)p;
	char b;
	__atomic_add_fetch(&started, 1, __ATOMIC_ACQ_REL);
	return (void *)read(pp[0], &b, 1);
}

static int pa[2], pb[2];

static void *pong_fn(void *p)
{
	(void)p;
	int v;
	for (int i = 0; i < 500; i++) {
		if (read(pa[0], &v, sizeof v) != sizeof v)
			return (void *)0L;
		v++;
		if (write(pb[1], &v, sizeof v) != sizeof v)
			return (void *)0L;
	}
	return (void *)1L;
}

static int mode_pipe(void)
{
	pthread_t t;
	void *r;
	if (pipe(pp))
		return 90;
	pthread_create(&t, NULL, reader_fn, NULL);
	sleep_ms(50);
	if (write(pp[1], "hello", 5) != 5)
		return 91;
	pthread_join(t, &r);
	say("thread blocked in read() got main's write: %s\n", yesno(r == (void *)1L));

	pthread_create(&t, NULL, big_writer, NULL);
	sleep_ms(50); /* the writer fills the pipe and blocks */
	long got = 0, sum = 0, n;
	unsigned char buf[4096];
	while ((n = read(pp[0], buf, sizeof buf)) > 0) {
		for (long i = 0; i < n; i++)
			sum += buf[i];
		got += n;
	}
	pthread_join(t, &r);
	close(pp[0]);
	say("writer thread blocked on a full pipe: wrote %ld, main read %ld, checksum %ld\n", (long)r, got, sum);

	if (pipe(pp))
		return 90;
	started = 0;
	pthread_create(&t, NULL, eof_reader, NULL);
	wait_for(&started, 1);
	sleep_ms(50);
	close(pp[1]);
	pthread_join(t, &r);
	say("reader thread sees EOF when main closes the write end: read = %ld\n", (long)r);

	if (pipe(pa) || pipe(pb))
		return 90;
	pthread_create(&t, NULL, pong_fn, NULL);
	int v = 0, ok = 1;
	for (int i = 0; i < 500; i++) {
		int w = v + 1;
		if (write(pa[1], &w, sizeof w) != sizeof w || read(pb[0], &v, sizeof v) != sizeof v)
			ok = 0;
	}
	pthread_join(t, &r);
	say("pipe ping-pong between two threads, 500 rounds: final %d, ok: %s\n", v, yesno(ok && r == (void *)1L));
	return 0;
}

/* detached */
static int done_pipe[2];

static void *detached_fn(void *p)
{
	if ((long)p % 4 == 3)
		pthread_detach(pthread_self());
	sched_yield();
	char c = (char)(long)p;
	if (write(done_pipe[1], &c, 1) != 1)
		_exit(92);
	return NULL;
}

static int mode_detached(void)
{
	if (pipe(done_pipe) || pipe(blocked_pipe))
		return 90;
	pthread_attr_t a;
	pthread_attr_init(&a);
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	int fails = 0;
	for (long i = 0; i < 100; i++) {
		pthread_t t;
		/* even: detached by attribute; 1 mod 4: main detaches it; 3 mod 4: it detaches itself */
		if (pthread_create(&t, i % 2 ? NULL : &a, detached_fn, (void *)i))
			fails++;
		else if (i % 4 == 1 && pthread_detach(t))
			fails++;
	}
	int seen[100] = { 0 }, n = 0;
	unsigned char c;
	while (n < 100 && read(done_pipe[0], &c, 1) == 1) {
		if (c < 100)
			seen[c]++;
		n++;
	}
	int each = 1;
	for (int i = 0; i < 100; i++)
		each &= seen[i] == 1;
	say("100 detached threads: create failures %d, each reported once: %s\n", fails, yesno(each));
	pthread_t t;
	pthread_create(&t, &a, read_forever, NULL);
	pthread_attr_destroy(&a);
	say("main returns while a detached thread is blocked in read()\n");
	return 0;
}

int main(int argc, char **argv)
{
	alarm(GUEST_ALARM);
	const char *mode = argc > 1 ? argv[1] : "fork";
	if (!strcmp(mode, "exit-thread"))
		return mode_exit(0);
	if (!strcmp(mode, "exit-group"))
		return mode_exit(1);
	if (!strcmp(mode, "main-exit"))
		return mode_main_exit(0);
	if (!strcmp(mode, "main-exit-last"))
		return mode_main_exit(1);
	if (!strcmp(mode, "last-exit"))
		return mode_last_exit();
	if (!strcmp(mode, "fork"))
		return mode_fork();
	if (!strcmp(mode, "fork-thread"))
		return mode_fork_thread();
	if (!strcmp(mode, "exec-thread"))
		return mode_exec_thread(argv);
	if (!strcmp(mode, "exec-child") && argc > 2)
		return mode_exec_child(argv[2]);
	if (!strcmp(mode, "pipe"))
		return mode_pipe();
	if (!strcmp(mode, "detached"))
		return mode_detached();
	say("unknown mode\n");
	return 2;
}

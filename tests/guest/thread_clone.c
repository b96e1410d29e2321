/* thread_clone: raw clone(2) threads, without libc's pthread. usage: thread_clone MODE
 *   settid     CLONE_VM|FS|FILES|SIGHAND|THREAD|SYSVSEM|SETTLS|PARENT_SETTID|CHILD_CLEARTID: the tid is
 *              written to parent_tid before clone returns; the child has the parent's pid, its own tid,
 *              the TLS base given; at exit child_tid is cleared to 0 and FUTEX_WAKEd
 *   childtid   CLONE_CHILD_SETTID writes the tid at child_tid before the child runs
 *   set-tid-address  set_tid_address() returns the tid, and moves the clear-and-wake to the new address
 *   share      CLONE_FILES shares the fd table, CLONE_FS the cwd; a thread made without them gets copies
 *   vm-process clone(CLONE_VM|SIGCHLD): a process sharing memory, reaped with wait4
 *   errors     EINVAL for CLONE_THREAD without CLONE_SIGHAND, CLONE_SIGHAND without CLONE_VM
 * The child runs on its own stack with the TLS base we give it, so it must not call libc: it uses the
 * raw_* syscall helpers below and plain memory only. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "thread_util.h"

#define THREAD_FLAGS                                                                                         \
	(CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM | CLONE_SETTLS |     \
	 CLONE_PARENT_SETTID | CLONE_CHILD_CLEARTID)

static inline long raw6(long n, long a, long b, long c, long d, long e, long f)
{
	register long r10 __asm__("r10") = d;
	register long r8 __asm__("r8") = e;
	register long r9 __asm__("r9") = f;
	long ret;
	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
			 : "rcx", "r11", "memory");
	return ret;
}

#define raw0(n) raw6(n, 0, 0, 0, 0, 0, 0)
#define raw1(n, a) raw6(n, (long)(a), 0, 0, 0, 0, 0)
#define raw3(n, a, b, c) raw6(n, (long)(a), (long)(b), (long)(c), 0, 0, 0)

/* clone(flags, stack_top, ptid, ctid, tls); the child calls fn(arg) on the new stack and SYS_exits with its
 * result (only that thread). Returns what clone returned in the parent (tid, or -errno). */
static long raw_clone(unsigned long flags, void *stack_top, int *ptid, int *ctid, void *tls, long (*fn)(void *),
		      void *arg)
{
	unsigned long *sp = (unsigned long *)((uintptr_t)stack_top & ~15UL);
	*--sp = (unsigned long)arg;
	*--sp = (unsigned long)fn;
	register long r10 __asm__("r10") = (long)ctid;
	register long r8 __asm__("r8") = (long)tls;
	long ret;
	__asm__ volatile("syscall\n\t"
			 "test %%rax, %%rax\n\t"
			 "jnz 1f\n\t"
			 "xor %%ebp, %%ebp\n\t"
			 "pop %%rax\n\t" /* fn */
			 "pop %%rdi\n\t" /* arg; rsp is now 16-aligned for the call */
			 "call *%%rax\n\t"
			 "mov %%rax, %%rdi\n\t"
			 "mov $60, %%eax\n\t" /* SYS_exit: this thread only */
			 "syscall\n\t"
			 "hlt\n"
			 "1:"
			 : "=a"(ret)
			 : "0"((long)SYS_clone), "D"(flags), "S"(sp), "d"(ptid), "r"(r10), "r"(r8)
			 : "rcx", "r11", "memory");
	return ret;
}

static unsigned long fs_word(long off)
{
	unsigned long v;
	__asm__ volatile("mov %%fs:(%1), %0" : "=r"(v) : "r"(off));
	return v;
}

#define STACK_SIZE (64 * 1024)
static char stacks[2][STACK_SIZE] __attribute__((aligned(16)));
#define TLS_MAGIC 0x5eed7a11c0ffee00UL
static unsigned long tls_block[2][32] __attribute__((aligned(64)));

/* what a child reports, written with plain stores */
struct report {
	int go;		/* the parent lets the child go on */
	long pid, tid;	/* getpid/gettid in the child */
	unsigned long fs0, fs8;
	long ctid_seen; /* *child_tid as the child first saw it */
	long sta_ret;	/* set_tid_address result */
	long on_stack;	/* a local's address was inside the given stack */
	long dup_fd, chdir_ret;
	int *watch;	/* the child's child_tid word */
	int *new_tid_addr;
	int started;
};

static struct report rep;

/* the child waits (FUTEX_WAIT, no libc) until the parent sets rep.go */
static void child_wait_go(void)
{
	__atomic_store_n(&rep.started, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&rep.go, __ATOMIC_ACQUIRE))
		raw6(SYS_futex, (long)&rep.go, FUTEX_WAIT, 0, 0, 0, 0);
}

static void child_sleep_ms(long ms)
{
	struct timespec t = { 0, ms * 1000000L };
	raw3(SYS_nanosleep, &t, 0, 0);
}

static long settid_child(void *arg)
{
	char here;
	rep.pid = raw0(SYS_getpid);
	rep.tid = raw0(SYS_gettid);
	rep.fs0 = fs_word(0);
	rep.fs8 = fs_word(8);
	rep.on_stack = &here > (char *)arg && &here < (char *)arg + STACK_SIZE;
	rep.ctid_seen = *rep.watch;
	child_wait_go();
	child_sleep_ms(30); /* the parent is most likely asleep on child_tid by now: the exit must wake it */
	return 0;
}

static void parent_go(void)
{
	__atomic_store_n(&rep.go, 1, __ATOMIC_RELEASE);
	futex_wake(&rep.go, FUTEX_WAKE, INT_MAX);
}

/* wait, as pthread_join does, until the kernel clears *w; "woken" unless a 5 s timeout expired */
static int join_word(int *w, int *timed_out)
{
	*timed_out = 0;
	for (int v; (v = __atomic_load_n(w, __ATOMIC_ACQUIRE)) != 0;) {
		struct timespec ts = { 5, 0 };
		if (futex_wait_op(w, FUTEX_WAIT, v, &ts, 0) < 0 && errno == ETIMEDOUT) {
			*timed_out = 1;
			return 0;
		}
	}
	return 1;
}

static void init_tls(int k)
{
	tls_block[k][0] = (unsigned long)tls_block[k]; /* x86-64 TLS ABI: %fs:0 points to itself */
	tls_block[k][1] = TLS_MAGIC + k;
}

static int mode_settid(void)
{
	static int ptid, ctid = 0x7fffffff;
	memset(&rep, 0, sizeof rep);
	rep.watch = &ctid;
	init_tls(0);
	unsigned long my_fs0 = fs_word(0);
	long tid = raw_clone(THREAD_FLAGS, stacks[0] + STACK_SIZE, &ptid, &ctid, tls_block[0], settid_child,
			     stacks[0]);
	if (tid < 0) {
		say("clone failed: %ld\n", tid);
		return 1;
	}
	while (!__atomic_load_n(&rep.started, __ATOMIC_ACQUIRE))
		sleep_ms(1);
	say("clone returned a tid, not the pid: %s\n", yesno(tid > 0 && tid != getpid()));
	say("CLONE_PARENT_SETTID: parent_tid == tid when clone returned: %s\n", yesno(ptid == tid));
	say("child: getpid() is the parent's: %s, gettid() is clone's result: %s\n", yesno(rep.pid == getpid()),
	    yesno(rep.tid == tid));
	say("child runs on the given stack: %s\n", yesno(rep.on_stack));
	say("CLONE_SETTLS: child's %%fs:0 is the block: %s, %%fs:8 the magic: %s\n",
	    yesno(rep.fs0 == (unsigned long)tls_block[0]), yesno(rep.fs8 == TLS_MAGIC));
	say("parent's TLS unchanged: %s\n", yesno(fs_word(0) == my_fs0));
	say("child_tid untouched while the child runs (no CLONE_CHILD_SETTID): %s\n",
	    yesno(rep.ctid_seen == 0x7fffffff && ctid == 0x7fffffff));
	parent_go();
	int timed_out;
	int cleared = join_word(&ctid, &timed_out);
	say("CLONE_CHILD_CLEARTID: cleared to 0 at exit: %s, FUTEX_WAIT on it was woken: %s\n", yesno(cleared),
	    yesno(!timed_out));
	say("parent_tid left alone: %s; the process lives on after the thread's exit: yes\n", yesno(ptid == tid));
	return 0;
}

static long plain_child(void *arg)
{
	(void)arg;
	rep.tid = raw0(SYS_gettid);
	rep.ctid_seen = *rep.watch;
	child_wait_go();
	return 0;
}

static int mode_childtid(void)
{
	static int ctid = 0x7fffffff;
	memset(&rep, 0, sizeof rep);
	rep.watch = &ctid;
	init_tls(0);
	long tid = raw_clone((THREAD_FLAGS & ~CLONE_PARENT_SETTID) | CLONE_CHILD_SETTID, stacks[0] + STACK_SIZE, NULL,
			     &ctid, tls_block[0], plain_child, NULL);
	while (tid > 0 && !__atomic_load_n(&rep.started, __ATOMIC_ACQUIRE))
		sleep_ms(1);
	say("CLONE_CHILD_SETTID: child saw child_tid == its tid: %s, parent too: %s\n",
	    yesno(tid > 0 && rep.ctid_seen == tid), yesno(tid > 0 && ctid == tid));
	parent_go();
	int timed_out;
	int cleared = join_word(&ctid, &timed_out);
	say("cleared at exit: %s, woken: %s\n", yesno(cleared), yesno(!timed_out));
	return 0;
}

static long sta_child(void *arg)
{
	(void)arg;
	rep.tid = raw0(SYS_gettid);
	rep.sta_ret = raw1(SYS_set_tid_address, rep.new_tid_addr);
	child_wait_go();
	child_sleep_ms(30);
	return 0;
}

static int mode_set_tid_address(void)
{
	static int ctid = 0x7fffffff, newaddr = 0x7ffffffe;
	memset(&rep, 0, sizeof rep);
	rep.new_tid_addr = &newaddr;
	init_tls(1);
	long tid = raw_clone(THREAD_FLAGS, stacks[1] + STACK_SIZE, NULL, &ctid, tls_block[1], sta_child, NULL);
	while (tid > 0 && !__atomic_load_n(&rep.started, __ATOMIC_ACQUIRE))
		sleep_ms(1);
	say("set_tid_address in a thread returned its tid: %s\n", yesno(tid > 0 && rep.sta_ret == tid));
	parent_go();
	int timed_out;
	int cleared = join_word(&newaddr, &timed_out);
	say("at exit the new address was cleared: %s, woken: %s; the clone's child_tid untouched: %s\n",
	    yesno(cleared), yesno(!timed_out), yesno(ctid == 0x7fffffff));
	/* the main thread's own value, in a child process so libc's own registration is left alone */
	pid_t c = fork();
	if (c == 0) {
		static int x;
		_exit(raw1(SYS_set_tid_address, &x) == getpid() ? 0 : 1);
	}
	say("set_tid_address in a single-threaded process returns its pid: %s\n", yesno(wait_child(c) == 0));
	return 0;
}

static long share_child(void *arg)
{
	(void)arg;
	rep.dup_fd = raw1(SYS_dup, 1);
	rep.chdir_ret = raw1(SYS_chdir, "/");
	rep.tid = raw0(SYS_gettid);
	__atomic_store_n(&rep.started, 1, __ATOMIC_RELEASE);
	return 0;
}

static long vmproc_child(void *arg)
{
	rep.pid = raw0(SYS_getpid);
	*(int *)arg = 42; /* shared memory: the parent sees it */
	return 7;
}

/* a thread made with THREAD_FLAGS minus "drop": its dup(1) and chdir("/") are reported in rep */
static long share_thread(unsigned long drop)
{
	static int ctid;
	memset(&rep, 0, sizeof rep);
	rep.dup_fd = rep.chdir_ret = -1; /* if no thread ran */
	ctid = 1;
	init_tls(0);
	long tid = raw_clone(THREAD_FLAGS & ~drop, stacks[0] + STACK_SIZE, NULL, &ctid, tls_block[0], share_child,
			     NULL);
	int timed_out;
	if (tid > 0)
		join_word(&ctid, &timed_out);
	return tid;
}

static int mode_share(void)
{
	char before[4096], after[4096];
	if (!getcwd(before, sizeof before))
		return 1;
	/* a thread without CLONE_FILES|CLONE_FS gets copies: its dup and chdir stay its own */
	long tid = share_thread(CLONE_FILES | CLONE_FS);
	int fd_there = rep.dup_fd > 2 && fcntl(rep.dup_fd, F_GETFD) >= 0;
	say("thread without CLONE_FILES|CLONE_FS: created: %s, dup(1) = fd 3 in it: %s, open in the parent: %s\n",
	    yesno(tid > 0), yesno(rep.dup_fd == 3), yesno(fd_there));
	say("its chdir(\"/\") = %ld moved the parent's cwd: %s\n", rep.chdir_ret,
	    yesno(!getcwd(after, sizeof after) || strcmp(before, after)));
	/* then with them: one fd table, one cwd */
	tid = share_thread(0);
	fd_there = rep.dup_fd > 2 && fcntl(rep.dup_fd, F_GETFD) >= 0;
	say("thread with CLONE_FILES: its dup(1) is open in the parent: %s\n", yesno(tid > 0 && fd_there));
	say("thread with CLONE_FS: its chdir(\"/\") = %ld moved the parent's cwd: %s\n", rep.chdir_ret,
	    yesno(getcwd(after, sizeof after) && !strcmp(after, "/")));
	return 0;
}

static int mode_vm_process(void)
{
	memset(&rep, 0, sizeof rep);
	int shared_int = 0;
	long pid = raw_clone(CLONE_VM | SIGCHLD, stacks[0] + STACK_SIZE, NULL, NULL, NULL, vmproc_child, &shared_int);
	int st = pid > 0 ? wait_child(pid) : -1;
	say("clone(CLONE_VM|SIGCHLD) = a new pid: %s, its getpid() is that pid: %s\n",
	    yesno(pid > 0 && pid != getpid()), yesno(rep.pid == pid));
	say("wait4 status %d, its store seen by the parent: %d\n", st, shared_int);
	return 0;
}

static int mode_errors(void)
{
	long r = syscall(SYS_clone, CLONE_VM | CLONE_THREAD, NULL, NULL, NULL, NULL);
	say("clone(CLONE_VM|CLONE_THREAD) without CLONE_SIGHAND = %ld %s\n", r, errno == EINVAL ? "EINVAL" : "E?");
	r = syscall(SYS_clone, CLONE_SIGHAND | SIGCHLD, NULL, NULL, NULL, NULL);
	say("clone(CLONE_SIGHAND) without CLONE_VM = %ld %s\n", r, errno == EINVAL ? "EINVAL" : "E?");
	return 0;
}

int main(int argc, char **argv)
{
	alarm(GUEST_ALARM);
	const char *mode = argc > 1 ? argv[1] : "settid";
	if (!strcmp(mode, "settid"))
		return mode_settid();
	if (!strcmp(mode, "childtid"))
		return mode_childtid();
	if (!strcmp(mode, "set-tid-address"))
		return mode_set_tid_address();
	if (!strcmp(mode, "share"))
		return mode_share();
	if (!strcmp(mode, "vm-process"))
		return mode_vm_process();
	if (!strcmp(mode, "errors"))
		return mode_errors();
	say("unknown mode\n");
	return 2;
}

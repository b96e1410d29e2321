#!/usr/bin/env bats
# Threads (issue 6): clone with CLONE_VM|CLONE_THREAD|CLONE_SETTLS|CLONE_*_SETTID|CLONE_CHILD_CLEARTID, futex
# (wait/wake/requeue/bitset, private and shared), set_tid_address, gettid, tgkill, and threads meeting signals,
# exit, fork, exec and pipes. Static guests tests/guest/thread_*.c, musl and glibc builds, each compared with
# its native run (output and exit status). The guests print only scheduling-independent results, after
# joining, and arm a 20 s alarm (a hang ends with status 142 instead of stalling the suite).

load helpers

setup() {
	require_pvx
	cd "$BATS_TEST_TMPDIR"
}

# thr WANT_STATUS GUEST ARGS...: compare both builds of GUEST with their native runs
thr() { compare_flavours "$@"; }

# --- pthread basics (thread_basic) ---

@test "threads: 8 pthreads: values through join, getpid() shared, gettid() distinct, TLS from the initial image" {
	thr 0 thread_basic create
	has '8 threads created and joined, values through pthread_join: 1 2 5 10 17 26 37 50' \
		"getpid() in every thread is main's: yes" \
		'gettid() in every thread differs from getpid(): yes, all distinct: yes' \
		'main: gettid() == getpid(): yes' \
		"TLS: new threads start from the initial image: yes, each keeps its own value: yes, main's kept: yes"
}

@test "threads: __thread variables are per thread while all threads hold their values" {
	thr 0 thread_basic tls
	has '6 threads: __thread initialised/zeroed in every thread: yes' \
		'values kept while all threads held theirs: yes; addresses distinct: yes' \
		"main's TLS untouched: yes"
}

@test "threads: FP results equal across threads and syscalls; MXCSR and x87 control word per thread" {
	thr 0 thread_basic fp
	grep -q "^4 threads: FP results equal main's bit for bit: yes " "$sandbox_out"
	has "MXCSR and x87 control word are per thread: yes; main's unchanged: yes"
}

@test "threads: threads create threads, 6 deep; pthread_self/pthread_equal" {
	thr 0 thread_basic nested
	has 'chain of threads 6 deep, sum of depths through pthread_join: 21' \
		'pthread_self() distinct in each (main included), pthread_equal(created, self): yes'
}

@test "threads: one address space: a thread's mmap/munmap is seen by all; malloc in 4 threads at once" {
	thr 0 thread_basic mm
	has "a thread's mmap and writes are seen by main: yes" \
		"another thread's munmap = 0, then main's mprotect there = -1 ENOMEM" \
		'malloc/free in 4 threads at once, 2000 blocks each: yes'
}

@test "threads: a 1 MiB thread stack, and a caller-supplied stack" {
	thr 0 thread_basic attr
	has '1 MiB stack: create 0, 600 KiB used, pages right: 1200 of 1200' \
		'caller-supplied stack: create 0, thread ran on it: yes'
}

@test "threads: 200 short-lived threads created and joined one after another" {
	thr 0 thread_basic stress-seq
	has '200 threads created and joined one after another: failures 0, sum of results 19900'
}

@test "threads: 16 threads alive at once, 5 rounds" {
	thr 0 thread_basic stress-par
	has '5 rounds of 16 threads alive at once: create failures 0, joined 80, all saw 16 alive: yes'
}

# --- libc synchronisation (thread_sync) ---

@test "threads: 4 x 20000 increments under a contended pthread_mutex, and atomically" {
	thr 0 thread_sync mutex
	has '4 threads x 20000 increments under a mutex: 80000' '4 threads x 20000 atomic increments: 80000'
}

@test "threads: errorcheck and recursive mutexes, trylock from another thread" {
	thr 0 thread_sync mutex-types
	has 'errorcheck: relock by the owner = EDEADLK' \
		'errorcheck: trylock from another thread = EBUSY, unlock by a non-owner = EPERM' \
		'errorcheck: unlock by the owner = 0, then again = EPERM' \
		"recursive: lock lock trylock = 0 0 0, other thread's trylock = EBUSY, after 3 unlocks = 0"
}

@test "threads: pthread_cond producer-consumer and broadcast" {
	thr 0 thread_sync cond
	has '2 producers, 3 consumers, 4-slot queue: consumed 10000 items, sum 25005000' \
		'pthread_cond_broadcast woke all 6 waiters: 6'
}

@test "threads: pthread_barrier, 4 threads x 200 rounds" {
	thr 0 thread_sync barrier
	has '4 threads x 200 barrier rounds: all stores visible after each: yes, serial threads: 200'
}

@test "threads: sem_t ping-pong, counting semaphore, sem_trywait EAGAIN" {
	thr 0 thread_sync sem
	has 'sem ping-pong 2000 rounds, strictly alternating: yes, turns 4000' \
		'counting semaphore: consumer got 1000 of 1000, value after 0, sem_trywait = -1 EAGAIN'
}

@test "threads: pthread_rwlock readers never see a half-done write" {
	thr 0 thread_sync rwlock
	has 'rwlock: 2 writers x 5000, 4 readers x 5000: torn reads 0, totals 10000 10000'
}

@test "threads: pthread_once runs once; pthread_key destructors run per thread" {
	thr 0 thread_sync once-keys
	has 'pthread_once among 8 threads: init ran 1 time(s), done before any returned: yes' \
		"pthread_key destructors: 8 calls, sum of values 36; main's value unset: yes"
}

@test "threads: pthread_mutex_timedlock, pthread_cond_timedwait, sem_timedwait time out" {
	thr 0 thread_sync timed
	has 'pthread_mutex_timedlock on a mutex held by main: ETIMEDOUT after the deadline: yes' \
		'pthread_cond_timedwait = ETIMEDOUT, waited at least the timeout: yes' \
		'sem_timedwait = -1 ETIMEDOUT, waited at least the timeout: yes'
}

@test "threads: busy-waiting threads (no syscalls) see each other's stores: concurrency or preemption" {
	thr 0 thread_sync spin
	has "a thread spinning without syscalls saw main's store and ended: yes" \
		'two spinning threads handed a token back and forth: final 400'
}

@test "threads: compare-and-swap counters and release/acquire message passing" {
	thr 0 thread_sync atomics
	has '4 threads x 50000 compare-and-swap increments: 200000' \
		'release/acquire message passing, 100 rounds: reader saw every write: yes'
}

# --- futex(2) (thread_futex) ---

@test "threads: futex: FUTEX_WAIT on a changed word is EAGAIN; FUTEX_WAKE with no waiters is 0" {
	thr 0 thread_futex eagain
	has 'FUTEX_WAIT(word=5, val=4) = -1 EAGAIN' \
		'FUTEX_WAIT_PRIVATE(word=5, val=6) = -1 EAGAIN' \
		'FUTEX_WAIT_BITSET_PRIVATE(word=5, val=0) = -1 EAGAIN' \
		'FUTEX_WAKE with nobody waiting = 0' \
		'FUTEX_WAKE_PRIVATE with nobody waiting = 0'
}

@test "threads: futex: EFAULT (also a shared futex on an unreadable word), EINVAL and ENOSYS" {
	thr 0 thread_futex errors
	has 'FUTEX_WAIT(NULL) = -1 EFAULT' \
		'FUTEX_WAIT(unaligned) = -1 EINVAL' \
		'futex(op 99) = -1 ENOSYS' \
		'FUTEX_WAIT_BITSET(bitset 0) = -1 EINVAL' \
		'FUTEX_WAKE|FUTEX_CLOCK_REALTIME = -1 ENOSYS' \
		'FUTEX_WAIT(tv_nsec=1e9) = -1 EINVAL' \
		'FUTEX_WAIT(bad timeout pointer) = -1 EFAULT' \
		'FUTEX_CMP_REQUEUE(nr_requeue=-1) = -1 EINVAL' \
		'FUTEX_WAKE(unmapped) = -1 EFAULT' 'FUTEX_WAKE(PROT_NONE) = -1 EFAULT' 'FUTEX_WAKE_PRIVATE(unmapped) = 0' \
		'FUTEX_CMP_REQUEUE(uaddr2 unmapped) = -1 EFAULT' 'FUTEX_CMP_REQUEUE(uaddr2 PROT_NONE) = -1 EFAULT'
}

@test "threads: futex: relative and absolute (CLOCK_MONOTONIC, FUTEX_CLOCK_REALTIME) timeouts" {
	thr 0 thread_futex timeout
	has 'FUTEX_WAIT 50 ms = -1 ETIMEDOUT, waited at least the timeout: yes' \
		'FUTEX_WAIT timeout 0 = -1 ETIMEDOUT' \
		'FUTEX_WAIT_BITSET CLOCK_MONOTONIC deadline +50 ms = -1 ETIMEDOUT, waited at least the timeout: yes' \
		'FUTEX_WAIT_BITSET|FUTEX_CLOCK_REALTIME deadline +50 ms = -1 ETIMEDOUT, waited at least the timeout: yes' \
		'FUTEX_WAIT_BITSET|FUTEX_CLOCK_REALTIME deadline in the past = -1 ETIMEDOUT' \
		'waiter with a 10 s timeout queued: yes, FUTEX_WAKE = 1, its FUTEX_WAIT = 0'
}

@test "threads: futex: FUTEX_WAKE wakes and counts exactly n of 5 waiters" {
	thr 0 thread_futex wake
	has '5 waiters in FUTEX_WAIT: yes' \
		'FUTEX_WAKE(2) = 2, threads woken: 2 (yes), still queued: 3' \
		'FUTEX_WAKE(INT_MAX) = 3, every FUTEX_WAIT returned 0: yes' \
		'FUTEX_WAKE again = 0'
}

@test "threads: futex: FUTEX_CMP_REQUEUE and FUTEX_REQUEUE move waiters" {
	thr 0 thread_futex requeue
	has 'FUTEX_CMP_REQUEUE(wake 1, requeue 2, stale val3) = -1 EAGAIN' \
		'FUTEX_CMP_REQUEUE(wake 1, requeue 2) = 3, woken 1, queued on word 1: 2, on word 2: 2' \
		'FUTEX_WAKE(word 2) = 2' \
		'FUTEX_REQUEUE(wake 0, requeue all) = 2, woken 3, queued on word 1: 0, on word 2: 2' \
		'FUTEX_WAKE(word 2) 1 then all = 1 1, every FUTEX_WAIT returned 0: yes'
}

@test "threads: futex: FUTEX_WAIT_BITSET/FUTEX_WAKE_BITSET wake only matching masks" {
	thr 0 thread_futex bitset
	has 'FUTEX_WAKE_BITSET(mask 4) = 0' \
		'FUTEX_WAKE_BITSET(mask 2) = 2, woken: mask1 no mask2 yes mask3 yes' \
		'FUTEX_WAKE (any mask) = 1, every wait returned 0: yes'
}

@test "threads: futex: FUTEX_PRIVATE_FLAG variants of wake, requeue and bitset" {
	thr 0 thread_futex private
	has 'FUTEX_WAKE_PRIVATE(2) = 2, threads woken: 2 (yes), still queued: 3' \
		'FUTEX_CMP_REQUEUE_PRIVATE(wake 1, requeue 2) = 3, woken 1, queued on word 1: 2, on word 2: 2' \
		'FUTEX_REQUEUE_PRIVATE(wake 0, requeue all) = 2, woken 3, queued on word 1: 0, on word 2: 2' \
		'FUTEX_WAKE_BITSET_PRIVATE(mask 2) = 2, woken: mask1 no mask2 yes mask3 yes'
}

@test "threads: futex: shared futex across fork on MAP_SHARED memory; private ones stay per address space" {
	thr 0 thread_futex shared
	has 'child waiting in FUTEX_WAIT on MAP_SHARED memory: yes' \
		'FUTEX_WAKE_PRIVATE from the parent = 0 (private futexes are per address space)' \
		"FUTEX_WAKE from the parent = 1, child's FUTEX_WAIT returned 0 and it exited 0"
}

# --- raw clone (thread_clone) ---

@test "threads: clone: thread flags: PARENT_SETTID, SETTLS, CHILD_CLEARTID cleared and FUTEX_WAKEd at exit" {
	thr 0 thread_clone settid
	has 'clone returned a tid, not the pid: yes' \
		'CLONE_PARENT_SETTID: parent_tid == tid when clone returned: yes' \
		"child: getpid() is the parent's: yes, gettid() is clone's result: yes" \
		'child runs on the given stack: yes' \
		"CLONE_SETTLS: child's %fs:0 is the block: yes, %fs:8 the magic: yes" \
		"parent's TLS unchanged: yes" \
		'CLONE_CHILD_CLEARTID: cleared to 0 at exit: yes, FUTEX_WAIT on it was woken: yes'
}

@test "threads: clone: CLONE_CHILD_SETTID writes the tid before the child runs" {
	thr 0 thread_clone childtid
	has 'CLONE_CHILD_SETTID: child saw child_tid == its tid: yes, parent too: yes' \
		'cleared at exit: yes, woken: yes'
}

@test "threads: clone: set_tid_address returns the tid and moves the clear-and-wake address" {
	thr 0 thread_clone set-tid-address
	has 'set_tid_address in a thread returned its tid: yes' \
		"at exit the new address was cleared: yes, woken: yes; the clone's child_tid untouched: yes" \
		'set_tid_address in a single-threaded process returns its pid: yes'
}

@test "threads: clone: CLONE_FILES shares the fd table and CLONE_FS the cwd; without them a thread gets copies" {
	thr 0 thread_clone share
	has 'thread without CLONE_FILES|CLONE_FS: created: yes, dup(1) = fd 3 in it: yes, open in the parent: no' \
		"its chdir(\"/\") = 0 moved the parent's cwd: no" \
		'thread with CLONE_FILES: its dup(1) is open in the parent: yes' \
		"thread with CLONE_FS: its chdir(\"/\") = 0 moved the parent's cwd: yes"
}

@test "threads: clone: clone(CLONE_VM|SIGCHLD) is a process sharing memory, reaped by wait4" {
	thr 0 thread_clone vm-process
	has 'clone(CLONE_VM|SIGCHLD) = a new pid: yes, its getpid() is that pid: yes' \
		'wait4 status 7, its store seen by the parent: 42'
}

@test "threads: clone: EINVAL for CLONE_THREAD without CLONE_SIGHAND and CLONE_SIGHAND without CLONE_VM" {
	thr 0 thread_clone errors
	has 'clone(CLONE_VM|CLONE_THREAD) without CLONE_SIGHAND = -1 EINVAL' \
		'clone(CLONE_SIGHAND) without CLONE_VM = -1 EINVAL'
}

# --- signals and threads (thread_signal) ---

@test "threads: pthread_kill/tgkill/tkill run the handler on the target thread; tgkill errors" {
	thr 0 thread_signal tgkill
	has 'pthread_kill(worker 2) ran on worker 2, tgkill(worker 3) on worker 3, tkill(worker 1) on worker 1' \
		'raise() in main ran on main before it returned: yes' \
		"tgkill(wrong tgid, worker's tid) = -1 ESRCH" \
		'tgkill(pid, -1) = -1 EINVAL' \
		'per-worker handler counts: 0 1 1 1; every read() restarted and ended at EOF: yes' \
		"tgkill(pid, joined thread's tid, 0) fails with ESRCH: yes"
}

@test "threads: process-directed signals go to a thread not blocking them; thread-directed ones stay put" {
	thr 0 thread_signal process
	has '5 x kill(getpid(), SIGUSR1), only worker 1 not blocking it: all ran on worker 1: yes' \
		'kill(getpid(), SIGUSR2) blocked in every thread: handled 0, pending in main: yes, in worker 0: yes' \
		'worker 2 unblocked SIGUSR2: it ran there: yes, no longer pending: yes' \
		'tgkill(worker 0, SIGUSR1) while worker 0 blocks it: handled 0, pending in worker 0: yes, in worker 1: no, in main: no' \
		'worker 0 unblocked SIGUSR1: it ran there: yes' \
		'per-worker handler counts: 1 5 1; reads ended at EOF: yes; main ran none: yes'
}

@test "threads: signal masks are per thread and inherited at creation; sigaction is shared" {
	thr 0 thread_signal mask
	has 'inherited at pthread_create: worker 0 blocks SIGUSR2: yes, worker 1 (created after main unblocked it): yes' \
		"worker 1 blocked both: its mask 3, worker 0's still 2, main's 0" \
		'main sigprocmask(SIG_BLOCK, SIGUSR2), worker 0 unblocked it: main 2, worker 0 0, worker 1 3' \
		"handler installed by a thread runs for main's raise(SIGUSR2): yes"
}

@test "threads: a signal interrupts one thread's read/FUTEX_WAIT/nanosleep (EINTR or SA_RESTART)" {
	thr 0 thread_signal interrupt
	has 'futex waiters queued: yes; handlers ran on their target threads only: yes' \
		'read, no SA_RESTART: -1 EINTR' \
		'FUTEX_WAIT, no SA_RESTART: -1 EINTR' \
		'nanosleep(10 s): -1 EINTR, time left > 4 s: yes' \
		'SA_RESTART: read and FUTEX_WAIT still blocked after their handler ran: yes' \
		'read, SA_RESTART: 4 (got the later data)' \
		'FUTEX_WAIT, SA_RESTART: back in the queue: yes, woken 1, returned 0'
}

@test "threads: sigaltstack is per thread; new threads start without one" {
	thr 0 thread_signal altstack
	has 'thread with sigaltstack: SA_ONSTACK handler ran on it: yes' \
		'thread it created: starts with SS_DISABLE: yes, handler on its normal stack: yes' \
		'main: no alternate stack (SS_DISABLE): yes, handler on its normal stack: yes'
}

@test "threads: SIGSEGV in a thread runs the handler on that thread" {
	thr 0 thread_signal fault
	has 'SIGSEGV in a thread: handler ran on it: yes, si_addr right: yes, recovered with siglongjmp: yes'
}

@test "threads: an unhandled SIGSEGV in a thread kills the whole process (139)" {
	thr 139 thread_signal fault-fatal
	has 'a thread is about to fault with no handler'
	assert_not_contains "$(<"$sandbox_out")" 'not reached'
}

@test "threads: SIGTERM with the default action sent to one thread kills the whole process (143)" {
	thr 143 thread_signal kill-fatal
	has 'SIGTERM (default action) to a thread'
	assert_not_contains "$(<"$sandbox_out")" 'not reached'
}

# --- threads and the process (thread_proc) ---

@test "threads: exit(7) in a thread ends the process while others block; atexit runs" {
	thr 7 thread_proc exit-thread
	has '3 threads blocked; a fourth calls exit(7)' 'atexit handler ran'
}

@test "threads: exit_group(9) from a thread ends the process, without atexit" {
	thr 9 thread_proc exit-group
	has '3 threads blocked; a fourth calls exit_group(9)'
	assert_not_contains "$(<"$sandbox_out")" 'atexit'
}

@test "threads: main's pthread_exit leaves the process running; a thread's exit(3) is the status" {
	thr 3 thread_proc main-exit
	has 'main calls pthread_exit' \
		"thread after main's pthread_exit: same pid: yes, can create and join threads: yes"
}

@test "threads: main's pthread_exit, then the last thread returns: status 0" {
	thr 0 thread_proc main-exit-last
	has "thread after main's pthread_exit: same pid: yes, can create and join threads: yes"
}

@test "threads: raw SYS_exit in every thread: the last thread's code is the process status" {
	thr 4 thread_proc last-exit
	has 'main: SYS_exit(5)' 'last thread: main has exited: yes; SYS_exit(4)'
}

@test "threads: fork in a threaded process: the child has one thread and can make more" {
	thr 0 thread_proc fork
	has "child: the parent's other threads are not in it (ticks frozen): yes" \
		'child: gettid() == getpid(): yes; created and joined 3 threads: yes, sum 29' \
		"parent: child's status 42; its own threads still run: yes"
}

@test "threads: fork from a thread that exits; the main thread reaps the child" {
	thr 0 thread_proc fork-thread
	has 'fork in a thread that then exited: the main thread reaps the child: status 43'
}

@test "threads: execve from a non-main thread: other threads gone, pid kept" {
	thr 0 thread_proc exec-thread
	has '3 threads blocked; a fourth calls execve' \
		'new image: pid kept: yes, single thread (gettid() == getpid()): yes, threads work: 81'
}

@test "threads: pipes between threads: blocked reader, blocked writer, EOF, ping-pong" {
	thr 0 thread_proc pipe
	has "thread blocked in read() got main's write: yes" \
		'writer thread blocked on a full pipe: wrote 200000, main read 200000, checksum 24915600' \
		'reader thread sees EOF when main closes the write end: read = 0' \
		'pipe ping-pong between two threads, 500 rounds: final 1000, ok: yes'
}

@test "threads: 100 detached threads; main returns while a detached thread blocks" {
	thr 0 thread_proc detached
	has '100 detached threads: create failures 0, each reported once: yes' \
		'main returns while a detached thread is blocked in read()'
}

@test "threads: prctl(PR_SET_KEEPCAPS) is per thread, kept by clone and fork, cleared by execve (Go's AllThreadsSyscall test)" {
	compare_flavours 0 thread_keepcaps
	grep -qx 'a thread made before: 0' "$sandbox_out"
	grep -qx 'after execve: 0' "$sandbox_out"
}

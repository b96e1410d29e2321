#!/usr/bin/env bats
# Futexes (issue 15). Robust futexes: set_robust_list/get_robust_list and the walk of the list when a thread exits, its
# process exits (exit_group, SIGKILL) or execs (kernel/futex/core.c exit_robust_list). Static guest
# tests/guest/futex_robust.c, musl and glibc builds, each compared with its native run.

load helpers

setup() {
	require_pvx
	cd "$BATS_TEST_TMPDIR"
}

owner_died() {
	has 'lock after the owner died: EOWNERDEAD' 'consistent: 0' 'lock again: 0'
}

@test "robust: a PTHREAD_MUTEX_ROBUST held by a thread that exits: EOWNERDEAD, consistent, lock again" {
	compare_flavours 0 futex_robust thread
	owner_died
}

@test "robust: a waiter blocked in the lock wakes with EOWNERDEAD when the owner thread exits" {
	compare_flavours 0 futex_robust waiter
	owner_died
}

@test "robust: process-shared mutex in MAP_SHARED memory, owner process _exits: EOWNERDEAD" {
	compare_flavours 0 futex_robust process
	owner_died
}

@test "robust: the lock held by another thread of a process that calls exit_group" {
	compare_flavours 0 futex_robust group
	owner_died
}

@test "robust: the owner process dies of SIGKILL while its second thread holds the lock" {
	compare_flavours 0 futex_robust killed
	has 'child: signal 9'
	owner_died
}

@test "robust: execve releases the old image's robust locks" {
	compare_flavours 0 futex_robust exec
	owner_died
}

@test "robust: get_robust_list of self, by pid, of a child; ESRCH, EFAULT; set_robust_list EINVAL" {
	compare_flavours 0 futex_robust calls
	has 'get_robust_list(0): 0, head is ours: yes, len 24' 'get_robust_list(child): 0, the child'"'"'s head: yes' \
		'get_robust_list(bad head ptr): EFAULT' 'get_robust_list(reaped child): ESRCH'
}

@test "robust (hostile): forged lists: cycles, unmapped entries, huge offsets, 3000 entries, unaligned, bad head" {
	compare_flavours 0 futex_robust forged
	has 'forged 0: status 0 0x40000000 0 0 0 0 0 0 0' \
		'forged 5: status 0 0 0 0 0 0 0 0 0 chain: 2048 owner-died, 952 still owned'
}

# FUTEX_WAKE_OP and futex_waitv (issue 15): tests/guest/futex_ops.c, compared with its native run.

@test "futex WAKE_OP: every op and comparison code, OPARG_SHIFT (shifts past 31), wake counts, shared form" {
	compare_flavours 0 futex_ops wakeop
	has 'op 5 cmp 0 oparg 0 cmparg 0: -1 ENOSYS word 0x7' 'op 1 cmp 6 oparg 1 cmparg 7: -1 ENOSYS word 0x8' \
		'shift op 0 by 32: 0 0 word 0x1' 'wake 0/0 cmp 0 0: returned 2, woke 1 and 1, word2 1' \
		'shared: returned 1, word 9, child status 0'
}

@test "futex WAKE_OP (hostile): unaligned, NULL, read-only, PROT_NONE, unmapped, kernel and stub addresses" {
	compare_flavours 0 futex_ops wakeop_err
	has 'read-only uaddr2: -1 EFAULT' 'read-only word after: 0' 'stub gadget: -1 EFAULT' \
		'stub regions (shared): -1 EFAULT' 'unaligned uaddr2: -1 EINVAL' 'bad op: -1 ENOSYS word 0'
}

@test "futex WAKE_OP (race): its add is atomic against lock xadd of two other threads" {
	compare_flavours 0 futex_ops race
	has 'race: exact'
}

@test "futex_waitv: the woken index, EAGAIN, timeouts on both clocks, EINTR, 128 entries, shared words" {
	compare_flavours 0 futex_ops waitv
	has 'waitv woken by a wake of word 3: 3 0' 'waitv, word 2 differs: -1 EAGAIN' \
		'waitv monotonic timeout: -1 ETIMEDOUT, waited >= 90ms: yes' 'waitv interrupted: -1 EINTR' \
		'waitv shared, woken by another process: 1 0'
}

@test "futex_waitv (hostile): flags, nr 0/129, clocks, entry flags, reserved, 64-bit values, bad pointers" {
	compare_flavours 0 futex_ops waitv_err
	has 'nr 0: -1 EINVAL' 'nr 129: -1 EINVAL' 'reserved: -1 EINVAL' '64-bit value: -1 EINVAL' \
		'unmapped waiters: -1 EFAULT' 'kernel uaddr: -1 EFAULT' 'size u64: -1 EINVAL'
}

# PI futexes (issue 15): tests/guest/futex_pi.c, compared with its native run. Words print their owner as me/A/B.

@test "futex PI: the owner-TID protocol: take, EDEADLK, TRYLOCK's EAGAIN (WAITERS left set), EPERM, hand-off" {
	compare_flavours 0 futex_pi basic
	has 'lock again: -1 EDEADLK word me' 'trylock held by A: -1 EAGAIN word A|WAITERS' \
		'unlock held by A: -1 EPERM word A|WAITERS' 'A unlocked: B got it 0, word then B|WAITERS, now 0' \
		'FUTEX_WAKE on a word with PI waiters: -1 EINVAL'
}

@test "futex PI: LOCK_PI (realtime) and LOCK_PI2 (either clock) deadlines, ENOSYS clock flags, restart after a signal" {
	compare_flavours 0 futex_pi time
	has 'LOCK_PI2|CLOCK_REALTIME: -1 ETIMEDOUT word A|WAITERS' 'LOCK_PI|CLOCK_REALTIME: -1 ENOSYS word A|WAITERS' \
		'alarm handler ran' 'B after the signal: 0'
}

@test "futex PI (hostile): forged owner TIDs (unknown, exited, live), OWNER_DIED, bad and read-only pointers" {
	compare_flavours 0 futex_pi forged
	has 'owner tid no thread has: -1 ESRCH word tid?|WAITERS' 'owner tid of an exited thread: -1 ESRCH, waiters bit yes' \
		'OWNER_DIED, no owner: 0 0 word me|OWNER_DIED' 'unlock a word of a live thread: -1 EPERM word A' \
		'read-only lock: -1 EFAULT, word 0' 'stub gadget address: -1 EFAULT' 'unaligned unlock: -1 EPERM word 0'
}

@test "futex PI: an owner thread that exits holding the lock hands it to its waiter with OWNER_DIED" {
	compare_flavours 0 futex_pi death
	has 'A exited holding it: B got it 0, word then B|WAITERS|OWNER_DIED, now 0' \
		'locked after A exited, no waiter: -1 ESRCH'
}

@test "futex PI: a child that execs holding a shared lock hands it to its waiting parent with OWNER_DIED" {
	compare_flavours 0 futex_pi exec
	has 'the owner exec'"'"'d: LOCK_PI 0 0, word me|WAITERS|OWNER_DIED' 'the child exited 2'
}

@test "futex PI: glibc PTHREAD_PRIO_INHERIT mutexes under contention, with a condvar, robust with a dead owner" {
	compare_flavours 0 futex_pi glibc
	has '4 threads x 20000 under a PI mutex: 80000' 'condvar with a PI mutex: ready 5, woke at least once: yes' \
		'robust PI lock after the owner died: EOWNERDEAD' 'lock again: 0'
}

@test "futex PI: WAIT_REQUEUE_PI / CMP_REQUEUE_PI: EINVAL/EAGAIN rules, the lock taken for the first waiter, moves" {
	compare_flavours 0 futex_pi requeue
	has 'FUTEX_WAKE on their word: -1 EINVAL' 'CMP_REQUEUE_PI, lock free: 3 0' 'waiters that owned it: 3, errors 0, word 0' \
		'CMP_REQUEUE_PI n2 0, lock held: 1 0 word me|WAITERS' \
		'after our unlock: waiters that owned it: 3, errors 0, word 0'
}

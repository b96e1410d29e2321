#!/usr/bin/env bats
# Robust futexes (issue 15): set_robust_list/get_robust_list and the walk of the list when a thread exits, its
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

#!/usr/bin/env bats
# fork(2) and the child's memory (issue 16: fork with the host's copy-on-write). Static guest
# tests/guest/fork_cow.c, musl and glibc builds, each compared with its native run; every test runs
# with the platform's own fork (the host's copy-on-write where the platform has it) and with
# PVX_FORK=copy, the copying fallback.

load helpers

setup() {
	require_pvx
	cd "$BATS_TEST_TMPDIR"
}

# fork_both STATUS MODE: compare_flavours with the platform's fork, then with the copying one.
fork_both() {
	compare_flavours "$@" || return 1
	PVX_FORK=copy compare_flavours "$@"
}

# Does this platform fork by the host? (seccomp and vmexec copy, for now)
host_fork() {
	[[ $PVX_PLATFORM == ptrace ]]
}

@test "fork: the child's memory is one instant of the parent's while another thread writes" {
	host_fork || skip "$PVX_PLATFORM forks by copying pages one after the other: not one instant (issue 16)"
	compare_flavours 0 fork_cow order
	has 'order: 60 forks, children that saw a later high page than low page: 0'
}

@test "fork: MAP_SHARED memfd, shared anonymous memory and System V shm stay shared; private memory does not" {
	fork_both 0 fork_cow shared
	has 'parent sees after the child wrote: memfd child, anon child, private parent, shm child' \
		'child sees after the parent wrote: memfd again, anon again, private child, shm again' 'child: 0'
}

@test "fork (hostile): 1 GiB touched at 16 places and 64 GiB of PROT_NONE: contents kept, private after" {
	fork_both 0 fork_cow sparse
	has "sparse: child saw the parent's pages: yes; parent's page after the child wrote: a"
}

@test "fork: the child has the parent's FPU state (the SSE rounding mode)" {
	fork_both 0 fork_cow fpu
	has "fpu: child has the parent's rounding mode: yes"
}

@test "fork (hostile): threads fork in a loop while their process is SIGKILLed; fork works after" {
	fork_both 0 fork_cow killed
	has 'killed: 20 of 20 forking processes died of SIGKILL' 'a fork afterwards: status 5'
}

@test "fork: busybox sh's command substitutions and fork+exec, with either fork" {
	pvx_run "$BUSYBOX" sh -c 'for i in 1 2 3; do x=$(echo $i); echo $x; done; '"$BUSYBOX"' true && echo done'
	[[ $status == 0 && $output == $'1\n2\n3\ndone' ]]
	PVX_FORK=copy pvx_run "$BUSYBOX" sh -c 'for i in 1 2 3; do x=$(echo $i); echo $x; done'
	[[ $status == 0 && $output == $'1\n2\n3' ]]
}

#!/usr/bin/env bats
# kcmp(2), process_vm_readv/writev(2) and clone(CLONE_PARENT) between guest processes (issue 15). Static guests
# tests/guest/kcmp_pvm.c and tests/guest/clone_parent.c, musl and glibc builds, each compared with its native run.

load helpers

setup() {
	require_pvx
	cd "$BATS_TEST_TMPDIR"
}

@test "kcmp: files, dups, threads, fork and vfork children for every type; EPOLL_TFD; errors; a zombie" {
	compare_flavours 0 kcmp_pvm kcmp
	has 'same fd: equal, dup: equal, another open: differ' 'order antisymmetric: yes' \
		'fork child: VM differ FILES differ FS differ SIGHAND differ' 'vfork child VM: equal' \
		'thread: VM equal FILES equal FS equal SIGHAND equal'
}

@test "process_vm (hostile): read/write a child through iovecs; partial at unmapped pages; EFAULT, EINVAL, ESRCH" {
	compare_flavours 0 kcmp_pvm pvm
	has 'read: [HELLO][ from the child'"'"'s memory]' 'child sees: WORLD from the child'"'"'s memory' \
		'readv across an unmapped page: 4096' 'writev to a read-only page: EFAULT' 'riovcnt 1025: EINVAL' \
		'a zombie: ESRCH'
}

@test "clone(CLONE_PARENT): the child is our parent's: it reaps it, the caller gets ECHILD" {
	compare_flavours 0 clone_parent sibling
	has 'grandchild: getppid() was the first process: yes' 'first process reaps the grandchild: yes, status 7' \
		'middle: waitpid(its CLONE_PARENT child): ECHILD'
}

@test "clone(CLONE_PARENT) from pvx's first process (its pid namespace's init): EINVAL" {
	pvx_run "$(guest clone_parent)" init
	assert_status 0
	assert_contains "$output" 'pid 1: clone(CLONE_PARENT): EINVAL'
}

@test "clone(CLONE_CHILD_SETTID) of a process: the tid is in the child's memory before the child runs" {
	compare_flavours 0 clone_parent settid
	has 'child saw its tid at once: 100/100'
}

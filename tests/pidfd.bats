#!/usr/bin/env bats
# pidfds (issue 15): pidfd_open, the pidfd file (poll/epoll readable at exit, POLLHUP once reaped),
# pidfd_send_signal, pidfd_getfd, waitid(P_PIDFD), clone/clone3 CLONE_PIDFD. Static guest tests/guest/pidfd.c,
# musl and glibc builds, each compared with its native run.

load helpers

setup() {
	require_pvx
	cd "$BATS_TEST_TMPDIR"
}

@test "pidfd: poll and epoll readable when the child exits, POLLHUP once reaped; waitid(P_PIDFD); ESRCH after" {
	compare_flavours 0 pidfd exit
	has 'poll while running: 0' 'poll after exit: 1 IN' 'epoll after exit: 1 data 7 IN' 'poll after reap: 1 IN HUP' \
		'waitid(P_PIDFD): ok code CLD_EXITED status 5' 'pidfd_send_signal after reap: ESRCH'
}

@test "pidfd (hostile): bad fds, flags, signals, siginfo pointers and forged si_code for every call" {
	compare_flavours 0 pidfd errors
	has 'pidfd_send_signal(info SI_USER to another): EPERM' 'pidfd_send_signal(bad info): EFAULT' \
		'pidfd_getfd(pipe as pidfd): EBADF' 'read: EINVAL'
}

@test "pidfd: pidfd_send_signal as kill (SI_USER) and as rt_sigqueueinfo (SI_QUEUE with a value), SIGKILL" {
	compare_flavours 0 pidfd signal
	has 'child saw: SI_USER' 'child saw: SI_QUEUE 7' 'waitid(P_PIDFD): ok code CLD_KILLED status 9'
}

@test "pidfd: pidfd_getfd duplicates the child's fd close-on-exec; EBADF for a closed one, ESRCH once it exited" {
	compare_flavours 0 pidfd getfd
	has 'read from it: secret' 'pidfd_getfd(zombie): ESRCH'
}

@test "pidfd (hostile): a pidfd of a reaped child never reaches the next process with its pid" {
	compare_flavours 0 pidfd reuse
	grep -qx "b has a's pid: yes" "$sandbox_err" || fail_msg "pvx did not give the pid out again: the test proves nothing"
	has 'pidfd_send_signal(reaped a, SIGKILL): ESRCH' 'b: exit 2'
}

@test "pidfd: clone(CLONE_PIDFD), clone3 with a pidfd; EINVAL with CLONE_PARENT_SETTID; EFAULT leaves no child; E2BIG" {
	compare_flavours 0 pidfd clone
	has 'clone3(CLONE_PIDFD): ok, pidfd set: yes' 'clone3(CLONE_PIDFD, bad pointer): EFAULT' 'a child was left: no' \
		'clone3(larger struct, extra byte set): E2BIG'
}

@test "clone3 set_tid: Linux's argument errors (EINVAL, EFAULT); choosing a pid needs a capability no guest holds (EPERM)" {
	compare_flavours 0 pidfd settid
	has 'set_tid_size 33: EINVAL' 'set_tid bad pointer: EFAULT' 'set_tid_size 2 (deeper than our pid namespace): EINVAL' \
		'set_tid -1: EINVAL' 'set_tid 0: EINVAL'
	pvx_run "$(guest pidfd)" settid_perm
	[[ $status == 0 && $output == 'set_tid 900: EPERM' ]] || fail_msg "$status: $output"
}

@test "pidfd: PIDFD_NONBLOCK: waitid(P_PIDFD) of a running child is EAGAIN" {
	compare_flavours 0 pidfd nonblock
	has 'waitid(P_PIDFD): EAGAIN'
}

@test "/proc/sys/kernel/pid_max: one more than the highest guest pid (LTP's unused-pid search reads it)" {
	require_prog "$BUSYBOX"
	pvx_run "$BUSYBOX" cat /proc/sys/kernel/pid_max
	assert_status 0
	[[ $output == 1025 ]] || fail_msg "pid_max: $output"
}

#!/usr/bin/env bats
# clone(2)'s CLONE_FILES, CLONE_FS and CLONE_SIGHAND between processes, threads without CLONE_FS/CLONE_FILES,
# unshare(2), execve and close_range(CLOSE_RANGE_UNSHARE) on shared tables, and kcmp(2) of them (issue 15).
# Static guest tests/guest/clone_files.c, musl and glibc builds, each compared with its native run.

load helpers

setup() {
	require_pvx
	cd "$BATS_TEST_TMPDIR"
}

@test "clone: FILES, FS, SIGHAND shared between processes as each flag says; kcmp agrees (clone02, kcmp03)" {
	compare_flavours 0 clone_files share
	has 'none: child status 0; its fd 4 open here: no; our fd closed by it: no; cwd /; umask 022; SIGUSR1 handler' \
		'CLONE_FILES: child status 0; its fd 4 open here: yes; our fd closed by it: yes; cwd /; umask 022; SIGUSR1 handler' \
		'CLONE_FS: child status 0; its fd 4 open here: no; our fd closed by it: no; cwd /tmp; umask 027; SIGUSR1 handler' \
		'VM|SIGHAND: child status 0; its fd 4 open here: no; our fd closed by it: no; cwd /; umask 022; SIGUSR1 ignored' \
		'kcmp VM|FS|FILES|SIGHAND: kcmp VM equal FILES equal FS equal SIGHAND equal' \
		'kcmp VM|SIGHAND: kcmp VM equal FILES differ FS differ SIGHAND equal' \
		'kcmp03 FS: child says equal' 'kcmp03 FILES: child says equal' 'clone(SIGHAND without VM): EINVAL'
}

@test "clone: a thread without CLONE_FS|CLONE_FILES has its own fds, cwd and umask (clone08); with them it shares" {
	compare_flavours 0 clone_files thread
	has 'thread without FS|FILES: same tgid: yes; its fd 3 open here: no; cwd /; umask 022; kcmp VM equal FILES differ FS differ SIGHAND equal' \
		'thread with FS|FILES: same tgid: yes; its fd 3 open here: yes; cwd /tmp; umask 077; kcmp VM equal FILES equal FS equal SIGHAND equal' \
		'after the threads: cwd /tmp (the second one'"'"'s chdir)'
}

@test "unshare: FILES and FS copy a shared table; THREAD/SIGHAND/VM EINVAL while shared; close_range UNSHARE" {
	compare_flavours 0 clone_files unshare
	has 'unshare(FILES|FS) child: status 0; our fd still open: yes; our cwd /' \
		'close_range(UNSHARE) child: status 0; our fd still open: yes' \
		'unshare(THREAD|SIGHAND|VM) alone: 0' 'unshare(CSIGNAL bits): EINVAL' \
		'CLONE_VM|CLONE_SIGHAND child: unshare(CLONE_VM) EINVAL, unshare(CLONE_SIGHAND) EINVAL' \
		'with a CLONE_VM child: unshare(CLONE_VM) EINVAL' \
		'with a thread: unshare(CLONE_THREAD) EINVAL, unshare(CLONE_FILES) 0'
}

@test "execve: a CLONE_FILES|CLONE_SIGHAND child that execs closes its O_CLOEXEC fds and resets handlers in copies" {
	compare_flavours 0 clone_files exec
	has 'exec-child: the O_CLOEXEC fd open: no; SIGUSR1 default: yes; kcmp FILES with parent differ, SIGHAND differ' \
		'exec child: status 0; our O_CLOEXEC fd still open: yes; our SIGUSR1 handler kept: yes'
}

@test "clone_files (hostile): a sharer closes and dup2s fds we read; one closes the fd we block on and exits" {
	compare_flavours 0 clone_files race
	has 'race: flipper status 0; every read was data, EOF or EBADF: yes' \
		'race: read blocked on an fd a sharer closed and exited: 4 late; fd now closed'
}

@test "unshare and clone: namespaces are EPERM (no CAP_SYS_ADMIN), user namespaces configured out (EINVAL)" {
	pvx_run "$(guest clone_files)" ns
	assert_status 0
	assert_contains "$output" 'NEWNS: unshare EPERM clone EPERM'
	assert_contains "$output" 'NEWPID: unshare EPERM clone EPERM'
	assert_contains "$output" 'NEWUSER: unshare EINVAL clone EINVAL'
}

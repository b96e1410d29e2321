#!/usr/bin/env bats
# /proc/PID/ns and namespace files (issue 15): the magic links, what opening them gives (an nsfs file whose
# inode is the namespace's id, one set of namespaces for the whole sandbox), the nsfs ioctls and setns(2).
# Static guest tests/guest/nsfs.c (musl and glibc), each compared with its native run (as nobody: the
# guest holds no capability, so natively too it asks as an unprivileged process).

load helpers

setup() {
	require_pvx
	cd "$BATS_TEST_TMPDIR"
}

@test "nsfs: /proc/self/ns links read TYPE:[INODE], lstat lrwxrwxrwx, open gives nsfs files with that inode, one per type" {
	compare_flavours 0 nsfs links
	has 'distinct inodes: 8; pid_for_children = pid: yes; time_for_children = time: yes' \
		"child's links the same: yes" '/proc/PID/ns the same: yes' 'O_NOFOLLOW: ELOOP' 'O_WRONLY: EPERM' \
		'O_PATH: ok, fstat ino=link yes' 'fdinfo ino = link: yes'
	grep -qx 'net: link net, lstat ok mode 0120777, open ok, fstat mode 0100444 ino=link yes, same dev yes, statfs nsfs, fd link = link, read EINVAL, lseek ESPIPE' "$sandbox_out"
}

@test "nsfs: NS_GET_NSTYPE, NS_GET_USERNS, NS_GET_PARENT, NS_GET_OWNER_UID, the pid ioctls; ENOTTY, EPERM, EFAULT, EBADF" {
	compare_flavours 0 nsfs ioctl
	has 'user: NSTYPE CLONE_NEWUSER; USERNS EPERM; PARENT EPERM; OWNER_UID ok 0' \
		'pid: NSTYPE CLONE_NEWPID; USERNS fd of user ns yes, cloexec yes, O_RDONLY yes; PARENT EPERM; OWNER_UID EINVAL 4242' \
		'OWNER_UID(bad pointer): EFAULT' 'NSTYPE on O_PATH: EBADF' 'NSTYPE on a pipe: ENOTTY'
	grep -q '^  PID_FROM_PIDNS(self) =self TGID_FROM_PIDNS(self) =self PID_IN_PIDNS(self) =self PID_FROM_PIDNS(99999) ESRCH' "$sandbox_out"
}

@test "nsfs (hostile): setns into its own namespaces unprivileged, wrong nstype, non-namespace fds, O_PATH, pidfd masks, exited processes" {
	compare_flavours 0 nsfs setns
	has 'setns(user, 0) EINVAL, (own type) EINVAL, (CLONE_NEWUTS|CLONE_NEWNET) EINVAL' \
		'setns(uts, 0) EPERM, (own type) EPERM, (CLONE_NEWUTS|CLONE_NEWNET) EINVAL' 'setns(O_PATH): EBADF' \
		'setns(pipe): EINVAL' 'setns(/proc/self dir, CLONE_NEWUTS): EINVAL' \
		'reaped child'"'"'s pidfd: CLONE_NEWUTS ESRCH'
}

@test "nsfs: busybox readlink and ls of /proc/self/ns in the sandbox" {
	require_prog "$BUSYBOX"
	pvx_run "$BUSYBOX" sh -c 'readlink /proc/self/ns/uts; ls /proc/self/ns | tr "\n" " "; echo; ls -l /proc/self/ns/net'
	assert_status 0
	[[ ${lines[0]} =~ ^uts:\[[0-9]+\]$ ]] || fail_msg "readlink: ${lines[0]}"
	[[ ${lines[1]} == "cgroup ipc mnt net pid pid_for_children time time_for_children user uts " ]] || fail_msg "ls: ${lines[1]}"
	[[ ${lines[2]} == lrwxrwxrwx*"/proc/self/ns/net -> net:["*"]" ]] || fail_msg "ls -l: ${lines[2]}"
}

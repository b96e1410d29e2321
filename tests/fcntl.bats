#!/usr/bin/env bats
# fcntl(2) beyond record locks (those are in io.bats): leases (F_SETLEASE/F_GETLEASE) with their break
# signals and waiting openers, F_SETSIG and F_SETOWN(_EX); and which errno wins where a call has more than
# one thing wrong (dup3, O_PATH fds, positional I/O on pipes). Static guests tests/guest/leases.c and
# fd_errnos.c, musl and glibc builds, each compared with its native run.
# Leases in the sandbox see the sandbox's own opens only (a host process's open neither counts nor breaks).

load helpers

setup() {
	require_pvx
	cd "$BATS_TEST_TMPDIR"
}

@test "fcntl leases: errors, conflicting opens, F_SETSIG/F_SETOWN(_EX), and their bad values" {
	PVX_OPTS=(--rw)
	compare_flavours 0 leases
	has "lease on a pipe: -1 EINVAL" "lease on an O_PATH fd: -1 EBADF" "F_SETLEASE F_UNLCK without one: -1 EAGAIN" \
		"F_SETSIG 65: -1 EINVAL" "F_SETOWN a pid nobody has: -1 ESRCH" "F_SETOWN_EX bad pointer: -1 EFAULT" \
		"write lease, another reader open: -1 EAGAIN" "read lease on an O_RDWR fd: -1 EAGAIN" \
		"F_GETOWN is minus my group: yes" "F_GETOWN_EX: type 0, me yes"
}

@test "fcntl leases: a break signals the holder (si_fd, POLL_MSG); openers wait for the downgrade or unlock" {
	PVX_OPTS=(--rw)
	compare_flavours 0 leases
	has "child O_RDONLY|O_NONBLOCK: EAGAIN" "own open for write, O_NONBLOCK: EAGAIN" \
		"holder: break signal SIGUSR1, si_fd is the lease fd: yes, si_code POLL_MSG: yes" \
		"F_GETLEASE while broken for a reader: F_RDLCK" "after the unlock: F_GETSIG 0, F_GETOWN 0" \
		"child O_RDONLY: opened, after waiting" "child O_WRONLY: opened, after waiting" \
		"F_GETLEASE while broken for a writer: F_UNLCK"
}

@test "fcntl leases: an opener killed or interrupted while it waits; a holder that exits; two holders unlocking" {
	PVX_OPTS=(--rw)
	compare_flavours 0 leases
	has "killed writer: killed by signal 9" "child: open O_TRUNC ended by SIGALRM: EINTR" \
		"truncate while two read leases are held: done, waited yes" \
		"holder 0 got its break signal: yes" "holder 1 got its break signal: yes"
}

@test "fcntl leases: exit_group from another thread ends a thread waiting in open for a lease" {
	PVX_OPTS=(--rw)
	compare_flavours 0 leases exit-while-waiting
	has "child exited while its thread waited: status 7, within 10 s: yes"
}

@test "fcntl leases: a lease taken in the sandbox is no host lease (a host process's open neither waits nor breaks it)" {
	"$PVX" run --platform="$PVX_PLATFORM" --rw -- "$(guest leases)" hold > out &
	for _ in $(seq 50); do grep -q "write lease" out 2>/dev/null && break; sleep 0.1; done
	grep -qx "write lease: 0 " out
	# a host lease would make this open wait fs.lease-break-time (45 s) and signal pvx itself
	timeout 10 sh -c 'echo host >> lease.file'
	wait
	grep -qx host lease.file
	grep -qx "F_GETLEASE after 3 s: F_WRLCK" out
}

@test "fcntl O_ASYNC on a pipe: a write signals the read end's owner (a process, a group) with F_SETSIG's signal or SIGIO" {
	compare_flavours 0 leases async
	has "F_GETFL has O_ASYNC: yes" \
		"round 0: SIGUSR1, si_fd the read end: yes, si_code POLL_IN: yes, si_band has POLLIN: yes" \
		"round 1: SIGIO, si_code SI_KERNEL: yes" \
		"round 2: SIGUSR1, si_fd the read end: yes, si_code POLL_IN: yes, si_band has POLLIN: yes" \
		"after O_ASYNC is cleared: no signal"
}

@test "fd errnos: dup3(fd, fd) EINVAL first, O_PATH fds EBADF (ioctl, f*xattr, fcntl), ESPIPE before EBADF; F_GETLK; F_CREATED_QUERY, F_DUPFD_QUERY" {
	echo data > f
	chmod 644 f
	PVX_OPTS=(--rw)
	compare_flavours 0 fd_errnos f
	has "dup3(closed, closed, 0): -1 EINVAL" "ioctl FIOCLEX on O_PATH: -1 EBADF" \
		"fgetxattr on O_PATH, bad name: -1 EBADF" "fcntl F_GETSIG on O_PATH: -1 EBADF" \
		"pwritev2 on a pipe's read end: -1 ESPIPE" "pwritev2 at -1 on a pipe's read end: -1 EBADF" \
		"pwritev on a pipe, second iovec at a bad address: -1 ESPIPE" \
		"preadv on a pipe, iovec past user space: -1 ESPIPE" "pwritev on a pipe, 0 bytes: -1 ESPIPE" \
		"F_GETLK wrote only l_type: type F_UNLCK, whence 1, pid 12345" \
		"F_CREATED_QUERY, O_CREAT of a new name: 1 " "F_CREATED_QUERY, O_CREAT of an existing one: 0 " \
		"F_DUPFD_QUERY, a dup: 1 " "F_DUPFD_QUERY, a bad fd: -1 EBADF"
}

@test "ETXTBSY: a program a guest runs is not opened for writing, truncated or creat'ed; one open for writing is not run" {
	PVX_OPTS=(--rw)
	compare_flavours 0 txtbsy
	has "open O_WRONLY while it runs: ETXTBSY" "open O_RDONLY|O_TRUNC while it runs: ETXTBSY" \
		"creat while it runs: ETXTBSY" "truncate while it runs: ETXTBSY" "still whole: yes" \
		"still whole after opens of a racing name: yes" "child: execve of a program open for writing: ETXTBSY" "execve once closed: ran"
}

@test "dnotify: F_NOTIFY on a directory signals its owner (F_SETSIG's signal with si_fd and POLL_MSG, or SIGIO) for attribute changes, renames within it (fcntl38, fcntl39), creates, deletes, writes and reads, as natively" {
	PVX_OPTS=(--rw)
	compare_flavours 0 dnotify
	has "chmod sub: parent 1, sub 1, si_code POLL_MSG yes, si_band POLLIN|POLLRDNORM|POLLMSG" "chmod file: parent 1, sub 0" \
		"rename . -> sub: parent 0, sub 0" "rename sub -> sub2: parent 1, sub 0" "rename within sub2: parent 0, sub 1" \
		"two creats: SIGIO 1" "rename out: SIGIO 2" "write: 3, parent 1" "pread: 3, parent 1" \
		"child's creat: signal SIG, si_fd 3, si_pid is the kernel's: no" "creat after the child's close: parent 1"
}

@test "dnotify: removed by F_NOTIFY 0 and by closing any fd of the directory (a dup), not by a child's close; ENOTDIR, EBADF (O_PATH, bad fd), F_SETSIG out of range, as natively" {
	PVX_OPTS=(--rw)
	compare_flavours 0 dnotify
	has "chmod sub after removal: parent 1, sub 0" "write after the dup's close: 1, parent 0" "creat after close: parent 0" \
		"F_NOTIFY on a file: -1 ENOTDIR" "F_NOTIFY 0 on a file: 0" "F_NOTIFY on a pipe: -1 ENOTDIR" \
		"F_NOTIFY on O_PATH: -1 EBADF" "F_NOTIFY on a bad fd: -1 EBADF" "F_NOTIFY unknown bits only: 0" "F_SETSIG 65: -1 EINVAL"
}

@test "dnotify: the host watches it takes are bounded (1024 directories at once, then ENOMEM) and given back by close" {
	PVX_OPTS=(--rw)
	pvx_run "$(guest dnotify)" many 1100
	[[ $status == 0 ]] || fail_msg "status $status: $output"
	[[ $output == *"watched 1024, first error ENOMEM"* ]] || fail_msg "$output"
	[[ $output == *"after closing them: 0"* ]] || fail_msg "$output"
}

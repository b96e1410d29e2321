#!/usr/bin/env bats
# Issue 13, events: epoll, timerfd, signalfd, inotify, splice/tee/vmsplice, pipe sizes, fallocate, FIONREAD on
# pipes, vfork from a thread; busybox `tail -f` with a writer.
# Static guests tests/guest/ev_*.c, io_splice.c and thread_vfork.c, musl and glibc builds, each compared with its
# native run (the grep lines after each comparison pin the behaviour, so both sides failing alike cannot pass).

load helpers

setup() {
	require_pvx
	cd "$BATS_TEST_TMPDIR"
}

# ev GUEST MODE: both builds of GUEST MODE against their native runs
ev() { compare_flavours 0 "$@"; }

# ev_rw GUEST MODE: the same for guests that make files in the test's directory
ev_rw() {
	PVX_OPTS=(--rw)
	compare_flavours 0 "$@"
}

# pvx_with OPTION... -- PROG ARGS...: pvx_run with these pvx options (PVX_OPTS) for this one run
pvx_with() {
	local o=()
	while [[ $1 != -- ]]; do
		o+=("$1")
		shift
	done
	shift
	PVX_OPTS=("${o[@]}")
	pvx_run "$@"
	PVX_OPTS=()
}

# A kernel without CONFIG_INOTIFY_USER (the test VM's tinyconfig) answers every inotify call ENOSYS.
no_inotify_skip() {
	[[ -d /proc/sys/fs/inotify ]] || skip "this kernel has no inotify (CONFIG_INOTIFY_USER off)"
}

@test "epoll: create/create1 flags, ctl ADD/MOD/DEL and their errors, the data word comes back untouched" {
	ev ev_epoll basic
	grep -qx 'ADD a regular file: -1 EPERM' "$sandbox_out"
	grep -qx '2 bytes in: 1 \[IN data 0xdeadbeefcafef00d\]' "$sandbox_out"
	grep -qx 'both ends: 2 \[IN data 0x123456789abcdef\] \[OUT data 0xffffffffffffffff\]' "$sandbox_out"
}

@test "epoll: level-triggered events repeat, edge-triggered ones come once per change" {
	ev ev_epoll lt-et
	grep -qx 'level, again without reading: 1 \[IN data 0x1\]' "$sandbox_out"
	grep -qx 'edge, again without reading: 0' "$sandbox_out"
	grep -qx 'edge OUT, drained: 1 \[OUT data 0x3\]' "$sandbox_out"
}

@test "epoll: EPOLLONESHOT disarms until EPOLL_CTL_MOD; EPOLLEXCLUSIVE rules and wake-up" {
	ev ev_epoll oneshot
	grep -qx 'oneshot, re-armed: 1 \[IN data 0x8\]' "$sandbox_out"
	ev ev_epoll exclusive
	grep -qx 'MOD an exclusive entry: -1 EINVAL' "$sandbox_out"
	grep -qx 'exclusive waiters woken by one write: at least one yes' "$sandbox_out"
}

@test "epoll: nested epolls report readiness; cycles ELOOP, depth limit, a blocked outer wait wakes" {
	ev ev_epoll nested
	grep -qx 'inner ADD outer (a cycle): -1 ELOOP' "$sandbox_out"
	grep -qx 'deepest chain level accepted: 4' "$sandbox_out"
	grep -qx 'outer, blocked until a child writes: 1 \[IN data 0x2\]' "$sandbox_out"
}

@test "epoll: readiness of pipes, eventfd, socketpair, TCP listener and stream, timerfd, signalfd" {
	ev ev_epoll kinds
	grep -qx 'socketpair, peer closed: 1 \[IN HUP RDHUP data 0x30\]' "$sandbox_out"
	grep -qx 'tcp listener, a client connected: 1 \[IN data 0x40\]' "$sandbox_out"
	grep -qx 'timerfd, 20 ms, blocking wait: 1 \[IN data 0x50\]' "$sandbox_out"
	grep -qx 'signalfd, SIGUSR1 pending: 1 \[IN data 0x60\]' "$sandbox_out"
}

@test "epoll: a signal interrupts epoll_wait with EINTR even with SA_RESTART; an ignored one does not" {
	ev ev_epoll eintr
	grep -qx 'epoll_wait forever, SIGUSR1 with SA_RESTART: -1 EINTR, handler ran 1' "$sandbox_out"
	grep -qx 'epoll_wait 400 ms, SIGUSR2 ignored: 0' "$sandbox_out"
}

@test "epoll: epoll_pwait applies its sigmask during the wait only; epoll_pwait2 timespec timeouts" {
	ev ev_epoll pwait-mask
	grep -q '^epoll_pwait, nothing ready, SIGUSR1 pending, unblocked by its mask: -1 EINTR, handler ran 1, blocked after yes' "$sandbox_out"
	grep -qx 'epoll_pwait, fd ready, SIGUSR1 pending: 1, handler ran 0, still pending yes, blocked yes' "$sandbox_out"
	ev ev_epoll pwait2
	grep -qx 'pwait2 NULL timeout, a child writes: 1 data 0xabc' "$sandbox_out"
	grep -qx 'pwait2 tv_nsec 1e9: -1 EINVAL' "$sandbox_out"
}

@test "epoll: hostile arguments: EFAULT for bad event buffers, EINVAL for maxevents and self-add" {
	ev ev_epoll hostile
	grep -qx 'wait, events read-only: -1 EFAULT' "$sandbox_out"
	grep -qx 'wait, events a kernel address: -1 EFAULT' "$sandbox_out"
	grep -qx 'wait, maxevents 0: -1 EINVAL' "$sandbox_out"
	grep -qx 'ctl ADD the epoll to itself: -1 EINVAL' "$sandbox_out"
}

@test "epoll: closed fds leave the set only when the open file goes; the set is shared across fork" {
	ev ev_epoll closed
	grep -qx 'fd closed, a dup keeps the file open: still reported: 1 \[IN data 0x51\]' "$sandbox_out"
	grep -qx 'wait on the closed epoll: -1 EBADF' "$sandbox_out"
	ev ev_epoll fork
	grep -qx "parent: the child's registration is in the shared set: 1 \[OUT data 0x62\]" "$sandbox_out"
}

@test "epoll: one open file under two fd numbers is two registrations (a dup'ed listener, Go's FileListener)" {
	ev ev_epoll dups
	grep -qx 'both report: 2 \[IN data 0x72\] \[IN data 0x71\]' "$sandbox_out"
	grep -qx 'the file closed: none: 0' "$sandbox_out"
}

@test "timerfd: create/settime/gettime, one-shot read, poll readiness" {
	ev ev_timerfd basic
	grep -qx 'blocking read: read 8, expirations 1' "$sandbox_out"
	grep -qx 'disarm: old value in (9, 10\] s yes' "$sandbox_out"
}

@test "timerfd: MONOTONIC, REALTIME and BOOTTIME fire; CPU-time clocks EINVAL" {
	ev ev_timerfd clocks
	grep -qx 'BOOTTIME: read 8, expirations 1' "$sandbox_out"
}

@test "timerfd: TFD_TIMER_ABSTIME in the past and ahead; periodic expirations counted" {
	ev ev_timerfd abstime
	grep -qx 'it fired at or after the time asked: yes' "$sandbox_out"
	grep -q 'expirations 10 or 11 yes' "$sandbox_out"
	ev ev_timerfd periodic
	grep -qx 'after 4.5 periods: 8, at least 3 expirations yes' "$sandbox_out"
}

@test "timerfd: nonblocking EAGAIN, blocking read interrupted (EINTR) or restarted, errors, fork" {
	ev ev_timerfd nonblock
	grep -qx 'TFD_NONBLOCK, armed, not expired: -1 EAGAIN' "$sandbox_out"
	grep -qx 'blocking read of a disarmed timer, SIGUSR1 without SA_RESTART: -1 EINTR' "$sandbox_out"
	ev ev_timerfd errors
	grep -qx 'read 4 bytes: -1 EINVAL' "$sandbox_out"
	ev ev_timerfd fork
	grep -qx 'parent: the child consumed it: -1 EAGAIN' "$sandbox_out"
}

@test "signalfd: reads dequeue pending signals with siginfo (signo, code, sender pid and uid)" {
	ev ev_signalfd read
	grep -qx 'kill SIGUSR1: 128, signo User defined signal 1, code SI_USER, pid is the sender yes, uid mine yes' "$sandbox_out"
	grep -q '^tgkill SIGUSR2: 128, .* code SI_TKILL, pid is the sender yes' "$sandbox_out"
	grep -qx 'SIGUSR2 still pending: yes' "$sandbox_out"
}

@test "signalfd: sigqueue values, real-time queueing, SIGCHLD with the child's pid and status" {
	ev ev_signalfd queue
	grep -qx '  SIGRTMIN+2 code SI_QUEUE int 5678 ptr low word 5678' "$sandbox_out"
	grep -qx 'SIGCHLD: 128, code CLD_EXITED, pid is the child yes, status 7' "$sandbox_out"
}

@test "signalfd: in epoll and poll; after fork; in threads" {
	ev ev_signalfd epoll
	grep -qx 'epoll, SIGUSR1 pending: 1 data 42' "$sandbox_out"
	grep -qx 'epoll blocked until a child sends SIGUSR1: 1' "$sandbox_out"
	ev ev_signalfd fork
	grep -qx 'child, nothing of its own pending: -1 EAGAIN' "$sandbox_out"
	ev ev_signalfd thread
	grep -qx 'thread, SIGUSR2 sent to the main thread: -1 EAGAIN' "$sandbox_out"
}

@test "signalfd: errors" {
	ev ev_signalfd errors
	grep -qx 'read 10 bytes: -1 EINVAL' "$sandbox_out"
}

@test "inotify: create, open, modify, close, attrib, delete, mkdir/rmdir events with names; rm_watch" {
	no_inotify_skip
	ev_rw ev_inotify events
	grep -qx '  dir CREATE "a" cookie 0 len padded to 16' "$sandbox_out"
	grep -qx '  dir CLOSE_WRITE "a" cookie 0 len padded to 16' "$sandbox_out"
	grep -qx '  dir DELETE|ISDIR "sub" cookie 0 len padded to 16' "$sandbox_out"
	grep -qx '  dir IGNORED "" cookie 0 len padded to 16' "$sandbox_out"
}

@test "inotify: renames give MOVED_FROM/MOVED_TO with the names and one shared cookie per pair" {
	no_inotify_skip
	ev_rw ev_inotify moves
	grep -qx '  dir1 MOVED_FROM "moved" cookie c2 len padded to 16' "$sandbox_out"
	grep -qx '  dir2 MOVED_TO "b" cookie c2 len padded to 16' "$sandbox_out"
	grep -qx 'cookies seen: 5, all nonzero and distinct per pair: yes' "$sandbox_out"
}

@test "inotify: watches on files, IN_ONESHOT, IN_MASK_ADD; readiness; a blocking read; errors" {
	no_inotify_skip
	ev_rw ev_inotify self
	grep -qx '  file DELETE_SELF "" cookie 0 len padded to 16' "$sandbox_out"
	ev_rw ev_inotify nonblock
	grep -qx 'blocking read woken by a child.s unlink: ok, DELETE yes, name "a"' "$sandbox_out"
	ev_rw ev_inotify errors
	grep -qx 'add_watch IN_ONLYDIR on a file: -1 ENOTDIR' "$sandbox_out"
}

@test "inotify watches resolve inside --root and see the guest's changes there" {
	no_inotify_skip
	local R=$BATS_TEST_TMPDIR/root
	mkdir -p "$R"
	cp "$(guest ev_inotify)" "$R/ev_inotify"
	chmod 0777 "$R"
	pvx_with --rw --root "$R" -- /ev_inotify events
	# the guest ran in /; its directory was made inside the root, never in the host's /
	assert_status 0
	assert_contains "$output" '  dir CREATE "a" cookie 0 len padded to 16'
	[[ ! -e /ev_inotify.d ]]
}

@test "splice: file <-> pipe with offsets written back, pipe -> pipe, EAGAIN, EOF" {
	ev_rw io_splice splice
	grep -qx 'file -> pipe, 3 bytes at offset 10: 3, offset now 13, position 4' "$sandbox_out"
	grep -qx 'file: "splic...............ed!"' "$sandbox_out"
	grep -qx 'empty pipe, SPLICE_F_NONBLOCK: -1 EAGAIN' "$sandbox_out"
}

@test "tee and vmsplice: data duplicated without being consumed; user memory in and out of pipes" {
	ev_rw io_splice tee
	grep -qx 'copy: 14 "teeing datatee"' "$sandbox_out"
	grep -qx 'source: 11 "teeing data"' "$sandbox_out"
	ev_rw io_splice vmsplice
	grep -qx 'vmsplice from the pipe into memory: 6 "out of"' "$sandbox_out"
	grep -qx "vmsplice, second of 3 iovecs at the stub's text: 2" "$sandbox_out"
}

@test "F_SETPIPE_SZ/F_GETPIPE_SZ rounding and EBUSY; FIONREAD on pipes" {
	ev_rw io_splice pipesz
	grep -qx 'F_SETPIPE_SZ 10000: 16384' "$sandbox_out"
	grep -qx 'F_SETPIPE_SZ 4096 while holding them: -1 EBUSY' "$sandbox_out"
	ev_rw io_splice fionread
	grep -qx 'after 5 + 3 bytes, read end: 0 value 8' "$sandbox_out"
}

@test "fallocate: allocate, KEEP_SIZE, PUNCH_HOLE; splice and tee errors" {
	ev_rw io_splice fallocate
	grep -qx 'fallocate 0..8192: 0' "$sandbox_out"
	grep -qx 'bytes 100..116: "XXXX....XXXXXXXX"' "$sandbox_out"
	ev_rw io_splice errors
	grep -qx 'file -> file: -1 EINVAL' "$sandbox_out"
}

@test "vfork (CLONE_VM|CLONE_VFORK) + execve from the leader: the parent resumes, memory is shared" {
	ev thread_vfork leader
	grep -qx 'leader vfork + exec: clone ok, returned yes, child status 7' "$sandbox_out"
	grep -qx "the child's store is seen: yes" "$sandbox_out"
}

@test "vfork + execve from a non-leader thread returns after the child's exec (Go's os/exec)" {
	ev thread_vfork thread
	grep -qx 'thread vfork + exec: clone ok, returned yes, child status 7' "$sandbox_out"
	ev thread_vfork exit
	grep -qx 'thread vfork + _exit: clone ok, returned yes, child status 3' "$sandbox_out"
}

@test "posix_spawn from a thread, and four threads vforking at once" {
	ev thread_vfork spawn
	grep -qx 'posix_spawn from a thread: returned yes, child status 7' "$sandbox_out"
	ev thread_vfork many
	grep -qx 'thread 3: returned yes, child status 7' "$sandbox_out"
}

@test "posix_spawn of a missing program gives ENOENT to the caller (glibc's child reports it in shared memory)" {
	ev thread_vfork missing
	grep -qx 'posix_spawn of a missing program: ENOENT' "$sandbox_out"
}

@test "a vfork child killed before its exec wakes its parent; a vfork child vforks again" {
	ev thread_vfork killed
	grep -qx 'killed vfork child: returned yes, child status 137' "$sandbox_out"
	ev thread_vfork nested
	grep -qx 'vfork child vforking an exec: clone ok, returned yes, child status 17' "$sandbox_out"
}

@test "a process exits while its vfork child runs in its memory: the child goes on" {
	ev thread_vfork orphan
	[[ $(<"$sandbox_out") == $'the parent exited: status 5\nthe vfork child ran on after its parent exited\npipe closed' ]]
}

@test "clone(CLONE_VM) without CLONE_VFORK: a process in its parent's memory" {
	ev thread_vfork vm
	grep -qx 'thread clone(CLONE_VM) + _exit: clone ok, returned yes, child status 3' "$sandbox_out"
	grep -qx "the child's store is seen: yes" "$sandbox_out"
}

@test "busybox tail -f follows a file another process appends to" {
	require_prog "$BUSYBOX"
	PVX_OPTS=(--rw)
	# the native run (as root in CI) leaves the file: each run removes it before making its own
	compare_native "$BUSYBOX" sh -c 'busybox rm -f followed; : > followed; busybox tail -f followed & t=$!
		for i in 1 2 3; do echo line$i >> followed; sleep 0.3; done; sleep 2; kill $t; wait $t; echo tail ended'
	[[ $(<"$sandbox_out") == $'line1\nline2\nline3\ntail ended' ]]
}

# The host counts epoll and inotify watches per user, and pvx's user is shared with the host's own programs:
# the sandbox has a share of its own (pvx/events.h), and a guest past it gets Linux's answer for a user past
# max_user_watches or max_user_instances. Natively (as root, with the host's limits) the same guest goes further.
@test "epoll (hostile): registrations past the sandbox's share are ENOSPC; DEL and close give them back" {
	pvx_run "$(guest ev_limits)" epoll
	assert_status 0
	assert_contains "$output" 'registrations: 65536, then -1 ENOSPC'
	assert_contains "$output" 'again: -1 ENOSPC'
	assert_contains "$output" 'then ADD: 0'
	assert_contains "$output" 'and one more: -1 ENOSPC'
	assert_contains "$output" 'after closing an epoll, every fd left went: yes'
}

@test "inotify (hostile): instances past the share are EMFILE, watches ENOSPC; rm_watch, IN_IGNORED, close give back" {
	no_inotify_skip
	chmod 0777 .
	PVX_OPTS=(--rw)
	pvx_run "$(guest ev_limits)" inotify
	assert_status 0
	assert_contains "$output" 'instances: 32, then -1 EMFILE'
	assert_contains "$output" 'watches: 8192, then -1 ENOSPC'
	assert_contains "$output" 'a path already watched: its wd'
	assert_contains "$output" 'then f8192: a wd'
	assert_contains "$output" 'IN_IGNORED read: yes'
	assert_contains "$output" 'then f8193: a wd'
	assert_contains "$output" 'and f8194: -1 ENOSPC'
	assert_contains "$output" 'after close, f8194: a wd'
}

@test "inotify: /proc/sys/fs/inotify shows the sandbox's share and the host's queue length" {
	no_inotify_skip
	require_prog "$BUSYBOX"
	pvx_run "$BUSYBOX" sh -c 'cat /proc/sys/fs/inotify/max_user_instances /proc/sys/fs/inotify/max_user_watches /proc/sys/fs/inotify/max_queued_events'
	assert_status 0
	[[ $output == "32"$'\n'"8192"$'\n'"$(cat /proc/sys/fs/inotify/max_queued_events)" ]] || fail_msg "got: $output"
}

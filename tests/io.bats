#!/usr/bin/env bats
# Readiness (issue 6): poll, ppoll, select and pselect6 on pipes, their timeouts and signal masks.
# Static guest tests/guest/io_poll.c, musl and glibc builds, each compared with its native run.

load helpers

setup() {
	require_pvx
	cd "$BATS_TEST_TMPDIR"
}

FLAVOURS=("" .glibc)

# io MODE: compare every flavour of io_poll MODE with its native run
io() {
	local f
	for f in "${FLAVOURS[@]}"; do
		compare_native_status 0 "$(guest io_poll$f)" "$@" || return 1
	done
}

@test "io: poll revents of pipe ends: empty, data, full, EOF, no reader, bad fd, fd -1" {
	io ready
	grep -qx 'writer closed, data left: poll = 1 revents IN HUP' "$sandbox_out"
	grep -qx 'reader closed, write end: poll = 1 revents OUT ERR' "$sandbox_out"
	grep -qx 'fd 999 (not open): poll = 1 revents NVAL' "$sandbox_out"
}

@test "io: select and pselect sets; EBADF for a closed fd in a set" {
	io select
	grep -qx 'closed fd in the read set: select = -1 EBADF' "$sandbox_out"
}

@test "io: timeouts expire; select and the raw ppoll/pselect6 leave the time that remained" {
	io timeout
	grep -qx 'raw ppoll, empty pipe, 30 ms: 0, timespec left 0.000000000' "$sandbox_out"
	grep -qx 'select with data, 5 s: 1, time left between 4 s and 5 s: yes' "$sandbox_out"
}

@test "io: ppoll's signal mask: a pending signal it unblocks ends the wait, unless an fd is ready" {
	io ppoll-mask
	grep -q '^ppoll, nothing ready, SIGUSR1 pending and unblocked by its mask: -1 EINTR, handler ran 1' "$sandbox_out"
	grep -qx 'ppoll, fd ready, SIGUSR1 pending: 1 0, handler ran 0, still pending yes, blocked yes' "$sandbox_out"
}

@test "io: pselect's signal mask: a pending signal it unblocks ends the wait, unless an fd is ready" {
	io pselect-mask
	grep -q '^pselect, nothing ready, SIGUSR1 pending and unblocked by its mask: -1 EINTR, handler ran 1' "$sandbox_out"
}

@test "io: a signal unblocked only by ppoll's or pselect's mask interrupts the wait" {
	io mask-wait
	grep -q '^ppoll waiting forever.*: -1 EINTR, handler ran 1, blocked again yes' "$sandbox_out"
	grep -q '^pselect waiting forever.*: -1 EINTR, handler ran 1, blocked again yes' "$sandbox_out"
}

@test "io: EINVAL for a bad sigsetsize or timeout, EFAULT for bad pollfd and fd_set pointers" {
	io errors
}

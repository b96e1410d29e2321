#!/usr/bin/env bats
# Issue 11: a guest blocked in a host call does not stall the sandbox (finding 14), unknown syscall numbers
# return ENOSYS (LTP syscall02), and /proc shows a sleeper as S and a zombie as Z (LTP waits for them).
# Guests tests/guest/sec_block_wait.c, sec_block_state.c and sec_block_nosys.c, musl and glibc builds,
# each compared with its native run. A sandbox that hangs fails by timeout (status 124).

load helpers

setup() {
	require_pvx
	cd "$BATS_TEST_TMPDIR"
	PVX_TIMEOUT=60
}

# wait_kind KIND: sec_block_wait KIND in every mode, both builds, against native runs (makes a FIFO: --rw).
# What the sandbox printed in each mode stays in $BATS_TEST_TMPDIR/MODE.out.
wait_kind() {
	local m
	PVX_OPTS=(--rw)
	for m in progress eintr restart thread; do
		compare_flavours 0 sec_block_wait "$1" "$m" || return 1
		cp "$sandbox_out" "$BATS_TEST_TMPDIR/$m.out"
	done
}

# printed MODE LINE: the sandbox's run of MODE printed LINE
printed() {
	grep -qxF "$2" "$BATS_TEST_TMPDIR/$1.out"
}

@test "block: busybox sh 'mkfifo f; cat f & echo x > f; wait' prints x, as natively" {
	require_prog "$BUSYBOX"
	PVX_OPTS=(--rw)
	compare_native_status 0 "$BUSYBOX" sh -c 'rm -f f; mkfifo f; cat f & echo x > f; wait; rm f'
	grep -qx x "$sandbox_out"
}

@test "block: FIFO open for reading waits with the sandbox running; EINTR or SA_RESTART; no O_NONBLOCK left" {
	wait_kind fifo_rd
	printed progress 'fifo_rd: second child ran'
	printed progress 'open fifo 02: F_GETFL 02'
	printed eintr 'fifo_rd: call returned -1 EINTR'
	printed restart 'fifo_rd: call returned ok, read x'
	printed thread 'fifo_rd: main thread ran while the other thread was blocked'
}

@test "block: FIFO open for writing waits with the sandbox running; EINTR or SA_RESTART" {
	wait_kind fifo_wr
	printed progress 'fifo_wr: child asleep: S'
	printed eintr 'fifo_wr: call returned -1 EINTR'
}

@test "block: O_CREAT|O_TRUNC open of a FIFO (a shell's >) waits with the sandbox running" {
	wait_kind fifo_creat
	printed progress 'fifo_creat: second child ran'
}

@test "block: reopening a FIFO through /proc/self/fd/N waits with the sandbox running" {
	wait_kind fifo_proc
	printed progress 'fifo_proc: second child ran'
}

@test "block: read of a FIFO without data: the reader sleeps (S), the sandbox runs" {
	wait_kind fifo_read
	printed progress 'fifo_read: second child ran'
}

@test "block: read of an empty pipe: the reader sleeps (S), the sandbox runs" {
	wait_kind pipe_read
	printed progress 'pipe_read: second child ran'
}

@test "block: write to a full pipe: the writer sleeps (S), the sandbox runs; EINTR or SA_RESTART" {
	wait_kind pipe_write
	printed progress 'pipe_write: second child ran'
}

@test "block: flock of a locked file: the waiter sleeps (S), the sandbox runs; EINTR or SA_RESTART" {
	wait_kind flock
	printed progress 'flock: second child ran'
}

@test "proc state: self R; blocked in read, pause, nanosleep, sigsuspend, wait4, futex, FIFO open: S" {
	local k
	PVX_OPTS=(--rw)
	for k in self pipe_read pause nanosleep sigsuspend wait4 futex fifo_open; do
		compare_flavours 0 sec_block_state "$k" || return 1
	done
	grep -qx 'fifo_open: stat S, status S (sleeping)' "$sandbox_out"
}

@test "proc state: a child that exited and was not waited for is a zombie (Z)" {
	compare_flavours 0 sec_block_state zombie
	grep -qx 'zombie: stat Z, status Z (zombie)' "$sandbox_out"
}

@test "proc state: a vfork parent waits in D until its child exits" {
	compare_flavours 0 sec_block_state vfork
	grep -qx 'vfork: parent seen by its child: stat D' "$sandbox_out"
}

@test "nosys: syscall -1, numbers past the table, x32 numbers: ENOSYS; the upper half of rax is ignored" {
	compare_flavours 0 sec_block_nosys
	grep -qx 'syscall 0xffffffffffffffff: ENOSYS' "$sandbox_out"
	grep -qx 'still alive' "$sandbox_out"
	# x32 numbers: ENOSYS as on a kernel without x32 (natively it depends on the kernel)
	pvx_run "$(guest sec_block_nosys)" x32
	assert_status 0
	[[ $output == *"syscall 0x40000027: ENOSYS"* && $output == *"syscall 0x7fffffff: ENOSYS"* ]]
	[[ $output != *ran* && $output == *"still alive"* ]]
}

@test "nosys: --strace names unknown numbers and the guest goes on" {
	PVX_OPTS=(--strace)
	pvx_run_split "$(guest sec_block_nosys)"
	assert_status 0
	assert_contains "$output" "still alive"
	assert_contains "$PVX_STDERR_TEXT" "syscall_-1("
	assert_contains "$PVX_STDERR_TEXT" "= -1 ENOSYS"
}

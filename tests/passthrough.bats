#!/usr/bin/env bats
# Issue 16: on the seccomp platform the stub serves read(2)/pread64(2) of a regular host file itself from the
# 4th read of an open file on (sentry/platform/seccomp_passthrough.md). The same output as natively for reads
# that mix with lseek, readv, dup2, close, fork, threads, unshare and exec (tests/guest/passthru.c, which says
# on stderr whether the stub held the file at that point: the tests check the feature was really exercised),
# and the hostile side: a guest jumping to the passthrough site (tests/guest/sec_stub_passthru.c).

load helpers

setup() {
	require_pvx
	cd "$BATS_TEST_TMPDIR"
	head -c 300000 /dev/urandom >a.bin
	cp a.bin a.bin.orig
	head -c 200000 /dev/urandom >b.bin
}

only_seccomp() {
	[[ $PVX_PLATFORM == seccomp ]] || skip "$PVX_PLATFORM platform: $1"
}

# passthru MODE: native vs sandbox for both builds; on seccomp the stub held fd 3 at first (stderr says so),
# on the other platforms never.
passthru() {
	local f
	for f in "" .glibc; do
		compare_native "$(guest passthru$f)" "$1" "$PWD/a.bin" "$PWD/b.bin" || return 1
		[[ $native_status == 0 ]] || { cat "$native_out" >&2; return 1; }
		if [[ $PVX_PLATFORM == seccomp && ${PVX_PASSTHROUGH:-1} != 0 ]]; then
			grep -q '^pt 3: on$' "$sandbox_err" || { echo "passthrough was never on" >&2; cat "$sandbox_err" >&2; return 1; }
		else
			! grep -q '^pt 3: on$' "$sandbox_err" || { echo "passthrough on $PVX_PLATFORM" >&2; return 1; }
		fi
	done
}

@test "sha256sum of a 16 MiB file: the same sum as natively" {
	head -c 16M /dev/urandom >big.bin
	compare_native /bin/busybox sha256sum "$PWD/big.bin"
	cat big.bin >>b.bin
	compare_native /bin/busybox sha256sum "$PWD/big.bin" "$PWD/b.bin" "$PWD/a.bin"
}

@test "read, pread, lseek and readv mixed on one file: the same data and offsets, EFAULT and EINVAL" {
	passthru mix
}

@test "PVX_PASSTHROUGH=0: the same output, and the stub never holds the file" {
	PVX_PASSTHROUGH=0 passthru mix
}

@test "dup2 of a pipe onto the fd: the pipe's data, EAGAIN, EOF, ESPIPE" {
	passthru pipe
}

@test "close and open of another file at the same number: that file's data" {
	passthru reopen
}

@test "reads in a fork child and in the parent after it share one offset" {
	passthru fork
}

@test "a thread reading while another closes and dup2's over the fd reads no file that was not open there" {
	passthru race
	assert_contains "$(cat "$sandbox_out")" "never open there: 0"
}

@test "unshare(CLONE_FILES), then close: EBADF, the old table is not read" {
	passthru unshare
}

@test "a CLONE_VM child without CLONE_FILES closes the fd: EBADF there, the parent still reads" {
	passthru vm
}

@test "a vfork child closes the fd: EBADF there, the parent still reads" {
	passthru vfork
}

@test "an O_CLOEXEC fd read by the stub is gone after execve" {
	passthru exec
}

@test "a child that reads, then asks to be traced: its parent sees a syscall stop for every later read" {
	passthru traced
	assert_contains "$(cat "$sandbox_out")" "read syscall stops 20"
}

@test "a pipe's read end: reads that wait, EAGAIN, EINTR, 1 MiB in 4 KiB reads, EOF, EPIPE after close and exit" {
	passthru pipes
	assert_contains "$(cat "$sandbox_out")" "after the reader's close: write -1 EPIPE"
	assert_contains "$(cat "$sandbox_out")" "after the reader's exit: write -1 EPIPE"
}

@test "a pipe's write end: records never torn, EAGAIN when full, a write that waits, 100 KB, SIGIO, EPIPE with SIGPIPE" {
	local f
	for f in "" .glibc; do
		compare_native "$(guest passthru$f)" pipew x || return 1
		if [[ $PVX_PLATFORM == seccomp ]]; then
			# the stub held the write end after the warm-up (that SIGIO is seen after O_ASYNC shows the
			# stub stopped serving it then: its writes never reach the sentry's SIGIO)
			[[ $(grep '^ptw 4: ' "$sandbox_err" | head -1) == "ptw 4: on" ]] ||
				{ echo "the stub did not hold the write end" >&2; cat "$sandbox_err" >&2; return 1; }
		fi
	done
	assert_contains "$(cat "$sandbox_out")" "records 4000 torn 0"
	assert_contains "$(cat "$sandbox_out")" "SIGIO seen"
	assert_contains "$(cat "$sandbox_out")" "write after the reader's close: -1 EPIPE, SIGPIPE 1"
	assert_contains "$(cat "$sandbox_out")" "write 2 after the reader's close: -1 EPIPE, SIGPIPE 4"
	[[ $PVX_PLATFORM != seccomp ]] || [[ $(grep '^ptw ' "$sandbox_err" | tail -1) == "ptw 4: on" ]] ||
		{ echo "the stub did not hold the second pipe's write end" >&2; cat "$sandbox_err" >&2; return 1; }
}

@test "dd | wc and yes | head: a pipe the stub reads gives the same bytes and ends its writer" {
	compare_native /bin/busybox sh -c '/bin/busybox dd if=/dev/zero bs=64k count=300 2>/dev/null | /bin/busybox wc -c'
	compare_native /bin/busybox sh -c '/bin/busybox yes | /bin/busybox head -c 300000 | /bin/busybox md5sum'
}

# The hostile side: seccomp only (the site is the seccomp stub's; elsewhere a jump there is a guest syscall).
hostile() {
	PVX_TIMEOUT=20 pvx_run_split "$(guest sec_stub_passthru)" "$1" "$PWD/a.bin"
	echo "status=$status out=$output err=$PVX_STDERR_TEXT" >&2
	assert_contains "$output" "while open: read"	# the stub held the file: the attack had something to aim at
	assert_not_contains "$output" ESCAPE
}

@test "hostile: openat, and read or write of fd 799 and fd 928 at the passthrough site kill the process (SIGSYS)" {
	only_seccomp "the passthrough site is the seccomp stub's"
	local m
	for m in openat below above wbelow wabove; do
		hostile $m
		[[ $status == 159 ]] || { echo "$m: status $status" >&2; return 1; }
	done
}

@test "hostile: the passthrough site reads no fd whose file is not open there (never open, closed, dup2'd over)" {
	only_seccomp "the passthrough site is the seccomp stub's"
	hostile clear
	assert_status 0
	assert_contains "$output" "never open: EBADF"
	hostile closed
	assert_status 0
	assert_contains "$output" "closed: EBADF"
	hostile dup2
	assert_status 0
	assert_contains "$output" "dup2: "
}

@test "hostile: a write at the passthrough site reaches only a pipe's write end the guest holds, never waits" {
	only_seccomp "the passthrough site is the seccomp stub's"
	hostile write
	assert_status 0
	assert_contains "$output" "write to a read-only file: EBADF"
	cmp a.bin "$BATS_TEST_TMPDIR/a.bin.orig"
	hostile pipew
	assert_status 0
	assert_contains "$output" "write end held: yes"
	assert_contains "$output" "write to the read end: EBADF"
	assert_contains "$output" "read of the write end: EBADF"
	assert_contains "$output" "100000 bytes: 65536"
	assert_contains "$output" "1 byte into the full pipe: EAGAIN"
}

@test "hostile: a pipe's dup at the passthrough site never waits (EAGAIN when empty), ESPIPE, EBADF once closed" {
	only_seccomp "the passthrough site is the seccomp stub's"
	hostile pipe
	assert_status 0
	assert_contains "$output" "pipe empty: EAGAIN"
	assert_contains "$output" "pipe pread: ESPIPE"
	assert_contains "$output" "pipe with data: 4"
	assert_contains "$output" "pipe closed: EBADF"
}

@test "hostile: after unshare(CLONE_FILES) and in a CLONE_VM child without CLONE_FILES the other table is not read" {
	only_seccomp "the passthrough site is the seccomp stub's"
	hostile unshare
	assert_status 0
	assert_contains "$output" "closed: EBADF"
	hostile vm
	assert_status 0
	assert_contains "$output" "own table: EBADF"
	assert_contains "$output" "child status 0"
}

@test "hostile: dup3 at the stub's generic site only installs: not of its sockets or a passthrough fd, not below 800, no flags" {
	only_seccomp "the install's dup3 is the seccomp stub's"
	local m
	for m in dup3-sock dup3-ksock dup3-pt dup3-below dup3-flags; do
		hostile $m
		[[ $status == 159 ]] || { echo "$m: status $status" >&2; return 1; }
	done
}

@test "hostile: the control page (the passthrough bitmap) is not writable, by a store or by mprotect" {
	only_seccomp "the control page is the seccomp stub's"
	hostile ctl
	assert_contains "$output" "store to the control page: fault"
	[[ $status == 159 ]]
}

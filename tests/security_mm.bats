#!/usr/bin/env bats
# Memory management under a hostile or merely big guest (issue 11): VMA bookkeeping that stays O(log n)
# under the sentry lock, shared file mappings and shared futexes that lose nothing, a memory bound.

load helpers

setup() {
	require_pvx
	cd "$BATS_TEST_TMPDIR"
}

# Base pvx kept VMAs in an array and split it on every mprotect, also one that changes nothing: 100000
# of those took 30 s (ptrace) to 105 s (seccomp), 200000 four times as long. Natively they take 0.3 s;
# with the tree, 2-7 s on a loaded 2-core machine. The bound only says "did not hang".
@test "mm: 200000 mprotects on one mapping finish under timeout 90 (O(log n) VMA bookkeeping)" {
	PVX_TIMEOUT=90 compare_native_status 0 "$(guest sec_mm_vmas)" same 200000
}

@test "mm: neighbouring mappings merge into one VMA as on Linux: /proc/self/maps and mremap see one" {
	compare_flavours 0 sec_mm_merge "$LINES"
}

# LTP setpgid03's checkpoints: the futex word lives in a file that each process opened and mapped itself.
@test "mm: a shared futex in a file mapped separately by two processes (fork+exec) is woken" {
	PVX_OPTS=(--rw)
	compare_flavours 0 sec_mm_futex "$BATS_TEST_TMPDIR/futex-file"
	grep -qx 'parent: the wait was woken' "$sandbox_out"
}

# LTP mmap21: an 8 MiB MAP_SHARED file mapping, written up to its last byte, then msync, munmap, a child
# writing and the parent syncing, or exit with neither. Base pvx wrote the file but read(), pread(),
# readv() and writev() of a regular file stopped at 1 MiB, so the read-back saw none of the rest.
@test "mm: an 8 MiB shared file mapping reaches the file whole (msync, munmap, fork, exit) and reads back whole" {
	PVX_OPTS=(--rw)
	local f=$BATS_TEST_TMPDIR/shared-file mode
	for mode in msync munmap fork exit; do
		(_exec_stdio_only "$(guest sec_mm_shared)" "$f" "$mode") >native.out
		cp "$f" native.file
		compare_flavours 0 sec_mm_shared "$f" "$mode"
		cmp "$f" native.file
		if [[ $mode != exit ]]; then
			grep -qx 'one read: 8388608 bytes, 0 bad' "$sandbox_out"
			cmp "$f" "$f.copy"
		fi
	done
	# the last bytes, written by the sandbox that exited without msync or munmap
	[[ $(tail -c 2 "$f" | od -An -c | tr -d ' ') == HI ]]
}

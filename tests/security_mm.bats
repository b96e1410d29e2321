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

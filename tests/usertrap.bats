#!/usr/bin/env bats
# Issue 16: on the seccomp platform a syscall site "mov $nr,%eax; syscall" (or glibc's read: "xor %eax,%eax;
# syscall; cmp $-4096,%rax") is patched after its first trap to
# enter the stub without a signal (sentry/platform/seccomp_patch.md, mm/usertrap.c). The same output as
# natively for registers, FPU, red zone and flags across the calls, signals, restarts (SA_RESTART and
# restart_syscall), threads racing the patch, code the guest makes writable and rewrites, fork (the host's and
# the copy), a guest GS base and a guest mapping where the trap table is (tests/guest/usertrap.c, whose stderr
# says whether the sites were patched: the tests check the path was taken); and the hostile side: jumps into the
# trampoline, a forged self pointer and escalation.

load helpers

HANG=20

setup() {
	require_pvx
	cd "$BATS_TEST_TMPDIR"
}

patching() {
	[[ $PVX_PLATFORM == seccomp && ${PVX_SECCOMP_PATCH:-8} != 0 ]]
}

# usertrap MODE [STDERR-LINE...]: native vs sandbox for both builds; on seccomp each STDERR-LINE is in the
# sandbox's stderr (elsewhere no site is ever patched).
usertrap() {
	local f mode=$1 line
	shift
	for f in "" .glibc; do
		compare_native "$(guest usertrap$f)" "$mode" || return 1
		[[ $native_status == 0 ]] || { cat "$native_out" >&2; return 1; }
		if patching; then
			for line in "$@"; do
				grep -qx "$line" "$sandbox_err" || { echo "no '$line'" >&2; cat "$sandbox_err" >&2; return 1; }
			done
		else
			! grep -q 'patched' "$sandbox_err" || { echo "patched on $PVX_PLATFORM" >&2; return 1; }
		fi
	done
}

@test "registers, xmm0-15, the red zone and the flags are kept across a patched syscall; rcx and r11 as a syscall's" {
	usertrap regs "regs site: patched"
}

@test "with PVX_SECCOMP_PATCH=0 nothing is patched; with 1 a site is at its first trap" {
	PVX_SECCOMP_PATCH=0 usertrap regs
	PVX_SECCOMP_PATCH=0 usertrap fork
	PVX_SECCOMP_PATCH=1 usertrap fork "child's getppid site: patched"
}

@test "glibc's read (xor; syscall; cmp): patched as a whole, also when the passthrough serves it; the cmp's flags and r11 as natively" {
	usertrap readshape "read shape site after 600 pipe reads: patched" "read shape site: patched"
	# a restart goes back to its syscall (a #GP at the jump's SIB byte), a return with a frame to its cmp (a #UD)
	READ_SHAPE=1 PVX_PASSTHROUGH=0 usertrap restart "read site: patched"
}

@test "a timer's handler that uses the FPU runs 200 times between patched syscalls: nothing of the guest's is lost" {
	usertrap signals "signals site: patched"
}

@test "a read blocked at a patched site: restarted after an SA_RESTART handler, EINTR without" {
	# (the passthrough would serve the pipe's reads in the stub, and the site would never trap enough to be patched)
	PVX_PASSTHROUGH=0 usertrap restart "read site: patched"
}

@test "a nanosleep at a patched site, stopped and continued: restart_syscall finishes it" {
	usertrap stopsleep "nanosleep site: patched"
}

@test "four threads race through fresh sites from their first call: every answer right" {
	usertrap threads "gettid site: patched"
}

@test "a patched page made writable reads as the original code; rewritten and made executable, the new code runs" {
	usertrap rewrite "smc site before: patched"
}

@test "patched sites run in a forked child, by the host's fork and by the copy" {
	usertrap fork "child's getppid site: patched"
	PVX_FORK=copy usertrap fork "child's getppid site: patched"
}

@test "a guest that sets its own GS base: every site goes back first, its GS is its own" {
	usertrap gs "gs site before: patched" "gs site after: original"
}

@test "a guest mapping where the trap table is: its data stays its own, the sites go on working" {
	usertrap table "table site before: patched"
}

@test "busybox find, sh and sha256sum: the same output as natively, with sites patched" {
	compare_native /bin/busybox find /usr/include -name '*.h'
	compare_native /bin/busybox sh -c 'for i in 1 2 3; do /bin/busybox true; done; echo done'
	head -c 1M /dev/zero >z
	compare_native /bin/busybox sha256sum "$PWD/z"
}

@test "11: jumps into the trampoline with a free slot or one out of range, a forged self pointer, a forged escalation: SIGSEGV, the sandbox goes on" {
	[[ $PVX_PLATFORM == seccomp ]] || skip "$PVX_PLATFORM platform: no trampoline"
	PVX_TIMEOUT=$HANG pvx_run_split "$(guest usertrap)" hostile
	echo "status=$status out=$output err=$PVX_STDERR_TEXT" >&2
	assert_contains "$output" "hostile: 2 SIGSEGV for 2 jumps"
	assert_contains "$output" "after a forged escalation wrong 0"
	assert_contains "$output" "forged self pointer: SIGSEGV 1, then wrong 0"
	[[ $status == 0 ]]
}

#!/usr/bin/env bats
# Sandbox integrity and robustness: hostile guests aimed at the stub, legacy syscall entries, VMA stress,
# big argument vectors, several sandboxes at once.

load helpers

setup() {
	require_pvx
	cd "$BATS_TEST_TMPDIR"
	STUB=$(sed -n 's/^#define PVX_GUEST_TASK_SIZE \(0x[0-9a-fA-F]*\)UL.*/\1/p' "$BATS_TEST_DIRNAME/../include/pvx/guest_layout.h")
}

@test "vmas: a random walk of mmap/munmap/mprotect/madvise matches a model, natively and sandboxed (musl)" {
	compare_native_status 0 "$(guest vmas)" "$LINES" 3000
	grep -qx 'model mismatches: 0' "$sandbox_out"
}

@test "vmas: a random walk of mmap/munmap/mprotect/madvise matches a model, natively and sandboxed (glibc)" {
	compare_native_status 0 "$(guest vmas.glibc)" "$LINES" 3000
}

@test "the guest cannot map, unmap or reprotect the stub's range" {
	[[ -n $STUB ]] || fail_msg "PVX_GUEST_TASK_SIZE not found in include/pvx/guest_layout.h"
	pvx_run "$(guest stubpoke)" "$STUB" map
	assert_status 0
	assert_contains "$output" "mmap MAP_FIXED at ADDR: ENOMEM"
	assert_contains "$output" "mmap MAP_FIXED straddling ADDR: ENOMEM"
	assert_contains "$output" "mmap hint ADDR lands below ADDR: yes"
	assert_contains "$output" "mprotect ADDR: ENOMEM"
	assert_contains "$output" "mprotect ADDR+4096 rwx: ENOMEM"
	assert_contains "$output" "brk to ADDR refused: yes"
	assert_not_contains "$output" "mremap to ADDR: addr"
	assert_contains "$output" "getpid=1"$'\n'"alive"
}

@test "a guest store into the stub dies of SIGSEGV" {
	[[ -n $STUB ]] || fail_msg "PVX_GUEST_TASK_SIZE not found"
	pvx_run_split "$(guest stubpoke)" "$STUB" write
	assert_status 139
	assert_not_contains "$output" "wrote into the stub"
	assert_contains "$PVX_STDERR_TEXT" "Segmentation fault"
}

@test "a guest load from the stub dies of SIGSEGV" {
	[[ -n $STUB ]] || fail_msg "PVX_GUEST_TASK_SIZE not found"
	[[ $PVX_PLATFORM != ptrace && $PVX_PLATFORM != seccomp ]] || skip "$PVX_PLATFORM platform: the stub shares the guest's mm and its code is readable (known limitation)"
	pvx_run_split "$(guest stubpoke)" "$STUB" read
	assert_status 139
	assert_not_contains "$output" "from the stub"
}

@test "a guest jumping into the stub's syscall gadget gets no host syscall" {
	[[ -n $STUB ]] || fail_msg "PVX_GUEST_TASK_SIZE not found"
	pvx_run_split "$(guest stubpoke)" "$STUB" gadget
	echo "status=$status out=$output err=$PVX_STDERR_TEXT" >&2
	# either killed (any signal, with the message) or, if emulated, it saw the sandbox pid 1
	if [[ $output == *"returned "* ]]; then
		assert_contains "$output" "returned 1"$'\n'
	else
		((status > 128))
		[[ -n $PVX_STDERR_TEXT ]]
	fi
	assert_not_contains "$output" "returned $$"
}

@test "stubjump: running getpid through a syscall instruction found in the stub never reaches the host" {
	pvx_run_split "$(guest stubjump)"
	echo "status=$status out=$output err=$PVX_STDERR_TEXT" >&2
	# emulated (pid 1) or killed; a host pid would be an escape
	if [[ $output == *"escaped: getpid() = "* ]]; then
		[[ $output =~ escaped:\ getpid\(\)\ =\ 1$ ]]
	else
		((status > 128))
		[[ -n $PVX_STDERR_TEXT ]]
	fi
}

@test "int \$0x80 from 64-bit code is never misread as the x86-64 syscall" {
	local g
	g=$(guest int80)
	run "$g"
	local native=$status
	pvx_run_split "$g"
	echo "native=$native sandbox=$status out=$output err=$PVX_STDERR_TEXT" >&2
	assert_not_contains "$output" "wrong"
	assert_not_contains "$output" "int80: returned"
	# emulated like the host (i386 exit(5)) or the guest is killed with a message
	if [[ $status != "$native" ]]; then
		((status > 128))
		[[ -n $PVX_STDERR_TEXT ]]
	fi
}

@test "a large argv and environment reach the guest intact" {
	local g args=() i big
	g=$(guest hello)
	for ((i = 0; i < 3000; i++)); do args+=("arg-$i"); done
	big=$(head -c 100000 /dev/zero | tr '\0' x)
	compare_native_status 0 "$g" "${args[@]}" "$big"
	grep -qx 'argc=3002' "$sandbox_out"
	grep -qx 'argv\[3001\]=<.*> len=100000' "$sandbox_out"
	PVXT_BIG=$big compare_native_status 0 "$(guest envp)"
}

@test "argv too large for the stack fails cleanly (E2BIG natively)" {
	local g big
	g=$(guest hello)
	big=$(head -c 120000 /dev/zero | tr '\0' y)
	local args=()
	for ((i = 0; i < 100; i++)); do args+=("$big"); done
	# natively: E2BIG from execve -> bash reports 126
	run "$g" "${args[@]}"
	[[ $status != 0 ]]
	pvx_run_split "$g" "${args[@]}"
	echo "status=$status err=$PVX_STDERR_TEXT" >&2
	[[ $status != 0 ]]
	[[ -n $PVX_STDERR_TEXT ]]
	assert_not_contains "$output" "hello, world"
}

@test "eight sandboxes at once" {
	local g i pids=()
	g=$(guest vmas)
	"$g" "$LINES" 2000 >native.out
	for ((i = 0; i < 8; i++)); do
		timeout 120 "$PVX" run --platform="$PVX_PLATFORM" -- "$g" "$LINES" 2000 >"par.$i.out" 2>"par.$i.err" &
		pids+=($!)
	done
	for i in "${!pids[@]}"; do
		wait "${pids[$i]}" || { echo "sandbox $i failed" >&2; cat "par.$i.err" >&2; false; }
		cmp native.out "par.$i.out"
	done
}

# kill_pvx_and_check SIGNAL: start a busy guest, kill pvx with SIGNAL, check its stub did not outlive it
kill_pvx_and_check() {
	require_prog "$BASH_STATIC"
	"$PVX" run --platform="$PVX_PLATFORM" -- "$BASH_STATIC" --norc -c 'while :; do :; done' &
	local pid=$! children c state i
	# until pvx has its stub (10 s at most: a fixed 0.5 s was tight for a start under QEMU's software CPU)
	for ((i = 0; i < 100; i++)); do
		children=$(pgrep -P "$pid" || true)
		[[ -z $children ]] || break
		sleep 0.1
	done
	[[ -n $children ]]
	kill -"$1" "$pid"
	wait "$pid" || true
	for c in $children; do
		# gone, or a zombie waiting for a reaper, is fine; running or stopped is not. A dying stub may
		# still run its exit for a while on a slow machine: give it 10 s, not a fixed 0.3 s.
		for ((i = 0; i < 100; i++)); do
			state=$(awk '{ print $3 }' "/proc/$c/stat" 2>/dev/null || true)
			[[ -n $state && $state != Z && $state != X ]] || break
			sleep 0.1
		done
		if [[ -n $state && $state != Z && $state != X ]]; then
			echo "stub $c still alive (state $state) after SIG$1 to pvx" >&2
			kill -KILL "$c"
			return 1
		fi
	done
}

@test "pvx killed by SIGTERM leaves no stub process behind" {
	kill_pvx_and_check TERM
}

@test "pvx killed by SIGKILL leaves no stub process behind" {
	kill_pvx_and_check KILL
}

@test "SIGINT to pvx ends the guest like a shell would (130)" {
	require_prog "$BASH_STATIC"
	# background jobs of a non-interactive shell start with SIGINT ignored: restore the default
	env --default-signal=INT "$PVX" run --platform="$PVX_PLATFORM" -- "$BASH_STATIC" --norc -c 'while :; do :; done' &
	local pid=$! st=0
	sleep 0.5
	kill -INT "$pid"
	# watchdog: never hang the suite
	(sleep 10; kill -KILL "$pid" 2>/dev/null) &
	local dog=$!
	wait "$pid" || st=$?
	kill "$dog" 2>/dev/null || true
	echo "status $st" >&2
	[[ $st == 130 ]]
}

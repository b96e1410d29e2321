#!/usr/bin/env bats
# execve(2) into the old stub (issue 16: exec reuses the stub when the process is alone in it). Static guest
# tests/guest/exec_reuse.c, musl and glibc builds, each compared with its native run; then the reused stub,
# looked at from the host, against a fresh one.

load helpers

setup() {
	require_pvx
	cd "$BATS_TEST_TMPDIR"
	chmod 777 .	# the guest writes a file here, whatever host uid the sandbox uses
	PVX_OPTS=(--rw)
}

probe_lines=('secret page: write Bad address, load Segmentation fault' 'memfd page: write Bad address, load Segmentation fault'
	'shm page: write Bad address, load Segmentation fault' 'locked page: write Bad address, load Segmentation fault'
	'mxcsr 0x1f80 fcw 0x37f xmm5 0' 'threads: 1')

@test "exec reuse: nothing of the old image (pages at fixed addresses, a MAP_SHARED memfd, shm, FPU) reaches the new one" {
	compare_flavours 0 exec_reuse old
	has 'exec notelf: Exec format error' 'after failed execs: old image intact' "${probe_lines[@]}"
}

@test "exec reuse: the same from a forked child; the parent keeps its own image" {
	compare_flavours 0 exec_reuse old fork
	has "${probe_lines[@]}" 'child: exit 0' 'after the child'"'"'s exec: old image intact' 'mxcsr 0x7f80 fcw 0xf7f xmm5 0x5ec7e75ec7e7'
}

@test "exec reuse: an exec from a second thread (the leader asleep in pause) and one racing threads that spin, block or call" {
	compare_flavours 0 exec_reuse old thread
	has "${probe_lines[@]}"
	compare_flavours 0 exec_reuse old spin
	has "${probe_lines[@]}"
}

# maps_of ARGS...: the address-free /proc/self/maps lines the guest prints, in the sandbox
maps_of() {
	"$PVX" run --platform="$PVX_PLATFORM" --rw -- "$(guest exec_reuse)" "$@" | grep -E '^[r-][w-][x-][ps] ' | sort
}

@test "exec reuse: /proc/self/maps after an exec in place is what a fresh stub shows" {
	local fresh direct forked
	fresh=$(maps_of maps)
	direct=$(maps_of old '' maps)
	forked=$(maps_of old fork maps)
	echo "fresh:"$'\n'"$fresh" >&2
	[[ -n $fresh && $(wc -l <<<"$fresh") -ge 4 ]] || fail_msg "no maps"
	[[ $direct == "$fresh" ]] || fail_msg "direct exec: $direct"
	[[ $forked == "$fresh" ]] || fail_msg "forked exec: $forked"
}

# stub_view PID OUT: what the host sees of pvx PID's only stub: threads, fds, the stub's own mappings (exact,
# inodes left out) and the guest's (no addresses); the shared regions past the first one: "zero" or "DATA".
stub_view() {
	local pid=$1 i s
	for ((i = 0; i < 200; i++)); do
		grep -q ready "$2.out" && break
		sleep 0.1
	done
	grep -q ready "$2.out" || { cat "$2.err" >&2; return 1; }
	s=$(pgrep -P "$pid")
	[[ $(wc -w <<<"$s") == 1 ]] || { echo "stubs: $s" >&2; return 1; }
	{
		echo "threads $(ls "/proc/$s/task" | wc -l)"
		echo "fds $(ls "/proc/$s/fd" | sort -n | tr '\n' ' ')"
		awk '$1 >= "7ff000000000" { print $1, $2, $3, $6 } $1 < "7ff000000000" { print "guest", $2, $3, $6 }' "/proc/$s/maps" | sort
		if [[ $PVX_PLATFORM == seccomp ]]; then
			# regions 1..255 of the shared memfd (0x41000 bytes each) follow region 0
			local lo
			lo=$(awk '/pvx-shared/ { split($1, a, "-"); print a[1]; exit }' "/proc/$s/maps")
			python3 - "$s" "$lo" <<-'EOF'
				import sys
				pid, lo = int(sys.argv[1]), int(sys.argv[2], 16)
				with open(f"/proc/{pid}/mem", "rb") as m:
				    m.seek(lo + 0x41000)
				    data = m.read(0x41000 * 255)
				print("regions", "zero" if not any(data) else "DATA at %#x" % (0x41000 + next(i for i, b in enumerate(data) if b)))
			EOF
		fi
	} >"$2.view"
}

@test "exec reuse (hostile): the stub after an exec in place, amid spinning and blocked threads, is a fresh stub's" {
	[[ $PVX_PLATFORM == seccomp || $PVX_PLATFORM == ptrace ]] || skip "$PVX_PLATFORM has no stub process"
	local pid
	"$PVX" run --platform="$PVX_PLATFORM" -- "$(guest exec_reuse)" hold >fresh.out 2>fresh.err &
	pid=$!
	stub_view "$pid" fresh || { kill -KILL "$pid"; return 1; }
	kill -KILL "$pid"
	wait "$pid" || true
	"$PVX" run --platform="$PVX_PLATFORM" --rw --debug -- "$(guest exec_reuse)" old spin hold >reused.out 2>reused.err &
	pid=$!
	stub_view "$pid" reused || { kill -KILL "$pid"; return 1; }
	kill -KILL "$pid"
	wait "$pid" || true
	grep -q 'exec: .*exec_reuse in place, in stub' reused.err || fail_msg "the exec amid threads took a new stub"
	cat fresh.view >&2
	diff -u fresh.view reused.view >&2 || fail_msg "the reused stub differs from a fresh one"
	grep -qx "threads $([[ $PVX_PLATFORM == seccomp ]] && echo 2 || echo 1)" reused.view || fail_msg "stub threads"
	[[ $PVX_PLATFORM != seccomp ]] || grep -qx "regions zero" reused.view || fail_msg "regions"
}

@test "exec reuse: a fork+exec loop spawns no stub process per exec (a vfork child still gets its own)" {
	[[ $PVX_PLATFORM == seccomp ]] || skip "counted on seccomp (ptrace's stubs are traced: no strace -f over them)"
	command -v strace >/dev/null || skip "no strace"
	strace -f -qq -e trace=execve,execveat -e signal=none -o st.txt \
		"$PVX" run --platform=seccomp -- /bin/busybox sh -c 'for i in $(/bin/busybox seq 20); do /bin/busybox true; done'
	local stubs
	stubs=$(grep -c 'execveat(' st.txt || true)
	echo "host execveat calls (stubs spawned): $stubs" >&2
	((stubs <= 2)) || fail_msg "$stubs stubs for 20 fork+exec"
	# posix_spawn (vfork) shares the parent's mm: that exec needs a new stub
	strace -f -qq -e trace=execveat -e signal=none -o st2.txt \
		"$PVX" run --platform=seccomp -- "$(guest fork_cow.glibc)" vfork >/dev/null
	stubs=$(grep -c 'execveat(' st2.txt || true)
	echo "with vfork: $stubs" >&2
	((stubs >= 2)) || fail_msg "a vfork child's exec reused its parent's stub"
}

#!/usr/bin/env bats
# fork(2) and the child's memory (issue 16: fork with the host's copy-on-write). Static guest
# tests/guest/fork_cow.c, musl and glibc builds, each compared with its native run; every test runs
# with the platform's own fork (the host's copy-on-write where the platform has it) and with
# PVX_FORK=copy, the copying fallback.

load helpers

setup() {
	require_pvx
	cd "$BATS_TEST_TMPDIR"
}

# fork_both STATUS MODE: compare_flavours with the platform's fork, then with the copying one.
fork_both() {
	compare_flavours "$@" || return 1
	PVX_FORK=copy compare_flavours "$@"
}

# Does this platform fork by the host? (vmexec copies, for now)
host_fork() {
	[[ $PVX_PLATFORM == ptrace || $PVX_PLATFORM == seccomp ]]
}

@test "fork: the child's memory is one instant of the parent's while another thread writes" {
	host_fork || skip "$PVX_PLATFORM forks by copying pages one after the other: not one instant (issue 16)"
	compare_flavours 0 fork_cow order
	has 'order: 60 forks, children that saw a later high page than low page: 0'
}

@test "fork: MAP_SHARED memfd, shared anonymous memory and System V shm stay shared; private memory does not" {
	fork_both 0 fork_cow shared
	has 'parent sees after the child wrote: memfd child, anon child, private parent, shm child' \
		'child sees after the parent wrote: memfd again, anon again, private child, shm again' 'child: 0'
}

@test "fork (hostile): 1 GiB touched at 16 places and 64 GiB of PROT_NONE: contents kept, private after" {
	fork_both 0 fork_cow sparse
	has "sparse: child saw the parent's pages: yes; parent's page after the child wrote: a"
}

@test "fork: the child has the parent's FPU state (the SSE rounding mode)" {
	fork_both 0 fork_cow fpu
	has "fpu: child has the parent's rounding mode: yes"
}

@test "fork (hostile): threads fork in a loop while their process is SIGKILLed; fork works after" {
	fork_both 0 fork_cow killed
	has 'killed: 20 of 20 forking processes died of SIGKILL' 'a fork afterwards: status 5'
}

@test "fork: busybox sh's command substitutions and fork+exec, with either fork" {
	pvx_run "$BUSYBOX" sh -c 'for i in 1 2 3; do x=$(echo $i); echo $x; done; '"$BUSYBOX"' true && echo done'
	[[ $status == 0 && $output == $'1\n2\n3\ndone' ]]
	PVX_FORK=copy pvx_run "$BUSYBOX" sh -c 'for i in 1 2 3; do x=$(echo $i); echo $x; done'
	[[ $status == 0 && $output == $'1\n2\n3' ]]
}

@test "fork: a process with three busy threads forks: the child has one thread and one instant of memory" {
	fork_both 0 fork_cow threads
	has 'threads: 20 of 20 children had one thread and a still copy'
}

@test "fork (hostile): a fork bomb stops at RLIMIT_NPROC, every process reaped, with either fork" {
	# root natively is exempt from RLIMIT_NPROC (INIT_USER): the sandbox's guest is not root
	pvx_run "$(guest fork_cow)" bomb
	[[ $status == 0 && $output == 'bomb: processes 16, forks failed with another error 0, children not reaped or failed 0, left 0' ]] ||
		fail_msg "$status: $output"
	PVX_FORK=copy pvx_run "$(guest fork_cow.glibc)" bomb
	[[ $status == 0 && $output == 'bomb: processes 16, forks failed with another error 0, children not reaped or failed 0, left 0' ]] ||
		fail_msg "copy: $status: $output"
}

@test "fork: vfork + execve and vfork + _exit, with either fork" {
	fork_both 0 fork_cow vfork
	has 'vfork: 20 of 20 exec'"'"'d children exited 7, 20 of 20 _exit children 9'
}

@test "fork: fork + exec in a loop: every child's output and status right, with either fork" {
	fork_both 0 fork_cow execs
	has 'execs: 50 of 50 children said their number and exited with it'
}

# stubs_of PID: the stub processes of pvx PID (its children)
stubs_of() {
	pgrep -P "$1" | sort -n
}

@test "fork (hostile): a forked stub holds the fds of a fresh one, its own sockets and shared pages, and the filter" {
	host_fork || skip "$PVX_PLATFORM forks by a new stub"
	"$PVX" run --platform="$PVX_PLATFORM" -- "$(guest fork_cow)" hold >hold.out 2>hold.err &
	local pid=$! i s n=0 fds=() socks=() shms=()
	for ((i = 0; i < 200; i++)); do
		grep -q ready hold.out && break
		sleep 0.1
	done
	grep -q ready hold.out || { kill -KILL "$pid"; cat hold.err >&2; return 1; }
	for s in $(stubs_of "$pid"); do
		fds+=("$(ls "/proc/$s/fd" | sort -n | tr '\n' ' ')")
		socks+=("$(readlink "/proc/$s/fd/3" || true) $(readlink "/proc/$s/fd/6" || true)")
		shms+=("$(awk '/pvx-shared|pvx-ctl/ { print $5 }' "/proc/$s/maps" | sort -u | tr '\n' ' ')")
		grep -E '^(Seccomp|NoNewPrivs|CapEff):' "/proc/$s/status" | tr '\n' ' ' >&2
		echo "stub $s: fds ${fds[-1]}; sockets ${socks[-1]}; shared inodes ${shms[-1]}" >&2
		if [[ $PVX_PLATFORM == seccomp ]]; then	# the filter and no_new_privs, inherited by the fork
			grep -q $'^Seccomp:\t2$' "/proc/$s/status" || { kill -KILL "$pid"; return 1; }
			grep -q $'^NoNewPrivs:\t1$' "/proc/$s/status" || { kill -KILL "$pid"; return 1; }
		fi
		n=$((n + 1))
	done
	kill -KILL "$pid"
	wait "$pid" || true
	((n == 2)) || fail_msg "$n stubs"
	# The ptrace stub holds none of its own; the seccomp stub its two sockets (fds 3 and 6)
	[[ ${fds[0]} == "${fds[1]}" ]] || fail_msg "fds differ: ${fds[0]} / ${fds[1]}"
	[[ $PVX_PLATFORM != seccomp ]] || [[ ${fds[0]} == "3 6 " ]] || fail_msg "seccomp stub fds: ${fds[0]}"
	if [[ $PVX_PLATFORM == seccomp ]]; then
		[[ ${socks[0]} != "${socks[1]}" && ${socks[0]%% *} != "${socks[1]%% *}" && ${socks[0]##* } != "${socks[1]##* }" ]] ||
			fail_msg "shared sockets: ${socks[*]}"
		# two inodes each (regions, control page), none in common
		local all
		all=$(echo "${shms[0]} ${shms[1]}" | tr ' ' '\n' | grep . | sort | uniq -d)
		[[ -z $all && $(echo "${shms[0]}" | wc -w) == 2 ]] || fail_msg "shared pages: ${shms[*]}"
	fi
}

@test "fork: MADV_DONTFORK leaves a range out of the child, MADV_WIPEONFORK zeroes it (grandchildren too); DOFORK, KEEPONFORK, EINVAL, ENOMEM" {
	fork_both 0 fork_advice
	has 'child dontfork: write Bad address, load Segmentation fault' 'child wipe: write ok, load zero' \
		'child middle 2nd: write Bad address, load Segmentation fault' 'grandchild wipe: write ok, load zero' \
		'child keep: write ok, load k' 'child dofork: write ok, load f' 'child hole 1st: write Bad address, load Segmentation fault' \
		'WIPEONFORK on MAP_SHARED file: EINVAL, private file: EINVAL, shared anonymous: EINVAL' 'parent wipe: write ok, load w'
}

#!/usr/bin/env bats
# ptrace(2) of guest tasks by guest tasks (issue 15), emulated in the sentry: a guest that is a small
# tracer of its children (tests/guest/ptrace_guest.c, musl and glibc builds) compared with its native run,
# and hostile checks that only the sandbox can answer (forged registers, the stub's pages, pid 1).

load helpers

setup() {
	require_pvx
	cd "$BATS_TEST_TMPDIR"
}

@test "ptrace: TRACEME then execve stops with SIGTRAP, GETREGS there, CONT runs it to its exit" {
	compare_flavours 0 ptrace_guest traceme
	has 'after exec: stopped sig 5 event 0' 'GETREGS 0, rip nonzero 1, orig_rax is execve 1' 'end: exited 7'
}

@test "ptrace: ATTACH a running child (SIGSTOP stop), PEEK/POKE its memory, PEEKUSER, DETACH lets it go on" {
	compare_flavours 0 ptrace_guest attach
	has 'attached: stopped sig 19 event 0' 'PEEKDATA 0 value 0' 'POKEDATA 0' 'PEEKTEXT after poke 42' \
		'PEEKDATA at 0x10 EIO' 'PEEKDATA to a bad pointer EFAULT' 'PEEKUSER debugreg 0 value 0' \
		'PEEKUSER unaligned EIO, past struct user EIO' 'CONT after detach ESRCH' 'end: exited 42'
}

@test "ptrace: PTRACE_SYSCALL stops at every syscall entry and exit; SETREGS changes a result and skips a call" {
	compare_flavours 0 ptrace_guest syscalls
	has 'child: getppid 4242 skipped getpid 555' 'end: exited 3' 'changed 1 skipped 1'
	grep -Eq '^entries [0-9]+ exits [0-9]+ .* rax -ENOSYS at entry: yes, syscall info ok 1$' "$sandbox_out"
}

@test "ptrace: TRACEEXEC, TRACEFORK (the child traced too), TRACEEXIT events with their messages" {
	compare_flavours 0 ptrace_guest events
	has 'exec event: stopped sig 5 event 4' 'fork event: stopped sig 5 event 1' \
		'grandchild (auto-traced): stopped sig 19 event 0' 'grandchild exit msg 0x400' \
		'grandchild end (to its tracer): exited 4' 'exit msg 0x600' 'child: exited 6'
}

@test "ptrace: signal-delivery stops: suppressed, replaced, ignored signals seen, GETSIGINFO, bad requests" {
	compare_flavours 0 ptrace_guest signals
	has 'GETSIGINFO 0 signo 10 code -6 pid ok 1' 'child: handler for USR2' 'next: stopped sig 1 event 0'
}

@test "ptrace: EPERM for self, own thread, traced already; ESRCH unless traced and stopped; SEIZE, INTERRUPT" {
	compare_flavours 0 ptrace_guest perms
	has 'self EPERM' 'own thread EPERM' 'again EPERM' 'CONT while running ESRCH' 'interrupted: stopped sig 5 event 128'
}

@test "ptrace: ATTACH to a group-stopped child: stopped for the tracer when ATTACH returns; debug registers" {
	compare_flavours 0 ptrace_guest stopped
	has 'GETREGS right after 0' 'dr0 poke 0 0 peek 0 value 2' 'dr4 EIO' 'dr0 kernel address EINVAL' \
		'attach stop: stopped sig 19 event 0' 'end: exited 0'
}

@test "ptrace: LISTEN at a seized child's group stop; INTERRUPT and SIGCONT re-trap it; EIO unless seized and in an event stop" {
	compare_flavours 0 ptrace_guest listen
	has 'seize trap: stopped sig 19 event 128' 'seize trap GETSIGINFO 0 signo 19 code 0x8013 pid ok 1' 'LISTEN 0' \
		'while listening: GETREGS ESRCH, LISTEN ESRCH, CONT ESRCH' 'wait while listening 0' \
		'interrupt re-trap: stopped sig 19 event 128' 'SIGCONT re-trap: stopped sig 5 event 128' \
		'wait before LISTEN 0' 're-trap at LISTEN: stopped sig 5 event 128' 'next: stopped sig 18 event 0' \
		'LISTEN in a signal-delivery stop EIO' 'LISTEN not seized EIO'
}

@test "ptrace: a tracee's exit is its tracer's to reap before its parent's wait returns; a traced thread's exit too" {
	compare_flavours 0 ptrace_guest reap
	has 'tracer: exited 7' "parent's waitpid: ok, the exit code 7, not before the tracer's wait yes" 'leader: exited 8' \
		"threads made 1, their exits seen 1, the leader's after 1"
}

# Debian's strace, a dynamic program, as the tracer (PTRACE_SEIZE, LISTEN, GET_SYSCALL_INFO, process_vm_readv).
@test "strace runs in the sandbox: -f over a pipeline and over threads, -p of a sleeper stopped and continued" {
	command -v strace >/dev/null || skip "no strace (apt-get install strace)"
	run "$PVX" run -- strace -f -e trace=write,exit_group /bin/sh -c 'echo hi | cat >/dev/null'
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	assert_contains "$output" 'write(1, "hi\n", 3)'
	assert_not_contains "$output" 'No child processes'
	[ "$(grep -c '+++ exited with 0 +++' <<<"$output")" -ge 3 ] || { echo "$output"; false; }
	run "$PVX" run -- strace -f -qq -e trace=exit python3 -c \
		'import threading; t = [threading.Thread(target=int) for i in range(3)]; [x.start() for x in t]; [x.join() for x in t]'
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	[ "$(grep -c 'exit(0)' <<<"$output")" -eq 3 ] || { echo "$output"; false; }
	run "$PVX" run -- /bin/bash -c 'sleep 3 & p=$!; sleep 0.5; strace -p $p & s=$!; sleep 0.5; kill -STOP $p; sleep 0.3
		kill -CONT $p; wait $p; echo "sleep $?"; wait $s; echo "strace $?"'
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	assert_contains "$output" 'ERESTART_RESTARTBLOCK'
	assert_contains "$output" '--- stopped by SIGSTOP ---'
	assert_contains "$output" 'restart_syscall(<... resuming interrupted clock_nanosleep ...>) = 0'
	assert_contains "$output" 'sleep 0'
	assert_contains "$output" 'strace 0'
}

@test "ptrace: GETFPREGS/SETFPREGS and NT_PRFPREG read and change a stopped child's xmm0; a bad MXCSR is EINVAL" {
	compare_flavours 0 ptrace_guest fpregs
	has 'GETFPREGS 0 xmm0 0x1122334455667788 cwd 0x37f mxcsr 0x1f80' 'GETREGSET NT_PRFPREG 0 len 512 same xmm0 1' \
		'SETFPREGS bad mxcsr EINVAL' 'SETFPREGS 0' 'child: xmm0 0xcafef00d12345678' 'end: exited 0'
}

@test "ptrace: NT_X86_XSTATE: the XSAVE image; a reserved header or a short one is refused (seccomp, vmexec)" {
	# The ptrace platform gives the sentry the FXSAVE part only (its signal frames too): ENODEV there.
	[[ $PVX_PLATFORM != ptrace ]] || skip "the ptrace platform has no XSAVE state for the sentry"
	compare_flavours 0 ptrace_guest xstate
	has 'GETREGSET NT_X86_XSTATE 0 bigger than FXSAVE 1 same xmm0 1' 'SETREGSET xcomp_bv set EINVAL' \
		'SETREGSET short EFAULT' 'end: exited 0'
}

@test "ptrace: a tracee killed while stopped, PTRACE_KILL" {
	compare_flavours 0 ptrace_guest kill
	has 'after kill: killed by 9' 'after PTRACE_KILL: killed by 9'
}

@test "ptrace: a tracer that exits leaves its stopped tracee running, or killed with PTRACE_O_EXITKILL" {
	compare_flavours 0 ptrace_guest tracerexit
	has 'tracee after tracer exit: exited 5' 'tracee after tracer exit (EXITKILL): killed by 9'
}

@test "ptrace hostile: forged cs/ss/fs_base refused, PEEK/POKE of the stub fail, rip into the stub stays the guest's" {
	local g
	for g in ptrace_guest ptrace_guest.glibc; do
		pvx_run "$(guest $g)" forge
		[ "$status" -eq 0 ]
		for l in 'cs 0x23 EIO' 'cs 0x10 EIO' 'ss 0 EIO' 'POKEUSER cs EIO' 'fs_base in the stub EIO' \
			'gs_base kernel EIO' 'PEEK stub EIO' 'POKE stub EIO' 'POKE stub control EIO' 'still here'; do
			grep -qxF -- "$l" <<<"$output" || { echo "missing: $l"; echo "$output"; return 1; }
		done
		# the stub's syscall instruction run with the guest's registers is a guest syscall (emulated) or a fault
		grep -Eqx 'after: (exited 33|stopped sig 11 event 0)' <<<"$output"
	done
}

@test "ptrace hostile: the sandbox's pid 1 cannot be traced" {
	pvx_run "$(guest ptrace_guest)" init
	[ "$status" -eq 0 ]
	grep -qx 'pid 1 ATTACH EPERM' <<<"$output"
	grep -qx 'pid 1 SEIZE EPERM' <<<"$output"
}

@test "ptrace hostile: a process that set PR_SET_DUMPABLE 0 cannot be attached (no CAP_SYS_PTRACE in the sandbox)" {
	pvx_run "$(guest ptrace_guest)" undumpable
	[ "$status" -eq 0 ]
	grep -qx 'undumpable ATTACH EPERM' <<<"$output"
	grep -qx 'undumpable SEIZE EPERM' <<<"$output"
}

#!/usr/bin/env bats
# Signals (issue 6): handlers and rt_sigreturn, SA_* flags, masks, sigsuspend, sigaltstack, faults,
# default actions, kill() to groups, SIGCHLD. Static guests tests/guest/sig_*.c, musl and glibc builds,
# each compared with its native run (output and exit status).

load helpers

setup() {
	require_pvx
	cd "$BATS_TEST_TMPDIR"
}

# sig WANT_STATUS GUEST ARGS...: compare both builds of GUEST with their native runs
sig() { compare_flavours "$@"; }

@test "signals: handler sees the interrupted registers and rt_sigreturn restores them and the syscall result" {
	sig 0 sig_regs sync
	grep -qx 'handler ran: yes (sig=10 signo=10 code_is_SI_USER=yes pid_is_self=yes)' "$sandbox_out"
	grep -qx 'frame: rax(result)=0 rip_after_syscall=yes rsp=yes' "$sandbox_out"
	grep -qx 'registers after sigreturn: ok' "$sandbox_out"
}

@test "signals: rt_sigreturn loads a frame the handler edited (rax, r12)" {
	sig 0 sig_regs modify
	grep -qx 'registers after sigreturn (edited frame): ok' "$sandbox_out"
}

@test "signals: a signal from another process interrupts a guest spinning without syscalls" {
	sig 0 sig_regs async
	grep -qx 'loop stopped by the handler (before the 2^31 iteration bound): yes' "$sandbox_out"
}

@test "signals: xmm registers and MXCSR survive a handler (FPU state in the frame)" {
	sig 0 sig_regs fpu
	grep -qx 'xmm0/1/7/15 restored after sigreturn: yes' "$sandbox_out"
	grep -qx 'handler MXCSR is the default 0x1f80: yes' "$sandbox_out"
}

@test "signals: the upper halves of ymm registers survive a handler that clobbers them (XSAVE state in the frame)" {
	sig 0 sig_regs avx
	grep -qx 'no AVX' "$sandbox_out" && skip "no AVX on this CPU"
	grep -qx 'frame holds the XSAVE state: yes' "$sandbox_out"
	grep -qx "handler starts with ymm0's upper half zero: yes" "$sandbox_out"
	grep -qx 'ymm0/ymm9 (upper halves too) restored after sigreturn: yes' "$sandbox_out"
}

@test "signals: a syscall keeps every register but rax/rcx/r11 and the red zone while another thread keeps signalling" {
	# seccomp's fast return (stub/stub.c stub_fast_jump): signals that land while it loads the registers
	# are the guest's, at the registers it was loading (without that, this guest dies of SIGSEGV).
	sig 0 sys_regs 20000
	grep -qx 'intact yes, rcx yes, result yes, signals yes' "$sandbox_out"
}

@test "signals: a signal sent around a thread's syscalls is delivered though the thread then computes without one" {
	# seccomp: signals that come in while the stub's SIGSYS handler runs (with the guest's mask) are told
	# on its way out (stub/stub.c trap_handler); dropped, the thread spins to its bound and counts one lost.
	sig 0 sig_kick 3000
	grep -qx 'rounds 3000, lost 0' "$sandbox_out"
}

@test "signals: read from a pipe interrupted by a child's kill: EINTR without SA_RESTART, data with it" {
	sig 0 sig_restart read
	grep -qx 'read: returned -1 EINTR, handler ran 1 time(s)' "$sandbox_out"
	sig 0 sig_restart read restart
	grep -qx 'read (SA_RESTART): returned 4 0, handler ran 1 time(s)' "$sandbox_out"
	grep -qx 'read got <data>' "$sandbox_out"
}

@test "signals: blocking write and wait4 are restarted only with SA_RESTART" {
	sig 0 sig_restart write
	grep -q '^write: returned -1 EINTR' "$sandbox_out"
	sig 0 sig_restart write restart
	grep -q '^write (SA_RESTART): returned 1 0' "$sandbox_out"
	sig 0 sig_restart wait4
	grep -q '^wait4: returned -1 EINTR' "$sandbox_out"
	sig 0 sig_restart wait4 restart
	grep -qx 'wait4 returned the child, exit status 7' "$sandbox_out"
}

@test "signals: nanosleep, poll, select and pause fail with EINTR even under SA_RESTART" {
	local op r
	for op in nanosleep poll select pause; do
		for r in "" restart; do
			sig 0 sig_restart $op $r
			grep -q "returned -1 EINTR, handler ran 1 time(s)" "$sandbox_out"
		done
	done
	sig 0 sig_restart nanosleep restart
	grep -qx 'rem set: yes, rem < 2s: yes' "$sandbox_out"
}

@test "signals: sigwaitinfo/sigtimedwait/sigwait take blocked signals; timeouts, EINTR, SIGCHLD kept while waited for" {
	sig 0 sig_mask sigwait
	grep -qx 'none pending, 20 ms: -1 EAGAIN' "$sandbox_out"
	grep -q '^sent by a child while waiting: 12, si_pid is the child: yes' "$sandbox_out"
	grep -q '^SIGCHLD (default ignore, blocked) waited for: 17, CLD_EXITED: yes' "$sandbox_out"
}

@test "signals: sigprocmask block, sigpending, unblock delivers before sigprocmask returns" {
	sig 0 sig_mask pending
	grep -qx 'while blocked: hits=0 pending=yes' "$sandbox_out"
	grep -qx 'right after unblock: hits=1 pending=no' "$sandbox_out"
	grep -qx 'HUP pending after SIG_IGN: no' "$sandbox_out"
}

@test "signals: a signal pending both thread-directed (raise) and process-directed (kill) is delivered twice" {
	sig 0 sig_mask pending2
	grep -qx 'raise + kill + kill while blocked, then unblock: hits=2' "$sandbox_out"
}

@test "signals: sigsuspend waits with a temporary mask and restores the old one" {
	sig 0 sig_mask suspend
	grep -qx 'sigsuspend = -1 EINTR hits=1' "$sandbox_out"
	grep -qx 'USR1 blocked again after sigsuspend: yes' "$sandbox_out"
	grep -qx 'USR1 pending after: yes' "$sandbox_out"
}

@test "signals: SA_RESETHAND runs the handler once, then the default action kills (138)" {
	sig 138 sig_mask resethand
	grep -qx 'disposition now SIG_DFL: yes' "$sandbox_out"
	assert_not_contains "$(<"$sandbox_out")" 'still alive'
}

@test "signals: SA_NODEFER lets a handler be re-entered; without it the signal waits" {
	sig 0 sig_mask nodefer
	grep -qx 'without SA_NODEFER, raise inside the handler: hits=2 maxdepth=1 log=\[1bu 1bu \]' "$sandbox_out"
	grep -qx 'with SA_NODEFER, raise inside the handler: hits=2 maxdepth=2 log=\[1uu 1uu \]' "$sandbox_out"
}

@test "signals: sa_mask is added while the handler runs and removed after" {
	sig 0 sig_mask samask
	grep -qx 'USR1 handler with sa_mask={USR2}: hits=1 maxdepth=1 log=\[1bb \]' "$sandbox_out"
}

@test "signals: several pending signals released at once get their frames like Linux (no nested handlers)" {
	sig 0 sig_mask order
	grep -q 'maxdepth=1' "$sandbox_out"
}

@test "signals: fork inherits handlers, ignores and mask but not pending signals" {
	sig 0 sig_mask fork
	grep -qx 'child: USR1 handler inherited: yes, USR2 ignored: yes, HUP blocked: yes, HUP pending: no' "$sandbox_out"
}

@test "signals: SIGKILL/SIGSTOP cannot be blocked or caught; bad signal numbers; kill errors" {
	sig 137 sig_mask unblockable
	grep -qx 'sigaction(SIGKILL) = -1 EINVAL' "$sandbox_out"
	grep -qx 'kill(99999, SIGUSR1) = -1 ESRCH' "$sandbox_out"
	sig 0 sig_mask query
}

@test "signals: SA_RESETHAND resets only the handler; sigaltstack's minimum is 2048; AT_MINSIGSTKSZ holds a frame" {
	sig 0 sig_flags
	grep -qx 'sigaltstack 2048 bytes: 0 0' "$sandbox_out"
	grep -q 'SA_SIGINFO kept: yes' "$sandbox_out"
}

@test "signals: sigaltstack: an SA_ONSTACK handler runs inside the alternate stack" {
	sig 0 sig_alt onstack
	grep -qx 'SA_ONSTACK handler: ran=1 local inside alt stack=yes SS_ONSTACK seen=yes' "$sandbox_out"
	grep -qx 'plain handler: ran=2 local inside alt stack=no SS_ONSTACK seen=no' "$sandbox_out"
}

@test "signals: stack overflow caught on the alternate stack and left with siglongjmp" {
	sig 0 sig_alt overflow
	grep -qx 'caught stack overflow: handler ran=1 on the alt stack=yes deep=yes' "$sandbox_out"
}

@test "signals: SIGSEGV/SIGBUS/SIGFPE/SIGILL handlers siglongjmp out of faults, twice; blocked SIGSEGV still kills" {
	sig 139 sig_fault "$TREE/a.txt"
	grep -qx 'null write: sig=11 SEGV_MAPERR si_addr==target: yes; blocked in handler: yes; blocked after siglongjmp: no' "$sandbox_out"
	grep -qx 'mmap past EOF: sig=7 BUS_ADRERR si_addr==target: yes; blocked in handler: yes; blocked after siglongjmp: no' "$sandbox_out"
	[[ $(grep -c 'blocked after siglongjmp: no' "$sandbox_out") == 14 ]]
}

@test "signals: SIGPIPE kills by default (141); ignored or handled, write fails with EPIPE" {
	sig 141 sig_default pipe-default
	sig 0 sig_default pipe-ignore
	grep -qx 'write to a pipe without readers = -1 EPIPE' "$sandbox_out"
	sig 0 sig_default pipe-handler
	grep -qx 'SIGPIPE handler ran 1 time(s)' "$sandbox_out"
	sig 0 sig_default pipe-child
	grep -qx 'writer child: killed by signal 13' "$sandbox_out"
}

@test "signals: default actions of raise(): TERM 143, INT 130, USR1 138, KILL 137, abort 134, WINCH ignored" {
	sig 143 sig_default raise 15
	sig 130 sig_default raise 2
	sig 138 sig_default raise 10
	sig 137 sig_default raise 9
	sig 134 sig_default abort
	sig 0 sig_default raise 28
	grep -qx 'survived signal 28' "$sandbox_out"
}

@test "signals: SIGKILL and SIGTERM end a child blocked in pause, sigsuspend, read, nanosleep" {
	PVX_TIMEOUT=20
	sig 0 sig_default kill-blocked 15
	grep -qx 'child in pause, sent 15: killed by signal 15' "$sandbox_out"
	sig 0 sig_default kill-blocked 9
	grep -qx 'child in pause, sent 9: killed by signal 9' "$sandbox_out"
	grep -qx 'child in sigsuspend, sent 9: killed by signal 9' "$sandbox_out"
}

@test "signals: kill(0, sig) reaches the whole process group and only it; kill(-pgid, sig)" {
	sig 0 sig_default pgrp
	grep -qx 'member 2: exited 10' "$sandbox_out"
	grep -qx 'member 3 (own group): exited 20' "$sandbox_out"
	grep -qx 'other group member: exited 10' "$sandbox_out"
}

@test "signals: a SIGCHLD handler reaps and counts 5 children" {
	sig 0 sig_chld count
	grep -qx 'reaped=5 sum of exit codes=15 handler ran: yes' "$sandbox_out"
}

@test "signals: SIGCHLD siginfo: CLD_EXITED/CLD_KILLED, si_status, si_pid" {
	sig 0 sig_chld info
	grep -qx 'second: signo=17 code=CLD_KILLED status=15 pid matches=yes' "$sandbox_out"
}

@test "signals: SIGCHLD set to SIG_IGN reaps children automatically (wait gives ECHILD)" {
	sig 0 sig_chld ignore
	grep -qx 'ignore: wait() = -1 ECHILD, zombies reaped by handler=0' "$sandbox_out"
}

@test "signals: SA_NOCLDWAIT: no zombies, the handler still runs" {
	sig 0 sig_chld nocldwait
	grep -qx 'nocldwait: wait() = -1 ECHILD, zombies reaped by handler=0' "$sandbox_out"
}

# core_limits: skip unless RLIMIT_CORE's hard limit allows the 1 MiB the coredump guest asks for
core_limits() {
	local h
	h=$(ulimit -Hc)
	[[ $h == unlimited || $h -ge 1024 ]] || skip "RLIMIT_CORE hard limit is $h KiB"
}

@test "signals: core-dump signals set WCOREDUMP and CLD_DUMPED only when RLIMIT_CORE (a page or more) and dumpable allow" {
	core_limits
	[[ -e /proc/sys/kernel/core_pattern ]] || skip "the host kernel has no core dumps (CONFIG_COREDUMP off): its native side dumps none"
	[[ $(cat /proc/sys/kernel/core_pattern) != '|'* ]] || skip "the host pipes core dumps (its limits differ)"
	PVX_OPTS=(--rw)
	sig 0 coredump
	has "quit   limit=1048576  dumpable=1: signal 3 core=1" "abort  limit=1048576  dumpable=1: signal 6 core=1" \
		"segv   limit=1048576  dumpable=1: signal 11 core=1" "term   limit=1048576  dumpable=1: signal 15 core=0" \
		"quit   limit=1024     dumpable=1: signal 3 core=0" "quit   limit=1048576  dumpable=0: signal 3 core=0" \
		"abort  limit=1048576  dumpable=1: waitid code=CLD_DUMPED status=6"
}

@test "signals: a core dump is an ELF core file named core in the cwd, made afresh over a symlink planted there" {
	core_limits
	cd "$BATS_TEST_TMPDIR"
	echo secret >outside
	ln -s outside core
	run timeout 60 "$PVX" run --platform="$PVX_PLATFORM" --rw -- "$(guest coredump)" file
	[[ $status == 0 ]] || { echo "$output"; false; }
	[[ $output == *"core file: ELF=1 type=ET_CORE machine=x86-64"* ]]
	[[ $(cat outside) == secret ]]
	[[ -f core && ! -L core ]]
	[[ $(stat -c %a core) == 600 ]]
}

@test "signals: /proc/sys/kernel/core_pattern says core and core_uses_pid 0; no dump on a read-only root" {
	core_limits
	run timeout 60 "$PVX" run --platform="$PVX_PLATFORM" -- "$BUSYBOX" cat /proc/sys/kernel/core_pattern /proc/sys/kernel/core_uses_pid
	[[ $status == 0 && $output == $'core\n0' ]]
	cd "$BATS_TEST_TMPDIR"
	run timeout 60 "$PVX" run --platform="$PVX_PLATFORM" -- "$(guest coredump)" file
	[[ $output == *"quit   limit=1048576  dumpable=1: signal 3 core=0"* ]]
	[[ ! -e core ]]
}

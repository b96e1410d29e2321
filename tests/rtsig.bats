#!/usr/bin/env bats
# Issue 15, real-time signals: every instance queued with its siginfo (standard signals coalesce), up to
# RLIMIT_SIGPENDING; rt_sigqueueinfo and rt_tgsigqueueinfo. Guest tests/guest/sig_rtqueue.c, musl and glibc
# builds, each compared with its native run; the grep lines pin the behaviour.

load helpers

setup() {
	require_pvx
	cd "$BATS_TEST_TMPDIR"
}

# rt MODE: both builds of sig_rtqueue MODE against their native runs
rt() { compare_flavours 0 sig_rtqueue "$@"; }

@test "rtsig: blocked sigqueue values come out in order, lowest signal first, standard ones once" {
	rt order
	grep -qx 'handled 8:' "$sandbox_out"
	grep -qx '  SIGUSR2 SI_QUEUE value 20 pid mine yes uid mine yes' "$sandbox_out"
	grep -qx '  RTMIN+3 SI_QUEUE value 2 pid mine yes uid mine yes' "$sandbox_out"
	grep -qx '  (value 3 came with pid 4242 uid 4343)' "$sandbox_out"
	rt stack
	grep -qx 'handled 8:' "$sandbox_out"
}

@test "rtsig: sigtimedwait and sigwaitinfo take one instance at a time" {
	rt wait
	grep -qx 'sigtimedwait: RTMIN+2 SI_QUEUE value 2; RTMIN+2 still pending yes' "$sandbox_out"
	grep -qx 'sigwaitinfo: RTMIN+2 SI_QUEUE value 3; RTMIN+2 still pending no' "$sandbox_out"
}

@test "rtsig: a signalfd read of N slots takes N instances" {
	rt signalfd
	grep -qx 'read 1 slots: 1' "$sandbox_out"
	grep -qx '  RTMIN+4 SI_QUEUE int 105 pid mine yes' "$sandbox_out"
	grep -qx 'read 1 slots: -1 EAGAIN' "$sandbox_out"
}

@test "rtsig: rt_tgsigqueueinfo to a thread; only the sender's own tid may take a forged si_code" {
	rt thread
	grep -qx 'thread: rt_sigqueueinfo SI_USER to its own process: -1 EPERM' "$sandbox_out"
	grep -qx 'thread got: RTMIN+5 SI_QUEUE value 3' "$sandbox_out"
	grep -qx 'rt_tgsigqueueinfo to the gone thread: -1 ESRCH' "$sandbox_out"
}

@test "rtsig: rt_sigqueueinfo errors: EPERM, EFAULT, EINVAL, ESRCH, E2BIG; a forged siginfo to oneself as given" {
	rt errors
	grep -qx 'SI_USER to the child: -1 EPERM' "$sandbox_out"
	grep -qx 'bad info pointer: -1 EFAULT' "$sandbox_out"
	grep -qx 'SI_QUEUE signal 65 to self: -1 EINVAL' "$sandbox_out"
	grep -qx 'SI_QUEUE to no such pid: -1 ESRCH' "$sandbox_out"
	grep -qx 'unknown si_code, byte 100 set: -1 E2BIG' "$sandbox_out"
	grep -qx '  sigtimedwait: SIGUSR1 errno 3 code SI_USER pid 12345 uid 777' "$sandbox_out"
}

@test "rtsig: RLIMIT_SIGPENDING: sigqueue and tgkill EAGAIN, kill loses the siginfo only; SigQ" {
	rt limit
	grep -qx 'sigqueue: 4 queued, then -1 EAGAIN' "$sandbox_out"
	grep -qx 'SigQ: +4, limit the new RLIMIT_SIGPENDING yes' "$sandbox_out"
	grep -qx 'tgkill RTMIN+1: -1 EAGAIN' "$sandbox_out"
	grep -qx '  RTMIN+2 SI_USER value 0 pid 0' "$sandbox_out"
	# natively SigQ is the whole uid's count: checked in the sandbox only
	grep -qx 'SigQ after taking them: +0' "$sandbox_err"
}

@test "rtsig: SIG_IGN drops queued instances, SIG_DFL keeps them; an unhandled one terminates" {
	rt ignore
	grep -qx 'after SIG_IGN: RTMIN+1 pending no; after SIG_DFL: RTMIN+2 pending yes' "$sandbox_out"
	rt default
	grep -qx 'child of an unhandled RTMIN+1: killed by it' "$sandbox_out"
}

@test "rtsig: queued signals survive execve in order; a fork child starts with none" {
	rt exec
	grep -qx '  RTMIN+1 SI_QUEUE value 3' "$sandbox_out"
	rt fork
	grep -qx 'child: RTMIN+1 pending no, SIGUSR1 pending no' "$sandbox_out"
}

@test "rtsig: a flood stops at EAGAIN within the sentry's cap, whatever limit the guest sets" {
	# Not against native: the host's limit is the host's. The sandbox keeps at most 65536 queued.
	[[ $PVX_PLATFORM != vmexec ]] || skip "sentry-only bound, the same on every platform: checked on the host"
	pvx_run "$(guest sig_rtqueue)" flood
	[ "$status" -eq 0 ]
	[[ $output =~ ^flood:\ ([0-9]+)\ queued,\ then\ -1\ EAGAIN\;\ limit\ ([0-9]+|unlimited)$ ]]
	local n=${BASH_REMATCH[1]} lim=${BASH_REMATCH[2]}
	((n <= 65536))
	[[ $lim == unlimited ]] || ((n == lim))
}

@test "rtsig: SigPnd and ShdPnd; a thread's own queued signals go with it, the process's stay" {
	rt threadexit
	grep -qx '  SigPnd: SIGUSR1 RTMIN+2' "$sandbox_out"
	grep -qx 'after the thread exited, RTMIN+2 pending no' "$sandbox_out"
	# SigQ natively is the whole uid's count on the host: checked in the sandbox only
	grep -qx 'SigQ: +7' "$sandbox_err"
	grep -qx 'after the thread exited, SigQ: +3' "$sandbox_err"
	grep -qx '  main takes RTMIN+1 value 13' "$sandbox_out"
}

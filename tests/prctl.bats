#!/usr/bin/env bats
# prctl(2) options of process state (issue 15): parent-death signal, child subreaper, timer slack and the
# error cases LTP's prctl02 checks. Static guest tests/guest/prctl_proc.c (musl and glibc), compared with
# its native run.

load helpers

setup() {
	require_pvx
	cd "$BATS_TEST_TMPDIR"
}

@test "prctl: PR_SET_PDEATHSIG is kept, not inherited, and sent when the parent process dies; EINVAL past 64" {
	compare_flavours 0 prctl_proc pdeath
	has "set 65: EINVAL" "get: 12" "grandchild's inherited pdeath signal: 0" "grandchild got on its parent's death: 10"
}

@test "prctl: PR_SET_CHILD_SUBREAPER takes the orphaned grandchild (getppid, wait); the flag is not inherited" {
	compare_flavours 0 prctl_proc subreaper
	has "get after: 1" "child's flag: 0" "orphan reaped by the subreaper: yes, status 42"
}

@test "prctl: PR_SET/GET_TIMERSLACK kept, 0 resets to the creator's, inherited by fork; /proc/self/timerslack_ns" {
	compare_flavours 0 prctl_proc slack
	has "set 70000: ok get 70000 proc 70000" "child: 70000, reset to 70000" "set 0 resets: yes" "set INT_MAX: get 2147483647"
}

@test "prctl: EINVAL/EPERM/EFAULT cases (NO_NEW_PRIVS, THP_DISABLE, CAP_AMBIENT, TIMING, SPECULATION_CTRL)" {
	compare_flavours 0 prctl_proc errors
	has "GET_NO_NEW_PRIVS 1: EINVAL" "THP set 1, get: ok 1" "CAP_AMBIENT RAISE 0: EPERM" "GET_PDEATHSIG bad ptr: EFAULT"
}

@test "arch_prctl: ARCH_SET_CPUID is ENODEV and ARCH_GET_CPUID 1 (no CPUID faulting), as natively on such a CPU" {
	! grep -qw cpuid_fault /proc/cpuinfo || skip "this CPU has CPUID faulting: natively ARCH_SET_CPUID works"
	compare_flavours 0 prctl_proc arch
	has "ARCH_GET_CPUID: 1" "ARCH_SET_CPUID 0: ENODEV"
}

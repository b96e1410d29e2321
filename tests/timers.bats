#!/usr/bin/env bats
# Interval timers: SIGALRM must reach a guest that is computing (no syscall to
# trap on) as well as one that sleeps in pause(). POSIX timers (timer_create):
# guest timer_posix.c, musl and glibc, against native runs.

load helpers

@test "alarm interrupts a busy loop; ITIMER_REAL repeats; alarm(0) reports what is left (musl)" {
	compare_native "$(guest timer_alarm)"
}

@test "alarm interrupts a busy loop; ITIMER_REAL repeats; alarm(0) reports what is left (glibc)" {
	compare_native "$(guest timer_alarm.glibc)"
}

# ptimer MODE: both builds of timer_posix MODE against their native runs
ptimer() { compare_flavours 0 timer_posix "$1"; }

@test "timer_create: a one-shot timer's signal carries SI_TIMER, si_value and the timer id" {
	ptimer signal
	grep -q 'SI_TIMER: yes, si_value 42: yes, si_timerid is the id: yes' "$sandbox_out"
}

@test "timer_create: an interval timer fires again and again; missed expiries are overruns" {
	ptimer periodic
	ptimer overrun
	grep -q 'si_overrun >= 3: yes, timer_getoverrun = si_overrun: yes' "$sandbox_out"
}

@test "timer_gettime/timer_settime: time left, interval, old value, disarm; timer_delete" {
	ptimer gettime
}

@test "timer_settime TIMER_ABSTIME on CLOCK_REALTIME, also in the past: missed periods are overruns, saturating at INT_MAX" {
	ptimer abstime
	has "10 s past, 1 ms interval: si_overrun about 10000: yes" "5 s past, 1 ns interval: si_overrun is INT_MAX: yes"
}

@test "timer_create SIGEV_THREAD: the C library's helper thread runs the callback" {
	ptimer thread
	grep -qx 'callback ran at least 3 times: yes' "$sandbox_out"
}

@test "timer_create: timers are gone after execve; EINVAL for bad clocks, kinds, signals, ids, times" {
	ptimer exec
	grep -qx 'after execve: timer 0 EINVAL' "$sandbox_out"
	ptimer errors
}

@test "vDSO: the host's, at AT_SYSINFO_EHDR; its clocks agree with the syscalls' (every clock, fork, exec)" {
	compare_flavours 0 vdso
	grep -qx 'parent: AT_SYSINFO_EHDR present: yes' "$sandbox_out"
	grep -qx 'execed: TAI never goes back across vDSO and syscall reads: yes' "$sandbox_out"
	! grep -q ': NO$' "$sandbox_out"
	# a bad pointer faults inside the vDSO: the guest dies of SIGSEGV, as natively
	compare_flavours 139 vdso badptr
}

@test "timer_create on CLOCK_PROCESS_CPUTIME_ID and CLOCK_THREAD_CPUTIME_ID: CPU time, not while asleep; absolute, interval" {
	compare_flavours 0 timer_cpu posix
	has 'process CPU timer after sleeping 0.3 s: fired 0' 'process CPU timer after spinning: fired 1' \
		'absolute CPU time in the past: fired 1' 'an interval CPU timer repeats: yes' \
		'thread timer after the thread slept 0.3 s while main spun: fired 0' 'thread timer after the thread spun: fired 1' \
		'timer_create(fd clock encoding): EOPNOTSUPP' 'timer_create(thread clock of no thread): EINVAL'
}

@test "CPU-time clocks: a thread's own and another's, the process's, a child's; clock_nanosleep on one; bad ids" {
	compare_flavours 0 timer_cpu clocks
	has 'spinning: thread clock grew >= 0.05 s: yes' 'spinning: pthread_getcpuclockid'"'"'s clock grew >= 0.05 s: yes' \
		"the spinning thread's clock read by another grew >= 0.1 s: yes" \
		"a sleeping thread's clock grew less than a fifth of the spinner's: yes" \
		'clock_nanosleep(PROCESS_CPUTIME 0.1 s) while a thread spins: 0, clock grew >= 0.1 s: yes' \
		'clock_getcpuclockid(child): 0, its clock >= 0.05 s: yes' 'clock_getres(PROCESS_CPUTIME): 0 1 ns' \
		"clock_gettime(thread clock of another process's thread): EINVAL"
}

@test "ITIMER_VIRTUAL and ITIMER_PROF count CPU time: not while asleep, repeating, not inherited; errors" {
	compare_flavours 0 timer_cpu
	grep -qx 'after sleeping 0.3 s (no CPU): fired 0' "$sandbox_out"
	grep -qx 'after spinning: fired 1' "$sandbox_out"
	grep -qx 'an interval repeats: yes' "$sandbox_out"
}

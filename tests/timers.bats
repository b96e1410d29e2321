#!/usr/bin/env bats
# Interval timers: SIGALRM must reach a guest that is computing (no syscall to
# trap on) as well as one that sleeps in pause().

load helpers

@test "alarm interrupts a busy loop; ITIMER_REAL repeats; alarm(0) reports what is left (musl)" {
	compare_native "$(guest timer_alarm)"
}

@test "alarm interrupts a busy loop; ITIMER_REAL repeats; alarm(0) reports what is left (glibc)" {
	compare_native "$(guest timer_alarm.glibc)"
}

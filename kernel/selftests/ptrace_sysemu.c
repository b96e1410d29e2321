// SPDX-License-Identifier: GPL-2.0
/*
 * Baseline (seed test 4): the same trap loop as vmexec_trap.c, with
 * PTRACE_SYSEMU on a separate tracee.  Prints ns/syscall.
 */
#include "vmexec_test.h"
#include <sys/ptrace.h>
#include <sys/user.h>

#define TEST_SYSCALL	444
#define TEST_RET	555
#define TEST_MARKER	789

static void guest(void)
{
	for (;;)
		if (raw_syscall1(TEST_SYSCALL, TEST_MARKER) != TEST_RET)
			raw_syscall1(TEST_SYSCALL, -1);
}

int main(void)
{
	struct user_regs_struct regs;
	double start, end, limit;
	long n = 0, bad = 0;
	int status, seen = 0;
	pid_t pid;

	tap_plan(2);
	const char *pin = bench_pin();
	pid = fork();
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
		ptrace(PTRACE_TRACEME, 0, 0, 0);
		raise(SIGSTOP);
		guest();
	}
	waitpid(pid, &status, 0);
	ptrace(PTRACE_SETOPTIONS, pid, 0, PTRACE_O_EXITKILL);

	start = now_ns();
	limit = start + bench_seconds() * 1e9;
	do {
		if (ptrace(PTRACE_SYSEMU, pid, 0, 0) ||
		    waitpid(pid, &status, 0) != pid ||
		    !WIFSTOPPED(status) || WSTOPSIG(status) != SIGTRAP ||
		    ptrace(PTRACE_GETREGS, pid, NULL, &regs)) {
			bad++;
			break;
		}
		/* the first stops may be libc's raise() finishing */
		if (seen && (regs.orig_rax != TEST_SYSCALL || regs.rdi != TEST_MARKER))
			bad++;
		if (regs.orig_rax == TEST_SYSCALL)
			seen = 1;
		regs.rax = TEST_RET;
		if (ptrace(PTRACE_SETREGS, pid, NULL, &regs))
			bad++;
		n++;
	} while ((n & 255) || now_ns() < limit);
	end = now_ns();
	tap_ok(bad == 0, "%ld PTRACE_SYSEMU round trips, %ld bad", n, bad);
	tap_ok(1, "ptrace %.0f ns/syscall (%s)", (end - start) / n, pin);
	printf("# RESULT ptrace_sysemu_ns_per_syscall %.0f\n", (end - start) / n);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	return tap_exit();
}

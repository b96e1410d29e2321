// SPDX-License-Identifier: GPL-2.0
/*
 * Trap loop (seed test 1): guest code makes a system call in a loop; each
 * one must come back to the caller as SIGSYS with the guest's registers,
 * and the value the caller puts in rax must be what the guest sees.
 * Prints ns/syscall for the round trip.
 */
#include "vmexec_test.h"

#define TEST_SYSCALL	123
#define TEST_RET	456
#define TEST_MARKER	789

static void guest(void)
{
	for (;;)
		if (raw_syscall1(TEST_SYSCALL, TEST_MARKER) != TEST_RET)
			raw_syscall1(TEST_SYSCALL, -1);	/* report failure */
}

int main(void)
{
	struct process_vm_exec_context ctx;
	siginfo_t si;
	long n = 0, bad = 0, ret;
	double start, end, limit;
	void *stack;
	pid_t pid;

	tap_plan(4);
	const char *pin = bench_pin();
	if (!vmexec_supported()) {
		printf("not ok 1 process_vm_exec missing (ENOSYS)\n");
		return 1;
	}
	stack = shared_alloc(GUEST_STACK_SIZE);
	pid = spawn_stub();
	guest_ctx_init(&ctx, guest, stack);

	/* first trap: check everything once */
	memset(&si, 0, sizeof(si));
	ret = vmexec_run(pid, &ctx, 0, &si, NULL);
	tap_ok(ret == 0 && si.si_signo == SIGSYS && si.si_code == 2 /* SYS_USER_DISPATCH */ &&
	       si.si_syscall == TEST_SYSCALL && si.si_arch == 0xc000003e,
	       "syscall traps as SIGSYS (ret %ld signo %d code %d nr %d arch %#x)",
	       ret, si.si_signo, si.si_code, si.si_syscall, si.si_arch);
	tap_ok(ctx.orig_rax == TEST_SYSCALL && ctx.rdi == TEST_MARKER &&
	       ctx.rax == (unsigned long)-ENOSYS && ctx.rcx == ctx.rip &&
	       (unsigned long)si.si_call_addr == ctx.rip,
	       "guest registers stored (orig_rax %llu rdi %llu rax %lld)",
	       (unsigned long long)ctx.orig_rax, (unsigned long long)ctx.rdi,
	       (long long)ctx.rax);

	start = now_ns();
	limit = start + bench_seconds() * 1e9;
	do {
		ctx.rax = TEST_RET;
		ret = vmexec_run(pid, &ctx, 0, &si, NULL);
		if (ret != 0 || si.si_signo != SIGSYS ||
		    si.si_syscall != TEST_SYSCALL || ctx.rdi != TEST_MARKER)
			bad++;
		n++;
	} while ((n & 255) || now_ns() < limit);
	end = now_ns();
	tap_ok(bad == 0, "%ld round trips, %ld bad", n, bad);
	tap_ok(1, "vmexec %.0f ns/syscall (%s)", (end - start) / n, pin);
	printf("# RESULT vmexec_trap_ns_per_syscall %.0f\n", (end - start) / n);

	kill_stub(pid);
	return tap_exit();
}

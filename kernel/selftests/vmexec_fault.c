// SPDX-License-Identifier: GPL-2.0
/*
 * Fault loop (seed test 2): guest code writes to an unmapped low address;
 * the SIGSEGV must come back to the caller with cr2 and the registers, the
 * caller fixes rax up to point at valid memory and the guest goes on.
 * Prints ns/fault.
 */
#include "vmexec_test.h"

#define TEST_VAL 0xaabbccddeeUL

static unsigned long *shared_val;

/* rbx walks 1..7,0; each store through rax = rbx faults */
extern void guest(void);
asm(".pushsection .text\n"
    "guest:\n"
    "	xorl %ebx, %ebx\n"
    "1:	addq $1, %rbx\n"
    "	andq $7, %rbx\n"
    "	movq %rbx, %rax\n"
    "	movq %rcx, (%rax)\n"	/* the caller redirects rax to shared_val */
    "	jmp 1b\n"
    ".popsection\n");

int main(void)
{
	struct process_vm_exec_context ctx;
	unsigned long expect = 0;
	long n = 0, bad = 0, ret;
	double start, end, limit;
	siginfo_t si;
	void *stack;
	pid_t pid;

	tap_plan(3);
	const char *pin = bench_pin();
	stack = shared_alloc(GUEST_STACK_SIZE);
	shared_val = shared_alloc(4096);
	pid = spawn_stub();
	guest_ctx_init(&ctx, guest, stack);

	ret = vmexec_run(pid, &ctx, 0, &si, NULL);
	tap_ok(ret == 0 && si.si_signo == SIGSEGV && ctx.rax == 1 &&
	       ctx.cr2 == 1 && (unsigned long)si.si_addr == 1 && ctx.trapno == 14,
	       "fault traps as SIGSEGV (ret %ld signo %d addr %p cr2 %#llx trapno %llu)",
	       ret, si.si_signo, si.si_addr, (unsigned long long)ctx.cr2,
	       (unsigned long long)ctx.trapno);

	start = now_ns();
	limit = start + bench_seconds() * 1e9;
	expect = 1;
	do {
		if (ctx.rax != expect % 8 || si.si_signo != SIGSEGV)
			bad++;
		ctx.rax = (unsigned long)shared_val;
		ctx.rcx = TEST_VAL;
		ret = vmexec_run(pid, &ctx, 0, &si, NULL);
		if (ret != 0)
			bad++;
		expect++;
		n++;
	} while ((n & 255) || now_ns() < limit);
	end = now_ns();
	tap_ok(bad == 0 && *shared_val == TEST_VAL,
	       "%ld faults handled, %ld bad, guest store landed", n, bad);
	tap_ok(1, "vmexec %.0f ns/fault (%s)", (end - start) / n, pin);
	printf("# RESULT vmexec_fault_ns_per_fault %.0f\n", (end - start) / n);
	kill_stub(pid);
	return tap_exit();
}

// SPDX-License-Identifier: GPL-2.0
/*
 * The stub: a tiny freestanding program whose only job is to own a guest
 * address space. It is linked at PVX_STUB_BASE (stub/stub.lds) so the guest
 * keeps the normal low address range, uses no libc and no stack of note.
 *
 * The ptrace platform starts it stopped at exec (PTRACE_TRACEME) and never
 * lets _start run; the sentry points the stub's registers at the gadget
 * below to run a syscall in this mm, or at guest code to run the guest.
 */
#include "pvx/stub_abi.h"

/* syscall; int3 -- placed first in .text by stub.lds, see STUB_SYSCALL_GADGET. */
__asm__(".section .text.gadget,\"ax\",@progbits\n"
	".globl stub_syscall_gadget\n"
	"stub_syscall_gadget:\n"
	"	syscall\n"
	"	int3\n"
	".previous\n");

static inline long stub_syscall1(long nr, long a0)
{
	long ret;

	__asm__ volatile("syscall" : "=a"(ret) : "a"(nr), "D"(a0) : "rcx", "r11", "memory");
	return ret;
}

/* Reached only when someone runs the stub by hand: refuse. */
__attribute__((noreturn, used)) void stub_main(void)
{
	for (;;)
		stub_syscall1(231 /* exit_group */, STUB_EXIT_NOT_TRACED);
}

__asm__(".text\n"
	".globl _start\n"
	"_start:\n"
	"	xor %ebp, %ebp\n"
	"	and $-16, %rsp\n"
	"	call stub_main\n"
	"	hlt\n");

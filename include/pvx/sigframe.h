/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel's x86-64 signal ABI (uapi asm/sigcontext.h, asm/ucontext.h,
 * asm-generic/siginfo.h), spelled out with stdint types: the freestanding
 * stub reads the frames the host kernel gives it, and the sentry builds the
 * frames it gives the guest. (libc's struct sigcontext clashes with the
 * kernel headers, hence our own names.)
 */
#ifndef PVX_SIGFRAME_H
#define PVX_SIGFRAME_H

#include <stddef.h>
#include <stdint.h>

struct k_sigcontext {
	uint64_t r8, r9, r10, r11, r12, r13, r14, r15, rdi, rsi, rbp, rbx, rdx, rax, rcx, rsp, rip, eflags;
	uint16_t cs, gs, fs, ss;
	uint64_t err, trapno, oldmask, cr2, fpstate, reserved1[8];
};

struct k_ucontext {
	uint64_t flags, link;
	uint64_t ss_sp;
	int32_t ss_flags, pad;
	uint64_t ss_size;
	struct k_sigcontext mc;
	uint64_t sigmask;
};

struct k_siginfo {
	int32_t signo, errno_, code, pad;
	union {
		uint64_t addr;	/* SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP */
		struct { int32_t pid; uint32_t uid; int32_t status; } kill;	/* SIGCHLD, kill() */
		struct { uint64_t call_addr; int32_t syscall; uint32_t arch; } sys;	/* SIGSYS */
		char pad2[112];
	};
};

_Static_assert(sizeof(struct k_sigcontext) == 256, "sigcontext ABI");
_Static_assert(offsetof(struct k_ucontext, mc) == 40, "ucontext ABI");
_Static_assert(sizeof(struct k_siginfo) == 128, "siginfo ABI");

#endif

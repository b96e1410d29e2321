/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Guest register state as the sentry sees it. The layout is the x86-64
 * user_regs_struct so the ptrace platform copies it in one go; other
 * platforms convert. Syscall emulation only ever sees this struct.
 */
#ifndef PVX_REGS_H
#define PVX_REGS_H

#include <stdbool.h>
#include <stdint.h>

struct pvx_regs {
	uint64_t r15, r14, r13, r12, rbp, rbx, r11, r10, r9, r8;
	uint64_t rax, rcx, rdx, rsi, rdi, orig_rax;
	uint64_t rip, cs, eflags, rsp, ss;
	uint64_t fs_base, gs_base;
	uint64_t ds, es, fs, gs;
};

_Static_assert(sizeof(struct pvx_regs) == 27 * 8, "pvx_regs must match user_regs_struct");

/* Why the guest stopped running. */
enum trap_kind {
	TRAP_SYSCALL,	/* guest executed a syscall instruction; nr in orig_rax */
	TRAP_SIGNAL,	/* guest got a synchronous fault or signal (SIGSEGV...) */
	TRAP_OUT_FAULT,	/* the syscall's copy-out left to the platform (copy_to_guest_ret) faulted; guest code did not run */
};

struct pvx_trap {
	enum trap_kind kind;
	int signo;	/* TRAP_SIGNAL */
	int code;	/* si_code */
	uint64_t addr;	/* si_addr for faults */
	bool patched;	/* TRAP_SYSCALL: through a patched site (mm/usertrap.c), which was counted already */
};

#endif

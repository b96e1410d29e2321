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

/* rt_sigaction(2)'s struct (asm/signal.h's kernel sigaction on x86-64), its mask 8 bytes. */
struct k_sigaction {
	void *handler;
	uint64_t flags;
	void *restorer;
	uint64_t mask;
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

/*
 * The FPU state in a signal frame (uapi asm/sigcontext.h): the 512-byte
 * FXSAVE image, whose software-reserved bytes 464..511 say how much XSAVE
 * state follows, and FP_XSTATE_MAGIC2 right after that state.
 */
struct k_fpx_sw_bytes {
	uint32_t magic1;	/* FP_XSTATE_MAGIC1 */
	uint32_t extended_size;	/* xstate_size + FP_XSTATE_MAGIC2_SIZE */
	uint64_t xfeatures;
	uint32_t xstate_size;
	uint32_t padding[7];
};
#define K_FP_XSTATE_MAGIC1 0x46505853U
#define K_FP_XSTATE_MAGIC2 0x46505845U
#define K_FXSAVE_SIZE 512
#define K_FPX_SW_BYTES_OFFSET 464
#define K_FPSTATE_MAX (16U << 10)	/* AVX-512 needs ~2.7 KiB; AMX more, pvx does not enable it */

_Static_assert(sizeof(struct k_sigcontext) == 256, "sigcontext ABI");
_Static_assert(sizeof(struct k_fpx_sw_bytes) == 48, "fpx_sw_bytes ABI");
_Static_assert(offsetof(struct k_ucontext, mc) == 40, "ucontext ABI");
_Static_assert(sizeof(struct k_siginfo) == 128, "siginfo ABI");

/*
 * The size of a signal-frame FPU image in buf[0..len): the extended size
 * when the software bytes and MAGIC2 check out, else the bare FXSAVE image.
 */
static inline size_t k_fpstate_size(const void *buf, size_t len)
{
	const struct k_fpx_sw_bytes *sw = (const void *)((const char *)buf + K_FPX_SW_BYTES_OFFSET);
	uint32_t magic2;

	if (len < K_FXSAVE_SIZE)
		return 0;
	if (sw->magic1 != K_FP_XSTATE_MAGIC1 || sw->xstate_size < K_FXSAVE_SIZE + 64 ||
	    sw->extended_size != sw->xstate_size + 4 || sw->extended_size > len)
		return K_FXSAVE_SIZE;
	__builtin_memcpy(&magic2, (const char *)buf + sw->xstate_size, 4);
	return magic2 == K_FP_XSTATE_MAGIC2 ? sw->extended_size : K_FXSAVE_SIZE;
}

#endif

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The stub's fixed layout as plain numbers, for its assembly (stub/sites.S)
 * and for stub_abi.h, which checks them against the C structures. Every
 * address here is above the guest's range (PVX_GUEST_TASK_SIZE).
 *
 * The seccomp filter trusts a syscall only at the exact address of one of
 * the stub's own syscall instructions below (the "sites"), and at each site
 * only the calls that site makes; stub/sites.S places each at its offset
 * (.org fails the build if code outgrows its slot), and the sentry checks
 * the bytes there before it trusts them (seccomp_filter.c).
 */
#ifndef PVX_STUB_LAYOUT_H
#define PVX_STUB_LAYOUT_H

#define STUB_BASE_ADDR 0x7ff000000000	/* == PVX_STUB_BASE */
#define STUB_TEXT_ADDR (STUB_BASE_ADDR + 0x1000)	/* .text.gadget starts here (stub/stub.lds) */

/* Offsets in .text.gadget. */
#define STUB_OFF_SYSCALL_GADGET 0x0	/* ptrace: syscall; int3 */
#define STUB_OFF_CLONE_GADGET 0x10	/* ptrace: a clone that leaves the child in pause() */
#define STUB_OFF_SC 0x40		/* stub_sc(): the C code's only way to make a syscall */
#define STUB_OFF_SITE_GENERIC 0x60	/* its syscall instruction */
#define STUB_OFF_RESTORER 0x6b		/* the signal restorer: mov $15,%eax; syscall */
#define STUB_OFF_SITE_SIGRETURN 0x70
#define STUB_OFF_K_READY 0x80		/* the main thread's loop (the stub's thread maker, "K") */
#define STUB_OFF_SITE_WAIT 0xc0		/* K: rt_sigtimedwait for the sentry's signal */
#define STUB_OFF_SITE_CLONE 0x120	/* K: clone of a stub thread */
#define STUB_OFF_SITE_REPORT 0x160	/* K: write(2) of its result to the sentry */
#define STUB_OFF_SITE_SECCOMP 0x1a0	/* a new thread: the filter that denies it K's sites */
#define STUB_OFF_FORK_GADGET 0x200	/* ptrace: a fork of the stub; the child waits in pause() */
#define STUB_FORK_SEIZE_S 60		/* ... and exits (SIGALRM) unless its tracer has it by then */
#define STUB_OFF_TWO_SYSCALLS 0x230	/* ptrace: syscall; second syscall (r12, r13); int3 */
#define STUB_OFF_K_FORK 0x240		/* seccomp, K: a fork of the whole stub on the sentry's order */
#define STUB_OFF_SITE_FORK 0x280	/* K: its clone(CLONE_PARENT | SIGCHLD) */
#define STUB_OFF_KSC 0x2c0		/* stub_ksc(): the forked K's setup, before any other thread exists */
#define STUB_OFF_SITE_KSC 0x2e0		/* its syscall instruction (K's only) */
#define STUB_OFF_CMPXCHG_GADGET 0x300	/* every platform: lock cmpxchg %ecx,(%rdi); int3 (futex atomics) */
#define STUB_OFF_PT 0x320		/* seccomp: stub_pt(): a guest read served in the trap handler */
#define STUB_OFF_SITE_PT 0x340		/* its syscall instruction: read/pread64 on a passthrough fd only */
#define STUB_OFF_BATCH 0x360		/* ptrace: a table of syscalls (rbx, r12 of them), one stop; int3 */
#define STUB_OFF_UT_PADS 0x400		/* seccomp: the usertrap's pads, STUB_UT_PAD bytes each, then its entry */

/*
 * seccomp, the usertrap (sentry/platform/seccomp_patch.md): a guest site
 * "mov $nr,%eax; syscall" (b8 imm32 0f 05) patched to "jmp *SLOT" (ff 24 25
 * imm32), SLOT = STUB_UT_TABLE_ADDR + 8 * k, a pointer to pad k in the
 * stub's text. The table is below 2 GiB, in the guest's range, so that the
 * imm32 reaches it; its third byte, which lands where the syscall's first
 * byte was, is 0x06: an invalid opcode in 64-bit mode.
 */
#define STUB_UT_TABLE_ADDR 0x60000
#define STUB_UT_SLOTS 1024

/*
 * The shapes of site patched (mm/usertrap.c). Both become the 7-byte jump;
 * every place in it where one of the original's instructions began (but
 * the first) holds a byte that faults there, so a thread that gets there
 * (a restart's rip - 2, a jump) is taken back by mm_ut_fixup.
 * - STUB_UT_MOV: "mov $nr,%eax; syscall" (b8 imm32 0f 05). The syscall's
 *   place is the imm32's third byte, 0x06 (invalid in 64-bit mode). It
 *   returns to site + 7.
 * - STUB_UT_READ: glibc's read, "xor %eax,%eax; syscall; cmp $-4096,%rax"
 *   (31 c0 0f 05 48 3d 00 f0 ff ff): the jump's SIB byte is 0xe5 (the same
 *   address as 0x25, and "in $imm8,%eax" there: a #GP), its imm32's second
 *   byte one of STUB_UT_READ_CLASSES (the slot is chosen for it). Its
 *   syscall leaves rip at site + 4; the cmp is made on the way back
 *   (stub_ut_cmp_flags), which goes on at site + 10 with rcx = site + 10.
 */
#define STUB_UT_MOV 0
#define STUB_UT_READ 1
#define STUB_UT_RET(shape) ((shape) == STUB_UT_READ ? 4 : 7)	/* where its syscall leaves rip, from the site */
#define STUB_UT_READ_LEN 10	/* a STUB_UT_READ site's bytes, the cmp's included: it goes on there */
#define STUB_UT_READ_CLASSES { 0x06, 0x07, 0x0e, 0x16, 0x17, 0x1e, 0x1f }	/* invalid opcodes: slot k >> 5 */

#ifndef __ASSEMBLER__
/* The arithmetic flags (CF PF AF ZF SF OF) of "cmp $-4096,%rax", without touching the stack. */
static inline unsigned long stub_ut_cmp_flags(unsigned long a)
{
	const unsigned long b = -4096UL, r = a - b;
	unsigned long f = 0, p = r & 0xff;

	p ^= p >> 4, p ^= p >> 2, p ^= p >> 1;
	f |= a < b ? 0x1 : 0;			/* CF */
	f |= p & 1 ? 0 : 0x4;			/* PF: an even number of bits set */
	f |= (a ^ b ^ r) & 0x10;		/* AF */
	f |= r ? 0 : 0x40;			/* ZF */
	f |= r >> 63 ? 0x80 : 0;		/* SF */
	f |= ((a ^ b) & (a ^ r)) >> 63 ? 0x800 : 0;	/* OF */
	return f;
}
#endif
#define STUB_UT_TABLE_SIZE (STUB_UT_SLOTS * 8)
#define STUB_UT_PAD 16
#define STUB_OFF_UT_ENTRY (STUB_OFF_UT_PADS + STUB_UT_SLOTS * STUB_UT_PAD)

/* The control page: written by the sentry only, mapped read-only (and sealed) in the stub. */
#define STUB_CTL_ADDR (STUB_BASE_ADDR + 0x80000)
#define STUB_CTL_OFF_SEQ 0		/* a new clone request when this changes */
#define STUB_CTL_OFF_REGION 8		/* ... for this region */
#define STUB_CTL_OFF_KSET 16		/* K's sigset: STUB_SIG_CTL */
#define STUB_CTL_OFF_CPROG 32		/* struct sock_fprog of the stub's filter */
#define STUB_CTL_OFF_GPROG 48		/* struct sock_fprog of the per-thread filter */
#define STUB_CTL_OFF_FSEQ 64		/* a new fork request when this changes */
#define STUB_CTL_OFF_PT 72		/* the passthrough bitmap: guest fd g is read at STUB_PT_BASE + g */

/* The shared regions: one per stub thread, read and written by guest code too. */
#define STUB_SHARED_ADDR (STUB_BASE_ADDR + 0x100000)
#define STUB_SHARED_SIZE 0x41000
#define STUB_IN_OFF 0x1000		/* seccomp: the input prefetch (in_addr, in_len, in_buf) */
#define STUB_IN_SIZE 0x3000
#define STUB_IN_MAX (STUB_IN_SIZE - 16)	/* ... and the most it copies */
#define STUB_ALTSTACK_OFF (STUB_IN_OFF + STUB_IN_SIZE)	/* the signal stack of the region's thread */
#define STUB_ALTSTACK_SIZE (0x41000 - STUB_ALTSTACK_OFF - STUB_FAST_SIZE)
#define STUB_FAST_SIZE 0x100		/* above it: the fast return's registers (stub.c fast_return) */
#define STUB_FAST_OFF (STUB_SHARED_SIZE - STUB_FAST_SIZE)
#define STUB_FAST_REGS 8		/* struct stub_fast: regs[] (FAST_POPS order: r8..r15 rdi rsi rbp rbx rdx rax rcx, eflags, rsp) */
#define STUB_FAST_SELF 176		/* ... self: the region's own address, which the usertrap finds through %gs */
#define STUB_MAX_THREADS 256

#define STUB_SIG_CTL 12			/* SIGUSR2: the sentry asks K for a thread */
#define STUB_FD_SOCK 3			/* SOCK_SEQPACKET: fds in, K's reports out */
#define STUB_FD_SHARED 4		/* memfd of the shared regions, closed once mapped */
#define STUB_FD_CTL 5			/* memfd of the control page, closed once mapped */
#define STUB_FD_KSOCK 6			/* SOCK_SEQPACKET, K's only: a forked K's own fds come in here */
#define STUB_PT_BASE 800		/* seccomp: the stub's dup of guest fd g (g < STUB_PT_MAX) is fd 800 + g */
#define STUB_PT_MAX 128
#define STUB_PT_ASK 31			/* seccomp: the trap handler leaves every 31st call it could serve to the sentry (stub_abi.h pt_count) */
#define STUB_PF_NRS 512			/* seccomp: syscall numbers the path prefetch table covers */
#define STUB_PF_MAX 2032		/* ... and the most it copies, the NULs included */
#define STUB_OUT_MAX 1536		/* seccomp: the largest syscall result the stub copies out on its way back */
#define STUB_FORK_CLONE_FLAGS 0x8011	/* CLONE_PARENT | SIGCHLD: the sentry's child, as every stub */
#define STUB_THREAD_CLONE_FLAGS 0x50f00	/* VM|FS|FILES|SIGHAND|THREAD|SYSVSEM */
#define STUB_EXIT_THREAD_FILTER 109	/* a new thread could not install its filter */

#endif

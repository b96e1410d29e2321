/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Every syscall instruction of the stub, each at its fixed place
 * (include/pvx/stub_layout.h); stub.lds puts this section first in .text.
 *
 * The seccomp filter trusts a syscall only at these exact addresses, and at
 * each only what the stub makes there. Guest code shares the address space
 * and can jump to any of them with registers of its choosing, so what a site
 * allows must be harmless in the guest's hands, with one exception: the
 * sites of K (the stub's main thread, which makes the stub's threads) are
 * denied to every other thread by a second filter each thread installs
 * before it runs anything the guest can touch. K itself never runs guest
 * code, keeps its state in registers, takes its orders from the control
 * page (read-only to the stub) and never uses its stack: nothing the guest
 * can write steers it.
 */
#include "pvx/stub_layout.h"

/* The C calling convention's six arguments into the syscall's registers (nr from rdi). */
.macro sc_args
	mov %rdi, %rax
	mov %rsi, %rdi
	mov %rdx, %rsi
	mov %rcx, %rdx
	mov %r8, %r10
	mov %r9, %r8
	mov 8(%rsp), %r9
.endm

	.section .text.gadget,"ax",@progbits

/* ptrace: run one syscall, stop at int3 */
	.globl stub_syscall_gadget
stub_syscall_gadget:
	syscall
	int3

/* ptrace: clone; the parent stops at int3, the child idles in pause() until seized */
	.org STUB_OFF_CLONE_GADGET, 0xcc
stub_clone_gadget:
	syscall
	test %rax, %rax
	jz 1f
	int3
1:	mov $34, %eax
	syscall
	jmp 1b

/* long stub_sc(long nr, long a0, ..., long a5): the syscall of all the stub's C code */
	.org STUB_OFF_SC, 0xcc
	.globl stub_sc
	.type stub_sc, @function
stub_sc:
	sc_args
	.org STUB_OFF_SITE_GENERIC, 0x90
	.globl stub_site_generic
stub_site_generic:
	syscall
	ret

/* The sa_restorer of the trap handler: rt_sigreturn into the (possibly new) guest state. */
	.org STUB_OFF_RESTORER, 0xcc
	.globl stub_restorer
stub_restorer:
	mov $15, %eax
	.org STUB_OFF_SITE_SIGRETURN, 0x90
	syscall
	hlt

/*
 * K, entered once the main thread's filter is in (seccomp_main): report
 * "ready", then for each STUB_SIG_CTL with a new clone_seq clone a thread on
 * region clone_region and report 1 byte (done) or 1 + errno bytes (failed).
 * Right after "ready" clone_seq is looked at once without a signal: the
 * sentry asks for a new stub's first thread before the stub runs
 * (stub_spawn_ask), which saves a signal and a report's round trip.
 * r13: the last clone_seq served; r12: the region of the next thread;
 * r14: the last fork_seq served (a fork request is looked at first);
 * r15: 1 until that first look.
 */
	.org STUB_OFF_K_READY, 0xcc
	.globl stub_k_ready
	.type stub_k_ready, @function
stub_k_ready:
	xor %r13d, %r13d
	xor %r14d, %r14d
	mov $1, %r15d				/* after "ready": a thread asked for already (clone_seq), no signal */
	mov $1, %edx
	jmp k_report
k_loop:
	mov $128, %eax				/* rt_sigtimedwait(&ctl->k_set, NULL, NULL, 8) */
	movabs $(STUB_CTL_ADDR + STUB_CTL_OFF_KSET), %rdi
	xor %esi, %esi
	xor %edx, %edx
	mov $8, %r10d
	.org STUB_OFF_SITE_WAIT, 0x90
	syscall
	cmp $STUB_SIG_CTL, %eax
	jne k_loop
	jmp k_fork_check
k_clone_check:
	movabs $(STUB_CTL_ADDR + STUB_CTL_OFF_SEQ), %rax
	mov (%rax), %rax
	cmp %rax, %r13
	je k_loop				/* no new request: a stray signal */
	mov %rax, %r13
	movabs $(STUB_CTL_ADDR + STUB_CTL_OFF_REGION), %rax
	mov (%rax), %r12
	mov $-22, %rax				/* EINVAL */
	cmp $STUB_MAX_THREADS, %r12
	jae k_failed
	mov $56, %eax				/* clone(flags, 0, 0, 0, 0): the child starts on our sp */
	mov $STUB_THREAD_CLONE_FLAGS, %edi
	xor %esi, %esi
	xor %edx, %edx
	xor %r10d, %r10d
	xor %r8d, %r8d
	.org STUB_OFF_SITE_CLONE, 0x90
	syscall
	test %rax, %rax
	jz k_child
	mov $1, %edx
	jns k_report
k_failed:
	mov %rax, %rdx
	neg %rdx
	inc %rdx
k_report:
	mov $1, %eax				/* write(STUB_FD_SOCK, ctl, len): only the length says something */
	mov $STUB_FD_SOCK, %edi
	movabs $STUB_CTL_ADDR, %rsi
	.org STUB_OFF_SITE_REPORT, 0x90
	syscall
	test %r15, %r15
	jz k_loop
	xor %r15d, %r15d
	jmp k_clone_check

/* A new stub thread, still on K's registers and touching no memory: its own filter first. */
k_child:
	mov $317, %eax				/* seccomp(SECCOMP_SET_MODE_FILTER, 0, &ctl->g_prog) */
	mov $1, %edi
	xor %esi, %esi
	movabs $(STUB_CTL_ADDR + STUB_CTL_OFF_GPROG), %rdx
	.org STUB_OFF_SITE_SECCOMP, 0x90
	syscall
	test %rax, %rax
	jnz 1f
	imul $STUB_SHARED_SIZE, %r12, %rdi	/* its region, and sp at the top of the region's altstack */
	movabs $STUB_SHARED_ADDR, %rax
	add %rax, %rdi
	lea (STUB_ALTSTACK_OFF + STUB_ALTSTACK_SIZE)(%rdi), %rsp
	call stub_thread_main
1:	mov $231, %eax				/* exit_group: a thread without its filter must not live */
	mov $STUB_EXIT_THREAD_FILTER, %edi
	jmp stub_site_generic

/*
 * ptrace: fork of the stub by the host (clone(CLONE_PARENT | SIGCHLD)); the
 * parent stops at int3, the child idles in pause() until its sentry thread
 * seizes it. The child inherits no parent-death signal: it asks for one
 * first, so it never outlives the sentry before its tracer has it (then
 * PTRACE_O_EXITKILL does). And an alarm: a child whose parent was killed
 * between the clone and the int3 is one the sentry never heard of, and
 * goes by itself. The tracer clears both (ptrace.c).
 */
	.org STUB_OFF_FORK_GADGET, 0xcc
stub_fork_gadget:
	syscall
	test %rax, %rax
	jz 1f
	int3
1:	mov $157, %eax				/* prctl(PR_SET_PDEATHSIG, SIGKILL) */
	mov $1, %edi
	mov $9, %esi
	syscall
	mov $37, %eax				/* alarm(STUB_FORK_SEIZE_S) */
	mov $STUB_FORK_SEIZE_S, %edi
	syscall
2:	mov $34, %eax
	syscall
	jmp 2b

/*
 * ptrace: two syscalls for one stop of the tracer, which sets the first's
 * number and arguments as for the syscall gadget and the second's number
 * in r12 and first argument in r13 (its other arguments are the first's:
 * syscall keeps them). Used on a forked child just seized, to clear its
 * parent-death signal and its alarm (ptrace.c).
 */
	.org STUB_OFF_TWO_SYSCALLS, 0xcc
stub_two_syscalls:
	syscall
	mov %rax, %rbx
	mov %r12, %rax
	mov %r13, %rdi
	syscall
	int3

/*
 * seccomp, K: fork the whole stub when fork_seq changed (the sentry's order).
 * The parent reports like a clone (1 byte, or 1 + errno). The child is a
 * process of one thread, K, with the parent's memory copy-on-write, without
 * the shared regions and the control page (MADV_DONTFORK), and with fds
 * 3 and 6 still the parent's sockets: stub_fork_child() takes the fds the
 * sentry sent for it on fd 6 and puts its own regions, control page and
 * sockets in their place before it makes any thread, then K starts over.
 * No guest thread exists in the child until K makes one on the sentry's order.
 */
	.org STUB_OFF_K_FORK, 0xcc
k_fork_check:
	movabs $(STUB_CTL_ADDR + STUB_CTL_OFF_FSEQ), %rax
	mov (%rax), %rax
	cmp %rax, %r14
	je k_clone_check
	mov %rax, %r14
	mov $56, %eax				/* clone(CLONE_PARENT | SIGCHLD, 0, 0, 0, 0) */
	mov $STUB_FORK_CLONE_FLAGS, %edi
	xor %esi, %esi
	xor %edx, %edx
	xor %r10d, %r10d
	xor %r8d, %r8d
	.org STUB_OFF_SITE_FORK, 0x90
	syscall
	test %rax, %rax
	jz 1f
	js k_failed
	mov $1, %edx
	jmp k_report
1:	and $-16, %rsp				/* the child: the only thread, on K's (now private) stack */
	call stub_fork_child
	hlt

/* long stub_ksc(long nr, long a0, ..., long a5): the syscalls of stub_fork_child() */
	.org STUB_OFF_KSC, 0xcc
	.globl stub_ksc
	.type stub_ksc, @function
stub_ksc:
	sc_args
	.org STUB_OFF_SITE_KSC, 0x90
	syscall
	ret

/*
 * Every platform: the sentry's atomic read-modify-write of a guest word
 * (futex ops), run as guest code in the guest's own mm: *(u32 *)rdi
 * becomes ecx if it is eax; eax is what it was. It stops at int3; a bad
 * address faults on the cmpxchg itself (EFAULT). No syscall: in the
 * guest's hands it is an instruction the guest can run anyway.
 */
	.org STUB_OFF_CMPXCHG_GADGET, 0xcc
	.globl stub_cmpxchg_gadget
stub_cmpxchg_gadget:
	lock cmpxchg %ecx, (%rdi)
	int3

/*
 * seccomp: long stub_pt(long nr, long fd, long buf, long count, long off):
 * a guest read(2)/pread64(2) served by the trap handler on the stub's dup
 * of the guest's fd. The filter allows only read and pread64 here, only on
 * fds [STUB_PT_BASE, STUB_PT_BASE + STUB_PT_MAX): guest code jumping here
 * reads a file its process opened for reading into its own memory.
 */
	.org STUB_OFF_PT, 0xcc
	.globl stub_pt
	.type stub_pt, @function
stub_pt:
	sc_args
	.org STUB_OFF_SITE_PT, 0x90
	syscall
	ret

/*
 * ptrace: r12 syscalls in one stop of the tracer, from the table at rbx,
 * 8 words each: the number, six arguments and flags (1: keep the result
 * in r13; 2: r8, the fd of an mmap, is r13; 4: rdi, the fd of a close, is
 * r13), so a pidfd_getfd's fd serves the calls after it. It stops at int3
 * after the last or at the first that failed (rax in [-4095, -1]): rax is
 * that call's result, r12 how many were left (0: all ran). Guest code that
 * jumps here gets what a syscall instruction of its own gets (seccomp:
 * this is no site; ptrace: PTRACE_SYSEMU).
 */
	.org STUB_OFF_BATCH, 0xcc
stub_batch:
1:	mov (%rbx), %rax
	mov 8(%rbx), %rdi
	mov 16(%rbx), %rsi
	mov 24(%rbx), %rdx
	mov 32(%rbx), %r10
	mov 40(%rbx), %r8
	mov 48(%rbx), %r9
	testb $2, 56(%rbx)
	cmovnz %r13, %r8
	testb $4, 56(%rbx)
	cmovnz %r13, %rdi
	syscall
	cmp $-4095, %rax
	jae 2f
	testb $1, 56(%rbx)
	cmovnz %rax, %r13
	add $64, %rbx
	dec %r12
	jnz 1b
2:	int3

/*
 * seccomp, the usertrap (sentry/platform/seccomp_patch.md): pad k, where
 * slot k of the table at STUB_UT_TABLE_ADDR points, then the entry. A
 * patched site jumps here with every register the guest's but rax (its
 * mov is gone, and the syscall would have overwritten rax), rcx and r11
 * (a syscall's), and with the guest's flags. Nothing is pushed before the
 * region's altstack: the guest's red zone stays as it was. The region is
 * the one %gs points at (the stub loads it for a guest whose own GS base
 * is 0: stub.c). stub_ut_trap (stub.c) goes on from the altstack. Guest
 * code that jumps here with registers of its choosing traps for the
 * sentry, which knows the slots, or faults: no syscall is made here.
 */
	.org STUB_OFF_UT_PADS, 0xcc
	.globl stub_ut_pads
stub_ut_pads:
	.set ut_k, 0
	.rept STUB_UT_SLOTS
	mov $ut_k, %r11d
	jmp stub_ut_entry
	.balign STUB_UT_PAD, 0xcc
	.set ut_k, ut_k + 1
	.endr

#define UT_SAVE(reg, i) mov %reg, (STUB_FAST_OFF + STUB_FAST_REGS + (i) * 8)(%rcx)
	.org STUB_OFF_UT_ENTRY, 0xcc
	.globl stub_ut_entry, stub_ut_onstack, stub_ut_end
stub_ut_entry:
	lahf			/* the flags the guest had: SF ZF AF PF CF in ah, */
	seto %al		/* OF in al (the others no instruction below changes) */
	mov %gs:(STUB_FAST_OFF + STUB_FAST_SELF), %rcx
	UT_SAVE(rsp, 16)
	lea (STUB_FAST_OFF - 64)(%rcx), %rsp
stub_ut_onstack:		/* on the region's altstack from here on */
	UT_SAVE(r8, 0)
	UT_SAVE(r9, 1)
	UT_SAVE(r10, 2)
	UT_SAVE(r12, 4)
	UT_SAVE(r13, 5)
	UT_SAVE(r14, 6)
	UT_SAVE(r15, 7)
	UT_SAVE(rdi, 8)
	UT_SAVE(rsi, 9)
	UT_SAVE(rbp, 10)
	UT_SAVE(rbx, 11)
	UT_SAVE(rdx, 12)
	mov %rcx, %rdi
	mov %r11d, %esi
	movzwl %ax, %edx
	pushfq
	pop %rcx
	cld
	call stub_ut_trap
	ud2
stub_ut_end:

	.section .note.GNU-stack,"",@progbits

/* sec_stub_fastret: a hostile guest aimed at the seccomp stub's fast return (stub/stub.c stub_fast_jump,
 * fast_return), which loads the guest's registers, signal mask and FPU state itself instead of rt_sigreturn.
 * usage: sec_stub_fastret jump|fpu
 *   jump  jump into stub_fast_jump (found by its bytes in the stub's text) with a block of our own (its
 *         return address, registers and mask) and "set the mask": it may only set that mask (which the
 *         generic site allows anyway), go where the block's return address says (its own window, here) and
 *         load the block's registers, landing where its rcx says. Prints "landed with the forged registers"
 *         and exits 0.
 *   fpu   a second thread keeps corrupting the FPU header of the main thread's signal frame (reserved
 *         XSTATE_BV bits, reserved MXCSR bits) in its shared region while the main thread makes syscalls:
 *         the stub's xrstor faults and the handler falls back to rt_sigreturn, whose check of the frame gives
 *         the guest SIGSEGV, as Linux's sigreturn does with a bad frame; or the syscalls all return. Either
 *         way the stub lives on and the sandbox ends. Prints "fpu: N calls" when it was never hit.
 * Natively and on vmexec the stub's range is empty: "no stub", exit 2. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "guest.h"
#include "stubgadget.h"

#define REGION 0x41000UL		/* STUB_SHARED_SIZE */
#define ALTSTACK_END (0x41000UL - 0x100UL)	/* STUB_ALTSTACK_OFF + STUB_ALTSTACK_SIZE: the region less the fast block */
#define MAGIC1 0x46505853U
#define UCONTEXT_OFF 136		/* struct stub_shared: ucontext, the last trap's frame */
#define FPSTATE_IN_UC (40 + 184)	/* struct k_ucontext: mc, then struct k_sigcontext: fpstate */

/* mov %rdi,%rsp; test %esi,%esi; je +N; lea 144(%rdi),%rsi */
static const unsigned char fast_jump_bytes[] = { 0x48, 0x89, 0xfc, 0x85, 0xf6, 0x74 };
static const unsigned char fast_jump_lea[] = { 0x48, 0x8d, 0xb7, 0x90, 0x00, 0x00, 0x00 };

/* struct stub_fast: ret, r8..r15, rdi, rsi, rbp, rbx, rdx, rax, rcx, eflags, rsp, mask, pending */
uint64_t block[20];
uint64_t got_r12, got_rbx;
static char landing_stack[64 << 10] __attribute__((aligned(16)));

void landed(void);
__asm__(".text\n"
	"landed:\n"
	"	mov %r12, got_r12(%rip)\n"
	"	mov %rbx, got_rbx(%rip)\n"
	"	and $-16, %rsp\n"
	"	call landed_c\n"
	"	hlt\n");

__attribute__((used, noreturn)) void landed_c(void)
{
	say("landed with the forged registers: %s\n", yesno(got_r12 == 0x1212121212121212UL && got_rbx == 0x1b1bUL));
	syscall(SYS_exit_group, 0);
	for (;;)
		;
}

static int jump(void)
{
	uintptr_t end = STUB_TEXT;
	while (end < STUB_TEXT + 64 * PG && readable(end))
		end += PG;
	const unsigned char *p = (const unsigned char *)STUB_TEXT;
	uintptr_t at = 0;
	for (size_t i = 0; i + sizeof(fast_jump_bytes) <= end - STUB_TEXT; i++)
		if (!memcmp(p + i, fast_jump_bytes, sizeof(fast_jump_bytes)) &&
		    !memcmp(p + i + sizeof(fast_jump_bytes) + 1, fast_jump_lea, sizeof(fast_jump_lea))) {
			at = STUB_TEXT + i;
			break;
		}
	if (!at) {
		say("no fast return in the stub's text\n");
		return 1;
	}
	/* where the generic site's ret goes: the window, just past "je +N" (add $8,%rsp is the je's target) */
	const unsigned char *je = p + (at - STUB_TEXT) + sizeof(fast_jump_bytes);
	block[0] = at + sizeof(fast_jump_bytes) + 1 + je[0] + 4;
	block[1 + 4] = 0x1212121212121212UL;	/* r12 */
	block[1 + 11] = 0x1b1bUL;		/* rbx */
	block[1 + 14] = (uint64_t)landed;	/* rcx: where it lands */
	block[1 + 15] = 0x202;			/* eflags */
	block[1 + 16] = (uint64_t)(landing_stack + sizeof(landing_stack));
	block[18] = 0;				/* the mask: nothing blocked */
	block[19] = 0;				/* nothing pending */
	__asm__ volatile("sub $128, %%rsp\n\tjmp *%0" : : "r"(at), "D"(block), "S"(1) : "memory");
	__builtin_unreachable();
}

static volatile int stop;

/*
 * Corrupt the FPU header of the main thread's current signal frame: region 0's ucontext word names the
 * frame, whose fpstate pointer names the header (every frame of a trap from guest code is at the top of
 * the altstack, so a stale pointer names the same place). Only that: the rest of the altstack holds the
 * handler's own stack, whose corruption ends the stub (the guest's own, and allowed: see stub.c).
 */
static void *corrupter(void *arg)
{
	uintptr_t lo = STUB_SHARED + 0x4000 /* STUB_ALTSTACK_OFF */, hi = STUB_SHARED + ALTSTACK_END;
	long round = 0;
	(void)arg;
	while (!stop) {
		uintptr_t uc = *(volatile uint64_t *)(STUB_SHARED + UCONTEXT_OFF);
		if (uc < lo || uc + FPSTATE_IN_UC + 8 > hi)
			continue;
		uintptr_t fp = *(volatile uint64_t *)(uc + FPSTATE_IN_UC);
		if (fp < lo || fp + 576 > hi || (fp & 63) || *(volatile uint32_t *)(fp + 464) != MAGIC1)
			continue;
		if (round++ & 1)
			*(volatile uint64_t *)(fp + 512) |= 1UL << 62;	/* XSTATE_BV: a reserved bit */
		else
			*(volatile uint32_t *)(fp + 24) |= 1U << 31;	/* MXCSR: a reserved bit */
	}
	return NULL;
}

static int fpu(void)
{
	static char stack[256 << 10] __attribute__((aligned(4096)));
	pthread_attr_t a;
	pthread_t t;
	long i, n = 200000;

	pthread_attr_init(&a);
	pthread_attr_setstack(&a, stack, sizeof(stack));	/* no mmap by the guest's libc */
	if (pthread_create(&t, &a, corrupter, NULL))
		return 3;
	for (i = 0; i < n; i++)
		syscall(SYS_getppid);
	stop = 1;
	pthread_join(t, NULL);
	say("fpu: %ld calls\n", i);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	probe_init();
	if (!readable(STUB_TEXT) || !readable(STUB_SHARED)) {
		say("no stub\n");
		return 2;
	}
	if (!strcmp(argv[1], "jump"))
		return jump();
	if (!strcmp(argv[1], "fpu"))
		return fpu();
	return 2;
}

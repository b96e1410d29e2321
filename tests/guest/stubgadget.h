/* Helpers of the hostile guests aimed at pvx's stub (tests/guest/sec_stub_*.c): find the stub's own
 * instructions in its text (it shares the guest's address space on the ptrace and seccomp platforms) and
 * run them with registers the guest chose, as an attacker would. Only meaningful inside pvx: natively the
 * stub's range is unmapped, and every helper here then finds nothing.
 *
 * The addresses are pvx's layout (include/pvx/mm.h, include/pvx/stub_abi.h); the patterns are those of the
 * stubs this suite has known, so a test can tell "the attack was tried and contained" from "nothing to try". */
#ifndef PVX_TEST_STUBGADGET_H
#define PVX_TEST_STUBGADGET_H

#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>

#define STUB_BASE 0x7ff000000000UL	/* PVX_GUEST_TASK_SIZE: the stub's range starts here */
#define STUB_TEXT (STUB_BASE + 0x1000)
#define STUB_SHARED (STUB_BASE + 0x100000)	/* the seccomp stub's shared regions */
#define PG 4096UL

/* Probing memory the guest does not own: a fault is caught and reported instead of killing us. */
static __thread sigjmp_buf probe_jb;
static __thread volatile int probing;

static void probe_fault(int sig)
{
	if (probing) {
		probing = 0;
		siglongjmp(probe_jb, sig);
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

static __attribute__((unused)) void probe_init(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = probe_fault;
	sa.sa_flags = SA_NODEFER;
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
	sigaction(SIGTRAP, &sa, NULL);
}

/* Can the guest read the byte at addr? (probe_init first) */
static __attribute__((unused)) int readable(uintptr_t addr)
{
	if (sigsetjmp(probe_jb, 1))
		return 0;
	probing = 1;
	(void)*(volatile unsigned char *)addr;
	probing = 0;
	return 1;
}

struct stub_gadgets {
	uintptr_t first;	/* the first syscall instruction of the text */
	uintptr_t ret;		/* "syscall; ret": returns whatever rax is */
	uintptr_t retnz;	/* "syscall; test %rax,%rax; jnz <ret>": returns when rax != 0 */
	uintptr_t sigreturn;	/* the syscall of "mov $15,%eax; syscall" (the signal restorer) */
	uintptr_t clone;	/* the syscall of "mov $56,%eax; syscall; test %rax,%rax; jnz <ret>" */
	uintptr_t end;		/* the first unreadable page after the text */
};

/* Scan the stub's text for the instruction sequences above (probe_init first). */
static __attribute__((unused)) void find_gadgets(struct stub_gadgets *g)
{
	memset(g, 0, sizeof(*g));
	uintptr_t end = STUB_TEXT;
	while (end < STUB_TEXT + 64 * PG && readable(end))
		end += PG;
	g->end = end;
	const unsigned char *p = (const unsigned char *)STUB_TEXT;
	size_t n = end - STUB_TEXT;
	for (size_t i = 0; i + 2 <= n; i++) {
		if (p[i] != 0x0f || p[i + 1] != 0x05)
			continue;
		uintptr_t at = STUB_TEXT + i;
		if (!g->first)
			g->first = at;
		if (!g->ret && i + 3 <= n && p[i + 2] == 0xc3)
			g->ret = at;
		if (i + 7 <= n && !memcmp(p + i + 2, "\x48\x85\xc0\x75", 4) && i + 7 + p[i + 6] < n &&
		    p[i + 7 + p[i + 6]] == 0xc3) {
			if (!g->retnz)
				g->retnz = at;
			if (i >= 5 && !memcmp(p + i - 5, "\xb8\x38\x00\x00\x00", 5))
				g->clone = at;
		}
		if (!g->sigreturn && i >= 5 && !memcmp(p + i - 5, "\xb8\x0f\x00\x00\x00", 5))
			g->sigreturn = at;
	}
}

/* A gadget that returns to us when the call returns non-zero (an address, a tid, an error). */
static __attribute__((unused)) uintptr_t gadget_nonzero(const struct stub_gadgets *g)
{
	return g->ret ? g->ret : g->retnz;
}

/* Call the stub's instruction at gadget with the guest's registers: rax = nr, then the syscall ABI. */
static __attribute__((unused)) long stub_call(uintptr_t gadget, long nr, long a0, long a1, long a2, long a3, long a4,
					      long a5)
{
	register long r10 __asm__("r10") = a3, r8 __asm__("r8") = a4, r9 __asm__("r9") = a5;
	long ret;

	/* the red zone below rsp belongs to the caller: step over it before the call pushes */
	__asm__ volatile("sub $128, %%rsp\n\t"
			 "call *%[g]\n\t"
			 "add $128, %%rsp"
			 : "=a"(ret)
			 : [g] "r"(gadget), "a"(nr), "D"(a0), "S"(a1), "d"(a2), "r"(r10), "r"(r8), "r"(r9)
			 : "rcx", "r11", "memory");
	return ret;
}

#endif

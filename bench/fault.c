/*
 * Fault round-trip benchmark guest: N loads from a PROT_NONE page, each one a
 * SIGSEGV whose handler skips the 2-byte load and returns (rt_sigreturn).
 * Natively that is the kernel's signal delivery + sigreturn; in pvx it is a
 * fault trap to the sentry, a handler frame, and an emulated rt_sigreturn.
 *   fault [N]  ->  "fault N ns_per_fault"
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <ucontext.h>
#include "bench.h"

static void on_segv(int sig, siginfo_t *si, void *ctx)
{
	ucontext_t *uc = ctx;

	(void)sig, (void)si;
	uc->uc_mcontext.gregs[REG_RIP] += 2;	/* skip "mov (%rax),%eax" (8b 00) */
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 10000;
	struct sigaction sa = { .sa_sigaction = on_segv, .sa_flags = SA_SIGINFO };
	void *page = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (page == MAP_FAILED || sigaction(SIGSEGV, &sa, NULL))
		return 1;
	double t0 = now_ns();
	for (long i = 0; i < n; i++)
		__asm__ volatile(".byte 0x8b, 0x00" ::"a"(page) : "memory");
	double t1 = now_ns();
	printf("fault %ld %.1f\n", n, (t1 - t0) / n);
	return 0;
}

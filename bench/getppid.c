/*
 * Trap round-trip benchmark guest: N raw getppid() syscalls, timed with
 * CLOCK_MONOTONIC. Natively it is the floor (a real host syscall); in pvx
 * every call is a trap to the sentry, an emulated no-op and a return.
 *   getppid [N]  ->  "getppid N ns_per_call"
 * musl's syscall() loads rax from a register, a site the seccomp platform
 * never patches (sentry/platform/seccomp_patch.md). With "site", each call
 * is "mov $110,%eax; syscall", as glibc's getppid() is: a patched site's
 * round trip on seccomp.
 *   getppid N site  ->  "getppid-site N ns_per_call"
 */
#include <string.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "bench.h"

static long site_getppid(void)
{
	long r;

	__asm__ volatile("mov $110, %%eax\n\tsyscall" : "=a"(r) : : "rcx", "r11", "memory");
	return r;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 100000;
	int site = argc > 2 && !strcmp(argv[2], "site");

	for (int i = 0; i < 100; i++)	/* warm up */
		site ? site_getppid() : syscall(SYS_getppid);
	double t0 = now_ns();
	if (site)
		for (long i = 0; i < n; i++)
			site_getppid();
	else
		for (long i = 0; i < n; i++)
			syscall(SYS_getppid);
	double t1 = now_ns();
	printf("getppid%s %ld %.1f\n", site ? "-site" : "", n, (t1 - t0) / n);
	return 0;
}

/*
 * Trap round-trip benchmark guest: N raw getppid() syscalls, timed with
 * CLOCK_MONOTONIC. Natively it is the floor (a real host syscall); in pvx
 * every call is a trap to the sentry, an emulated no-op and a return.
 *   getppid [N]  ->  "getppid N ns_per_call"
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "bench.h"

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 100000;

	for (int i = 0; i < 100; i++)	/* warm up */
		syscall(SYS_getppid);
	double t0 = now_ns();
	for (long i = 0; i < n; i++)
		syscall(SYS_getppid);
	double t1 = now_ns();
	printf("getppid %ld %.1f\n", n, (t1 - t0) / n);
	return 0;
}

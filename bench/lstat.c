/*
 * Path-call benchmark guest: N lstat() of one absolute path (default
 * /usr/bin/env: no symlink on the way), timed with CLOCK_MONOTONIC. In pvx
 * every call is a trap, a copy of the path in, a walk inside the root, the
 * file policy's look at what was found and a copy of the stat out: the
 * unit cost of find(1) and tar(1) (issue 16).
 *   lstat [N [PATH]]  ->  "lstat N ns_per_call"
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include "bench.h"

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 100000;
	const char *path = argc > 2 ? argv[2] : "/usr/bin/env";
	struct stat st;

	for (int i = 0; i < 100; i++)	/* warm up */
		if (lstat(path, &st) < 0) {
			perror(path);
			return 1;
		}
	double t0 = now_ns();
	for (long i = 0; i < n; i++)
		lstat(path, &st);
	double t1 = now_ns();
	printf("lstat %ld %.1f\n", n, (t1 - t0) / n);
	return 0;
}

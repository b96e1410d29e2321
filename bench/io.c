/*
 * I/O benchmark guest: pread() a file in 64 KiB chunks, several passes
 * (page cache warm), and report MB/s. On vmexec the sentry can read straight
 * into guest memory (zero-copy, PROCESS_VM_EXEC_SYSCALL) or through its own
 * buffer (PVX_COPY_IO=1): compare the two.
 *   io FILE [PASSES]  ->  "io BYTES MB_per_s"
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static char buf[64 << 10];

int main(int argc, char **argv)
{
	int passes = argc > 2 ? atoi(argv[2]) : 20;
	long long total = 0;
	struct timespec a, b;
	int fd = argc > 1 ? open(argv[1], O_RDONLY) : -1;

	if (fd < 0)
		return 1;
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (int p = 0; p < passes; p++) {
		off_t off = 0;
		ssize_t n;
		while ((n = pread(fd, buf, sizeof(buf), off)) > 0) {
			off += n;
			total += n;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	double s = (b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9;
	printf("io %lld %.1f\n", total, total / s / 1e6);
	return 0;
}

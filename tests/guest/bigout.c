/* bigout: writes SIZE bytes (default 1 MiB) of a deterministic pattern to stdout, in one write() call
 * per remaining chunk (short writes to pipes are retried), or with "--small" in 100-byte writes. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	size_t size = argc > 1 ? strtoul(argv[1], NULL, 0) : 1 << 20;
	size_t chunk = argc > 2 && !strcmp(argv[2], "--small") ? 100 : size;
	char *buf = malloc(size ? size : 1);
	if (!buf)
		return 3;
	unsigned int x = 12345;
	for (size_t i = 0; i < size; i++) {
		x = x * 1103515245u + 12345u;
		buf[i] = (i % 64 == 63) ? '\n' : 'a' + (x >> 16) % 26;
	}
	for (size_t off = 0; off < size;) {
		size_t want = size - off < chunk ? size - off : chunk;
		ssize_t n = write(1, buf + off, want);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			fprintf(stderr, "write failed at %zu\n", off);
			return 1;
		}
		off += n;
	}
	return 0;
}

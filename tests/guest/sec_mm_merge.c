/* sec_mm_merge: neighbouring mappings that Linux merges into one VMA are one VMA in /proc/self/maps and
 * one VMA for mremap; ones it does not merge stay apart.
 * usage: sec_mm_merge FILE   (FILE: readable, at least 3 pages) */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define PG 4096UL
static char *R;	/* a 16-page PROT_NONE reservation everything below happens in */

/* Print the lines of /proc/self/maps inside R, relative to R; no allocation (it could land in R). */
static void maps(const char *what)
{
	static char buf[1 << 16];
	int fd = open("/proc/self/maps", O_RDONLY);
	size_t n = 0;
	ssize_t r;

	while (fd >= 0 && n < sizeof buf - 1 && (r = read(fd, buf + n, sizeof buf - 1 - n)) > 0)
		n += r;
	buf[n] = 0;
	close(fd);
	printf("%s:\n", what);
	for (char *line = buf, *end; *line; line = end + 1) {
		unsigned long a, b, off;
		char perms[8];
		if (!(end = strchr(line, '\n')))
			break;
		*end = 0;
		if (sscanf(line, "%lx-%lx %7s %lx", &a, &b, perms, &off) != 4)
			continue;
		if (a >= (unsigned long)R + 16 * PG || b <= (unsigned long)R)
			continue;
		printf("  +%lu-+%lu %s %s%lu\n", (a - (unsigned long)R) / PG, (b - (unsigned long)R) / PG, perms,
		       strchr(line, '/') ? "file page " : "", strchr(line, '/') ? off / PG : 0);
	}
	fflush(stdout);
}

static void fixed(int page, int n, int prot, int flags, int fd, int fpage)
{
	if (mmap(R + page * PG, n * PG, prot, flags | MAP_FIXED, fd, fpage * PG) == MAP_FAILED)
		printf("mmap at +%d failed\n", page);
}

int main(int argc, char **argv)
{
	int fd = argc > 1 ? open(argv[1], O_RDONLY) : -1;

	if (fd < 0)
		return 2;
	R = mmap(NULL, 16 * PG, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	for (int i = 1; i <= 3; i++)
		fixed(i, 1, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	for (int i = 1; i <= 3; i++)
		R[i * PG] = (char)i;
	maps("three anonymous pages mapped one by one");
	mprotect(R + 2 * PG, PG, PROT_READ);
	maps("the middle one read-only");
	mprotect(R + 2 * PG, PG, PROT_READ | PROT_WRITE);
	maps("and writable again");
	mprotect(R + 1 * PG, PG, PROT_READ | PROT_WRITE);
	maps("an mprotect that changes nothing");

	fixed(6, 1, PROT_READ, MAP_PRIVATE, fd, 0);
	fixed(7, 1, PROT_READ, MAP_PRIVATE, fd, 1);
	fixed(8, 1, PROT_READ, MAP_PRIVATE, fd, 3);
	fixed(9, 1, PROT_READ, MAP_PRIVATE, fd, 4);
	int fd2 = open(argv[1], O_RDONLY);
	fixed(10, 1, PROT_READ, MAP_PRIVATE, fd2, 5);
	maps("file pages 0, 1, 3, 4 by one fd, then 5 by another open of the file");

	/* mremap of a range made of three mmaps: one VMA on Linux, so it may move. */
	char *m = mremap(R + PG, 3 * PG, 5 * PG, MREMAP_MAYMOVE);
	printf("mremap of the three pages to five: %s", m == MAP_FAILED ? "failed\n" : "ok");
	if (m != MAP_FAILED)
		printf(", contents %d %d %d, moved %s\n", m[0], m[PG], m[2 * PG], m == R + PG ? "no" : "yes");
	maps("after mremap");
	return 0;
}

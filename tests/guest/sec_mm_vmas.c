/* sec_mm_vmas: many small mappings, to show that the sentry's VMA bookkeeping stays O(log n) per call.
 *   sec_mm_vmas many N     N one-page anonymous mmaps (kernel-chosen addresses), then N munmaps
 *   sec_mm_vmas frag K N   K one-page mappings of alternating protection (K distinct VMAs: no merging),
 *                          then N mmap+mprotect+munmap rounds among them, then unmap everything
 *   sec_mm_vmas same N     N mprotects that change nothing, each on another page of one mapping, from
 *                          the top down (Linux keeps one VMA; a bookkeeping that splits grows by 2 a call)
 * Prints what happened, the same natively and in the sandbox; exit 0 when every call succeeded. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define PG 4096UL

/* Seconds since the previous call, for the timings on stderr (stdout stays comparable). */
static double lap(void)
{
	static struct timespec last;
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	double d = (now.tv_sec - last.tv_sec) + (now.tv_nsec - last.tv_nsec) / 1e9;
	last = now;
	return d;
}

static int fail(const char *what, long i)
{
	printf("%s failed at %ld\n", what, i);
	return 1;
}

static int many(long n)
{
	char **p = malloc(n * sizeof(*p));

	if (!p)
		return fail("malloc", 0);
	lap();
	for (long i = 0; i < n; i++) {
		p[i] = mmap(NULL, PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p[i] == MAP_FAILED)
			return fail("mmap", i);
		p[i][0] = (char)i;
	}
	fprintf(stderr, "%ld mmaps: %.3f s\n", n, lap());
	for (long i = 0; i < n; i++)
		if (p[i][0] != (char)i)
			return fail("check", i);
	lap();
	for (long i = 0; i < n; i++)
		if (munmap(p[i], PG))
			return fail("munmap", i);
	fprintf(stderr, "%ld munmaps: %.3f s\n", n, lap());
	printf("many: %ld mmaps and munmaps\n", n);
	return 0;
}

static int frag(long k, long n)
{
	/* One reservation, then k fixed one-page maps inside it with alternating protection. */
	char *base = mmap(NULL, k * PG, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (base == MAP_FAILED)
		return fail("reserve", 0);
	lap();
	for (long i = 0; i < k; i++)
		if (mmap(base + i * PG, PG, i & 1 ? PROT_READ : PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED)
			return fail("fixed mmap", i);
	fprintf(stderr, "%ld fixed mmaps: %.3f s\n", k, lap());
	for (long i = 0; i < n; i++) {
		char *q = mmap(NULL, 2 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (q == MAP_FAILED)
			return fail("mmap", i);
		q[PG] = 1;
		if (mprotect(q, PG, PROT_READ))
			return fail("mprotect", i);
		/* and one page in the middle of the fragmented region changes twice */
		char *r = base + ((i * 7919) % k) * PG;
		int prot = ((r - base) / PG) & 1 ? PROT_READ : PROT_READ | PROT_WRITE;
		if (mprotect(r, PG, PROT_NONE) || mprotect(r, PG, prot))
			return fail("mprotect middle", i);
		if (munmap(q, 2 * PG))
			return fail("munmap", i);
	}
	fprintf(stderr, "%ld rounds: %.3f s\n", n, lap());
	for (long i = 0; i < k; i += 2)
		base[i * PG] = 2;
	if (munmap(base, k * PG))
		return fail("munmap all", 0);
	printf("frag: %ld vmas, %ld rounds\n", k, n);
	return 0;
}

static int same(long n)
{
	char *p = mmap(NULL, (2 * n + 1) * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return fail("mmap", 0);
	lap();
	for (long i = n - 1; i >= 0; i--)
		if (mprotect(p + (2 * i + 1) * PG, PG, PROT_READ | PROT_WRITE))
			return fail("mprotect", i);
	fprintf(stderr, "%ld mprotects: %.3f s\n", n, lap());
	p[0] = p[2 * n * PG] = 1;
	if (munmap(p, (2 * n + 1) * PG))
		return fail("munmap", 0);
	printf("same: %ld mprotects\n", n);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "same"))
		return same(atol(argv[2]));
	if (argc == 3 && !strcmp(argv[1], "many"))
		return many(atol(argv[2]));
	if (argc == 4 && !strcmp(argv[1], "frag"))
		return frag(atol(argv[2]), atol(argv[3]));
	fprintf(stderr, "usage: sec_mm_vmas many N | frag K N | same N\n");
	return 2;
}

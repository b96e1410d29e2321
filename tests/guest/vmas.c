/* vmas: a deterministic random walk of mmap/munmap/mprotect/madvise/write over a 256-page region,
 * checked after every step against a shadow model of what each page must hold. Exercises VMA split,
 * merge and replace. Prints a running digest so native and sandbox runs can be compared.
 * usage: vmas LINES_FILE [STEPS] */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define PG 4096
#define NPG 256

struct page {
	int mapped;
	int prot;	/* PROT_* */
	int content;	/* >= 0: anon tag byte; < 0: file page -(content+1) */
};

static struct page shadow[NPG];
static unsigned char *base;
static unsigned char filebuf[4 * PG];
static unsigned long seed = 88172645463325252UL;

static unsigned long rnd(unsigned long n)
{
	seed ^= seed << 13;
	seed ^= seed >> 7;
	seed ^= seed << 17;
	return seed % n;
}

static int check_page(int i)
{
	const struct page *p = &shadow[i];
	if (!p->mapped || !(p->prot & PROT_READ))
		return 1;
	const unsigned char *a = base + (size_t)i * PG;
	if (p->content >= 0)
		return a[0] == p->content && a[PG / 2] == p->content && a[PG - 1] == p->content;
	const unsigned char *f = filebuf + (size_t)(-(p->content + 1)) * PG;
	return memcmp(a, f, 16) == 0 && a[PG - 1] == f[PG - 1];
}

static int all_mapped(int s, int n)
{
	for (int i = s; i < s + n; i++)
		if (!shadow[i].mapped)
			return 0;
	return 1;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: vmas LINES_FILE [STEPS]\n");
		return 2;
	}
	int steps = argc > 2 ? atoi(argv[2]) : 3000;
	int fd = open(argv[1], O_RDONLY);
	if (fd < 0 || pread(fd, filebuf, sizeof(filebuf), 0) < 13000) {
		printf("cannot read %s\n", argv[1]);
		return 1;
	}
	/* reserve the region, then release it: only MAP_FIXED below touches it */
	base = mmap(NULL, NPG * PG, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (base == MAP_FAILED)
		return 1;
	printf("vmas: %d steps\n", steps);
	fflush(stdout);
	munmap(base, NPG * PG);
	memset(shadow, 0, sizeof(shadow));

	unsigned long digest = 0;
	int bad = 0, counts[6] = { 0 };
	for (int step = 1; step <= steps; step++) {
		int op = (int)rnd(6), s = (int)rnd(NPG), n = 1 + (int)rnd(16);
		if (s + n > NPG)
			n = NPG - s;
		unsigned char *a = base + (size_t)s * PG;
		long r = 0;
		switch (op) {
		case 0: { /* anon map, RW, filled with a tag */
			int tag = 1 + (int)rnd(250);
			r = mmap(a, (size_t)n * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == a ? 0 : -errno;
			if (!r) {
				memset(a, tag, (size_t)n * PG);
				for (int i = s; i < s + n; i++)
					shadow[i] = (struct page){ 1, PROT_READ | PROT_WRITE, tag };
			}
			break;
		}
		case 1: /* unmap (holes are fine) */
			r = munmap(a, (size_t)n * PG) ? -errno : 0;
			if (!r)
				for (int i = s; i < s + n; i++)
					shadow[i].mapped = 0;
			break;
		case 2: { /* mprotect a fully mapped range */
			if (!all_mapped(s, n)) {
				r = 1;
				break;
			}
			static const int prots[] = { PROT_READ, PROT_READ | PROT_WRITE, PROT_NONE, PROT_READ | PROT_EXEC };
			int prot = prots[rnd(4)];
			r = mprotect(a, (size_t)n * PG, prot) ? -errno : 0;
			if (!r)
				for (int i = s; i < s + n; i++)
					shadow[i].prot = prot;
			break;
		}
		case 3: { /* write a new tag into writable pages */
			int tag = 1 + (int)rnd(250);
			for (int i = s; i < s + n; i++)
				if (shadow[i].mapped && (shadow[i].prot & PROT_WRITE)) {
					memset(base + (size_t)i * PG, tag, PG);
					shadow[i].content = tag;
				}
			break;
		}
		case 4: { /* MAP_FIXED private file mapping of up to 4 pages */
			int k = (int)rnd(4);
			if (n > 4 - k)
				n = 4 - k;
			r = mmap(a, (size_t)n * PG, PROT_READ, MAP_PRIVATE | MAP_FIXED, fd, (off_t)k * PG) == a ? 0 : -errno;
			if (!r)
				for (int i = 0; i < n; i++)
					shadow[s + i] = (struct page){ 1, PROT_READ, -(k + i + 1) };
			break;
		}
		case 5: /* MADV_DONTNEED on a fully mapped, anonymous, writable range: reads back zero */
			if (!all_mapped(s, n)) {
				r = 1;
				break;
			}
			for (int i = s; i < s + n; i++)
				if (shadow[i].content < 0 || !(shadow[i].prot & PROT_WRITE))
					r = 1;
			if (r)
				break;
			r = madvise(a, (size_t)n * PG, MADV_DONTNEED) ? -errno : 0;
			if (!r)
				for (int i = s; i < s + n; i++)
					shadow[i].content = 0;
			break;
		}
		counts[op] += r == 0;
		int ok = 1;
		for (int i = 0; i < NPG; i++)
			ok &= check_page(i);
		if (!ok && bad++ < 5) {
			printf("step %d: op %d at page %d x%d: contents differ from the model\n", step, op, s, n);
			for (int i = 0; i < NPG; i++)
				if (!check_page(i)) {
					printf("  first bad page %d (prot %d content %d, byte %d)\n", i, shadow[i].prot,
					       shadow[i].content, base[(size_t)i * PG]);
					break;
				}
		}
		digest = digest * 1000003 + (unsigned long)(op * 100 + s) * 31 + (unsigned long)(r + 100);
		if (step % 500 == 0)
			printf("step %d digest %016lx\n", step, digest);
	}
	printf("ops done: map %d unmap %d protect %d write %d filemap %d dontneed %d\n", counts[0], counts[1],
	       counts[2], counts[3], counts[4], counts[5]);
	printf("model mismatches: %d\n", bad);
	return bad ? 1 : 0;
}

/* memory: malloc, mmap (anon, file, MAP_FIXED), munmap, mprotect, mremap, brk, madvise.
 * usage: memory LINES_FILE   (tests/data/lines.txt: "line %04d\n" x 1300) */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

static const char *ename(int e)
{
	switch (e) {
	case EINVAL: return "EINVAL";
	case ENOMEM: return "ENOMEM";
	case EBADF: return "EBADF";
	case EACCES: return "EACCES";
	case EFAULT: return "EFAULT";
	case EEXIST: return "EEXIST";
	case ENOSYS: return "ENOSYS";
	default: return "E?";
	}
}

#define PG 4096UL
#define SHOW(label, expr) do { errno = 0; long r_ = (long)(expr); \
	printf("%s = %ld %s\n", label, r_, r_ < 0 ? ename(errno) : ""); } while (0)
#define SHOWP(label, expr) do { errno = 0; void *p_ = (expr); \
	printf("%s = %s %s\n", label, p_ == MAP_FAILED ? "MAP_FAILED" : "ok", p_ == MAP_FAILED ? ename(errno) : ""); } while (0)

static unsigned long hash(const unsigned char *p, size_t n)
{
	unsigned long h = 5381;
	for (size_t i = 0; i < n; i++)
		h = h * 33 + p[i];
	return h;
}

static int all(const unsigned char *p, size_t n, unsigned char v)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != v)
			return 0;
	return 1;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: memory LINES_FILE\n");
		return 2;
	}

	/* malloc small and big; realloc growth keeps contents (musl/glibc use mremap or copy) */
	char *small[100];
	for (int i = 0; i < 100; i++) {
		small[i] = malloc(16 + i * 8);
		memset(small[i], i, 16 + i * 8);
	}
	int ok = 1;
	for (int i = 0; i < 100; i++)
		ok &= all((unsigned char *)small[i], 16 + i * 8, i);
	for (int i = 0; i < 100; i++)
		free(small[i]);
	printf("small mallocs intact: %s\n", ok ? "yes" : "no");
	size_t bigsz = 64UL << 20;
	unsigned char *big = malloc(bigsz);
	printf("malloc 64MiB: %s\n", big ? "ok" : "NULL");
	if (big) {
		for (size_t i = 0; i < bigsz; i += PG)
			big[i] = (unsigned char)(i / PG);
		ok = 1;
		for (size_t i = 0; i < bigsz; i += PG)
			ok &= big[i] == (unsigned char)(i / PG);
		printf("64MiB touched and intact: %s\n", ok ? "yes" : "no");
		big = realloc(big, bigsz * 2);
		ok = big != NULL;
		for (size_t i = 0; ok && i < bigsz; i += PG)
			ok &= big[i] == (unsigned char)(i / PG);
		big[bigsz * 2 - 1] = 7;
		printf("realloc to 128MiB keeps contents: %s\n", ok ? "yes" : "no");
		free(big);
	}
	void *cz = calloc(1 << 20, 4);
	printf("calloc 4MiB zeroed: %s\n", cz && all(cz, 4 << 20, 0) ? "yes" : "no");
	free(cz);

	/* anonymous mmap, zero-filled, writable; munmap */
	unsigned char *a = mmap(NULL, 3 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	printf("mmap anon 3 pages: %s, page aligned: %s\n", a == MAP_FAILED ? ename(errno) : "ok",
	       ((uintptr_t)a & (PG - 1)) == 0 ? "yes" : "no");
	printf("anon zero-filled: %s\n", all(a, 3 * PG, 0) ? "yes" : "no");
	memset(a, 'A', 3 * PG);
	/* MAP_FIXED over the middle page replaces it with fresh zero pages; neighbours untouched */
	unsigned char *m = mmap(a + PG, PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	printf("MAP_FIXED over middle returns addr: %s\n", m == a + PG ? "yes" : "no");
	printf("middle zero after MAP_FIXED: %s\n", all(a + PG, PG, 0) ? "yes" : "no");
	printf("neighbours intact: %s\n", all(a, PG, 'A') && all(a + 2 * PG, PG, 'A') ? "yes" : "no");
	SHOW("munmap middle", munmap(a + PG, PG));
	SHOW("munmap middle again (no-op)", munmap(a + PG, PG));
	SHOW("munmap unaligned", munmap(a + 1, PG));
	SHOW("munmap len 0", munmap(a, 0));
	printf("outer pages intact after hole: %s\n", all(a, PG, 'A') && all(a + 2 * PG, PG, 'A') ? "yes" : "no");
	SHOW("mprotect over hole", mprotect(a, 3 * PG, PROT_READ));
	SHOW("munmap rest", munmap(a, 3 * PG));

	/* mmap argument errors */
	SHOWP("mmap len 0", mmap(NULL, 0, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
	SHOWP("mmap no MAP_PRIVATE/SHARED", mmap(NULL, PG, PROT_READ, MAP_ANONYMOUS, -1, 0));
	SHOWP("mmap bad fd", mmap(NULL, PG, PROT_READ, MAP_PRIVATE, 99, 0));
	SHOWP("mmap unaligned offset", mmap(NULL, PG, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 1));
	SHOWP("mmap MAP_FIXED unaligned", mmap((void *)0x10000001, PG, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0));

	/* hint address honoured when free */
	void *hint = (void *)0x200000000UL;
	void *h = mmap(hint, PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	printf("MAP_FIXED_NOREPLACE at free hint: %s\n", h == hint ? "yes" : "no");
	SHOWP("MAP_FIXED_NOREPLACE over existing", mmap(hint, PG, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0));
	munmap(hint, PG);

	/* mprotect */
	a = mmap(NULL, 2 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	a[0] = 'x';
	SHOW("mprotect PROT_READ", mprotect(a, PG, PROT_READ));
	printf("still readable: %s\n", a[0] == 'x' ? "yes" : "no");
	SHOW("mprotect back RW", mprotect(a, PG, PROT_READ | PROT_WRITE));
	a[0] = 'y';
	printf("writable again: %s\n", a[0] == 'y' ? "yes" : "no");
	SHOW("mprotect unaligned", syscall(SYS_mprotect, a + 1, PG, PROT_READ));
	SHOW("mprotect bad prot", mprotect(a, PG, 0x100));
	SHOW("mprotect PROT_NONE", mprotect(a + PG, PG, PROT_NONE));
	SHOW("munmap", munmap(a, 2 * PG));
	SHOW("mprotect unmapped", mprotect(a, PG, PROT_READ));

	/* mremap: shrink in place; grow with MAYMOVE (the sandbox may refuse with ENOMEM, never corrupt) */
	a = mmap(NULL, 4 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	memset(a, 'R', 4 * PG);
	void *s = mremap(a, 4 * PG, 2 * PG, 0);
	printf("mremap shrink in place: %s\n", s == a ? "yes" : s == MAP_FAILED ? ename(errno) : "moved");
	printf("shrunk contents intact: %s\n", all(a, 2 * PG, 'R') ? "yes" : "no");
	void *g = mremap(a, 2 * PG, 8 * PG, MREMAP_MAYMOVE);
	if (g == MAP_FAILED && errno == ENOMEM) {
		printf("mremap grow: ok (ENOMEM, allowed)\n");
		printf("grown contents intact: %s\n", all(a, 2 * PG, 'R') ? "yes" : "no");
		printf("grown tail zero: yes\n");
		munmap(a, 2 * PG);
	} else if (g == MAP_FAILED) {
		printf("mremap grow: %s\n", ename(errno));
	} else {
		printf("mremap grow: ok\n");
		printf("grown contents intact: %s\n", all(g, 2 * PG, 'R') ? "yes" : "no");
		printf("grown tail zero: %s\n", all((unsigned char *)g + 2 * PG, 6 * PG, 0) ? "yes" : "no");
		munmap(g, 8 * PG);
	}
	SHOWP("mremap unaligned old", mremap((char *)a + 1, PG, PG, 0));
	SHOWP("mremap bad flags", mremap(a, PG, PG, 0x80));

	/* brk */
	unsigned long b0 = syscall(SYS_brk, 0);
	printf("brk(0) nonzero: %s\n", b0 ? "yes" : "no");
	unsigned long b1 = syscall(SYS_brk, b0 + 64 * 1024);
	printf("brk grow by 64KiB: %s\n", b1 == b0 + 64 * 1024 ? "yes" : "no");
	unsigned char *bp = (unsigned char *)b0;
	printf("new brk area zero: %s\n", all(bp, 64 * 1024, 0) ? "yes" : "no");
	memset(bp, 'B', 64 * 1024);
	printf("brk area writable: %s\n", all(bp, 64 * 1024, 'B') ? "yes" : "no");
	unsigned long b2 = syscall(SYS_brk, b0 + 4096);
	printf("brk shrink: %s\n", b2 == b0 + 4096 ? "yes" : "no");
	unsigned long b3 = syscall(SYS_brk, b0 + 64 * 1024);
	printf("brk regrow: %s, re-grown area zero: %s\n", b3 == b0 + 64 * 1024 ? "yes" : "no",
	       all(bp + 8192, 64 * 1024 - 8192, 0) ? "yes" : "no");
	unsigned long b4 = syscall(SYS_brk, 1);
	printf("brk below start refused (returns current): %s\n", b4 == b3 ? "yes" : "no");
	/* a big break: 32 MiB, last byte usable */
	unsigned long b5 = syscall(SYS_brk, b0 + (32UL << 20));
	printf("brk grow by 32MiB: %s\n", b5 == b0 + (32UL << 20) ? "yes" : "no");
	if (b5 == b0 + (32UL << 20)) {
		((volatile unsigned char *)b0)[(32UL << 20) - 1] = 9;
		printf("last byte of 32MiB brk writable: %s\n", ((volatile unsigned char *)b0)[(32UL << 20) - 1] == 9 ? "yes" : "no");
	}
	syscall(SYS_brk, b0);
	/* sbrk-style area is just after the bss */
	static char bss_probe[1];
	printf("brk start above bss: %s\n", b0 >= (unsigned long)bss_probe ? "yes" : "no");

	/* file mmap */
	int fd = open(argv[1], O_RDONLY);
	unsigned char buf[13000];
	ssize_t n = read(fd, buf, sizeof(buf));
	printf("read file = %zd\n", n);
	unsigned char *f = mmap(NULL, 13000, PROT_READ, MAP_PRIVATE, fd, 0);
	printf("mmap file: %s\n", f == MAP_FAILED ? ename(errno) : "ok");
	printf("mmap file == read: %s\n", f != MAP_FAILED && memcmp(f, buf, 13000) == 0 ? "yes" : "no");
	printf("tail past EOF in last page zero: %s\n", f != MAP_FAILED && all(f + 13000, 4 * PG - 13000, 0) ? "yes" : "no");
	munmap(f, 13000);
	f = mmap(NULL, PG, PROT_READ, MAP_PRIVATE, fd, 2 * PG);
	printf("mmap offset 8192 == bytes at 8192: %s <%.9s>\n", f != MAP_FAILED && memcmp(f, buf + 2 * PG, PG) == 0 ? "yes" : "no",
	       f != MAP_FAILED ? (char *)f + 8 : "");
	munmap(f, PG);
	/* private writable file mapping: copy-on-write, the file is untouched */
	f = mmap(NULL, PG, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	memcpy(f, "XXXX", 4);
	unsigned char chk[4];
	pread(fd, chk, 4, 0);
	printf("MAP_PRIVATE write visible in map: %s, file untouched: %s\n", memcmp(f, "XXXX", 4) == 0 ? "yes" : "no",
	       memcmp(chk, "line", 4) == 0 ? "yes" : "no");
	munmap(f, PG);
	/* MAP_FIXED file mapping over anon */
	a = mmap(NULL, 2 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	memset(a, 'A', 2 * PG);
	f = mmap(a + PG, PG, PROT_READ, MAP_PRIVATE | MAP_FIXED, fd, PG);
	printf("MAP_FIXED file over anon: %s, bytes match: %s, first page intact: %s\n", f == a + PG ? "yes" : "no",
	       f == a + PG && memcmp(f, buf + PG, PG) == 0 ? "yes" : "no", all(a, PG, 'A') ? "yes" : "no");
	munmap(a, 2 * PG);
	SHOWP("mmap file PROT_WRITE MAP_SHARED on O_RDONLY fd", mmap(NULL, PG, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
	close(fd);
	printf("file hash via read: %lx\n", hash(buf, 13000));

	/* a 1 GiB MAP_NORESERVE mapping, touched sparsely */
	unsigned char *huge = mmap(NULL, 1UL << 30, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	printf("mmap 1GiB NORESERVE: %s\n", huge == MAP_FAILED ? ename(errno) : "ok");
	if (huge != MAP_FAILED) {
		for (unsigned long off = 0; off < (1UL << 30); off += 64UL << 20)
			huge[off] = (unsigned char)(off >> 26);
		ok = 1;
		for (unsigned long off = 0; off < (1UL << 30); off += 64UL << 20)
			ok &= huge[off] == (unsigned char)(off >> 26);
		printf("1GiB sparse touch intact: %s\n", ok ? "yes" : "no");
		SHOW("munmap 1GiB", munmap(huge, 1UL << 30));
	}
	/* shared anonymous memory: zero-filled, writable, survives mprotect round trips */
	unsigned char *sh = mmap(NULL, 2 * PG, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	printf("mmap MAP_SHARED anon: %s, zero: %s\n", sh == MAP_FAILED ? ename(errno) : "ok",
	       sh != MAP_FAILED && all(sh, 2 * PG, 0) ? "yes" : "no");
	if (sh != MAP_FAILED) {
		memset(sh, 'S', 2 * PG);
		mprotect(sh, 2 * PG, PROT_READ);
		mprotect(sh, 2 * PG, PROT_READ | PROT_WRITE);
		printf("shared anon intact after mprotect: %s\n", all(sh, 2 * PG, 'S') ? "yes" : "no");
		munmap(sh, 2 * PG);
	}

	/* madvise: MADV_DONTNEED on private anonymous memory drops the contents (reads back zero) */
	a = mmap(NULL, 2 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	memset(a, 'M', 2 * PG);
	SHOW("madvise MADV_WILLNEED", madvise(a, 2 * PG, MADV_WILLNEED));
	SHOW("madvise MADV_DONTNEED", madvise(a, PG, MADV_DONTNEED));
	printf("DONTNEED page reads zero: %s, other page intact: %s\n", all(a, PG, 0) ? "yes" : "no",
	       all(a + PG, PG, 'M') ? "yes" : "no");
	SHOW("madvise unaligned", madvise(a + 1, PG, MADV_DONTNEED));
	SHOW("madvise bad advice", madvise(a, PG, 12345));
	munmap(a, 2 * PG);
	return 0;
}

/* mseal: mseal(2)'s errors and what a sealed VMA refuses (EPERM), compared with Linux >= 6.10.
 * Prints "mseal: ENOSYS" alone where the kernel has no mseal. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guest.h"

#define NR_mseal 462
#define PG 4096L

static const char *E(long r)
{
	return r == 0 ? "0" : r > 0 ? "ok" : errno == ENOSYS ? "ENOSYS" : errname(errno);
}

static long seal(void *a, unsigned long len, unsigned long flags)
{
	return syscall(NR_mseal, a, len, flags);
}

int main(void)
{
	char *m = mmap(NULL, 8 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (seal(m, PG, 0) < 0 && errno == ENOSYS) {
		say("mseal: ENOSYS\n");
		return 0;
	}
	say("flags 1: %s\n", E(seal(m + PG, PG, 1)));
	say("unaligned: %s\n", E(seal(m + 1, PG, 0)));
	say("overflowing len: %s\n", E(seal(m, (unsigned long)-PG + 2, 0)));
	say("len 0: %s\n", E(seal(m + PG, 0, 0)));
	munmap(m + 6 * PG, PG);
	say("range with a hole: %s\n", E(seal(m + 5 * PG, 2 * PG, 0)));
	say("unmapped: %s\n", E(seal(m + 6 * PG, PG, 0)));
	/* [m + 2 pages, m + 4 pages) sealed, read-write */
	say("seal 2 pages: %s\n", E(seal(m + 2 * PG, 2 * PG, 0)));
	say("seal again: %s\n", E(seal(m + 2 * PG, PG, 0)));
	say("mprotect over it: %s\n", E(mprotect(m, 4 * PG, PROT_READ)));
	say("mprotect outside it: %s\n", E(mprotect(m + 4 * PG, PG, PROT_READ)));
	say("munmap over it: %s\n", E(munmap(m + PG, 2 * PG)));
	say("mremap it: %s\n", mremap(m + 2 * PG, PG, 2 * PG, MREMAP_MAYMOVE) == MAP_FAILED ? errname(errno) : "moved");
	char *to = mmap(NULL, 2 * PG, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	say("mremap onto it: %s\n",
	    mremap(to, PG, PG, MREMAP_MAYMOVE | MREMAP_FIXED, m + 2 * PG) == MAP_FAILED ? errname(errno) : "moved");
	/* LTP mseal01: a shrinking move whose dropped tail holds the sealed pages: that munmap is EPERM (mremap_to) */
	char *to2 = mmap(NULL, 2 * PG, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	say("mremap shrinking, the tail sealed: %s\n",
	    mremap(m + PG, 4 * PG, PG, MREMAP_MAYMOVE | MREMAP_FIXED, to2) == MAP_FAILED ? errname(errno) : "moved");
	say("mmap MAP_FIXED over it: %s\n",
	    mmap(m + 3 * PG, PG, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED ? errname(errno)
													  : "mapped");
	say("MADV_DONTNEED, writable: %s\n", E(madvise(m + 2 * PG, PG, MADV_DONTNEED)));
	m[2 * PG] = 'x';
	say("still writable: %c\n", m[2 * PG]);
	/* a read-only sealed page: discarding it is refused */
	char *ro = mmap(NULL, PG, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	say("seal read-only: %s\n", E(seal(ro, PG, 0)));
	say("MADV_DONTNEED, read-only: %s\n", E(madvise(ro, PG, MADV_DONTNEED)));
	say("MADV_WILLNEED, read-only: %s\n", E(madvise(ro, PG, MADV_WILLNEED)));
	pid_t c = fork();
	if (c == 0) {
		say("child: munmap sealed: %s\n", E(munmap(m + 2 * PG, PG)));
		_exit(0);
	}
	waitpid(c, NULL, 0);
	say("munmap next to it: %s\n", E(munmap(m + 4 * PG, PG)));
	return 0;
}

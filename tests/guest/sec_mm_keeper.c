/* sec_mm_keeper: pvx keeps one host page, PROT_NONE, at the top of the mmap area (mm/mm.c mm_keep_tables),
 * where Linux has its vDSO, so that a buffer mapped and unmapped over and over does not make the host build
 * and free page tables each time. That page is not the guest's: the first page above the guest's first
 * mapping is not in /proc/self/maps, a read there is SEGV_MAPERR (nothing mapped), mincore and mprotect say
 * ENOMEM, and the guest maps over it, uses it and unmaps it as a free range, in turn; so in a forked child. (Natively the vDSO's
 * pages are there: not compared.)
 * (msync, madvise and mlock too) usage: sec_mm_keeper */
#define _GNU_SOURCE
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guest.h"

static sigjmp_buf back;
static volatile int code;

static void on_segv(int sig, siginfo_t *si, void *uc)
{
	(void)sig, (void)uc;
	code = si->si_code;
	siglongjmp(back, 1);
}

/* How a read of p went: "read" or the SIGSEGV's code. */
static const char *probe(volatile char *p)
{
	code = 0;
	if (!sigsetjmp(back, 1))
		(void)*p;
	return !code ? "read" : code == SEGV_MAPERR ? "SEGV_MAPERR" : code == SEGV_ACCERR ? "SEGV_ACCERR" : "other";
}

/* Whether /proc/self/maps has a line that covers a. */
static int listed(unsigned long a)
{
	char line[512];
	FILE *f = fopen("/proc/self/maps", "r");
	int found = 0;

	while (f && fgets(line, sizeof line, f)) {
		unsigned long lo, hi;
		if (sscanf(line, "%lx-%lx", &lo, &hi) == 2 && a >= lo && a < hi)
			found = 1;
	}
	if (f)
		fclose(f);
	return found;
}

int main(void)
{
	struct sigaction sa = { .sa_sigaction = on_segv, .sa_flags = SA_SIGINFO };
	unsigned char vec;

	sigaction(SIGSEGV, &sa, NULL);
	char *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return 1;
	char *up = p + 4096;
	for (int round = 0; round < 2; round++) {
		say("round %d: listed %s, %s, mincore %s, mprotect %s, msync %s, madvise %s, mlock %s\n", round,
		    yesno(listed((unsigned long)up)), probe(up), mincore(up, 4096, &vec) ? errname(errno) : "0",
		    mprotect(up, 4096, PROT_READ) ? errname(errno) : "0", msync(up, 4096, MS_SYNC) ? errname(errno) : "0",
		    madvise(up, 4096, MADV_DONTNEED) ? errname(errno) : "0", mlock(up, 4096) ? errname(errno) : "0");
		char *q = mmap(up, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
		if (q != up) {
			say("map over: %s\n", q == MAP_FAILED ? errname(errno) : "elsewhere");
			return 1;
		}
		strcpy(q, "mine");
		say("map over: listed %s, %s '%s'\n", yesno(listed((unsigned long)up)), probe(up), q);
		if (munmap(q, 4096))
			return 1;
	}
	/* A forked child has it where its parent has (the host's fork, or pvx's copy: PVX_FORK=copy). */
	pid_t kid = fork();
	if (kid == 0) {
		say("child: listed %s, %s\n", yesno(listed((unsigned long)up)), probe(up));
		_exit(0);
	}
	waitpid(kid, NULL, 0);
	/* The buffer the page is there for: mapped, written and unmapped right below it, many times. */
	int bad = 0;
	for (int i = 0; i < 2000; i++) {
		char *b = mmap(NULL, 36864, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (b == MAP_FAILED || b[100])
			bad++;
		else
			b[100] = 1;
		if (b != MAP_FAILED)
			munmap(b, 36864);
	}
	say("2000 buffers: %d bad\n", bad);
	/* The first mapping grows in place over it, as over nothing. */
	char *g = mremap(p, 4096, 8192, 0);
	say("mremap grow in place: %s\n", g == p ? "ok" : g == MAP_FAILED ? errname(errno) : "moved");
	return 0;
}

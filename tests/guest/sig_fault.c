/* sig_fault: synchronous faults caught by SA_SIGINFO handlers that siglongjmp out.
 * usage: sig_fault FILE   (FILE: a small readable file, mapped past its end for SIGBUS)
 * For each fault: the signal number, si_code, whether si_addr is the faulting address, and that the
 * signal mask was restored by siglongjmp (so the next fault is catchable). Each fault is done twice. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "guest.h"
#pragma GCC diagnostic ignored "-Warray-bounds"

static sigjmp_buf jb;
static volatile int f_sig, f_code;
static void *volatile f_addr;
static volatile int in_mask_self;

static void handler(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	f_sig = sig;
	f_code = si->si_code;
	f_addr = si->si_addr;
	sigset_t cur;
	sigprocmask(SIG_BLOCK, NULL, &cur);
	in_mask_self = sigismember(&cur, sig);
	siglongjmp(jb, 1);
}

static const char *codename(int sig, int code)
{
	if (sig == SIGSEGV)
		return code == SEGV_MAPERR ? "SEGV_MAPERR" : code == SEGV_ACCERR ? "SEGV_ACCERR" : "SEGV_?";
	if (sig == SIGBUS)
		return code == BUS_ADRERR ? "BUS_ADRERR" : "BUS_?";
	if (sig == SIGFPE)
		return code == FPE_INTDIV ? "FPE_INTDIV" : "FPE_?";
	if (sig == SIGILL)
		return code == ILL_ILLOPN ? "ILL_ILLOPN" : "ILL_?";
	if (sig == SIGTRAP)
		return code == SI_KERNEL ? "SI_KERNEL" : code == TRAP_BRKPT ? "TRAP_BRKPT" : "TRAP_?";
	return "?";
}

static volatile int zero = 0;
static char *volatile target;

static void fault(const char *name, int kind)
{
	f_sig = 0;
	f_addr = (void *)1;
	if (sigsetjmp(jb, 1) == 0) {
		switch (kind) {
		case 0: target = (char *)16; *(volatile char *)target = 1; break;
		case 1: (void)*(volatile char *)target; break;    /* PROT_NONE page: read */
		case 2: *(volatile char *)target = 1; break;       /* read-only page: write */
		case 3: (void)*(volatile char *)target; break;    /* file page past EOF */
		case 4: target = NULL; f_addr = NULL; say("%d\n", 7 / zero); break;
		case 5: target = NULL; f_addr = NULL; __asm__ volatile("ud2"); break;
		case 6: target = (char *)0x1000000000000000UL; *(volatile char *)target = 1; break; /* non-canonical */
		}
		say("%s: no fault?\n", name);
		return;
	}
	sigset_t cur;
	sigprocmask(SIG_BLOCK, NULL, &cur);
	const char *addr = kind == 6 ? "(not reported)" : kind >= 4 ? "(n/a)" : yesno(f_addr == target);
	say("%s: sig=%d %s si_addr==target: %s; blocked in handler: %s; blocked after siglongjmp: %s\n", name,
	    f_sig, kind == 6 ? "" : codename(f_sig, f_code), addr, yesno(in_mask_self), yesno(sigismember(&cur, f_sig)));
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		say("usage: sig_fault FILE\n");
		return 2;
	}
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = handler;
	sa.sa_flags = SA_SIGINFO;
	int sigs[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL };
	for (unsigned i = 0; i < 4; i++)
		sigaction(sigs[i], &sa, NULL);
	char *none = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *ro = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int fd = open(argv[1], O_RDONLY);
	char *file = mmap(NULL, 3 * 4096, PROT_READ, MAP_PRIVATE, fd, 0);
	if (none == MAP_FAILED || ro == MAP_FAILED || fd < 0 || file == MAP_FAILED)
		return 90;
	for (int round = 0; round < 2; round++) {
		say("round %d\n", round + 1);
		fault("null write", 0);
		target = none + 100;
		fault("PROT_NONE read", 1);
		target = ro + 200;
		fault("read-only write", 2);
		target = file + 2 * 4096 + 8;
		fault("mmap past EOF", 3);
		fault("divide by zero", 4);
		fault("ud2", 5);
		fault("non-canonical write", 6);
	}
	/* the fault handlers are still installed: a fault with the signal blocked kills (Linux forces it) */
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, SIGSEGV);
	sigprocmask(SIG_BLOCK, &s, NULL);
	say("faulting with SIGSEGV blocked\n");
	*(volatile int *)8 = 1;
	say("survived?\n");
	return 0;
}

/*
 * sig_flags: SA_RESETHAND resets only the handler (flags stay, SA_SIGINFO
 * included); sigaltstack's minimum is the kernel's MINSIGSTKSZ (2048), not
 * a libc's; the auxv gives AT_MINSIGSTKSZ, and a stack of that size holds
 * a signal frame.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>

#include "guest.h"

#ifndef AT_MINSIGSTKSZ
#define AT_MINSIGSTKSZ 51
#endif

static volatile int code = 99, ran_on_alt;
static char *alt;
static size_t alt_size;

static void info_handler(int sig, siginfo_t *si, void *uc)
{
	(void)sig, (void)uc;
	code = si->si_code;
	char here;
	ran_on_alt = &here >= alt && &here < alt + alt_size;
}

int main(void)
{
	struct sigaction sa = { 0 }, old;

	sa.sa_sigaction = info_handler;
	sa.sa_flags = SA_SIGINFO | SA_RESETHAND;
	sigaction(SIGUSR1, &sa, NULL);
	raise(SIGUSR1);
	sigaction(SIGUSR1, NULL, &old);
	say("SA_RESETHAND: handler ran with siginfo (SI_TKILL): %s; now SIG_DFL: %s; SA_SIGINFO kept: %s; SA_RESETHAND kept: %s\n",
	    yesno(code == SI_TKILL), yesno(old.sa_handler == SIG_DFL), yesno(old.sa_flags & SA_SIGINFO),
	    yesno(old.sa_flags & SA_RESETHAND));

	stack_t ss = { .ss_sp = malloc(65536), .ss_size = 2047 };
	errno = 0;
	int r = sigaltstack(&ss, NULL);
	say("sigaltstack 2047 bytes: %d %s\n", r, errname(errno));
	ss.ss_size = 2048;
	errno = 0;
	r = sigaltstack(&ss, NULL);
	say("sigaltstack 2048 bytes: %d %s\n", r, errname(errno));

	unsigned long min = getauxval(AT_MINSIGSTKSZ);
	say("AT_MINSIGSTKSZ given: %s\n", yesno(min >= 2048 && min < 65536));
	if (min >= 2048 && min < 65536) {
		alt_size = min;
		alt = ss.ss_sp;
		ss.ss_size = min;
		sigaltstack(&ss, NULL);
		memset(alt, 0x5a, 65536);
		sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
		sigaction(SIGUSR2, &sa, NULL);
		raise(SIGUSR2);
		/* the frame went below alt + min only if nothing past its start was written */
		int past = 0;
		for (size_t i = min; i < 65536; i++)
			past |= alt[i] != 0x5a;
		say("a handler on an AT_MINSIGSTKSZ stack ran there: %s, wrote nothing above it: %s\n", yesno(ran_on_alt),
		    yesno(!past));
	}
	return 0;
}

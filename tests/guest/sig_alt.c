/* sig_alt: sigaltstack. usage: sig_alt onstack|overflow
 *   onstack   an SA_ONSTACK handler runs inside the alternate stack (address of a local), sees SS_ONSTACK;
 *             a handler without SA_ONSTACK runs on the normal stack; bad sigaltstack calls fail like Linux.
 *   overflow  unbounded recursion: the SIGSEGV handler runs on the alternate stack and siglongjmps out. */
#define _GNU_SOURCE
#include <errno.h>
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
#pragma GCC diagnostic ignored "-Winfinite-recursion"

#define ALT_SIZE (64 * 1024)
static char *alt;
static volatile uintptr_t h_local;
static volatile int h_flags_onstack, h_hits;
static sigjmp_buf jb;

static void handler(int sig)
{
	volatile int local = sig;
	h_local = (uintptr_t)&local;
	stack_t cur;
	sigaltstack(NULL, &cur);
	h_flags_onstack = cur.ss_flags & SS_ONSTACK;
	h_hits++;
}

static int in_alt(uintptr_t a) { return a >= (uintptr_t)alt && a < (uintptr_t)alt + ALT_SIZE; }

static volatile int depth;
static int recurse(int n)
{
	volatile char pad[1024];
	pad[0] = (char)n;
	depth = n;
	return recurse(n + 1) + pad[0];
}

static void segv_handler(int sig)
{
	volatile int local = sig;
	h_local = (uintptr_t)&local;
	h_hits++;
	siglongjmp(jb, 1);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "onstack";
	alt = mmap(NULL, ALT_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (alt == MAP_FAILED)
		return 90;
	stack_t ss = { .ss_sp = alt, .ss_size = ALT_SIZE, .ss_flags = 0 }, old;
	int r = sigaltstack(&ss, &old);
	say("sigaltstack set = %d, old was disabled: %s\n", r, yesno(old.ss_flags & SS_DISABLE));
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	if (!strcmp(mode, "onstack")) {
		stack_t q;
		sigaltstack(NULL, &q);
		say("query: sp matches=%s size matches=%s flags=%d\n", yesno(q.ss_sp == alt), yesno(q.ss_size == ALT_SIZE),
		    q.ss_flags);
		sa.sa_handler = handler;
		sa.sa_flags = SA_ONSTACK;
		sigaction(SIGUSR1, &sa, NULL);
		sa.sa_flags = 0;
		sigaction(SIGUSR2, &sa, NULL);
		raise(SIGUSR1);
		say("SA_ONSTACK handler: ran=%d local inside alt stack=%s SS_ONSTACK seen=%s\n", h_hits,
		    yesno(in_alt(h_local)), yesno(h_flags_onstack));
		raise(SIGUSR2);
		say("plain handler: ran=%d local inside alt stack=%s SS_ONSTACK seen=%s\n", h_hits,
		    yesno(in_alt(h_local)), yesno(h_flags_onstack));
		sigaltstack(NULL, &q);
		say("outside handlers SS_ONSTACK=%s\n", yesno(q.ss_flags & SS_ONSTACK));
		/* errors */
		stack_t small = { .ss_sp = alt, .ss_size = 1024, .ss_flags = 0 };
		errno = 0;
		r = sigaltstack(&small, NULL);
		say("too small: %d %s\n", r, errno == ENOMEM ? "ENOMEM" : "E?");
		stack_t badf = { .ss_sp = alt, .ss_size = ALT_SIZE, .ss_flags = 12345 };
		errno = 0;
		r = sigaltstack(&badf, NULL);
		say("bad flags: %d %s\n", r, errno == EINVAL ? "EINVAL" : "E?");
		stack_t dis = { .ss_flags = SS_DISABLE };
		r = sigaltstack(&dis, NULL);
		sigaltstack(NULL, &q);
		say("disable: %d, now disabled: %s\n", r, yesno(q.ss_flags & SS_DISABLE));
		raise(SIGUSR1);
		say("SA_ONSTACK handler with the alt stack disabled: ran=%d inside alt=%s\n", h_hits, yesno(in_alt(h_local)));
		return 0;
	}
	if (!strcmp(mode, "overflow")) {
		sa.sa_handler = segv_handler;
		sa.sa_flags = SA_ONSTACK;
		sigaction(SIGSEGV, &sa, NULL);
		if (sigsetjmp(jb, 1) == 0) {
			recurse(1);
			say("recursion returned?\n");
			return 1;
		}
		say("caught stack overflow: handler ran=%d on the alt stack=%s deep=%s\n", h_hits, yesno(in_alt(h_local)),
		    yesno(depth > 1000));
		sigset_t cur;
		sigprocmask(SIG_BLOCK, NULL, &cur);
		say("SIGSEGV unblocked after siglongjmp: %s\n", yesno(!sigismember(&cur, SIGSEGV)));
		return 0;
	}
	say("unknown mode\n");
	return 2;
}

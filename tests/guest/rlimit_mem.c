/*
 * usage: rlimit_mem as|data|stack|initial|deep KB|mremap|smaps|pagemap
 *   as       RLIMIT_AS: mmap, MAP_FIXED over a mapping, mremap growth, PROT_NONE counts, raise and lower
 *   data     RLIMIT_DATA: private writable mmap, brk, mprotect to writable, shared and read-only are not data,
 *            the {0, hard} "workaround for Valgrind"
 *   stack    RLIMIT_STACK: a child recursing past a lowered limit dies of SIGSEGV, within it lives; raised
 *   initial  exec under a small RLIMIT_STACK: the new stack holds to it from the start
 *   deep KB  recurse KB kilobytes deep and say so (the child of stack and initial)
 *   mremap   edge cases: lengths that wrap, huge growth, across VMAs, overlapping fixed moves
 *   smaps    /proc/self/smaps fields in Linux's order and their sum against smaps_rollup
 *   pagemap  /proc/self/pagemap: present bits after touching, offsets and sizes Linux refuses
 * Each line is what Linux does; the bats file compares the native run with the sandbox's.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define MiB (1UL << 20)
#define PG 4096UL

static const char *err(long r)
{
	static char buf[32];

	if (r >= 0)
		return "ok";
	switch (-r) {
	case ENOMEM: return "ENOMEM";
	case EINVAL: return "EINVAL";
	case EFAULT: return "EFAULT";
	case EPERM: return "EPERM";
	case EAGAIN: return "EAGAIN";
	case ESPIPE: return "ESPIPE";
	}
	snprintf(buf, sizeof(buf), "errno %ld", -r);
	return buf;
}

static long map(void *addr, size_t len, int prot, int flags)
{
	void *p = mmap(addr, len, prot, flags, -1, 0);

	return p == MAP_FAILED ? -errno : (long)p;
}

static long remap(void *old, size_t old_len, size_t new_len, int flags, void *to)
{
	long r = syscall(SYS_mremap, old, old_len, new_len, flags, to);	/* not libc's: it refuses huge lengths itself */

	return r == -1 ? -errno : r;
}

static int set_limit(int res, rlim_t cur, rlim_t max)
{
	struct rlimit rl = { cur, max };

	if (setrlimit(res, &rl) < 0) {
		printf("setrlimit(%d): %s\n", res, err(-errno));
		return -1;
	}
	return 0;
}

/* VmSize of /proc/self/status in bytes. */
static unsigned long vm_size(void)
{
	char line[256];
	unsigned long kb = 0;
	FILE *f = fopen("/proc/self/status", "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "VmSize: %lu kB", &kb) == 1)
			break;
	if (f)
		fclose(f);
	return kb * 1024;
}

#define P(what, r) printf("%s: %s\n", what, err(r))
/* A result where kernel versions differ in errno: either of e1, e2 is "refused". */
#define R(what, r, e1, e2) do { long r_ = (r); printf("%s: %s\n", what, r_ == -(e1) || r_ == -(e2) ? "refused" : err(r_)); } while (0)

static int mode_as(void)
{
	struct rlimit rl;
	getrlimit(RLIMIT_AS, &rl);
	/* EPERM raising above the hard limit once it is lowered (as an unprivileged process) */
	unsigned long base = vm_size();
	if (set_limit(RLIMIT_AS, base + 64 * MiB, base + 128 * MiB))
		return 1;
	P("mmap past the limit", map(NULL, 100 * MiB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS));
	P("PROT_NONE past the limit", map(NULL, 100 * MiB, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS));
	long a = map(NULL, 40 * MiB, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE);
	P("mmap 40 MiB within", a);
	P("mmap 40 MiB more", map(NULL, 40 * MiB, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS));
	P("MAP_FIXED over the 40 MiB", map((void *)a, 40 * MiB, PROT_READ | PROT_WRITE,
					   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED));
	P("MAP_FIXED over it and 40 MiB more", map((void *)a, 80 * MiB, PROT_READ,
						   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED));
	P("mremap growing past the limit", remap((void *)a, 40 * MiB, 80 * MiB, MREMAP_MAYMOVE, NULL));
	long b = remap((void *)a, 40 * MiB, 20 * MiB, 0, NULL);
	P("mremap shrinking", b);
	P("mremap growing within", remap((void *)a, 20 * MiB, 30 * MiB, MREMAP_MAYMOVE, NULL));
	P("raise the soft limit above hard", set_limit(RLIMIT_AS, base + 256 * MiB, base + 128 * MiB) ? -EINVAL : 0);
	P("raise the hard limit", set_limit(RLIMIT_AS, base + 64 * MiB, base + 256 * MiB) ? -EPERM : 0);
	P("raise the soft limit to hard", set_limit(RLIMIT_AS, base + 128 * MiB, base + 128 * MiB) ? -EPERM : 0);
	P("mmap 40 MiB after raising", map(NULL, 40 * MiB, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS));
	P("lower to the current size", set_limit(RLIMIT_AS, 0, base + 128 * MiB) ? -EPERM : 0);
	P("one page at limit 0", map(NULL, PG, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS));
	P("munmap at limit 0", munmap((void *)a, 10 * MiB) ? -errno : 0);
	P("brk at limit 0", (long)syscall(SYS_brk, 0) == (long)syscall(SYS_brk, (long)syscall(SYS_brk, 0) + MiB)
		? -ENOMEM : 0);
	return 0;
}

static int mode_data(void)
{
	long cur = (long)syscall(SYS_brk, 0);

	if (set_limit(RLIMIT_DATA, 32 * MiB, RLIM_INFINITY))
		return 1;
	P("private writable past the limit", map(NULL, 64 * MiB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS));
	long ro = map(NULL, 64 * MiB, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS);
	P("private read-only is not data", ro);
	P("mprotect it writable", mprotect((void *)ro, 64 * MiB, PROT_READ | PROT_WRITE) ? -errno : 0);
	P("mprotect 1 MiB of it writable", mprotect((void *)ro, MiB, PROT_READ | PROT_WRITE) ? -errno : 0);
	P("shared writable is not data", map(NULL, 64 * MiB, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS));
	P("MAP_GROWSDOWN is not data", map(NULL, 64 * MiB, PROT_READ | PROT_WRITE,
					  MAP_PRIVATE | MAP_ANONYMOUS | MAP_GROWSDOWN));
	long w = map(NULL, 8 * MiB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS);
	P("private writable 8 MiB", w);
	P("mremap it to 48 MiB", remap((void *)w, 8 * MiB, 48 * MiB, MREMAP_MAYMOVE, NULL));
	P("mremap the read-only one to 96 MiB", remap((void *)(ro + MiB), 63 * MiB, 95 * MiB, MREMAP_MAYMOVE, NULL));
	long r = (long)syscall(SYS_brk, cur + 48 * MiB);
	printf("brk past the limit: %s\n", r == cur ? "old break" : r == cur + (long)(48 * MiB) ? "moved" : "other");
	r = (long)syscall(SYS_brk, cur + MiB);
	printf("brk 1 MiB: %s\n", r == cur + (long)MiB ? "moved" : r == cur ? "old break" : "other");
	r = (long)syscall(SYS_brk, cur);
	printf("brk back: %s\n", r == cur ? "moved" : "other");
	/* the "workaround for Valgrind": soft 0, the hard limit counts */
	if (set_limit(RLIMIT_DATA, 0, 40 * MiB))
		return 1;
	P("soft 0: 8 MiB within hard", map(NULL, 8 * MiB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS));
	P("soft 0: 64 MiB past hard", map(NULL, 64 * MiB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS));
	P("raise hard above", set_limit(RLIMIT_DATA, 0, 80 * MiB) ? -EPERM : 0);
	return 0;
}

/* Recurse kb KiB deep, 16 KiB a frame, touching each frame's ends. */
static int __attribute__((noinline)) recurse(int kb)
{
	volatile char frame[16384];

	frame[0] = (char)kb;
	frame[sizeof(frame) - 1] = (char)kb;
	if (kb <= 16)
		return frame[0];
	return recurse(kb - 16) + frame[sizeof(frame) - 1];
}

static volatile int got_signal;
static void on_signal(int sig)
{
	char local[2048];

	memset(local, sig, sizeof(local));	/* the handler's own frame, below the deepest page touched */
	got_signal = local[sizeof(local) - 1];
}

/* At the bottom of the recursion: a read into an untouched local array, a signal handled there. */
static int __attribute__((noinline)) bottom(void)
{
	char big[192 * 1024];
	int fd = open("/dev/zero", O_RDONLY);
	long n = read(fd, big, sizeof(big));	/* the kernel grows the stack for its copy */

	close(fd);
	signal(SIGUSR1, on_signal);
	raise(SIGUSR1);
	return n == (long)sizeof(big) && got_signal == SIGUSR1 ? 0 : 1;
}

static int __attribute__((noinline)) recurse_then(int kb)
{
	volatile char frame[16384];

	frame[0] = (char)kb;
	if (kb <= 16)
		return bottom() + frame[0] - (char)kb;
	return recurse_then(kb - 16) + frame[0] - (char)kb;
}

static int mode_deep(int kb)
{
	recurse(kb);
	printf("deep %d KiB: ok\n", kb);
	return 0;
}

/* The start of the [stack] VMA, from /proc/self/maps. */
static unsigned long stack_start(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	unsigned long s = 0, e;

	while (f && fgets(line, sizeof(line), f))
		if (strstr(line, "[stack]"))
			sscanf(line, "%lx-%lx", &s, &e);
	if (f)
		fclose(f);
	return s;
}

static int guard_below;	/* child: map a page this far below the stack's VMA first (the guard gap's test) */

/* Run self with argv in a child under RLIMIT_STACK lim (soft; 0: as is); say how it ended. */
static void child(const char *what, rlim_t lim, int kb, int exec)
{
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		if (lim && set_limit(RLIMIT_STACK, lim, RLIM_INFINITY))
			_exit(2);
		if (guard_below && mmap((void *)(stack_start() - guard_below), PG, PROT_READ,
					MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0) == MAP_FAILED)
			_exit(4);
		if (exec) {
			char arg[16];
			snprintf(arg, sizeof(arg), "%d", kb);
			execl("/proc/self/exe", "rlimit_mem", "deep", arg, (char *)NULL);
			_exit(3);
		}
		_exit(mode_deep(kb));
	}
	int st;
	waitpid(pid, &st, 0);
	if (WIFSIGNALED(st))
		printf("%s: killed by signal %d\n", what, WTERMSIG(st));
	else
		printf("%s: exit %d\n", what, WEXITSTATUS(st));
}

static int mode_stack(void)
{
	child("1 MiB limit, 512 KiB deep", MiB, 512, 0);
	child("1 MiB limit, 2 MiB deep", MiB, 2048, 0);
	child("8 MiB limit, 4 MiB deep", 8 * MiB, 4096, 0);
	child("8 MiB limit, 16 MiB deep", 8 * MiB, 16384, 0);
	child("32 MiB limit, 24 MiB deep", 32 * MiB, 24 * 1024, 0);
	/* the stack guard gap: 256 pages kept free above a mapping below the stack */
	guard_below = 1536 * 1024;
	child("a mapping 1.5 MiB below the stack, 256 KiB deep", 0, 256, 0);
	child("a mapping 1.5 MiB below the stack, 1.5 MiB deep", 0, 1536, 0);
	guard_below = 0;
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0)
		_exit(recurse_then(1024));
	int st;
	waitpid(pid, &st, 0);
	printf("1 MiB deep, a read into an untouched array and a signal below: %s\n",
	       WIFEXITED(st) && !WEXITSTATUS(st) ? "ok" : "failed");
	/* a MAP_GROWSDOWN mapping of the guest's own grows down when touched below, within the limit */
	char *g = mmap(NULL, 64 * PG, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	munmap(g, 64 * PG);
	char *d = mmap(g + 60 * PG, 4 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_GROWSDOWN | MAP_FIXED, -1, 0);
	fflush(stdout);
	if ((pid = fork()) == 0) {
		d[-2 * (long)PG] = 1;
		_exit(0);
	}
	waitpid(pid, &st, 0);
	printf("MAP_GROWSDOWN touched below: %s\n", WIFEXITED(st) ? "grew" : "SIGSEGV");
	return 0;
}

static int mode_initial(void)
{
	child("exec under 512 KiB, 256 KiB deep", 512 * 1024, 256, 1);
	child("exec under 512 KiB, 1 MiB deep", 512 * 1024, 1024, 1);
	child("exec under 16 MiB, 12 MiB deep", 16 * MiB, 12 * 1024, 1);
	child("exec under 96 KiB, 32 KiB deep", 96 * 1024, 32, 1);
	child("exec under 96 KiB, 192 KiB deep", 96 * 1024, 192, 1);
	return 0;
}

static int mode_mremap(void)
{
	long a = map(NULL, 4 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS);
	long b = map(NULL, 4 * PG, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS);

	P("new_len that aligns to 0", remap((void *)a, PG, -1UL, MREMAP_MAYMOVE, NULL));
	P("new_len 0", remap((void *)a, PG, 0, MREMAP_MAYMOVE, NULL));
	/* 6.12 says ENOMEM (may_expand_vm), later kernels EINVAL (new_len > TASK_SIZE): never a mapping */
	R("huge growth in place", remap((void *)a, PG, -PG, 0, NULL), ENOMEM, EINVAL);
	R("huge growth, may move", remap((void *)a, PG, -PG, MREMAP_MAYMOVE, NULL), ENOMEM, EINVAL);
	P("growth past the top of user space", remap((void *)a, 4 * PG, (1UL << 47) - 2 * PG, MREMAP_MAYMOVE, NULL));
	P("old_len past its VMA, growing", remap((void *)a, 8 * PG, 16 * PG, MREMAP_MAYMOVE, NULL));
	R("huge old_len, growing", remap((void *)a, -2 * PG, -PG, MREMAP_MAYMOVE, NULL), EFAULT, EINVAL);
	P("fixed to an address that wraps", remap((void *)a, PG, 2 * PG, MREMAP_MAYMOVE | MREMAP_FIXED, (void *)-PG));
	P("fixed to unaligned", remap((void *)a, PG, PG, MREMAP_MAYMOVE | MREMAP_FIXED, (void *)(b + 1)));
	P("fixed overlapping itself", remap((void *)a, 4 * PG, 4 * PG, MREMAP_MAYMOVE | MREMAP_FIXED,
					    (void *)(a + 2 * PG)));
	P("fixed without MAYMOVE", remap((void *)a, PG, PG, MREMAP_FIXED, (void *)b));
	P("unmapped old", remap((void *)PG, PG, 2 * PG, MREMAP_MAYMOVE, NULL));
	P("unaligned old", remap((void *)(a + 1), PG, 2 * PG, MREMAP_MAYMOVE, NULL));
	P("bad flags", remap((void *)a, PG, 2 * PG, 0x80, NULL));
	P("shrink in place", remap((void *)a, 4 * PG, 2 * PG, 0, NULL) == a ? 0 : -EINVAL);
	/* the mappings are still there after all the failures */
	*(volatile char *)a = 1;
	printf("still mapped: %d\n", *(volatile char *)b + 1);
	return 0;
}

/* huge: lengths and sums that overflow, limits near the top, another process's limit (prlimit). */
static long raw_mmap(unsigned long addr, unsigned long len, int prot, int flags)
{
	long r = syscall(SYS_mmap, addr, len, prot, flags, -1, 0);

	return r == -1 ? -errno : r;
}

static int mode_huge(void)
{
	long cur = (long)syscall(SYS_brk, 0);

	P("mmap of ~0", raw_mmap(0, ~0UL, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS));
	P("mmap of 2^62", raw_mmap(0, 1UL << 62, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS));
	P("MAP_FIXED whose end wraps", raw_mmap(1UL << 46, -(1UL << 45), PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED));
	P("MAP_FIXED past the top", raw_mmap((1UL << 47) - PG, 2 * PG, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED));
	printf("brk(-4096): %s\n", (long)syscall(SYS_brk, -4096L) == cur ? "old break" : "moved");
	printf("brk(2^62): %s\n", (long)syscall(SYS_brk, 1L << 62) == cur ? "old break" : "moved");
	/* a limit one page short of infinity is a limit, not infinity */
	if (set_limit(RLIMIT_AS, RLIM_INFINITY - 1, RLIM_INFINITY) || set_limit(RLIMIT_DATA, RLIM_INFINITY - 1, RLIM_INFINITY))
		return 1;
	P("mmap under a huge limit", raw_mmap(0, 64 * MiB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS));
	P("brk under a huge limit", (long)syscall(SYS_brk, cur + MiB) == cur + (long)MiB ? 0 : -ENOMEM);
	/* RLIMIT_DATA with brk: a huge request with a small limit, the sum never wraps */
	if (set_limit(RLIMIT_DATA, 16 * MiB, RLIM_INFINITY))
		return 1;
	printf("brk(~0 & ~4095) under 16 MiB: %s\n", (long)syscall(SYS_brk, -4096L) == cur + (long)MiB ? "old break" : "moved");
	/* another process's limit: prlimit lowers a child's RLIMIT_AS, the child's mmap fails, ours does not */
	int p[2], q[2];
	if (pipe(p) || pipe(q))
		return 1;
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		char x;
		if (write(p[1], "r", 1) != 1 || read(q[0], &x, 1) != 1)
			_exit(1);
		_exit(raw_mmap(0, 256 * MiB, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS) == -ENOMEM ? 0 : 3);
	}
	char x;
	if (read(p[0], &x, 1) != 1)
		return 1;
	struct rlimit rl = { 128 * MiB, RLIM_INFINITY }, old;
	P("prlimit the child's RLIMIT_AS", syscall(SYS_prlimit64, pid, RLIMIT_AS, &rl, &old) ? -errno : 0);
	P("the child's old limit is ours", old.rlim_cur == RLIM_INFINITY - 1 ? 0 : -EINVAL);
	if (write(q[1], "g", 1) != 1)
		return 1;
	int st;
	waitpid(pid, &st, 0);
	printf("child's 256 MiB mmap under 128 MiB: %s\n", WIFEXITED(st) && !WEXITSTATUS(st) ? "ENOMEM" : "not refused");
	P("ours still maps 256 MiB", raw_mmap(0, 256 * MiB, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS));
	rl.rlim_cur = RLIM_INFINITY;
	rl.rlim_max = 1;
	P("prlimit soft above hard", syscall(SYS_prlimit64, 0, RLIMIT_AS, &rl, NULL) ? -errno : 0);
	P("prlimit of a bad resource", syscall(SYS_prlimit64, 0, 99, NULL, &old) ? -errno : 0);
	P("prlimit to a bad pointer", syscall(SYS_prlimit64, 0, RLIMIT_AS, NULL, (void *)8) ? -errno : 0);
	return 0;
}

int mode_smaps(void);
int mode_pagemap(void);
int mode_pfn(void);
int mode_named(const char *path);

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 2)
		return 2;
	if (!strcmp(argv[1], "as"))
		return mode_as();
	if (!strcmp(argv[1], "data"))
		return mode_data();
	if (!strcmp(argv[1], "stack"))
		return mode_stack();
	if (!strcmp(argv[1], "initial"))
		return mode_initial();
	if (!strcmp(argv[1], "deep") && argc > 2)
		return mode_deep(atoi(argv[2]));
	if (!strcmp(argv[1], "mremap"))
		return mode_mremap();
	if (!strcmp(argv[1], "smaps"))
		return mode_smaps();
	if (!strcmp(argv[1], "pagemap"))
		return mode_pagemap();
	if (!strcmp(argv[1], "huge"))
		return mode_huge();
	if (!strcmp(argv[1], "named") && argc > 2)
		return mode_named(argv[2]);
	if (!strcmp(argv[1], "pfn"))
		return mode_pfn();
	return 2;
}

/* The smaps entry of the VMA starting at addr (or the [stack]'s if addr is 0): its lines into buf. */
static int smaps_entry(unsigned long addr, char *buf, size_t size)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[512];
	int in = 0;
	size_t used = 0;

	buf[0] = 0;
	while (f && fgets(line, sizeof(line), f)) {
		unsigned long s, e;
		if (sscanf(line, "%lx-%lx ", &s, &e) == 2 && strchr(line, ' ') > strchr(line, '-')) {
			if (in)
				break;
			in = addr ? s == addr : strstr(line, "[stack]") != NULL;
			continue;
		}
		if (in && used + strlen(line) < size) {
			strcpy(buf + used, line);
			used += strlen(line);
		}
	}
	if (f)
		fclose(f);
	return in ? 0 : -1;
}

/* The value of field name in an smaps text. */
static long field(const char *text, const char *name)
{
	char key[64];
	const char *p = text;

	snprintf(key, sizeof(key), "\n%s:", name);
	if (strncmp(text, key + 1, strlen(key + 1)) && !(p = strstr(text, key)))
		return -1;
	p = strchr(p + 1, ':');
	return strtol(p + 1, NULL, 10);
}

/* Sum of one field over every VMA of /proc/self/smaps. */
static long smaps_sum(const char *name)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[512], key[64];
	long sum = 0;

	snprintf(key, sizeof(key), "%s:", name);
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, key, strlen(key)))
			sum += strtol(line + strlen(key), NULL, 10);
	if (f)
		fclose(f);
	return sum;
}

static long rollup(const char *name)
{
	char buf[4096];
	FILE *f = fopen("/proc/self/smaps_rollup", "r");
	size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;

	if (f)
		fclose(f);
	buf[n] = 0;
	return field(buf, name);
}

int mode_smaps(void)
{
	static char buf[8192];
	/* between PROT_NONE pages, so that it merges with nothing */
	char *g = mmap(NULL, 18 * PG, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *m = mmap(g + PG, 16 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);

	for (int i = 0; i < 5; i++)
		m[i * 3 * PG] = 1;
	if (smaps_entry((unsigned long)m, buf, sizeof(buf)))
		return printf("no smaps entry\n"), 1;
	/* the field names in their order, then the numbers that are the guest's own */
	printf("fields:");
	for (char *line = buf; *line; line = strchr(line, '\n') + 1) {
		printf(" %.*s", (int)(strchr(line, ':') - line), line);
	}
	printf("\n");
	printf("Size %ld Rss %ld Pss %ld Anonymous %ld Private_Dirty %ld Swap %ld Locked %ld\n", field(buf, "Size"),
	       field(buf, "Rss"), field(buf, "Pss"), field(buf, "Anonymous"), field(buf, "Private_Dirty"),
	       field(buf, "Swap"), field(buf, "Locked"));
	printf("%s", strstr(buf, "VmFlags:"));
	mlock(m, 16 * PG);
	smaps_entry((unsigned long)m, buf, sizeof(buf));
	printf("locked: Rss %ld Locked %ld %s", field(buf, "Rss"), field(buf, "Locked"), strstr(buf, "VmFlags:"));
	munlock(m, 16 * PG);
	P("mprotect a page", mprotect(m + 4 * PG, PG, PROT_READ) ? -errno : 0);	/* split: three entries */
	smaps_entry((unsigned long)m, buf, sizeof(buf));
	printf("after a split: Size %ld Rss %ld\n", field(buf, "Size"), field(buf, "Rss"));
	m = mmap(g, PG, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	m[0] = 1;
	smaps_entry((unsigned long)m, buf, sizeof(buf));
	printf("shared: Size %ld Rss %ld Shared_Dirty+Private_Dirty %ld Anonymous %ld %s", field(buf, "Size"),
	       field(buf, "Rss"), field(buf, "Shared_Dirty") + field(buf, "Private_Dirty"), field(buf, "Anonymous"),
	       strstr(buf, "VmFlags:"));
	smaps_entry(0, buf, sizeof(buf));
	printf("stack %s", strstr(buf, "VmFlags:"));
	/* the rollup is the sum of the entries (read apart: allow for a few pages of stdio) */
	const char *names[] = { "Rss", "Pss", "Anonymous", "Private_Dirty", "Swap" };
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		long sum = smaps_sum(names[i]), r = rollup(names[i]);
		printf("rollup %s: %s\n", names[i], labs(sum - r) <= 64 && r >= 0 ? "the sum" : "differs");
	}
	long pss = rollup("Pss"), split = rollup("Pss_Anon") + rollup("Pss_File") + rollup("Pss_Shmem");
	printf("rollup Pss_Anon+Pss_File+Pss_Shmem: %s\n", labs(pss - split) <= 8 ? "Pss" : "differs");
	FILE *f = fopen("/proc/self/smaps_rollup", "r");
	char line[256];
	printf("rollup fields:");
	while (f && fgets(line, sizeof(line), f))
		if (strchr(line, ':') && !strchr(line, '['))
			printf(" %.*s", (int)(strchr(line, ':') - line), line);
	printf("\n");
	return 0;
}

static long pm_read(int fd, void *buf, size_t n, off_t off)
{
	ssize_t r = pread(fd, buf, n, off);

	return r < 0 ? -errno : r;
}

/* Present bits of n pages at m, one character each; "x" where the entry could not be read. */
static void presence(int fd, const void *m, int n, char *out)
{
	uint64_t e[64];
	long r = pm_read(fd, e, n * 8, (off_t)((unsigned long)m / PG * 8));

	for (int i = 0; i < n; i++)
		out[i] = r != n * 8 ? 'x' : e[i] >> 63 ? '1' : '0';
	out[n] = 0;
}

int mode_pagemap(void)
{
	int fd = open("/proc/self/pagemap", O_RDONLY);
	char *m = mmap(NULL, 8 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char bits[65];
	uint64_t e[4];

	if (fd < 0)
		return printf("open: %s\n", err(-errno)), 1;
	presence(fd, m, 8, bits);
	printf("untouched: %s\n", bits);
	m[0] = m[2 * PG] = m[5 * PG] = 1;
	presence(fd, m, 8, bits);
	printf("touched 0 2 5: %s\n", bits);
	pm_read(fd, e, 8, (off_t)((unsigned long)m / PG * 8));
	printf("anon page: exclusive %d file/shared %d swapped %d\n", (int)(e[0] >> 56 & 1), (int)(e[0] >> 61 & 1),
	       (int)(e[0] >> 62 & 1));
	madvise(m, 8 * PG, MADV_DONTNEED);
	presence(fd, m, 8, bits);
	printf("after MADV_DONTNEED: %s\n", bits);
	char *s = mmap(NULL, 2 * PG, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	s[0] = 1;
	pm_read(fd, e, 16, (off_t)((unsigned long)s / PG * 8));
	printf("shared page: present %d file/shared %d; untouched present %d\n", (int)(e[0] >> 63),
	       (int)(e[0] >> 61 & 1), (int)(e[1] >> 63));
	/* a hole between mappings reads as zeros */
	munmap(m + 3 * PG, PG);
	pm_read(fd, e, 8, (off_t)((unsigned long)(m + 3 * PG) / PG * 8));
	printf("hole: %s\n", e[0] >> 55 ? "flags" : "0");
	/* offsets and sizes Linux refuses or ends */
	const off_t top = (off_t)(((1UL << 47) - PG) / PG * 8);
	P("offset 4", pm_read(fd, e, 8, 4));
	P("count 12", pm_read(fd, e, 12, 0));
	P("negative offset", pm_read(fd, e, 8, -8));
	printf("count 0: %ld\n", pm_read(fd, e, 0, 8));
	printf("at the top of user space: %ld\n", pm_read(fd, e, 8, top));
	printf("across the top: %ld\n", pm_read(fd, e, 32, top - 8));
	printf("far beyond: %ld\n", pm_read(fd, e, 8, (off_t)1 << 62));
	printf("last offset: %ld\n", pm_read(fd, e, 8, (off_t)(~0UL >> 1) - 7));
	void *volatile bad = (void *)8;
	P("bad buffer", pm_read(fd, bad, 8, 0));
	P("SEEK_END", lseek(fd, 0, SEEK_END) < 0 ? -errno : 0);
	printf("lseek to the mapping: %s\n", lseek(fd, (off_t)((unsigned long)s / PG * 8), SEEK_SET) ==
						   (off_t)((unsigned long)s / PG * 8) ? "ok" : "failed");
	long r = read(fd, e, 16);
	printf("read 2 entries: %ld, present %d%d, position moved %s\n", r, (int)(e[0] >> 63), (int)(e[1] >> 63),
	       lseek(fd, 0, SEEK_CUR) == (off_t)((unsigned long)s / PG * 8 + 16) ? "by 16" : "wrongly");
	P("write", write(fd, e, 8) < 0 ? -errno : 0);
	/* another process's: a child's touched page, then after it is gone */
	int p[2], q[2];
	if (pipe(p) || pipe(q))
		return 1;
	char *c = mmap(NULL, 4 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		c[PG] = 1;
		char x = 0;
		if (write(p[1], &x, 1) != 1 || read(q[0], &x, 1) != 1)
			_exit(1);
		_exit(0);
	}
	char x;
	if (read(p[0], &x, 1) != 1)
		return 1;
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/pagemap", pid);
	int cfd = open(path, O_RDONLY);
	presence(cfd, c, 4, bits);
	printf("child's: %s, ours: ", bits);
	presence(fd, c, 4, bits);
	printf("%s\n", bits);
	if (write(q[1], &x, 1) != 1)
		return 1;
	waitpid(pid, NULL, 0);
	printf("child's after it exited: %ld\n", pm_read(cfd, e, 8, (off_t)((unsigned long)c / PG * 8)));
	P("no such process", open("/proc/999999/pagemap", O_RDONLY) < 0 ? -errno : 0);
	return 0;
}

/* named FILE: map FILE (a name made to look like smaps lines) and say whether the rollup's Rss is sane. */
int mode_named(const char *path)
{
	int fd = open(path, O_RDONLY);
	void *m = fd < 0 ? MAP_FAILED : mmap(NULL, PG, PROT_READ, MAP_PRIVATE, fd, 0);

	if (m == MAP_FAILED)
		return printf("map %s: %s\n", path, err(-errno)), 1;
	long rss = rollup("Rss"), sum = smaps_sum("Rss");
	printf("rollup Rss: %s\n", rss > 0 && rss < 500000 && labs(sum - rss) <= 64 ? "sane" : "forged");
	return 0;
}

/* pfn: the frame numbers a reader without CAP_SYS_ADMIN gets: none (run in the sandbox only). */
int mode_pfn(void)
{
	int fd = open("/proc/self/pagemap", O_RDONLY);
	static char m[PG * 4];
	uint64_t e[4], pfn = 0;

	memset(m, 1, sizeof(m));
	if (pread(fd, e, sizeof(e), (off_t)((unsigned long)m / PG * 8)) != sizeof(e))
		return printf("read: %s\n", err(-errno)), 1;
	for (int i = 0; i < 4; i++)
		pfn |= e[i] & ((1UL << 55) - 1);
	printf("present %d, pfn bits: %s\n", (int)(e[0] >> 63), pfn ? "set" : "zero");
	return 0;
}

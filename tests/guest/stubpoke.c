/* stubpoke: a hostile guest aimed at the sandbox's own pages above the guest range (the stub).
 * usage: stubpoke ADDR map|write|read|gadget
 *   map:    mmap/munmap/mprotect/mremap/brk/madvise on [ADDR, ADDR+1MiB) must all fail (or do nothing) and
 *           the guest keeps running: prints each result and "alive", exits 0
 *   write:  stores to ADDR+0x1000: must die of SIGSEGV
 *   read:   loads from ADDR+0x1000: must die of SIGSEGV (the range is not the guest's)
 *   gadget: jumps to ADDR+0x1000 with rax = getpid: must not run a host syscall or hurt the sentry
 * Not comparable with a native run (natively ADDR is ordinary free address space). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define PG 4096UL

static const char *ename(int e)
{
	switch (e) {
	case 0: return "OK";
	case ENOMEM: return "ENOMEM";
	case EINVAL: return "EINVAL";
	case EFAULT: return "EFAULT";
	case EPERM: return "EPERM";
	case EEXIST: return "EEXIST";
	case EACCES: return "EACCES";
	default: return "E?";
	}
}

static void show(const char *what, long r)
{
	printf("%s: %s\n", what, r < 0 && r > -4096 ? ename((int)-r) : (r == 0 ? "0" : "addr"));
	fflush(stdout);
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: stubpoke ADDR map|write|read|gadget\n");
		return 2;
	}
	unsigned long addr = strtoul(argv[1], NULL, 0);
	const char *mode = argv[2];

	if (!strcmp(mode, "map")) {
		long r = syscall(SYS_mmap, addr, 16 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
		show("mmap MAP_FIXED at ADDR", r < 0 ? -errno : (r == (long)addr ? 1 : 0));
		r = syscall(SYS_mmap, addr - PG, 2 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
		show("mmap MAP_FIXED straddling ADDR", r < 0 ? -errno : (r == (long)(addr - PG) ? 1 : 0));
		r = syscall(SYS_mmap, addr, PG, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		printf("mmap hint ADDR lands below ADDR: %s\n", r > 0 && (unsigned long)r + PG <= addr ? "yes" : "no");
		r = syscall(SYS_munmap, addr, 256 * PG);
		show("munmap ADDR", r < 0 ? -errno : 0);
		r = syscall(SYS_mprotect, addr, PG, PROT_NONE);
		show("mprotect ADDR", r < 0 ? -errno : 0);
		r = syscall(SYS_mprotect, addr + PG, PG, PROT_READ | PROT_WRITE | PROT_EXEC);
		show("mprotect ADDR+4096 rwx", r < 0 ? -errno : 0);
		r = syscall(SYS_madvise, addr, 16 * PG, MADV_DONTNEED);
		show("madvise DONTNEED ADDR", r < 0 ? -errno : 0);
		void *m = mmap(NULL, PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		r = syscall(SYS_mremap, m, PG, PG, MREMAP_MAYMOVE | MREMAP_FIXED, addr);
		show("mremap to ADDR", r < 0 ? -errno : 1);
		r = syscall(SYS_brk, addr + PG);
		printf("brk to ADDR refused: %s\n", (unsigned long)r < addr ? "yes" : "no");
		/* still a working sandbox */
		printf("getpid=%ld\n", syscall(SYS_getpid));
		printf("alive\n");
		return 0;
	}
	if (!strcmp(mode, "write")) {
		printf("writing\n");
		fflush(stdout);
		*(volatile unsigned long *)(addr + PG) = 0xdeadbeef;
		printf("wrote into the stub!\n");
		return 0;
	}
	if (!strcmp(mode, "read")) {
		printf("reading\n");
		fflush(stdout);
		printf("read %lx from the stub!\n", *(volatile unsigned long *)(addr + PG));
		return 0;
	}
	if (!strcmp(mode, "gadget")) {
		printf("jumping\n");
		fflush(stdout);
		long ret;
		__asm__ volatile("lea 1f(%%rip), %%rcx\n\t"
				 "push %%rcx\n\t"
				 "jmp *%1\n\t"
				 "1:"
				 : "=a"(ret)
				 : "r"(addr + PG), "a"((long)SYS_getpid)
				 : "rcx", "r11", "memory");
		printf("returned %ld\n", ret);
		return 0;
	}
	return 2;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * A dynamically linked guest (tests/dynamic.bats): what the kernel's ELF
 * loader told it. "check" prints facts that are the same natively and in
 * pvx; "addrs" prints where things landed, to compare two runs (ASLR).
 */
#define _GNU_SOURCE
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <unistd.h>

extern char _start[];

struct objs {
	uintptr_t main_bias, ld_base;
	const ElfW(Phdr) *main_phdr;
	int main_phnum, n;
};

static int each(struct dl_phdr_info *info, size_t size, void *data)
{
	struct objs *o = data;

	(void)size;
	if (o->n++ == 0) {	/* the program itself comes first */
		o->main_bias = info->dlpi_addr;
		o->main_phdr = info->dlpi_phdr;
		o->main_phnum = info->dlpi_phnum;
	} else if (strstr(info->dlpi_name, "ld-linux")) {
		o->ld_base = info->dlpi_addr;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct objs o = { 0 };
	int local;

	dl_iterate_phdr(each, &o);
	if (argc > 1 && !strcmp(argv[1], "addrs")) {
		void *m = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		printf("main %#lx ld %#lx stack %#lx brk %#lx mmap %#lx\n", (unsigned long)o.main_bias,
		       (unsigned long)o.ld_base, (unsigned long)&local & ~0xfffUL, (unsigned long)sbrk(0),
		       (unsigned long)m);
		return 0;
	}
	printf("AT_BASE is ld.so's load address: %s\n", getauxval(AT_BASE) == o.ld_base && o.ld_base ? "yes" : "no");
	printf("AT_ENTRY is the program's _start: %s\n", getauxval(AT_ENTRY) == (uintptr_t)_start ? "yes" : "no");
	printf("AT_PHDR/AT_PHNUM are the program's: %s\n",
	       getauxval(AT_PHDR) == (uintptr_t)o.main_phdr && getauxval(AT_PHNUM) == (unsigned long)o.main_phnum
		       ? "yes" : "no");
	printf("AT_SECURE %lu, AT_PAGESZ %lu\n", getauxval(AT_SECURE), getauxval(AT_PAGESZ));
	printf("the program is position-independent and relocated: %s\n", o.main_bias ? "yes" : "no");
	printf("ADDR_NO_RANDOMIZE: %s\n", personality(0xffffffff) & ADDR_NO_RANDOMIZE ? "on" : "off");
	printf("stack aligned: %s\n", ((uintptr_t)__builtin_frame_address(0) & 15) == 0 ? "yes" : "no");
	char *s = getenv("PVX_DYN_ARG");
	printf("argv[0] %s, env %s\n", strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0], s ? s : "-");
	return 0;
}

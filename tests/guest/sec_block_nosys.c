/* sec_block_nosys: a syscall number the kernel does not know returns ENOSYS; the guest is not killed (LTP syscall02).
 * Raw `syscall` instructions with rax = -1, -2, numbers past the table, x32 numbers (bit 30: a kernel without
 * x32, as Debian's by default, answers ENOSYS) and numbers whose upper 32 bits are set (do_syscall_64 takes the
 * number as an int: 0x1_0000_0027 is getpid). The x32 numbers only with the argument "x32": whether they run
 * natively depends on the kernel (the test VM's has x32 on), pvx always answers ENOSYS, as Linux without x32. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "guest.h"

static long raw(uint64_t nr)
{
	long ret;
	register long r10 __asm__("r10") = 0, r8 __asm__("r8") = 0, r9 __asm__("r9") = 0;
	__asm__ volatile("syscall" : "=a"(ret) : "a"(nr), "D"(0L), "S"(0L), "d"(0L), "r"(r10), "r"(r8), "r"(r9)
			 : "rcx", "r11", "memory");
	return ret;
}

int main(int argc, char **argv)
{
	bool x32 = argc > 1 && !strcmp(argv[1], "x32");
	static const uint64_t unknown[] = {
		(uint64_t)-1, (uint64_t)-2, (uint64_t)-4096, 1000, 4096, 0x3fffffff, 0x40000000 | 39, 0x40000000 | 1000,
		0x7fffffff, 0x80000000, 0xffffffff, 0xffffffff00000000 | 1000,
	};
	static const uint64_t getpids[] = { 0x100000000 | 39, 0xdeadbeef00000000 | 39 };

	for (size_t i = 0; i < sizeof(unknown) / sizeof(unknown[0]); i++) {
		if (((unknown[i] >> 30) == 1) != x32)
			continue;	/* 0x40000000-0x7fffffff: x32 */
		long r = raw(unknown[i]);
		say("syscall %#lx: %s\n", (unsigned long)unknown[i], r < 0 && r > -4096 ? errname((int)-r) : "ran");
	}
	for (size_t i = 0; i < sizeof(getpids) / sizeof(getpids[0]); i++)
		say("syscall %#lx: getpid %s\n", (unsigned long)getpids[i], yesno(raw(getpids[i]) == getpid()));
	say("still alive\n");
	return 0;
}

/*
 * An x32-ABI syscall (bit 30 set: getpid is 0x40000000|39) from a 64-bit
 * guest. pvx never runs x32 calls: it answers -ENOSYS, as Linux does with x32
 * off (Debian's default); see tests/guest/sec_block_nosys.c.
 */
#include <stdio.h>

int main(void)
{
	long ret;

	__asm__ volatile("syscall" : "=a"(ret) : "a"(0x40000000L | 39) : "rcx", "r11", "memory");
	printf("x32 getpid returned %ld\n", ret);
	return 0;
}

/*
 * An x32-ABI syscall (bit 30 set: getpid is 0x40000000|39) from a 64-bit
 * guest. pvx never runs x32 calls: the guest is killed with SIGSYS. Natively
 * (Debian kernels have x32 off) it returns -ENOSYS.
 */
#include <stdio.h>

int main(void)
{
	long ret;

	__asm__ volatile("syscall" : "=a"(ret) : "a"(0x40000000L | 39) : "rcx", "r11", "memory");
	printf("x32 getpid returned %ld\n", ret);
	return 0;
}

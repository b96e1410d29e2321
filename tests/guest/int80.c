/* int80: the legacy i386 syscall entry (int $0x80) from 64-bit code. Natively (with IA32 emulation)
 * eax=1 is the i386 exit: the process exits with ebx. A sandbox must either emulate that or kill the
 * guest; it must never run the call on the host nor misread it as the x86-64 syscall with that number
 * (1 = write). usage: int80 */
#include <stdio.h>

int main(void)
{
	printf("int80: calling i386 exit(5)\n");
	fflush(stdout);
	__asm__ volatile("mov $1, %%eax\n\t"
			 "mov $5, %%ebx\n\t"
			 "mov $1, %%edi\n\t"	/* if misread as x86-64 write(1, buf, 6): prints "wrong\n" */
			 "lea msg(%%rip), %%rsi\n\t"
			 "mov $6, %%edx\n\t"
			 "int $0x80\n\t"
			 "jmp 1f\n\t"
			 "msg: .ascii \"wrong\\n\"\n\t"
			 "1:"
			 :
			 :
			 : "rax", "rbx", "rdi", "rsi", "rdx", "rcx", "r11", "memory");
	printf("int80: returned\n");
	return 0;
}

/*
 * Jump into the stub's code (the known UML seccomp-mode weakness): find a
 * syscall instruction in the stub's text and run getpid through it. In pvx
 * this must never reach the host: seccomp kills the guest (SIGSYS), ptrace
 * emulates the call. A host pid on stdout means an escape.
 * Only meaningful inside pvx: natively the stub's range is unmapped.
 */
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

#define STUB_TEXT 0x7ff000001000UL

int main(void)
{
	const unsigned char *p = (const unsigned char *)STUB_TEXT;
	long ret;

	for (int i = 0; i < 0x10000 - 1; i++) {
		if (p[i] != 0x0f || p[i + 1] != 0x05)
			continue;
		printf("syscall instruction at %p\n", (void *)(p + i));
		fflush(stdout);
		/* rax = getpid; fall into the stub's syscall; whatever follows is stub code. */
		__asm__ volatile("call *%1" : "=a"(ret) : "r"(p + i), "a"((long)SYS_getpid) : "rcx", "r11", "memory");
		printf("escaped: getpid() = %ld\n", ret);
		return 0;
	}
	printf("no syscall instruction found\n");
	return 2;
}

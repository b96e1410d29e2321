/* sys_regs: a syscall leaves every register but rax, rcx and r11 as it was, rcx holds its return address,
 * and the 128 bytes below rsp (the red zone) are untouched, while another thread keeps signalling this
 * one (a handler that clobbers every caller-saved register and xmm register runs between some calls).
 * On seccomp this is the stub's fast return (stub/stub.c stub_fast_jump) and the signals that land
 * while it loads the registers.
 *   sys_regs N  ->  "intact yes, rcx yes, result yes, signals yes"
 * Prints relations only, so native and sandbox output agree. */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "guest.h"

/* In and out of the asm block (globals: addressed rip-relative, no register needed). */
long g_in[12], g_out[12];	/* rbx rdx rsi rdi rbp r8 r9 r10 r12 r13 r14 r15 */
long g_red_in[16], g_red_out[16];	/* the red zone, -128(%rsp) .. -8(%rsp) */
unsigned char x_in[16][16], x_out[16][16];
long g_rcx, g_ret_addr, g_rax, g_rsp_in, g_rsp_out, saved_rbp;

static volatile int handled, stop;
static volatile pid_t victim;

static void one_call(void)
{
	__asm__ volatile(
		"mov %%rbp, saved_rbp(%%rip)\n\t"
		"mov %%rsp, g_rsp_in(%%rip)\n\t"
		".irp i,0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15\n\t"
		"movdqu x_in+\\i*16(%%rip), %%xmm\\i\n\t"
		".endr\n\t"
		".irp i,0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15\n\t"
		"mov g_red_in+\\i*8(%%rip), %%rax\n\t"
		"mov %%rax, -128+\\i*8(%%rsp)\n\t"
		".endr\n\t"
		"mov g_in+0(%%rip), %%rbx\n\tmov g_in+8(%%rip), %%rdx\n\tmov g_in+16(%%rip), %%rsi\n\t"
		"mov g_in+24(%%rip), %%rdi\n\tmov g_in+32(%%rip), %%rbp\n\tmov g_in+40(%%rip), %%r8\n\t"
		"mov g_in+48(%%rip), %%r9\n\tmov g_in+56(%%rip), %%r10\n\tmov g_in+64(%%rip), %%r12\n\t"
		"mov g_in+72(%%rip), %%r13\n\tmov g_in+80(%%rip), %%r14\n\tmov g_in+88(%%rip), %%r15\n\t"
		"mov $-1, %%rcx\n\tmov $-1, %%r11\n\t"
		"mov $110, %%eax\n\t"	/* getppid */
		"syscall\n"
		"1:\n\t"
		"mov %%rbx, g_out+0(%%rip)\n\tmov %%rdx, g_out+8(%%rip)\n\tmov %%rsi, g_out+16(%%rip)\n\t"
		"mov %%rdi, g_out+24(%%rip)\n\tmov %%rbp, g_out+32(%%rip)\n\tmov %%r8, g_out+40(%%rip)\n\t"
		"mov %%r9, g_out+48(%%rip)\n\tmov %%r10, g_out+56(%%rip)\n\tmov %%r12, g_out+64(%%rip)\n\t"
		"mov %%r13, g_out+72(%%rip)\n\tmov %%r14, g_out+80(%%rip)\n\tmov %%r15, g_out+88(%%rip)\n\t"
		"mov %%rsp, g_rsp_out(%%rip)\n\t"
		"mov %%rcx, g_rcx(%%rip)\n\t"
		"mov %%rax, g_rax(%%rip)\n\t"
		"lea 1b(%%rip), %%rcx\n\t"
		"mov %%rcx, g_ret_addr(%%rip)\n\t"
		".irp i,0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15\n\t"
		"mov -128+\\i*8(%%rsp), %%rax\n\t"
		"mov %%rax, g_red_out+\\i*8(%%rip)\n\t"
		".endr\n\t"
		".irp i,0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15\n\t"
		"movdqu %%xmm\\i, x_out+\\i*16(%%rip)\n\t"
		".endr\n\t"
		"mov saved_rbp(%%rip), %%rbp\n\t"
		:
		:
		: "rax", "rbx", "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15",
		  "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11",
		  "xmm12", "xmm13", "xmm14", "xmm15", "memory", "cc");
}

static void on_usr1(int sig)
{
	(void)sig;
	handled++;
	__asm__ volatile("mov $-1, %%rax\n\tmov $-2, %%rcx\n\tmov $-3, %%rdx\n\tmov $-4, %%rsi\n\t"
			 "mov $-5, %%rdi\n\tmov $-6, %%r8\n\tmov $-7, %%r9\n\tmov $-8, %%r10\n\tmov $-9, %%r11\n\t"
			 ".irp i,0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15\n\t"
			 "pcmpeqd %%xmm\\i, %%xmm\\i\n\t"
			 ".endr\n\t"
			 :
			 :
			 : "rax", "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10", "r11", "xmm0", "xmm1", "xmm2", "xmm3",
			   "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14",
			   "xmm15", "memory");
}

static void *storm(void *arg)
{
	(void)arg;
	while (!stop)
		syscall(SYS_tgkill, getpid(), victim, SIGUSR1);
	return NULL;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 100000, ppid = getppid();
	int intact = 1, rcx = 1, result = 1;
	uint64_t seed = 0x9e3779b97f4a7c15ULL;
	struct sigaction sa = { .sa_handler = on_usr1, .sa_flags = SA_RESTART };
	pthread_t th;

	sigaction(SIGUSR1, &sa, NULL);
	victim = (pid_t)syscall(SYS_gettid);
	if (pthread_create(&th, NULL, storm, NULL))
		return 1;
	for (long i = 0; i < n && intact && rcx && result; i++) {
		for (int k = 0; k < 12; k++)
			g_in[k] = (long)(seed = seed * 6364136223846793005ULL + 1442695040888963407ULL);
		for (int k = 0; k < 16; k++)
			g_red_in[k] = (long)(seed = seed * 6364136223846793005ULL + 1442695040888963407ULL);
		for (int k = 0; k < 16; k++)
			for (int b = 0; b < 16; b++)
				x_in[k][b] = (unsigned char)((seed >> (b % 8 * 8)) + k);
		one_call();
		intact = !memcmp(g_in, g_out, sizeof(g_in)) && !memcmp(x_in, x_out, sizeof(x_in)) &&
			 !memcmp(g_red_in, g_red_out, sizeof(g_red_in)) && g_rsp_in == g_rsp_out;
		rcx = g_rcx == g_ret_addr;
		result = g_rax == ppid;
	}
	stop = 1;
	pthread_join(th, NULL);
	say("intact %s, rcx %s, result %s, signals %s\n", yesno(intact), yesno(rcx), yesno(result), yesno(handled > 0));
	return 0;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * Every way into the kernel's system call table traps: int $0x80 (i386
 * ABI), x32 system calls, sysenter, and syscall from a compat (32-bit)
 * code segment.  Each guest tries to write(2) into a pipe; nothing may
 * arrive there, and the caller must see the attempt.
 */
#include "vmexec_test.h"

#define X32_BIT 0x40000000L
#define AUDIT_ARCH_X86_64 0xc000003eU
#define AUDIT_ARCH_I386 0x40000003U

static int pipe_w;
static char msg[8] = "LEAK";

static void guest_int80(void)
{
	long r;

	for (;;)	/* i386 write = 4 (ebx, ecx, edx) */
		asm volatile("int $0x80" : "=a"(r)
			     : "a"(4), "b"(pipe_w), "c"(msg), "d"(4) : "memory");
}

static void guest_x32(void)
{
	for (;;)	/* x32 write = X32_BIT | 1 */
		raw_syscall3(X32_BIT | 1, pipe_w, (long)msg, 4);
}

static void guest_sysenter(void)
{
	long r;

	for (;;)
		asm volatile("sysenter" : "=a"(r)
			     : "a"(4), "b"(pipe_w), "c"(msg), "d"(4) : "memory");
}

static long vsys_time_out;

/* the legacy vsyscall page: time(&vsys_time_out), emulated by the kernel */
static void guest_vsyscall(void)
{
	long r;

	for (;;) {
		asm volatile("call *%%rax" : "=a"(r)
			     : "a"(0xffffffffff600400UL), "D"(&vsys_time_out)
			     : "rcx", "rdx", "rsi", "r8", "r9", "r10", "r11", "memory");
		raw_syscall1(504, r);	/* only reached if it was emulated */
	}
}

/* 32-bit code: write via int $0x80 and via syscall, then spin */
extern char compat_code[], compat_code_end[];
asm(".pushsection .text\n"
    ".code32\n"
    "compat_code:\n"
    "	movl $4, %eax\n"
    "	int $0x80\n"
    "	movl $4, %eax\n"
    "	syscall\n"
    "1:	jmp 1b\n"
    "compat_code_end:\n"
    ".code64\n"
    ".popsection\n");

static int pipe_empty(int fd)
{
	char buf[16];

	return read(fd, buf, sizeof(buf)) < 0 && errno == EAGAIN;
}

int main(void)
{
	struct process_vm_exec_context ctx;
	unsigned int *stack32;
	siginfo_t si;
	void *stack;
	int p[2];
	long ret;
	pid_t pid;

	tap_plan(7);
	if (pipe2(p, O_NONBLOCK))
		return 2;
	pipe_w = p[1];
	stack = shared_alloc(GUEST_STACK_SIZE);
	/* a stack below 4 GiB for 32-bit code */
	stack32 = mmap((void *)0x10000000, 65536, PROT_READ | PROT_WRITE | PROT_EXEC,
		       MAP_SHARED | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	pid = spawn_stub();

	guest_ctx_init(&ctx, guest_int80, stack);
	ret = vmexec_run(pid, &ctx, 0, &si, NULL);
	tap_ok(ret == 0 && si.si_signo == SIGSYS && si.si_arch == AUDIT_ARCH_I386 &&
	       si.si_syscall == 4 && ctx.rbx == (unsigned)pipe_w && pipe_empty(p[0]),
	       "int $0x80 traps (ret %ld signo %d arch %#x nr %d)",
	       ret, si.si_signo, si.si_arch, si.si_syscall);

	guest_ctx_init(&ctx, guest_x32, stack);
	ret = vmexec_run(pid, &ctx, 0, &si, NULL);
	tap_ok(ret == 0 && si.si_signo == SIGSYS && si.si_arch == AUDIT_ARCH_X86_64 &&
	       si.si_syscall == (int)(X32_BIT | 1) && pipe_empty(p[0]),
	       "x32 syscall traps (ret %ld signo %d nr %#x)", ret, si.si_signo,
	       si.si_syscall);

	/* sysenter in 64-bit mode: #UD on AMD, a compat syscall on Intel */
	guest_ctx_init(&ctx, guest_sysenter, stack);
	ret = vmexec_run(pid, &ctx, 0, &si, NULL);
	tap_ok(ret == 0 && (si.si_signo == SIGILL || si.si_signo == SIGSEGV ||
			    (si.si_signo == SIGSYS && si.si_arch == AUDIT_ARCH_I386)) &&
	       pipe_empty(p[0]),
	       "sysenter traps (ret %ld signo %d arch %#x)", ret, si.si_signo, si.si_arch);

	/* 32-bit code segment: copy the code below 4 GiB and run it with cs 0x23 */
	if (stack32 == MAP_FAILED) {
		tap_ok(0, "mmap below 4G: %s", strerror(errno));
		tap_ok(0, "skipped");
	} else {
		memcpy(stack32, compat_code, compat_code_end - compat_code);
		guest_ctx_init(&ctx, NULL, NULL);
		ctx.rip = (unsigned long)stack32;
		ctx.rsp = (unsigned long)stack32 + 65536 - 16;
		ctx.cs = USER32_CS;
		ctx.rbx = pipe_w;
		ctx.rcx = (unsigned long)msg;
		ctx.rdx = 4;
		ret = vmexec_run(pid, &ctx, 0, &si, NULL);
		tap_ok(ret == 0 && si.si_signo == SIGSYS && si.si_arch == AUDIT_ARCH_I386 &&
		       si.si_syscall == 4 && ctx.cs == USER32_CS && pipe_empty(p[0]),
		       "int $0x80 from compat mode traps (signo %d arch %#x cs %#x)",
		       si.si_signo, si.si_arch, ctx.cs);
		ret = vmexec_run(pid, &ctx, 0, &si, NULL);
		tap_ok(ret == 0 && (si.si_signo == SIGILL || si.si_signo == SIGSEGV ||
				    (si.si_signo == SIGSYS && si.si_arch == AUDIT_ARCH_I386)) &&
		       pipe_empty(p[0]),
		       "syscall from compat mode traps (signo %d arch %#x)",
		       si.si_signo, si.si_arch);
	}
	/* vsyscall emulation would run time() in the kernel for the guest */
	guest_ctx_init(&ctx, guest_vsyscall, stack);
	ret = vmexec_run(pid, &ctx, 0, &si, NULL);
	tap_ok(ret == 0 && si.si_signo == SIGSEGV && ctx.rip == 0xffffffffff600400UL,
	       "vsyscall page call traps as SIGSEGV, not emulated (signo %d rip %#llx)",
	       si.si_signo, (unsigned long long)ctx.rip);

	tap_ok(pipe_empty(p[0]), "nothing was written by any guest");
	kill_stub(pid);
	return tap_exit();
}

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the process_vm_exec selftests: TAP output, the raw
 * system call, stub processes and guest stacks.
 *
 * Guest functions run in a stub's mm with fs_base 0 and no libc: they must
 * only use inline asm system calls and memory shared with, or copied into,
 * the stub (the tests are built with -fno-stack-protector for this).
 */
#ifndef VMEXEC_TEST_H
#define VMEXEC_TEST_H

#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <sched.h>

#if __has_include("../../include/uapi/linux/process_vm_exec.h")
#include "../../include/uapi/linux/process_vm_exec.h"	/* pvx tree */
#else
#include <linux/process_vm_exec.h>	/* kernel tree: $(KHDR_INCLUDES) */
#endif

_Static_assert(sizeof(struct process_vm_exec_context) ==
	       PROCESS_VM_EXEC_CONTEXT_SIZE, "context layout");

#define GUEST_STACK_SIZE	(64 * 1024)
#define USER_CS			0x33
#define USER32_CS		0x23

static int tap_count, tap_failed;

static inline void tap_plan(int n)
{
	printf("TAP version 13\n1..%d\n", n);
	fflush(stdout);
}

__attribute__((format(printf, 2, 3)))
static inline int tap_ok(int cond, const char *fmt, ...)
{
	va_list ap;

	printf("%sok %d ", cond ? "" : "not ", ++tap_count);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	if (!cond)
		tap_failed++;
	return cond;
}

#define tap_diag(fmt, ...) \
	do { printf("# " fmt "\n", ##__VA_ARGS__); fflush(stdout); } while (0)

static long vmexec_eintr;

static inline int tap_exit(void)
{
	if (vmexec_eintr)
		printf("# %ld EINTR returns re-entered\n", vmexec_eintr);
	printf("# %d tests, %d failed\n", tap_count, tap_failed);
	return tap_failed ? 1 : 0;
}

/* All signals are returned through siginfo. */
static unsigned long long vmexec_all_signals = ~0ULL;

static inline long vmexec(pid_t pid, struct process_vm_exec_context *ctx,
			  unsigned long flags, siginfo_t *si,
			  unsigned long long *mask)
{
	return syscall(__NR_process_vm_exec, pid, ctx, flags, si,
		       mask ? mask : &vmexec_all_signals, 8);
}

/*
 * -EINTR means the guest was interrupted by task work or by a signal that
 * the caller handles itself; ctx holds the guest state, so just re-enter.
 */

static inline long vmexec_run(pid_t pid, struct process_vm_exec_context *ctx,
			      unsigned long flags, siginfo_t *si,
			      unsigned long long *mask)
{
	long ret;

	while ((ret = vmexec(pid, ctx, flags, si, mask)) == -1 && errno == EINTR)
		__atomic_add_fetch(&vmexec_eintr, 1, __ATOMIC_RELAXED);
	return ret;
}

/* Probe: -1/ENOSYS means the kernel has no process_vm_exec. */
static inline int vmexec_supported(void)
{
	long ret = syscall(__NR_process_vm_exec, 0, NULL, 0, NULL, NULL, 0);

	return !(ret == -1 && errno == ENOSYS);
}

static inline void noop_handler(int sig)
{
	(void)sig;
}

/* A stub: a child that shares our text and sleeps until killed. */
static inline pid_t spawn_stub(void)
{
	pid_t pid = fork();

	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
		for (;;)
			pause();
	}
	return pid;
}

static inline void kill_stub(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

/* Memory mapped before spawn_stub() is shared between test and guest. */
static inline void *shared_alloc(size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		perror("mmap");
		exit(2);
	}
	return p;
}

static inline void guest_ctx_init(struct process_vm_exec_context *ctx,
				  void (*fn)(void), void *stack)
{
	memset(ctx, 0, sizeof(*ctx));
	ctx->rip = (unsigned long)fn;
	/* like a call: rsp + 8 is 16-byte aligned at function entry */
	ctx->rsp = (unsigned long)stack + GUEST_STACK_SIZE - 8;
	ctx->cs = USER_CS;
}

static inline long raw_syscall1(long n, long a1)
{
	long ret;

	asm volatile("syscall" : "=a"(ret) : "a"(n), "D"(a1)
		     : "rcx", "r11", "memory");
	return ret;
}

static inline long raw_syscall3(long n, long a1, long a2, long a3)
{
	long ret;

	asm volatile("syscall" : "=a"(ret) : "a"(n), "D"(a1), "S"(a2), "d"(a3)
		     : "rcx", "r11", "memory");
	return ret;
}

static inline double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/*
 * Benchmarks run on CPU 0 (and fork their tracee there), so that the ptrace
 * baseline measures a same-CPU switch rather than cross-CPU wakeup latency,
 * which is huge and noisy under QEMU TCG.  PVX_BENCH_NOPIN=1 to disable.
 */
static inline const char *bench_pin(void)
{
	cpu_set_t set;

	if (getenv("PVX_BENCH_NOPIN"))
		return "unpinned";
	CPU_ZERO(&set);
	CPU_SET(0, &set);
	return sched_setaffinity(0, sizeof(set), &set) ? "unpinned" : "on cpu 0";
}

static inline int bench_seconds(void)
{
	const char *s = getenv("PVX_BENCH_SECONDS");

	return s ? atoi(s) : 2;
}

#endif

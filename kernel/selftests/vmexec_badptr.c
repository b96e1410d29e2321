// SPDX-License-Identifier: GPL-2.0
/*
 * Bad arguments: every bad pointer is EFAULT, every bad value EINVAL, a
 * missing target ESRCH, a target we may not ptrace EPERM/EACCES; bad guest
 * instruction pointers come back as signals.  No oops anywhere (the VM init
 * checks dmesg).
 */
#include "vmexec_test.h"
#include <pthread.h>

static void *stack;
static volatile unsigned long *spin_counter;

static void guest_spin(void)
{
	for (;;)
		(*spin_counter)++;
}

static void guest_nop(void)
{
	for (;;)
		raw_syscall1(502, 0);
}

static long call(pid_t pid, void *ctx, unsigned long flags, void *si, void *mask,
		 size_t size)
{
	long ret;

	do
		ret = syscall(__NR_process_vm_exec, pid, ctx, flags, si, mask, size);
	while (ret == -1 && errno == EINTR && ++vmexec_eintr);
	return ret < 0 ? -errno : ret;
}

struct unmap_arg {
	pid_t pid;
	struct process_vm_exec_context *ctx;
	long ret;
	int done;
};

static void *unmap_thread(void *p)
{
	struct unmap_arg *a = p;
	unsigned long long mask = 1ULL << (SIGUSR1 - 1);
	siginfo_t si;

	a->ret = call(a->pid, a->ctx, 0, &si, &mask, 8);
	__atomic_store_n(&a->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

int main(void)
{
	struct process_vm_exec_context ctx, *mctx;
	unsigned long long mask = ~0ULL;
	siginfo_t si;
	pid_t pid;
	long ret;
	int status;

	tap_plan(17);
	signal(SIGUSR1, noop_handler);
	stack = shared_alloc(GUEST_STACK_SIZE);
	spin_counter = shared_alloc(4096);
	pid = spawn_stub();
	guest_ctx_init(&ctx, guest_nop, stack);

	tap_ok(call(pid, NULL, 0, &si, &mask, 8) == -EFAULT, "NULL context: EFAULT");
	tap_ok(call(pid, (void *)0xffff888000000000UL, 0, &si, &mask, 8) == -EFAULT,
	       "kernel address as context: EFAULT");
	tap_ok(call(pid, &ctx, 0, NULL, &mask, 8) == -EFAULT, "NULL siginfo: EFAULT");
	tap_ok(call(pid, &ctx, 0, &si, NULL, 8) == -EFAULT, "NULL sigmask: EFAULT");
	tap_ok(call(pid, &ctx, 0, &si, &mask, 4) == -EINVAL, "sigsetsize 4: EINVAL");
	tap_ok(call(pid, &ctx, 0x80, &si, &mask, 8) == -EINVAL, "unknown flag: EINVAL");
	tap_ok(call(999999, &ctx, 0, &si, &mask, 8) == -ESRCH, "no such pid: ESRCH");
	tap_ok(call(2, &ctx, 0, &si, &mask, 8) == -ESRCH, "kernel thread: ESRCH");

	ctx.cs = 0x10;
	ret = call(pid, &ctx, 0, &si, &mask, 8);
	ctx.cs = USER_CS;
	ctx.fs_base = 0xffff888000000000UL;
	ret = ret == -EINVAL ? call(pid, &ctx, 0, &si, &mask, 8) : ret;
	ctx.fs_base = 0;
	ctx.reserved2[1] = 1;
	ret = ret == -EINVAL ? call(pid, &ctx, 0, &si, &mask, 8) : ret;
	ctx.reserved2[1] = 0;
	tap_ok(ret == -EINVAL, "kernel cs, kernel fs_base, reserved bits: EINVAL (%ld)", ret);

	ctx.fpstate = 0x1000;	/* aligned, unmapped */
	ctx.fpstate_size = 16384;
	ret = call(pid, &ctx, 0, &si, &mask, 8);
	ctx.fpstate_size = 64;
	tap_ok(ret == -EFAULT && call(pid, &ctx, 0, &si, &mask, 8) == -EINVAL,
	       "unmapped fpstate: EFAULT, too small: EINVAL (%ld)", ret);
	ctx.fpstate = ctx.fpstate_size = 0;

	/* siginfo passes access_ok but is unmapped: the trap reports EFAULT */
	ret = call(pid, &ctx, 0, (void *)0x1000, &mask, 8);
	tap_ok(ret == -EFAULT, "unmapped siginfo at trap time: EFAULT (%ld)", ret);
	ret = call(pid, &ctx, 0, &si, &mask, 8);
	tap_ok(ret == 0 && si.si_signo == SIGSYS, "next call works (%ld)", ret);

	/* bad guest rip: a signal comes back, not an oops */
	guest_ctx_init(&ctx, NULL, stack);
	ret = call(pid, &ctx, 0, &si, &mask, 8);
	tap_ok(ret == 0 && si.si_signo == SIGSEGV && ctx.rip == 0,
	       "guest rip 0: SIGSEGV (%ld %d)", ret, si.si_signo);
	ctx.rip = 0xffffffff81000000UL;
	ret = call(pid, &ctx, 0, &si, &mask, 8);
	tap_ok(ret == 0 && si.si_signo == SIGSEGV, "guest rip in the kernel: SIGSEGV (%d)",
	       si.si_signo);
	ctx.rip = 0x8000000000000000UL;
	ret = call(pid, &ctx, 0, &si, &mask, 8);
	tap_ok(ret == 0 && (si.si_signo == SIGSEGV || si.si_signo == SIGBUS),
	       "non-canonical guest rip: SIGSEGV/SIGBUS (%ld %d)", ret, si.si_signo);

	/* the context is unmapped while the guest runs */
	{
		struct unmap_arg a;
		pthread_t t;

		mctx = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		guest_ctx_init(mctx, guest_spin, stack);
		a.pid = pid;
		a.ctx = mctx;
		a.done = 0;
		pthread_create(&t, NULL, unmap_thread, &a);
		while (*spin_counter == 0)
			usleep(1000);
		munmap(mctx, 4096);
		while (!__atomic_load_n(&a.done, __ATOMIC_ACQUIRE)) {
			pthread_kill(t, SIGUSR1);
			usleep(20000);
		}
		pthread_join(t, NULL);
		tap_ok(a.ret == -EFAULT, "context unmapped during the run: EFAULT (%ld)", a.ret);
	}

	/* no ptrace permission */
	if (fork() == 0) {
		struct process_vm_exec_context c2;

		guest_ctx_init(&c2, guest_nop, stack);
		if (setresuid(65534, 65534, 65534))
			_exit(3);
		ret = call(pid, &c2, 0, &si, &mask, 8);
		_exit(ret == -EPERM || ret == -EACCES ? 0 : 1);
	}
	wait(&status);
	tap_ok(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	       "unprivileged caller, root target: EPERM/EACCES (status %#x)", status);

	kill_stub(pid);
	return tap_exit();
}

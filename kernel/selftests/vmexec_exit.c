// SPDX-License-Identifier: GPL-2.0
/*
 * Lifetime: the target dies while a caller runs guest code in its mm or
 * sits in a blocking PROCESS_VM_EXEC_SYSCALL there; the caller dies (or
 * its process exits) while in the guest; many short-lived stubs in a row.
 * No oops (the VM init checks dmesg), sane results, ESRCH afterwards.
 */
#include "vmexec_test.h"
#include <pthread.h>
#include <sys/time.h>

static void on_alarm(int sig) { (void)sig; }

static volatile unsigned long *counter;
static void *stack;
static pid_t stub;

static void guest_spin(void)
{
	for (;;)
		(*counter)++;
}

struct result {
	long ret1, ret2;
	int signo;
	int done;
};

static void *caller_thread(void *arg)
{
	struct result *res = arg;
	unsigned long long mask = 1ULL << (SIGUSR1 - 1);
	struct process_vm_exec_context ctx;
	siginfo_t si = {0};

	guest_ctx_init(&ctx, guest_spin, stack);
	res->ret1 = vmexec_run(stub, &ctx, 0, &si, &mask);
	res->signo = si.si_signo;
	res->ret2 = vmexec_run(stub, &ctx, 0, &si, &mask);
	if (res->ret2 < 0)
		res->ret2 = -errno;
	__atomic_store_n(&res->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void wait_counter(unsigned long from)
{
	while (*counter == from)
		usleep(1000);
}

static void *blocking_read_thread(void *arg)
{
	int *fds = arg;
	struct process_vm_exec_context ctx = {0};
	static long result;

	ctx.rax = SYS_read;
	ctx.rdi = fds[0];
	ctx.rsi = (unsigned long)stack;	/* stub memory */
	ctx.rdx = 4;
	if (vmexec(stub, &ctx, PROCESS_VM_EXEC_SYSCALL, NULL, NULL))
		result = -errno;
	else
		result = ctx.rax;
	return &result;
}

int main(void)
{
	struct result res = {0};
	pthread_t t;
	unsigned long c;
	int fds[2], status, i, bad;
	void *rv;

	tap_plan(5);
	signal(SIGUSR1, noop_handler);
	stack = shared_alloc(GUEST_STACK_SIZE);
	counter = shared_alloc(4096);

	/* 1: target killed and reaped while the guest runs in its mm */
	stub = spawn_stub();
	pthread_create(&t, NULL, caller_thread, &res);
	wait_counter(0);
	kill_stub(stub);
	c = *counter;
	wait_counter(c);	/* still running in the orphaned mm */
	/* until it is back: SIGUSR1 may also hit it between two calls */
	while (!__atomic_load_n(&res.done, __ATOMIC_ACQUIRE)) {
		pthread_kill(t, SIGUSR1);
		usleep(20000);
	}
	pthread_join(t, NULL);
	tap_ok(res.ret1 == 0 && res.signo == SIGUSR1 && res.ret2 == -ESRCH,
	       "target died mid-run: guest kept running, trap ok, then ESRCH (%ld %d %ld)",
	       res.ret1, res.signo, res.ret2);

	/* 2: target killed during a blocking PROCESS_VM_EXEC_SYSCALL read */
	stub = spawn_stub();
	if (pipe(fds))
		return 2;
	pthread_create(&t, NULL, blocking_read_thread, fds);
	usleep(200000);
	kill_stub(stub);
	if (write(fds[1], "abcd", 4) != 4)
		return 2;
	pthread_join(t, &rv);
	tap_ok(*(long *)rv == 4, "read into a dead target's memory completes (%ld)",
	       *(long *)rv);

	/* 3: the caller is SIGKILLed while in the guest */
	stub = spawn_stub();
	*counter = 0;
	pid_t child = fork();
	if (child == 0) {
		caller_thread(&res);
		_exit(0);
	}
	wait_counter(0);
	kill(child, SIGKILL);
	waitpid(child, &status, 0);
	tap_ok(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
	       "caller killed in the guest (status %#x)", status);

	/* 4: the caller's process exits (exit_group) while a thread is in the guest */
	*counter = 0;
	child = fork();
	if (child == 0) {
		pthread_create(&t, NULL, caller_thread, &res);
		wait_counter(0);
		exit(7);
	}
	waitpid(child, &status, 0);
	tap_ok(WIFEXITED(status) && WEXITSTATUS(status) == 7,
	       "exit_group while a thread is in the guest (status %#x)", status);
	kill_stub(stub);

	/* 5: many short-lived stubs */
	bad = 0;
	signal(SIGALRM, on_alarm);
	{
		struct itimerval it = { { 0, 3000 }, { 0, 3000 } };

		setitimer(ITIMER_REAL, &it, NULL);
	}
	for (i = 0; i < 200; i++) {
		struct process_vm_exec_context ctx;
		siginfo_t si;
		unsigned long long mask = 1ULL << (SIGALRM - 1);

		stub = spawn_stub();
		guest_ctx_init(&ctx, guest_spin, stack);
		if (vmexec_run(stub, &ctx, 0, &si, &mask) != 0 || si.si_signo != SIGALRM)
			bad++;
		kill_stub(stub);
	}
	{
		struct itimerval off = { { 0, 0 }, { 0, 0 } };

		setitimer(ITIMER_REAL, &off, NULL);
	}
	tap_ok(bad == 0, "200 stubs created, entered, interrupted, killed (%d bad)", bad);
	return tap_exit();
}

// SPDX-License-Identifier: GPL-2.0
/*
 * Concurrent callers: several threads run trap loops at once, some in their
 * own stubs and some all in one shared stub, while another thread keeps
 * mapping and unmapping memory in the shared stub with
 * PROCESS_VM_EXEC_SYSCALL (TLB shootdowns across switched mms).  Each
 * thread's guest reports a per-thread marker that must never get mixed up.
 */
#include "vmexec_test.h"
#include <pthread.h>

#define NTHREADS 6
#define T_NR 503

/* guest: report rbx (the marker) forever; rbx is callee-saved, kept by the loop */
extern void guest_marker(void);
asm(".pushsection .text\n"
    "guest_marker:\n"
    "1:	movq %rbx, %rdi\n"
    "	movl $503, %eax\n"
    "	syscall\n"
    "	cmpq %rbx, %rax\n"	/* the caller answers with the marker */
    "	jne 2f\n"
    "	jmp 1b\n"
    "2:	movq $-1, %rdi\n"
    "	movl $503, %eax\n"
    "	syscall\n"
    "	jmp 1b\n"
    ".popsection\n");

struct worker {
	pthread_t t;
	pid_t pid;
	void *stack;
	unsigned long marker;
	long loops, bad;
};

static volatile int stop;

static void *worker(void *p)
{
	struct worker *w = p;
	struct process_vm_exec_context ctx;
	siginfo_t si;

	guest_ctx_init(&ctx, guest_marker, w->stack);
	ctx.rbx = w->marker;
	while (!stop) {
		long ret = vmexec_run(w->pid, &ctx, 0, &si, NULL);

		if (ret != 0 || si.si_signo != SIGSYS || si.si_syscall != T_NR ||
		    ctx.rdi != w->marker || ctx.rbx != w->marker)
			w->bad++;
		ctx.rax = w->marker;
		w->loops++;
	}
	return NULL;
}

static long churn_loops, churn_bad;

static void *churner(void *p)
{
	pid_t pid = *(pid_t *)p;

	while (!stop) {
		struct process_vm_exec_context ctx = {0};

		ctx.rax = SYS_mmap;
		ctx.rsi = 65536;
		ctx.rdx = PROT_READ | PROT_WRITE;
		ctx.r10 = MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE;
		ctx.r8 = -1;
		if (vmexec(pid, &ctx, PROCESS_VM_EXEC_SYSCALL, NULL, NULL) ||
		    (long)ctx.rax < 0) {
			churn_bad++;
			continue;
		}
		ctx.rdi = ctx.rax;
		ctx.rax = SYS_munmap;
		if (vmexec(pid, &ctx, PROCESS_VM_EXEC_SYSCALL, NULL, NULL) || ctx.rax)
			churn_bad++;
		churn_loops++;
	}
	return NULL;
}

int main(void)
{
	struct worker w[NTHREADS];
	pthread_t ct;
	pid_t shared;
	long bad = 0, loops = 0;
	int i;

	tap_plan(2);
	for (i = 0; i < NTHREADS; i++) {
		w[i].stack = shared_alloc(GUEST_STACK_SIZE);
		w[i].marker = 0x1000 + i;
		w[i].loops = w[i].bad = 0;
	}
	shared = spawn_stub();
	for (i = 0; i < NTHREADS; i++)
		w[i].pid = (i % 2) ? shared : spawn_stub();
	for (i = 0; i < NTHREADS; i++)
		pthread_create(&w[i].t, NULL, worker, &w[i]);
	pthread_create(&ct, NULL, churner, &shared);
	sleep(bench_seconds() + 1);
	stop = 1;
	for (i = 0; i < NTHREADS; i++) {
		pthread_join(w[i].t, NULL);
		tap_diag("thread %d (%s stub): %ld traps, %ld bad", i,
			 (i % 2) ? "shared" : "own", w[i].loops, w[i].bad);
		bad += w[i].bad;
		loops += w[i].loops;
	}
	pthread_join(ct, NULL);
	tap_ok(bad == 0 && loops > NTHREADS,
	       "%d threads, %ld traps, no mixed-up state (%ld bad)", NTHREADS, loops, bad);
	tap_ok(churn_bad == 0 && churn_loops > 0,
	       "mmap/munmap churn in the shared stub: %ld rounds, %ld bad",
	       churn_loops, churn_bad);
	for (i = 0; i < NTHREADS; i++)
		if (!(i % 2))
			kill_stub(w[i].pid);
	kill_stub(shared);
	return tap_exit();
}

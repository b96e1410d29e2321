// SPDX-License-Identifier: GPL-2.0
/*
 * Interruptible host system calls for sentry threads.
 *
 * A task thread drops the sentry lock to block in a host call (read of a
 * pipe, ppoll, a sleep, process_vm_exec). Another thread that queues a
 * signal for it does so under the lock and then sends PVX_SIG_INTERRUPT,
 * which makes the blocked call return EINTR. The kick can land after the
 * blocking thread looked for pending signals but before it entered the
 * host call; then the handler runs in user space, the call blocks anyway
 * and the wake-up is lost.
 *
 * musl's thread cancellation closes the same window (__syscall_cp_asm):
 * the handler sets a per-thread flag, and when it interrupts the thread
 * between the flag test and the syscall instruction it moves the thread to
 * an exit that returns -EINTR. A kick that comes earlier is seen by the
 * flag test; one that comes later interrupts the call in the kernel.
 */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <ucontext.h>

#include "pvx/interrupt.h"

static __thread volatile sig_atomic_t kicked;
static __thread volatile sig_atomic_t armed;
static const sig_atomic_t never;

long intr_syscall_asm(const volatile sig_atomic_t *flag, long nr, const long a[6]);
extern const char intr_window[], intr_window_end[], intr_cut[];

/*
 * rdi = flag, rsi = nr, rdx = args. r11 holds the flag (the syscall
 * instruction clobbers r11 only after it has been read).
 */
__asm__(".text\n"
	".globl intr_syscall_asm\n"
	".type intr_syscall_asm, @function\n"
	"intr_syscall_asm:\n"
	"	mov %rdi, %r11\n"
	"	mov %rsi, %rax\n"
	"	mov 0(%rdx), %rdi\n"
	"	mov 8(%rdx), %rsi\n"
	"	mov 24(%rdx), %r10\n"
	"	mov 32(%rdx), %r8\n"
	"	mov 40(%rdx), %r9\n"
	"	mov 16(%rdx), %rdx\n"
	".globl intr_window\n"
	"intr_window:\n"
	"	cmpl $0, (%r11)\n"
	"	jne intr_cut\n"
	"	syscall\n"
	".globl intr_window_end\n"
	"intr_window_end:\n"
	"	ret\n"
	".globl intr_cut\n"
	"intr_cut:\n"
	"	mov $-4, %rax\n"	/* -EINTR */
	"	ret\n"
	".size intr_syscall_asm, .-intr_syscall_asm\n");

_Static_assert(EINTR == 4, "intr_cut returns -EINTR");

static void on_interrupt(int sig, siginfo_t *si, void *ucv)
{
	ucontext_t *uc = ucv;
	greg_t *rip = &uc->uc_mcontext.gregs[REG_RIP];

	(void)sig, (void)si;
	kicked = 1;
	/* Not yet in the kernel: leave as if the call had been interrupted there. */
	if (armed && *rip >= (greg_t)intr_window && *rip < (greg_t)intr_window_end)
		*rip = (greg_t)intr_cut;
}

void intr_init(int sig)
{
	/* No SA_RESTART: a blocked host call returns EINTR. */
	struct sigaction sa = { .sa_sigaction = on_interrupt, .sa_flags = SA_SIGINFO };

	sigemptyset(&sa.sa_mask);
	sigaction(sig, &sa, NULL);
}

void intr_arm(void)
{
	kicked = 0;
	armed = 1;
}

void intr_disarm(void)
{
	armed = 0;
}

long intr_syscall(long nr, const long a[6])
{
	return intr_syscall_asm(armed ? &kicked : &never, nr, a);
}

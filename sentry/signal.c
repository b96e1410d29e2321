// SPDX-License-Identifier: GPL-2.0
/*
 * Guest signals: queueing, default actions and handler delivery with an
 * x86-64 rt_sigframe on the guest stack, as arch/x86/kernel/signal_64.c
 * lays it out (the restorer address, a ucontext, a siginfo), and
 * rt_sigreturn, which reads it back.
 *
 * Signals are delivered when the task returns to guest code after a trap:
 * at a syscall boundary, or right after a fault. A task sleeping in the
 * sentry (wait4, sigsuspend, a pipe read) is woken and its call returns
 * -ERESTARTSYS, which becomes EINTR or a restart as SA_RESTART says. The
 * guest's FPU state is not saved in the frame (fpstate is NULL): at a
 * syscall boundary the psABI already treats vector registers as clobbered.
 */
#include <signal.h>
#include <string.h>

#include "pvx/kernel.h"
#include "pvx/log.h"
#include "pvx/sigframe.h"
#include "pvx/task.h"

#define SA_RESTORER_ 0x04000000UL
#define BIT(sig) (1UL << ((sig) - 1))
#define UNBLOCKABLE (BIT(SIGKILL) | BIT(SIGSTOP))

/* signal(7): the default action of each signal. */
static bool default_ignore(int sig)
{
	return sig == SIGCHLD || sig == SIGCONT || sig == SIGURG || sig == SIGWINCH || sig >= SIGRTMIN;
}

static bool default_stop(int sig)
{
	return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
}

/* sig_ignored(): a signal whose action is to be ignored is dropped when sent. */
static bool ignored(const struct task *t, int sig)
{
	uint64_t h = t->sigactions[sig - 1].handler;

	if (sig == SIGKILL || (t->sigmask & BIT(sig)))
		return false;
	return h == (uint64_t)SIG_IGN || (h == (uint64_t)SIG_DFL && (default_ignore(sig) || default_stop(sig)));
}

void signal_queue(struct task *target, int sig, const struct sig_info *info)
{
	if (sig < 1 || sig > 64 || target->state == TASK_ZOMBIE || ignored(target, sig))
		return;
	target->sigpending |= BIT(sig);
	target->siginfo[sig - 1] = info ? *info : (struct sig_info){ SI_USER, 0, 0, 0 };
	if (sig == SIGKILL) {
		target->exiting = true;
		target->exit_status = SIGKILL;
		task_interrupt(target, true);
		sentry_wake_all();	/* out of pause, sigsuspend, wait4 */
		return;
	}
	if (!(target->sigmask & BIT(sig))) {
		sentry_wake_all();
		task_interrupt(target, false);
	}
}

bool signal_pending(struct task *t)
{
	return t->exiting || (t->sigpending & ~t->sigmask);
}

struct rt_sigframe {
	uint64_t pretcode;
	struct k_ucontext uc;
	struct k_siginfo info;
};
_Static_assert(offsetof(struct rt_sigframe, info) == 8 + 304, "rt_sigframe ABI");

#define UC_SIGCONTEXT_SS 0x2
#define UC_STRICT_RESTORE_SS 0x4

static bool on_altstack(const struct task *t, uint64_t sp)
{
	return t->altstack_size && sp > t->altstack_sp && sp - t->altstack_sp <= t->altstack_size;
}

/* Build the frame for sig and point the registers at the handler (setup_rt_frame). */
static long push_frame(struct task *t, int sig, const struct sigaction_rec *sa, uint64_t old_mask)
{
	struct pvx_regs *r = &t->regs;
	const struct sig_info *si = &t->siginfo[sig - 1];
	struct rt_sigframe f;
	uint64_t sp = r->rsp - 128;	/* the red zone */

	if ((sa->flags & SA_ONSTACK) && t->altstack_size && !(t->altstack_flags & SS_DISABLE) &&
	    !on_altstack(t, r->rsp))
		sp = t->altstack_sp + t->altstack_size;
	sp = ((sp - sizeof(f)) & ~15UL) - 8;	/* rsp+8 16-aligned at handler entry, as after a call */

	memset(&f, 0, sizeof(f));
	f.pretcode = sa->restorer;
	f.uc.flags = UC_SIGCONTEXT_SS | UC_STRICT_RESTORE_SS;
	f.uc.ss_sp = t->altstack_sp;
	f.uc.ss_size = t->altstack_size;
	f.uc.ss_flags = t->altstack_size ? (on_altstack(t, r->rsp) ? SS_ONSTACK : 0) : SS_DISABLE;
	struct k_sigcontext *c = &f.uc.mc;
	c->r8 = r->r8, c->r9 = r->r9, c->r10 = r->r10, c->r11 = r->r11;
	c->r12 = r->r12, c->r13 = r->r13, c->r14 = r->r14, c->r15 = r->r15;
	c->rdi = r->rdi, c->rsi = r->rsi, c->rbp = r->rbp, c->rbx = r->rbx;
	c->rdx = r->rdx, c->rax = r->rax, c->rcx = r->rcx, c->rsp = r->rsp;
	c->rip = r->rip, c->eflags = r->eflags;
	c->cs = (uint16_t)r->cs, c->ss = (uint16_t)r->ss;
	c->oldmask = old_mask;
	c->cr2 = si->addr;
	f.uc.sigmask = old_mask;
	f.info.signo = sig;
	f.info.code = si->code;
	if (sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE || sig == SIGTRAP)
		f.info.addr = si->addr;
	else
		f.info.kill.pid = si->pid, f.info.kill.uid = sandbox.uid, f.info.kill.status = si->status;
	if (copy_to_guest(&t->mm, sp, &f, sizeof(f)))
		return -EFAULT;

	r->rsp = sp;
	r->rip = sa->handler;
	r->rdi = (uint64_t)sig;
	r->rsi = sp + offsetof(struct rt_sigframe, info);
	r->rdx = sp + offsetof(struct rt_sigframe, uc);
	r->rax = 0;
	return 0;
}

/* Lowest pending signal not blocked; synchronous faults first, as Linux does. */
static int next_signal(struct task *t)
{
	uint64_t ready = t->sigpending & ~t->sigmask;
	static const int sync[] = { SIGSEGV, SIGBUS, SIGILL, SIGTRAP, SIGFPE, SIGSYS };

	for (size_t i = 0; i < ARRAY_SIZE(sync); i++)
		if (ready & BIT(sync[i]))
			return sync[i];
	return ready ? __builtin_ctzll(ready) + 1 : 0;
}

void signal_deliver(struct task *t, long *ret)
{
	bool delivered = false;
	int sig;

	while (!t->exiting && (sig = next_signal(t))) {
		struct sigaction_rec *sa = &t->sigactions[sig - 1];
		t->sigpending &= ~BIT(sig);
		if (sa->handler == (uint64_t)SIG_IGN || (sa->handler == (uint64_t)SIG_DFL &&
							 (default_ignore(sig) || default_stop(sig))))
			continue;	/* stopping needs job control, which pvx does not have */
		if (sa->handler == (uint64_t)SIG_DFL || sig == SIGKILL) {
			t->exiting = true;
			t->exit_status = sig;
			return;
		}
		/* A syscall cut short by a signal: restart it only with SA_RESTART (signal(7)). */
		if (ret && *ret == -ERESTARTSYS) {
			if (sa->flags & SA_RESTART) {
				t->regs.rip -= 2;	/* back onto the syscall instruction */
				*ret = (long)t->regs.orig_rax;
			} else {
				*ret = -EINTR;
			}
		}
		if (ret)
			t->regs.rax = (uint64_t)*ret;
		uint64_t old_mask = t->has_saved_mask ? t->saved_mask : t->sigmask;
		t->has_saved_mask = false;
		if (!(sa->flags & SA_RESTORER_) || push_frame(t, sig, sa, old_mask) < 0) {
			/* force_sigsegv(): a frame that cannot be built kills the task. */
			t->exiting = true;
			t->exit_status = SIGSEGV;
			return;
		}
		t->sigmask |= sa->mask | ((sa->flags & SA_NODEFER) ? 0 : BIT(sig));
		t->sigmask &= ~UNBLOCKABLE;
		if (sa->flags & SA_RESETHAND)
			memset(sa, 0, sizeof(*sa));
		if (ret)
			*ret = (long)t->regs.rax;	/* the handler's registers stand as they are */
		/*
		 * Like Linux's exit-to-user loop, set up a frame for every signal
		 * still deliverable under the new mask: the last one runs first.
		 */
		ret = NULL;
		delivered = true;
	}
	if (delivered)
		return;
	if (ret && *ret == -ERESTARTSYS) {	/* ignored or no signal: restart transparently */
		t->regs.rip -= 2;
		*ret = (long)t->regs.orig_rax;
	}
	if (t->has_saved_mask) {
		t->sigmask = t->saved_mask;
		t->has_saved_mask = false;
	}
}

long signal_return(struct task *t)
{
	struct k_ucontext uc;
	struct pvx_regs *r = &t->regs;

	/* The handler's "ret" popped pretcode: the ucontext is at rsp. */
	if (copy_from_guest(&t->mm, &uc, r->rsp, sizeof(uc))) {
		t->exiting = true;
		t->exit_status = SIGSEGV;
		return 0;
	}
	const struct k_sigcontext *c = &uc.mc;
	r->r8 = c->r8, r->r9 = c->r9, r->r10 = c->r10, r->r11 = c->r11;
	r->r12 = c->r12, r->r13 = c->r13, r->r14 = c->r14, r->r15 = c->r15;
	r->rdi = c->rdi, r->rsi = c->rsi, r->rbp = c->rbp, r->rbx = c->rbx;
	r->rdx = c->rdx, r->rcx = c->rcx, r->rsp = c->rsp, r->rip = c->rip;
	/* Only the flags user code may change (FIX_EFLAGS). */
	r->eflags = (r->eflags & ~0x40dd5UL) | (c->eflags & 0x40dd5UL);
	r->orig_rax = (uint64_t)-1;
	t->sigmask = uc.sigmask & ~UNBLOCKABLE;
	return (long)c->rax;
}

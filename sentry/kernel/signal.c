// SPDX-License-Identifier: GPL-2.0
/*
 * Guest signals: sending (the queues themselves are sigqueue.c's), default
 * actions and handler delivery with an x86-64 rt_sigframe on the guest
 * stack, as arch/x86/kernel/signal_64.c lays it out (the restorer address,
 * a ucontext, a siginfo), and rt_sigreturn, which reads it back.
 *
 * Signals are delivered when the task returns to guest code after a trap:
 * at a syscall boundary, or right after a fault. A task sleeping in the
 * sentry (wait4, sigsuspend, a pipe read) is woken and its call returns
 * -ERESTARTSYS, which becomes EINTR or a restart as SA_RESTART says. The
 * guest's FPU/SSE/AVX state goes into the frame (below it, 64-byte
 * aligned, in the XSAVE signal-frame format) and rt_sigreturn loads it
 * back, so a handler that interrupts floating-point code does not clobber it.
 */
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>

#include "pvx/file.h"
#include "pvx/kernel.h"
#include "pvx/log.h"
#include "pvx/mm.h"
#include "pvx/ptrace.h"
#include "pvx/sigframe.h"
#include "pvx/sigqueue.h"
#include "pvx/signalfd.h"
#include "pvx/task.h"
#include "pvx/timer.h"
#include "sentry/platform/platform.h"

#define SA_RESTORER_ 0x04000000UL
#define BIT(sig) (1UL << ((sig) - 1))
#define UNBLOCKABLE (BIT(SIGKILL) | BIT(SIGSTOP))

/* sig_ignored(): a signal whose action is to be ignored is dropped when sent. */
static bool ignored(const struct process *p, uint64_t mask, int sig)
{
	uint64_t h = p->sigactions[sig - 1].handler;

	if (sig == SIGKILL || (mask & BIT(sig)))
		return false;
	/*
	 * The sandbox's init, as a pid namespace's (SIGNAL_UNKILLABLE), does
	 * not stop by default action: a guest's kill(1, SIGSTOP) would freeze
	 * the whole sandbox with nobody inside left to continue it.
	 */
	if (p->pid == 1 && h == (uint64_t)SIG_DFL && sig_default_stop(sig))
		return true;
	return h == (uint64_t)SIG_IGN || (h == (uint64_t)SIG_DFL && sig_default_ignore(sig));
}

static const struct sig_info kill_info = { SI_USER, 0, 0, 0 };

/* The target's RLIMIT_SIGPENDING (task_rlimit(t, RLIMIT_SIGPENDING)). */
static uint64_t sigpending_limit(const struct process *p)
{
	return p->rlim[RLIMIT_SIGPENDING].rlim_cur;
}

long signal_queue(struct task *target, int sig, const struct sig_info *info)
{
	long r;

	if (sig < 1 || sig > 64 || target->state == TASK_ZOMBIE)
		return 0;
	jobctl_prepare(target->proc, sig);
	/* sig_ignored(): a tracer sees even ignored signals */
	if (!target->tracer && ignored(target->proc, target->sigmask | target->real_blocked, sig))
		return 0;
	if (sig == SIGKILL) {
		process_kill(target->proc);
		return 0;
	}
	if ((r = sigq_add(&target->pending, sig, info ? info : &kill_info, sigpending_limit(target->proc))))
		return r;
	signalfd_sync(target->proc);
	if (!(target->sigmask & BIT(sig))) {
		sentry_wake_all();
		task_interrupt(target, false);
	}
	return 0;
}

/*
 * A signal for the process: pending for all its threads; the first one
 * that does not block it takes it (complete_signal(): the main thread if it
 * can, else any other).
 */
long signal_queue_process(struct process *p, int sig, const struct sig_info *info)
{
	struct task *leader = p->leader;
	long r;

	if (sig < 1 || sig > 64 || leader->state == TASK_ZOMBIE)
		return 0;
	jobctl_prepare(p, sig);
	if (!leader->tracer && ignored(p, leader->sigmask | leader->real_blocked, sig))
		return 0;
	if (sig == SIGKILL) {
		process_kill(p);
		return 0;
	}
	if ((r = sigq_add(&p->pending, sig, info ? info : &kill_info, sigpending_limit(p))))
		return r;
	signalfd_sync(p);
	struct task *to = NULL;
	if (!leader->exiting && !(leader->sigmask & BIT(sig)))
		to = leader;
	for (struct task *o = task_next(NULL); o && !to; o = task_next(o))
		if (o->proc == p && o->state == TASK_LIVE && !o->exiting && !(o->sigmask & BIT(sig)))
			to = o;
	if (to) {
		sentry_wake_all();
		task_interrupt(to, false);
	}
	return 0;
}

/*
 * send_sigio(): the file's F_SETSIG signal to its F_SETOWN owner, a thread
 * (F_OWNER_TID), a process or every process of a group. Signal 0 is SIGIO
 * "without extra information" (SEND_SIG_PRIV: si_code SI_KERNEL); another
 * carries si_fd and si_band, so a handler knows which file it is about.
 */
void signal_sigio(struct file *f, int fd, int code, long band)
{
	struct sig_info info = { .code = 0x80 /* SI_KERNEL */ };
	int sig = f->signum ? f->signum : SIGIO;

	if (f->owner_id <= 0)
		return;
	if (f->signum) {
		info = (struct sig_info){ .code = code, .raw = true };
		info.fields[0] = (uint64_t)band;
		info.fields[1] = (uint32_t)fd;	/* si_fd, after si_band */
	}
	if (f->owner_type == F_OWNER_TID) {
		struct task *to = task_find(f->owner_id);
		if (to && to->proc)
			(void)signal_queue(to, sig, &info);
		return;
	}
	for (struct task *p = task_next(NULL); p; p = task_next(p)) {
		if (!p->proc || p->proc->leader != p || p->state == TASK_ZOMBIE)
			continue;
		if (f->owner_type == F_OWNER_PGRP ? p->proc->pgid == f->owner_id : p->proc->pid == f->owner_id)
			(void)signal_queue_process(p->proc, sig, &info);
	}
}

/*
 * sigaction(2) changed sig's action: one that now ignores it discards the
 * pending instances in every queue of the process (do_sigaction's
 * sig_handler_ignored, flush_sigqueue_mask).
 */
void signal_action_changed(struct process *p, int sig)
{
	uint64_t h = p->sigactions[sig - 1].handler;

	if (h != (uint64_t)SIG_IGN && (h != (uint64_t)SIG_DFL || !sig_default_ignore(sig)))
		return;
	sigq_flush(&p->pending, BIT(sig));
	for (struct task *o = task_next(NULL); o; o = task_next(o))
		if (o->proc == p)
			sigq_flush(&o->pending, BIT(sig));
	signalfd_sync(p);
}

void signal_temp_mask(struct task *t, uint64_t mask)
{
	t->saved_mask = t->sigmask;
	t->has_saved_mask = true;
	t->sigmask = mask & ~UNBLOCKABLE;
}

bool signal_pending(struct task *t)
{
	return t->exiting || ((t->pending.set | t->proc->pending.set) & ~t->sigmask);
}

void signal_siginfo(int sig, const struct sig_info *si, struct k_siginfo *out)
{
	memset(out, 0, sizeof(*out));
	out->signo = sig;
	out->code = si->code;
	if (si->raw) {	/* the guest's own, back as it came (copy_siginfo_to_user) */
		out->errno_ = si->errno_;
		memcpy(out->pad2, si->fields, sizeof(si->fields));
	} else if (sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE || sig == SIGTRAP) {
		out->addr = si->addr;
	} else if (si->code == SI_TIMER) {
		/* POSIX timer: si_timerid, si_overrun, si_value (the _timer member) */
		out->kill.pid = si->pid;
		out->kill.uid = (uint32_t)si->status;
		memcpy(out->pad2 + 8, &si->addr, sizeof(si->addr));
	} else {
		out->kill.pid = si->pid, out->kill.uid = sandbox.uid, out->kill.status = si->status;
	}
}

/*
 * Take the oldest instance of sig, thread-directed first as
 * dequeue_signal() does, and tell who cares (timers, signalfds).
 */
static void take(struct task *t, int sig, struct sig_info *info)
{
	sigq_take((t->pending.set & BIT(sig)) ? &t->pending : &t->proc->pending, sig, info);
	ptimer_delivered(t->proc, info);
	signalfd_sync(t->proc);
}

/*
 * Take a pending signal of set without running its action (dequeue_signal
 * for sigtimedwait and signalfd): thread-directed first, then the
 * process's, lowest number first. Returns 0 when none is pending.
 */
int signal_dequeue(struct task *t, uint64_t set, struct sig_info *info)
{
	uint64_t mine = t->pending.set & set, shared = t->proc->pending.set & set;
	int sig = mine ? __builtin_ctzll(mine) + 1 : shared ? __builtin_ctzll(shared) + 1 : 0;

	if (sig)
		take(t, sig, info);
	return sig;
}

struct rt_sigframe {
	uint64_t pretcode;
	struct k_ucontext uc;
	struct k_siginfo info;
};
_Static_assert(offsetof(struct rt_sigframe, info) == 8 + 304, "rt_sigframe ABI");

#define UC_FP_XSTATE 0x1
#define UC_SIGCONTEXT_SS 0x2
#define UC_STRICT_RESTORE_SS 0x4

static bool on_altstack(const struct task *t, uint64_t sp)
{
	return t->altstack_size && sp > t->altstack_sp && sp - t->altstack_sp <= t->altstack_size;
}

/* Build the frame for sig and point the registers at the handler (setup_rt_frame). */
static long push_frame(struct task *t, int sig, const struct sig_info *si, const struct sigaction_rec *sa,
		       uint64_t old_mask)
{
	struct pvx_regs *r = &t->regs;
	const struct platform_ops *ops = t->proc->as->ops;
	/*
	 * FPU images are on the stack, not in TLS: a thread's TLS is zeroed
	 * when it is made, and 4 buffers of K_FPSTATE_MAX there cost every
	 * sentry thread (one per guest task) 16 page faults at its birth.
	 */
	char fpbuf[K_FPSTATE_MAX] __attribute__((aligned(64)));
	struct rt_sigframe f;
	uint64_t sp = r->rsp - 128;	/* the red zone */
	uint64_t fpstate = 0;
	long fplen = ops->fpu_get ? ops->fpu_get(t->ctx, fpbuf, sizeof(fpbuf)) : 0;

	if ((sa->flags & SA_ONSTACK) && t->altstack_size && !(t->altstack_flags & SS_DISABLE) &&
	    !on_altstack(t, r->rsp))
		sp = t->altstack_sp + t->altstack_size;
	if (fplen > 0) {	/* get_sigframe(): the FPU image first, 64-byte aligned */
		sp = (sp - (uint64_t)fplen) & ~63UL;
		fpstate = sp;
		if (copy_to_guest(t->mm, fpstate, fpbuf, (size_t)fplen))
			return -EFAULT;
	}
	sp = ((sp - sizeof(f)) & ~15UL) - 8;	/* rsp+8 16-aligned at handler entry, as after a call */

	memset(&f, 0, sizeof(f));
	f.pretcode = sa->restorer;
	f.uc.flags = UC_SIGCONTEXT_SS | UC_STRICT_RESTORE_SS | (fplen > K_FXSAVE_SIZE ? UC_FP_XSTATE : 0);
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
	c->fpstate = fpstate;
	f.uc.sigmask = old_mask;
	signal_siginfo(sig, si, &f.info);
	if (copy_to_guest(t->mm, sp, &f, sizeof(f)))
		return -EFAULT;

	/* fpu__clear_user_states(): the handler starts from the init FPU state. */
	if (fplen > 0) {
		size_t keep = fplen > K_FXSAVE_SIZE ? (size_t)fplen : 0;
		char sw[sizeof(struct k_fpx_sw_bytes)], magic2[4];
		memcpy(sw, fpbuf + K_FPX_SW_BYTES_OFFSET, sizeof(sw));
		if (keep)
			memcpy(magic2, fpbuf + keep - 4, 4);
		memset(fpbuf, 0, (size_t)fplen);	/* XSTATE_BV 0: every component in its init state */
		uint16_t fcw = 0x37f;
		uint32_t mxcsr = 0x1f80;
		memcpy(fpbuf + 0, &fcw, sizeof(fcw));
		memcpy(fpbuf + 24, &mxcsr, sizeof(mxcsr));
		memcpy(fpbuf + K_FPX_SW_BYTES_OFFSET, sw, sizeof(sw));
		if (keep)
			memcpy(fpbuf + keep - 4, magic2, 4);
		if (ops->fpu_set(t->ctx, fpbuf, (size_t)fplen) < 0)
			pr_debug("could not reset the FPU state for a handler");
	}
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
	uint64_t ready = (t->pending.set | t->proc->pending.set) & ~t->sigmask;
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

	for (;;) {
		if (t->exiting)
			break;
		if (t->stop_pending) {	/* a group stop another thread began (sentry/kernel/jobctl.c) */
			jobctl_stop_wait(t);
			continue;
		}
		if (t->ptrace_trap_pending) {	/* PTRACE_INTERRUPT (sentry/kernel/ptrace.c) */
			ptrace_check_interrupt(t);
			continue;
		}
		if (!(sig = next_signal(t)))
			break;
		struct sig_info si;
		take(t, sig, &si);
		if (t->tracer && sig != SIGKILL) {	/* the signal-delivery stop: the tracer decides */
			if (ret)
				t->regs.rax = (uint64_t)*ret;
			sig = ptrace_signal(t, sig, &si);
			if (ret)
				*ret = (long)t->regs.rax;
			if (!sig)
				continue;
		}
		struct sigaction_rec *sa = &t->proc->sigactions[sig - 1];
		if (sa->handler == (uint64_t)SIG_IGN || (sa->handler == (uint64_t)SIG_DFL && sig_default_ignore(sig)))
			continue;
		if (sa->handler == (uint64_t)SIG_DFL && sig_default_stop(sig)) {
			if (t->proc->pid != 1)	/* init does not stop: see ignored() */
				jobctl_stop_signal(t, sig);	/* the group stops here until SIGCONT */
			continue;
		}
		if (sa->handler == (uint64_t)SIG_DFL || sig == SIGKILL) {
			signal_fatal(t, sig);	/* a fatal signal kills the whole process, dumping core if its action says */
			return;
		}
		/* A syscall cut short by a signal: restart it only with SA_RESTART (signal(7)). */
		if (ret && (*ret == -ERESTART_RESTARTBLOCK || *ret == -ERESTARTNOHAND))
			*ret = -EINTR;	/* a sleep: EINTR after a handler, SA_RESTART or not */
		if (ret && (*ret == -ERESTARTSYS || *ret == -ERESTARTNOINTR)) {
			if ((sa->flags & SA_RESTART) || *ret == -ERESTARTNOINTR) {
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
		if (!(sa->flags & SA_RESTORER_) || push_frame(t, sig, &si, sa, old_mask) < 0) {
			/* force_sigsegv(): a frame that cannot be built kills the process. */
			signal_fatal(t, SIGSEGV);
			return;
		}
		t->sigmask |= sa->mask | ((sa->flags & SA_NODEFER) ? 0 : BIT(sig));
		t->sigmask &= ~UNBLOCKABLE;
		if (sa->flags & SA_RESETHAND)
			sa->handler = (uint64_t)SIG_DFL;	/* only the handler: flags, mask and restorer stay, as in Linux */
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
	if (ret && (*ret == -ERESTARTSYS || *ret == -ERESTARTNOINTR || *ret == -ERESTARTNOHAND)) {	/* no handler: restart */
		t->regs.rip -= 2;
		*ret = (long)t->regs.orig_rax;
	} else if (ret && *ret == -ERESTART_RESTARTBLOCK) {	/* the sleep goes on through restart_syscall */
		t->regs.rip -= 2;
		*ret = SYS_restart_syscall;
	}
	if (t->has_saved_mask) {
		t->sigmask = t->saved_mask;
		t->has_saved_mask = false;
	}
}

/*
 * rt_sigreturn's FPU part (fpu__restore_sig): load the image the frame
 * points at. A bare FXSAVE image (no xstate magic) replaces the legacy
 * part only. Returns false for an unreadable or unloadable image.
 */
static bool restore_fpstate(struct task *t, uint64_t fpstate)
{
	const struct platform_ops *ops = t->proc->as->ops;
	char buf[K_FPSTATE_MAX] __attribute__((aligned(64)));	/* on the stack, not TLS: see push_frame */
	size_t n;

	if (!fpstate || !ops->fpu_set)
		return true;
	if (copy_from_guest(t->mm, buf, fpstate, K_FXSAVE_SIZE))
		return false;
	const struct k_fpx_sw_bytes *sw = (const void *)(buf + K_FPX_SW_BYTES_OFFSET);
	n = K_FXSAVE_SIZE;
	if (sw->magic1 == K_FP_XSTATE_MAGIC1 && sw->extended_size <= sizeof(buf) && sw->extended_size > n &&
	    !copy_from_guest(t->mm, buf + n, fpstate + n, sw->extended_size - n))
		n = k_fpstate_size(buf, sw->extended_size);
	if (n == K_FXSAVE_SIZE) {
		char cur[K_FPSTATE_MAX] __attribute__((aligned(64)));
		long m = ops->fpu_get(t->ctx, cur, sizeof(cur));
		if (m > K_FXSAVE_SIZE) {
			memcpy(cur, buf, K_FPX_SW_BYTES_OFFSET);	/* keep its software bytes */
			return ops->fpu_set(t->ctx, cur, (size_t)m) == 0;
		}
	}
	return ops->fpu_set(t->ctx, buf, n) == 0;
}

long signal_return(struct task *t)
{
	struct k_ucontext uc;
	struct pvx_regs *r = &t->regs;

	/* The handler's "ret" popped pretcode: the ucontext is at rsp. */
	if (copy_from_guest(t->mm, &uc, r->rsp, sizeof(uc))) {
		signal_fatal(t, SIGSEGV);
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
	t->restart.fn = NULL;	/* "make any pending restarted system calls return -EINTR" */
	t->sigmask = uc.sigmask & ~UNBLOCKABLE;
	if (!restore_fpstate(t, c->fpstate)) {
		signal_fatal(t, SIGSEGV);	/* "badframe": force_sig(SIGSEGV) */
		return 0;
	}
	return (long)c->rax;
}

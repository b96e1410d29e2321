// SPDX-License-Identifier: GPL-2.0
/*
 * Signal syscalls: dispositions, masks, sending, waiting, sigreturn and the
 * alternate stack. Delivery itself is in sentry/kernel/signal.c.
 */
#include <signal.h>
#include <time.h>
#include <string.h>

#include "pvx/kernel.h"
#include "pvx/signalfd.h"
#include "pvx/sigframe.h"
#include "pvx/sigqueue.h"
#include "pvx/log.h"
#include "syscalls/syscalls.h"

#define BIT(sig) (1UL << ((sig) - 1))
#define UNBLOCKABLE (BIT(SIGKILL) | BIT(SIGSTOP))

/* rt_sigaction(2): the x86-64 kernel struct: handler, flags, restorer, mask. */
long sys_rt_sigaction(struct task *t, const long a[6])
{
	int sig = (int)a[0];
	struct sigaction_rec act;
	long r;

	if (a[3] != GUEST_SIGSET_SIZE || sig < 1 || sig > 64)
		return -EINVAL;
	if (a[1] && (sig == SIGKILL || sig == SIGSTOP))
		return -EINVAL;
	if (a[1] && (r = copy_from_guest(t->mm, &act, (uint64_t)a[1], sizeof(act))))
		return r;
	struct sigaction_rec old = t->proc->sigactions[sig - 1];
	if (a[1]) {
		act.mask &= ~UNBLOCKABLE;
		t->proc->sigactions[sig - 1] = act;
		/* "Setting a signal's disposition to SIG_IGN discards a pending signal." */
		signal_action_changed(t->proc, sig);
	}
	/* As Linux: the old action is copied out last, an EFAULT after the new one took (kernel/signal.c). */
	return a[2] ? copy_to_guest_ret(t->mm, (uint64_t)a[2], &old, sizeof(old), 0) : 0;
}

long sys_rt_sigprocmask(struct task *t, const long a[6])
{
	uint64_t set;
	long r;

	if (a[3] != GUEST_SIGSET_SIZE)
		return -EINVAL;
	if (a[1]) {
		if ((r = copy_from_guest(t->mm, &set, (uint64_t)a[1], sizeof(set))))
			return r;
		if (a[0] != SIG_BLOCK && a[0] != SIG_UNBLOCK && a[0] != SIG_SETMASK)
			return -EINVAL;
	}
	uint64_t old = t->sigmask;
	if (a[1]) {
		if (a[0] == SIG_BLOCK)
			t->sigmask |= set;
		else if (a[0] == SIG_UNBLOCK)
			t->sigmask &= ~set;
		else
			t->sigmask = set;
		t->sigmask &= ~UNBLOCKABLE;	/* newly unblocked pending signals go at syscall exit */
	}
	/* As Linux: the old mask is copied out last, an EFAULT after the new one took (kernel/signal.c). */
	return a[2] ? copy_to_guest_ret(t->mm, (uint64_t)a[2], &old, sizeof(old), 0) : 0;
}

long sys_rt_sigpending(struct task *t, const long a[6])
{
	uint64_t set = (t->pending.set | t->proc->pending.set) & t->sigmask;

	if ((unsigned long)a[1] > GUEST_SIGSET_SIZE)
		return -EINVAL;
	return copy_to_guest(t->mm, (uint64_t)a[0], &set, (size_t)a[1]);
}

long sys_rt_sigreturn(struct task *t, const long a[6] __unused)
{
	return signal_return(t);
}

/* rt_sigsuspend(2): "always returns -1, with errno set to EINTR". */
long sys_rt_sigsuspend(struct task *t, const long a[6])
{
	uint64_t mask;
	long r;

	if (a[1] != GUEST_SIGSET_SIZE)
		return -EINVAL;
	if ((r = copy_from_guest(t->mm, &mask, (uint64_t)a[0], sizeof(mask))))
		return r;
	signal_temp_mask(t, mask);
	while (!signal_pending(t))
		sentry_wait();
	return -EINTR;
}

/*
 * rt_sigtimedwait(2): take a pending signal of the set, or wait for one with
 * the set unblocked (do_sigtimedwait), so that a process-directed one picks
 * this thread and one whose default is to be ignored is kept. Another
 * signal that may be delivered ends the wait with EINTR; the timeout with
 * EAGAIN.
 */
long sys_rt_sigtimedwait(struct task *t, const long a[6])
{
	uint64_t set;
	struct timespec ts;
	struct sig_info info;
	uint64_t deadline = 0;
	long r;

	if (a[3] != GUEST_SIGSET_SIZE)
		return -EINVAL;
	if ((r = copy_from_guest(t->mm, &set, (uint64_t)a[0], sizeof(set))))
		return r;
	set &= ~UNBLOCKABLE;
	if (a[2]) {
		if ((r = copy_from_guest(t->mm, &ts, (uint64_t)a[2], sizeof(ts))))
			return r;
		if (ts.tv_sec < 0 || ts.tv_nsec < 0 || ts.tv_nsec >= 1000000000L)
			return -EINVAL;
		struct timespec now;
		clock_gettime(CLOCK_MONOTONIC, &now);
		deadline = (uint64_t)(now.tv_sec + ts.tv_sec) * 1000000000ULL + (uint64_t)(now.tv_nsec + ts.tv_nsec);
	}
	uint64_t real = t->sigmask;
	int sig;
	for (;;) {
		if ((sig = signal_dequeue(t, set, &info)))
			break;
		t->sigmask = real;
		if (signal_pending(t))
			return -EINTR;
		struct timespec now;
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (a[2] && (uint64_t)now.tv_sec * 1000000000ULL + (uint64_t)now.tv_nsec >= deadline)
			return -EAGAIN;
		t->real_blocked = real;
		t->sigmask = real & ~set;
		sentry_timedwait(deadline);
		t->sigmask = real;
		t->real_blocked = 0;
	}
	t->sigmask = real;
	t->real_blocked = 0;
	if (a[1]) {
		struct k_siginfo ki;
		signal_siginfo(sig, &info, &ki);
		if (copy_to_guest(t->mm, (uint64_t)a[1], &ki, sizeof(ki)))
			return -EFAULT;
	}
	return sig;
}

long sys_pause(struct task *t, const long a[6] __unused)
{
	while (!signal_pending(t))
		sentry_wait();
	return -EINTR;
}

/* sigaltstack(2) with the x86-64 stack_t: ss_sp, ss_flags, ss_size. */
long sys_sigaltstack(struct task *t, const long a[6])
{
	struct { uint64_t sp; int32_t flags, pad; uint64_t size; } ss, old = {
		t->altstack_sp, t->altstack_size ? 0 : SS_DISABLE, 0, t->altstack_size };
	long r;

	if (a[1]) {
		bool on = t->altstack_size && t->regs.rsp > t->altstack_sp &&
			  t->regs.rsp - t->altstack_sp <= t->altstack_size;
		old.flags = on ? SS_ONSTACK : old.flags;
		if ((r = copy_to_guest(t->mm, (uint64_t)a[1], &old, sizeof(old))))
			return r;
	}
	if (!a[0])
		return 0;
	if ((r = copy_from_guest(t->mm, &ss, (uint64_t)a[0], sizeof(ss))))
		return r;
	if (ss.flags & ~(SS_DISABLE | (1U << 31) /* SS_AUTODISARM */))
		return -EINVAL;
	if (ss.flags & SS_DISABLE) {
		t->altstack_sp = t->altstack_size = 0;
		return 0;
	}
	if (ss.size < 2048)	/* the kernel's MINSIGSTKSZ, not a libc's sysconf-based one */
		return -ENOMEM;
	t->altstack_sp = ss.sp;
	t->altstack_size = ss.size;
	t->altstack_flags = 0;
	return 0;
}

/*
 * Send sig with info to target's process (kill) or to the thread itself
 * (tkill): what its queue says (EAGAIN over RLIMIT_SIGPENDING). Signal 0
 * only checks that the target exists.
 */
static long send_info(struct task *target, int sig, bool thread, const struct sig_info *info)
{
	if (sig < 0 || sig > 64)
		return -EINVAL;
	if (sig && thread && target->state == TASK_LIVE && !target->exiting)
		return signal_queue(target, sig, info);
	if (sig && !thread && target->proc->leader->state != TASK_ZOMBIE)
		return signal_queue_process(target->proc, sig, info);
	return 0;
}

/* kill(2) sends to the process, tkill/tgkill to the thread. */
static long send(struct task *t, struct task *target, int sig, bool thread)
{
	struct sig_info info = { thread ? SI_TKILL : SI_USER, t->pid, 0, 0 };

	return send_info(target, sig, thread, &info);
}

/* kill(2): pid > 0 one process, 0 our group, -1 everyone but init, < -1 group -pid. */
long sys_kill(struct task *t, const long a[6])
{
	int pid = (int)a[0], sig = (int)a[1], found = 0;

	if (sig < 0 || sig > 64)
		return -EINVAL;
	if (pid > 0) {
		struct task *p = task_find(pid);
		return p && p->proc ? send(t, p, sig, false) : -ESRCH;
	}
	int pgid = pid == 0 ? t->proc->pgid : -pid;
	for (struct task *p = task_next(NULL); p; p = task_next(p)) {
		if (!p->proc || p->proc->leader != p || p->state == TASK_ZOMBIE ||
		    (pid == -1 ? p->pid == 1 || p->proc == t->proc : p->proc->pgid != pgid))
			continue;
		found++;
		(void)send(t, p, sig, false);
	}
	return found ? 0 : -ESRCH;
}

long sys_tkill(struct task *t, const long a[6])
{
	if ((int)a[0] <= 0)
		return -EINVAL;
	struct task *p = task_find((int)a[0]);
	return p && p->proc ? send(t, p, (int)a[1], true) : -ESRCH;
}

long sys_tgkill(struct task *t, const long a[6])
{
	if ((int)a[0] <= 0 || (int)a[1] <= 0)
		return -EINVAL;
	struct task *p = task_find((int)a[1]);
	return p && p->proc && p->pid == (int)a[0] ? send(t, p, (int)a[2], true) : -ESRCH;
}

/*
 * The guest's siginfo for rt_sigqueueinfo (__copy_siginfo_from_user): the
 * kernel_siginfo part (48 bytes: EFAULT if unreadable), kept raw to be
 * handed back as it came; si_signo is the call's. With a layout the kernel
 * does not know, the rest of the 128 bytes must be zero (E2BIG).
 */
long copy_guest_siginfo(struct task *t, int sig, uint64_t uinfo, struct sig_info *info)
{
	struct k_siginfo k;
	const size_t kernel_size = offsetof(struct k_siginfo, pad2) + sizeof(info->fields);
	long r;

	memset(&k, 0, sizeof(k));
	if ((r = copy_from_guest(t->mm, &k, uinfo, kernel_size)))
		return r;
	if (!siginfo_known_layout(sig, k.code)) {
		if ((r = copy_from_guest(t->mm, (char *)&k + kernel_size, uinfo + kernel_size, sizeof(k) - kernel_size)))
			return r;
		for (size_t i = kernel_size; i < sizeof(k); i++)
			if (((const char *)&k)[i])
				return -E2BIG;
	}
	*info = (struct sig_info){ .code = k.code, .raw = true, .errno_ = k.errno_ };
	memcpy(info->fields, k.pad2, sizeof(info->fields));
	return 0;
}

/*
 * "Not even root can pretend to send signals from the kernel. Nor can they
 * impersonate a kill()/tgkill()": a code >= 0 or SI_TKILL only to oneself
 * (the calling thread's id).
 */
static bool forged(const struct task *t, const struct sig_info *info, int to)
{
	return (info->code >= 0 || info->code == SI_TKILL) && to != t->tid;
}

/* rt_sigqueueinfo(2): sig with the caller's siginfo to the process of thread pid (kill_proc_info). */
long sys_rt_sigqueueinfo(struct task *t, const long a[6])
{
	int pid = (int)a[0], sig = (int)a[1];
	struct sig_info info;
	long r;

	if ((r = copy_guest_siginfo(t, sig, (uint64_t)a[2], &info)))
		return r;
	if (forged(t, &info, pid))
		return -EPERM;
	struct task *p = task_find(pid);
	return p && p->proc ? send_info(p, sig, false, &info) : -ESRCH;
}

/* rt_tgsigqueueinfo(2): the same to thread tid of thread group tgid (do_send_specific). */
long sys_rt_tgsigqueueinfo(struct task *t, const long a[6])
{
	int tgid = (int)a[0], tid = (int)a[1], sig = (int)a[2];
	struct sig_info info;
	long r;

	if ((r = copy_guest_siginfo(t, sig, (uint64_t)a[3], &info)))
		return r;
	if (tid <= 0 || tgid <= 0)
		return -EINVAL;
	if (forged(t, &info, tid))
		return -EPERM;
	struct task *p = task_find(tid);
	return p && p->proc && p->pid == tgid ? send_info(p, sig, true, &info) : -ESRCH;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * Signals sent by the guest to itself (raise, abort). Handlers are not
 * delivered yet (the signals issue), so a signal takes its default action
 * or is ignored; one the guest installed a handler for gets ENOSYS rather
 * than a silent success.
 */
#include <signal.h>

#include "pvx/log.h"
#include "syscalls/syscalls.h"

/* Default action "stop" or "ignore": nothing happens without job control. */
static bool default_harmless(int sig)
{
	return sig == SIGCHLD || sig == SIGCONT || sig == SIGURG || sig == SIGWINCH || sig == SIGSTOP ||
	       sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
}

/* Take the action for sig now: ignore, or terminate (a handler cannot run yet). */
static long signal_act(struct task *t, int sig)
{
	uint64_t handler = t->sigactions[sig - 1].handler;

	if (sig != SIGKILL && (handler == (uint64_t)SIG_IGN ||
			       (handler == (uint64_t)SIG_DFL && default_harmless(sig))))
		return 0;
	if (sig != SIGKILL && handler != (uint64_t)SIG_DFL) {
		pr_warn("signal %d has a guest handler: delivery is not supported yet", sig);
		return -ENOSYS;
	}
	t->exiting = true;
	t->exit_status = sig;
	return 0;
}

/* A blocked signal stays pending until rt_sigprocmask unblocks it. */
static long signal_self(struct task *t, int sig)
{
	if (sig < 0 || sig > 64)
		return -EINVAL;
	if (sig == 0)
		return 0;
	if (sig != SIGKILL && sig != SIGSTOP && (t->sigmask & (1UL << (sig - 1)))) {
		t->sigpending |= 1UL << (sig - 1);
		return 0;
	}
	return signal_act(t, sig);
}

void signal_unblocked(struct task *t)
{
	uint64_t ready = t->sigpending & ~t->sigmask;

	for (int sig = 1; ready && sig <= 64 && !t->exiting; sig++) {
		if (!(ready & (1UL << (sig - 1))))
			continue;
		t->sigpending &= ~(1UL << (sig - 1));
		ready &= ~(1UL << (sig - 1));
		(void)signal_act(t, sig);
	}
}

long sys_kill(struct task *t, const long a[6])
{
	if (a[0] != t->pid && a[0] != 0 && a[0] != -1 && a[0] != -t->pid)
		return -ESRCH;
	return signal_self(t, (int)a[1]);
}

long sys_tkill(struct task *t, const long a[6])
{
	if (a[0] <= 0)
		return -EINVAL;
	return a[0] == t->tid ? signal_self(t, (int)a[1]) : -ESRCH;
}

long sys_tgkill(struct task *t, const long a[6])
{
	if (a[0] <= 0 || a[1] <= 0)
		return -EINVAL;
	return a[0] == t->pid && a[1] == t->tid ? signal_self(t, (int)a[2]) : -ESRCH;
}

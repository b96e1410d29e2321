/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Queues of pending signals (sentry/kernel/sigqueue.c): every sender and
 * every dequeuer of signals goes through these, for a thread's queue and a
 * process's shared one alike. Standard signals coalesce, real-time ones
 * queue an instance each, up to RLIMIT_SIGPENDING for the sandbox's one
 * uid and never beyond PVX_SIGQ_MAX.
 */
#ifndef PVX_SIGQUEUE_H
#define PVX_SIGQUEUE_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include "pvx/common.h"
#include "pvx/task.h"

#define K_SIGRTMIN 32	/* the kernel's; libc's SIGRTMIN keeps some for itself */
#define PVX_SIGQ_MAX 65536	/* queued records the sentry keeps at most, whatever the limit says */

/*
 * Queue sig with info on q; limit is the target's RLIMIT_SIGPENDING.
 * 0, or -EAGAIN for a real-time signal over the limit sent other than by
 * kill(2) (__send_signal_locked).
 */
long sigq_add(struct sigpend *q, int sig, const struct sig_info *info, uint64_t limit) __must_check;
/* Take sig's oldest instance from q (it must be in q->set) with its siginfo (collect_signal). */
void sigq_take(struct sigpend *q, int sig, struct sig_info *info);
/* Drop every pending signal of mask from q (flush_sigqueue_mask). */
void sigq_flush(struct sigpend *q, uint64_t mask);
/* The queued record of POSIX timer id for sig, NULL if none (it counts overruns). */
struct sig_info *sigq_find_timer(struct sigpend *q, int sig, int id);
/* Instances queued in the sandbox that count against RLIMIT_SIGPENDING (SigQ). */
unsigned long sigq_queued(void);

/* signal(7): signals whose default action is to be ignored (sig_kernel_ignore) or to stop (sig_kernel_stop). */
static inline bool sig_default_ignore(int sig)
{
	return sig == SIGCHLD || sig == SIGCONT || sig == SIGURG || sig == SIGWINCH;
}

static inline bool sig_default_stop(int sig)
{
	return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
}

/* Which fields of a siginfo's union a (signal, si_code) uses (siginfo_layout in kernel/signal.c). */
enum sil { SIL_KILL, SIL_TIMER, SIL_POLL, SIL_FAULT, SIL_CHLD, SIL_RT, SIL_SYS };
enum sil siginfo_layout(int sig, int code);
/* Does the kernel know code's layout (known_siginfo_layout)? If not, a guest's siginfo may use all 128 bytes. */
bool siginfo_known_layout(int sig, int code);

#endif

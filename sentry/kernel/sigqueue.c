// SPDX-License-Identifier: GPL-2.0
/*
 * Pending-signal queues, as kernel/signal.c keeps them: a set of pending
 * signals and a list of siginfo records in arrival order. A standard
 * signal (1..31) already pending is not queued again (legacy_queue), so
 * its first siginfo stands; a real-time one (32..64) gets a record per
 * instance and stays pending while one is left, taken oldest first.
 *
 * Records count against RLIMIT_SIGPENDING of the one uid the sandbox has
 * (Linux counts per real uid): standard signals sent by kill or the kernel
 * may go over it (override_rlimit); real-time ones may not, and then
 * sigqueue and tgkill fail with EAGAIN while kill sets the signal pending
 * without its siginfo. A POSIX timer's record is its own (preallocated in
 * Linux), one per timer and queue, and does not count. Whatever the guest
 * sets its limit to, the sentry keeps no more than PVX_SIGQ_MAX counted
 * records, so no guest can make it allocate without bound.
 *
 * Everything here runs under the sentry lock.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>

#include "pvx/sigqueue.h"

#define BIT(sig) (1UL << ((sig) - 1))

struct sigq_rec {
	struct sigq_rec *next;
	int sig;
	bool timer;	/* a POSIX timer's: not counted */
	struct sig_info info;
};

static unsigned long queued;	/* counted records in every queue of the sandbox */

unsigned long sigq_queued(void)
{
	return queued;
}

/* A record of a timer: made by ptimer_fire, never by a guest's siginfo. */
static bool is_timer(const struct sig_info *info)
{
	return !info->raw && info->code == SI_TIMER;
}

long sigq_add(struct sigpend *q, int sig, const struct sig_info *info, uint64_t limit)
{
	bool timer = is_timer(info);
	struct sigq_rec *r = NULL;

	if (sig < K_SIGRTMIN && (q->set & BIT(sig)) && !timer)
		return 0;	/* legacy_queue: one instance of a standard signal */
	bool override = timer || (sig < K_SIGRTMIN && info->code >= 0);
	if (override || (queued < limit && queued < PVX_SIGQ_MAX))
		r = malloc(sizeof(*r));
	if (!r && sig >= K_SIGRTMIN && info->code != SI_USER && (info->raw || info->code != SI_KERNEL))
		return -EAGAIN;	/* "queue overflow, abort": not kill() nor the kernel's own */
	if (r) {
		*r = (struct sigq_rec){ NULL, sig, timer, *info };
		if (q->tail)
			q->tail->next = r;
		else
			q->head = r;
		q->tail = r;
		queued += !timer;
	}
	q->set |= BIT(sig);	/* without a record: "a silent loss of information" */
	return 0;
}

/* Unlink r, whose predecessor is prev (NULL: the head), and free it. */
static void unlink_rec(struct sigpend *q, struct sigq_rec *prev, struct sigq_rec *r)
{
	if (prev)
		prev->next = r->next;
	else
		q->head = r->next;
	if (q->tail == r)
		q->tail = prev;
	queued -= !r->timer;
	free(r);
}

void sigq_take(struct sigpend *q, int sig, struct sig_info *info)
{
	struct sigq_rec *prev = NULL, *first = NULL, *first_prev = NULL;
	bool more = false;

	for (struct sigq_rec *r = q->head; r; prev = r, r = r->next) {
		if (r->sig != sig)
			continue;
		if (first) {
			more = true;
			break;
		}
		first = r, first_prev = prev;
	}
	if (!more)
		q->set &= ~BIT(sig);
	if (!first) {
		/* "It wasn't in the queue": SI_USER from pid 0, uid 0. */
		*info = (struct sig_info){ .code = SI_USER, .raw = true };
		return;
	}
	*info = first->info;
	unlink_rec(q, first_prev, first);
}

void sigq_flush(struct sigpend *q, uint64_t mask)
{
	struct sigq_rec *prev = NULL, *r = q->head;

	while (r) {
		struct sigq_rec *next = r->next;
		if (mask & BIT(r->sig))
			unlink_rec(q, prev, r);
		else
			prev = r;
		r = next;
	}
	q->set &= ~mask;
}

struct sig_info *sigq_find_timer(struct sigpend *q, int sig, int id)
{
	for (struct sigq_rec *r = q->head; r; r = r->next)
		if (r->timer && r->sig == sig && r->info.pid == id)
			return &r->info;
	return NULL;
}

/* si_code values of each signal that has its own (NSIGILL...; NSIGPOLL for the others). */
static int sicode_limit(int sig)
{
	static const unsigned char limit[] = {
		[SIGILL] = 11, [SIGFPE] = 15, [SIGSEGV] = 10, [SIGBUS] = 5, [SIGTRAP] = 6,
		[SIGCHLD] = 6, [SIGPOLL] = 6, [SIGSYS] = 2,
	};

	return sig > 0 && sig < (int)ARRAY_SIZE(limit) && limit[sig] ? limit[sig] : 0;
}

enum sil siginfo_layout(int sig, int code)
{
	if (code > SI_USER && code < SI_KERNEL) {
		if (sicode_limit(sig) && code <= sicode_limit(sig))
			return sig == SIGCHLD ? SIL_CHLD : sig == SIGPOLL ? SIL_POLL : sig == SIGSYS ? SIL_SYS : SIL_FAULT;
		return code <= 6 /* NSIGPOLL */ ? SIL_POLL : SIL_KILL;
	}
	return code == SI_TIMER ? SIL_TIMER : code == SI_SIGIO ? SIL_POLL : code < 0 ? SIL_RT : SIL_KILL;
}

bool siginfo_known_layout(int sig, int code)
{
	if (code == SI_KERNEL)
		return true;
	if (code > SI_USER)
		return code <= (sicode_limit(sig) ? sicode_limit(sig) : 6 /* NSIGPOLL */);
	return code >= SI_DETHREAD || code == SI_ASYNCNL;
}

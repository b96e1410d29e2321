/* SPDX-License-Identifier: GPL-2.0 */
#ifndef PVX_TIMER_H
#define PVX_TIMER_H

#include <stdbool.h>
#include <stdint.h>
#include "pvx/common.h"

struct process;

/* A POSIX timer (timer_create(2)); its id is its index in the process's table. */
struct ptimer {
	bool used;
	int clock;		/* CLOCK_REALTIME, _MONOTONIC, _BOOTTIME, or CPU time: */
	bool cpu;		/* CLOCK_PROCESS_CPUTIME_ID or _THREAD_: deadline in CPU ns of ... */
	int cpu_tid;		/* ... this thread (_THREAD_: the creator), 0: the whole process */
	bool cpu_virt;		/* CPUCLOCK_VIRT: user time only (else user + system) */
	int notify;		/* SIGEV_SIGNAL, SIGEV_NONE or SIGEV_THREAD_ID|SIGEV_SIGNAL */
	int signo;
	int tid;		/* SIGEV_THREAD_ID: the thread to signal */
	uint64_t value;		/* sigev_value, handed back in si_value */
	uint64_t deadline;	/* CLOCK_MONOTONIC ns (CPU ns if cpu), 0: disarmed */
	uint64_t interval;
	int overrun;		/* expirations missed before the last one delivered */
};
#define PVX_MAX_PTIMERS 32

/* sigev_notify values (the kernel's, without glibc's SIGEV_THREAD). */
#define SIGEV_SIGNAL_ 0
#define SIGEV_NONE_ 1
#define SIGEV_THREAD_ID_ 4

uint64_t timer_now_ns(void);
/* The timer thread found t's deadline passed: queue its signal, re-arm it (sentry lock held). */
void ptimer_fire(struct process *p, int id, uint64_t now);
/* The now of pt's clock, in its deadline's units: CLOCK_MONOTONIC ns, or CPU ns (0: its thread is gone). */
uint64_t ptimer_now(struct process *p, const struct ptimer *pt);
/* A POSIX timer's signal (SI_TIMER) was taken by a thread: record its overrun count. */
struct sig_info;
void ptimer_delivered(struct process *p, const struct sig_info *info);
/* p's POSIX timer id, NULL if there is none. */
struct ptimer *ptimer_get(struct process *p, long id);
/* The lowest unused timer id of p; -ENOMEM, or -EAGAIN when all are used. */
long ptimer_free_id(struct process *p) __must_check;
/* Free every POSIX timer of p (execve, exit). */
void ptimers_release(struct process *p);
/* The CPU time ITIMER_VIRTUAL (prof false) or ITIMER_PROF counts for p, in microseconds. */
uint64_t itimer_cpu_us(const struct process *p, bool prof);
/* Whose CPU-time clock a clock id is (cpuclock_parse). */
struct cpuclock {
	struct process *proc;	/* the process ... */
	struct task *thread;	/* ... or this one of its threads (NULL: the whole process) */
	int which;		/* CPUCLOCK_PROF 0 (user + system), _VIRT 1 (user), _SCHED 2 (run time) */
};
/*
 * A CPU-time clock id as t names it: CLOCK_PROCESS_CPUTIME_ID, _THREAD_,
 * or MAKE_PROCESS_CPUCLOCK / MAKE_THREAD_CPUCLOCK (~pid << 3 | thread << 2 |
 * which). 0 and *out; 1 if clk is no CPU clock; -EINVAL as Linux's
 * lookup_task() (a thread of another process; with other_procs false, any
 * other process: pvx keeps no timers on them); -EOPNOTSUPP for an fd clock.
 */
long cpuclock_parse(struct task *t, long clk, bool other_procs, struct cpuclock *out) __must_check;
/* A task's itimer_deadline changed: (re)arm the timer thread (sentry lock held). */
long timer_kick(void) __must_check;

#endif

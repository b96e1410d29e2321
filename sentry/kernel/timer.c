// SPDX-License-Identifier: GPL-2.0
/*
 * ITIMER_REAL (alarm, setitimer, getitimer) and POSIX timers (timer_create)
 * of every process: one sentry thread sleeps until the earliest deadline
 * and queues the signal, which interrupts the task wherever it is (guest
 * code, a blocking call).
 */
#include <signal.h>
#include <time.h>

#include "pvx/kernel.h"
#include "pvx/timer.h"

static pthread_cond_t timer_changed;
static bool started;

uint64_t timer_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void *timer_thread(void *arg __unused)
{
	sentry_lock();
	for (;;) {
		uint64_t now = timer_now_ns(), next = 0;
		for (struct task *t = task_next(NULL); t; t = task_next(t)) {
			if (!t->proc || t->proc->leader != t || t->state == TASK_ZOMBIE)
				continue;	/* timers are per process: look at leaders only */
			if (t->proc->itimer_deadline && t->proc->itimer_deadline <= now) {
				struct sig_info info = { SI_KERNEL, 0, 0, 0 };	/* it_real_fn: SEND_SIG_PRIV */
				t->proc->itimer_deadline = t->proc->itimer_interval ? now + t->proc->itimer_interval : 0;
				signal_queue_process(t->proc, SIGALRM, &info);
			}
			if (t->proc->itimer_deadline && (!next || t->proc->itimer_deadline < next))
				next = t->proc->itimer_deadline;
			for (int i = 0; t->proc->ptimers && i < PVX_MAX_PTIMERS; i++) {
				struct ptimer *pt = &t->proc->ptimers[i];
				if (!pt->used || !pt->deadline)
					continue;
				if (pt->deadline <= now)
					ptimer_fire(t->proc, i, now);
				if (pt->deadline && (!next || pt->deadline < next))
					next = pt->deadline;
			}
		}
		if (!next) {
			pthread_cond_wait(&timer_changed, sentry_mutex());
			continue;
		}
		struct timespec ts = { (time_t)(next / 1000000000ULL), (long)(next % 1000000000ULL) };
		pthread_cond_timedwait(&timer_changed, sentry_mutex(), &ts);
	}
	return NULL;
}

/* Called with the sentry lock held after a task's deadline changed. */
long timer_kick(void)
{
	if (!started) {
		pthread_condattr_t attr;
		pthread_t th;
		pthread_condattr_init(&attr);
		pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
		pthread_cond_init(&timer_changed, &attr);
		pthread_condattr_destroy(&attr);
		if (pthread_create(&th, NULL, timer_thread, NULL))
			return -EAGAIN;
		pthread_detach(th);
		started = true;
	}
	pthread_cond_signal(&timer_changed);
	return 0;
}

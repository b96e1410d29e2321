// SPDX-License-Identifier: GPL-2.0
/*
 * ITIMER_REAL for every task (alarm, setitimer, getitimer): one sentry
 * thread sleeps until the earliest deadline and queues SIGALRM, which
 * interrupts the task wherever it is (guest code, a blocking call).
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
			if (!t->proc || t->proc->leader != t || !t->proc->itimer_deadline || t->state == TASK_ZOMBIE)
				continue;	/* one timer per process: look at leaders only */
			if (t->proc->itimer_deadline <= now) {
				struct sig_info info = { SI_TIMER, 0, 0, 0 };
				t->proc->itimer_deadline = t->proc->itimer_interval ? now + t->proc->itimer_interval : 0;
				signal_queue_process(t->proc, SIGALRM, &info);
			}
			if (t->proc->itimer_deadline && (!next || t->proc->itimer_deadline < next))
				next = t->proc->itimer_deadline;
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

// SPDX-License-Identifier: GPL-2.0
/*
 * getrusage(2) and times(2); what guest code used is counted by the
 * kernel's rusage (sentry/kernel/rusage.c).
 */
#include <sys/syscall.h>

#include "pvx/rusage.h"
#include "syscalls/syscalls.h"

/*
 * getrusage(2): RUSAGE_SELF (every thread, exited ones too), RUSAGE_CHILDREN
 * ("all children of the calling process that have terminated and been
 * waited for") and RUSAGE_THREAD; any other who is EINVAL.
 */
long sys_getrusage(struct task *t, const long a[6])
{
	struct guest_usage u;
	struct rusage ru;

	switch ((int)a[0]) {
	case RUSAGE_SELF:
		usage_of_process(t->proc, &u);
		break;
	case RUSAGE_CHILDREN:
		u = t->proc->usage_children;
		break;
	case RUSAGE_THREAD:
		usage_of_thread(t, &u);
		break;
	default:
		return -EINVAL;
	}
	usage_to_rusage(&u, &ru);
	return copy_to_guest_ret(t->mm, (uint64_t)a[1], &ru, sizeof(ru), 0);
}

/*
 * times(2): the process's and its waited-for children's CPU time in clock
 * ticks; returns "the number of clock ticks that have elapsed since an
 * arbitrary point in the past", the host's. buf may be NULL.
 */
long sys_times(struct task *t, const long a[6])
{
	if (a[0]) {
		struct guest_usage self;
		const struct guest_usage *ch = &t->proc->usage_children;
		usage_of_process(t->proc, &self);
		struct tms tms = { usage_ticks(self.utime_us), usage_ticks(self.stime_us), usage_ticks(ch->utime_us),
				   usage_ticks(ch->stime_us) };
		long r = copy_to_guest(t->mm, (uint64_t)a[0], &tms, sizeof(tms));
		if (r)
			return r;
	}
	return syscall(SYS_times, NULL);
}

// SPDX-License-Identifier: GPL-2.0
/*
 * Address spaces shared by processes: a clone(CLONE_VM|CLONE_VFORK) child
 * (vfork, posix_spawn, Go's os/exec) is a process of its own that runs in
 * its parent's mm -- a stub thread of the parent's stub, as a thread does
 * -- until its execve gives it a new one or it exits (Linux's copy_mm with
 * CLONE_VM: mmget, and mmput at exec_mmap or exit). struct mm counts the
 * processes in it; the last one out releases the stub.
 *
 * A stub dies with the sentry thread that made it (stub_start's parent-death
 * signal, and ptrace's PTRACE_O_EXITKILL for its main thread): that thread
 * stays, once its task is done, until no process runs in the stub any more
 * (mm_linger); so does the thread that made a stub whose fork by the host
 * (platform as_fork) still runs, as the forked stub is that thread's child too.
 */
#include <signal.h>
#include <stdlib.h>

#include "pvx/aio.h"
#include "pvx/kernel.h"
#include "pvx/log.h"
#include "pvx/rusage.h"
#include "sentry/platform/platform.h"

/* What the tasks of an exited process point at: no VMAs, no address space (copies give EFAULT). */
static struct mm exited_mm;

/* See pvx/kernel.h. */
struct mm *mm_new(void)
{
	struct mm *mm = calloc(1, sizeof(*mm));

	if (mm)
		mm->users = 1;
	return mm;
}

/* See pvx/kernel.h. */
void mm_share(struct process *c, struct process *p)
{
	c->mm = p->mm;
	c->as = p->as;
	c->mm->users++;
}

/* See pvx/kernel.h. */
bool as_only_dying(const struct addr_space *as)
{
	if (!as)
		return false;
	for (struct task *o = task_next(NULL); o; o = task_next(o))
		if (o->proc && o->proc->as == as && !o->exited && !o->proc->group_exit)
			return false;
	return true;
}

/*
 * See pvx/kernel.h. The caller has pointed its process elsewhere already
 * (a new mm, or none at exit). Other processes still in mm keep the stub:
 * only t's context goes (a thread's context went at thread_exit; the first
 * context stays with the stub, and its owner with it: mm_linger).
 */
void mm_leave(struct task *t, struct mm *mm, struct addr_space *as)
{
	struct platform_ctx *ctx = as ? ctx_self(as) : NULL;

	if (!mm || mm == &exited_mm)
		return;
	if (mm->users > 1) {
		if (ctx && !ctx->first && as->ops->ctx_release)
			as->ops->ctx_release(ctx);
		mm->users--;
		/* Those left are all being killed: the stub goes, as process_kill would have had it. */
		if (as_only_dying(as)) {
			pr_debug("stub %d: every process left in it is dying", as->pid);
			kill(as->pid, SIGKILL);
		}
		return;
	}
	if (as && !t->exited) {	/* execve into a new stub: t goes on */
		usage_stub_gone(t, as, ctx);	/* rusage counts across execve */
		as->ops->as_release(as, NULL);
	} else if (as) {	/* exit: what the reap says, no /proc reads of a stub about to die */
		struct rusage ru;
		bool in_stub = ctx_in_stub(as->ctxs);
		if (as->ops->as_release(as, &ru))
			usage_stub_reaped(t->proc, in_stub, &ru);
	}
	aio_mm_gone(mm);
	mm_release(mm);
	free(mm);
	sentry_wake_all();	/* a thread in mm_linger may go */
}

/* See pvx/kernel.h. */
void mm_drop(struct mm *mm)
{
	if (mm && mm != &exited_mm && --mm->users == 0) {
		aio_mm_gone(mm);
		mm_release(mm);
		free(mm);
	}
}

/* See pvx/kernel.h. */
struct mm *mm_exited(void)
{
	return &exited_mm;
}

/*
 * Does a process still run in a stub that dies with the calling thread:
 * one it made (its first context), or one forked by the host from such a
 * stub (a child of this thread too)?
 */
static bool holds_stub(void)
{
	pthread_t me = pthread_self();

	for (struct task *o = task_next(NULL); o; o = task_next(o)) {
		struct addr_space *as = o->proc ? o->proc->as : NULL;
		struct platform_ctx *c = ctx_self(as);
		if ((c && c->first) || (as && pthread_equal(as->creator, me)))
			return true;
	}
	return false;
}

/* See pvx/kernel.h. */
void mm_linger(void)
{
	while (holds_stub())
		sentry_wait();
}

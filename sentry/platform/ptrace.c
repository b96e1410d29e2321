// SPDX-License-Identifier: GPL-2.0
/*
 * The ptrace platform: PTRACE_SYSEMU on any kernel. The baseline the other
 * platforms are measured against.
 *
 * Each address space is a stub started with PTRACE_TRACEME and exec'd from
 * the embedded image, so it stops before its first instruction. Guest code
 * runs in the stub's only thread under PTRACE_SYSEMU: every syscall stops
 * at entry and is never executed by the host. Syscalls the sentry wants run
 * in the stub's mm (mmap, munmap, ...) go through the stub's
 * "syscall; int3" gadget with PTRACE_CONT.
 */
#include <elf.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdlib.h>
#include <linux/kcmp.h>
#include <signal.h>
#include <string.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pvx/log.h"
#include "pvx/sigframe.h"
#include "pvx/stub_abi.h"
#include "platform.h"

#define X32_SYSCALL_BIT 0x40000000UL
#define AUDIT_ARCH_X86_64_ 0xc000003eU
#ifndef PTRACE_GET_SYSCALL_INFO
#define PTRACE_GET_SYSCALL_INFO 0x420e
#endif

_Static_assert(offsetof(struct user_regs_struct, rax) == offsetof(struct pvx_regs, rax), "POKEUSER of rax");
_Static_assert(sizeof(struct user_regs_struct) == sizeof(struct pvx_regs),
	       "pvx_regs mirrors user_regs_struct");

struct ptrace_as {
	struct addr_space as;
	struct user_regs_struct tmpl;	/* cs/ss/eflags of a fresh stub */
	long sentry_pidfd;		/* pidfd of the sentry, as an fd in the stub; -1 until used */
};

/* A guest thread: a thread of the stub, traced by the context's owner. */
struct ptrace_ctx {
	struct platform_ctx ctx;
	int pending_sig;		/* async signal seen while running a gadget syscall */
	long held_fd;			/* stub fd as_put_fd kept for the next as_get_fd; -1: none (see there) */
	struct place_pair pair;		/* ptrace_place */
	/*
	 * The stopped thread's registers as PTRACE_GETREGS last read them at a
	 * stop of guest code (kregs_ok); false once anything else set them (a
	 * gadget, a failed run). See set_guest_regs.
	 */
	struct pvx_regs kregs;
	bool kregs_ok;
	/* ptrace_as_batch: the queued calls, and the host fd whose pidfd_getfd is among them (-1: none) */
	bool batching;
	int bn, bfd_host;
	struct batch_op {
		uint64_t nr, a[6], flags;	/* sites.S stub_batch's table entry */
	} bops[24];
};

static struct ptrace_as *to_pas(struct addr_space *as)
{
	return (struct ptrace_as *)as;
}

static struct ptrace_ctx *to_pctx(struct platform_ctx *ctx)
{
	return (struct ptrace_ctx *)ctx;
}

static long ptrace_probe(void)
{
	return 0;	/* PTRACE_SYSEMU exists on every x86-64 kernel we support */
}

/*
 * Wait for the stub thread to stop; returns the stop signal (0 for a
 * PTRACE_INTERRUPT stop of a seized thread) or -ESRCH if it died.
 */
static long wait_stop(pid_t pid)
{
	int st;

	for (;;) {
		pid_t r = waitpid(pid, &st, __WALL);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return neg_errno();
		}
		if (WIFSTOPPED(st) && (st >> 16) == PTRACE_EVENT_STOP)
			return 0;
		if (WIFSTOPPED(st))
			return WSTOPSIG(st);
		pr_debug("stub %d died (status 0x%x)", pid, st);
		return -ESRCH;
	}
}

static long gadget_syscall(struct ptrace_ctx *pc, uint64_t gadget, long nr, const long args[6]);
static long drop_held_fd(struct ptrace_ctx *pc);
static long ptrace_as_syscall(struct addr_space *as, long nr, const long args[6]);
static long ptrace_as_batch(struct addr_space *as, int how);

/* Does the exec'd stub pid have the len bytes of a gadget at addr (the image pvx built is the one running)? */
static bool stub_has_gadget(pid_t pid, uint64_t addr, const char *bytes, size_t len, const char *name)
{
	char got[sizeof(STUB_BATCH_BYTES)];
	struct iovec l = { got, len }, r = { (void *)addr, len };

	if (len <= sizeof(got) && process_vm_readv(pid, &l, 1, &r, 1, 0) == (ssize_t)len && !memcmp(got, bytes, len))
		return true;
	pr_err("stub image has no %s gadget at %#lx", name, (unsigned long)addr);
	return false;
}

/* A new address space of this platform with its first context (*first), not linked yet; NULL: no memory. */
static struct ptrace_as *pas_new(struct ptrace_ctx **first)
{
	struct ptrace_as *pas = calloc(1, sizeof(*pas));

	*first = calloc(1, sizeof(**first));
	if (!pas || !*first) {
		free(pas);
		free(*first);
		return NULL;
	}
	pas->as.ops = &platform_ptrace;
	(*first)->ctx.first = true;
	(*first)->held_fd = -1;
	return pas;
}

static long ptrace_as_new(struct addr_space **out)
{
	long memfd = stub_memfd();

	if (memfd < 0)
		return memfd;
	struct ptrace_ctx *first;
	struct ptrace_as *pas = pas_new(&first);
	if (!pas)
		return -ENOMEM;
	pas->as.creator = pthread_self();
	pas->sentry_pidfd = -1;
	ctx_link(&pas->as, &first->ctx, true);
	pid_t pid = stub_start((int)memfd, "ptrace", NULL, 0, true);	/* stops at exec: _start never runs */
	if (pid < 0) {
		free(pas);
		free(first);
		return pid;
	}
	pas->as.pid = pid;
	stub_register(pid);
	first->ctx.tid = pid;

	long sig = wait_stop(pid);
	if (sig != SIGTRAP) {
		pr_err("stub did not stop at exec (%ld)", sig);
		goto fail;
	}
	if (ptrace(PTRACE_SETOPTIONS, pid, 0, PTRACE_O_EXITKILL | PTRACE_O_TRACESYSGOOD) < 0 ||
	    ptrace(PTRACE_GETREGS, pid, 0, &pas->tmpl) < 0) {
		pr_err("ptrace setup of stub %d: %m", pid);
		goto fail;
	}
	const size_t sys_len = sizeof(STUB_SYSCALL_GADGET_BYTES) - 1, clone_len = sizeof(STUB_CLONE_GADGET_BYTES) - 1;
	if (!stub_has_gadget(pid, STUB_SYSCALL_GADGET, STUB_SYSCALL_GADGET_BYTES, sys_len, "syscall") ||
	    !stub_has_gadget(pid, STUB_FORK_GADGET, STUB_CLONE_GADGET_BYTES, clone_len, "fork") ||
	    !stub_has_gadget(pid, STUB_CLONE_GADGET, STUB_CLONE_GADGET_BYTES, clone_len, "clone") ||
	    !stub_has_gadget(pid, STUB_TWO_SYSCALLS, STUB_TWO_SYSCALLS_BYTES, sizeof(STUB_TWO_SYSCALLS_BYTES) - 1,
			     "two-syscall") ||
	    !stub_has_gadget(pid, STUB_BATCH, STUB_BATCH_BYTES, sizeof(STUB_BATCH_BYTES) - 1, "batch"))
		goto fail;
	pas->as.vdso = stub_vdso(pid);	/* exec'd: its auxv is the stub's */
	/* No core of guest memory (see stub_nodump); the stub never runs its own code to do it. */
	const long nd[6] = { PR_SET_DUMPABLE, 0 };
	if (stub_nodump() && gadget_syscall(first, STUB_SYSCALL_GADGET, SYS_prctl, nd) != 0) {
		pr_err("ptrace: cannot make stub %d undumpable", pid);
		goto fail;
	}
	*out = &pas->as;
	return 0;
fail:
	if (stub_unregister(pid)) {
		kill(pid, SIGKILL);
		stub_reap(pid, __WALL, NULL);
	}
	free(pas);
	free(first);
	return -ECHILD;
}

/*
 * fork(2) by the host: the calling thread's stub thread runs
 * clone(CLONE_PARENT | SIGCHLD) at the fork gadget. The child (a child of
 * the sentry, so ours to wait for) has the parent's memory copy-on-write
 * and idles in pause() until the child's sentry thread seizes it
 * (ctx_start); it gets its registers from the sentry at its first run.
 */
static long ptrace_as_fork(struct addr_space *parent, struct addr_space **out)
{
	struct ptrace_as *pp = to_pas(parent);
	struct platform_ctx *c = ctx_self(parent);
	const long a[6] = { CLONE_PARENT | SIGCHLD, 0 };

	if (!c)
		return -ESRCH;
	long r = drop_held_fd(to_pctx(c));	/* the child's fd table is a copy: it would hold it too */
	if (r < 0)
		return r;
	struct ptrace_ctx *first;
	struct ptrace_as *pas = pas_new(&first);
	if (!pas)
		return -ENOMEM;
	long pid = gadget_syscall(to_pctx(c), STUB_FORK_GADGET, SYS_clone, a);
	if (pid <= 0) {
		free(pas);
		free(first);
		return pid < 0 ? pid : -EIO;
	}
	stub_register((pid_t)pid);
	pas->as.pid = (pid_t)pid;
	pas->as.vdso = parent->vdso;
	pas->tmpl = pp->tmpl;
	pas->sentry_pidfd = pp->sentry_pidfd;	/* the fd table is a copy: the same number */
	place_pair_inherit(&first->pair, &to_pctx(c)->pair);	/* forked by c's stub thread, on c's sentry thread */
	first->ctx.tid = (pid_t)pid;
	ctx_link(&pas->as, &first->ctx, false);	/* the child's thread owns it from ctx_start */
	*out = &pas->as;
	return 0;
}

static bool ptrace_as_release(struct addr_space *as, struct rusage *ru)
{
	bool reaped = false;

	if (!as)
		return false;
	if (!stub_unregister(as->pid))
		goto free;	/* terminate_stubs() has it */
	kill(as->pid, SIGKILL);
	/* A traced thread is reaped by its tracer, and the leader only after its threads (execve from a thread). */
	for (struct platform_ctx *c = as->ctxs; c; c = c->next)
		if (c->tid != as->pid && c->owned && pthread_equal(c->owner, pthread_self()))
			while (waitpid(c->tid, NULL, __WALL) < 0 && errno == EINTR)
				;
	reaped = stub_reap(as->pid, __WALL, ru);
free:
	while (as->ctxs) {
		struct platform_ctx *c = as->ctxs;
		ctx_unlink(c);
		free(c);
	}
	free(to_pas(as));
	return reaped;
}

/*
 * See platform.h. The caller traces the stub's main thread, its first
 * context and only one; the threads of guest threads gone were made to
 * exit and reaped (ptrace_ctx_release), and nothing else makes one. The
 * /proc scan for a stray thread (one ptrace_ctx_release could not make
 * exit) is the question's; the wipe that follows it (exec_mm_reuse) does
 * not scan again: only a context of this stub makes a thread, and the
 * caller's is the only one.
 */
static long ptrace_as_exec(struct addr_space *as, bool wipe)
{
	struct platform_ctx *c = ctx_self(as);
	const long unmap[6] = { 0, (long)PVX_GUEST_TASK_SIZE };

	if (!c || !c->first || c->tid != as->pid || as->ctxs != c || c->next)
		return -EBUSY;
	if (!wipe)
		return stub_threads_only(as->pid, &as->pid, 1) < 0 ? -EBUSY : 0;
	long r = ptrace_as_syscall(as, SYS_munmap, unmap);	/* queued when batching */
	return r == -EBUSY ? -EIO : r;
}

/*
 * Run the stub thread of ctx from r (rip at gadget) until the int3 that
 * ends the gadget's len bytes; r gets the registers it stopped with.
 */
static long gadget_run(struct ptrace_ctx *pc, struct user_regs_struct *r, uint64_t gadget, size_t len)
{
	pid_t tid = pc->ctx.tid;

	pc->kregs_ok = false;
	if (ptrace(PTRACE_SETREGS, tid, 0, r) < 0)
		return neg_errno();
	for (;;) {
		if (ptrace(PTRACE_CONT, tid, 0, 0) < 0)
			return neg_errno();
		long sig = wait_stop(tid);
		if (sig < 0)
			return sig;
		if (sig == SIGTRAP)
			break;
		/* Not ours (e.g. SIGINT from the terminal): hand it to the guest later. */
		if (sig)
			pc->pending_sig = (int)sig;
	}
	if (ptrace(PTRACE_GETREGS, tid, 0, r) < 0)
		return neg_errno();
	if (r->rip < gadget || r->rip > gadget + len) {
		pr_err("stub gadget stopped at %#llx", r->rip);
		return -EFAULT;
	}
	return 0;
}

/* Registers for nr(args) at gadget, from the stub's template. */
static void gadget_regs(struct ptrace_as *pas, struct user_regs_struct *r, uint64_t gadget, long nr,
			const long args[6])
{
	*r = pas->tmpl;
	r->rip = gadget;
	r->rax = (uint64_t)nr;
	r->orig_rax = (uint64_t)-1;
	r->rdi = (uint64_t)args[0];
	r->rsi = (uint64_t)args[1];
	r->rdx = (uint64_t)args[2];
	r->r10 = (uint64_t)args[3];
	r->r8 = (uint64_t)args[4];
	r->r9 = (uint64_t)args[5];
}

/* Run nr(args) in the stub thread of ctx at gadget; it stops at an int3 after it. */
static long gadget_syscall(struct ptrace_ctx *pc, uint64_t gadget, long nr, const long args[6])
{
	struct user_regs_struct r;

	gadget_regs(to_pas(pc->ctx.as), &r, gadget, nr, args);
	long e = gadget_run(pc, &r, gadget, 8);
	return e < 0 ? e : (long)r.rax;
}

/*
 * Batching (platform.h as_batch), for an execve in place: its ten or so
 * host calls (the wipe, pidfd_getfd of the image, its segments, the bss,
 * the stack, the close) in one or two stops instead of one each. The
 * table goes below the stub's own stack pointer (the template's: above
 * the guest's range, never guest-mapped, private to this stub) with
 * process_vm_writev. Only the stub's memory, and only its one thread, can
 * change it: no guest code runs in this mm during an exec in place (the
 * caller's context is the only one and stub_threads_only proved it has no
 * other thread; guest memory accesses stop at PVX_GUEST_TASK_SIZE).
 */
#define BATCH_FD 0x7ffffff0L	/* the queued pidfd_getfd's fd, to the mm code: above any fd (fs.nr_open <= 2^30) */
#define BATCH_GAP 4096		/* between the template's rsp and the table */

static void batch_queue(struct ptrace_ctx *pc, long nr, const long args[6], uint64_t flags)
{
	struct batch_op *op = &pc->bops[pc->bn++];

	op->nr = (uint64_t)nr;
	for (int i = 0; i < 6; i++)
		op->a[i] = (uint64_t)args[i];
	op->flags = flags;
	pc->ctx.as->batched = true;
}

/* Run what is queued; 0, or the first failure's result. The queued pidfd_getfd's fd becomes the held fd. */
static long batch_flush(struct ptrace_ctx *pc)
{
	struct ptrace_as *pas = to_pas(pc->ctx.as);
	size_t n = (size_t)pc->bn, len = n * sizeof(pc->bops[0]);
	bool keep = pc->bfd_host >= 0;
	struct user_regs_struct r;

	if (!n)
		return 0;
	pc->bn = 0;
	pc->bfd_host = -1;
	pc->ctx.as->batched = false;
	uint64_t table = (pas->tmpl.rsp - BATCH_GAP - len) & ~63UL;
	struct iovec l = { pc->bops, len }, rv = { (void *)table, len };
	if (process_vm_writev(pc->ctx.tid, &l, 1, &rv, 1, 0) != (ssize_t)len)
		return -EIO;
	const long none[6] = { 0 };
	gadget_regs(pas, &r, STUB_BATCH, 0, none);
	r.rbx = table;
	r.r12 = n;
	r.r13 = (uint64_t)-1;
	long e = gadget_run(pc, &r, STUB_BATCH, sizeof(STUB_BATCH_BYTES) - 1);
	if (e < 0)
		return e;
	if (keep && (long)r.r13 >= 0)
		pc->held_fd = (long)r.r13;	/* closed as any held fd is */
	return r.r12 ? ((long)r.rax < 0 ? (long)r.rax : -EIO) : 0;
}

static long ptrace_as_batch(struct addr_space *as, int how)
{
	struct platform_ctx *c = ctx_self(as);

	if (!c)
		return -ESRCH;
	struct ptrace_ctx *pc = to_pctx(c);
	if (how == AS_BATCH_BEGIN) {
		if (!c->first || as->ctxs != c || c->next || to_pas(as)->tmpl.rsp < PVX_GUEST_TASK_SIZE + 2 * BATCH_GAP +
				sizeof(pc->bops))
			return -EINVAL;
		pc->batching = true;
		pc->bn = 0;
		pc->bfd_host = -1;
		return 0;
	}
	if (!pc->batching)
		return 0;
	if (how == AS_BATCH_END) {
		/* What an exec mapped its files with is closed before the guest runs: here, in the last stop. */
		long a[6] = { pc->held_fd };
		if (pc->bfd_host >= 0 && pc->bn < (int)ARRAY_SIZE(pc->bops)) {
			batch_queue(pc, SYS_close, a, STUB_BATCH_RDI_FD);
			pc->bfd_host = -1;
		} else if (pc->held_fd >= 0 && pc->bfd_host < 0 && pc->bn < (int)ARRAY_SIZE(pc->bops)) {
			batch_queue(pc, SYS_close, a, 0);
			pc->held_fd = -1;
		}
		pc->batching = false;
	}
	return batch_flush(pc);
}

static long ptrace_as_syscall(struct addr_space *as, long nr, const long args[6])
{
	struct platform_ctx *c = ctx_self(as);

	if (!c) {
		pr_err("ptrace: this thread traces no thread of stub %d", as->pid);
		return -ESRCH;
	}
	struct ptrace_ctx *pc = to_pctx(c);
	if (pc->batching) {
		long e, ret;
		if (pc->bn < (int)ARRAY_SIZE(pc->bops) && as_batch_queueable(nr, args, &ret)) {
			batch_queue(pc, nr, args, nr == SYS_mmap && args[4] == BATCH_FD ? STUB_BATCH_R8_FD : 0);
			return ret;
		}
		bool placeholder = nr == SYS_mmap && args[4] == BATCH_FD;
		if ((e = batch_flush(pc)) < 0)
			return e;
		if (placeholder) {	/* the queued pidfd_getfd ran: its fd is the held one now */
			long a[6] = { args[0], args[1], args[2], args[3], pc->held_fd, args[5] };
			return pc->held_fd < 0 ? -EBADF : gadget_syscall(pc, STUB_SYSCALL_GADGET, nr, a);
		}
	}
	return gadget_syscall(pc, STUB_SYSCALL_GADGET, nr, args);
}

/*
 * A new guest thread: the parent's stub thread runs clone(2) at the clone
 * gadget; the new stub thread idles in pause() until ctx_start, on the new
 * guest thread's own sentry thread, seizes it (a tracer is one thread).
 */
static long ptrace_ctx_new(struct platform_ctx *parent, struct platform_ctx **out)
{
	struct ptrace_ctx *pc = calloc(1, sizeof(*pc));
	const long a[6] = { STUB_THREAD_CLONE_FLAGS, 0 };

	if (!pc)
		return -ENOMEM;
	pc->held_fd = -1;
	long tid = gadget_syscall(to_pctx(parent), STUB_CLONE_GADGET, SYS_clone, a);
	if (tid <= 0) {
		free(pc);
		return tid < 0 ? tid : -EIO;
	}
	pc->ctx.tid = (pid_t)tid;
	ctx_link(parent->as, &pc->ctx, false);
	*out = &pc->ctx;
	return 0;
}

static long ptrace_ctx_start(struct platform_ctx *ctx)
{
	pid_t tid = ctx->tid;

	ctx->owner = pthread_self();
	ctx->owned = true;
	if (ptrace(PTRACE_SEIZE, tid, 0, PTRACE_O_EXITKILL | PTRACE_O_TRACESYSGOOD) < 0 ||
	    ptrace(PTRACE_INTERRUPT, tid, 0, 0) < 0) {
		pr_err("ptrace: cannot seize stub thread %d: %m", tid);
		return neg_errno();
	}
	for (;;) {
		long sig = wait_stop(tid);
		if (sig < 0)
			return sig;
		if (sig == 0)
			break;
		/* A signal that reached the idle thread first: keep it for the guest. */
		to_pctx(ctx)->pending_sig = (int)sig;
		if (ptrace(PTRACE_CONT, tid, 0, 0) < 0)
			return neg_errno();
	}
	/*
	 * A forked stub (sites.S, stub_fork_gadget): from now on it dies with
	 * its tracer (EXITKILL), not with the sentry thread that made its
	 * parent, nor by its alarm.
	 */
	if (ctx->first) {
		const long a[6] = { PR_SET_PDEATHSIG, 0 };
		struct user_regs_struct r;
		ctx->as->creator = pthread_self();
		/* prctl(PR_SET_PDEATHSIG, 0), then alarm(0): one stop at the two-syscall gadget */
		gadget_regs(to_pas(ctx->as), &r, STUB_TWO_SYSCALLS, SYS_prctl, a);
		r.r12 = SYS_alarm;
		r.r13 = 0;
		long e = gadget_run(to_pctx(ctx), &r, STUB_TWO_SYSCALLS, sizeof(STUB_TWO_SYSCALLS_BYTES) - 1);
		if (e < 0)
			return e;
		return (long)r.rbx < 0 ? (long)r.rbx : (long)r.rax < 0 ? -EIO : 0;
	}
	return 0;
}

/*
 * The guest thread exited: so does its stub thread, before its tracer (the
 * calling thread) goes away -- PTRACE_O_EXITKILL would kill the whole stub.
 */
static void ptrace_ctx_release(struct platform_ctx *ctx)
{
	const long a[6] = { 0 };
	int st;

	if (ctx->first)
		return;
	if (drop_held_fd(to_pctx(ctx)) < 0)
		pr_debug("ptrace: stub thread %d kept an fd", ctx->tid);
	if (gadget_syscall(to_pctx(ctx), STUB_SYSCALL_GADGET, SYS_exit, a) != -ESRCH)
		pr_debug("ptrace: stub thread %d did not exit", ctx->tid);
	while (waitpid(ctx->tid, &st, __WALL) < 0 && errno == EINTR)
		;
	ctx_unlink(ctx);
	free(ctx);
}

/*
 * The fds of the stub for host fds (mm_map_vma: get, mmap, put) cost a
 * gadget syscall each way. as_put_fd keeps the last one (held_fd of the
 * calling thread's context) and as_get_fd reuses it while kcmp(2) says the
 * host fd is the same open file description -- an image's segments are
 * one file -- so an exec maps its file with one pidfd_getfd and one close,
 * not one of each per segment. The held fd is closed before this context
 * runs guest code again (ptrace_run), before a fork (the child would get
 * it) and when the thread goes: the stub holds no file past the call that
 * mapped it, so a file the guest unmapped and closed is released as on
 * Linux (flock(2) locks of its description, inotify's close events). A
 * context's held fd is only touched by its owner, so threads never race.
 */
static long drop_held_fd(struct ptrace_ctx *pc)
{
	const long a[6] = { pc->held_fd };

	if (pc->held_fd < 0)
		return 0;
	pc->held_fd = -1;
	long r = gadget_syscall(pc, STUB_SYSCALL_GADGET, SYS_close, a);
	return r == -ESRCH ? r : 0;	/* a close that failed still frees the number */
}

static long ptrace_as_get_fd(struct addr_space *as, int host_fd)
{
	struct ptrace_as *pas = to_pas(as);
	struct platform_ctx *c = ctx_self(as);

	if (!c)
		return -ESRCH;
	struct ptrace_ctx *pc = to_pctx(c);
	if (pc->batching && pc->bfd_host == host_fd)
		return BATCH_FD;	/* its pidfd_getfd is queued: the same file (the caller holds host_fd) */
	if (pc->batching && pc->bfd_host >= 0) {
		long e = batch_flush(pc);	/* another file: the queued one's fd becomes the held one */
		if (e < 0)
			return e;
	}
	if (pc->held_fd >= 0 && syscall(SYS_kcmp, sentry_pid(), as->pid, KCMP_FILE, host_fd, pc->held_fd) == 0)
		return pc->held_fd;
	if (pc->batching && pas->sentry_pidfd >= 0 && pc->bn + 2 <= (int)ARRAY_SIZE(pc->bops)) {
		long a[6] = { pas->sentry_pidfd, host_fd, 0 }, h[6] = { pc->held_fd };
		if (pc->held_fd >= 0)	/* what as_put_fd would do when this one is put */
			batch_queue(pc, SYS_close, h, 0);
		pc->held_fd = -1;
		batch_queue(pc, SYS_pidfd_getfd, a, STUB_BATCH_KEEP);
		pc->bfd_host = host_fd;
		return BATCH_FD;
	}
	if (pc->batching) {
		long e = batch_flush(pc);
		if (e < 0)
			return e;
	}
	if (pas->sentry_pidfd < 0) {
		long a[6] = { sentry_pid(), 0 };
		long fd = gadget_syscall(pc, STUB_SYSCALL_GADGET, SYS_pidfd_open, a);
		if (fd < 0)
			return fd;
		pas->sentry_pidfd = fd;
	}
	long a[6] = { pas->sentry_pidfd, host_fd, 0 };
	return gadget_syscall(pc, STUB_SYSCALL_GADGET, SYS_pidfd_getfd, a);
}

static void ptrace_as_put_fd(struct addr_space *as, long as_fd)
{
	struct platform_ctx *c = ctx_self(as);

	if (!c)
		return;
	struct ptrace_ctx *pc = to_pctx(c);
	if (as_fd == pc->held_fd || (pc->batching && as_fd == BATCH_FD))
		return;	/* kept for the next as_get_fd (a queued one: closed at AS_BATCH_END, or held once run) */
	long old = pc->held_fd;
	if (drop_held_fd(pc) < 0)
		pr_debug("close of fd %ld in stub %d failed", old, as->pid);
	pc->held_fd = as_fd;
}

/*
 * Was this stop an x86-64 syscall? int $0x80 and sysenter from 64-bit code
 * stop like any syscall but use the i386 table (the kernel says so in the
 * syscall info's arch). x32 calls (bit 30 set in the number) are x86-64
 * syscalls the sentry answers with ENOSYS, as a kernel without x32 does.
 */
static bool native_syscall(pid_t pid)
{
	struct {
		uint8_t op, pad[3];
		uint32_t arch;
		uint64_t ip, sp, nr, args[6];
	} info;

	if (ptrace(PTRACE_GET_SYSCALL_INFO, pid, sizeof(info), &info) < 0)
		return true;	/* before Linux 5.3: no way to tell, assume 64-bit */
	return info.arch == AUDIT_ARCH_X86_64_;
}

/*
 * Placement: a traced thread and its tracer never run at once (every stop
 * hands the CPU from one to the other), so they share one CPU while
 * nothing else wants it (place_pair_run, platform.c). PVX_PTRACE_PIN=0:
 * the scheduler places them.
 */
static void ptrace_place(struct ptrace_ctx *pc)
{
	static int off = -1;

	if (off < 0) {
		const char *env = getenv("PVX_PTRACE_PIN");
		off = env && !strcmp(env, "0");
	}
	if (!off)
		place_pair_run(&pc->pair, pc->ctx.as->pid, pc->ctx.tid);
}

/*
 * Load the guest's registers into the stopped stub thread. PTRACE_SETREGS
 * writes all 27 (putreg each, segment and base checks included: the
 * costliest ptrace request of a trap here); after most syscalls only rax,
 * the result, differs from what the stop left, and one PTRACE_POKEUSER
 * does (none if nothing changed). The snapshot is only trusted as read by
 * PTRACE_GETREGS at the stop: what SETREGS stores may differ from what it
 * was given (flags, segments are sanitized).
 */
static long set_guest_regs(struct ptrace_ctx *pc, const struct pvx_regs *regs)
{
	const size_t ax = offsetof(struct pvx_regs, rax), end = ax + sizeof(pc->kregs.rax);
	const char *want = (const char *)regs, *have = (const char *)&pc->kregs;
	pid_t tid = pc->ctx.tid;
	bool ok = pc->kregs_ok;

	pc->kregs_ok = false;	/* until the next stop's GETREGS */
	if (ok && !memcmp(want, have, ax) && !memcmp(want + end, have + end, sizeof(pc->kregs) - end)) {
		if (regs->rax == pc->kregs.rax)
			return 0;
		return ptrace(PTRACE_POKEUSER, tid, ax, regs->rax) < 0 ? neg_errno() : 0;
	}
	return ptrace(PTRACE_SETREGS, tid, 0, regs) < 0 ? neg_errno() : 0;
}

static long ptrace_run(struct platform_ctx *ctx, struct pvx_regs *regs, struct pvx_trap *trap)
{
	struct ptrace_as *pas = to_pas(ctx->as);
	struct ptrace_ctx *pc = to_pctx(ctx);
	pid_t tid = ctx->tid;
	siginfo_t si;
	long sig;

	memset(trap, 0, sizeof(*trap));
	if (pc->pending_sig) {
		trap->kind = TRAP_SIGNAL;
		trap->signo = pc->pending_sig;
		pc->pending_sig = 0;
		return 0;
	}
	if (!regs->cs) {	/* a fresh guest: take the stub's selectors and flags */
		regs->cs = pas->tmpl.cs;
		regs->ss = pas->tmpl.ss;
		regs->eflags = pas->tmpl.eflags;
	}
	if (pc->batching && (sig = ptrace_as_batch(ctx->as, AS_BATCH_END)) < 0)
		return sig;	/* not ended by its caller: nothing queued may be left for guest code to see */
	if ((sig = drop_held_fd(pc)) < 0)
		return sig;
	ptrace_place(pc);
	if ((sig = set_guest_regs(pc, regs)) < 0)
		return sig;
	if (ptrace(PTRACE_SYSEMU, tid, 0, 0) < 0)
		return neg_errno();
	sig = wait_stop(tid);
	if (sig < 0)
		return sig;
	if (ptrace(PTRACE_GETREGS, tid, 0, regs) < 0)
		return neg_errno();
	pc->kregs = *regs;
	pc->kregs_ok = true;
	if (sig == 0) {		/* an interrupt stop (never asked for after ctx_start) */
		trap->kind = TRAP_SIGNAL;
		return 0;
	}
	if (sig == (SIGTRAP | 0x80)) {
		trap->kind = TRAP_SYSCALL;
		if (!native_syscall(tid)) {
			/* int $0x80 or sysenter: never emulated as x86-64, killed like seccomp does. */
			trap->kind = TRAP_SIGNAL;
			trap->signo = SIGSYS;
			trap->code = 0x80;	/* SI_KERNEL */
		}
		return 0;
	}
	trap->kind = TRAP_SIGNAL;
	trap->signo = (int)sig;
	if (ptrace(PTRACE_GETSIGINFO, tid, 0, &si) == 0) {
		trap->code = si.si_code;
		trap->addr = (uint64_t)si.si_addr;
	}
	return 0;
}

/*
 * One go of the cmpxchg gadget (gadget_cmpxchg32): PTRACE_CONT to its
 * int3 or a fault. The fault is not delivered (the next run sets the
 * guest's registers again); a signal from elsewhere is kept for the guest,
 * as gadget_syscall does.
 */
static long ptrace_gadget_run(struct platform_ctx *ctx, struct pvx_regs *regs, struct pvx_trap *trap)
{
	pid_t tid = ctx->tid;
	long sig;

	memset(trap, 0, sizeof(*trap));
	to_pctx(ctx)->kregs_ok = false;
	if (ptrace(PTRACE_SETREGS, tid, 0, regs) < 0 || ptrace(PTRACE_CONT, tid, 0, 0) < 0)
		return neg_errno();
	if ((sig = wait_stop(tid)) < 0)
		return sig;
	if (ptrace(PTRACE_GETREGS, tid, 0, regs) < 0)
		return neg_errno();
	trap->kind = TRAP_SIGNAL;
	trap->signo = (int)sig;
	if (sig && sig != SIGTRAP && sig != SIGSEGV && sig != SIGBUS)
		to_pctx(ctx)->pending_sig = (int)sig;
	return 0;
}

static long ptrace_as_cmpxchg32(struct addr_space *as, uint64_t uaddr, uint32_t old, uint32_t new, uint32_t *prev)
{
	struct platform_ctx *c = ctx_self(as);

	if (!c)
		return -ESRCH;
	return gadget_cmpxchg32(c, ptrace_gadget_run, (const struct pvx_regs *)&to_pas(as)->tmpl, uaddr, old, new,
				prev);
}

/*
 * The FPU state as a signal frame holds it. NT_X86_XSTATE is the XSAVE
 * layout, but its software-reserved bytes are gdb's (the XCR0 mask in the
 * first word, USER_XSTATE_XCR0_WORD), not the frame's fx_sw_bytes: those
 * are written here as save_sw_bytes() does, and FP_XSTATE_MAGIC2 after
 * the state. The kernel takes only a length that is a multiple of the
 * regset's 8-byte unit (ptrace_regset(): EINVAL otherwise), so the room
 * left for the magic is rounded down to one.
 */
static long ptrace_fpu_get(struct platform_ctx *ctx, void *buf, size_t len)
{
	struct iovec iov = { buf, (len - 4) & ~(size_t)7 };

	if (len < K_FXSAVE_SIZE + 4)
		return -ENOSPC;
	if (ptrace(PTRACE_GETREGSET, ctx->tid, NT_X86_XSTATE, &iov) < 0) {
		if (ptrace(PTRACE_GETFPREGS, ctx->tid, 0, buf) < 0)
			return neg_errno();
		return K_FXSAVE_SIZE;
	}
	if (iov.iov_len < K_FXSAVE_SIZE + 64)
		return K_FXSAVE_SIZE;	/* no XSAVE header: the FXSAVE image alone */
	struct k_fpx_sw_bytes sw = {
		.magic1 = K_FP_XSTATE_MAGIC1,
		.extended_size = (uint32_t)iov.iov_len + 4,
		.xstate_size = (uint32_t)iov.iov_len,
	};
	uint32_t magic2 = K_FP_XSTATE_MAGIC2;
	memcpy(&sw.xfeatures, (char *)buf + K_FPX_SW_BYTES_OFFSET, sizeof(sw.xfeatures));
	memcpy((char *)buf + K_FPX_SW_BYTES_OFFSET, &sw, sizeof(sw));
	memcpy((char *)buf + iov.iov_len, &magic2, 4);
	return (long)k_fpstate_size(buf, iov.iov_len + 4);
}

static long ptrace_fpu_set(struct platform_ctx *ctx, const void *buf, size_t len)
{
	struct iovec iov = { (void *)buf, len - 4 };

	if (len == K_FXSAVE_SIZE)
		return ptrace(PTRACE_SETFPREGS, ctx->tid, 0, buf) < 0 ? neg_errno() : 0;
	if (len < K_FXSAVE_SIZE + 4)
		return -EINVAL;
	return ptrace(PTRACE_SETREGSET, ctx->tid, NT_X86_XSTATE, &iov) < 0 ? neg_errno() : 0;
}

const struct platform_ops platform_ptrace = {
	.name = "ptrace",
	.probe = ptrace_probe,
	.as_new = ptrace_as_new,
	.as_fork = ptrace_as_fork,
	.as_release = ptrace_as_release,
	.as_exec = ptrace_as_exec,
	.ctx_new = ptrace_ctx_new,
	.ctx_start = ptrace_ctx_start,
	.ctx_release = ptrace_ctx_release,
	.as_syscall = ptrace_as_syscall,
	.as_get_fd = ptrace_as_get_fd,
	.as_put_fd = ptrace_as_put_fd,
	.as_batch = ptrace_as_batch,
	.run = ptrace_run,
	.fpu_get = ptrace_fpu_get,
	.fpu_set = ptrace_fpu_set,
	.as_cmpxchg32 = ptrace_as_cmpxchg32,
};

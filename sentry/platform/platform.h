/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The platform vtable: how guest code is run and how the guest's address
 * space (a stub process) is changed. Modelled on gVisor's
 * Platform/AddressSpace/Context. Only files under sentry/platform/ may
 * include ptrace or seccomp headers.
 */
#ifndef PVX_PLATFORM_H
#define PVX_PLATFORM_H

#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>
#include "pvx/common.h"
#include "pvx/regs.h"

struct addr_space;
struct platform_ctx;

/*
 * An address space runs one or more contexts (gVisor's Context): a guest
 * thread's way of running code in it. On ptrace and seccomp a context is a
 * thread of the stub process; on vmexec it is the sentry thread itself and
 * its own FPU buffer. A context is owned by one sentry thread, which alone
 * runs it (a ptrace tracer is a thread) and whose as_syscall calls use it.
 */
struct platform_ops {
	const char *name;
	/* 0 when usable on the running kernel, else -errno with a reason logged. */
	long (*probe)(void);
	/*
	 * Spawn a stub and return its empty guest address space, with its
	 * first context owned by the calling thread.
	 */
	long (*as_new)(struct addr_space **out);
	/*
	 * Optional: start the stub the next as_new returns, now, from the main
	 * thread before any task thread exists, so that its exec and boot
	 * overlap the sentry's own start-up. The stub then dies with the main
	 * thread (its creator), which outlives every task. Failing is silent:
	 * as_new then starts one as usual.
	 */
	void (*as_prestart)(void);
	/*
	 * fork(2) by the host (NULL: the platform cannot): the stub of parent
	 * forks itself, so the child's private memory is the parent's,
	 * copy-on-write, and its shared mappings stay shared; nothing is
	 * copied. Run by the calling thread's context in parent. The child's
	 * first context is not owned: its own sentry thread calls ctx_start.
	 */
	long (*as_fork)(struct addr_space *parent, struct addr_space **out);
	/*
	 * Kill the stub and free the address space and its contexts. With ru,
	 * true when this call reaped the stub and *ru is its usage as wait4(2)
	 * reported it (the stub has no children of its own: all of it is
	 * the stub's); false when it was not ours to reap (terminate_stubs).
	 */
	bool (*as_release)(struct addr_space *as, struct rusage *ru);
	/*
	 * execve(2) into the same stub (NULL: the platform cannot), by the
	 * owner of its first context, for a process alone in it. With wipe
	 * false, only asks: 0, or -EBUSY when a context or stub thread other
	 * than the caller's (and the stub's own) is still there -- nothing
	 * changed, the caller spawns a new stub instead. With wipe true: every
	 * guest mapping goes and the stub's shared state is a fresh stub's;
	 * an error then leaves the address space unusable.
	 */
	long (*as_exec)(struct addr_space *as, bool wipe);
	/*
	 * A new context (guest thread) in parent's address space, made by
	 * parent's owner; it is not runnable until its own sentry thread
	 * calls ctx_start.
	 */
	long (*ctx_new)(struct platform_ctx *parent, struct platform_ctx **out);
	long (*ctx_start)(struct platform_ctx *ctx);
	/*
	 * The guest thread is gone: end the context (on its owner thread).
	 * The first context ends with the address space instead.
	 */
	void (*ctx_release)(struct platform_ctx *ctx);
	/*
	 * Run one host syscall inside the address space (mmap, munmap,
	 * mprotect, close...). Returns the raw result (-errno on failure).
	 */
	long (*as_syscall)(struct addr_space *as, long nr, const long args[6]);
	/*
	 * Make the sentry's host_fd usable by as_syscall (e.g. for a file
	 * mmap). Returns the fd number inside the address space; release it
	 * with as_put_fd.
	 */
	long (*as_get_fd)(struct addr_space *as, int host_fd);
	void (*as_put_fd)(struct addr_space *as, long as_fd);
	/*
	 * NULL, or batching of the host calls of an execve in place (between
	 * as_exec's wipe and the new image's first run; the caller's context
	 * is the only one): after AS_BATCH_BEGIN, as_syscall may queue mmap
	 * with MAP_FIXED, munmap and mprotect and return what they return on
	 * success, and as_get_fd may hand out a number that only the queued
	 * calls use. Anything else the address space is asked for runs what
	 * is queued first, in order, and so does every guest memory access
	 * (uaccess.c, by as->batched); AS_BATCH_END runs the rest. FLUSH and
	 * END return the first error of what they ran: the address space is
	 * then unusable, as after a failed wipe.
	 */
	long (*as_batch)(struct addr_space *as, int how);
	/*
	 * as_syscall can run read/write/pread64/pwrite64 on a sentry host fd
	 * straight into guest memory (zero-copy I/O), instead of copying
	 * through a sentry buffer.
	 */
	bool zero_copy_io;
	/* Run guest code with *regs until it traps; *regs is updated. */
	long (*run)(struct platform_ctx *ctx, struct pvx_regs *regs, struct pvx_trap *trap);
	/*
	 * The guest thread's FPU/SSE/AVX state while it is stopped in the
	 * sentry, in the kernel's signal-frame format (XSAVE layout, the
	 * fx_sw_bytes in its software-reserved part, FP_XSTATE_MAGIC2 after
	 * it; see include/pvx/sigframe.h). fpu_get returns the size, 0 when
	 * the thread has no state of its own yet; fpu_set loads such a buffer.
	 */
	long (*fpu_get)(struct platform_ctx *ctx, void *buf, size_t len);
	long (*fpu_set)(struct platform_ctx *ctx, const void *buf, size_t len);
	/*
	 * Atomically: the 32-bit guest word at uaddr becomes new if it is
	 * old; *prev is what it was (lock cmpxchg). Run by the calling
	 * thread's context in as, at the stub's cmpxchg gadget, as guest
	 * code: 0, -EFAULT (the guest would fault there), -ESRCH (no context
	 * of this thread in as) or -ENOSYS (not on this platform).
	 */
	long (*as_cmpxchg32)(struct addr_space *as, uint64_t uaddr, uint32_t old, uint32_t new, uint32_t *prev);
	/*
	 * Passthrough (seccomp; NULL elsewhere, see seccomp_passthrough.md):
	 * as_pt_install has the stub serve read/pread64 of guest fd g
	 * (< STUB_PT_MAX) itself, on its own dup of host_fd (a regular file
	 * open for reading, a pipe's non-blocking read end), or with write,
	 * write(2)s of at most PIPE_BUF bytes (host_fd: a pipe's non-blocking
	 * write end), from now on; 0 or -errno (then nothing is on).
	 * as_pt_drop stops that for g (the control page's bit) and, with
	 * close_dup, closes the stub's dup too; both run by the calling
	 * thread's context in as (close_dup), under the sentry lock.
	 */
	long (*as_pt_install)(struct addr_space *as, int g, int host_fd, bool write);
	void (*as_pt_drop)(struct addr_space *as, int g, bool close_dup);
	/*
	 * Path prefetch (seccomp; NULL elsewhere): the string at src, if the
	 * stub copied it at the calling thread's last trap (a path argument
	 * of the trapped syscall), into dst[0..max): its length, once per
	 * trap; -ENOENT when there is none for src (read the guest then).
	 */
	long (*as_prefetched)(struct addr_space *as, uint64_t src, char *dst, size_t max);
	/*
	 * Input prefetch (seccomp; NULL elsewhere): the n bytes at src, if the
	 * stub copied a range holding them at this thread's trap (unused so
	 * far): 0, and the range is used up; -ENOENT: read the guest's memory.
	 */
	long (*as_prefetched_in)(struct addr_space *as, uint64_t src, void *dst, size_t n);
	/*
	 * Copy-out on the way back (seccomp; NULL elsewhere): the n bytes of
	 * buf go to guest address dst as the guest thread's context resumes
	 * on its next run, in its own context; 0, or -errno when the
	 * platform cannot (then the sentry copies). When that copy faults,
	 * run returns TRAP_OUT_FAULT with the registers it was given. Only
	 * mm/uaccess.c's guest_out_settle calls it (copy_to_guest_ret).
	 */
	long (*ctx_out)(struct platform_ctx *ctx, uint64_t dst, const void *buf, size_t n);
	/*
	 * The usertrap (seccomp; NULL elsewhere; sentry/platform/seccomp_patch.md,
	 * mm/usertrap.c decides what is patched): as_ut_map maps the table of
	 * pad pointers at STUB_UT_TABLE_ADDR (0 or -errno); as_ut_slot tells
	 * the stub that slot k is the site at site (its first byte) of shape
	 * (STUB_UT_MOV, STUB_UT_READ: stub_layout.h) for syscall nr, or with
	 * site 0 that it is free. A patched site's trap comes back from run as
	 * a TRAP_SYSCALL where the syscall would leave rip (site + 7, site + 4).
	 */
	long (*as_ut_map)(struct addr_space *as);
	void (*as_ut_slot)(struct addr_space *as, int k, uint64_t site, uint32_t nr, int shape);
};

/* Common state every platform's address space starts with. */
struct addr_space {
	const struct platform_ops *ops;
	pid_t pid;	/* the stub process: process_vm_readv/writev target */
	uint64_t vdso;	/* the stub's host vDSO, mapped above the guest range for it to call; 0: none */
	/*
	 * The sentry thread whose exit kills the stub (its parent-death
	 * signal): the thread that spawned it, or for a stub forked by
	 * another stub, that stub's. It stays until the stub is gone (mm_linger).
	 */
	pthread_t creator;
	struct platform_ctx *ctxs;	/* its contexts (changed under the sentry lock) */
	bool oom_first;	/* its oom_score_adj is set (mm_init): an exec that reuses the stub need not again */
	bool batched;	/* as_batch queued host calls that have not run yet */
};

enum { AS_BATCH_BEGIN, AS_BATCH_FLUSH, AS_BATCH_END };
/* The calls as_batch may queue (mmap, munmap, mprotect), by number. */
bool as_batch_nr(long nr);
/* Is nr(args) one to queue (an mmap only with MAP_FIXED)? Then *ret is what it returns on success. */
bool as_batch_queueable(long nr, const long args[6], long *ret);

/* Common state of every platform's context. */
struct platform_ctx {
	struct addr_space *as;
	struct platform_ctx *next;	/* in as->ctxs */
	pthread_t owner;		/* the sentry thread that runs it */
	bool owned;			/* owner is set (ctx_start or as_new ran) */
	bool first;			/* the stub's main thread: ends with as_release */
	pid_t tid;			/* host tid of its stub thread; 0 on vmexec */
};

/*
 * Where the guest code of ctx runs, so whose host CPU time is the guest
 * thread's (syscalls/sys_rusage.c): its stub thread ctx->tid (ptrace,
 * seccomp), or else the sentry thread that owns ctx (vmexec, tid 0).
 */
static inline bool ctx_in_stub(const struct platform_ctx *ctx)
{
	return ctx && ctx->tid > 0;
}

/* Add ctx to as, owned by the calling thread when own (platform helpers). */
void ctx_link(struct addr_space *as, struct platform_ctx *ctx, bool own);
void ctx_unlink(struct platform_ctx *ctx);
/* The calling sentry thread's context in as, or NULL. */
struct platform_ctx *ctx_self(struct addr_space *as);
/* Make the guest code of ctx trap (a signal for the sentry to look at). */
void ctx_kick(struct platform_ctx *ctx, int sig);

/*
 * The cmpxchg gadget (platform.c), for the platforms' as_cmpxchg32: run
 * one go of it with run1 (the platform's run with a bounded wait) on the
 * thread's context, from tmpl (selectors, flags and bases the thread may
 * run with), until it stops at its int3 or faults.
 */
long gadget_cmpxchg32(struct platform_ctx *ctx,
		      long (*run1)(struct platform_ctx *, struct pvx_regs *, struct pvx_trap *),
		      const struct pvx_regs *tmpl, uint64_t uaddr, uint32_t old, uint32_t new, uint32_t *prev);

extern const struct platform_ops platform_ptrace;
extern const struct platform_ops platform_seccomp;
extern const struct platform_ops platform_vmexec;

/* Pick a platform by name ("auto" = the best one whose probe succeeds). */
const struct platform_ops *platform_select(const char *name);
/* Print every platform and whether it can run here; returns an exit status. */
int platform_list(void);

/* How many guest tasks are running, as the kernel says (under its lock); read without the lock. */
void platform_set_live_hint(int threads);
/*
 * A task thread goes to sleep in the sentry (a wait on the sentry's
 * condition, a host call that may block) and wakes again: the kernel's
 * blocking primitives call these, so no syscall handler has to.
 */
void platform_sleep_begin(void);
void platform_sleep_end(void);
/* Live task threads not asleep in the sentry (>= 0): what the hand-off policy counts. */
int sentry_runnable_hint(void);
/* Task threads still running (sleeping in the sentry or not). */
int sentry_live_hint(void);

/*
 * CPU placement (seccomp_place, ptrace_place): the CPUs pvx started with
 * (place_ncpus: their number, >= 2, or -1 when there is one and nothing is
 * ever pinned), a host thread back on all of them, or on one of them.
 */
int place_ncpus(void);
const cpu_set_t *place_all_cpus(void);
void place_unpin(pid_t tid);
long place_pin(pid_t tid, int cpu);

/*
 * Two host threads that take turns (a ptrace tracer and its tracee) kept
 * on one CPU while nothing else wants it. (Tried for a seccomp stub thread
 * and its sentry thread when neither spins: on one CPU spins then never
 * succeed, and getppid went from 4.6x to 7.7x native; tar and fork+exec
 * gained 7-9%. Not used there.) The caller is one of the two; tid
 * (a thread of process pid) is the other. place_pair_run before each turn
 * handed over; place_pair_leave gives both every CPU back now.
 */
struct place_pair {
	int pin_cpu;			/* the CPU both are pinned to + 1; 0: none */
	int left_cpu;			/* the CPU they left because others wanted it + 1; 0: none */
	uint32_t turns, cool;		/* turns since the last look; looks left before pinning again */
	uint64_t look_ns, delay_ns;	/* the last look: when, and the two threads' run delay then */
	bool born;			/* place_pair_inherit: the first turn is no look */
	bool no_base;			/* the next look only takes delay_ns, judges nothing */
};
void place_pair_run(struct place_pair *pp, pid_t pid, pid_t tid);
/*
 * A forked process's pair, whose two threads were made by its parent's
 * pair (the stub thread forked, the sentry thread created) and so have
 * their masks: it starts where the parent's is, with no look.
 */
void place_pair_inherit(struct place_pair *child, const struct place_pair *parent);
/* A host thread's CPU time and run delay (time runnable, not running) in ns, from its schedstat; -EIO: unknown. */
long thread_schedstat(pid_t pid, pid_t tid, uint64_t *run, uint64_t *delay);
void place_pair_leave(struct place_pair *pp, pid_t tid);

/* Create the stub process image (a memfd) once; returns its fd or -errno. Call before any stub_start. */
long stub_memfd(void);
/*
 * Start a stub: a child of the calling thread that execs the stub image in
 * mode (argv[1]) with fds[] as its fds 3, 4, ..., after PTRACE_TRACEME if
 * traceme (then it stops at its exec). Returns once it has exec'd (or
 * died): its pid, or -errno.
 */
pid_t stub_start(int memfd, const char *mode, const int *fds, int n, bool traceme);
/* Stubs make themselves undumpable (PR_SET_DUMPABLE 0): only when the sentry can still trace them. */
bool stub_nodump(void);
/*
 * The host vDSO of a stub that has exec'd (AT_SYSINFO_EHDR of its auxv),
 * if it lies in the stub's range above the guest's; else 0.
 */
uint64_t stub_vdso(pid_t pid);
/* The pages of a stub's vDSO and its data ([vvar], [vvar_vclock], [vdso]): 0, or -ENOENT when none is there. */
long stub_vdso_span(pid_t pid, uint64_t *lo, uint64_t *hi);
/* Copy n bytes of the stub image at stub address addr: 0, or -errno when it has none there. */
long stub_image_peek(uint64_t addr, void *buf, size_t n);
/*
 * The threads the open /proc/PID/task directory taskdir lists that are not
 * in keep[n]: 0, 1 (it in *one) or 2 (two or more), or -errno.
 */
long stub_threads_unknown(int taskdir, const pid_t *keep, int n, pid_t *one);
/*
 * Wait (up to ~100 ms) until stub pid has no thread but those in keep[n]:
 * 0, -EBUSY when another one still lives, -errno when /proc cannot say.
 */
long stub_threads_only(pid_t pid, const pid_t *keep, int n);
/* The same on the stub's /proc/PID/task, already open (taskdir). */
long stub_threads_only_at(int taskdir, const pid_t *keep, int n);
/* The process that forks the stubs. */
pid_t sentry_pid(void);
/*
 * Track a new stub (right after fork) for terminate_stubs(). stub_unregister
 * says whether the caller took it out of the list, so owns its kill and reap.
 */
void stub_register(pid_t pid);
bool stub_unregister(pid_t pid);
/* CPU time of stub process pid, its exited threads included, in ns; 0 if it is gone. */
uint64_t stub_cpu_ns(pid_t pid);
/* CPU time of every stub, live (their clocks) and reaped (RUSAGE_CHILDREN), in ns. */
uint64_t stubs_cpu_ns(void);
/*
 * Does work other than pvx's keep about half a CPU or more busy (a busy
 * neighbour)? Judged over the last HOST_LOOK_NS or more; cheap to ask.
 */
bool host_crowded(void);
/* How many looks host_crowded made, and how many of them found the host crowded (PVX_HANDOFF_STATS). */
void host_crowded_stats(uint64_t *looks, uint64_t *crowded);
/* Reap the stub pid the caller killed (wflags: wait4's), with its usage in *ru if ru; true when ru was filled. */
bool stub_reap(pid_t pid, int wflags, struct rusage *ru);
/* pvx is terminating: SIGKILL and reap every stub, within ms (async-signal-safe). */
void terminate_stubs(int ms);

#endif

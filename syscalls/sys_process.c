// SPDX-License-Identifier: GPL-2.0
/*
 * Processes: fork/clone (new address space = new stub), vfork and other
 * CLONE_VM children (our address space), threads, execve, wait4/waitid,
 * process groups and sessions.
 */
#include <fcntl.h>
#include <limits.h>
#include <linux/sched.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "pvx/cred.h"
#include "pvx/exec.h"
#include "pvx/fs_share.h"
#include "pvx/kernel.h"
#include "pvx/log.h"
#include "pvx/rusage.h"
#include "pvx/sigframe.h"
#include "pvx/path.h"
#include "pvx/ptrace.h"
#include "sentry/platform/platform.h"
#include "sentry/kernel/task_run.h"
#include "syscalls/syscalls.h"

#define CLONE_SUPPORTED                                                                       \
	(CSIGNAL | CLONE_VM | CLONE_VFORK | CLONE_SETTLS | CLONE_PARENT_SETTID | CLONE_CHILD_SETTID | \
	 CLONE_CHILD_CLEARTID | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM | \
	 CLONE_DETACHED | CLONE_PARENT | CLONE_IO)

/* What a new task takes from its parent's registers and clone(2) arguments. */
static void clone_regs(struct task *c, const struct task *t, unsigned long flags, uint64_t stack, uint64_t ctid,
		       uint64_t tls)
{
	c->regs = t->regs;
	c->regs.rax = 0;
	if (stack)
		c->regs.rsp = stack;
	if (flags & CLONE_SETTLS)
		c->regs.fs_base = tls;
	if (flags & CLONE_CHILD_CLEARTID)
		c->clear_child_tid = ctid;
	c->sigmask = t->sigmask;
	c->sched_policy = t->sched_policy;
	memcpy(c->comm, t->comm, sizeof(c->comm));
	c->keepcaps = t->keepcaps;
}

/* CLONE_PARENT_SETTID and CLONE_CHILD_SETTID of a child sharing t's memory: id at both (a bad pointer is ignored). */
static void clone_settids(struct task *t, unsigned long flags, uint64_t ptid, uint64_t ctid, int id)
{
	if ((flags & CLONE_PARENT_SETTID) && copy_to_guest(t->mm, ptid, &id, sizeof(id)))
		pr_debug("clone: bad parent_tid pointer");
	if ((flags & CLONE_CHILD_SETTID) && copy_to_guest(t->mm, ctid, &id, sizeof(id)))
		pr_debug("clone: bad child_tid pointer");
}

/*
 * A new thread of our process: a new context in our address space (a stub
 * thread, see sentry/platform/), a task and a sentry thread of its own. It
 * shares our fd table and fs with CLONE_FILES and CLONE_FS, else has copies
 * (copy_files, copy_fs); its exit signal is none, whatever CSIGNAL says
 * (copy_process: "p->exit_signal = -1" for CLONE_THREAD).
 */
static long do_thread(struct task *t, unsigned long flags, uint64_t stack, uint64_t ptid, uint64_t ctid,
		      uint64_t tls)
{
	struct process *p = t->proc;
	struct platform_ctx *ctx;
	long r;

	if (flags & CLONE_VFORK) {
		pr_info("clone flags %#lx: a thread made with CLONE_VFORK is not supported", flags);
		return -ENOSYS;
	}
	if (p->group_exit)
		return -EAGAIN;
	struct task *c = task_new();
	if (!c)
		return -EAGAIN;
	r = p->as->ops->ctx_new(t->ctx, &ctx);
	if (r < 0) {
		task_free(c);
		return r == -EAGAIN ? r : -ENOMEM;
	}
	thread_attach(c, p);
	if (!(flags & CLONE_FILES))
		fd_pt_off(t->files, p->as);	/* one mm, two tables: passthrough off (seccomp_passthrough.md) */
	if (task_clone_shared(c, t, flags) < 0) {
		/* Its stub thread stays idle until the stub ends. */
		p->nr_threads--;
		task_free(c);
		return -ENOMEM;
	}
	c->ctx = ctx;
	clone_regs(c, t, flags, stack, ctid, tls);	/* the altstack is not inherited with CLONE_VM */
	cred_clone_task(c, t, false);
	int tid = c->tid;
	clone_settids(t, flags, ptid, ctid, tid);
	t->fork_done = false;
	t->fork_result = 0;
	c->clone_parent = t;
	int event = ptrace_clone_link(t, c, flags, true);
	r = task_start(c, task_thread);
	if (r < 0) {
		/* Its stub thread stays idle until the stub ends. */
		p->nr_threads--;
		task_free(c);
		return r;
	}
	while (!t->fork_done)
		sentry_wait_busy();
	if (t->fork_result < 0)
		return t->fork_result;
	ptrace_clone_event(t, event, tid);
	return tid;
}

/* Undo process_clone for a child that never ran (task_free lets go of its files, fs and handlers). */
static void process_unclone(struct task *c)
{
	task_free(c);
}

/*
 * A new process for clone(2) without CLONE_THREAD: its own pid, our fds,
 * cwd and umask, and signal dispositions, shared or copied as CLONE_FILES,
 * CLONE_FS and CLONE_SIGHAND say, credentials and mask. The
 * caller gives it memory (a copy, or ours with CLONE_VM). NULL: -EAGAIN or
 * -ENOMEM in *err.
 */
static struct task *process_clone(struct task *t, unsigned long flags, uint64_t stack, uint64_t ctid, uint64_t tls,
				  long *err)
{
	struct task *c = task_new();

	*err = -EAGAIN;
	if (!c)
		return NULL;
	if (!process_new(c)) {
		task_free(c);
		return NULL;
	}
	c->proc->ppid = flags & CLONE_PARENT ? t->proc->ppid : t->pid;	/* CLONE_PARENT: our parent's child */
	c->proc->pgid = t->proc->pgid;
	c->proc->sid = t->proc->sid;
	clone_regs(c, t, flags, stack, ctid, tls);
	/*
	 * sigaltstack(2): "A child created via fork(2) inherits ... the alternate
	 * signal stack settings"; copy_process() resets them for CLONE_VM alone.
	 */
	if ((flags & (CLONE_VM | CLONE_VFORK)) != CLONE_VM) {
		c->altstack_sp = t->altstack_sp;
		c->altstack_size = t->altstack_size;
		c->altstack_flags = t->altstack_flags;
	}
	c->proc->exe = t->proc->exe ? strdup(t->proc->exe) : NULL;
	c->proc->exe_dev = t->proc->exe_dev;
	c->proc->exe_ino = t->proc->exe_ino;
	c->proc->cmdline = t->proc->cmdline ? malloc(t->proc->cmdline_len + 1) : NULL;
	c->proc->cmdline_len = c->proc->cmdline ? t->proc->cmdline_len : 0;
	if (c->proc->cmdline)
		memcpy(c->proc->cmdline, t->proc->cmdline, t->proc->cmdline_len);
	c->proc->personality = t->proc->personality;
	c->proc->undumpable = t->proc->undumpable;
	c->proc->thp_disable = t->proc->thp_disable;
	cred_fork(c->proc, t->proc);
	cred_clone_task(c, t, true);
	fd_pt_off(t->files, t->proc->as);	/* a second process: passthrough off (seccomp_passthrough.md) */
	if (task_clone_shared(c, t, flags) < 0) {
		process_unclone(c);
		*err = -ENOMEM;
		return NULL;
	}
	return c;
}

/*
 * clone(CLONE_VM) of a process -- vfork(2), posix_spawn, Go's os/exec: the
 * child runs in our address space (a new context there, as a thread's) as
 * a process of its own, until its execve gives it a new one or it exits
 * (sentry/kernel/mm_share.c). With CLONE_VFORK "the execution of the
 * calling process is suspended until the child releases its virtual
 * memory resources via a call to execve(2) or _exit(2)"; Linux waits
 * killably: only SIGKILL (or the end of the process) ends the wait early.
 */
static long do_vm_clone(struct task *t, unsigned long flags, uint64_t stack, uint64_t ptid, uint64_t ctid,
			uint64_t tls)
{
	struct platform_ctx *ctx;
	long r;

	if (t->proc->group_exit)
		return -EAGAIN;
	struct task *c = process_clone(t, flags, stack, ctid, tls, &r);
	if (!c)
		return r;
	r = t->proc->as->ops->ctx_new(t->ctx, &ctx);
	if (r < 0) {
		process_unclone(c);
		return r == -EAGAIN ? r : -ENOMEM;
	}
	mm_drop(c->proc->mm);	/* the empty one of process_new */
	mm_share(c->proc, t->proc);
	c->mm = c->proc->mm;
	c->ctx = ctx;
	int pid = c->pid;
	/* Written before the child runs: it shares this memory, and the parent of a vfork sleeps. */
	clone_settids(t, flags, ptid, ctid, pid);
	t->fork_done = false;
	t->fork_result = 0;
	c->clone_parent = t;
	/* vfork: asleep until the child execs or exits, from before it can run (/proc shows D). */
	if (flags & CLONE_VFORK) {
		c->proc->vfork_parent = t->tid;	/* the thread, which need not be the leader */
		t->in_vfork = c->pid;
	}
	int event = ptrace_clone_link(t, c, flags, false);
	r = task_start(c, task_thread);
	if (r < 0) {
		/* Its stub thread stays idle until the stub ends; the context goes with the stub. */
		t->in_vfork = 0;
		c->ctx = NULL;
		c->proc->as = NULL;
		process_unclone(c);	/* and lets go of our mm (task_free) */
		return r;
	}
	while (!t->fork_done)
		sentry_wait();
	if (t->fork_result < 0) {
		t->in_vfork = 0;
		return t->fork_result;	/* the child exits by itself, without a trace */
	}
	ptrace_clone_event(t, event, pid);
	/* vfork_release() ends the wait when the child execs or exits (maybe already). */
	while (t->in_vfork && !t->exiting)
		sentry_wait();
	t->in_vfork = 0;
	return pid;
}

/*
 * clone(2): a thread, a CLONE_VM process, or else a new task with a new
 * stub holding a copy of our memory (mm/fork.c). With CLONE_VFORK we sleep
 * until the child execs or exits.
 */
static long do_fork(struct task *t, unsigned long flags, uint64_t stack, uint64_t ptid, uint64_t ctid,
		    uint64_t tls, uint64_t upidfd)
{
	long r, pidfd = -1;

	/* copy_process()'s own checks first. */
	if (((flags & CLONE_THREAD) && !(flags & CLONE_SIGHAND)) || ((flags & CLONE_SIGHAND) && !(flags & CLONE_VM)) ||
	    ((flags & CLONE_FS) && (flags & CLONE_NEWNS)))
		return -EINVAL;
	if ((flags & CLONE_PIDFD) && (flags & (CLONE_THREAD | CLONE_DETACHED)))
		return -EINVAL;
	if ((flags & CLONE_PARENT) && !(flags & CLONE_THREAD) && t->pid == 1)
		return -EINVAL;	/* the pid namespace's init (SIGNAL_UNKILLABLE) has no parent to share */	/* a pidfd names a process; CLONE_DETACHED is reserved with it */
	/* Namespaces: the guest never holds CAP_SYS_ADMIN (create_new_namespaces: EPERM); no CONFIG_USER_NS. */
	if ((flags & CLONE_NEWUSER) || ((flags & CLONE_THREAD) && (flags & CLONE_NEWPID)))
		return -EINVAL;
	if (flags & (CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWNET | CLONE_NEWPID | CLONE_NEWCGROUP))
		return -EPERM;
	if (flags & ~(CLONE_SUPPORTED | CLONE_PIDFD)) {
		pr_info("clone flags %#lx are not supported yet", flags & ~CLONE_SUPPORTED);
		return -ENOSYS;
	}
	if ((r = cred_nproc_check(t)) < 0)
		return r;
	if (flags & CLONE_THREAD)
		return do_thread(t, flags, stack, ptid, ctid, tls);
	if (flags & CLONE_VM) {
		r = do_vm_clone(t, flags, stack, ptid, ctid, tls);
		if (r > 0 && (flags & CLONE_PIDFD) && pidfd_for_child(t, (int)r, upidfd))
			pr_debug("clone: no pidfd for the CLONE_VM child");
		return r;
	}
	struct task *c = process_clone(t, flags, stack, ctid, tls, &r);
	if (!c)
		return r;
	/* CLONE_PIDFD: made and stored before the child runs, so it names this child whatever comes next. */
	if ((flags & CLONE_PIDFD) && (pidfd = pidfd_for_child(t, c->pid, upidfd)) < 0) {
		process_unclone(c);
		return pidfd;
	}

	/*
	 * Our stub forks itself, here, so the child's memory is our memory of
	 * now (mm_fork); or else the child's thread builds its stub and copies
	 * our memory while we sleep.
	 */
	struct addr_space *fas = NULL;
	if ((r = mm_fork(c->mm, t->mm, &fas)) < 0) {
		process_unclone(c);
		if (flags & CLONE_PIDFD)
			(void)!fd_close(t->files, (int)pidfd);
		return r;
	}
	c->fork_as = fas;
	if (!fas && (r = mm_fork_prepare(t->mm, false)) < 0)
		pr_debug("fork: cannot open up unreadable memory: %ld", r);
	/* A new stub starts with the initial FPU state: the child's thread loads ours (fork_fpu_copy). */
	if (!fas && t->proc->as->ops->fpu_get && (c->fork_fpu = aligned_alloc(64, K_FPSTATE_MAX)))
		c->fork_fpu_len = t->proc->as->ops->fpu_get(t->ctx, c->fork_fpu, K_FPSTATE_MAX);
	t->fork_done = false;
	t->fork_result = 0;
	c->fork_parent = t;
	if (flags & CLONE_CHILD_SETTID)
		c->set_child_tid = ctid;	/* the child writes it before it runs (sentry/kernel/task.c) */
	int pid = c->pid;
	/* clone(CLONE_VFORK) without CLONE_VM: a copy, and we sleep until the child execs or exits. */
	if (flags & CLONE_VFORK) {
		c->proc->vfork_parent = t->tid;	/* the thread, which need not be the leader */
		t->in_vfork = c->pid;
	}
	int event = ptrace_clone_link(t, c, flags, false);
	r = task_start(c, task_thread);
	if (r < 0) {
		t->in_vfork = 0;
		if (fas) {	/* its VMAs go with its mm (process_unclone) */
			fas->ops->as_release(fas, NULL);
			c->fork_as = NULL;
		}
		free(c->fork_fpu);
		c->fork_fpu = NULL;
		if (!fas && mm_fork_prepare(t->mm, true) < 0)
			pr_warn("fork: could not restore protections in the parent");
		process_unclone(c);
		if (flags & CLONE_PIDFD)
			(void)!fd_close(t->files, (int)pidfd);
		return r;
	}
	while (!t->fork_done)
		sentry_wait_busy();
	if (!fas && mm_fork_prepare(t->mm, true) < 0)
		pr_warn("fork: could not restore protections in the parent");
	if (t->fork_result < 0) {
		pr_warn("fork: setting up the child failed: %s", strerror((int)-t->fork_result));
		t->in_vfork = 0;
		if (flags & CLONE_PIDFD)
			(void)!fd_close(t->files, (int)pidfd);
		return t->fork_result;	/* the child thread exits by itself */
	}
	if ((flags & CLONE_PARENT_SETTID) && copy_to_guest(t->mm, ptid, &pid, sizeof(pid)))
		pr_debug("clone: bad parent_tid pointer");
	ptrace_clone_event(t, event, pid);
	/* vfork_release() ends the wait when the child execs or exits (maybe already). */
	while (t->in_vfork && !t->exiting)
		sentry_wait();
	t->in_vfork = 0;
	return pid;
}

long sys_clone(struct task *t, const long a[6])
{
	/* x86-64 order: flags, stack, parent_tid, child_tid, tls; CLONE_PIDFD's fd goes to parent_tid too. */
	unsigned long flags = (unsigned long)a[0];

	if ((flags & CLONE_PIDFD) && (flags & CLONE_PARENT_SETTID))
		return -EINVAL;
	return do_fork(t, flags, (uint64_t)a[1], (uint64_t)a[2], (uint64_t)a[3], (uint64_t)a[4], (uint64_t)a[2]);
}

/* clone3(2): struct clone_args; the stack is its lowest address and a size. */
long sys_clone3(struct task *t, const long a[6])
{
	struct {
		uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls, set_tid,
			set_tid_size, cgroup;
	} ca = { 0 };
	size_t size = (size_t)a[1];

	if (size > 4096)
		return -E2BIG;
	if (size < 64)
		return -EINVAL;
	long r = copy_from_guest(t->mm, &ca, (uint64_t)a[0], MIN(size, sizeof(ca)));
	if (r)
		return r;
	/* copy_struct_from_user(): a larger struct than ours is fine only if the rest is zero. */
	for (size_t at = sizeof(ca); at < size; at += 8) {
		uint64_t rest = 0;
		if ((r = copy_from_guest(t->mm, &rest, (uint64_t)a[0] + at, MIN(8, size - at))))
			return r;
		if (rest)
			return -E2BIG;
	}
	/* copy_clone_args_from_user(): set_tid's array, MAX_PID_NS_LEVEL (32) long at most. */
	uint32_t set_tid[32];
	if (ca.set_tid_size > 32 || (!ca.set_tid && ca.set_tid_size) || (ca.set_tid && !ca.set_tid_size))
		return -EINVAL;
	if (ca.set_tid_size && (r = copy_from_guest(t->mm, set_tid, ca.set_tid, ca.set_tid_size * sizeof(set_tid[0]))))
		return r;
	if (ca.exit_signal > 64 || (ca.flags & CSIGNAL) || ((ca.stack == 0) != (ca.stack_size == 0)))
		return -EINVAL;
	if ((ca.flags & CLONE_PIDFD) && (ca.flags & CLONE_PARENT_SETTID) && ca.pidfd == ca.parent_tid)
		return -EINVAL;
	if (ca.cgroup || (ca.flags & 0x200000000ULL)) {
		pr_info("clone3 with a cgroup is not supported");
		return -ENOSYS;
	}
	/*
	 * alloc_pid() with set_tid: one pid namespace (level 0), so one tid at
	 * most; it must be a pid (1 .. pid_max - 1); and choosing it needs
	 * CAP_CHECKPOINT_RESTORE or CAP_SYS_ADMIN, which no guest holds: EPERM.
	 */
	if (ca.set_tid_size) {
		if (ca.set_tid_size > 1 || set_tid[0] < 1 || set_tid[0] > PVX_MAX_TASKS)
			return -EINVAL;
		return -EPERM;
	}
	return do_fork(t, ca.flags | ca.exit_signal, ca.stack ? ca.stack + ca.stack_size : 0, ca.parent_tid,
		       ca.child_tid, ca.tls, ca.pidfd);
}

long sys_fork(struct task *t, const long a[6] __unused)
{
	return do_fork(t, SIGCHLD, 0, 0, 0, 0, 0);
}

long sys_vfork(struct task *t, const long a[6] __unused)
{
	return do_fork(t, CLONE_VM | CLONE_VFORK | SIGCHLD, 0, 0, 0, 0, 0);
}

#define ARG_MAX_GUEST (256 * 1024)	/* bytes of argv+envp strings, like our stack image */

static void free_strv(char **v)
{
	if (v)
		for (char **p = v; *p; p++)
			free(*p);
	free(v);
}

/*
 * A copy of guest memory from base to the end of its page: the pointers
 * of argv/envp sit side by side, and so do their strings (on the stack, or
 * in a shell's heap), so one read serves many of them instead of one read
 * each (get_strv keeps one window for each). Like each read it replaces,
 * it never crosses a page: a fault is the fault of the address asked for.
 */
struct guest_window {
	uint64_t base;
	size_t len;
	char buf[PAGE_SIZE];
};

/* The copy of guest address addr onwards (*avail bytes of it), read now unless w already holds it; NULL: -EFAULT. */
static const char *window_at(struct task *t, struct guest_window *w, uint64_t addr, size_t *avail, long *err)
{
	if (addr < w->base || addr >= w->base + w->len) {
		size_t chunk = PAGE_SIZE - (addr & ~PAGE_MASK);
		if ((*err = copy_from_guest(t->mm, w->buf, addr, chunk)))
			return NULL;
		w->base = addr;
		w->len = chunk;
	}
	*avail = w->base + w->len - addr;
	return w->buf + (addr - w->base);
}

/* One pointer of the array (8 bytes; ones that cross a page are read alone). */
static long window_ptr(struct task *t, struct guest_window *w, uint64_t addr, uint64_t *p)
{
	size_t avail;
	long err;
	const char *c = window_at(t, w, addr, &avail, &err);

	if (!c)
		return err;
	if (avail < sizeof(*p))
		return copy_from_guest(t->mm, p, addr, sizeof(*p));
	memcpy(p, c, sizeof(*p));
	return 0;
}

/* strncpy_from_guest() of a string the window ends inside, else the call itself. */
static long window_str(struct task *t, struct guest_window *w, char *dst, uint64_t src, size_t max)
{
	size_t avail;
	long err;
	const char *c = window_at(t, w, src, &avail, &err);

	if (!c)
		return err;
	const char *nul = memchr(c, 0, MIN(avail, max));
	if (!nul)
		return strncpy_from_guest(t->mm, dst, src, max);
	memcpy(dst, c, (size_t)(nul - c) + 1);
	return nul - c;
}

/* Copy a NULL-terminated guest array of strings (argv/envp). */
static long get_strv(struct task *t, uint64_t uarr, char ***out, size_t *budget)
{
	size_t n = 0, cap = 16;
	char **v = calloc(cap, sizeof(*v));
	char buf[PVX_PATH_MAX * 4];
	cleanup_free struct guest_window *w = calloc(2, sizeof(*w));	/* pointers, strings */

	if (!v || !w) {
		free(v);
		return -ENOMEM;
	}
	for (; uarr; n++) {
		uint64_t p;
		long r = window_ptr(t, &w[0], uarr + n * 8, &p);
		if (r)
			goto fail_r;
		if (!p)
			break;
		r = window_str(t, &w[1], buf, p, sizeof(buf));
		if (r < 0 || (size_t)r + 1 > *budget) {
			r = r < 0 && r != -ENAMETOOLONG ? r : -E2BIG;
			goto fail_r;
		}
		*budget -= (size_t)r + 1;
		if (n + 2 > cap) {
			char **nv = realloc(v, (cap *= 2) * sizeof(*v));
			if (!nv) {
				r = -ENOMEM;
				goto fail_r;
			}
			v = nv;
		}
		v[n] = strdup(buf);
		v[n + 1] = NULL;
		continue;
fail_r:
		free_strv(v);
		return r;
	}
	v[n] = NULL;
	*out = v;
	return 0;
}

/*
 * execve(2)/execveat(2): on success the new image starts; "on error, -1 is
 * returned". execveat: "EINVAL Invalid flag specified in flags". The path,
 * argv and envp are copied from guest memory once, here, and only the
 * copies are used: a vfork child's memory is its parent's, which the
 * parent's other threads may change at any time.
 */
static long do_execveat(struct task *t, int dirfd, uint64_t upath, uint64_t uargv, uint64_t uenvp, int flags)
{
	char path[PVX_PATH_MAX];
	char **argv = NULL, **envp = NULL;
	size_t budget = ARG_MAX_GUEST;
	long r;

	if (flags & ~(AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW))
		return -EINVAL;
	r = strncpy_from_guest(t->mm, path, upath, sizeof(path));
	if (r < 0)
		return r;
	if (!path[0] && !(flags & AT_EMPTY_PATH))
		return -ENOENT;
	if ((r = get_strv(t, uargv, &argv, &budget)) || (r = get_strv(t, uenvp, &envp, &budget)))
		goto out;
	if (!argv[0] && !(argv[0] = strdup(""))) {	/* Linux 5.18+: an empty argv becomes { "" }, argc 1 */
		r = -ENOMEM;
		goto out;
	}
	/* de_thread(): the other threads end first; the caller becomes the leader. */
	if (t->proc->nr_threads > 1 || t->proc->leader != t) {
		for (struct task *o = task_next(NULL); o; o = task_next(o))
			if (o->proc == t->proc && o != t && !o->exiting && o->state == TASK_LIVE) {
				o->exiting = true;
				o->killed = true;
				o->exit_status = SIGKILL;
				task_interrupt(o, false);
			}
		sentry_wake_all();	/* a thread asleep in the sentry (pause, a wait) sees it is killed */
		while (t->proc->nr_threads > 1 && !t->exiting)
			sentry_wait();
		if (!t->exiting && t->proc->leader != t) {
			task_take_leader(t);
			/* ptrace: the old stub's main thread is traced by that thread until it is gone. */
			while (!t->proc->old_leader_gone && !t->exiting)
				sentry_wait();
		}
		if (t->exiting) {
			r = -EINTR;
			goto out;
		}
	}
	int old_tid = t->tid;
	uint64_t nr = t->regs.orig_rax;
	r = task_execveat(t, dirfd, path, flags, argv, envp, NULL);
	if (r == 0) {
		vfork_release(t);
		t->regs.rax = 0;	/* what a tracer's GETREGS shows at the exec stop */
		t->regs.orig_rax = nr;
		ptrace_exec(t, old_tid);
	}
out:
	free_strv(argv);
	free_strv(envp);
	return r;
}

long sys_execve(struct task *t, const long a[6])
{
	return do_execveat(t, AT_FDCWD, (uint64_t)a[0], (uint64_t)a[1], (uint64_t)a[2], 0);
}

long sys_execveat(struct task *t, const long a[6])
{
	return do_execveat(t, (int)a[0], (uint64_t)a[1], (uint64_t)a[2], (uint64_t)a[3], (int)a[4]);
}

/* Does child c match wait4's pid argument for parent t? */
static bool wait_match(const struct task *t, const struct task *c, long pid)
{
	if (!c->proc || c->proc->leader != c || c->proc->ppid != t->pid)
		return false;
	if (pid > 0)
		return c->pid == pid;
	if (pid == 0)
		return c->proc->pgid == t->proc->pgid;
	if (pid < -1)
		return c->proc->pgid == -pid;
	return true;
}

/*
 * What wait found of a child (wait_consider_task): its pid, wait status,
 * and for waitid the si_code and si_status.
 */
struct wait_report {
	int status, code, child_sig;
};

/*
 * Find a child to report: a zombie (reaped unless nowait) with WEXITED, a
 * stop not yet reported with WUNTRACED (WSTOPPED), a continue with
 * WCONTINUED; its rusage goes to ru. Returns its pid, 0 for WNOHANG with
 * nothing to report, -ECHILD when there is no such child at all. A
 * stopped child is not reaped by a plain wait: it waits on.
 */
static long wait_common(struct task *t, long pid, int options, bool nowait, struct wait_report *w, struct rusage *ru)
{
	for (;;) {
		bool any = false;
		for (struct task *c = task_next(NULL); c; c = task_next(c)) {
			bool traced = ptrace_wait_match(t, c, pid);
			if (traced) {	/* a tracee: its stops and (for a tracer not its parent) its exit */
				any = true;
				w->code = ptrace_wait_report(c, nowait, &w->status, &w->child_sig);
				if (w->code) {
					int tid = c->tid;
					usage_reap(t->proc, c->proc, true, ru);
					if (w->code != CLD_TRAPPED && !nowait)
						task_zombie_untraced(c);	/* its exit, reaped: the parent's turn (may free c) */
					return tid;
				}
			}
			if (!wait_match(t, c, pid))
				continue;
			/* A zombie without WEXITED is not something to wait for: ECHILD if alone (wait_task_zombie). */
			any |= c->state != TASK_ZOMBIE || (options & WEXITED);
			if (c->state == TASK_ZOMBIE && (c->ptrace_exit_report || c->proc->zombie_threads))
				continue;	/* its tracer's to reap first, or its traced threads (task_exit): wait on */
			int cpid = c->pid;
			if (c->state != TASK_ZOMBIE) {
				if (traced)
					continue;	/* its tracer is its parent: the ptrace reports stand for the stops */
				w->code = jobctl_wait_report(c->proc, options, nowait, &w->status, &w->child_sig);
				if (!w->code)
					continue;
				usage_reap(t->proc, c->proc, true, ru);
				return cpid;
			}
			if (!(options & WEXITED))
				continue;
			int st = w->status = c->exit_status;
			w->code = WIFEXITED(st) ? CLD_EXITED : WCOREDUMP(st) ? CLD_DUMPED : CLD_KILLED;
			w->child_sig = WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st);
			usage_reap(t->proc, c->proc, nowait, ru);
			if (!nowait)
				task_free(c);
			return cpid;
		}
		if (!any)
			return -ECHILD;
		if (options & WNOHANG)
			return 0;
		if (signal_pending(t))
			return -ERESTARTSYS;
		sentry_wait();
	}
}

/*
 * wait4(2): the rusage is the child's with its own waited-for children's,
 * written only when a child was reported. WUNTRACED reports a stopped
 * child as (sig << 8) | 0x7f, WCONTINUED a continued one as 0xffff.
 */
long sys_wait4(struct task *t, const long a[6])
{
	struct wait_report w = { 0 };
	struct rusage ru;
	long r;

	if (a[2] & ~(WNOHANG | WUNTRACED | WCONTINUED | __WALL | __WCLONE | __WNOTHREAD))
		return -EINVAL;
	if ((int)a[0] == INT_MIN)	/* kernel_wait4(): "-INT_MIN is not defined" */
		return -ESRCH;
	r = wait_common(t, (int)a[0], (int)a[2] | WEXITED, false, &w, &ru);
	if (r > 0 && a[1] && copy_to_guest(t->mm, (uint64_t)a[1], &w.status, sizeof(w.status)))
		return -EFAULT;
	if (r > 0 && a[3] && copy_to_guest(t->mm, (uint64_t)a[3], &ru, sizeof(ru)))
		return -EFAULT;
	return r;
}

/*
 * waitid(2): P_ALL, P_PID, P_PGID with any of WEXITED, WSTOPPED and
 * WCONTINUED; fills the siginfo of the child (CLD_EXITED, CLD_KILLED,
 * CLD_STOPPED, CLD_CONTINUED), and the raw syscall's fifth argument with
 * its rusage as wait4 does (only when a child was found). WNOWAIT leaves
 * what it reports to be reported again.
 */
long sys_waitid(struct task *t, const long a[6])
{
	int idtype = (int)a[0], options = (int)a[3];
	bool nonblock = false;
	long pid;

	if (!(options & (WEXITED | WSTOPPED | WCONTINUED)) ||
	    (options & ~(WNOHANG | WEXITED | WSTOPPED | WCONTINUED | WNOWAIT | __WALL | __WCLONE | __WNOTHREAD)))
		return -EINVAL;
	if (idtype == P_ALL)
		pid = -1;
	else if (idtype == P_PID && (int)a[1] > 0)
		pid = (int)a[1];
	else if (idtype == P_PGID && (int)a[1] >= 0)
		pid = (int)a[1] ? -(int)a[1] : 0;
	else if (idtype == P_PIDFD && (pid = pidfd_wait_pid(t, (int)a[1], &nonblock)) < 0)
		return pid;
	else if (idtype != P_PIDFD)
		return -EINVAL;
	struct rusage ru;
	struct wait_report w = { 0 };
	long r = wait_common(t, pid, options | (nonblock ? WNOHANG : 0), options & WNOWAIT, &w, &ru);
	if (r < 0)
		return r;
	if (r == 0 && nonblock && !(options & WNOHANG))
		return -EAGAIN;	/* kernel_waitid: an O_NONBLOCK pidfd whose process has not exited */
	if (r > 0 && a[4] && copy_to_guest(t->mm, (uint64_t)a[4], &ru, sizeof(ru)))
		return -EFAULT;
	if (a[2]) {
		siginfo_t si;
		memset(&si, 0, sizeof(si));
		if (r > 0) {
			si.si_signo = SIGCHLD;
			si.si_pid = (pid_t)r;
			si.si_uid = sandbox.uid;
			si.si_code = w.code;
			si.si_status = w.child_sig;
		}
		if (copy_to_guest(t->mm, (uint64_t)a[2], &si, sizeof(si)))
			return -EFAULT;
	}
	return 0;
}

static struct task *task_or_self(struct task *t, int pid)
{
	struct task *p = pid == 0 ? t : task_find((int)pid);

	return p && p->state != TASK_ZOMBIE ? p : NULL;
}

long sys_getpgid(struct task *t, const long a[6])
{
	struct task *p = task_or_self(t, (int)a[0]);

	return p ? p->proc->pgid : -ESRCH;
}

long sys_getpgrp(struct task *t, const long a[6] __unused)
{
	return t->proc->pgid;
}

long sys_getsid(struct task *t, const long a[6])
{
	struct task *p = task_or_self(t, (int)a[0]);

	return p ? p->proc->sid : -ESRCH;
}

/* setpgid(2): ourselves or a child, within our session; EPERM for a session leader. */
long sys_setpgid(struct task *t, const long a[6])
{
	struct task *p = task_or_self(t, (int)a[0]);
	int pgid = (int)a[1] ? (int)a[1] : (p ? p->pid : 0);

	if ((int)a[1] < 0 || (int)a[0] < 0)
		return -EINVAL;
	if (!p || (p != t && p->proc->ppid != t->pid))
		return -ESRCH;
	if (p != t && p->proc->execed)
		return -EACCES;	/* "the child has already performed an execve(2)" */
	if (p->proc->sid != t->proc->sid || p->pid == p->proc->sid)
		return -EPERM;
	if (pgid != p->pid) {
		bool exists = false;
		for (struct task *o = task_next(NULL); o; o = task_next(o))
			exists |= o->proc->pgid == pgid && o->proc->sid == t->proc->sid && o->state != TASK_ZOMBIE;
		if (!exists)
			return -EPERM;
	}
	p->proc->pgid = pgid;
	return 0;
}

/* setsid(2): "EPERM The process group ID of any process equals the PID of the calling process." */
long sys_setsid(struct task *t, const long a[6] __unused)
{
	for (struct task *o = task_next(NULL); o; o = task_next(o))
		if (o->proc->pgid == t->pid && o->state != TASK_ZOMBIE)
			return -EPERM;
	t->proc->sid = t->proc->pgid = t->pid;
	return t->proc->sid;
}

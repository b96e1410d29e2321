/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The guest kernel's objects, a task and its process, and the run's
 * configuration: the types every layer from sentry/fs/ up may use. What
 * the kernel does with them is declared in pvx/kernel.h and its family.
 */
#ifndef PVX_TASK_H
#define PVX_TASK_H

#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/resource.h>
#include "pvx/common.h"
#include "pvx/file.h"
#include "pvx/mm.h"
#include "pvx/regs.h"
#include "pvx/sandbox.h"

enum task_state {
	TASK_STARTING,	/* its thread is building the address space (fork, first exec) */
	TASK_LIVE,
	TASK_ZOMBIE,	/* exited, waiting for its parent's wait4 */
};

struct task;
struct addr_space;
struct platform_ctx;
struct rusage;
struct key;
struct ptrace_fpu_req;

/*
 * What guest code used of the host (sentry/kernel/rusage.c): CPU time, page
 * faults and the peak resident set, as getrusage(2) reports them.
 */
struct guest_usage {
	uint64_t utime_us, stime_us;
	uint64_t minflt, majflt;
	uint64_t maxrss_kb;
};

/*
 * A signal's siginfo fields pvx keeps while it is pending. One the guest
 * gave (rt_sigqueueinfo) is raw: its si_errno and the kernel_siginfo union
 * as they came, handed back unchanged; code is its si_code.
 */
struct sig_info {
	int code, pid, status;
	uint64_t addr;
	bool raw;
	int32_t errno_;
	uint64_t fields[4];
};

/*
 * Pending signals (Linux's struct sigpending): the set, and one siginfo
 * record per queued instance, oldest first (sentry/kernel/sigqueue.c). A
 * signal in the set without a record lost its siginfo (queue full).
 */
struct sigq_rec;
struct sigpend {
	uint64_t set;
	struct sigq_rec *head, *tail;
};

struct sigaction_rec {
	uint64_t handler, flags, restorer, mask;
};

/*
 * A working directory and umask (Linux's fs_struct): a task's, shared by
 * clone(CLONE_FS) between threads or processes, counted by users
 * (sentry/kernel/fs_share.c).
 */
struct fs_struct {
	int users;
	int cwd_fd;		/* host O_PATH fd of the working directory (inside the root) */
	unsigned umask;		/* file mode creation mask (umask(2)) */
};

/*
 * Signal dispositions (Linux's sighand_struct): every thread of a process
 * shares its process's, and clone(CLONE_SIGHAND | CLONE_VM) processes
 * share one, counted by users (sentry/kernel/fs_share.c).
 */
struct sighand {
	int users;
	struct sigaction_rec action[64];
};

/*
 * What the threads of a process share (Linux's signal_struct and mm in one;
 * the fd table and fs_struct are each task's, shared as clone's flags say).
 * Lives as long as its leader task.
 */
struct process {
	int pid;		/* the thread group id: the leader's tid */
	int ppid, pgid, sid;
	struct task *leader;
	int nr_threads;		/* threads that have not exited yet */
	int zombie_threads;	/* exited threads a tracer has still to reap (the leader's zombie waits for them) */
	bool group_exit;	/* exit_group or a fatal signal: every thread ends */
	int exit_status;	/* wait status of the process, once group_exit */
	struct addr_space *as;	/* = mm->as */
	struct mm *mm;		/* shared with a vfork child until it execs or exits (mm->users) */
	char *exe;		/* guest path of the running program (/proc/self/exe) */
	dev_t exe_dev;		/* and its object, which no guest may open for writing (ETXTBSY) */
	ino_t exe_ino;
	char *cmdline;		/* argv, NUL-separated (/proc/self/cmdline) */
	size_t cmdline_len;
	unsigned personality;	/* personality(2): inherited by fork, kept by execve */
	bool undumpable;	/* prctl(PR_SET_DUMPABLE, 0): no core dump; inherited by fork, cleared by execve */
	bool thp_disable;	/* prctl(PR_SET_THP_DISABLE): recorded (pvx makes no huge pages); inherited by fork */
	bool child_subreaper;	/* prctl(PR_SET_CHILD_SUBREAPER): orphaned descendants become our children */
	uint64_t start_ticks;	/* when it was made, in clock ticks since boot (/proc/PID/stat starttime) */
	struct rlimit rlim[16];	/* RLIM_NLIMITS: getrlimit/setrlimit (sentry/kernel/cred.c) */
	int nice;		/* setpriority(2) */
	unsigned membarrier_reg;	/* membarrier(2) registrations: MEMBARRIER_CMD_REGISTER_* bits (not kept by fork) */
	struct sighand *sighand;	/* shared by CLONE_SIGHAND */
	struct sigaction_rec *sigactions;	/* = sighand->action */
	struct sigpend pending;	/* process-directed signals not yet taken by a thread */
	/*
	 * Job control (sentry/kernel/jobctl.c), Linux's signal_struct fields:
	 * threads yet to stop in the group stop under way, the stop signal for
	 * wait (group_exit_code: 0 once reported), SIGNAL_STOP_STOPPED and
	 * SIGNAL_STOP_CONTINUED (reported once to WCONTINUED).
	 */
	int group_stop_count;
	int stop_code;
	int stop_sig;		/* the stop's signal, kept after wait reported it (ptrace's group-stop code) */
	bool stop_stopped, stop_continued;
	uint64_t itimer_deadline;	/* ITIMER_REAL: CLOCK_MONOTONIC ns, 0 = off (sentry/kernel/timer.c) */
	uint64_t itimer_interval;
	/*
	 * ITIMER_VIRTUAL [0] and ITIMER_PROF [1]: when the process's user (and
	 * for PROF, system) CPU time reaches expires_us it gets SIGVTALRM or
	 * SIGPROF; 0 = off (sentry/kernel/timer.c polls them every 10 ms).
	 */
	struct { uint64_t expires_us, interval_us; } cpu_itimer[2];
	struct ptimer *ptimers;	/* timer_create(2) timers, PVX_MAX_PTIMERS of them (syscalls/sys_timer.c) */
	bool execed;		/* has called execve (setpgid(2) EACCES from the parent) */
	int vfork_parent;	/* tid of the parent thread sleeping in our vfork, or 0 */
	bool old_leader_gone;	/* execve from a thread: the old leader's sentry thread left */
	struct guest_usage usage_gone;	/* of exited threads (vmexec) and of stubs left at execve or exit */
	struct guest_usage usage_children;	/* reaped children's, with their own children's (RUSAGE_CHILDREN) */
	struct key *process_keyring;	/* KEY_SPEC_PROCESS_KEYRING once made (sentry/kernel/keys.c) */
};

#define PVX_CPUMASK_WORDS 16	/* 1024 CPUs: sched_setaffinity's masks */

/* A guest thread. */
struct task {
	int pid, tid;		/* guest pid space: the first process is 1; pid = tgid */
	enum task_state state;
	struct process *proc;
	struct mm *mm;		/* proc->mm */
	struct fdtable *files;	/* shared by CLONE_FILES (its users count them) */
	struct fs_struct *fs;	/* shared by CLONE_FS */
	struct platform_ctx *ctx;	/* how this thread runs guest code */
	char comm[16];		/* prctl(PR_SET_NAME) */
	bool keepcaps;		/* prctl(PR_SET_KEEPCAPS): the thread's, kept by clone, cleared by execve */
	int pdeath_signal;	/* prctl(PR_SET_PDEATHSIG): sent to our process when its parent dies; 0 in a child */
	uint64_t timer_slack_ns;	/* prctl(PR_SET_TIMERSLACK): recorded, /proc/PID/timerslack_ns */
	uint64_t default_timer_slack_ns;	/* what PR_SET_TIMERSLACK 0 goes back to: the creator's slack */
	struct pvx_regs regs;
	uint64_t clear_child_tid;
	uint64_t set_child_tid;	/* fork with CLONE_CHILD_SETTID: written by the child before it runs (schedule_tail) */
	uint64_t robust_list;
	int sched_policy;	/* SCHED_OTHER, _BATCH or _IDLE (syscalls/sys_cred.c) */
	bool sched_reset_on_fork;	/* SCHED_RESET_ON_FORK: a fork child's negative nice goes back to 0 */
	uint64_t cpumask[PVX_CPUMASK_WORDS];	/* sched_setaffinity's; all 0: the CPUs pvx started on (cred.c) */
	int ioprio;		/* ioprio_set(2)'s value, once has_ioprio (an io_context, in Linux's words) */
	bool has_ioprio;
	const struct mpol *mempolicy;	/* set_mempolicy(2)'s (pvx/numa.h), kept by clone and execve; NULL: MPOL_DEFAULT */
	/* Keyrings (sentry/kernel/keys.c), as Linux's cred: the thread's own, the session's (shared by fork), */
	struct key *thread_keyring, *session_keyring;
	int jit_keyring;	/* and KEYCTL_SET_REQKEY_KEYRING's default for request_key */
	uint64_t sigmask;
	struct sigpend pending;	/* thread-directed, not yet delivered (sentry/kernel/signal.c) */
	uint64_t saved_mask;	/* rt_sigsuspend's mask to restore after the handler */
	uint64_t real_blocked;	/* rt_sigtimedwait: the mask its waited-for signals were unblocked from */
	bool has_saved_mask;
	uint64_t altstack_sp, altstack_size;
	int altstack_flags;
	bool exiting;
	bool exited;		/* done with guest code (task_exit): a zombie for /proc */
	bool sleeping;		/* in a wait for the guest (sentry_wait): S for /proc */
	bool in_host_call;	/* in task_block's host call: S for /proc while the host thread sleeps in it */
	bool stop_pending;	/* JOBCTL_STOP_PENDING: must join the group stop before guest code runs */
	bool stopped;		/* in the group stop, until SIGCONT or death: T for /proc */
	int exit_status;	/* wait status: (code << 8) or signal number */
	bool killed;		/* SIGKILL: ends even a PTRACE_EVENT_EXIT stop */

	/*
	 * ptrace(2) of this task by a guest tracer (sentry/kernel/ptrace.c),
	 * Linux's task->ptrace, ->parent, ->exit_code, ->last_siginfo,
	 * ->ptrace_message. Unrelated to the host ptrace of the ptrace platform.
	 */
	struct task *tracer;	/* NULL: not traced */
	unsigned ptrace_opts;	/* PTRACE_O_* */
	bool ptrace_seized;	/* PTRACE_SEIZE, not PTRACE_ATTACH/TRACEME */
	bool ptrace_stopped;	/* in a ptrace stop (TASK_TRACED) until the tracer resumes it */
	bool ptrace_syscall;	/* resumed with PTRACE_SYSCALL: stop at syscall entry and exit */
	bool ptrace_exit_report;	/* exited: the tracer (not its parent) has still to hear it */
	int ptrace_code;	/* the stop's exit_code for the tracer's wait (0: reported) */
	int ptrace_resume_sig;	/* the signal the tracer resumed it with */
	int ptrace_sc_stop;	/* PTRACE_GET_SYSCALL_INFO: 1 at syscall entry, 2 at exit, 0 other stops */
	bool ptrace_trap_pending;	/* PTRACE_INTERRUPT, a seized clone child, SIGCONT: stop with PTRACE_EVENT_STOP */
	bool ptrace_in_call;	/* in a syscall's emulation: a ptrace stop now is taken mid-call (ptrace.c) */
	bool ptrace_listening;	/* PTRACE_LISTEN: still stopped, but for no request nor wait until re-trapped */
	uint64_t ptrace_msg;	/* PTRACE_GETEVENTMSG */
	int ptrace_si_signo;	/* the stop's siginfo (PTRACE_GETSIGINFO); 0: none */
	struct sig_info ptrace_si;
	struct ptrace_fpu_req *ptrace_fpu;	/* the tracer's FPU request, for this task's own thread to serve */
	uint64_t debugreg[8];	/* PEEKUSER/POKEUSER's u_debugreg: kept, never armed (no hardware breakpoints) */

	/* The sentry thread that runs this task (sentry/kernel/kernel.c). */
	pthread_t thread;
	pid_t host_tid;			/* its host tid: vmexec runs guest code on it */
	struct guest_usage usage_exec;	/* what this thread ran in stubs it left by execve */
	struct task *fork_parent;	/* set while the child copies the parent's memory */
	struct addr_space *fork_as;	/* fork by the host: the stub the parent's forked, for the child to start */
	void *fork_fpu;			/* fork by copying: the parent's FPU state for the child's new stub */
	long fork_fpu_len;
	long fork_result;		/* set by the forked child for its parent: 0 or -errno */
	bool fork_done;			/* ... and set when the child is done copying */
	int in_vfork;			/* sleeping in vfork until this child (pid) execs or exits; 0: not */
	struct task *clone_parent;	/* a new thread: set until its context is started */
	void *start_arg;		/* what the first task's thread execs */
	/*
	 * The restart block (current->restart_block): how restart_syscall(2)
	 * goes on with a sleep that -ERESTART_RESTARTBLOCK cut short and no
	 * handler ended. NULL fn: restart_syscall says EINTR.
	 */
	struct {
		long (*fn)(struct task *t);
		int clock;
		struct timespec until;	/* absolute, on clock */
		uint64_t rmtp;		/* a relative sleep's remaining-time pointer, 0: none */
	} restart;
};

/* Kernel-internal: the wait was interrupted by a signal; restart it unless a handler says EINTR. */
#define ERESTARTSYS 512
/* Kernel-internal: interrupted by a signal; restart it after the handler, SA_RESTART or not. */
#define ERESTARTNOINTR 513
/* Kernel-internal: interrupted; a handler makes it EINTR, else it restarts as it was. */
#define ERESTARTNOHAND 514
/* Kernel-internal: interrupted; a handler makes it EINTR, else restart_syscall(2) runs t->restart.fn. */
#define ERESTART_RESTARTBLOCK 516


#endif

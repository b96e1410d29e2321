/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the sentry and the stub share: where the stub is linked, where its
 * entry points are, and (seccomp platform) the layout of the shared memory
 * page through which traps and commands pass. stub/stub.lds places
 * .text.gadget first so the fixed offsets below hold; platform code checks
 * them at start-up.
 *
 * Everything the stub writes here is untrusted by the sentry once guest code
 * has run: guest code can write this memory too. The sentry copies values
 * out once and validates them like syscall arguments.
 */
#ifndef PVX_STUB_ABI_H
#define PVX_STUB_ABI_H

#include <stddef.h>
#include <stdint.h>
#include "pvx/mm.h"
#include "pvx/regs.h"

/* "syscall; int3": run one syscall, then stop the tracer-visible way (ptrace). */
#define STUB_SYSCALL_GADGET (PVX_STUB_BASE + 0x1000UL)
#define STUB_SYSCALL_GADGET_BYTES "\x0f\x05\xcc"
/*
 * "syscall; test rax; jz 1f; int3; 1: pause loop" (ptrace): a clone(2) run
 * here leaves the parent stopped at int3 and the new thread idling in
 * pause() until its own tracer seizes it.
 */
#define STUB_CLONE_GADGET (PVX_STUB_BASE + 0x1010UL)
#define STUB_CLONE_GADGET_BYTES "\x0f\x05\x48\x85\xc0"
/* clone(2) flags of a stub thread: a thread of the stub, sharing everything. */
#define STUB_THREAD_CLONE_FLAGS 0x50f00UL	/* VM|FS|FILES|SIGHAND|THREAD|SYSVSEM */
#define STUB_THREAD_CLONE_FLAGS_TID 0x350f00UL	/* ... |PARENT_SETTID|CHILD_CLEARTID */
/* The stub's code: the only instruction pointers the seccomp filter lets through. */
#define STUB_TEXT_START (PVX_STUB_BASE + 0x1000UL)
#define STUB_TEXT_MAX 0x10000UL

/* Exit codes of the stub when it cannot do its job (distinct per step). */
enum stub_exit {
	STUB_EXIT_NOT_TRACED = 100,	/* run directly instead of by pvx */
	STUB_EXIT_SHARED_MAP = 101,	/* mapping the shared region failed */
	STUB_EXIT_ALTSTACK = 102,	/* sigaltstack failed */
	STUB_EXIT_SIGACTION = 103,	/* installing the trap handler failed */
	STUB_EXIT_NO_NEW_PRIVS = 104,	/* prctl(PR_SET_NO_NEW_PRIVS) failed */
	STUB_EXIT_CAPS = 105,		/* dropping capabilities failed */
	STUB_EXIT_SECCOMP = 106,	/* installing the seccomp filter failed */
	STUB_EXIT_BAD_MODE = 107,	/* unknown argv[1] */
	STUB_EXIT_REGION = 108,		/* a trap on a stack outside every thread's region */
};

/* fds the seccomp stub starts with (set up by the sentry before exec). */
#define STUB_FD_SOCK 3		/* SOCK_SEQPACKET end for SCM_RIGHTS fd passing */
#define STUB_FD_SHARED 4	/* memfd of struct stub_shared, closed once mapped */

/* Who owns struct stub_shared right now; a futex word (not private: two processes). */
enum stub_state {
	STUB_RUNNING = 0,	/* the guest runs or the stub works on a command */
	STUB_PARKED = 1,	/* the stub reported a trap or a result: the sentry's turn */
	STUB_CMD = 2,		/* the sentry posted a command: the stub's turn */
};

enum stub_cmd {
	STUB_CMD_RUN = 1,	/* load regs and return to guest code */
	STUB_CMD_SYSCALL = 2,	/* run sys_nr(sys_args) in the stub, result in sys_ret */
	STUB_CMD_CLONE = 3,	/* start a thread on region sys_args[0]; its tid in sys_ret */
	STUB_CMD_EXIT = 4,	/* end this thread (its region's tid word is cleared) */
};

#define STUB_FILTER_MAX 1024	/* struct sock_filter entries */
#define STUB_ALTSTACK_SIZE (256UL << 10)

struct stub_shared {
	uint32_t state;		/* enum stub_state; futex */
	uint32_t cmd;		/* enum stub_cmd */
	uint32_t stub_sleeping;	/* set while the stub is in FUTEX_WAIT: wake it */
	uint32_t sentry_sleeping;	/* set while the sentry is in FUTEX_WAIT: wake it */
	uint32_t has_fsgsbase;	/* the CPU and kernel allow rdfsbase/wrfsbase */
	uint32_t spin;		/* pause-loop iterations before futex wait (0 on one CPU) */
	int32_t tid;		/* host tid of the region's thread; 0 once it exited (CLONE_CHILD_CLEARTID) */
	uint32_t pad0;
	uint64_t cur_fs_base;	/* what the stub last loaded, when it cannot rdfsbase */
	uint64_t cur_gs_base;
	int64_t sys_nr, sys_args[6], sys_ret;

	/* The last trap: filled by the stub's signal handler. */
	int32_t trap_signo, trap_code;
	int32_t trap_syscall;	/* SIGSYS: the syscall number */
	uint32_t pad1;
	uint64_t trap_addr;	/* si_addr (fault) or si_call_addr (SIGSYS) */
	uint64_t ucontext;	/* stub address of the trap's ucontext (on the altstack below) */
	struct pvx_regs regs;	/* guest registers at the trap; loaded on STUB_CMD_RUN */

	/* Scratch for SCM_RIGHTS: a msghdr the stub's recvmsg uses, with its buffers. */
	uint64_t msg[7];	/* struct msghdr */
	uint64_t iov[2];	/* struct iovec */
	uint64_t cmsg[4];	/* struct cmsghdr + one int */
	char byte;

	uint16_t filter_len;
	uint64_t filter[STUB_FILTER_MAX] __attribute__((aligned(8)));	/* struct sock_filter */
	char altstack[STUB_ALTSTACK_SIZE] __attribute__((aligned(64)));
};

/*
 * Where the stub maps the shared regions, one struct stub_shared per stub
 * thread (guest thread), after its text, inside the stub range. A handler
 * finds its thread's region from its stack pointer (the region's altstack).
 */
#define STUB_SHARED_ADDR (PVX_STUB_BASE + 0x100000UL)
#define STUB_SHARED_SIZE ((sizeof(struct stub_shared) + 4095) & ~4095UL)
#define STUB_MAX_THREADS 256	/* guest threads per process on seccomp (sparse memfd: address space only) */
#define STUB_SHARED_TOTAL (STUB_SHARED_SIZE * STUB_MAX_THREADS)

_Static_assert(offsetof(struct stub_shared, state) == 0, "futex word first");
_Static_assert(offsetof(struct stub_shared, regs) % 8 == 0, "regs aligned");
_Static_assert(sizeof(struct pvx_regs) == 216, "pvx_regs layout");

#endif

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the sentry and the stub share: where the stub is linked, where its
 * syscall instructions are (include/pvx/stub_layout.h), and (seccomp
 * platform) the control page and the shared regions through which traps
 * and commands pass.
 *
 * Everything in a shared region is untrusted by the sentry once guest code
 * has run: guest code can write it too. The sentry copies values out once
 * and validates them like syscall arguments, and takes no host id from
 * there: the stub never writes one (it would tell the guest host pids).
 * The control page is the other way round: only the sentry writes it (the
 * stub maps it read-only from a memfd sealed against new writable
 * mappings), so the stub's thread maker may act on what it says.
 */
#ifndef PVX_STUB_ABI_H
#define PVX_STUB_ABI_H

#include <stddef.h>
#include <stdint.h>
#include "pvx/guest_layout.h"
#include "pvx/regs.h"
#include "pvx/stub_layout.h"

_Static_assert(STUB_BASE_ADDR == PVX_STUB_BASE, "stub_layout.h and guest_layout.h agree");

/* "syscall; int3": run one syscall, then stop the tracer-visible way (ptrace). */
#define STUB_SYSCALL_GADGET ((uint64_t)STUB_TEXT_ADDR + STUB_OFF_SYSCALL_GADGET)
#define STUB_SYSCALL_GADGET_BYTES "\x0f\x05\xcc"
/*
 * "syscall; test rax; jz 1f; int3; 1: pause loop" (ptrace): a clone(2) run
 * here leaves the parent stopped at int3 and the new thread idling in
 * pause() until its own tracer seizes it.
 */
#define STUB_CLONE_GADGET ((uint64_t)STUB_TEXT_ADDR + STUB_OFF_CLONE_GADGET)
#define STUB_CLONE_GADGET_BYTES "\x0f\x05\x48\x85\xc0"

/* "syscall; test rax; jz; int3; ..." (ptrace): a fork whose child waits for its tracer (sites.S). */
#define STUB_FORK_GADGET ((uint64_t)STUB_TEXT_ADDR + STUB_OFF_FORK_GADGET)
/*
 * "syscall; mov rax,rbx; mov r12,rax; mov r13,rdi; syscall; int3" (ptrace):
 * two syscalls in one stop, the second's number in r12 and first argument
 * in r13, the first's result left in rbx (a forked child's clean-up).
 */
#define STUB_TWO_SYSCALLS ((uint64_t)STUB_TEXT_ADDR + STUB_OFF_TWO_SYSCALLS)
#define STUB_TWO_SYSCALLS_BYTES "\x0f\x05\x48\x89\xc3\x4c\x89\xe0\x4c\x89\xef\x0f\x05\xcc"

/* The table of syscalls run in one stop (ptrace, sites.S's stub_batch), up to its int3. */
#define STUB_BATCH ((uint64_t)STUB_TEXT_ADDR + STUB_OFF_BATCH)
#define STUB_BATCH_BYTES                                                                                   \
	"\x48\x8b\x03\x48\x8b\x7b\x08\x48\x8b\x73\x10\x48\x8b\x53\x18\x4c\x8b\x53\x20\x4c\x8b\x43\x28" \
	"\x4c\x8b\x4b\x30\xf6\x43\x38\x02\x4d\x0f\x45\xc5\xf6\x43\x38\x04\x49\x0f\x45\xfd\x0f\x05" \
	"\x48\x3d\x01\xf0\xff\xff\x73\x11\xf6\x43\x38\x01\x4c\x0f\x45\xe8\x48\x83\xc3\x40\x49\xff" \
	"\xcc\x75\xba\xcc"
enum { STUB_BATCH_KEEP = 1, STUB_BATCH_R8_FD = 2, STUB_BATCH_RDI_FD = 4 };	/* its flags */

/* "lock cmpxchg %ecx,(%rdi); int3" (every platform): the sentry's atomic on a guest word (platform.c). */
#define STUB_CMPXCHG_GADGET ((uint64_t)STUB_TEXT_ADDR + STUB_OFF_CMPXCHG_GADGET)
#define STUB_CMPXCHG_GADGET_BYTES "\xf0\x0f\xb1\x0f\xcc"
#define STUB_CMPXCHG_GADGET_INT3 (STUB_CMPXCHG_GADGET + 4)

/* The seccomp stub's syscall instructions ("sites"): a syscall made there reports this instruction_pointer. */
#define STUB_SITE_IP(off) ((uint64_t)STUB_TEXT_ADDR + (off) + 2)

/* Exit codes of the stub when it cannot do its job (distinct per step). */
enum stub_exit {
	STUB_EXIT_NOT_TRACED = 100,	/* run directly instead of by pvx */
	STUB_EXIT_SHARED_MAP = 101,	/* mapping the shared regions failed */
	STUB_EXIT_ALTSTACK = 102,	/* sigaltstack failed */
	STUB_EXIT_SIGACTION = 103,	/* installing the trap handler failed */
	STUB_EXIT_NO_NEW_PRIVS = 104,	/* prctl(PR_SET_NO_NEW_PRIVS) failed */
	STUB_EXIT_CAPS = 105,		/* dropping capabilities failed */
	STUB_EXIT_SECCOMP = 106,	/* installing the seccomp filter failed */
	STUB_EXIT_BAD_MODE = 107,	/* unknown argv[1] */
	STUB_EXIT_REGION = 108,		/* a trap on a stack outside every thread's region */
	/* 109: STUB_EXIT_THREAD_FILTER (stub_layout.h), a new thread's own filter failed */
	STUB_EXIT_CTL_MAP = 110,	/* mapping the control page failed */
	STUB_EXIT_FORK_SETUP = 111,	/* a forked stub could not take its own fds and pages */
	STUB_EXIT_NESTED_FAULT = 112,	/* the trap handler's own code faulted (not a guest copy) */
};

/* Who owns struct stub_shared right now; a futex word (not private: two processes). */
enum stub_state {
	STUB_RUNNING = 0,	/* the guest runs or the stub works on a command */
	STUB_PARKED = 1,	/* the stub reported a trap or a result: the sentry's turn */
	STUB_CMD = 2,		/* the sentry posted a command: the stub's turn */
};

enum stub_cmd {
	STUB_CMD_RUN = 1,	/* load regs and return to guest code */
	STUB_CMD_SYSCALL = 2,	/* run sys_nr(sys_args) in the stub, result in sys_ret */
	STUB_CMD_EXIT = 4,	/* end this thread */
	/*
	 * Run the sys_nr calls of the table in out_buf (struct stub_batch_op
	 * each) in order, up to the first that fails: sys_ret is its result
	 * (or the last one's), sys_args[0] how many succeeded before it.
	 */
	STUB_CMD_BATCH = 5,
	/*
	 * Usertrap (seccomp_patch.md): the trap came through a patched site,
	 * with no signal frame. Take it again as a fault (the fast return's
	 * ud2, with the registers in regs) so that a frame holds the guest's
	 * FPU state, then park.
	 */
	STUB_CMD_ESCALATE = 6,
};

/* trap_code of a usertrap's report (trap_signo SIGSYS, trap_syscall its slot), and of an escalation's (SIGILL). */
#define STUB_TRAP_UT 0x7501
#define STUB_TRAP_ESCALATED 0x7502

/* An entry of STUB_CMD_BATCH's table. */
struct stub_batch_op {
	int64_t nr, args[6];
};
#define STUB_BATCH_MAX (STUB_OUT_MAX / sizeof(struct stub_batch_op))

#define STUB_FILTER_MAX 1024	/* struct sock_filter entries of the stub's filter */
#define STUB_FILTER2_MAX 32	/* ... of the per-thread filter */

/* struct sock_fprog, as the kernel reads it. */
struct stub_fprog {
	uint16_t len;
	uint16_t pad[3];
	uint64_t filter;	/* stub address of struct sock_filter[len] */
};

/*
 * The control page (seccomp): the sentry's requests to the stub's thread
 * maker and the filters it installs. Read-only in the stub.
 */
struct stub_ctl {
	uint64_t clone_seq;	/* bumped by the sentry for each thread it wants */
	uint64_t clone_region;	/* the region of that thread */
	uint64_t k_set;		/* sigset of STUB_SIG_CTL, for rt_sigtimedwait */
	uint64_t pad;
	struct stub_fprog c_prog;	/* the stub's filter, installed by its main thread */
	struct stub_fprog g_prog;	/* each stub thread's own filter on top */
	uint64_t fork_seq;	/* bumped by the sentry for each fork of the stub it wants */
	/*
	 * Passthrough (sentry/platform/seccomp_passthrough.md): bit g set while
	 * stub fd STUB_PT_BASE + g is the host file of guest fd g, a regular
	 * file open for reading; the trap handler serves read/pread64 of g.
	 */
	uint64_t pt_bits[STUB_PT_MAX / 64];
	uint64_t c_filter[STUB_FILTER_MAX];
	uint64_t g_filter[STUB_FILTER2_MAX];
	/*
	 * Path prefetch: for a trapped syscall nr < STUB_PF_NRS, bit i of
	 * pf_arg[nr] is set when argument i is a string the sentry reads at
	 * once (a path, an xattr name); the trap handler copies the first two
	 * into the region (pf_buf). STUB_PF_IN: pf_in[nr] names an input
	 * buffer (one byte tells a trap of any other syscall it has nothing
	 * to copy).
	 */
#define STUB_PF_IN 0x80
	uint8_t pf_arg[STUB_PF_NRS];
	/*
	 * Input prefetch: for a trapped syscall nr < STUB_PF_NRS whose
	 * pf_in[nr].ptr is set, the trap handler copies the buffer at argument
	 * ptr - 1 into the region (in_buf): size bytes, or, when len is set,
	 * argument len - 1 times size bytes; nothing when that is 0 or more
	 * than STUB_IN_MAX, or the pointer is below the guest's range.
	 */
	struct stub_in_arg {
		uint8_t ptr, len;
		uint16_t size;
	} pf_in[STUB_PF_NRS];
	/*
	 * Passthrough of writes: bit g set while stub fd STUB_PT_BASE + g is a
	 * non-blocking open of the write end of guest fd g's pipe; the trap
	 * handler serves a write(2) of g of at most PIPE_BUF bytes (atomic:
	 * all or EAGAIN).
	 */
	uint64_t pt_wbits[STUB_PT_MAX / 64];
	/*
	 * Usertrap slots (seccomp_patch.md): slot k's site (the address of its
	 * first byte; 0: free), syscall and shape, for the trampoline's return address, its
	 * prefetches and its passthrough. The sentry keeps its own copy.
	 */
	struct stub_ut_slot {
		uint64_t site;
		uint32_t nr;
		uint32_t shape;	/* STUB_UT_MOV, STUB_UT_READ */
	} ut[STUB_UT_SLOTS];
};
#define STUB_CTL_SIZE ((sizeof(struct stub_ctl) + 4095) & ~4095UL)

_Static_assert(offsetof(struct stub_ctl, clone_seq) == STUB_CTL_OFF_SEQ, "layout");
_Static_assert(offsetof(struct stub_ctl, clone_region) == STUB_CTL_OFF_REGION, "layout");
_Static_assert(offsetof(struct stub_ctl, k_set) == STUB_CTL_OFF_KSET, "layout");
_Static_assert(offsetof(struct stub_ctl, c_prog) == STUB_CTL_OFF_CPROG, "layout");
_Static_assert(offsetof(struct stub_ctl, g_prog) == STUB_CTL_OFF_GPROG, "layout");
_Static_assert(offsetof(struct stub_ctl, fork_seq) == STUB_CTL_OFF_FSEQ, "layout");
_Static_assert(offsetof(struct stub_ctl, pt_bits) == STUB_CTL_OFF_PT, "layout");
_Static_assert(STUB_CTL_ADDR + STUB_CTL_SIZE <= STUB_SHARED_ADDR, "control page below the regions");

/* One region per stub thread (guest thread); the first fields keep their offsets of old. */
struct stub_shared {
	uint32_t state;		/* enum stub_state; futex */
	uint32_t cmd;		/* enum stub_cmd */
	uint32_t stub_sleeping;	/* set while the stub is in FUTEX_WAIT: wake it */
	uint32_t sentry_sleeping;	/* set while the sentry is in FUTEX_WAIT: wake it */
	uint32_t has_fsgsbase;	/* the CPU and kernel allow rdfsbase/wrfsbase */
	uint32_t spin;		/* pause-loop iterations before futex wait (0 on one CPU) */
	/*
	 * With STUB_CMD_RUN: fd + 1 that the stub closes first (the file of the
	 * last mapping, held_fd1 in seccomp.c); 0: none. Guest-writable: a forged
	 * one only asks the filter for a close, as a forged command can.
	 */
	uint32_t run_close, pad0;
	uint64_t cur_fs_base;	/* what the stub last loaded, when it cannot rdfsbase */
	uint64_t cur_gs_base;
	int64_t sys_nr, sys_args[6], sys_ret;

	/* The last trap: filled by the stub's signal handler. */
	int32_t trap_signo, trap_code;
	int32_t trap_syscall;	/* SIGSYS: the syscall number */
	uint32_t pad1;
	uint64_t trap_addr;	/* si_addr (fault) or si_call_addr (SIGSYS); 0 for a sent signal */
	uint64_t ucontext;	/* stub address of the trap's ucontext (on the altstack below) */
	struct pvx_regs regs;	/* guest registers at the trap; loaded on STUB_CMD_RUN */

	/* Scratch for SCM_RIGHTS: a msghdr the stub's recvmsg uses, with its buffers. */
	uint64_t msg[7];	/* struct msghdr */
	uint64_t iov[2];	/* struct iovec */
	uint64_t cmsg[4];	/* struct cmsghdr + one int */
	char byte;

	/*
	 * Path prefetch (stub.c prefetch): at a trapped syscall whose string
	 * arguments the control page names, the handler copies the string at
	 * the first one's guest address, pf_addr, into pf_buf, in the guest
	 * thread's own context (a fault there ends the copy); pf_len is its
	 * length without the NUL, or -1 (no prefetch: not such a syscall, a
	 * fault, too long). A second one (pf_addr2, pf_len2) follows the first's
	 * NUL in pf_buf, only when the first was copied. Saves the sentry a
	 * process_vm_readv per string. Guest-writable like the rest: the
	 * sentry takes each as what the guest had at its address (which another
	 * guest thread could have written there just as well), once per trap,
	 * and checks the lengths against the buffer and the NUL on its own copy.
	 */
	uint64_t pf_addr;
	int32_t pf_len;
	uint32_t pad2;
	char pf_buf[STUB_PF_MAX];
	uint64_t pf_addr2;
	int32_t pf_len2;
	uint32_t pad3;

	/*
	 * Copy-out on the way back (stub.c serve): with STUB_CMD_RUN, out_len
	 * bytes of out_buf go to guest address out_addr before the guest
	 * resumes, copied in its own context (a syscall's last result, e.g. a
	 * struct stat: mm/uaccess.c copy_to_guest_ret). When that copy faults
	 * the stub parks again with out_fault set, the guest not resumed: the
	 * sentry copies itself (a stack may grow) or answers -EFAULT. Guest-
	 * writable: the stub bounds out_len and out_addr, which only name what
	 * the guest could write there itself; the sentry acts on out_fault
	 * only for a run it gave a copy-out to, and copies its own data again.
	 */
	uint64_t out_addr;
	uint32_t out_len;	/* 0: nothing to copy */
	uint32_t out_fault;
	char out_buf[STUB_OUT_MAX];

	/*
	 * Input prefetch (stub.c prefetch_in): at a trapped syscall the control
	 * page names (pf_in), the handler copies in_len bytes of the guest's at
	 * in_addr into in_buf, in the guest thread's own context; in_len is 0
	 * when nothing was copied (not such a syscall, a NULL or bad pointer, a
	 * fault anywhere in the range, too long). Saves the sentry a
	 * process_vm_readv for a sigprocmask's set, a poll's array, a small
	 * write's data... Guest-writable like the rest: the sentry bounds the
	 * range at the trap, takes the bytes as what the guest had there (which
	 * another guest thread could have written just as well), once per trap,
	 * and only for a read that lies inside the range.
	 */
	uint64_t in_addr __attribute__((aligned(4096)));
	uint32_t in_len;
	/*
	 * Calls the trap handler's passthrough could serve (stub.c). At every
	 * STUB_PT_ASK-th it stands aside and the sentry serves the call, so
	 * that a site the passthrough serves still counts towards its patch
	 * (mm/usertrap.c); a prime, so that calls that take turns (a write, a
	 * read) each get their turn. Guest-writable: it only slows the guest's
	 * own calls.
	 */
	uint32_t pt_count;
	char in_buf[STUB_IN_MAX];

	char altstack[STUB_ALTSTACK_SIZE] __attribute__((aligned(4096)));

	/*
	 * The fast return (stub.c fast_return, stub_fast_jump): where the
	 * generic site's ret goes (stub_fast_window), the guest registers in
	 * the order the window pops them, the signal mask it sets first (when
	 * set_mask), the signals that came in while a SIGSYS handler (which
	 * runs with signals open) had not yet left the altstack (bit sig - 1),
	 * for the window to report, and armed while a fast return is under way. Above the altstack, so that no signal frame lands on them.
	 * Guest-writable: a forged value sets only the registers and mask the
	 * guest's own thread resumes with, or reports it a signal it could
	 * send itself.
	 */
	struct stub_fast {
		uint64_t ret;
		uint64_t regs[17];	/* r8..r15, rdi, rsi, rbp, rbx, rdx, rax, rcx, eflags, rsp */
		uint64_t mask;
		uint64_t pending;
		uint64_t armed;
		uint64_t esc;		/* STUB_CMD_ESCALATE: the window takes its ud2 */
		uint64_t self;		/* the region's address: %gs:STUB_FAST_OFF+STUB_FAST_SELF (usertrap) */
	} fast;
	char pad_end[STUB_FAST_SIZE - 23 * 8];
};
#define STUB_SHARED_TOTAL ((size_t)STUB_SHARED_SIZE * STUB_MAX_THREADS)

_Static_assert(offsetof(struct stub_shared, state) == 0, "futex word first");
_Static_assert(offsetof(struct stub_shared, sys_nr) == 48 && offsetof(struct stub_shared, sys_ret) == 104,
	       "offsets of old");
_Static_assert(offsetof(struct stub_shared, regs) % 8 == 0, "regs aligned");
_Static_assert(offsetof(struct stub_shared, ucontext) == 136, "where tests/guest/sec_stub_fastret.c reads it");
_Static_assert(offsetof(struct stub_shared, out_buf) + STUB_OUT_MAX <= STUB_IN_OFF, "bounce buffers below the input prefetch");
_Static_assert(offsetof(struct stub_shared, in_addr) == STUB_IN_OFF && offsetof(struct stub_shared, in_len) == STUB_IN_OFF + 8 &&
		       offsetof(struct stub_shared, in_buf) == STUB_IN_OFF + 16,
	       "where tests/guest/sec_stub_prefetch.c forges them");
_Static_assert(offsetof(struct stub_shared, pf_addr) == 472 && offsetof(struct stub_shared, pf_len) == 480 &&
		       offsetof(struct stub_shared, pf_buf) == 488 && offsetof(struct stub_shared, pf_addr2) == 2520 &&
		       offsetof(struct stub_shared, pf_len2) == 2528,
	       "where tests/guest/sec_stub_prefetch.c forges them");
_Static_assert(offsetof(struct stub_shared, out_addr) == 2536 && offsetof(struct stub_shared, out_len) == 2544 &&
		       offsetof(struct stub_shared, out_fault) == 2548,
	       "... and these");
_Static_assert(offsetof(struct stub_shared, altstack) == STUB_ALTSTACK_OFF, "altstack where sites.S puts sp");
_Static_assert(sizeof(struct stub_shared) == STUB_SHARED_SIZE, "one region");
_Static_assert(offsetof(struct stub_shared, fast) == STUB_ALTSTACK_OFF + STUB_ALTSTACK_SIZE, "fast block above the altstack");
_Static_assert(offsetof(struct stub_fast, regs) == 8 && offsetof(struct stub_fast, mask) == 144 &&
		       offsetof(struct stub_fast, pending) == 152 && offsetof(struct stub_fast, esc) == 168 &&
		       offsetof(struct stub_fast, self) == STUB_FAST_SELF && STUB_FAST_REGS == 8,
	       "where stub.c's stub_fast_jump and sites.S's usertrap find them");
_Static_assert(offsetof(struct stub_shared, fast) == STUB_FAST_OFF, "the fast block at the region's end");
_Static_assert(sizeof(struct pvx_regs) == 216, "pvx_regs layout");

#endif

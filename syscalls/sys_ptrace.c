// SPDX-License-Identifier: GPL-2.0
/*
 * ptrace(2) of guest tasks by guest tasks: the requests (kernel/ptrace.c's
 * ptrace_request and arch/x86/kernel/ptrace.c's arch_ptrace). The links
 * and stops are sentry/kernel/ptrace.c's; here the tracer reads and
 * changes a stopped tracee: its memory through mm/ (PEEK/POKE), its
 * registers (GETREGS/SETREGS, the regs part of struct user, NT_PRSTATUS),
 * its siginfo and sigmask. A tracer's register values are checked as
 * putreg() and rt_sigreturn check them: the segment selectors stay the
 * platform's, fs/gs base below the guest's task size, only the flags user
 * code may set. No request reaches the host's ptrace.
 */
#include <linux/ptrace.h>
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <sys/user.h>

#include "pvx/guest_layout.h"
#include "pvx/kernel.h"
#include "pvx/ptrace.h"
#include "pvx/sigframe.h"
#include "syscalls/syscalls.h"

#ifndef PTRACE_GET_SYSCALL_INFO
#define PTRACE_GET_SYSCALL_INFO 0x420e
#endif
#define PTRACE_O_MASK_ 0x003000ffU	/* PTRACE_O_MASK: TRACESYSGOOD..TRACESECCOMP, EXITKILL, SUSPEND_SECCOMP */
#define PTRACE_O_SUSPEND_SECCOMP_ 0x200000U
#define NT_PRSTATUS_ 1
#define NT_PRFPREG_ 2
#define NT_X86_XSTATE_ 0x202
#define FIX_EFLAGS 0x40dd5UL	/* what rt_sigreturn lets user code set (signal.c) */
#define AUDIT_ARCH_X86_64_ 0xc000003eU
#define BIT(sig) (1UL << ((sig) - 1))

/* A register value the tracer may set (putreg), merged into r; -EIO otherwise. */
static long put_regs(struct pvx_regs *r, const struct pvx_regs *n)
{
	/* The selectors are the platform's: a forged cs/ss (32-bit code, kernel RPL) is refused. */
	if (n->cs != r->cs || n->ss != r->ss || n->ds != r->ds || n->es != r->es || n->fs != r->fs || n->gs != r->gs)
		return -EIO;
	if (n->fs_base >= PVX_GUEST_TASK_SIZE || n->gs_base >= PVX_GUEST_TASK_SIZE)
		return -EIO;	/* "value >= TASK_SIZE_MAX" */
	uint64_t flags = (r->eflags & ~FIX_EFLAGS) | (n->eflags & FIX_EFLAGS);
	*r = *n;
	r->eflags = flags;
	return 0;
}

/* The first len bytes of the regs (NT_PRSTATUS, POKEUSER) replaced by src, checked. */
static long put_regs_part(struct task *c, size_t off, const void *src, size_t len)
{
	struct pvx_regs n = c->regs;

	memcpy((char *)&n + off, src, len);
	return put_regs(&c->regs, &n);
}

/*
 * PEEK/POKE of one word at addr of c's memory (ptrace_access_vm): -EIO
 * when it cannot be done, as generic_ptrace_peekdata. Without FOLL_FORCE
 * for now (the sentry's /proc/PID/mem of an undumpable stub is closed to
 * it): read-only text cannot be poked. The stub's range is outside the
 * guest's: it fails as a guest access there would.
 */
static long peek_poke(struct task *c, uint64_t addr, uint64_t *word, bool write)
{
	long r = write ? copy_to_guest(c->mm, addr, word, sizeof(*word)) : copy_from_guest(c->mm, word, addr, sizeof(*word));

	return r ? -EIO : 0;
}

/*
 * ptrace_set_debugreg(): dr0-3 take user addresses only (a kernel one is
 * EINVAL, as hw_breakpoint_arch_parse says), dr4/dr5 do not exist (EIO),
 * dr6 and dr7 are kept. pvx keeps them for PEEKUSER but never arms them:
 * a watchpoint does not fire (no hardware breakpoints in the sandbox).
 */
static long set_debugreg(struct task *c, unsigned n, uint64_t v)
{
	if (n == 4 || n == 5)
		return -EIO;
	if (n < 4 && v > PVX_TASK_SIZE_MAX - 8)	/* less the longest breakpoint */
		return -EINVAL;
	c->debugreg[n] = v;
	return 0;
}

/* PEEKUSER/POKEUSER: the regs of struct user and its debug registers; the rest reads 0. */
static long user_area(struct task *t, struct task *c, uint64_t off, uint64_t data, bool write)
{
	const uint64_t dbg0 = offsetof(struct user, u_debugreg);
	uint64_t v = 0;

	if ((off & 7) || off >= sizeof(struct user))
		return -EIO;
	bool in_regs = off < sizeof(struct pvx_regs);
	bool dbg = off >= dbg0 && off < dbg0 + 8 * 8;
	if (write) {
		if (in_regs)
			return put_regs_part(c, (size_t)off, &data, sizeof(data));
		return dbg ? set_debugreg(c, (unsigned)((off - dbg0) / 8), data) : -EIO;
	}
	if (in_regs)
		memcpy(&v, (const char *)&c->regs + off, sizeof(v));
	else if (dbg)
		v = c->debugreg[(off - dbg0) / 8];
	return copy_to_guest(t->mm, data, &v, sizeof(v));
}

/*
 * The FXSAVE image (user_fpregs_struct, NT_PRFPREG) of c into or from
 * fx: GETFPREGS/SETFPREGS. The rest of the XSAVE state stays; an MXCSR
 * with reserved bits set is EINVAL, as xfpregs_set says.
 */
static long fpregs(struct task *c, void *fx, bool write)
{
	cleanup_free char *buf = aligned_alloc(64, K_FPSTATE_MAX);
	if (!buf)
		return -ENOMEM;
	long n = ptrace_fpu(c, buf, K_FPSTATE_MAX, false);

	if (n < 0)
		return n;
	if (n < K_FXSAVE_SIZE) {	/* no state of its own yet: the init state */
		uint16_t fcw = 0x37f;
		uint32_t mxcsr = 0x1f80;
		memset(buf, 0, K_FXSAVE_SIZE);
		memcpy(buf, &fcw, sizeof(fcw));
		memcpy(buf + 24, &mxcsr, sizeof(mxcsr));
	}
	if (!write) {
		memcpy(fx, buf, K_FXSAVE_SIZE);
		memset((char *)fx + K_FPX_SW_BYTES_OFFSET, 0, K_FXSAVE_SIZE - K_FPX_SW_BYTES_OFFSET);
		return 0;
	}
	uint32_t mxcsr;
	memcpy(&mxcsr, (const char *)fx + 24, sizeof(mxcsr));
	if (mxcsr & ~0xffffU)
		return -EINVAL;
	if (n < K_FXSAVE_SIZE)
		return -EIO;
	memcpy(buf, fx, K_FPX_SW_BYTES_OFFSET);	/* its software bytes and the XSAVE part stay */
	return ptrace_fpu(c, buf, (size_t)n, true);
}

/*
 * NT_X86_XSTATE: the XSAVE image with the software bytes filled in (the
 * signal frame's, without FP_XSTATE_MAGIC2). A write must be the whole
 * image (EFAULT otherwise, as xstateregs_set), and its header is checked
 * as validate_user_xstate_header does: no feature the tracee's state does
 * not have, xcomp_bv 0 (the standard format), reserved bytes 0; else EINVAL.
 * The software bytes stay the tracee's.
 */
static long xstate(struct task *t, struct task *c, struct iovec *iov, bool write)
{
	cleanup_free char *buf = aligned_alloc(64, K_FPSTATE_MAX);
	cleanup_free char *in = aligned_alloc(64, K_FPSTATE_MAX);
	if (!buf || !in)
		return -ENOMEM;
	long n = ptrace_fpu(c, buf, K_FPSTATE_MAX, false);

	if (n < 0)
		return n;
	if (n <= K_FXSAVE_SIZE)
		return -ENODEV;	/* no XSAVE state: as a CPU without XSAVE */
	size_t size = (size_t)n - 4;
	if (!write) {
		size_t len = MIN(iov->iov_len, size);
		if (copy_to_guest(t->mm, (uint64_t)iov->iov_base, buf, len))
			return -EFAULT;
		iov->iov_len = len;
		return 0;
	}
	if (iov->iov_len != size || copy_from_guest(t->mm, in, (uint64_t)iov->iov_base, size))
		return -EFAULT;
	const struct k_fpx_sw_bytes *sw = (const void *)(buf + K_FPX_SW_BYTES_OFFSET);
	uint64_t hdr[8];
	uint32_t mxcsr;
	memcpy(hdr, in + K_FXSAVE_SIZE, sizeof(hdr));
	memcpy(&mxcsr, in + 24, sizeof(mxcsr));
	if ((hdr[0] & ~sw->xfeatures) || hdr[1] || (mxcsr & ~0xffffU))
		return -EINVAL;
	for (int i = 2; i < 8; i++)
		if (hdr[i])
			return -EINVAL;
	memcpy(in + K_FPX_SW_BYTES_OFFSET, sw, K_FXSAVE_SIZE - K_FPX_SW_BYTES_OFFSET);
	memcpy(in + size, buf + size, 4);	/* FP_XSTATE_MAGIC2 */
	return ptrace_fpu(c, in, (size_t)n, true);
}

/* PTRACE_GETREGSET/SETREGSET: NT_PRSTATUS, NT_PRFPREG and NT_X86_XSTATE. */
static long regset(struct task *t, struct task *c, uint64_t type, uint64_t uiov, bool write)
{
	struct iovec iov;
	struct pvx_regs buf;

	if (copy_from_guest(t->mm, &iov, uiov, sizeof(iov)))
		return -EFAULT;
	if (type == NT_X86_XSTATE_) {
		long r = xstate(t, c, &iov, write);
		if (r)
			return r;
		return copy_to_guest(t->mm, uiov + offsetof(struct iovec, iov_len), &iov.iov_len, sizeof(iov.iov_len));
	}
	if (type == NT_PRFPREG_) {
		char fx[K_FXSAVE_SIZE];
		size_t len = MIN(iov.iov_len, sizeof(fx));
		long r = fpregs(c, fx, false);	/* a short write changes only the start */
		if (r)
			return r;
		if (write && copy_from_guest(t->mm, fx, (uint64_t)iov.iov_base, len))
			return -EFAULT;
		if (write && (r = fpregs(c, fx, true)))
			return r;
		if (!write && copy_to_guest(t->mm, (uint64_t)iov.iov_base, fx, len))
			return -EFAULT;
		iov.iov_len = len;
		return copy_to_guest(t->mm, uiov + offsetof(struct iovec, iov_len), &iov.iov_len, sizeof(iov.iov_len));
	}
	if (type != NT_PRSTATUS_)
		return -EINVAL;	/* find_regset(): no such regset here */
	size_t len = MIN(iov.iov_len, sizeof(buf));
	if (write) {
		if (len % 8)
			return -EINVAL;
		if (copy_from_guest(t->mm, &buf, (uint64_t)iov.iov_base, len))
			return -EFAULT;
		long r = put_regs_part(c, 0, &buf, len);
		if (r)
			return r;
	} else if (copy_to_guest(t->mm, (uint64_t)iov.iov_base, &c->regs, len)) {
		return -EFAULT;
	}
	iov.iov_len = len;
	return copy_to_guest(t->mm, uiov + offsetof(struct iovec, iov_len), &iov.iov_len, sizeof(iov.iov_len));
}

/* PTRACE_GETSIGINFO/SETSIGINFO: the siginfo of the stop (-EINVAL in a stop without one). */
static long siginfo(struct task *t, struct task *c, uint64_t data, bool write)
{
	struct k_siginfo k;

	if (!c->ptrace_si_signo)
		return -EINVAL;
	if (write) {
		if (copy_from_guest(t->mm, &k, data, sizeof(k)))
			return -EFAULT;
		c->ptrace_si = (struct sig_info){ .code = k.code, .raw = true, .errno_ = k.errno_ };
		memcpy(c->ptrace_si.fields, k.pad2, sizeof(c->ptrace_si.fields));
		return 0;
	}
	signal_siginfo(c->ptrace_si_signo, &c->ptrace_si, &k);
	if (!c->ptrace_si.raw && (k.code & 0xff) == SIGTRAP && c->ptrace_si_signo == SIGTRAP && k.code > 0x7f) {
		k.addr = 0;	/* a ptrace trap: ptrace_do_notify's si_pid and si_uid */
		k.kill.pid = c->tid;
		k.kill.uid = sandbox.uid;
	}
	return copy_to_guest(t->mm, data, &k, sizeof(k));
}

/* PTRACE_GET_SYSCALL_INFO: the syscall of a syscall stop; returns the size of the whole answer. */
static long syscall_info(struct task *t, struct task *c, uint64_t size, uint64_t data)
{
	struct {
		uint8_t op, pad[3];
		uint32_t arch;
		uint64_t ip, sp;
		union {
			struct { uint64_t nr, args[6]; } entry;
			struct { int64_t rval; uint8_t is_error; } exit;
		};
	} info;
	size_t actual = offsetof(__typeof__(info), entry);
	const struct pvx_regs *r = &c->regs;

	memset(&info, 0, sizeof(info));
	info.op = (uint8_t)c->ptrace_sc_stop;
	info.arch = AUDIT_ARCH_X86_64_;
	info.ip = r->rip;
	info.sp = r->rsp;
	if (c->ptrace_sc_stop == 1) {
		const uint64_t a[6] = { r->rdi, r->rsi, r->rdx, r->r10, r->r8, r->r9 };
		info.entry.nr = r->orig_rax;
		memcpy(info.entry.args, a, sizeof(a));
		actual = offsetof(__typeof__(info), entry.args) + sizeof(a);
	} else if (c->ptrace_sc_stop == 2) {
		info.exit.rval = (int64_t)r->rax;
		info.exit.is_error = (uint64_t)r->rax >= (uint64_t)-4095;
		actual = offsetof(__typeof__(info), exit.is_error) + 1;
	}
	if (copy_to_guest(t->mm, data, &info, MIN(size, actual)))
		return -EFAULT;
	return (long)actual;
}

/* Requests on a tracee c that is stopped for t (ptrace_check_attach passed). */
static long request(struct task *t, struct task *c, long req, uint64_t addr, uint64_t data)
{
	uint64_t word;
	long r;

	switch (req) {
	case PTRACE_PEEKTEXT:
	case PTRACE_PEEKDATA:
		if ((r = peek_poke(c, addr, &word, false)))
			return r;
		return copy_to_guest(t->mm, data, &word, sizeof(word));
	case PTRACE_POKETEXT:
	case PTRACE_POKEDATA:
		return peek_poke(c, addr, &data, true);
	case PTRACE_PEEKUSR:
	case PTRACE_POKEUSR:
		return user_area(t, c, addr, data, req == PTRACE_POKEUSR);
	case PTRACE_GETREGS:
		return copy_to_guest(t->mm, data, &c->regs, sizeof(c->regs));
	case PTRACE_SETREGS: {
		struct pvx_regs n;
		if (copy_from_guest(t->mm, &n, data, sizeof(n)))
			return -EFAULT;
		return put_regs(&c->regs, &n);
	}
	case PTRACE_GETFPREGS: {
		char fx[K_FXSAVE_SIZE];
		if ((r = fpregs(c, fx, false)))
			return r;
		return copy_to_guest(t->mm, data, fx, sizeof(fx));
	}
	case PTRACE_SETFPREGS: {
		char fx[K_FXSAVE_SIZE];
		if (copy_from_guest(t->mm, fx, data, sizeof(fx)))
			return -EFAULT;
		return fpregs(c, fx, true);
	}
	case PTRACE_GETREGSET:
	case PTRACE_SETREGSET:
		return regset(t, c, addr, data, req == PTRACE_SETREGSET);
	case PTRACE_GETSIGINFO:
	case PTRACE_SETSIGINFO:
		return siginfo(t, c, data, req == PTRACE_SETSIGINFO);
	case PTRACE_GETEVENTMSG:
		return copy_to_guest(t->mm, data, &c->ptrace_msg, sizeof(c->ptrace_msg));
	case PTRACE_SETOPTIONS:
		if (data & ~(uint64_t)PTRACE_O_MASK_)
			return -EINVAL;
		if (data & PTRACE_O_SUSPEND_SECCOMP_)
			return -EPERM;	/* needs CAP_SYS_ADMIN */
		c->ptrace_opts = (unsigned)data;
		return 0;
	case PTRACE_GETSIGMASK:
	case PTRACE_SETSIGMASK:
		if (addr != sizeof(uint64_t))
			return -EINVAL;
		if (req == PTRACE_GETSIGMASK)
			return copy_to_guest(t->mm, data, &c->sigmask, sizeof(c->sigmask));
		if (copy_from_guest(t->mm, &word, data, sizeof(word)))
			return -EFAULT;
		c->sigmask = word & ~(BIT(SIGKILL) | BIT(SIGSTOP));
		return 0;
	case PTRACE_GET_SYSCALL_INFO:
		return syscall_info(t, c, addr, data);
	case PTRACE_CONT:
	case PTRACE_SYSCALL:
		if (data > 64)
			return -EIO;	/* !valid_signal() */
		ptrace_resume(c, (int)data, req == PTRACE_SYSCALL);
		return 0;
	case PTRACE_DETACH:
		if (data > 64)
			return -EIO;
		ptrace_detach(c, (int)data);
		return 0;
	}
	/* SINGLESTEP, SYSEMU, PEEKSIGINFO, ARCH_PRCTL...: not here (see table.def). */
	return -EIO;
}

/* ptrace(2): the raw call, whose PEEK requests store the word at data. */
long sys_ptrace(struct task *t, const long a[6])
{
	long req = a[0], r;
	int pid = (int)a[1];
	uint64_t addr = (uint64_t)a[2], data = (uint64_t)a[3];

	if (req == PTRACE_TRACEME)
		return ptrace_traceme(t);
	struct task *c = task_find(pid);
	if (!c || !c->proc)
		return -ESRCH;
	if (req == PTRACE_ATTACH || req == PTRACE_SEIZE) {
		if (req == PTRACE_SEIZE && (addr || (data & ~(uint64_t)PTRACE_O_MASK_)))
			return -EIO;
		if (req == PTRACE_SEIZE && (data & PTRACE_O_SUSPEND_SECCOMP_))
			return -EPERM;
		return ptrace_attach(t, c, req == PTRACE_SEIZE, (unsigned)data);
	}
	bool any_state = req == PTRACE_KILL || req == PTRACE_INTERRUPT;
	if (!(c = ptrace_tracee(t, pid, any_state, &r)))
		return r;
	if (req == PTRACE_KILL) {
		(void)signal_queue(c, SIGKILL, NULL);
		return 0;
	}
	if (req == PTRACE_INTERRUPT) {
		if (!c->ptrace_seized)
			return -EIO;
		ptrace_interrupt(c);
		return 0;
	}
	if (req == PTRACE_LISTEN)
		return ptrace_listen(c);
	return request(t, c, req, addr, data);
}

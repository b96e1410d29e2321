// SPDX-License-Identifier: GPL-2.0
/*
 * The seccomp stub's two filters, as raw classic BPF (libseccomp cannot
 * test the instruction pointer, nor sums of arguments).
 *
 * The stub's filter (every stub thread): a syscall made anywhere but at one
 * of the stub's syscall instructions ("sites", include/pvx/stub_layout.h) is
 * the guest's: SECCOMP_RET_TRAP, and the sentry emulates it. At a site, only
 * the calls that site makes are allowed, with their arguments checked as far
 * as BPF can see them; anything else kills the stub. Guest code can jump to
 * a site with registers of its choosing, so each allowance must be harmless
 * in its hands:
 *   - mmap, munmap, mprotect, mremap, madvise, msync, mincore: only on
 *     [addr, addr+len) inside the guest's range, so never over the stub's
 *     code, control page, regions or stack (and mmap only MAP_FIXED);
 *   - futex wait/wake, sigaltstack, rt_sigprocmask, arch_prctl(SET_FS/GS),
 *     exit, exit_group, rt_sigreturn: the guest's own thread only;
 *   - recvmsg on the fd socket, non-blocking: the guest can take an fd of a
 *     file it mapped itself, never make the sentry wait for it;
 *   - close of any fd but that socket; dup3 of an fd the stub received
 *     (not one of its sockets, below the passthrough range) onto a
 *     passthrough fd;
 *   - at the passthrough site only: read, pread64 and write on a
 *     passthrough fd [STUB_PT_BASE, STUB_PT_BASE + STUB_PT_MAX), each the
 *     dup of a regular file its guest process opened for reading, or a
 *     non-blocking open of either end of a pipe it holds
 *     (seccomp_passthrough.md): no call there can sleep on a pipe, and a
 *     write reaches only a file or pipe its process holds open for writing.
 * clone, rt_sigtimedwait and write are allowed only at the sites of K, the
 * stub's main thread (and a fork of the whole stub, and the forked K's own
 * setup: its fds and pages, stub_fork_child), which makes the stub's threads on the sentry's order
 * and never runs guest code (stub/sites.S); the per-thread filter below
 * kills any other thread that reaches those sites. So no stub thread exists
 * that the sentry did not ask for.
 */
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/futex.h>
#include <linux/seccomp.h>
#include <asm/prctl.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>

#include "pvx/log.h"
#include "pvx/stub_abi.h"
#include "seccomp.h"

#ifndef AUDIT_ARCH_X86_64
#define AUDIT_ARCH_X86_64 0xc000003eU
#endif
#define X32_SYSCALL_BIT 0x40000000U
#define TOP_HI ((uint32_t)(PVX_GUEST_TASK_SIZE >> 32))	/* the guest's top, whose low half is 0 */
_Static_assert((PVX_GUEST_TASK_SIZE & 0xffffffffUL) == 0, "the range check assumes a round top");
_Static_assert(STUB_SITE_IP(STUB_OFF_SITE_SECCOMP) >> 32 == STUB_BASE_ADDR >> 32, "sites share a high half");
_Static_assert(STUB_CTL_ADDR >> 32 == STUB_SHARED_ADDR >> 32, "the forked K's mmaps share a high half");
_Static_assert(STUB_SITE_IP(STUB_OFF_SITE_KSC) >> 32 == STUB_BASE_ADDR >> 32, "so does its site");

/* A tiny assembler: forward jumps to labels, resolved and range-checked at the end. */
enum { NEXT = 0, MAX_LABELS = 128, MAX_INS = STUB_FILTER_MAX };

struct bpf_prog {
	struct sock_filter ins[MAX_INS];
	int jt[MAX_INS], jf[MAX_INS];	/* label of each jump target, NEXT for the next instruction */
	int at[MAX_LABELS];		/* where each label is, -1 until placed */
	int n, labels;
	bool bad;
};

static void prog_init(struct bpf_prog *p)
{
	memset(p, 0, sizeof(*p));
	memset(p->at, -1, sizeof(p->at));
	p->labels = 1;	/* 0 is NEXT */
}

static int new_label(struct bpf_prog *p)
{
	if (p->labels == MAX_LABELS) {
		p->bad = true;
		return NEXT;
	}
	return p->labels++;
}

static void place(struct bpf_prog *p, int label)
{
	p->at[label] = p->n;
}

static void emit(struct bpf_prog *p, uint16_t code, uint32_t k, int jt, int jf)
{
	if (p->n == MAX_INS) {
		p->bad = true;
		return;
	}
	p->ins[p->n] = (struct sock_filter)BPF_STMT(code, k);
	p->jt[p->n] = jt;
	p->jf[p->n] = jf;
	p->n++;
}

static void stmt(struct bpf_prog *p, uint16_t code, uint32_t k)
{
	emit(p, code, k, NEXT, NEXT);
}

/* if (A op k) goto jt else goto jf */
static void jump(struct bpf_prog *p, uint16_t op, uint32_t k, int jt, int jf)
{
	emit(p, BPF_JMP | op | BPF_K, k, jt, jf);
}

static void ret(struct bpf_prog *p, uint32_t action)
{
	stmt(p, BPF_RET | BPF_K, action);
}

/* Resolve the labels; -E2BIG when a jump goes backwards or farther than BPF can. */
static long link_prog(struct bpf_prog *p)
{
	for (int i = 0; i < p->n && !p->bad; i++) {
		if (BPF_CLASS(p->ins[i].code) != BPF_JMP)
			continue;
		int t[2] = { p->jt[i], p->jf[i] };
		for (int k = 0; k < 2; k++) {
			int off = t[k] == NEXT ? 0 : p->at[t[k]] - (i + 1);
			if (t[k] != NEXT && (p->at[t[k]] < 0 || off < 0 || off > 255)) {
				pr_err("bpf: jump at %d to label %d (at %d) off %d", i, t[k], p->at[t[k]], off);
				p->bad = true;
			}
			else if (k == 0)
				p->ins[i].jt = (uint8_t)off;
			else
				p->ins[i].jf = (uint8_t)off;
		}
	}
	return p->bad ? -E2BIG : 0;
}

#define DATA_NR offsetof(struct seccomp_data, nr)
#define DATA_IP_LO offsetof(struct seccomp_data, instruction_pointer)
#define DATA_IP_HI (DATA_IP_LO + 4)
#define ARG_LO(i) (offsetof(struct seccomp_data, args) + 8 * (i))
#define ARG_HI(i) (ARG_LO(i) + 4)

static void ld(struct bpf_prog *p, uint32_t off)
{
	stmt(p, BPF_LD | BPF_W | BPF_ABS, off);
}

/* arg i == v (all 64 bits), else goto fail */
static void arg_eq64(struct bpf_prog *p, int i, uint64_t v, int fail)
{
	ld(p, ARG_LO(i));
	jump(p, BPF_JEQ, (uint32_t)v, NEXT, fail);
	ld(p, ARG_HI(i));
	jump(p, BPF_JEQ, (uint32_t)(v >> 32), NEXT, fail);
}

/* arg i == v for an int argument (the kernel reads the low 32 bits), else goto fail */
static void arg_eq32(struct bpf_prog *p, int i, uint32_t v, int fail)
{
	ld(p, ARG_LO(i));
	jump(p, BPF_JEQ, v, NEXT, fail);
}

/*
 * [arg a, arg a + arg l) lies inside the guest's range, else goto fail:
 * a < TOP and l <= TOP - a, in 64 bits from 32-bit halves (M[0], M[1] =
 * the high and low half of TOP - a). The kernel rounds l up to pages, but
 * TOP is page aligned and it refuses an unaligned a: a + l <= TOP suffices.
 */
static void arg_range(struct bpf_prog *p, int a, int l, int fail)
{
	int no_borrow = new_label(p), ok = new_label(p), low = new_label(p);

	ld(p, ARG_HI(a));
	jump(p, BPF_JGE, TOP_HI, fail, NEXT);
	stmt(p, BPF_MISC | BPF_TAX, 0);
	stmt(p, BPF_LD | BPF_IMM, TOP_HI);
	stmt(p, BPF_ALU | BPF_SUB | BPF_X, 0);
	stmt(p, BPF_ST, 0);			/* M[0] = TOP_HI - a_hi */
	ld(p, ARG_LO(a));
	jump(p, BPF_JEQ, 0, no_borrow, NEXT);
	stmt(p, BPF_LD | BPF_MEM, 0);
	stmt(p, BPF_ALU | BPF_SUB | BPF_K, 1);
	stmt(p, BPF_ST, 0);			/* borrow from the low half */
	ld(p, ARG_LO(a));
	place(p, no_borrow);
	stmt(p, BPF_ALU | BPF_NEG, 0);
	stmt(p, BPF_ST, 1);			/* M[1] = -a_lo */
	ld(p, ARG_HI(l));
	stmt(p, BPF_MISC | BPF_TAX, 0);
	stmt(p, BPF_LD | BPF_MEM, 0);
	emit(p, BPF_JMP | BPF_JGT | BPF_X, 0, ok, NEXT);	/* rem_hi > l_hi */
	emit(p, BPF_JMP | BPF_JEQ | BPF_X, 0, low, fail);
	place(p, low);
	ld(p, ARG_LO(l));
	stmt(p, BPF_MISC | BPF_TAX, 0);
	stmt(p, BPF_LD | BPF_MEM, 1);
	emit(p, BPF_JMP | BPF_JGE | BPF_X, 0, ok, fail);	/* rem_lo >= l_lo */
	place(p, ok);
}

/* The end of a block of checks: its own returns (BPF jumps only forward, and not far). */
static void block_end(struct bpf_prog *p, int allow, int kill)
{
	place(p, allow);
	ret(p, SECCOMP_RET_ALLOW);
	place(p, kill);
	ret(p, SECCOMP_RET_KILL_PROCESS);
}

/* recvmsg on fd, without blocking (fds arrive close-on-exec), at label; else kill. */
static void recv_block(struct bpf_prog *p, int label, int fd)
{
	int allow = new_label(p), kill = new_label(p);

	place(p, label);
	arg_eq32(p, 0, (uint32_t)fd, kill);
	arg_eq32(p, 2, MSG_DONTWAIT | MSG_CMSG_CLOEXEC, kill);
	block_end(p, allow, kill);
}

/* arg i, an int fd, is a passthrough fd: [STUB_PT_BASE, STUB_PT_BASE + STUB_PT_MAX), else goto fail */
static void pt_fd(struct bpf_prog *p, int i, int fail)
{
	ld(p, ARG_LO(i));
	jump(p, BPF_JGE, STUB_PT_BASE, NEXT, fail);
	jump(p, BPF_JGE, STUB_PT_BASE + STUB_PT_MAX, fail, NEXT);
}

static void pt_args(struct bpf_prog *p, int kill)	/* read/pread64/write(passthrough fd, ...) */
{
	pt_fd(p, 0, kill);
}

/* The calls of stub_sc() (the stub's C code), as listed at the top; each block with its returns. */
static void generic_site(struct bpf_prog *p)
{
	static const uint32_t advice[] = { MADV_NORMAL, MADV_RANDOM, MADV_SEQUENTIAL, MADV_WILLNEED,
					   MADV_DONTNEED, MADV_FREE, MADV_DONTDUMP, MADV_DODUMP,
					   MADV_HUGEPAGE, MADV_NOHUGEPAGE, MADV_COLD, MADV_PAGEOUT,
					   22 /* MADV_POPULATE_READ */, 23 /* MADV_POPULATE_WRITE: mlock's */,
					   MADV_DONTFORK, MADV_DOFORK, MADV_WIPEONFORK, MADV_KEEPONFORK };
	int futex = new_label(p), map = new_label(p), range = new_label(p), madv = new_label(p),
	    mincore = new_label(p), mremap = new_label(p), cls = new_label(p), recv = new_label(p),
	    arch = new_label(p), mask = new_label(p), dup = new_label(p), allow = new_label(p), kill = new_label(p);

	ld(p, DATA_NR);
	jump(p, BPF_JEQ, SYS_futex, futex, NEXT);
	jump(p, BPF_JEQ, SYS_mmap, map, NEXT);
	jump(p, BPF_JEQ, SYS_munmap, range, NEXT);
	jump(p, BPF_JEQ, SYS_mprotect, range, NEXT);
	jump(p, BPF_JEQ, SYS_msync, range, NEXT);
	jump(p, BPF_JEQ, SYS_madvise, madv, NEXT);
	jump(p, BPF_JEQ, SYS_mincore, mincore, NEXT);
	jump(p, BPF_JEQ, SYS_mremap, mremap, NEXT);
	jump(p, BPF_JEQ, SYS_close, cls, NEXT);
	jump(p, BPF_JEQ, SYS_recvmsg, recv, NEXT);
	jump(p, BPF_JEQ, SYS_dup3, dup, NEXT);
	jump(p, BPF_JEQ, SYS_arch_prctl, arch, NEXT);
	jump(p, BPF_JEQ, SYS_rt_sigprocmask, mask, NEXT);
	jump(p, BPF_JEQ, SYS_sigaltstack, allow, NEXT);
	jump(p, BPF_JEQ, SYS_exit, allow, NEXT);
	jump(p, BPF_JEQ, SYS_exit_group, allow, kill);
	block_end(p, allow, kill);

	place(p, futex);	/* shared (not private) futexes: wait and wake only */
	allow = new_label(p), kill = new_label(p);
	ld(p, ARG_LO(1));
	jump(p, BPF_JEQ, FUTEX_WAIT, allow, NEXT);
	jump(p, BPF_JEQ, FUTEX_WAKE, allow, kill);
	block_end(p, allow, kill);

	place(p, map);
	allow = new_label(p), kill = new_label(p);
	arg_range(p, 0, 1, kill);
	ld(p, ARG_LO(3));
	jump(p, BPF_JSET, MAP_FIXED, allow, kill);
	block_end(p, allow, kill);

	place(p, range);	/* munmap, mprotect, msync */
	allow = new_label(p), kill = new_label(p);
	arg_range(p, 0, 1, kill);
	block_end(p, allow, kill);

	place(p, madv);
	allow = new_label(p), kill = new_label(p);
	arg_range(p, 0, 1, kill);
	ld(p, ARG_LO(2));
	for (size_t i = 0; i < ARRAY_SIZE(advice); i++)
		jump(p, BPF_JEQ, advice[i], allow, i + 1 < ARRAY_SIZE(advice) ? NEXT : kill);
	block_end(p, allow, kill);

	place(p, mincore);	/* and the vector below the top */
	allow = new_label(p), kill = new_label(p);
	arg_range(p, 0, 1, kill);
	ld(p, ARG_HI(2));
	jump(p, BPF_JGE, TOP_HI, kill, allow);
	block_end(p, allow, kill);

	place(p, mremap);	/* in place (flags 0), or MAYMOVE|FIXED to a range of the guest's */
	allow = new_label(p), kill = new_label(p);
	arg_range(p, 0, 1, kill);
	arg_range(p, 0, 2, kill);
	ld(p, ARG_HI(3));
	jump(p, BPF_JEQ, 0, NEXT, kill);
	ld(p, ARG_LO(3));
	jump(p, BPF_JEQ, 0, allow, NEXT);
	jump(p, BPF_JEQ, MREMAP_MAYMOVE | MREMAP_FIXED, NEXT, kill);
	arg_range(p, 4, 2, kill);
	block_end(p, allow, kill);

	place(p, cls);
	allow = new_label(p), kill = new_label(p);
	ld(p, ARG_LO(0));
	jump(p, BPF_JEQ, STUB_FD_SOCK, kill, allow);
	block_end(p, allow, kill);

	recv_block(p, recv, STUB_FD_SOCK);

	place(p, dup);		/* dup3(received fd, STUB_PT_BASE + g, 0): the passthrough install */
	allow = new_label(p), kill = new_label(p);
	ld(p, ARG_LO(0));
	jump(p, BPF_JEQ, STUB_FD_SOCK, kill, NEXT);
	jump(p, BPF_JEQ, STUB_FD_KSOCK, kill, NEXT);
	jump(p, BPF_JGE, STUB_PT_BASE, kill, NEXT);
	pt_fd(p, 1, kill);
	arg_eq32(p, 2, 0, kill);
	block_end(p, allow, kill);

	place(p, arch);
	allow = new_label(p), kill = new_label(p);
	ld(p, ARG_LO(0));
	jump(p, BPF_JEQ, ARCH_SET_FS, allow, NEXT);
	jump(p, BPF_JEQ, ARCH_SET_GS, allow, kill);
	block_end(p, allow, kill);

	place(p, mask);
	allow = new_label(p), kill = new_label(p);
	ld(p, ARG_LO(0));
	jump(p, BPF_JEQ, SIG_SETMASK, allow, kill);
	block_end(p, allow, kill);
}

/* One site that makes one syscall: nr, then what check() emits; else kill. */
/* A site for any of n calls (the same argument checks for each). */
static void single_site_nrs(struct bpf_prog *p, int label, const long *nrs, size_t n, void (*check)(struct bpf_prog *, int))
{
	int kill = new_label(p), ok = new_label(p);

	place(p, label);
	ld(p, DATA_NR);
	for (size_t i = 0; i < n; i++)
		jump(p, BPF_JEQ, (uint32_t)nrs[i], ok, i + 1 < n ? NEXT : kill);
	place(p, ok);
	if (check)
		check(p, kill);
	ret(p, SECCOMP_RET_ALLOW);
	place(p, kill);
	ret(p, SECCOMP_RET_KILL_PROCESS);
}

static void single_site(struct bpf_prog *p, int label, long nr, void (*check)(struct bpf_prog *, int))
{
	int kill = new_label(p);

	place(p, label);
	ld(p, DATA_NR);
	jump(p, BPF_JEQ, (uint32_t)nr, NEXT, kill);
	if (check)
		check(p, kill);
	ret(p, SECCOMP_RET_ALLOW);
	place(p, kill);
	ret(p, SECCOMP_RET_KILL_PROCESS);
}

static void wait_args(struct bpf_prog *p, int kill)	/* rt_sigtimedwait(&ctl->k_set, NULL, NULL, 8) */
{
	arg_eq64(p, 0, STUB_CTL_ADDR + STUB_CTL_OFF_KSET, kill);
	arg_eq64(p, 1, 0, kill);
	arg_eq64(p, 2, 0, kill);
	arg_eq64(p, 3, 8, kill);
}

static void clone_flags_args(struct bpf_prog *p, int kill, uint64_t flags)	/* clone(flags, 0, 0, 0, 0) */
{
	arg_eq64(p, 0, flags, kill);
	for (int i = 1; i < 5; i++)
		arg_eq64(p, i, 0, kill);
}

static void clone_args(struct bpf_prog *p, int kill)	/* clone(a stub thread, 0, 0, 0, 0) */
{
	clone_flags_args(p, kill, STUB_THREAD_CLONE_FLAGS);
}

static void report_args(struct bpf_prog *p, int kill)	/* write(STUB_FD_SOCK, ...) */
{
	arg_eq32(p, 0, STUB_FD_SOCK, kill);
}

static void seccomp_args(struct bpf_prog *p, int kill)	/* seccomp(SET_MODE_FILTER, 0, &ctl->g_prog) */
{
	arg_eq32(p, 0, SECCOMP_SET_MODE_FILTER, kill);
	arg_eq32(p, 1, 0, kill);
	arg_eq64(p, 2, STUB_CTL_ADDR + STUB_CTL_OFF_GPROG, kill);
}

static void fork_args(struct bpf_prog *p, int kill)	/* clone(CLONE_PARENT | SIGCHLD, 0, 0, 0, 0) */
{
	clone_flags_args(p, kill, STUB_FORK_CLONE_FLAGS);
}

/*
 * stub_ksc(): what the forked K does before it makes any thread
 * (stub_fork_child): K's only (the per-thread filter), and only that.
 */
static void ksc_site(struct bpf_prog *p)
{
	int prctl = new_label(p), recv = new_label(p), map = new_label(p), madv = new_label(p),
	    allow = new_label(p), kill = new_label(p);

	ld(p, DATA_NR);
	jump(p, BPF_JEQ, SYS_prctl, prctl, NEXT);
	jump(p, BPF_JEQ, SYS_recvmsg, recv, NEXT);
	jump(p, BPF_JEQ, SYS_mmap, map, NEXT);
	jump(p, BPF_JEQ, SYS_madvise, madv, NEXT);
	jump(p, BPF_JEQ, SYS_dup3, allow, NEXT);
	jump(p, BPF_JEQ, SYS_close_range, allow, NEXT);
	jump(p, BPF_JEQ, SYS_exit_group, allow, kill);
	block_end(p, allow, kill);

	place(p, prctl);
	allow = new_label(p), kill = new_label(p);
	arg_eq32(p, 0, PR_SET_PDEATHSIG, kill);
	arg_eq32(p, 1, SIGKILL, kill);
	block_end(p, allow, kill);

	recv_block(p, recv, STUB_FD_KSOCK);

	place(p, map);		/* the regions and the control page, at their places, as seccomp_main maps them */
	allow = new_label(p), kill = new_label(p);
	int ctl = new_label(p);
	ld(p, ARG_HI(0));
	jump(p, BPF_JEQ, (uint32_t)(STUB_SHARED_ADDR >> 32), NEXT, kill);
	ld(p, ARG_LO(0));
	jump(p, BPF_JEQ, (uint32_t)STUB_CTL_ADDR, ctl, NEXT);
	jump(p, BPF_JEQ, (uint32_t)STUB_SHARED_ADDR, NEXT, kill);
	arg_eq64(p, 1, STUB_SHARED_TOTAL, kill);
	arg_eq32(p, 2, PROT_READ | PROT_WRITE, kill);
	arg_eq32(p, 3, MAP_SHARED | MAP_FIXED, kill);
	jump(p, BPF_JGE, 0, allow, allow);	/* always */
	place(p, ctl);
	arg_eq64(p, 1, STUB_CTL_SIZE, kill);
	arg_eq32(p, 2, PROT_READ, kill);
	arg_eq32(p, 3, MAP_SHARED | MAP_FIXED, kill);
	block_end(p, allow, kill);

	place(p, madv);
	allow = new_label(p), kill = new_label(p);
	arg_eq32(p, 2, MADV_DONTFORK, kill);
	block_end(p, allow, kill);
}

static long stub_filter(struct bpf_prog *p)
{
	int kill, trap, generic, sigret, wait, clone, report, filter, fork, ksc, pt;

	prog_init(p);
	kill = new_label(p), trap = new_label(p), generic = new_label(p), sigret = new_label(p);
	wait = new_label(p), clone = new_label(p), report = new_label(p), filter = new_label(p);
	fork = new_label(p), ksc = new_label(p), pt = new_label(p);
	ld(p, offsetof(struct seccomp_data, arch));
	jump(p, BPF_JEQ, AUDIT_ARCH_X86_64, NEXT, kill);
	ld(p, DATA_NR);
	jump(p, BPF_JSET, X32_SYSCALL_BIT, trap, NEXT);	/* x32 or negative: the sentry says ENOSYS */
	ld(p, DATA_IP_HI);
	jump(p, BPF_JEQ, (uint32_t)(STUB_BASE_ADDR >> 32), NEXT, trap);
	ld(p, DATA_IP_LO);
	jump(p, BPF_JEQ, (uint32_t)STUB_SITE_IP(STUB_OFF_SITE_GENERIC), generic, NEXT);
	jump(p, BPF_JEQ, (uint32_t)STUB_SITE_IP(STUB_OFF_SITE_SIGRETURN), sigret, NEXT);
	jump(p, BPF_JEQ, (uint32_t)STUB_SITE_IP(STUB_OFF_SITE_WAIT), wait, NEXT);
	jump(p, BPF_JEQ, (uint32_t)STUB_SITE_IP(STUB_OFF_SITE_CLONE), clone, NEXT);
	jump(p, BPF_JEQ, (uint32_t)STUB_SITE_IP(STUB_OFF_SITE_REPORT), report, NEXT);
	jump(p, BPF_JEQ, (uint32_t)STUB_SITE_IP(STUB_OFF_SITE_SECCOMP), filter, NEXT);
	jump(p, BPF_JEQ, (uint32_t)STUB_SITE_IP(STUB_OFF_SITE_FORK), fork, NEXT);
	jump(p, BPF_JEQ, (uint32_t)STUB_SITE_IP(STUB_OFF_SITE_KSC), ksc, NEXT);
	jump(p, BPF_JEQ, (uint32_t)STUB_SITE_IP(STUB_OFF_SITE_PT), pt, trap);
	place(p, trap);		/* guest code, wherever it is */
	ret(p, SECCOMP_RET_TRAP);
	place(p, kill);		/* int $0x80, sysenter */
	ret(p, SECCOMP_RET_KILL_PROCESS);
	single_site(p, sigret, SYS_rt_sigreturn, NULL);
	single_site(p, wait, SYS_rt_sigtimedwait, wait_args);
	single_site(p, clone, SYS_clone, clone_args);
	single_site(p, report, SYS_write, report_args);
	single_site(p, filter, SYS_seccomp, seccomp_args);
	single_site(p, fork, SYS_clone, fork_args);
	static const long pt_nrs[] = { SYS_read, SYS_pread64, SYS_write };
	single_site_nrs(p, pt, pt_nrs, ARRAY_SIZE(pt_nrs), pt_args);
	place(p, ksc);
	ksc_site(p);
	place(p, generic);
	generic_site(p);
	return link_prog(p);
}

/* Each stub thread's own filter: K's sites are not for it. */
static long thread_filter(struct bpf_prog *p)
{
	static const int k_sites[] = { STUB_OFF_SITE_WAIT, STUB_OFF_SITE_CLONE, STUB_OFF_SITE_REPORT,
				       STUB_OFF_SITE_SECCOMP, STUB_OFF_SITE_FORK, STUB_OFF_SITE_KSC };
	int allow, kill;

	prog_init(p);
	allow = new_label(p), kill = new_label(p);
	ld(p, DATA_IP_HI);
	jump(p, BPF_JEQ, (uint32_t)(STUB_BASE_ADDR >> 32), NEXT, allow);
	ld(p, DATA_IP_LO);
	for (size_t i = 0; i < ARRAY_SIZE(k_sites); i++)
		jump(p, BPF_JEQ, (uint32_t)STUB_SITE_IP(k_sites[i]), kill, NEXT);
	place(p, allow);
	ret(p, SECCOMP_RET_ALLOW);
	place(p, kill);
	ret(p, SECCOMP_RET_KILL_PROCESS);
	return link_prog(p);
}

/* The embedded stub really has its syscall instructions where the filters trust them. */
static long check_sites(void)
{
	static const int sites[] = { STUB_OFF_SITE_GENERIC, STUB_OFF_SITE_SIGRETURN, STUB_OFF_SITE_WAIT,
				     STUB_OFF_SITE_CLONE, STUB_OFF_SITE_REPORT, STUB_OFF_SITE_SECCOMP,
				     STUB_OFF_SITE_FORK, STUB_OFF_SITE_KSC, STUB_OFF_SITE_PT };
	unsigned char b[2];

	for (size_t i = 0; i < ARRAY_SIZE(sites); i++)
		if (stub_image_peek(STUB_TEXT_ADDR + sites[i], b, sizeof(b)) || b[0] != 0x0f || b[1] != 0x05) {
			pr_err("stub image: no syscall instruction at %#lx", (unsigned long)STUB_TEXT_ADDR + sites[i]);
			return -ENOEXEC;
		}
	return 0;
}

long seccomp_fill_ctl(struct stub_ctl *ctl)
{
	static struct bpf_prog c, g;
	static long built = 1;

	if (built == 1) {
		built = check_sites();
		if (!built)
			built = stub_filter(&c);
		if (!built)
			built = thread_filter(&g);
		if (built)
			pr_err("seccomp: cannot build the stub's filters (%s)", strerror((int)-built));
	}
	if (built)
		return built;
	_Static_assert(sizeof(struct sock_filter) == sizeof(uint64_t), "sock_filter is 8 bytes");
	memcpy(ctl->c_filter, c.ins, (size_t)c.n * sizeof(struct sock_filter));
	memcpy(ctl->g_filter, g.ins, (size_t)g.n * sizeof(struct sock_filter));
	ctl->c_prog.len = (uint16_t)c.n;
	ctl->c_prog.filter = STUB_CTL_ADDR + offsetof(struct stub_ctl, c_filter);
	ctl->g_prog.len = (uint16_t)g.n;
	ctl->g_prog.filter = STUB_CTL_ADDR + offsetof(struct stub_ctl, g_filter);
	ctl->k_set = 1UL << (STUB_SIG_CTL - 1);
	return g.n <= STUB_FILTER2_MAX ? 0 : -E2BIG;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * The stub: a tiny freestanding program whose only job is to own a guest
 * address space. It is linked at PVX_STUB_BASE (stub/stub.lds) so the guest
 * keeps the normal low address range, and uses no libc and no writable data.
 * Its syscall instructions are all in stub/sites.S, at fixed places.
 *
 * ptrace platform: started stopped at exec (PTRACE_TRACEME); _start never
 * runs. The sentry points the stub's registers at a gadget of sites.S to
 * run a syscall in this mm, or at guest code to run the guest.
 *
 * vmexec platform ("pvx-stub vmexec"): the stub only sleeps; see vmexec_main().
 *
 * seccomp platform ("pvx-stub seccomp"): seccomp_main() maps the shared
 * regions and the control page, installs a SIGSYS/fault handler for every
 * thread, drops privileges, installs the sentry's filter and becomes K, the
 * thread maker (sites.S), which never runs guest code. Each guest thread is
 * a thread K makes when the sentry asks; it installs a second filter that
 * denies it K's syscall sites, then traps for the sentry. The handler runs
 * on an alternate stack inside the thread's region, reports each trap there
 * and serves the sentry's commands until told to resume the guest (like
 * gVisor's systrap stub and UML's seccomp mode).
 */
#include <stddef.h>
#include "pvx/sigframe.h"
#include "pvx/stub_abi.h"

#define SHARED ((struct stub_shared *)STUB_SHARED_ADDR)
#define CTL ((const struct stub_ctl *)STUB_CTL_ADDR)

/* x86-64 numbers and constants, spelled out: there are no libc headers here. */
enum {
	NR_close = 3, NR_mmap = 9, NR_rt_sigaction = 13, NR_rt_sigprocmask = 14,
	NR_sigaltstack = 131, NR_prctl = 157, NR_arch_prctl = 158, NR_futex = 202, NR_capset = 126,
	NR_exit_group = 231, NR_seccomp = 317, NR_pause = 34, NR_exit = 60,
	NR_read = 0, NR_pread64 = 17, NR_write = 1, EBADF_ = 9, EFAULT_ = 14, EAGAIN_ = 11, PIPE_BUF_ = 4096,
	SIGPIPE_ = 13,
	NR_madvise = 28, NR_recvmsg = 47, NR_dup3 = 292, NR_close_range = 436,
	MADV_DONTFORK_ = 10, PR_SET_PDEATHSIG_ = 1, MSG_DONTWAIT_ = 0x40, MSG_CTRUNC_ = 8,
	MSG_CMSG_CLOEXEC_ = 0x40000000,
	SIGSYS_ = 31, SIGSEGV_ = 11, SIGBUS_ = 7, SIGURG_ = 23, SIGILL_ = 4, SYS_SECCOMP_ = 1, FUTEX_WAIT_ = 0, FUTEX_WAKE_ = 1,
	ARCH_SET_GS_ = 0x1001, ARCH_SET_FS_ = 0x1002, PR_SET_DUMPABLE_ = 4, PR_SET_NO_NEW_PRIVS_ = 38,
};

/* sites.S */
long stub_sc(long nr, long a0, long a1, long a2, long a3, long a4, long a5);
long stub_ksc(long nr, long a0, long a1, long a2, long a3, long a4, long a5);
long stub_pt(long nr, long a0, long a1, long a2, long a3, long a4, long a5);
extern char stub_restorer[];
__attribute__((noreturn)) void stub_k_ready(void);

#define sys(nr, a0, a1, a2) stub_sc(nr, (long)(a0), (long)(a1), (long)(a2), 0, 0, 0)

static __attribute__((noreturn)) void die(int code)
{
	for (;;)
		sys(NR_exit_group, code, 0, 0);
}

static inline uint64_t rdfsbase(void)
{
	uint64_t v;
	__asm__ volatile("rdfsbase %0" : "=r"(v));
	return v;
}
static inline uint64_t rdgsbase(void)
{
	uint64_t v;
	__asm__ volatile("rdgsbase %0" : "=r"(v));
	return v;
}

/*
 * GS (seccomp_patch.md): a guest whose GS base is 0, as nearly every
 * program's, runs with GS at its thread's region, where the usertrap's
 * entry (sites.S) finds it; one that sets its own gets it loaded (the
 * sentry turns the usertrap off for its address space first). cur_gs_base
 * is what is loaded. The guest is told 0 for its region's address.
 */
static void gs_load(struct stub_shared *sh, uint64_t guest)
{
	uint64_t want = guest ? guest : (uint64_t)sh;
	uint64_t now = sh->has_fsgsbase ? rdgsbase() : sh->cur_gs_base;

	if (want != now)
		sys(NR_arch_prctl, ARCH_SET_GS_, want, 0);
	sh->cur_gs_base = want;
}

static uint64_t gs_guest(struct stub_shared *sh)
{
	uint64_t gs = sh->has_fsgsbase ? rdgsbase() : sh->cur_gs_base;

	return gs == (uint64_t)sh ? 0 : gs;
}

/*
 * Hand the shared page to the sentry and wait for a command: spin (only when
 * the sentry runs on another CPU), then sleep on the futex. The sleeping
 * flags spare each side a futex wake while the other is spinning: each
 * stores its own word, then reads the other's (seq_cst, Dekker), so a wake
 * is never lost.
 */
static void park(struct stub_shared *sh)
{
	__atomic_store_n(&sh->state, STUB_PARKED, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&sh->sentry_sleeping, __ATOMIC_SEQ_CST))
		sys(NR_futex, &sh->state, FUTEX_WAKE_, 1);
	for (uint32_t spin = sh->spin;;) {
		if (__atomic_load_n(&sh->state, __ATOMIC_ACQUIRE) == STUB_CMD)
			return;
		if (spin) {
			spin--;
			__asm__ volatile("" ::: "memory");
			continue;
		}
		__atomic_store_n(&sh->stub_sleeping, 1, __ATOMIC_SEQ_CST);
		if (__atomic_load_n(&sh->state, __ATOMIC_SEQ_CST) != STUB_CMD)
			stub_sc(NR_futex, (long)&sh->state, FUTEX_WAIT_, STUB_PARKED, 0, 0, 0);
		__atomic_store_n(&sh->stub_sleeping, 0, __ATOMIC_RELAXED);
	}
}

/* The region of the thread whose (alternate) stack holds addr. */
static struct stub_shared *region_of(uint64_t addr)
{
	uint64_t i = (addr - STUB_SHARED_ADDR) / STUB_SHARED_SIZE;

	if (addr < STUB_SHARED_ADDR || i >= STUB_MAX_THREADS)
		die(STUB_EXIT_REGION);
	return (struct stub_shared *)(STUB_SHARED_ADDR + i * STUB_SHARED_SIZE);
}

static void set_altstack(struct stub_shared *sh)
{
	struct { uint64_t sp; int32_t flags, pad; uint64_t size; } ss = {
		(uint64_t)sh->altstack, 0, 0, sizeof(sh->altstack) };
	if (sys(NR_sigaltstack, &ss, 0, 0))
		die(STUB_EXIT_ALTSTACK);
}

/*
 * A new stub thread (a new guest thread), made by K with its own filter in
 * place, on the top of its region's altstack: its altstack, no blocked
 * signals but SIGPIPE (K blocks them all), then the boot trap the sentry waits for.
 */
__attribute__((used, noreturn)) void stub_thread_main(struct stub_shared *sh)
{
	/*
	 * SIGPIPE stays blocked: the host raises it at a passthrough write
	 * that finds no reader, and the sentry, which then makes the write
	 * itself, raises the guest's (a host SIGPIPE here would be a second).
	 */
	uint64_t pipe_only = 1UL << (SIGPIPE_ - 1);

	set_altstack(sh);
	stub_sc(NR_rt_sigprocmask, 2 /* SIG_SETMASK */, (long)&pipe_only, 0, 8, 0, 0);
	/* The usertrap's way to its region (sites.S): %gs, while the guest's own GS base is 0 (gs_load). */
	sh->fast.self = (uint64_t)sh;
	gs_load(sh, 0);
	__asm__ volatile(".globl stub_boot_trap\nstub_boot_trap: ud2");
	for (;;)
		sys(NR_exit, 0, 0, 0);
}

/*
 * n bytes from src to dst as the guest thread would copy them: 0, or 1 when
 * a page faulted (the handler's fixup, below, resumes at stub_copy_fault).
 * No syscall instruction: jumping here gives guest code nothing it lacks.
 */
long stub_copy(void *dst, const void *src, uint64_t n);
extern char stub_copy_insn[], stub_copy_fault[];
__asm__(".text\n"
	".globl stub_copy\n"
	"stub_copy:\n"
	"	mov %rdx, %rcx\n"
	"stub_copy_insn:\n"
	"	rep movsb\n"	/* a fault leaves rip here, and DF is clear in a handler */
	"	xor %eax, %eax\n"
	"	ret\n"
	"stub_copy_fault:\n"
	"	mov $1, %eax\n"
	"	ret\n");

/*
 * The fast return (issue 16): instead of rt_sigreturn, the handler loads
 * the guest's FPU state from its frame itself (xrstor, which is what the
 * kernel's sigreturn does with it), and then stub_fast_jump, off the
 * altstack from its first instruction (rsp in the region's fast block),
 * sets the frame's signal mask with rt_sigprocmask at the generic site
 * (not for a SIGSYS, whose handler runs with the guest's mask: see
 * seccomp_main), loads every general register from the fast block, rsp
 * last, and jumps to rip through rcx. That is only possible when rcx holds
 * rip, as it does after a syscall the guest made (the CPU put its return
 * address there), so it is only taken then, with the user code and stack
 * selectors and no trap flag: a changed rip (a signal to deliver, a
 * restart, an exec) or anything odd takes rt_sigreturn as before.
 *
 * A signal that lands in stub_fast_jump (a kick for a guest signal) has
 * its frame at the top of the altstack, since rsp is not on it, and
 * trap_handler (fast_landed) sees armed and a rip in stub_fast_jump or on
 * the generic site (before or after its syscall): the trap is the guest's,
 * at the registers the jump was loading (at stub_fast_last, all loaded but
 * rip, which is rcx); the FPU state, restored already, is the one its frame
 * holds. So is the ud2 at stub_fast_rekick, which the window reaches when
 * a signal came in while the SIGSYS handler ran (fast.pending): that one
 * is reported then. Guest code jumping into stub_fast_jump with a forged
 * block only loads registers of its choosing and a mask it could set
 * itself (the generic site allows rt_sigprocmask).
 */
__attribute__((noreturn)) void stub_fast_jump(struct stub_fast *f, int set_mask);
/*
 * The fast block's registers (struct stub_fast regs[]), in the order the
 * window pops them: this list, then eflags (popfq) and rsp. The pops, the
 * handler's fill (fast_return) and its read back (fast_landed) are all
 * made from it.
 */
#define FAST_POPS(X) X(r8) X(r9) X(r10) X(r11) X(r12) X(r13) X(r14) X(r15) X(rdi) X(rsi) X(rbp) X(rbx) X(rdx) X(rax) X(rcx)
#define FAST_INDEX(r) FAST_##r,
enum { FAST_POPS(FAST_INDEX) FAST_EFLAGS, FAST_RSP, FAST_NREGS };
_Static_assert(FAST_NREGS == sizeof(((struct stub_fast *)0)->regs) / 8, "every slot of the fast block, once");
#define FAST_POP(r) "	pop %" #r "\n"
#define FAST_SET(r) f[FAST_##r] = c->r;	/* from c: a signal frame's or the sentry's registers */
#define FAST_GET(r) c->r = f[FAST_##r];
extern char stub_boot_trap[];
extern char stub_ut_pads[], stub_ut_onstack[];
extern char stub_fast_start[], stub_fast_window[], stub_fast_last[], stub_fast_rekick[], stub_fast_end[];
__asm__(".text\n"
	".globl stub_fast_jump, stub_fast_start\n"
	"stub_fast_jump:\n"
	"stub_fast_start:\n"
	"	mov %rdi, %rsp\n"		/* &f->ret: off the altstack from here on */
	"	test %esi, %esi\n"
	"	jz 1f\n"
	"	lea 144(%rdi), %rsi\n"		/* rt_sigprocmask(SIG_SETMASK, &f->mask, NULL, 8) */
	"	mov $2, %edi\n"
	"	xor %edx, %edx\n"
	"	mov $8, %r10d\n"
	"	mov $14, %eax\n"
	"	jmp stub_site_generic\n"	/* its ret pops f->ret: stub_fast_window */
	"1:	add $8, %rsp\n"
	".globl stub_fast_window\n"
	"stub_fast_window:\n"			/* rsp = f->regs */
	"	cmpq $0, 144(%rsp)\n"		/* f->pending */
	"	jne stub_fast_rekick\n"
	"	cmpq $0, 160(%rsp)\n"		/* f->esc */
	"	jne stub_fast_rekick\n"
	FAST_POPS(FAST_POP)
	"	popfq\n"
	"	pop %rsp\n"
	".globl stub_fast_last\n"
	"stub_fast_last:\n"			/* every register the guest's but rip */
	"	jmp *%rcx\n"
	".globl stub_fast_rekick\n"
	"stub_fast_rekick:\n"
	"	ud2\n"
	".globl stub_fast_end\n"
	"stub_fast_end:\n");

/* xrstor of the frame's state, with mask: 0, or 1 when it faulted (a forged header; fixup resumes at the fault label). */
long stub_xrstor(const void *fp, uint64_t mask);
extern char stub_xrstor_insn[], stub_xrstor_fault[];
__asm__(".text\n"
	".globl stub_xrstor\n"
	"stub_xrstor:\n"
	"	mov %rsi, %rax\n"
	"	mov %rsi, %rdx\n"
	"	shr $32, %rdx\n"
	"stub_xrstor_insn:\n"
	"	xrstor64 (%rdi)\n"
	"	xor %eax, %eax\n"
	"	ret\n"
	"stub_xrstor_fault:\n"
	"	mov $1, %eax\n"
	"	ret\n");

/*
 * The copy-out a STUB_CMD_RUN brings (stub_abi.h): 1 when done or none, 0
 * when it faulted (out_fault set for the sentry). Bounded here: the fields
 * are guest-writable.
 */
static int copy_out(struct stub_shared *sh)
{
	uint64_t n = sh->out_len, to = sh->out_addr;

	if (!n)
		return 1;
	sh->out_len = 0;
	if (n <= STUB_OUT_MAX && to < PVX_GUEST_TASK_SIZE && n <= PVX_GUEST_TASK_SIZE - to &&
	    !stub_copy((void *)to, sh->out_buf, n))
		return 1;
	sh->out_fault = 1;
	return 0;
}

/*
 * STUB_CMD_BATCH. The table and its length are guest-writable like every
 * field here, so the length is bounded; each call is made at the generic
 * site, so the filter allows of it what it allows a lone command's.
 */
static void batch(struct stub_shared *sh)
{
	uint64_t n = (uint64_t)sh->sys_nr, i;
	const struct stub_batch_op *op = (const struct stub_batch_op *)sh->out_buf;
	long r = 0;

	if (n > STUB_BATCH_MAX)
		n = 0;
	for (i = 0; i < n; i++) {
		r = stub_sc(op[i].nr, op[i].args[0], op[i].args[1], op[i].args[2], op[i].args[3], op[i].args[4],
			    op[i].args[5]);
		if ((unsigned long)r >= -4095UL)
			break;
	}
	sh->sys_args[0] = (int64_t)i;
	sh->sys_ret = r;
}

/*
 * Report to the sentry, then run its commands until it says STUB_CMD_RUN
 * (or, in a usertrap, STUB_CMD_ESCALATE): that command.
 */
static uint32_t serve(struct stub_shared *sh, int ut)
{
	for (;;) {
		park(sh);
		uint32_t cmd = sh->cmd;
		if (cmd == STUB_CMD_ESCALATE) {
			if (ut)
				return cmd;
			sh->sys_ret = -EBADF_;	/* there is a frame already */
			continue;
		}
		if (cmd == STUB_CMD_RUN) {
			uint32_t fd1 = sh->run_close;
			if (fd1) {
				sh->run_close = 0;
				sys(NR_close, fd1 - 1, 0, 0);
			}
			if (!copy_out(sh))
				continue;	/* it faulted: the sentry's turn again */
			__atomic_store_n(&sh->state, STUB_RUNNING, __ATOMIC_RELAXED);
			return cmd;
		}
		if (sh->cmd == STUB_CMD_EXIT)
			for (;;)
				sys(NR_exit, 0, 0, 0);
		if (sh->cmd == STUB_CMD_BATCH) {
			batch(sh);
			continue;
		}
		sh->sys_ret = stub_sc(sh->sys_nr, sh->sys_args[0], sh->sys_args[1], sh->sys_args[2],
				      sh->sys_args[3], sh->sys_args[4], sh->sys_args[5]);
	}
}

/*
 * SIGSEGV and SIGBUS are the only signals the handler leaves unblocked: a
 * fault of stub_copy's guest access comes back here, nested on the
 * altstack, and resumes at stub_copy_fault (an exception table of one
 * entry). Any other fault of the handler's own code (on the altstack
 * already) ends the stub, as it did when every signal was blocked.
 */
static int fixup(int sig, struct k_ucontext *uc)
{
	if (sig != SIGSEGV_ && sig != SIGBUS_)
		return 0;
	/*
	 * Nested: the faulting code ran on this thread's altstack. (Not
	 * uc->ss_flags: the kernel saves the altstack's settings there, never
	 * SS_ONSTACK.) Guest code that moves its stack there only fools itself.
	 */
	const struct stub_shared *sh = region_of((uint64_t)__builtin_frame_address(0));
	if (uc->mc.rsp - (uint64_t)sh->altstack >= sizeof(sh->altstack))
		return 0;	/* not nested: guest code's own fault (even at stub_copy: a guest jump there) */
	if (uc->mc.rip == (uint64_t)stub_copy_insn)
		uc->mc.rip = (uint64_t)stub_copy_fault;
	else if (uc->mc.rip == (uint64_t)stub_xrstor_insn)
		uc->mc.rip = (uint64_t)stub_xrstor_fault;
	else
		die(STUB_EXIT_NESTED_FAULT);
	return 1;
}

/*
 * A signal that landed in a fast return (see stub_fast_jump): its frame
 * holds stub registers, the guest's are in the fast block. 1 when it is
 * the window's ud2 for a signal that came in while a SIGSYS handler ran:
 * the caller reports that one instead.
 */
static int fast_landed(struct stub_shared *sh, struct k_sigcontext *c)
{
	uint64_t f0 = (uint64_t)&sh->fast, rip = c->rip;
	int in_jump = rip - (uint64_t)stub_fast_start < (uint64_t)(stub_fast_end - stub_fast_start);
	/* the generic site, where its jmp goes: before the syscall (an interrupt's signal) or after it */
	int at_mask = rip == STUB_SITE_IP(STUB_OFF_SITE_GENERIC) || rip == STUB_SITE_IP(STUB_OFF_SITE_GENERIC) - 2;

	if (!__atomic_load_n(&sh->fast.armed, __ATOMIC_RELAXED))
		return 0;
	sh->fast.armed = 0;
	if (rip == (uint64_t)stub_fast_last) {	/* rsp loaded already: only rip is not the guest's yet */
		c->rip = c->rcx;
		return 0;
	}
	if ((!in_jump && !at_mask) || c->rsp - f0 > sizeof(sh->fast))
		return 0;
	const uint64_t *f = sh->fast.regs;
	FAST_POPS(FAST_GET)
	c->eflags = f[FAST_EFLAGS], c->rsp = f[FAST_RSP], c->rip = f[FAST_rcx];
	return rip == (uint64_t)stub_fast_rekick;
}

static uint64_t xcr0(void)
{
	uint32_t lo, hi;

	__asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
	return (uint64_t)hi << 32 | lo;
}

/* The flags a sigreturn restores (the kernel's FIX_EFLAGS less TF and RF, which take rt_sigreturn). */
#define FAST_FLAGS 0x40cd5UL	/* CF PF AF ZF SF DF OF AC */
#define FLAG_TF 0x100UL

/*
 * Return to the guest without rt_sigreturn when the frame allows it (see
 * stub_fast_jump); else return, and the caller lets the restorer make the
 * sigreturn. The frame is guest-writable: its FPU header is checked as the
 * kernel checks it, and an xrstor that faults anyway takes the sigreturn,
 * which answers a bad frame as Linux does.
 */
static void fast_return(struct stub_shared *sh, struct k_ucontext *uc, int set_mask)
{
	const struct k_sigcontext *c = &uc->mc;
	uint64_t fp = c->fpstate, base = (uint64_t)sh->altstack, xfeat;

	if (c->rcx != c->rip || c->cs != 0x33 || c->ss != 0x2b || (c->eflags & FLAG_TF) || (fp & 63) ||
	    fp < base || fp - base > sizeof(sh->altstack) - K_FXSAVE_SIZE - 64)
		return;
	const struct k_fpx_sw_bytes *sw = (const void *)(fp + K_FPX_SW_BYTES_OFFSET);
	uint32_t size = sw->xstate_size, magic2;
	if (sw->magic1 != K_FP_XSTATE_MAGIC1 || size < K_FXSAVE_SIZE + 64 || sw->extended_size != size + 4 ||
	    size > base + sizeof(sh->altstack) - 4 - fp)
		return;
	__builtin_memcpy(&magic2, (const char *)fp + size, 4);
	if (magic2 != K_FP_XSTATE_MAGIC2 || ((xfeat = xcr0()) & ~sw->xfeatures))
		return;
	uint64_t *f = sh->fast.regs;
	FAST_POPS(FAST_SET)	/* rcx is rip (checked above): where the window's last jmp goes */
	f[FAST_EFLAGS] = (c->eflags & FAST_FLAGS) | 0x202, f[FAST_RSP] = c->rsp;
	sh->fast.mask = uc->sigmask;
	sh->fast.ret = (uint64_t)stub_fast_window;
	if (stub_xrstor((const void *)fp, xfeat))
		return;	/* restores nothing it did not check: the sigreturn loads it all again */
	__atomic_store_n(&sh->fast.armed, 1, __ATOMIC_RELAXED);
	stub_fast_jump(&sh->fast, set_mask);
}

/* The lowest signal that came in while a SIGSYS handler ran (fast.pending), taken; 0: none. */
static int take_pending(struct stub_shared *sh)
{
	uint64_t p = __atomic_load_n(&sh->fast.pending, __ATOMIC_RELAXED);

	if (!p)
		return 0;
	int sig = __builtin_ctzll(p) + 1;
	__atomic_and_fetch(&sh->fast.pending, ~(1UL << (sig - 1)), __ATOMIC_RELAXED);
	return sig;
}

/*
 * One string of the guest's at src into buf (room bytes at most, its NUL
 * included), page by page up to its NUL, as the kernel's getname() would
 * at the start of the call: its length, or -1 (a fault, or too long).
 */
static int32_t prefetch_one(char *buf, uint64_t room, uint64_t src)
{
	for (uint64_t done = 0; done < room;) {
		uint64_t at = src + done, chunk = 4096 - (at & 4095);
		if (chunk > room - done)
			chunk = room - done;
		if (at >= PVX_GUEST_TASK_SIZE || chunk > PVX_GUEST_TASK_SIZE - at || stub_copy(buf + done, (const void *)at, chunk))
			return -1;
		for (uint64_t i = done; i < done + chunk; i++)
			if (!buf[i])
				return (int32_t)i;
		done += chunk;
	}
	return -1;
}

/*
 * Path prefetch (stub_abi.h): the string arguments the control page names
 * for this syscall, the first two of them: the first at the start of
 * pf_buf, the second right after the first's NUL (only when the first was
 * copied).
 */
static void prefetch(struct stub_shared *sh, uint32_t nr, const uint64_t args[6])
{
	uint32_t bits;

	/* The sentry reads these only for a syscall the table names: other traps leave their lines alone. */
	if (nr >= STUB_PF_NRS || !(bits = CTL->pf_arg[nr] & 63))
		return;
	sh->pf_len2 = -1;
	int i = __builtin_ctz(bits);
	int32_t n = prefetch_one(sh->pf_buf, STUB_PF_MAX, args[i]);
	sh->pf_addr = args[i];
	sh->pf_len = n;
	bits &= bits - 1;
	if (n < 0 || !bits || (uint64_t)n + 2 >= STUB_PF_MAX)
		return;
	i = __builtin_ctz(bits);
	sh->pf_addr2 = args[i];
	sh->pf_len2 = prefetch_one(sh->pf_buf + n + 1, STUB_PF_MAX - (uint64_t)n - 1, args[i]);
}

/*
 * Input prefetch (stub_abi.h): the buffer the control page names for this
 * syscall, all of it or nothing (a fault anywhere leaves in_len 0: the
 * sentry's own read then fails or succeeds as the kernel's would).
 */
static void prefetch_in(struct stub_shared *sh, uint32_t nr, const uint64_t args[6])
{
	struct stub_in_arg a;

	/* As prefetch: in_len is written (0 or the length) only for a syscall the table names. */
	if (nr >= STUB_PF_NRS || !(CTL->pf_arg[nr] & STUB_PF_IN) || !(a = CTL->pf_in[nr]).ptr)
		return;
	sh->in_len = 0;
	if (a.ptr > 6 || a.len > 6)
		return;
	uint64_t src = args[a.ptr - 1], n = a.size;
	if (a.len) {
		if (args[a.len - 1] > STUB_IN_MAX)
			return;
		n *= args[a.len - 1];
	}
	if (!n || n > STUB_IN_MAX || src < PVX_GUEST_MIN || src >= PVX_GUEST_TASK_SIZE || n > PVX_GUEST_TASK_SIZE - src ||
	    stub_copy(sh->in_buf, (const void *)src, n))
		return;
	sh->in_addr = src;
	sh->in_len = (uint32_t)n;
}

/*
 * Passthrough (sentry/platform/seccomp_passthrough.md): a read(2) or
 * pread64(2) of guest fd g whose bit the sentry set in the control page
 * (read-only here) is made on the stub's dup of g's host file, at the one
 * site the filter allows it (fd bounded to the passthrough range), and the
 * guest resumes with the result. The siginfo and registers are on the
 * altstack, which other guest threads can write: a forged value can only
 * make a read the guest could make by jumping to that site itself. EBADF
 * (the sentry is closing the dup) parks as any other trap: the sentry answers.
 * So does EFAULT (nothing read, the offset unmoved): the sentry's copy grows
 * a stack as a fault would (mm/uaccess.c), the host's read into this mm does not.
 * A pipe's dup is a non-blocking open of its own: EAGAIN (empty, a writer
 * left) parks too, and the sentry waits or answers as the guest's flags say.
 * A write (a pipe's write end, PIPE_BUF bytes at most: all or EAGAIN, as
 * Linux's blocking write when it need not wait) parks on any error: the
 * sentry answers EAGAIN by waiting, EPIPE with the guest's SIGPIPE (the
 * host's, for this thread, stays blocked: stub_thread_main).
 */
static int passthrough(long nr, const uint64_t a[6], uint64_t *ret, uint32_t *count)
{
	if (nr != NR_read && nr != NR_pread64 && (nr != NR_write || a[2] > PIPE_BUF_))
		return 0;
	uint32_t g = (uint32_t)a[0];	/* the kernel reads an unsigned int */
	const uint64_t *bits = nr == NR_write ? CTL->pt_wbits : CTL->pt_bits;
	if (g >= STUB_PT_MAX || !((__atomic_load_n(&bits[g / 64], __ATOMIC_ACQUIRE) >> (g % 64)) & 1))
		return 0;
	if (count && ++*count % STUB_PT_ASK == 0)
		return 0;	/* the sentry's, so that its site counts towards a patch (stub_abi.h pt_count) */
	long r = stub_pt(nr, STUB_PT_BASE + (long)g, (long)a[1], (long)a[2], (long)a[3], 0, 0);
	if (r == -EBADF_ || r == -EFAULT_ || r == -EAGAIN_ || (nr == NR_write && r < 0))
		return 0;
	*ret = (uint64_t)r;
	return 1;
}

/* The trap the sentry reads: the frame's registers (the guest's, to resume), the signal and its details. */
static void report(struct stub_shared *sh, struct k_ucontext *uc, int sig, int code, uint64_t addr, int32_t nr)
{
	const struct k_sigcontext *c = &uc->mc;
	struct pvx_regs *r = &sh->regs;

	r->r8 = c->r8, r->r9 = c->r9, r->r10 = c->r10, r->r11 = c->r11;
	r->r12 = c->r12, r->r13 = c->r13, r->r14 = c->r14, r->r15 = c->r15;
	r->rdi = c->rdi, r->rsi = c->rsi, r->rbp = c->rbp, r->rbx = c->rbx;
	r->rdx = c->rdx, r->rax = c->rax, r->rcx = c->rcx, r->rsp = c->rsp;
	r->rip = c->rip, r->eflags = c->eflags, r->cs = c->cs, r->ss = c->ss;
	/* Without FSGSBASE the guest cannot change its bases but through us. */
	r->fs_base = sh->has_fsgsbase ? rdfsbase() : sh->cur_fs_base;
	r->gs_base = gs_guest(sh);
	r->orig_rax = sig == SIGSYS_ && code == SYS_SECCOMP_ ? (uint64_t)(int64_t)nr : (uint64_t)-1;
	sh->trap_signo = sig;
	sh->trap_code = code;
	sh->trap_syscall = nr;
	sh->trap_addr = addr;
	sh->ucontext = (uint64_t)uc;
}

/* The sentry's bases for the guest (fs_base, gs_base of regs), loaded where they differ. */
static void bases_load(struct stub_shared *sh, const struct pvx_regs *r)
{
	uint64_t fs = sh->has_fsgsbase ? rdfsbase() : sh->cur_fs_base;

	if (r->fs_base != fs)
		sys(NR_arch_prctl, ARCH_SET_FS_, r->fs_base, 0);
	sh->cur_fs_base = r->fs_base;
	gs_load(sh, r->gs_base);
}

/* The sentry's answer into the frame, once it says STUB_CMD_RUN. */
static void resume_regs(struct stub_shared *sh, struct k_sigcontext *c)
{
	const struct pvx_regs *r = &sh->regs;

	c->r8 = r->r8, c->r9 = r->r9, c->r10 = r->r10, c->r11 = r->r11;
	c->r12 = r->r12, c->r13 = r->r13, c->r14 = r->r14, c->r15 = r->r15;
	c->rdi = r->rdi, c->rsi = r->rsi, c->rbp = r->rbp, c->rbx = r->rbx;
	c->rdx = r->rdx, c->rax = r->rax, c->rcx = r->rcx, c->rsp = r->rsp;
	c->rip = r->rip, c->eflags = r->eflags;
	bases_load(sh, r);
}

/*
 * Every guest syscall (SIGSYS) and fault lands here, on the shared
 * altstack. A SIGSYS handler runs with the guest's signal mask (seccomp_main:
 * no mask change at delivery, and none to undo after), so a kick or any
 * other signal can come in while it runs. Such a signal, interrupting stub
 * code on the altstack, is only noted (fast.pending), and told to the
 * sentry as a trap of its own once the guest's state is final: by the
 * fast return's window (stub_fast_rekick), or, on the way to rt_sigreturn,
 * after this handler has closed the mask (rt_sigreturn opens it again, at
 * once with the return to the guest).
 */
static void trap_handler(int sig, struct k_siginfo *si, struct k_ucontext *uc)
{
	if (fixup(sig, uc))
		return;
	struct stub_shared *sh = region_of((uint64_t)__builtin_frame_address(0));
	struct k_sigcontext *c = &uc->mc;

	if (sig != SIGSYS_ && c->rip >= PVX_STUB_BASE && c->rip != (uint64_t)stub_boot_trap &&
	    c->rsp - (uint64_t)sh->altstack < sizeof(sh->altstack)) {
		if (si->code > 0)	/* a fault of the handler's own code (the kernel's, not sent) */
			die(STUB_EXIT_NESTED_FAULT);
		__atomic_or_fetch(&sh->fast.pending, 1UL << (sig - 1), __ATOMIC_RELAXED);
		return;
	}
	/*
	 * A signal sent while the usertrap's entry runs on the guest's stack
	 * (this frame is at the altstack's top, which it has not reached yet):
	 * noted the same way, and told once its trap is served. A fault there
	 * (the guest moved GS) is the guest's, below.
	 */
	if (si->code <= 0 && c->rip - (uint64_t)stub_ut_pads < (uint64_t)(stub_ut_onstack - stub_ut_pads)) {
		__atomic_or_fetch(&sh->fast.pending, 1UL << (sig - 1), __ATOMIC_RELAXED);
		return;
	}
	int open = sig == SIGSYS_, code = si->code, serving = 1;
	int32_t nr = si->sys.syscall;
	/* A signal sent by a process (code <= 0) names its sender: a host pid the guest must not read. */
	uint64_t addr = code > 0 ? si->addr : 0;
	if (code <= 0)
		si->kill.pid = 0, si->kill.uid = 0;
	if (fast_landed(sh, c)) {	/* the window's ud2: an escalation, or a signal that came in before */
		if (sig != SIGILL_ || code <= 0)	/* one that lands on the ud2 itself: told too */
			__atomic_or_fetch(&sh->fast.pending, 1UL << (sig - 1), __ATOMIC_RELAXED);
		if (__atomic_exchange_n(&sh->fast.esc, 0, __ATOMIC_RELAXED)) {
			sig = SIGILL_, code = STUB_TRAP_ESCALATED;	/* the signals pending stay for the next window */
		} else {
			sig = take_pending(sh);
			if (!sig)
				sig = SIGURG_;	/* taken meanwhile (the word is guest-writable): an interruption */
			code = sig == SIGURG_ ? -1 /* SI_QUEUE: a kick */ : 0;
		}
		addr = 0, nr = 0;
	} else if (open && code == SYS_SECCOMP_) {
		const uint64_t a[6] = { c->rdi, c->rsi, c->rdx, c->r10, c->r8, c->r9 };
		if (passthrough(nr, a, &c->rax, &sh->pt_count))
			serving = 0;
	}
	for (;;) {
		if (serving) {
			report(sh, uc, sig, code, addr, nr);
			if (open && code == SYS_SECCOMP_) {
				const uint64_t a[6] = { c->rdi, c->rsi, c->rdx, c->r10, c->r8, c->r9 };
				prefetch(sh, (uint32_t)nr, a);
				prefetch_in(sh, (uint32_t)nr, a);
			} else {
				sh->pf_len = sh->pf_len2 = -1;
				sh->in_len = 0;
			}
			serve(sh, 0);
			resume_regs(sh, c);
		}
		fast_return(sh, uc, !open);
		if (!open)
			return;	/* rt_sigreturn sets the frame's mask */
		uint64_t all = ~0UL;
		stub_sc(NR_rt_sigprocmask, 2 /* SIG_SETMASK */, (long)&all, 0, 8, 0, 0);
		open = 0;
		if (!(sig = take_pending(sh)))
			return;
		code = sig == SIGURG_ ? -1 : 0, addr = 0, nr = 0, serving = 1;
	}
}

/*
 * The usertrap's way back (seccomp_patch.md): the registers the sentry
 * left in the region, by the fast return's window, which jumps to rcx (the
 * sentry makes it rip; a guest that forges it only steers its own thread).
 * The FPU state was never touched: it is the guest's still. With esc, the
 * window takes its ud2 instead, and the trap handler reports the trap
 * again from a signal frame (trap_handler).
 */
static __attribute__((noreturn)) void ut_return(struct stub_shared *sh, int esc, uint64_t k)
{
	const struct pvx_regs *c = &sh->regs;
	uint64_t *f = sh->fast.regs;

	if (!esc)
		bases_load(sh, c);
	FAST_POPS(FAST_SET)
	f[FAST_EFLAGS] = (c->eflags & FAST_FLAGS) | 0x202, f[FAST_RSP] = c->rsp;
	/*
	 * A STUB_UT_READ site's syscall returns to the cmp after it (site + 4),
	 * which the patch covers: made here, and on at site + 10. Anywhere else
	 * (the sentry moved rip: it escalated), or if the slot changed meanwhile,
	 * the jump goes where rip says, and a fault at site + 4 is taken back.
	 */
	if (!esc && k < STUB_UT_SLOTS && CTL->ut[k].shape == STUB_UT_READ && CTL->ut[k].site &&
	    f[FAST_rcx] == CTL->ut[k].site + STUB_UT_RET(STUB_UT_READ)) {
		f[FAST_rcx] = CTL->ut[k].site + STUB_UT_READ_LEN;
		f[FAST_EFLAGS] = (f[FAST_EFLAGS] & ~0x8d5UL) | stub_ut_cmp_flags(f[FAST_rax]);
	}
	sh->fast.ret = (uint64_t)stub_fast_window;
	__atomic_store_n(&sh->fast.esc, (uint64_t)esc, __ATOMIC_RELAXED);
	__atomic_store_n(&sh->fast.armed, 1, __ATOMIC_RELAXED);
	stub_fast_jump(&sh->fast, 0);
}

/*
 * A patched site's trap (sites.S stub_ut_entry calls this on the region's
 * altstack): slot k, the guest's registers in the fast block (but rax,
 * rcx and r11), its flags in ahal (lahf, seto) and flags (the others).
 * Reported as the SIGSYS handler reports a syscall, with no frame
 * (ucontext 0): rip and the number from the control page's slot, which
 * the guest cannot write. A slot that is free, or out of range (a guest
 * that jumped to the entry itself), is reported as it is: the sentry,
 * which keeps its own copy of the slots, answers with a SIGSEGV. A read or
 * write the passthrough serves is served here, as in the SIGSYS handler.
 */
__attribute__((used, noreturn)) void stub_ut_trap(struct stub_shared *sh, uint64_t k, uint64_t ahal, uint64_t flags)
{
	const uint64_t *f = sh->fast.regs;
	struct pvx_regs *r = &sh->regs;
	uint64_t site = 0, nr = ~0UL, ret, back = 0;

	__atomic_store_n(&sh->fast.armed, 0, __ATOMIC_RELAXED);
	flags = (flags & ~0x8d5UL) | ((ahal >> 8) & 0xd5) | (ahal & 0xff ? 0x800 : 0);
	if (k < STUB_UT_SLOTS) {
		site = CTL->ut[k].site;
		nr = CTL->ut[k].nr;
		back = STUB_UT_RET(CTL->ut[k].shape);
		if (CTL->ut[k].shape == STUB_UT_READ)	/* what its xor left: ZF PF set, CF OF SF AF clear */
			flags = (flags & ~0x8d5UL) | 0x44;
	} else {
		k = STUB_UT_SLOTS;
	}
	r->r8 = f[FAST_r8], r->r9 = f[FAST_r9], r->r10 = f[FAST_r10], r->r12 = f[FAST_r12];
	r->r13 = f[FAST_r13], r->r14 = f[FAST_r14], r->r15 = f[FAST_r15], r->rdi = f[FAST_rdi];
	r->rsi = f[FAST_rsi], r->rbp = f[FAST_rbp], r->rbx = f[FAST_rbx], r->rdx = f[FAST_rdx];
	r->rsp = f[FAST_RSP], r->eflags = flags, r->r11 = flags;
	r->cs = 0x33, r->ss = 0x2b;
	r->fs_base = sh->has_fsgsbase ? rdfsbase() : sh->cur_fs_base;
	r->gs_base = gs_guest(sh);
	r->rip = r->rcx = site ? site + back : 0;
	r->rax = r->orig_rax = nr;
	const uint64_t a[6] = { r->rdi, r->rsi, r->rdx, r->r10, r->r8, r->r9 };
	if (site && passthrough((long)nr, a, &ret, NULL)) {
		r->rax = ret;
		ut_return(sh, 0, k);
	}
	sh->trap_signo = SIGSYS_;
	sh->trap_code = STUB_TRAP_UT;
	sh->trap_syscall = (int32_t)k;
	sh->trap_addr = 0;
	sh->ucontext = 0;
	sh->pf_len = sh->pf_len2 = -1;
	sh->in_len = 0;
	if (site) {
		prefetch(sh, (uint32_t)nr, a);
		prefetch_in(sh, (uint32_t)nr, a);
	}
	ut_return(sh, serve(sh, 1) == STUB_CMD_ESCALATE, k);
}

/*
 * The seccomp stub's main thread: map what the sentry shares, set up the
 * handlers every guest thread will use, drop privileges, install the
 * filter, and become K for good (sites.S). All signals stay blocked here:
 * K takes the sentry's requests with rt_sigtimedwait and runs no handler.
 */
static void seccomp_main(int nodump)
{
	uint64_t all = ~0UL;

	if (stub_sc(NR_mmap, STUB_SHARED_ADDR, STUB_SHARED_TOTAL, 3 /* RW */, 0x11 /* SHARED|FIXED */,
		    STUB_FD_SHARED, 0) != (long)STUB_SHARED_ADDR)
		die(STUB_EXIT_SHARED_MAP);
	if (stub_sc(NR_mmap, STUB_CTL_ADDR, STUB_CTL_SIZE, 1 /* R */, 0x11 /* SHARED|FIXED */, STUB_FD_CTL, 0) !=
	    (long)STUB_CTL_ADDR)
		die(STUB_EXIT_CTL_MAP);
	/* A fork of the stub (K's) must not share them: the child gets its own (stub_fork_child). */
	if (sys(NR_madvise, STUB_SHARED_ADDR, STUB_SHARED_TOTAL, MADV_DONTFORK_) ||
	    sys(NR_madvise, STUB_CTL_ADDR, STUB_CTL_SIZE, MADV_DONTFORK_))
		die(STUB_EXIT_SHARED_MAP);
	sys(NR_close, STUB_FD_SHARED, 0, 0);
	sys(NR_close, STUB_FD_CTL, 0, 0);
	stub_sc(NR_rt_sigprocmask, 2 /* SIG_SETMASK */, (long)&all, 0, 8, 0, 0);

	/*
	 * Every catchable signal is a trap. Its handler runs with all signals
	 * but its own faults blocked (fixup), and SA_RESTART: a stub call it
	 * interrupts in a SIGSYS handler goes on. SIGSYS's handler runs with
	 * the guest's mask (SA_NODEFER, an empty sa_mask), which the kernel then
	 * neither changes at delivery nor has to set again at the return: 0.6
	 * us of a 2.5 us round trip on the development VM (trap_handler says
	 * what comes in meanwhile).
	 */
	struct k_sigaction sa = { (void *)trap_handler, 0x4 | 0x08000000 | 0x04000000 | 0x10000000, stub_restorer,
				  ~(1UL << (SIGSEGV_ - 1) | 1UL << (SIGBUS_ - 1)) };	/* SA_SIGINFO|SA_ONSTACK|SA_RESTORER|SA_RESTART */
	struct k_sigaction sys_sa = { (void *)trap_handler, 0x4 | 0x08000000 | 0x04000000 | 0x40000000, stub_restorer,
				      0 };	/* ... |SA_NODEFER */
	for (long sig = 1; sig <= 64; sig++)
		if (sig != 9 && sig != 19 &&
		    stub_sc(NR_rt_sigaction, sig, (long)(sig == SIGSYS_ ? &sys_sa : &sa), 0, 8, 0, 0))
			die(STUB_EXIT_SIGACTION);

	if (stub_sc(NR_prctl, PR_SET_NO_NEW_PRIVS_, 1, 0, 0, 0, 0))
		die(STUB_EXIT_NO_NEW_PRIVS);
	struct { uint32_t version; int pid; } caphdr = { 0x20080522, 0 };
	uint32_t capdata[6] = { 0 };
	if (sys(NR_capset, &caphdr, capdata, 0))
		die(STUB_EXIT_CAPS);
	/* No core of guest memory, ever (RLIMIT_CORE is 0 too, see stub_exec). */
	if (nodump)
		stub_sc(NR_prctl, PR_SET_DUMPABLE_, 0, 0, 0, 0, 0);
	if (sys(NR_seccomp, 1 /* SECCOMP_SET_MODE_FILTER */, 0, &CTL->c_prog))
		die(STUB_EXIT_SECCOMP);
	stub_k_ready();
}

#define ksys(nr, a0, a1, a2) stub_ksc(nr, (long)(a0), (long)(a1), (long)(a2), 0, 0, 0)

static void fork_die(void)
{
	for (;;)
		stub_ksc(NR_exit_group, STUB_EXIT_FORK_SETUP, 0, 0, 0, 0, 0);
}

/*
 * K in a fork of the stub (sites.S k_fork_check), the only thread: take the
 * fds the sentry sent for this child on fd 6 (sockets, regions, control
 * page), map the regions and control page where the parent's were (not
 * inherited: MADV_DONTFORK), move the sockets onto fds 3 and 6 and close
 * every other fd, so it holds what a fresh stub holds; then report "ready"
 * on its own socket (the sentry learns its pid from SCM_CREDENTIALS) and
 * serve as K. Everything it reads was written after the fork by the kernel
 * or the sentry: parent memory the guest could have written is not read.
 * Its filter, no_new_privs, capabilities and handlers are the parent's.
 */
__attribute__((used, noreturn)) void stub_fork_child(void)
{
	uint64_t cmsg[6];	/* struct cmsghdr + 4 ints */
	char byte;
	struct { uint64_t base, len; } iov = { (uint64_t)&byte, 1 };
	struct {
		uint64_t name; uint32_t namelen, pad0; uint64_t iov, iovlen, control, controllen;
		int32_t flags, pad1;
	} msg = { 0, 0, 0, (uint64_t)&iov, 1, (uint64_t)cmsg, sizeof(cmsg), 0, 0 };
	int32_t fd[4];

	/* A parent-death signal first: the sentry thread of the parent stub is the child's parent too. */
	if (ksys(NR_prctl, PR_SET_PDEATHSIG_, 9, 0))
		fork_die();
	if (ksys(NR_recvmsg, STUB_FD_KSOCK, &msg, MSG_DONTWAIT_ | MSG_CMSG_CLOEXEC_) != 1 || (msg.flags & MSG_CTRUNC_))
		fork_die();
	const int32_t *c = (const int32_t *)cmsg;
	if (cmsg[0] != 16 + sizeof(fd) || c[2] != 1 /* SOL_SOCKET */ || c[3] != 1 /* SCM_RIGHTS */)
		fork_die();
	for (int i = 0; i < 4; i++)
		fd[i] = c[4 + i];
	if (stub_ksc(NR_mmap, STUB_SHARED_ADDR, STUB_SHARED_TOTAL, 3 /* RW */, 0x11 /* SHARED|FIXED */, fd[1], 0) !=
		    (long)STUB_SHARED_ADDR ||
	    stub_ksc(NR_mmap, STUB_CTL_ADDR, STUB_CTL_SIZE, 1 /* R */, 0x11, fd[2], 0) != (long)STUB_CTL_ADDR ||
	    ksys(NR_madvise, STUB_SHARED_ADDR, STUB_SHARED_TOTAL, MADV_DONTFORK_) ||
	    ksys(NR_madvise, STUB_CTL_ADDR, STUB_CTL_SIZE, MADV_DONTFORK_))
		fork_die();
	if (ksys(NR_dup3, fd[0], STUB_FD_SOCK, 0) != STUB_FD_SOCK || ksys(NR_dup3, fd[3], STUB_FD_KSOCK, 0) != STUB_FD_KSOCK)
		fork_die();
	/*
	 * The sentry may be gone already (then no death signal would come): its
	 * end of our new K socket is closed then, and a read finds the end of it.
	 * (Its pid is not written anywhere the guest could read it.)
	 */
	msg.controllen = sizeof(cmsg);
	if (ksys(NR_recvmsg, STUB_FD_KSOCK, &msg, MSG_DONTWAIT_ | MSG_CMSG_CLOEXEC_) != -11 /* EAGAIN */)
		fork_die();
	if (ksys(NR_close_range, 0, STUB_FD_SOCK - 1, 0) || ksys(NR_close_range, STUB_FD_SOCK + 1, STUB_FD_KSOCK - 1, 0) ||
	    ksys(NR_close_range, STUB_FD_KSOCK + 1, ~0U, 0))
		fork_die();
	stub_k_ready();
}

/*
 * vmexec platform: the sentry runs guest code and syscalls in this mm with
 * process_vm_exec(2) from its own threads; this process only keeps the mm
 * alive. It blocks every signal and sleeps until the sentry kills it.
 */
static void vmexec_main(int nodump)
{
	uint64_t all = ~0UL;

	if (nodump)
		stub_sc(NR_prctl, PR_SET_DUMPABLE_, 0, 0, 0, 0, 0);
	stub_sc(NR_rt_sigprocmask, 2 /* SIG_SETMASK */, (long)&all, 0, 8, 0, 0);
	for (;;)
		sys(NR_pause, 0, 0, 0);
}

static int streq(const char *a, const char *b)
{
	while (*a && *a == *b)
		a++, b++;
	return *a == *b;
}

/* argv: pvx-stub MODE [nodump] */
__attribute__((noreturn, used)) void stub_main(long *sp)
{
	long argc = sp[0];
	char **argv = (char **)(sp + 1);
	int nodump = argc > 2 && streq(argv[2], "nodump");

	if (argc < 2)
		die(STUB_EXIT_NOT_TRACED);
	if (streq(argv[1], "seccomp"))
		seccomp_main(nodump);
	if (streq(argv[1], "vmexec"))
		vmexec_main(nodump);
	die(STUB_EXIT_BAD_MODE);
}

__asm__(".text\n"
	".globl _start\n"
	"_start:\n"
	"	xor %ebp, %ebp\n"
	"	mov %rsp, %rdi\n"
	"	and $-16, %rsp\n"
	"	call stub_main\n"
	"	hlt\n");

// SPDX-License-Identifier: GPL-2.0
/*
 * The stub: a tiny freestanding program whose only job is to own a guest
 * address space. It is linked at PVX_STUB_BASE (stub/stub.lds) so the guest
 * keeps the normal low address range, and uses no libc and no writable data.
 *
 * ptrace platform: started stopped at exec (PTRACE_TRACEME); _start never
 * runs. The sentry points the stub's registers at the gadget below to run a
 * syscall in this mm, or at guest code to run the guest.
 *
 * vmexec platform ("pvx-stub vmexec"): the stub only sleeps; see vmexec_main().
 *
 * seccomp platform ("pvx-stub seccomp"): seccomp_main() maps the region
 * shared with the sentry, installs a SIGSYS/fault handler on an alternate
 * stack inside it, drops privileges and installs the sentry's filter, which
 * traps every syscall made outside this code. The handler reports each trap
 * through the shared region and serves the sentry's commands until told to
 * resume the guest (like gVisor's systrap stub and UML's seccomp mode).
 */
#include <stddef.h>
#include "pvx/sigframe.h"
#include "pvx/stub_abi.h"

/* syscall; int3 -- placed first in .text by stub.lds, see STUB_SYSCALL_GADGET. */
__asm__(".section .text.gadget,\"ax\",@progbits\n"
	".globl stub_syscall_gadget\n"
	"stub_syscall_gadget:\n"
	"	syscall\n"
	"	int3\n"
	"	.balign 16\n"
	"stub_clone_gadget:\n"	/* STUB_CLONE_GADGET */
	"	syscall\n"
	"	test %rax, %rax\n"
	"	jz 1f\n"
	"	int3\n"
	"1:	mov $34, %eax\n"	/* pause() until seized by the new thread's tracer */
	"	syscall\n"
	"	jmp 1b\n"
	".previous\n");

#define SHARED ((struct stub_shared *)STUB_SHARED_ADDR)

/* x86-64 numbers and constants, spelled out: there are no libc headers here. */
enum {
	NR_close = 3, NR_mmap = 9, NR_rt_sigaction = 13, NR_rt_sigprocmask = 14, NR_rt_sigreturn = 15,
	NR_sigaltstack = 131, NR_prctl = 157, NR_arch_prctl = 158, NR_futex = 202, NR_capset = 126,
	NR_exit_group = 231, NR_seccomp = 317, NR_pause = 34, NR_exit = 60,
	SIGSYS_ = 31, SYS_SECCOMP_ = 1, FUTEX_WAIT_ = 0, FUTEX_WAKE_ = 1,
	ARCH_SET_GS_ = 0x1001, ARCH_SET_FS_ = 0x1002,
};

static inline long sys6(long nr, long a0, long a1, long a2, long a3, long a4, long a5)
{
	register long r10 __asm__("r10") = a3, r8 __asm__("r8") = a4, r9 __asm__("r9") = a5;
	long ret;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(nr), "D"(a0), "S"(a1), "d"(a2), "r"(r10), "r"(r8), "r"(r9)
			 : "rcx", "r11", "memory");
	return ret;
}
#define sys(nr, a0, a1, a2) sys6(nr, (long)(a0), (long)(a1), (long)(a2), 0, 0, 0)

static __attribute__((noreturn)) void die(int code)
{
	for (;;)
		sys(NR_exit_group, code, 0, 0);
}

struct k_sigaction {
	void *handler;
	uint64_t flags;
	void *restorer;
	uint64_t mask;
};

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
			sys6(NR_futex, (long)&sh->state, FUTEX_WAIT_, STUB_PARKED, 0, 0, 0);
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

/*
 * clone(flags, stack, ptid, ctid): the child pops its region off the new
 * stack and runs stub_thread_main(region); the parent returns the tid.
 */
long stub_clone(unsigned long flags, uint64_t *stack, int32_t *ptid, int32_t *ctid);
__asm__(".text\n"
	"stub_clone:\n"
	"	mov %rcx, %r10\n"
	"	xor %r8d, %r8d\n"
	"	mov $56, %eax\n"
	"	syscall\n"
	"	test %rax, %rax\n"
	"	jnz 1f\n"
	"	pop %rdi\n"
	"	and $-16, %rsp\n"
	"	call stub_thread_main\n"
	"	hlt\n"
	"1:	ret\n");

static void set_altstack(struct stub_shared *sh)
{
	struct { uint64_t sp; int32_t flags, pad; uint64_t size; } ss = {
		(uint64_t)sh->altstack, 0, 0, sizeof(sh->altstack) };
	if (sys(NR_sigaltstack, &ss, 0, 0))
		die(STUB_EXIT_ALTSTACK);
}

/* A new stub thread (a new guest thread): its altstack, no blocked signals, then the boot trap. */
__attribute__((used, noreturn)) void stub_thread_main(struct stub_shared *sh)
{
	uint64_t none = 0;

	set_altstack(sh);
	sys6(NR_rt_sigprocmask, 2 /* SIG_SETMASK */, (long)&none, 0, 8, 0, 0);
	__asm__ volatile("ud2");
	for (;;)
		sys(NR_exit, 0, 0, 0);
}

static long start_thread(uint64_t index)
{
	if (index >= STUB_MAX_THREADS)
		return -22;	/* EINVAL */
	struct stub_shared *child = (struct stub_shared *)(STUB_SHARED_ADDR + index * STUB_SHARED_SIZE);
	uint64_t *sp = (uint64_t *)(child->altstack + sizeof(child->altstack));
	*--sp = (uint64_t)child;
	return stub_clone(STUB_THREAD_CLONE_FLAGS_TID, sp, &child->tid, &child->tid);
}

/* Report to the sentry, then run its commands until it says STUB_CMD_RUN. */
static void serve(struct stub_shared *sh)
{
	for (;;) {
		park(sh);
		if (sh->cmd == STUB_CMD_RUN) {
			__atomic_store_n(&sh->state, STUB_RUNNING, __ATOMIC_RELAXED);
			return;
		}
		if (sh->cmd == STUB_CMD_CLONE) {
			sh->sys_ret = start_thread((uint64_t)sh->sys_args[0]);
			continue;
		}
		if (sh->cmd == STUB_CMD_EXIT)
			for (;;)
				sys(NR_exit, 0, 0, 0);
		sh->sys_ret = sys6(sh->sys_nr, sh->sys_args[0], sh->sys_args[1], sh->sys_args[2],
				   sh->sys_args[3], sh->sys_args[4], sh->sys_args[5]);
	}
}

/* Every guest syscall (SIGSYS) and fault lands here, on the shared altstack. */
static void trap_handler(int sig, struct k_siginfo *si, struct k_ucontext *uc)
{
	struct stub_shared *sh = region_of((uint64_t)__builtin_frame_address(0));
	struct k_sigcontext *c = &uc->mc;
	struct pvx_regs *r = &sh->regs;
	uint64_t fs, gs;

	r->r8 = c->r8, r->r9 = c->r9, r->r10 = c->r10, r->r11 = c->r11;
	r->r12 = c->r12, r->r13 = c->r13, r->r14 = c->r14, r->r15 = c->r15;
	r->rdi = c->rdi, r->rsi = c->rsi, r->rbp = c->rbp, r->rbx = c->rbx;
	r->rdx = c->rdx, r->rax = c->rax, r->rcx = c->rcx, r->rsp = c->rsp;
	r->rip = c->rip, r->eflags = c->eflags, r->cs = c->cs, r->ss = c->ss;
	/* Without FSGSBASE the guest cannot change its bases but through us. */
	fs = sh->has_fsgsbase ? rdfsbase() : sh->cur_fs_base;
	gs = sh->has_fsgsbase ? rdgsbase() : sh->cur_gs_base;
	r->fs_base = fs, r->gs_base = gs;
	r->orig_rax = sig == SIGSYS_ && si->code == SYS_SECCOMP_ ? (uint64_t)(int64_t)si->sys.syscall : (uint64_t)-1;
	sh->trap_signo = sig;
	sh->trap_code = si->code;
	sh->trap_syscall = si->sys.syscall;
	sh->trap_addr = si->addr;
	sh->ucontext = (uint64_t)uc;

	serve(sh);

	c->r8 = r->r8, c->r9 = r->r9, c->r10 = r->r10, c->r11 = r->r11;
	c->r12 = r->r12, c->r13 = r->r13, c->r14 = r->r14, c->r15 = r->r15;
	c->rdi = r->rdi, c->rsi = r->rsi, c->rbp = r->rbp, c->rbx = r->rbx;
	c->rdx = r->rdx, c->rax = r->rax, c->rcx = r->rcx, c->rsp = r->rsp;
	c->rip = r->rip, c->eflags = r->eflags;
	if (r->fs_base != fs)
		sys(NR_arch_prctl, ARCH_SET_FS_, r->fs_base, 0);
	if (r->gs_base != gs)
		sys(NR_arch_prctl, ARCH_SET_GS_, r->gs_base, 0);
	sh->cur_fs_base = r->fs_base;
	sh->cur_gs_base = r->gs_base;
}

/* The sa_restorer: return from trap_handler into (possibly new) guest state. */
__asm__(".text\n"
	"stub_restorer:\n"
	"	mov $15, %eax\n"
	"	syscall\n"
	"	hlt\n");
extern char stub_restorer[];

static void seccomp_main(void)
{
	struct stub_shared *sh = SHARED;

	if (sys6(NR_mmap, STUB_SHARED_ADDR, STUB_SHARED_TOTAL, 3 /* RW */, 0x11 /* SHARED|FIXED */,
		 STUB_FD_SHARED, 0) != (long)STUB_SHARED_ADDR)
		die(STUB_EXIT_SHARED_MAP);
	sys(NR_close, STUB_FD_SHARED, 0, 0);

	set_altstack(sh);
	/* Every catchable signal is a trap; the handler runs with all signals blocked. */
	struct k_sigaction sa = { (void *)trap_handler, 0x4 | 0x08000000 | 0x04000000,
				  stub_restorer, ~0UL };	/* SA_SIGINFO|SA_ONSTACK|SA_RESTORER */
	for (long sig = 1; sig <= 64; sig++)
		if (sig != 9 && sig != 19 && sys6(NR_rt_sigaction, sig, (long)&sa, 0, 8, 0, 0))
			die(STUB_EXIT_SIGACTION);
	uint64_t none = 0;
	sys6(NR_rt_sigprocmask, 2 /* SIG_SETMASK */, (long)&none, 0, 8, 0, 0);

	if (sys6(NR_prctl, 38 /* PR_SET_NO_NEW_PRIVS */, 1, 0, 0, 0, 0))
		die(STUB_EXIT_NO_NEW_PRIVS);
	struct { uint32_t version; int pid; } caphdr = { 0x20080522, 0 };
	uint32_t capdata[6] = { 0 };
	if (sys(NR_capset, &caphdr, capdata, 0))
		die(STUB_EXIT_CAPS);
	struct { uint16_t len; uint64_t filter; } prog = { sh->filter_len, (uint64_t)sh->filter };
	if (sys(NR_seccomp, 1 /* SECCOMP_SET_MODE_FILTER */, 0, &prog))
		die(STUB_EXIT_SECCOMP);

	/* The first trap: the sentry sees it as "booted" and sends the guest's registers. */
	__asm__ volatile("ud2");
	die(STUB_EXIT_NOT_TRACED);
}

/*
 * vmexec platform: the sentry runs guest code and syscalls in this mm with
 * process_vm_exec(2) from its own threads; this process only keeps the mm
 * alive. It blocks every signal and sleeps until the sentry kills it.
 */
static void vmexec_main(void)
{
	uint64_t all = ~0UL;

	sys6(NR_rt_sigprocmask, 2 /* SIG_SETMASK */, (long)&all, 0, 8, 0, 0);
	for (;;)
		sys(NR_pause, 0, 0, 0);
}

static int streq(const char *a, const char *b)
{
	while (*a && *a == *b)
		a++, b++;
	return *a == *b;
}

__attribute__((noreturn, used)) void stub_main(long *sp)
{
	long argc = sp[0];
	char **argv = (char **)(sp + 1);

	if (argc < 2)
		die(STUB_EXIT_NOT_TRACED);
	if (streq(argv[1], "seccomp"))
		seccomp_main();
	if (streq(argv[1], "vmexec"))
		vmexec_main();
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

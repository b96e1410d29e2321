// SPDX-License-Identifier: GPL-2.0
/*
 * The seccomp platform: fast sandboxing on stock kernels, after gVisor's
 * systrap and UML's seccomp mode.
 *
 * The stub runs guest code in its only thread under a seccomp filter that
 * returns SECCOMP_RET_TRAP for every syscall whose instruction pointer lies
 * outside the stub's code, and lets the stub's code make only the syscalls
 * it needs, arguments checked where BPF can (everything else, any non-x86-64
 * arch and x32 numbers: kill). The SIGSYS (or fault) handler runs on an
 * alternate stack inside a memfd region shared with the sentry, publishes
 * the registers and siginfo there and waits for commands: spin briefly,
 * then futex. See stub/stub.c for the other half.
 *
 * Guest code that jumps into the stub's code gains only the stub's own
 * syscall set (mmap and friends on its own mm, futex, close, recvmsg on the
 * fd-passing socket): it can break its own stub, nothing outside.
 *
 * File mappings: the stub needs the file in its fd table. The sentry sends
 * the host fd over a SOCK_SEQPACKET socketpair with SCM_RIGHTS and the stub
 * recvmsg()s it, maps, and closes it. We chose SCM_RIGHTS over a shared fd
 * table (CLONE_FILES) or pidfd_getfd: the stub only ever holds a file the
 * guest already opened, with the same access mode, for one mmap; it never
 * sees the sentry's other fds (the root dirfd, the terminal...), which guest
 * code running the stub's instructions could otherwise reach.
 */
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/futex.h>
#include <linux/seccomp.h>
#include <asm/prctl.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pvx/log.h"
#include "pvx/stub_abi.h"
#include "platform.h"

#ifndef AUDIT_ARCH_X86_64
#define AUDIT_ARCH_X86_64 0xc000003eU
#endif
#define X32_SYSCALL_BIT 0x40000000U
#define HWCAP2_FSGSBASE (1 << 1)
#define SPIN_ITERS 20000	/* ~0.1-1 ms of pause before sleeping on the futex */
#define LIVENESS_NS 100000000L	/* how often a waiting sentry checks the stub is alive */

struct seccomp_as {
	struct addr_space as;
	struct stub_shared *sh;	/* the sentry's mapping of the shared region */
	int sock;		/* our end of the fd-passing socketpair */
	uint64_t cs, ss;	/* the stub's selectors, from the boot trap */
	int dead_sig;		/* the stub was killed by this signal (seccomp kill: SIGSYS) */
	uint32_t spin;		/* spin budget when this is the only task (place_cpus) */
};

static struct seccomp_as *to_sas(struct addr_space *as)
{
	return (struct seccomp_as *)as;
}

static long seccomp_probe(void)
{
	if (prctl(PR_GET_SECCOMP) < 0 && errno == EINVAL)
		return -ENOSYS;
	/* SECCOMP_RET_TRAP and SECCOMP_RET_KILL_PROCESS must both be known. */
	uint32_t act = SECCOMP_RET_KILL_PROCESS;
	if (syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &act) < 0)
		return neg_errno();
	act = SECCOMP_RET_TRAP;
	return syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &act) < 0 ? neg_errno() : 0;
}

/*
 * The part of the filter libseccomp can express: what the stub's own code
 * may call. Default: kill the process.
 */
static long stub_rules(scmp_filter_ctx ctx)
{
	static const int plain[] = { SCMP_SYS(rt_sigreturn), SCMP_SYS(mmap), SCMP_SYS(munmap),
				     SCMP_SYS(mprotect), SCMP_SYS(mremap), SCMP_SYS(close),
				     SCMP_SYS(exit_group) };
	static const int advice[] = { MADV_NORMAL, MADV_RANDOM, MADV_SEQUENTIAL, MADV_WILLNEED,
				      MADV_DONTNEED, MADV_FREE, MADV_DONTDUMP, MADV_DODUMP,
				      MADV_HUGEPAGE, MADV_NOHUGEPAGE, MADV_COLD, MADV_PAGEOUT };
	int r = 0;

	for (size_t i = 0; i < ARRAY_SIZE(plain) && !r; i++)
		r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, plain[i], 0);
	for (size_t i = 0; i < ARRAY_SIZE(advice) && !r; i++)
		r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(madvise), 1, SCMP_A2(SCMP_CMP_EQ, advice[i]));
	/* Shared (not private) futexes on the shared page: wait and wake only. */
	if (!r)
		r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(futex), 1, SCMP_A1(SCMP_CMP_EQ, FUTEX_WAIT));
	if (!r)
		r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(futex), 1, SCMP_A1(SCMP_CMP_EQ, FUTEX_WAKE));
	if (!r)
		r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(arch_prctl), 1, SCMP_A0(SCMP_CMP_EQ, ARCH_SET_FS));
	if (!r)
		r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(arch_prctl), 1, SCMP_A0(SCMP_CMP_EQ, ARCH_SET_GS));
	if (!r)
		r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(recvmsg), 1, SCMP_A0(SCMP_CMP_EQ, STUB_FD_SOCK));
	return r;
}

/*
 * The whole filter: a raw BPF prefix that libseccomp cannot express (arch,
 * x32 and the instruction-pointer test), then libseccomp's program for the
 * stub's own syscalls. Written into sh->filter for the stub to install.
 */
static long build_filter(struct stub_shared *sh)
{
	const uint32_t lo = (uint32_t)STUB_TEXT_START, hi = (uint32_t)(STUB_TEXT_START >> 32);
	const uint32_t end_lo = (uint32_t)(STUB_TEXT_START + STUB_TEXT_MAX);
	struct sock_filter prefix[] = {
		/* 0 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		/* 1 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		/* 2 */ BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		/* 3 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		/* 4 */ BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, X32_SYSCALL_BIT, 0, 1),
		/* 5 */ BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		/* 6 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, instruction_pointer) + 4),
		/* 7 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, hi, 0, 3),
		/* 8 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, instruction_pointer)),
		/* 9 */ BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, lo, 0, 1),
		/* 10 */ BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, end_lo, 0, 1),
		/* 11: guest code */ BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP),
		/* 12: stub code: libseccomp's program follows */
	};
	_Static_assert(STUB_TEXT_START + STUB_TEXT_MAX < (STUB_TEXT_START | 0xffffffffUL), "no wrap");
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_KILL_PROCESS);
	long r = -ENOMEM;
	int pfd[2] = { -1, -1 };

	if (!ctx)
		return -ENOMEM;
	r = stub_rules(ctx);
	if (!r && pipe(pfd) < 0)
		r = neg_errno();
	if (!r)
		r = seccomp_export_bpf(ctx, pfd[1]);
	if (!r) {
		close(pfd[1]);
		pfd[1] = -1;
		size_t n0 = ARRAY_SIZE(prefix);
		memcpy(sh->filter, prefix, sizeof(prefix));
		ssize_t n = read(pfd[0], (char *)sh->filter + sizeof(prefix),
				 (STUB_FILTER_MAX - n0) * sizeof(struct sock_filter));
		if (n <= 0 || n % sizeof(struct sock_filter))
			r = -E2BIG;
		else
			sh->filter_len = (uint16_t)(n0 + (size_t)n / sizeof(struct sock_filter));
	}
	if (pfd[0] >= 0)
		close(pfd[0]);
	if (pfd[1] >= 0)
		close(pfd[1]);
	seccomp_release(ctx);
	return r;
}

/* Is the stub still there? Records how it died. */
static bool stub_alive(struct seccomp_as *sas)
{
	int st;
	pid_t r = waitpid(sas->as.pid, &st, WNOHANG | __WALL);

	if (r == 0)
		return true;
	if (r == sas->as.pid)
		sas->dead_sig = WIFSIGNALED(st) ? WTERMSIG(st) : SIGKILL;
	if (r == sas->as.pid && WIFEXITED(st))
		pr_err("stub exited with status %d", WEXITSTATUS(st));
	return false;
}

/* Wait until the stub parks (reports a trap or a result): spin, then futex. */
static long wait_parked(struct seccomp_as *sas)
{
	struct stub_shared *sh = sas->sh;
	struct timespec to = { 0, LIVENESS_NS };

	for (uint32_t spin = sh->spin;;) {
		uint32_t v = __atomic_load_n(&sh->state, __ATOMIC_ACQUIRE);
		if (v == STUB_PARKED)
			return 0;
		if (spin) {
			spin--;
			__asm__ volatile("" ::: "memory");	/* no pause: it exits to the hypervisor */
			continue;
		}
		/* See park() in stub/stub.c for the sleeping-flag protocol. */
		__atomic_store_n(&sh->sentry_sleeping, 1, __ATOMIC_SEQ_CST);
		v = __atomic_load_n(&sh->state, __ATOMIC_SEQ_CST);
		long r = v == STUB_PARKED ? 0 : syscall(SYS_futex, &sh->state, FUTEX_WAIT, v, &to, NULL, 0);
		__atomic_store_n(&sh->sentry_sleeping, 0, __ATOMIC_RELAXED);
		if (r < 0 && errno == ETIMEDOUT && !stub_alive(sas))
			return -ESRCH;
	}
}

/* Post a command for the parked stub and wait until it parks again. */
static long command(struct seccomp_as *sas, uint32_t cmd)
{
	struct stub_shared *sh = sas->sh;

	if (sas->dead_sig)
		return -ESRCH;
	/* Spinning pays only while one task runs: with more, CPUs are shared. */
	sh->spin = sentry_live_hint() > 1 ? 0 : sas->spin;
	sh->cmd = cmd;
	__atomic_store_n(&sh->state, STUB_CMD, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&sh->stub_sleeping, __ATOMIC_SEQ_CST))
		syscall(SYS_futex, &sh->state, FUTEX_WAKE, 1, NULL, NULL, 0);
	return wait_parked(sas);
}

/*
 * CPU placement. A trap is a synchronous hand-off between the stub and the
 * sentry. Measured on a 2-vCPU VM (bench/run): both spinning on CPUs of their
 * own ~3 us per trap; same CPU with futex sleeps ~8 us (two context
 * switches); left to the scheduler with spinning ~17 us, and a futex wake
 * across CPUs ~60 us. So with two or more usable CPUs the stub is bound to a
 * CPU other than the sentry's and both spin briefly; with one CPU, or while
 * more than one guest task runs, nobody spins and nothing is pinned.
 * PVX_SECCOMP_PIN=0 leaves placement to the scheduler (and disables spinning).
 */
static void place_cpus(struct seccomp_as *sas)
{
	static cpu_set_t all;	/* the affinity pvx started with */
	static bool have_all;
	const char *env = getenv("PVX_SECCOMP_PIN");
	cpu_set_t mine, other;
	int me = sched_getcpu(), n = 0;

	sas->spin = 0;
	if (!have_all)
		have_all = sched_getaffinity(0, sizeof(all), &all) == 0;
	if ((env && !strcmp(env, "0")) || me < 0 || !have_all)
		return;
	if (sentry_live_hint() > 1) {
		/* Several tasks: undo the pinning inherited from the forking thread. */
		sched_setaffinity(0, sizeof(all), &all);
		sched_setaffinity(sas->as.pid, sizeof(all), &all);
		return;
	}
	CPU_ZERO(&mine);
	CPU_ZERO(&other);
	for (int c = 0; c < CPU_SETSIZE; c++) {
		if (!CPU_ISSET(c, &all) || c == me)
			continue;
		CPU_SET(c, &other);
		n++;
	}
	if (n == 0)
		return;
	CPU_SET(me, &mine);
	if (sched_setaffinity(0, sizeof(mine), &mine) < 0 ||
	    sched_setaffinity(sas->as.pid, sizeof(other), &other) < 0) {
		sched_setaffinity(0, sizeof(all), &all);
		return;
	}
	sas->spin = SPIN_ITERS;
}

static void seccomp_as_release(struct addr_space *as);

static long seccomp_as_new(struct addr_space **out)
{
	long memfd = stub_memfd(), r;
	int sp[2];

	if (memfd < 0)
		return memfd;
	struct seccomp_as *sas = calloc(1, sizeof(*sas));
	if (!sas)
		return -ENOMEM;
	sas->as.ops = &platform_seccomp;
	sas->as.pid = -1;
	sas->sock = -1;
	int shm = memfd_create("pvx-shared", MFD_CLOEXEC);
	if (shm < 0 || ftruncate(shm, STUB_SHARED_SIZE) < 0) {
		r = neg_errno();
		goto fail;
	}
	sas->sh = mmap(NULL, STUB_SHARED_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, shm, 0);
	if (sas->sh == MAP_FAILED) {
		sas->sh = NULL;
		r = neg_errno();
		goto fail;
	}
	sas->sh->has_fsgsbase = !!(getauxval(AT_HWCAP2) & HWCAP2_FSGSBASE);
	r = build_filter(sas->sh);
	if (r)
		goto fail;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0) {
		r = neg_errno();
		goto fail;
	}
	sas->sock = sp[0];
	pid_t pid = fork();
	if (pid == 0)
		stub_exec((int)memfd, "seccomp", (const int[]){ sp[1], shm }, 2);
	close(sp[1]);
	close(shm);
	shm = -1;
	if (pid < 0) {
		r = neg_errno();
		goto fail;
	}
	sas->as.pid = pid;
	place_cpus(sas);
	/* The boot trap: ud2 at the end of seccomp_main(). */
	r = wait_parked(sas);
	if (r || sas->sh->trap_signo != SIGILL) {
		pr_err("seccomp stub did not boot (%s, signal %d)", strerror((int)-r), sas->sh->trap_signo);
		r = -ECHILD;
		goto fail;
	}
	sas->cs = sas->sh->regs.cs;
	sas->ss = sas->sh->regs.ss;
	*out = &sas->as;
	return 0;
fail:
	if (shm >= 0)
		close(shm);
	seccomp_as_release(&sas->as);
	return r;
}

static void seccomp_as_release(struct addr_space *as)
{
	struct seccomp_as *sas = to_sas(as);

	if (!as)
		return;
	if (as->pid > 0) {
		kill(as->pid, SIGKILL);
		while (waitpid(as->pid, NULL, __WALL) < 0 && errno == EINTR)
			;
	}
	if (sas->sh)
		munmap(sas->sh, STUB_SHARED_SIZE);
	if (sas->sock >= 0)
		close(sas->sock);
	free(sas);
}

static long seccomp_as_syscall(struct addr_space *as, long nr, const long args[6])
{
	struct seccomp_as *sas = to_sas(as);
	long r;

	sas->sh->sys_nr = nr;
	memcpy(sas->sh->sys_args, args, sizeof(sas->sh->sys_args));
	r = command(sas, STUB_CMD_SYSCALL);
	return r ? r : sas->sh->sys_ret;
}

/* Send host_fd over the socket, then have the stub recvmsg() it (see top). */
static long seccomp_as_get_fd(struct addr_space *as, int host_fd)
{
	struct seccomp_as *sas = to_sas(as);
	struct stub_shared *sh = sas->sh;
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	char byte = 0;
	struct iovec iov = { &byte, 1 };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			      .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);

	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &host_fd, sizeof(int));
	if (sendmsg(sas->sock, &msg, MSG_NOSIGNAL) < 0)
		return neg_errno();

	/* The stub's msghdr, with pointers valid in the stub's address space. */
	uint64_t base = STUB_SHARED_ADDR;
	struct msghdr *sm = (struct msghdr *)sh->msg;
	memset(sh->msg, 0, sizeof(sh->msg) + sizeof(sh->iov) + sizeof(sh->cmsg));
	sh->iov[0] = base + offsetof(struct stub_shared, byte);
	sh->iov[1] = 1;
	sm->msg_iov = (struct iovec *)(base + offsetof(struct stub_shared, iov));
	sm->msg_iovlen = 1;
	sm->msg_control = (void *)(base + offsetof(struct stub_shared, cmsg));
	sm->msg_controllen = sizeof(sh->cmsg);
	_Static_assert(sizeof(((struct stub_shared *)0)->msg) >= sizeof(struct msghdr), "msghdr fits");
	_Static_assert(sizeof(((struct stub_shared *)0)->cmsg) >= CMSG_SPACE(sizeof(int)), "cmsg fits");

	long a[6] = { STUB_FD_SOCK, (long)(base + offsetof(struct stub_shared, msg)), MSG_CMSG_CLOEXEC };
	long r = seccomp_as_syscall(as, SYS_recvmsg, a);
	if (r < 0)
		return r;
	struct cmsghdr *rc = (struct cmsghdr *)sh->cmsg;
	int fd;
	if (rc->cmsg_level != SOL_SOCKET || rc->cmsg_type != SCM_RIGHTS)
		return -EIO;
	memcpy(&fd, CMSG_DATA(rc), sizeof(fd));
	return fd;
}

static void seccomp_as_put_fd(struct addr_space *as, long as_fd)
{
	long a[6] = { as_fd };

	if (seccomp_as_syscall(as, SYS_close, a) < 0)
		pr_debug("close of fd %ld in stub failed", as_fd);
}

static long seccomp_run(struct addr_space *as, struct pvx_regs *regs, struct pvx_trap *trap)
{
	struct seccomp_as *sas = to_sas(as);
	struct stub_shared *sh = sas->sh;
	long r;

	memset(trap, 0, sizeof(*trap));
	regs->cs = sas->cs;
	regs->ss = sas->ss;
	sh->regs = *regs;
	r = command(sas, STUB_CMD_RUN);
	if (r == -ESRCH && sas->dead_sig) {
		/* Killed by its filter (int $0x80, x32, a forbidden call from stub code). */
		trap->kind = TRAP_SIGNAL;
		trap->signo = sas->dead_sig;
		trap->code = 0x80;	/* SI_KERNEL: not ignorable */
		return 0;
	}
	if (r)
		return r;
	*regs = sh->regs;	/* copied once: the guest can scribble on the shared page */
	trap->signo = sh->trap_signo;
	trap->code = sh->trap_code;
	trap->addr = sh->trap_addr;
	if (trap->signo == SIGSYS && trap->code == 1 /* SYS_SECCOMP */) {
		trap->kind = TRAP_SYSCALL;
		regs->orig_rax = (uint64_t)(int64_t)sh->trap_syscall;
	} else {
		trap->kind = TRAP_SIGNAL;
	}
	return 0;
}

const struct platform_ops platform_seccomp = {
	.name = "seccomp",
	.probe = seccomp_probe,
	.as_new = seccomp_as_new,
	.as_release = seccomp_as_release,
	.as_syscall = seccomp_as_syscall,
	.as_get_fd = seccomp_as_get_fd,
	.as_put_fd = seccomp_as_put_fd,
	.run = seccomp_run,
};

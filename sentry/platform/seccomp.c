// SPDX-License-Identifier: GPL-2.0
/*
 * The seccomp platform: fast sandboxing on stock kernels, after gVisor's
 * systrap and UML's seccomp mode.
 *
 * The stub runs guest code in its only thread under a seccomp filter that
 * returns SECCOMP_RET_TRAP for every syscall whose instruction pointer lies
 * outside the stub's code, and lets the stub's code make only the syscalls
 * it needs, arguments checked where BPF can (everything else and any
 * non-x86-64 arch: kill). x32 numbers (and negative ones: bit 30 is set)
 * trap wherever they come from, for the sentry to answer ENOSYS. The
 * SIGSYS (or fault) handler runs on an
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
#include "pvx/sigframe.h"
#include "pvx/stub_abi.h"
#include "platform.h"

#ifndef AUDIT_ARCH_X86_64
#define AUDIT_ARCH_X86_64 0xc000003eU
#endif
#define X32_SYSCALL_BIT 0x40000000U
#define HWCAP2_FSGSBASE (1 << 1)
#define SPIN_ITERS 100000	/* ~25 us of pause-free loop here: more than a trap's emulation, then the futex */
#define LIVENESS_NS 100000000L	/* how often a waiting sentry checks the stub is alive */

struct seccomp_as {
	struct addr_space as;
	char *regions;		/* the sentry's mapping of the shared regions */
	bool used[STUB_MAX_THREADS];	/* regions of live contexts */
	int sock;		/* our end of the fd-passing socketpair */
	uint64_t cs, ss;	/* the stub's selectors, from the boot trap */
	int dead_sig;		/* the stub was killed by this signal (seccomp kill: SIGSYS) */
	uint32_t spin;		/* spin budget when this is the only task (place_cpus) */
};

/* A guest thread: a stub thread and its shared region. */
struct seccomp_ctx {
	struct platform_ctx ctx;
	int index;
	struct stub_shared *sh;	/* the sentry's mapping of region index */
};


static struct seccomp_as *to_sas(struct addr_space *as)
{
	return (struct seccomp_as *)as;
}

static struct seccomp_ctx *to_sctx(struct platform_ctx *ctx)
{
	return (struct seccomp_ctx *)ctx;
}

static struct stub_shared *region(struct seccomp_as *sas, int i)
{
	return (struct stub_shared *)(sas->regions + (size_t)i * STUB_SHARED_SIZE);
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
				     SCMP_SYS(mprotect), SCMP_SYS(mremap), SCMP_SYS(msync),
				     SCMP_SYS(mincore), SCMP_SYS(close), SCMP_SYS(exit_group) };
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
	/* Threads: clone of exactly a stub thread, its altstack and mask, its exit. */
	if (!r)
		r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(clone), 1,
				     SCMP_A0(SCMP_CMP_EQ, STUB_THREAD_CLONE_FLAGS_TID));
	if (!r)
		r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(rt_sigprocmask), 1, SCMP_A0(SCMP_CMP_EQ, SIG_SETMASK));
	if (!r)
		r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(sigaltstack), 0);
	if (!r)
		r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(exit), 0);
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
		/* 5: x32 or negative: ENOSYS */ BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP),
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
static long wait_parked(struct seccomp_as *sas, struct stub_shared *sh)
{
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
static void post(struct seccomp_as *sas, struct stub_shared *sh, uint32_t cmd)
{
	/* Spinning pays only while one task runs: with more, CPUs are shared. */
	sh->spin = sentry_live_hint() > 1 ? 0 : sas->spin;
	sh->cmd = cmd;
	__atomic_store_n(&sh->state, STUB_CMD, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&sh->stub_sleeping, __ATOMIC_SEQ_CST))
		syscall(SYS_futex, &sh->state, FUTEX_WAKE, 1, NULL, NULL, 0);
}

static long command(struct seccomp_as *sas, struct stub_shared *sh, uint32_t cmd)
{
	if (sas->dead_sig)
		return -ESRCH;
	post(sas, sh, cmd);
	return wait_parked(sas, sh);
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
static cpu_set_t all;	/* the affinity pvx started with */
static bool have_all;

/* Several tasks: undo a pinning that place_cpus made or a thread inherited. */
static void unpin(pid_t tid)
{
	if (have_all)
		sched_setaffinity(tid, sizeof(all), &all);
}

static void place_cpus(struct seccomp_as *sas)
{
	const char *env = getenv("PVX_SECCOMP_PIN");
	cpu_set_t mine, other;
	int me = sched_getcpu(), n = 0;

	sas->spin = 0;
	if (!have_all)
		have_all = sched_getaffinity(0, sizeof(all), &all) == 0;
	if ((env && !strcmp(env, "0")) || me < 0 || !have_all)
		return;
	if (sentry_live_hint() > 1) {
		unpin(0);
		unpin(sas->as.pid);
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
	struct seccomp_ctx *first = calloc(1, sizeof(*first));
	if (!sas || !first) {
		free(sas);
		free(first);
		return -ENOMEM;
	}
	sas->as.ops = &platform_seccomp;
	sas->as.pid = -1;
	sas->sock = -1;
	first->ctx.first = true;
	ctx_link(&sas->as, &first->ctx, true);
	int shm = memfd_create("pvx-shared", MFD_CLOEXEC);
	if (shm < 0 || ftruncate(shm, STUB_SHARED_TOTAL) < 0) {
		r = neg_errno();
		goto fail;
	}
	/* Regions of threads not yet made cost address space only (the memfd is sparse). */
	sas->regions = mmap(NULL, STUB_SHARED_TOTAL, PROT_READ | PROT_WRITE, MAP_SHARED, shm, 0);
	if (sas->regions == MAP_FAILED) {
		sas->regions = NULL;
		r = neg_errno();
		goto fail;
	}
	first->sh = region(sas, 0);
	sas->used[0] = true;
	first->sh->has_fsgsbase = !!(getauxval(AT_HWCAP2) & HWCAP2_FSGSBASE);
	r = build_filter(first->sh);
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
	first->ctx.tid = pid;
	place_cpus(sas);
	/* The boot trap: ud2 at the end of seccomp_main(). */
	r = wait_parked(sas, first->sh);
	if (r || first->sh->trap_signo != SIGILL) {
		pr_err("seccomp stub did not boot (%s, signal %d)", strerror((int)-r), first->sh->trap_signo);
		r = -ECHILD;
		goto fail;
	}
	sas->cs = first->sh->regs.cs;
	sas->ss = first->sh->regs.ss;
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
	if (sas->regions)
		munmap(sas->regions, STUB_SHARED_TOTAL);
	if (sas->sock >= 0)
		close(sas->sock);
	while (as->ctxs) {
		struct platform_ctx *c = as->ctxs;
		ctx_unlink(c);
		free(c);
	}
	free(sas);
}

/* The calling thread's context: its stub thread runs the command. */
static struct seccomp_ctx *self(struct addr_space *as)
{
	struct platform_ctx *c = ctx_self(as);

	if (!c)
		pr_err("seccomp: no context of this thread in stub %d", as->pid);
	return c ? to_sctx(c) : NULL;
}

static long seccomp_as_syscall(struct addr_space *as, long nr, const long args[6])
{
	struct seccomp_as *sas = to_sas(as);
	struct seccomp_ctx *sc = self(as);
	long r;

	if (!sc)
		return -ESRCH;
	sc->sh->sys_nr = nr;
	memcpy(sc->sh->sys_args, args, sizeof(sc->sh->sys_args));
	r = command(sas, sc->sh, STUB_CMD_SYSCALL);
	return r ? r : sc->sh->sys_ret;
}

/*
 * A new guest thread: the parent's stub thread clones a stub thread onto a
 * free region (stub_clone in stub/stub.c); it boots with a ud2 trap that
 * ctx_start waits for on the new sentry thread.
 */
static long seccomp_ctx_new(struct platform_ctx *parent, struct platform_ctx **out)
{
	struct seccomp_as *sas = to_sas(parent->as);
	struct seccomp_ctx *pc = to_sctx(parent), *sc;
	int i;

	for (i = 0; i < STUB_MAX_THREADS; i++)
		if (!sas->used[i] && !__atomic_load_n(&region(sas, i)->tid, __ATOMIC_ACQUIRE))
			break;
	if (i == STUB_MAX_THREADS)
		return -EAGAIN;
	sc = calloc(1, sizeof(*sc));
	if (!sc)
		return -ENOMEM;
	struct stub_shared *sh = region(sas, i);
	memset(sh, 0, offsetof(struct stub_shared, msg));
	sh->has_fsgsbase = pc->sh->has_fsgsbase;
	sh->cur_fs_base = pc->sh->cur_fs_base;	/* clone(2) keeps the bases */
	sh->cur_gs_base = pc->sh->cur_gs_base;
	sas->spin = 0;	/* two threads: see place_cpus */
	unpin(0);
	unpin(parent->tid);
	pc->sh->sys_args[0] = i;
	long r = command(sas, pc->sh, STUB_CMD_CLONE);
	if (!r)
		r = pc->sh->sys_ret;
	if (r < 0) {
		free(sc);
		return r;
	}
	sc->index = i;
	sc->sh = sh;
	sc->ctx.tid = (pid_t)r;
	sas->used[i] = true;
	unpin(sc->ctx.tid);
	ctx_link(parent->as, &sc->ctx, false);
	*out = &sc->ctx;
	return 0;
}

static long seccomp_ctx_start(struct platform_ctx *ctx)
{
	struct seccomp_ctx *sc = to_sctx(ctx);
	long r;

	ctx->owner = pthread_self();
	ctx->owned = true;
	r = wait_parked(to_sas(ctx->as), sc->sh);
	if (!r && sc->sh->trap_signo != SIGILL) {
		pr_err("seccomp stub thread did not boot (signal %d)", sc->sh->trap_signo);
		r = -ECHILD;
	}
	return r;
}

/* The stub thread exits; its region is free once the kernel cleared its tid. */
static void seccomp_ctx_release(struct platform_ctx *ctx)
{
	struct seccomp_as *sas = to_sas(ctx->as);
	struct seccomp_ctx *sc = to_sctx(ctx);
	struct timespec to = { 0, LIVENESS_NS };
	int32_t tid;

	if (ctx->first)
		return;
	if (!sas->dead_sig && __atomic_load_n(&sc->sh->state, __ATOMIC_ACQUIRE) == STUB_PARKED) {
		post(sas, sc->sh, STUB_CMD_EXIT);
		while ((tid = __atomic_load_n(&sc->sh->tid, __ATOMIC_ACQUIRE)) != 0) {
			if (syscall(SYS_futex, &sc->sh->tid, FUTEX_WAIT, tid, &to, NULL, 0) < 0 &&
			    errno == ETIMEDOUT && !stub_alive(sas))
				break;
		}
	} else {
		/* Never booted or stuck in guest code: the region is lost until the stub ends. */
		pr_debug("seccomp: stub thread %d not parked at exit", ctx->tid);
		return;
	}
	sas->used[sc->index] = false;
	ctx_unlink(ctx);
	free(sc);
}

/* Send host_fd over the socket, then have the stub recvmsg() it (see top). */
static long seccomp_as_get_fd(struct addr_space *as, int host_fd)
{
	struct seccomp_as *sas = to_sas(as);
	struct seccomp_ctx *sc = self(as);
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
	if (!sc)
		return -ESRCH;
	if (sendmsg(sas->sock, &msg, MSG_NOSIGNAL) < 0)
		return neg_errno();

	/* The stub's msghdr, with pointers valid in the stub's address space. */
	struct stub_shared *sh = sc->sh;
	uint64_t base = STUB_SHARED_ADDR + (uint64_t)sc->index * STUB_SHARED_SIZE;
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

static long seccomp_run(struct platform_ctx *ctx, struct pvx_regs *regs, struct pvx_trap *trap)
{
	struct seccomp_as *sas = to_sas(ctx->as);
	struct stub_shared *sh = to_sctx(ctx)->sh;
	long r;

	memset(trap, 0, sizeof(*trap));
	regs->cs = sas->cs;
	regs->ss = sas->ss;
	sh->regs = *regs;
	r = command(sas, sh, STUB_CMD_RUN);
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

/* A stub address inside sc's region, as a sentry pointer (NULL if [addr, addr+len) is outside). */
static void *region_ptr(struct seccomp_ctx *sc, uint64_t addr, size_t len)
{
	uint64_t base = STUB_SHARED_ADDR + (uint64_t)sc->index * STUB_SHARED_SIZE;

	if (addr < base || addr + len < addr || addr + len > base + STUB_SHARED_SIZE)
		return NULL;
	return (char *)sc->sh + (addr - base);
}

/*
 * The guest's FPU state is in the frame of the stub's trap handler, on the
 * altstack in the shared region: read it there, and write it there for the
 * handler's rt_sigreturn to load (the kernel validates it). The pointers
 * come from memory guest code can write: checked against the region.
 */
static char *trap_fpstate(struct seccomp_ctx *sc, size_t *room)
{
	const struct k_ucontext *uc = region_ptr(sc, sc->sh->ucontext, sizeof(*uc));
	uint64_t fp = uc ? __atomic_load_n(&uc->mc.fpstate, __ATOMIC_RELAXED) : 0;
	char *p = fp ? region_ptr(sc, fp, K_FXSAVE_SIZE) : NULL;

	if (p)
		*room = STUB_SHARED_SIZE - (size_t)(p - (char *)sc->sh);
	return p;
}

static long seccomp_fpu_get(struct platform_ctx *ctx, void *buf, size_t len)
{
	size_t room, n;
	char *p = trap_fpstate(to_sctx(ctx), &room);

	if (!p || len < K_FXSAVE_SIZE)
		return 0;
	memcpy(buf, p, K_FXSAVE_SIZE);	/* copied once, then sized */
	const struct k_fpx_sw_bytes *sw = (const void *)((char *)buf + K_FPX_SW_BYTES_OFFSET);
	n = MIN(MIN(room, len), (size_t)sw->extended_size);
	if (n > K_FXSAVE_SIZE)
		memcpy((char *)buf + K_FXSAVE_SIZE, p + K_FXSAVE_SIZE, n - K_FXSAVE_SIZE);
	return (long)k_fpstate_size(buf, n);
}

static long seccomp_fpu_set(struct platform_ctx *ctx, const void *buf, size_t len)
{
	size_t room;
	char *p = trap_fpstate(to_sctx(ctx), &room);

	if (!p || len > room)
		return -EFAULT;
	memcpy(p, buf, len);
	return 0;
}

const struct platform_ops platform_seccomp = {
	.name = "seccomp",
	.probe = seccomp_probe,
	.as_new = seccomp_as_new,
	.as_release = seccomp_as_release,
	.ctx_new = seccomp_ctx_new,
	.ctx_start = seccomp_ctx_start,
	.ctx_release = seccomp_ctx_release,
	.as_syscall = seccomp_as_syscall,
	.as_get_fd = seccomp_as_get_fd,
	.as_put_fd = seccomp_as_put_fd,
	.run = seccomp_run,
	.fpu_get = seccomp_fpu_get,
	.fpu_set = seccomp_fpu_set,
};

// SPDX-License-Identifier: GPL-2.0
/*
 * The seccomp platform: fast sandboxing on stock kernels, after gVisor's
 * systrap and UML's seccomp mode.
 *
 * Each guest thread runs in a thread of the stub under a seccomp filter
 * that returns SECCOMP_RET_TRAP for every syscall not made at one of the
 * stub's own syscall instructions (seccomp_filter.c says what those may
 * do). The SIGSYS (or fault) handler runs on an alternate stack inside a
 * memfd region shared with the sentry, publishes the registers and siginfo
 * there and waits for commands: spin briefly, then futex (seccomp_stub.c).
 * See stub/stub.c and stub/sites.S for the other half.
 *
 * Stub threads are made by K, the stub's main thread, when the sentry asks
 * through the control page (read-only in the stub) and a signal; K never
 * runs guest code, and no other thread can make one. The sentry learns a
 * thread's host tid from /proc, never from the shared memory, which guest
 * code writes too.
 *
 * File mappings: the stub needs the file in its fd table. The sentry sends
 * the host fd over a SOCK_SEQPACKET socketpair with SCM_RIGHTS and the stub
 * recvmsg()s it without blocking, maps, and closes it; the sentry checks
 * with kcmp(2) that what arrived is what it sent. We chose SCM_RIGHTS over
 * a shared fd table (CLONE_FILES) or pidfd_getfd: the stub only ever holds
 * a file the guest already opened, with the same access mode, for one mmap;
 * it never sees the sentry's other fds (the root dirfd, the terminal...),
 * which guest code running the stub's instructions could otherwise reach.
 * Guest code can take such an fd itself (recvmsg at the stub's
 * instruction): it gets a file it could map anyway, and the sentry an error.
 */
#include <fcntl.h>
#include <linux/kcmp.h>
#include <limits.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pvx/log.h"
#include "pvx/sigframe.h"
#include "seccomp.h"

#define HWCAP2_FSGSBASE (1 << 1)
#define FD_TRIES 4		/* messages a get_fd drops (stale ones) before it gives up */

static long seccomp_probe(void)
{
	static struct stub_ctl scratch;

	if (prctl(PR_GET_SECCOMP) < 0 && errno == EINVAL)
		return -ENOSYS;
	/* SECCOMP_RET_TRAP and SECCOMP_RET_KILL_PROCESS must both be known. */
	uint32_t act = SECCOMP_RET_KILL_PROCESS;
	if (syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &act) < 0)
		return neg_errno();
	act = SECCOMP_RET_TRAP;
	if (syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &act) < 0)
		return neg_errno();
	/* Stub threads are known by /proc/PID/task. */
	if (access("/proc/self/task", R_OK) < 0)
		return neg_errno();
	return seccomp_fill_ctl(&scratch);
}

/*
 * The hand-off policy. A trap is a synchronous hand-off between the stub
 * thread and the sentry's task thread. Measured on a 2-vCPU VM (bench/run):
 * both spinning on CPUs of their own ~3 us per trap; same CPU with futex
 * sleeps ~8 us (two context switches); left to the scheduler with spinning
 * ~17 us, and a futex wake across CPUs 13-78 us. So while few guest tasks
 * can run (sentry_runnable_hint: a task asleep in the sentry, in wait4, a
 * pipe read, a futex, a stop..., does not count), both spin a while
 * before the futex, each for a budget the sentry keeps per context and
 * adapts by its own clock (seccomp_stub.c): it shrinks when spins run out
 * (a guest computing for long, a host call that blocks, a busy host), so
 * that a CPU-bound guest does not pay a spinning sentry's CPU time; and
 * while spins keep succeeding the stub thread is kept off the sentry
 * thread's CPU (seccomp_place). With more runnable tasks nobody spins,
 * and each task's two threads share a CPU while nothing else wants it
 * (the pair of seccomp_place); with one CPU nothing is pinned. PVX_SECCOMP_PIN=0 leaves
 * placement to the scheduler (and disables spinning).
 */
static int ncpus;	/* place_ncpus(), or -1 with PVX_SECCOMP_PIN=0: no spinning, no pinning; 0: not known yet */
/* The CPU this sentry thread is pinned to + 1 in the spinning layout; 0: none (always while sc->pair holds one), -1: not known */
static __thread int my_cpu = -1;

static void policy_init(void)
{
	const char *env = getenv("PVX_SECCOMP_PIN");

	if (__atomic_load_n(&ncpus, __ATOMIC_ACQUIRE))
		return;
	host_crowded();	/* its first look: a verdict can come HOST_FIRST_NS from now */
	__atomic_store_n(&ncpus, env && !strcmp(env, "0") ? -1 : place_ncpus(), __ATOMIC_RELEASE);
}

/* Undo a pinning (ours, or one a thread inherited from its creator). */
static void unpin(pid_t tid)
{
	if (ncpus > 0)
		place_unpin(tid);
}

/*
 * A busy neighbour (host_crowded) and more than one guest task: nobody
 * spins and the scheduler places every thread, as with PVX_SECCOMP_PIN=0
 * (seccomp_place). A pinned thread waits for the CPU it shares with the
 * neighbour, an unpinned one goes where there is room. Measured with a
 * loop on CPU 1 (5 interleaved runs, x native): fork+exec 5.00 -> 3.08
 * (4.81 -> 2.77 in a second set), find | wc 5.74 -> 5.36, tar | wc 2.00 ->
 * 1.91, dd | wc the same. A lone
 * task keeps spinning: its getppid loop lost 7% without.
 */
static bool neighbour_first(void)
{
	return sentry_live_hint() > 1 && host_crowded();
}

/* Spin now? Each spinning task keeps two CPUs busy (stub and sentry): at most half of them. */
bool seccomp_spin_ok(void)
{
	int n = __atomic_load_n(&ncpus, __ATOMIC_ACQUIRE);

	return n > 0 && sentry_runnable_hint() <= (n / 2 > 1 ? n / 2 : 1) && !neighbour_first();
}

/*
 * Before a hand-off: after PIN_AFTER hand-offs in a row that want it
 * (spin), this sentry thread stays on its CPU and sc's stub thread keeps
 * off it; after as many in a row that do not, the two share one CPU while
 * nothing else wants it (place_pair_run, as ptrace's tracer and tracee:
 * a futex hand-off on one CPU is a context switch, across two a wake-up
 * of the other CPU). Only changes cost a host call (two at most; the
 * pair's looks read two schedstats every 64 turns or 5 ms); the delays
 * keep a pipeline's reader, waking for a moment while the writer works,
 * or a busy host where spins succeed now and then, from costing host
 * calls and migrations at every turn. A new sentry thread takes the
 * masks it and its stub thread inherited as its own (adopt_masks).
 * Measured (tar cf - /usr/share/doc | wc -c, 7 interleaved runs, idle):
 * 2.15x -> 1.66x native with the pair; busy neighbour and fork+exec the same.
 */
#define PIN_AFTER 16

/*
 * A new sentry thread's mask, and its stub thread's, are their creators'
 * (a fork's parent): take them for what they are. Kept as they are, a
 * child starts where its parent ran well (spinning: with a busy neighbour
 * that matters, seccomp_place_look). Only a pair's one CPU for both would
 * starve a child's spins: the stub thread then keeps off it at once.
 */
static void adopt_masks(struct seccomp_ctx *sc, bool spin)
{
	cpu_set_t own, stub;

	my_cpu = 0;
	if (sched_getaffinity(0, sizeof(own), &own) < 0 || CPU_COUNT(&own) != 1)
		return;
	int cpu = 0;
	while (!CPU_ISSET(cpu, &own))
		cpu++;
	my_cpu = cpu + 1;
	if (sched_getaffinity(sc->ctx.tid, sizeof(stub), &stub) < 0)
		return;
	cpu_set_t other = *place_all_cpus();
	CPU_CLR(cpu, &other);
	if (CPU_EQUAL(&stub, &other)) {
		sc->pin_cpu = my_cpu;	/* a spinning parent's */
	} else if (CPU_EQUAL(&stub, &own)) {
		if (!spin) {
			/* A pair's: kept while nothing else wants the CPU (my_cpu is the spinning layout's only). */
			sc->pair.pin_cpu = my_cpu;
			my_cpu = 0;
		} else if (sched_setaffinity(sc->ctx.tid, sizeof(other), &other) == 0) {
			sc->pin_cpu = my_cpu;
		}
	}
}

void seccomp_place(struct seccomp_as *sas, struct seccomp_ctx *sc, bool spin, bool many)
{
	if (__atomic_load_n(&ncpus, __ATOMIC_ACQUIRE) <= 0 || sc->ctx.tid <= 0)
		return;
	if (neighbour_first()) {	/* every pin goes (see there) */
		if (my_cpu) {
			unpin(0);
			if (my_cpu < 0)	/* inherited masks, never adopted: the stub thread's too */
				unpin(sc->ctx.tid);
			my_cpu = 0;
		}
		if (sc->pin_cpu) {
			unpin(sc->ctx.tid);
			sc->pin_cpu = 0;
		}
		place_pair_leave(&sc->pair, sc->ctx.tid);
		sc->pin_want = false;
		sc->pin_streak = 0;
		return;
	}
	if (my_cpu < 0)
		adopt_masks(sc, spin);
	if (spin != sc->pin_want) {
		sc->pin_want = spin;
		sc->pin_streak = 0;
	}
	if (sc->pin_streak < PIN_AFTER)
		sc->pin_streak++;
	if (sc->pin_streak < PIN_AFTER)
		return;
	if (!spin) {
		if (my_cpu) {
			unpin(0);
			my_cpu = 0;
		}
		if (sc->pin_cpu) {
			unpin(sc->ctx.tid);
			sc->pin_cpu = 0;
		}
		if (many)
			place_pair_run(&sc->pair, sas->as.pid, sc->ctx.tid);
		else
			place_pair_leave(&sc->pair, sc->ctx.tid);	/* a lone task's failing spins: the scheduler's */
		return;
	}
	place_pair_leave(&sc->pair, sc->ctx.tid);	/* (while a pair holds, my_cpu is 0) */
	if (my_cpu <= 0) {
		int me = sched_getcpu();
		if (place_pin(0, me) < 0)
			return;
		my_cpu = me + 1;
	}
	if (sc->pin_cpu != my_cpu) {
		cpu_set_t other = *place_all_cpus();
		CPU_CLR(my_cpu - 1, &other);
		if (sched_setaffinity(sc->ctx.tid, sizeof(other), &other) == 0)
			sc->pin_cpu = my_cpu;
	}
	(void)sas;
}

/*
 * A lone guest thread's hand-offs spin even on crowded CPUs (stub_command),
 * and where its two threads sit decides what they cost. With a busy loop
 * on CPU 1, getppid took 5.5 s with this sentry thread pinned to CPU 0 and
 * its stub thread kept on CPU 1, and 12-15 s in the other two states seen:
 * this thread pinned to CPU 1, or nothing pinned and both threads on CPU
 * 0, where every spin fails (the stub cannot run while we spin), the
 * budgets fall to the floor and nothing is ever pinned again. So every
 * CROWD_LOOK_NS both run delays are read: pinned and crowded, this thread
 * moves to the next CPU of pvx's (seccomp_place keeps the stub thread off
 * it at the next hand-off); not pinned and both crowded, the spin budgets
 * go back to the maximum, so that the hand-offs spin and get pinned.
 */
void seccomp_place_look(struct seccomp_as *sas, struct seccomp_ctx *sc, uint64_t now)
{
	static __thread struct crowd own, stub;

	if (__atomic_load_n(&ncpus, __ATOMIC_ACQUIRE) <= 0 || sc->ctx.tid <= 0 ||
	    (own.look_ns && now - own.look_ns < CROWD_LOOK_NS))
		return;
	crowd_read(&own, sentry_pid(), gettid(), now);
	if (my_cpu <= 0)
		crowd_read(&stub, sas->as.pid, sc->ctx.tid, now);
	else
		stub.delay_ns = 0, stub.over = 0;	/* not read while pinned: start afresh when unpinned */
	if (own.over < CROWD_LOOKS || (my_cpu <= 0 && stub.over < CROWD_LOOKS))
		return;
	own.over = stub.over = 0;
	if (my_cpu <= 0) {
		sc->spin[WAIT_RUN] = sc->spin[WAIT_CMD] = SPIN_MAX_NS;
		return;
	}
	for (int i = 1; i < CPU_SETSIZE; i++) {
		int c = (my_cpu - 1 + i) % CPU_SETSIZE;
		if (CPU_ISSET(c, place_all_cpus())) {
			if (place_pin(0, c) == 0)
				my_cpu = c + 1;
			return;
		}
	}
}

/* See seccomp.h: c->over counts the reads in a row above CROWD_PCT; a failed read (or the first) is not. */
void crowd_read(struct crowd *c, pid_t pid, pid_t tid, uint64_t now)
{
	uint64_t run, d;

	if (thread_schedstat(pid, tid, &run, &d) < 0)
		d = 0;
	bool over = c->delay_ns && d >= c->delay_ns && (d - c->delay_ns) * 100 > (now - c->look_ns) * CROWD_PCT;
	c->over = over ? c->over + 1 : 0;
	c->look_ns = now;
	c->delay_ns = d;
}

/* Is sc's stub thread kept off this sentry thread's CPU, or pinned to it with us (seccomp_place)? */
bool seccomp_kept_off(const struct seccomp_ctx *sc)
{
	return sc->pin_cpu != 0 || sc->pair.pin_cpu != 0;
}

/*
 * The guest has run for PIN_IDLE_NS without a trap: it computes, or the
 * stub's SIGSYS handler serves its reads itself (seccomp_passthrough.md),
 * and our thread sleeps. Its stub thread gets every CPU back now, not after
 * PIN_AFTER hand-offs that may not come for the rest of the run: kept off
 * our idle CPU, it shared the other with whatever ran there (sha256sum of
 * 64 MiB with a busy neighbour: ~800 ms in 3 runs of 8, against 401-428
 * ms). The next hand-offs that spin pin it again.
 */
void seccomp_place_idle(struct seccomp_ctx *sc)
{
	place_pair_leave(&sc->pair, sc->ctx.tid);	/* a pair's computing guest gets every CPU back too */
	if (!sc->pin_cpu)
		return;
	unpin(sc->ctx.tid);
	sc->pin_cpu = 0;
	sc->pin_want = false;
	sc->pin_streak = 0;
}

static bool seccomp_as_release(struct addr_space *as, struct rusage *ru);
static long seccomp_fpu_get(struct platform_ctx *ctx, void *buf, size_t len);
static long seccomp_fpu_set(struct platform_ctx *ctx, const void *buf, size_t len);
static struct seccomp_ctx *self(struct addr_space *as);
static long seccomp_as_syscall(struct addr_space *as, long nr, const long args[6]);
static void seccomp_as_close_fd(struct addr_space *as, long as_fd);
static void drop_held_fd(struct seccomp_ctx *sc);

/*
 * The path prefetch's table (stub_abi.h): the syscalls whose string
 * arguments (paths, xattr names) the sentry reads with strncpy_from_guest
 * at once, by argument (the stub copies the first two). A syscall missing
 * here costs a process_vm_readv per string, no more.
 */
static void fill_prefetch(struct stub_ctl *ctl)
{
	static const struct {
		short nr;
		uint8_t args;	/* bit i: argument i */
	} table[] = {
		{ SYS_open, 1 }, { SYS_stat, 1 }, { SYS_lstat, 1 }, { SYS_access, 1 }, { SYS_execve, 1 },
		{ SYS_truncate, 1 }, { SYS_chdir, 1 }, { SYS_mkdir, 1 }, { SYS_rmdir, 1 }, { SYS_creat, 1 },
		{ SYS_unlink, 1 }, { SYS_readlink, 1 }, { SYS_chmod, 1 }, { SYS_chown, 1 }, { SYS_lchown, 1 },
		{ SYS_statfs, 1 }, { SYS_utime, 1 }, { SYS_utimes, 1 }, { SYS_mknod, 1 }, { SYS_chroot, 1 },
		{ SYS_listxattr, 1 }, { SYS_llistxattr, 1 },
		{ SYS_rename, 3 }, { SYS_link, 3 }, { SYS_symlink, 3 },
		{ SYS_setxattr, 3 }, { SYS_lsetxattr, 3 }, { SYS_getxattr, 3 }, { SYS_lgetxattr, 3 },
		{ SYS_removexattr, 3 }, { SYS_lremovexattr, 3 },
		{ SYS_fsetxattr, 2 }, { SYS_fgetxattr, 2 }, { SYS_fremovexattr, 2 },
		{ SYS_openat, 2 }, { SYS_mkdirat, 2 }, { SYS_fchownat, 2 }, { SYS_newfstatat, 2 }, { SYS_unlinkat, 2 },
		{ SYS_readlinkat, 2 }, { SYS_fchmodat, 2 }, { SYS_faccessat, 2 }, { SYS_utimensat, 2 },
		{ SYS_execveat, 2 }, { SYS_statx, 2 }, { SYS_openat2, 2 }, { SYS_faccessat2, 2 }, { SYS_mknodat, 2 },
		{ SYS_futimesat, 2 }, { SYS_inotify_add_watch, 2 }, { SYS_name_to_handle_at, 2 }, { 452 /* fchmodat2 */, 2 },
		{ SYS_renameat, 10 }, { SYS_renameat2, 10 }, { SYS_linkat, 10 }, { SYS_symlinkat, 5 },
	};

	/*
	 * The input prefetch's (stub_abi.h): syscalls that read one buffer of
	 * the guest's at their start, before they write anything back, and
	 * read it whole (a read not inside the range copied, or a second one,
	 * goes to the guest's memory): { nr, 1 + the pointer's argument, 1 +
	 * the count's argument (0: none), bytes (per count) }.
	 */
	static const struct {
		short nr;
		struct stub_in_arg in;
	} in[] = {
		{ SYS_write, { 2, 3, 1 } }, { SYS_pwrite64, { 2, 3, 1 } }, { SYS_writev, { 2, 3, 16 } },
		{ SYS_sendto, { 2, 3, 1 } }, { SYS_sendmsg, { 2, 0, 56 } },
		{ SYS_rt_sigaction, { 2, 0, 32 } }, { SYS_rt_sigprocmask, { 2, 4, 1 } },
		{ SYS_rt_sigsuspend, { 1, 2, 1 } }, { SYS_rt_sigtimedwait, { 1, 4, 1 } }, { SYS_sigaltstack, { 1, 0, 24 } },
		{ SYS_poll, { 1, 2, 8 } }, { SYS_ppoll, { 1, 2, 8 } }, { SYS_epoll_ctl, { 4, 0, 12 } },
		{ SYS_nanosleep, { 1, 0, 16 } }, { SYS_clock_nanosleep, { 3, 0, 16 } },
		{ SYS_setitimer, { 2, 0, 32 } }, { SYS_timer_settime, { 3, 0, 32 } }, { SYS_timerfd_settime, { 3, 0, 32 } },
		{ SYS_setrlimit, { 2, 0, 16 } }, { SYS_prlimit64, { 3, 0, 16 } },
		{ SYS_connect, { 2, 3, 1 } }, { SYS_bind, { 2, 3, 1 } }, { SYS_setsockopt, { 4, 5, 1 } },
		{ SYS_utimensat, { 3, 0, 32 } },
	};

	_Static_assert(452 < STUB_PF_NRS, "the table covers them");
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
		ctl->pf_arg[table[i].nr] = table[i].args;
	for (size_t i = 0; i < sizeof(in) / sizeof(in[0]); i++) {
		ctl->pf_in[in[i].nr] = in[i].in;
		ctl->pf_arg[in[i].nr] |= STUB_PF_IN;
	}
}

/* The control page of a new stub: filled, mapped writable here, sealed against any other writable mapping. */
static long make_ctl(struct seccomp_as *sas)
{
	int fd = memfd_create("pvx-ctl", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	long r;

	if (fd < 0 || ftruncate(fd, STUB_CTL_SIZE) < 0)
		goto fail;
	sas->ctl = mmap(NULL, STUB_CTL_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (sas->ctl == MAP_FAILED) {
		sas->ctl = NULL;
		goto fail;
	}
	r = seccomp_fill_ctl(sas->ctl);
	fill_prefetch(sas->ctl);
	if (r) {
		close(fd);
		return r;
	}
	/* The stub's mapping will be read-only for good: no mprotect can make it writable. */
	if (fcntl(fd, F_ADD_SEALS, F_SEAL_FUTURE_WRITE | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0)
		goto fail;
	return fd;
fail:
	r = neg_errno();
	if (fd >= 0)
		close(fd);
	return r;
}

/*
 * The sentry's side of a new stub: the shared regions (a sparse memfd),
 * the control page and the two socketpairs; fds[] gets the stub's ends, in
 * the order of its fds 3, 4, 5, 6 (sock, regions, control page, K's sock).
 */
static long sas_make(struct seccomp_as **out, int fds[4])
{
	int sp[2] = { -1, -1 }, kp[2] = { -1, -1 }, shm = -1, ctl = -1;
	long r;

	fds[0] = fds[1] = fds[2] = fds[3] = -1;
	struct seccomp_as *sas = calloc(1, sizeof(*sas));
	struct seccomp_ctx *first = calloc(1, sizeof(*first));
	if (!sas || !first) {
		free(sas);
		free(first);
		return -ENOMEM;
	}
	sas->as.ops = &platform_seccomp;
	sas->as.creator = pthread_self();
	sas->as.pid = -1;
	sas->sock = sas->ksock = sas->taskdir = -1;
	first->ctx.first = true;
	ctx_link(&sas->as, &first->ctx, true);
	*out = sas;
	shm = memfd_create("pvx-shared", MFD_CLOEXEC);
	if (shm < 0 || ftruncate(shm, STUB_SHARED_TOTAL) < 0)
		goto fail;
	/* Regions of threads not yet made cost address space only (the memfd is sparse). */
	sas->regions = mmap(NULL, STUB_SHARED_TOTAL, PROT_READ | PROT_WRITE, MAP_SHARED, shm, 0);
	if (sas->regions == MAP_FAILED) {
		sas->regions = NULL;
		goto fail;
	}
	first->sh = region(sas, 0);
	first->sh->has_fsgsbase = !!(getauxval(AT_HWCAP2) & HWCAP2_FSGSBASE);
	r = ctl = (int)make_ctl(sas);
	if (r < 0)
		goto out;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0 ||
	    socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, kp) < 0)
		goto fail;
	sas->sock = sp[0];
	sas->ksock = kp[0];
	fds[0] = sp[1], fds[1] = shm, fds[2] = ctl, fds[3] = kp[1];
	return 0;
fail:
	r = neg_errno();
out:
	for (int i = 0; i < 2; i++) {
		if (sp[i] >= 0 && sp[i] != sas->sock)
			close(sp[i]);
		if (kp[i] >= 0 && kp[i] != sas->ksock)
			close(kp[i]);
	}
	if (shm >= 0)
		close(shm);
	if (ctl >= 0)
		close(ctl);
	return r;
}

static void close_fds(int fds[4])
{
	for (int i = 0; i < 4; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	fds[0] = fds[1] = fds[2] = fds[3] = -1;
}

/* The stub runs its own code (K is ready): learn its threads and selectors' home. */
static long sas_open_tasks(struct seccomp_as *sas)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/task", sas->as.pid);
	sas->taskdir = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return sas->taskdir < 0 ? neg_errno() : 0;
}

/* A stub process: exec it with the shared regions, the control page and the sockets (as_finish waits for it). */
static long as_start(struct seccomp_as **out)
{
	long memfd = stub_memfd(), r;
	struct seccomp_as *sas = NULL;
	int fds[4];

	if (memfd < 0)
		return memfd;
	r = sas_make(&sas, fds);
	if (r < 0)
		goto fail;
	stub_spawn_ask(sas, 0);	/* K makes it right after "ready" */
	pid_t pid = stub_start((int)memfd, "seccomp", fds, 4, false);
	if (pid < 0) {
		r = pid;
		goto fail;
	}
	sas->as.pid = pid;
	stub_register(pid);
	close_fds(fds);
	*out = sas;
	return 0;
fail:
	close_fds(fds);
	seccomp_as_release(sas ? &sas->as : NULL, NULL);
	return r;
}

/* Wait for K to report "ready"; it makes the first stub thread on region 0: wait for that thread's boot trap. */
static long as_finish(struct seccomp_as *sas, struct addr_space **out)
{
	struct seccomp_ctx *first = to_sctx(sas->as.ctxs);
	pid_t pid = sas->as.pid;
	long r;

	policy_init();
	r = stub_wait_report(sas);
	if (r != 1) {
		pr_err("seccomp stub did not start (%s)", r < 0 ? strerror((int)-r) : "bad report");
		r = -ECHILD;
		goto fail;
	}
	sas->as.vdso = stub_vdso(pid);	/* running its own code: its auxv is the stub's */
	r = sas_open_tasks(sas);
	if (!r)
		r = stub_spawn_wait(sas);
	if (r > 0) {
		first->ctx.tid = (pid_t)r;
		sas->tids[0] = (pid_t)r;
		sas->used[0] = true;
		r = stub_wait_parked(sas, first, WAIT_BOOT);
	}
	/* The first trap: the boot ud2 of stub_thread_main, before any guest code. */
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
	seccomp_as_release(&sas->as, NULL);
	return r;
}

/*
 * The first stub, started by the main thread (seccomp_as_prestart) right
 * after the platform is chosen: its exec and boot, 1-3 ms on the development
 * VM, then run while the sentry opens the program, starts the first task's
 * thread and reads the ELF. The first as_new takes it, and its first
 * context becomes the caller's.
 */
static struct seccomp_as *prestarted;

/* pvx ends before the first exec took it (no such program...): the stub is reaped here, not left to init. */
static void prestarted_release(void)
{
	struct seccomp_as *sas = __atomic_exchange_n(&prestarted, NULL, __ATOMIC_ACQ_REL);

	if (sas)
		seccomp_as_release(&sas->as, NULL);
}

static void seccomp_as_prestart(void)
{
	struct seccomp_as *sas;

	if (!prestarted && !as_start(&sas)) {
		prestarted = sas;
		atexit(prestarted_release);
	}
}

static long seccomp_as_new(struct addr_space **out)
{
	struct seccomp_as *sas = __atomic_exchange_n(&prestarted, NULL, __ATOMIC_ACQ_REL);
	long r;

	if (sas) {
		sas->as.ctxs->owner = pthread_self();
	} else if ((r = as_start(&sas)) < 0) {
		return r;
	}
	return as_finish(sas, out);
}

/* Send fds[] over sock in one message (SCM_RIGHTS), without blocking. */
static long send_fds(int sock, const int *fds, int n)
{
	char cbuf[CMSG_SPACE(4 * sizeof(int))] = { 0 };
	char byte = 0;
	struct iovec iov = { &byte, 1 };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			      .msg_controllen = CMSG_SPACE((size_t)n * sizeof(int)) };
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);

	if (n > 4)
		return -EINVAL;
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN((size_t)n * sizeof(int));
	memcpy(CMSG_DATA(c), fds, (size_t)n * sizeof(int));
	return sendmsg(sock, &msg, MSG_NOSIGNAL | MSG_DONTWAIT) < 0 ? neg_errno() : 0;
}

/*
 * fork(2) by the host: K forks the whole stub (stub/sites.S k_fork_check),
 * so the child has the parent's memory copy-on-write and its MAP_SHARED
 * mappings shared, and nothing is copied here. The child gets what a new
 * stub gets, made here and sent on the parent's K socket, which only K can
 * read (the filters): its own regions, control page and sockets; it never
 * shares the parent's (MADV_DONTFORK in the stub, and dup3 over fds 3 and
 * 6). K, not the forking guest thread, forks: the child starts with K alone
 * (its filter, no guest thread, nothing the guest steers), and K makes its
 * first thread on region 0 as for a new stub. That thread has K's FPU state:
 * the parent thread's is loaded at its boot trap (seccomp_ctx_start).
 */
static long seccomp_as_fork(struct addr_space *parent, struct addr_space **out)
{
	struct seccomp_as *psas = to_sas(parent), *sas = NULL;
	struct seccomp_ctx *pc = self(parent);
	int fds[4] = { -1, -1, -1, -1 }, one = 1;
	long r;

	if (!pc)
		return -ESRCH;
	if (psas->no_fork || psas->ksock < 0 || __atomic_load_n(&psas->dead_sig, __ATOMIC_RELAXED))
		return -EAGAIN;
	r = sas_make(&sas, fds);
	if (r < 0)
		goto fail;
	struct seccomp_ctx *first = to_sctx(sas->as.ctxs);
	first->sh->has_fsgsbase = pc->sh->has_fsgsbase;
	sas->as.creator = parent->creator;	/* CLONE_PARENT: the parent stub's parent is the child's */
	sas->as.vdso = parent->vdso;
	sas->cs = psas->cs;
	sas->ss = psas->ss;
	memcpy(sas->ctl->ut, psas->ctl->ut, sizeof(sas->ctl->ut));	/* the host fork keeps the patched sites and the table */
	if ((sas->fork_fpu = aligned_alloc(64, K_FPSTATE_MAX)))
		sas->fork_fpu_len = seccomp_fpu_get(&pc->ctx, sas->fork_fpu, K_FPSTATE_MAX);
	if (setsockopt(sas->sock, SOL_SOCKET, SO_PASSCRED, &one, sizeof(one)) < 0) {
		r = neg_errno();
		goto fail;
	}
	stub_spawn_ask(sas, 0);	/* the child's K makes it right after "ready" */
	r = send_fds(psas->ksock, fds, 4);
	close_fds(fds);
	if (r < 0)
		goto fail;
	/* From here a failure may leave our fds in K's socket for the next fork: no more host forks. */
	psas->no_fork = true;
	struct stub_ctl *ctl = psas->ctl;
	__atomic_store_n(&ctl->fork_seq, ctl->fork_seq + 1, __ATOMIC_RELEASE);
	if (syscall(SYS_tgkill, parent->pid, parent->pid, STUB_SIG_CTL) < 0) {
		r = neg_errno();
		goto fail;
	}
	r = stub_wait_report(psas);
	if (r != 1) {
		if (r == -ETIMEDOUT)
			stub_break(psas, "its thread maker does not answer");
		r = r < 0 ? r : r - 1 < 4096 ? -(r - 1) : -EIO;
		goto fail;
	}
	r = stub_wait_hello(sas);
	if (r < 0) {
		pr_warn("seccomp: a forked stub of %d did not report (%s)", parent->pid, strerror((int)-r));
		r = -EIO;	/* not the parent's death (ESRCH): mm_fork copies instead */
		goto fail;
	}
	if (r == parent->pid) {
		r = -EIO;
		goto fail;
	}
	sas->as.pid = (pid_t)r;
	stub_register(sas->as.pid);
	psas->no_fork = false;
	unpin(sas->as.pid);	/* forked by K: it may have inherited a mask (see seccomp_place) */
	r = sas_open_tasks(sas);
	if (!r)
		r = stub_spawn_wait(sas);
	if (r < 0)
		goto fail;
	first->ctx.tid = (pid_t)r;
	sas->tids[0] = (pid_t)r;
	sas->used[0] = true;
	first->ctx.owned = false;	/* the child's sentry thread owns it from ctx_start */
	*out = &sas->as;
	return 0;
fail:
	close_fds(fds);
	seccomp_as_release(sas ? &sas->as : NULL, NULL);
	return r < 0 ? r : -EIO;
}

static bool seccomp_as_release(struct addr_space *as, struct rusage *ru)
{
	struct seccomp_as *sas = to_sas(as);
	bool reaped = false;

	if (!as)
		return false;
	if (as->pid > 0 && stub_unregister(as->pid)) {
		kill(as->pid, SIGKILL);
		reaped = stub_reap(as->pid, __WALL, ru);
	}
	if (sas->regions)
		munmap(sas->regions, STUB_SHARED_TOTAL);
	if (sas->ctl)
		munmap(sas->ctl, STUB_CTL_SIZE);
	if (sas->sock >= 0)
		close(sas->sock);
	if (sas->ksock >= 0)
		close(sas->ksock);
	free(sas->fork_fpu);
	if (sas->taskdir >= 0)
		close(sas->taskdir);
	while (as->ctxs) {
		struct platform_ctx *c = as->ctxs;
		ctx_unlink(c);
		free(c);
	}
	free(sas);
	return reaped;
}

/*
 * See platform.h. The caller's context must be the first and only one,
 * and no stub thread but K and its own may live: a guest thread that was
 * never stopped (not parked when it was released) runs guest code still,
 * and would run it in the new image. The regions of threads gone are
 * emptied (they hold the old image's registers and signal frames), as a
 * fresh stub's are; K, region 0, the control page and the sockets stay.
 * The scan for such a thread (in the stub's open /proc/PID/task) is the
 * question's (exec_in_place); the wipe that follows (exec_mm_reuse) does
 * not scan again: K makes a thread only when a context of this stub asks,
 * and the caller's is the only one.
 */
static long seccomp_as_exec(struct addr_space *as, bool wipe)
{
	struct seccomp_as *sas = to_sas(as);
	struct platform_ctx *c = ctx_self(as);
	const long unmap[6] = { 0, (long)PVX_GUEST_TASK_SIZE };

	if (!c || !c->first || as->ctxs != c || c->next || __atomic_load_n(&sas->dead_sig, __ATOMIC_RELAXED))
		return -EBUSY;
	memset(sas->ctl->ut, 0, sizeof(sas->ctl->ut));	/* mm/usertrap.c forgets them with the old image */
	if (!wipe) {
		const pid_t keep[2] = { as->pid, sas->tids[0] };
		return stub_threads_only_at(sas->taskdir, keep, 2) < 0 ? -EBUSY : 0;
	}
	long r = seccomp_as_syscall(as, SYS_munmap, unmap);
	if (r < 0)
		return r == -EBUSY ? -EIO : r;
	for (int i = 1; i < STUB_MAX_THREADS; i++)
		sas->used[i] = false, sas->tids[i] = 0;
	if (madvise(region(sas, 1), STUB_SHARED_TOTAL - STUB_SHARED_SIZE, MADV_REMOVE) < 0)
		memset(region(sas, 1), 0, STUB_SHARED_TOTAL - STUB_SHARED_SIZE);
	struct stub_shared *sh = to_sctx(c)->sh;
	memset(sh->msg, 0, offsetof(struct stub_shared, altstack) - offsetof(struct stub_shared, msg));
	return 0;
}

/* The calling thread's context: its stub thread runs the command. */
static struct seccomp_ctx *self(struct addr_space *as)
{
	struct platform_ctx *c = ctx_self(as);

	if (!c)
		pr_err("seccomp: no context of this thread in stub %d", as->pid);
	return c ? to_sctx(c) : NULL;
}

/* One host syscall made by sc's stub thread (a command). */
static long ctx_syscall(struct seccomp_ctx *sc, long nr, const long args[6])
{
	sc->sh->sys_nr = nr;
	memcpy(sc->sh->sys_args, args, sizeof(sc->sh->sys_args));
	sc->cmd_nr = nr;
	long r = stub_command(to_sas(sc->ctx.as), sc, STUB_CMD_SYSCALL, WAIT_CMD);
	return r ? r : sc->sh->sys_ret;
}

/*
 * Batching (platform.h as_batch), for an execve in place: the wipe and the
 * image's mmaps go to the stub as one STUB_CMD_BATCH each time something
 * needs them done (a call that is not queued, a guest memory access, the
 * end), not as a command each; receiving a file's fd does not. The table is written to the caller's own region, which no
 * other guest thread exists to write (the caller's is the only context),
 * and which could only ask the filter for what a lone command could.
 */
static long batch_flush(struct seccomp_ctx *sc)
{
	int n = sc->bn;

	if (!n)
		return 0;
	sc->bn = 0;
	sc->ctx.as->batched = false;
	memcpy(sc->sh->out_buf, sc->bops, (size_t)n * sizeof(sc->bops[0]));
	sc->sh->sys_nr = n;
	sc->cmd_nr = CMD_NR_BATCH;
	long r = stub_command(to_sas(sc->ctx.as), sc, STUB_CMD_BATCH, WAIT_CMD);
	if (r)
		return r;
	long done = sc->sh->sys_args[0], ret = sc->sh->sys_ret;
	return done == n ? 0 : ret < 0 && ret >= -4095 ? ret : -EIO;
}

static void batch_queue(struct seccomp_ctx *sc, long nr, const long args[6])
{
	struct stub_batch_op *op = &sc->bops[sc->bn++];

	op->nr = nr;
	memcpy(op->args, args, sizeof(op->args));
	sc->ctx.as->batched = true;
}

static long seccomp_as_batch(struct addr_space *as, int how)
{
	struct seccomp_ctx *sc = self(as);

	if (!sc)
		return -ESRCH;
	if (how == AS_BATCH_BEGIN) {
		if (as->ctxs != &sc->ctx || sc->ctx.next)
			return -EINVAL;
		sc->batching = true;
		sc->bn = 0;
		return 0;
	}
	if (!sc->batching)
		return 0;
	if (how == AS_BATCH_END)
		sc->batching = false;	/* the file it mapped is closed as any held one: with the run (seccomp_run) */
	return batch_flush(sc);
}

static long seccomp_as_syscall(struct addr_space *as, long nr, const long args[6])
{
	struct seccomp_ctx *sc = self(as);

	if (!sc)
		return -ESRCH;
	long ret;
	if (sc->batching) {
		if (sc->bn < (int)STUB_BATCH_MAX && as_batch_queueable(nr, args, &ret)) {
			batch_queue(sc, nr, args);
			return ret;
		}
		long e = batch_flush(sc);
		if (e < 0)
			return e;
	}
	return ctx_syscall(sc, nr, args);
}

/*
 * A new guest thread: K makes a stub thread on a free region (a region is
 * free once its last thread is gone, by the kernel's word); it boots with a
 * ud2 trap that ctx_start waits for on the new sentry thread.
 */
static long seccomp_ctx_new(struct platform_ctx *parent, struct platform_ctx **out)
{
	struct seccomp_as *sas = to_sas(parent->as);
	struct seccomp_ctx *pc = to_sctx(parent), *sc;
	int i;

	for (i = 1; i < STUB_MAX_THREADS; i++)
		if (!sas->used[i] && (!sas->tids[i] || !stub_thread_alive(sas, sas->tids[i])))
			break;
	if (i == STUB_MAX_THREADS)
		return -EAGAIN;
	sc = calloc(1, sizeof(*sc));
	if (!sc)
		return -ENOMEM;
	sas->tids[i] = 0;
	struct stub_shared *sh = region(sas, i);
	memset(sh, 0, offsetof(struct stub_shared, msg));
	sh->has_fsgsbase = pc->sh->has_fsgsbase;
	/*
	 * K makes the thread without CLONE_SETTLS: it starts with K's bases,
	 * which K never sets (0), whatever the guest's parent thread has. The
	 * stub loads the guest's at the first run when they differ from these
	 * (without FSGSBASE it cannot read the real ones), so these must be
	 * true: a child that keeps its parent's base (vfork, a thread without
	 * CLONE_SETTLS) would run on a base of 0.
	 */
	sh->cur_fs_base = 0;
	sh->cur_gs_base = 0;
	long tid = stub_spawn(sas, i);
	if (tid < 0) {
		free(sc);
		return tid;
	}
	sc->index = i;
	sc->sh = sh;
	sc->ctx.tid = (pid_t)tid;
	sas->used[i] = true;
	sas->tids[i] = (pid_t)tid;
	ctx_link(parent->as, &sc->ctx, false);
	*out = &sc->ctx;
	return 0;
}

static long seccomp_ctx_start(struct platform_ctx *ctx)
{
	struct seccomp_as *sas = to_sas(ctx->as);
	struct seccomp_ctx *sc = to_sctx(ctx);
	long r;

	ctx->owner = pthread_self();
	ctx->owned = true;
	r = stub_wait_parked(sas, sc, WAIT_BOOT);
	if (!r && sc->sh->trap_signo != SIGILL) {
		pr_err("seccomp stub thread did not boot (signal %d)", sc->sh->trap_signo);
		r = -ECHILD;
	}
	/* The first thread of a forked stub: the forking thread's FPU state (seccomp_as_fork). */
	if (!r && ctx->first && sas->fork_fpu) {
		if (sas->fork_fpu_len > 0 && seccomp_fpu_set(ctx, sas->fork_fpu, (size_t)sas->fork_fpu_len) < 0)
			pr_debug("seccomp: the forked stub's FPU state could not be set");
		free(sas->fork_fpu);
		sas->fork_fpu = NULL;
	}
	return r;
}

/*
 * The guest thread is gone: its stub thread is told to exit, if it listens.
 * Nothing waits for it: its region is reused once its tid is gone.
 */
static void seccomp_ctx_release(struct platform_ctx *ctx)
{
	struct seccomp_as *sas = to_sas(ctx->as);
	struct seccomp_ctx *sc = to_sctx(ctx);

	if (sc->held_fd1 && !__atomic_load_n(&sas->dead_sig, __ATOMIC_RELAXED) &&
	    __atomic_load_n(&sc->sh->state, __ATOMIC_ACQUIRE) == STUB_PARKED)
		drop_held_fd(sc);	/* gone in the middle of a call that mapped a file (an exec that failed late) */
	if (ctx->first)
		return;
	if (!__atomic_load_n(&sas->dead_sig, __ATOMIC_RELAXED) &&
	    __atomic_load_n(&sc->sh->state, __ATOMIC_ACQUIRE) == STUB_PARKED)
		stub_post(sc->sh, STUB_CMD_EXIT, 0);
	else
		pr_debug("seccomp: stub thread %d not parked at exit", ctx->tid);
	sas->used[sc->index] = false;
	ctx_unlink(ctx);
	free(sc);
}

/* Is the stub's fd the open file description of our host_fd? (kcmp needs ptrace access to the stub) */
static bool same_file(struct seccomp_as *sas, int host_fd, int fd)
{
	if (sas->no_kcmp)
		return true;
	long r = syscall(SYS_kcmp, sentry_pid(), sas->as.pid, KCMP_FILE, host_fd, fd);
	if (r < 0 && (errno == ENOSYS || errno == EPERM)) {
		pr_debug("seccomp: kcmp unavailable (%m): fds passed to the stub are not verified");
		sas->no_kcmp = true;
		return true;
	}
	return r == 0;
}

/* One recvmsg of the stub, without blocking: the fd it got (checked), or -errno. */
static long receive_fd(struct seccomp_ctx *sc)
{
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

	long a[6] = { STUB_FD_SOCK, (long)(base + offsetof(struct stub_shared, msg)), MSG_DONTWAIT | MSG_CMSG_CLOEXEC };
	long r = ctx_syscall(sc, SYS_recvmsg, a);	/* not after the queued calls (as_get_fd) */
	if (r < 0)
		return r == -EAGAIN ? -EIO : r;	/* taken by guest code */
	struct cmsghdr rc;
	int fd;
	memcpy(&rc, sh->cmsg, sizeof(rc));	/* copied once, then checked */
	memcpy(&fd, (char *)sh->cmsg + CMSG_LEN(0), sizeof(fd));
	if (rc.cmsg_level != SOL_SOCKET || rc.cmsg_type != SCM_RIGHTS || rc.cmsg_len != CMSG_LEN(sizeof(int)) ||
	    fd < 0 || fd >= (1 << 20))
		return -EIO;
	return fd;
}

/*
 * The stub's fd of the last file mapped is kept (held_fd1 of the calling
 * thread's context, as ptrace.c keeps its held_fd): an image's segments
 * are one file, so an exec sends and closes it once, not once a segment,
 * and each segment costs one command (the mmap) instead of three. Reused
 * while kcmp(2) says it is the open file description of the host fd asked
 * for. Closed before the thread runs guest code again (seccomp_run) and
 * when the thread goes, so the stub holds no file past the call that mapped
 * it (a file the guest closed and unmapped is released as on Linux). A stub
 * forked meanwhile by another thread's fork closes every fd it inherits
 * but its sockets (stub.c, close_range), so it never gets the kept one.
 */
static void drop_held_fd(struct seccomp_ctx *sc)
{
	if (!sc->held_fd1)
		return;	/* every run asks: nothing more on the way to guest code */
	const long a[6] = { sc->held_fd1 - 1 };
	sc->held_fd1 = 0;
	if (ctx_syscall(sc, SYS_close, a) < 0)
		pr_debug("close of fd %ld in stub %d failed", a[0], sc->ctx.as->pid);
}

/* The same, by the run's own command (run_close): the stub closes it before it loads the guest's registers. */
static void drop_held_fd_at_run(struct seccomp_ctx *sc)
{
	__atomic_store_n(&sc->sh->run_close, (uint32_t)sc->held_fd1, __ATOMIC_RELAXED);
	sc->held_fd1 = 0;
}

/*
 * Send host_fd over the socket, then have the stub recvmsg() it (see top).
 * Nothing blocks: guest code may have taken the message, or left an older
 * one in front of ours (dropped and closed in the stub).
 */
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
	/* kcmp, not same_file: without kcmp nothing tells a kept fd's file from another's (and it is not asked again) */
	if (sc->held_fd1 && !sas->no_kcmp &&
	    syscall(SYS_kcmp, sentry_pid(), as->pid, KCMP_FILE, host_fd, sc->held_fd1 - 1) == 0)
		return sc->held_fd1 - 1;
	/* Queued calls (as_batch) wait: receiving a file changes no mapping, and they name no fd not yet here. */
	if (sendmsg(sas->sock, &msg, MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
		return neg_errno();
	for (int i = 0; i < FD_TRIES; i++) {
		long fd = receive_fd(sc);
		if (fd < 0 || same_file(sas, host_fd, (int)fd))
			return fd;
		seccomp_as_close_fd(as, fd);
	}
	return -EIO;
}

static void seccomp_as_close_fd(struct addr_space *as, long as_fd)
{
	long a[6] = { as_fd };

	if (seccomp_as_syscall(as, SYS_close, a) < 0)
		pr_debug("close of fd %ld in stub failed", as_fd);
}

/* Keep the fd of a file mapping for the next one (see drop_held_fd); any other fd is closed. */
static void seccomp_as_put_fd(struct addr_space *as, long as_fd)
{
	struct seccomp_ctx *sc = self(as);

	if (!sc || as_fd < 0 || as_fd >= INT_MAX) {
		seccomp_as_close_fd(as, as_fd);
		return;
	}
	if (sc->held_fd1 == as_fd + 1)
		return;
	drop_held_fd(sc);
	sc->held_fd1 = (int)as_fd + 1;
}

/*
 * Passthrough (seccomp_passthrough.md): the stub gets its own dup of
 * host_fd at STUB_PT_BASE + g (received as for a file mapping, checked with
 * kcmp, dup3'd into place: the filter allows dup3 only onto that range),
 * then bit g of the control page, which the stub cannot write, says "serve
 * it". The sentry's caller keeps the mirror of what is on (struct fdtable).
 */
static void seccomp_as_pt_drop(struct addr_space *as, int g, bool close_dup)
{
	struct seccomp_as *sas = to_sas(as);

	if (g < 0 || g >= STUB_PT_MAX)
		return;
	__atomic_fetch_and(&sas->ctl->pt_bits[g / 64], ~(1UL << (g % 64)), __ATOMIC_SEQ_CST);
	__atomic_fetch_and(&sas->ctl->pt_wbits[g / 64], ~(1UL << (g % 64)), __ATOMIC_SEQ_CST);
	if (!close_dup || __atomic_load_n(&sas->dead_sig, __ATOMIC_RELAXED))
		return;
	long a[6] = { STUB_PT_BASE + g };
	long r = seccomp_as_syscall(as, SYS_close, a);
	if (r < 0 && r != -EBADF)
		pr_warn("seccomp stub %d: the passthrough dup of fd %d stays (%s)", as->pid, g, strerror((int)-r));
}

static long seccomp_as_pt_install(struct addr_space *as, int g, int host_fd, bool write)
{
	struct seccomp_as *sas = to_sas(as);

	if (g < 0 || g >= STUB_PT_MAX)
		return -EINVAL;
	long fd = seccomp_as_get_fd(as, host_fd);
	if (fd < 0)
		return fd;
	long a[6] = { fd, STUB_PT_BASE + g, 0 };
	long r = fd != STUB_FD_SOCK && fd != STUB_FD_KSOCK && fd < STUB_PT_BASE ? seccomp_as_syscall(as, SYS_dup3, a)
									       : -EMFILE;
	seccomp_as_put_fd(as, fd);
	if (r != STUB_PT_BASE + g || !same_file(sas, host_fd, STUB_PT_BASE + g)) {
		seccomp_as_pt_drop(as, g, r == STUB_PT_BASE + g);
		return r < 0 ? r : -EIO;
	}
	__atomic_fetch_or(write ? &sas->ctl->pt_wbits[g / 64] : &sas->ctl->pt_bits[g / 64], 1UL << (g % 64),
			  __ATOMIC_SEQ_CST);
	return 0;
}

/*
 * The prefetches of this trap (stub_abi.h), read only for a syscall our own
 * table names: the stub writes them only then, so that a trap of any other
 * syscall moves no more cache lines between the two than it did before.
 * Guest-writable: bounded here, once. (A guest that forged the syscall's
 * number gets an older trap's values for it: bytes of its own memory.)
 */
static void prefetched(struct seccomp_as *sas, struct seccomp_ctx *sc, uint32_t nr)
{
	struct stub_shared *sh = sc->sh;
	uint8_t bits = nr < STUB_PF_NRS ? sas->ctl->pf_arg[nr] & 63 : 0;

	if (bits) {
		sc->pf_len = __atomic_load_n(&sh->pf_len, __ATOMIC_RELAXED);
		sc->pf_addr = __atomic_load_n(&sh->pf_addr, __ATOMIC_RELAXED);
		sc->pf_valid = sc->pf_len >= 0 && sc->pf_len < STUB_PF_MAX;
	}
	if (bits & (bits - 1)) {
		sc->pf_len2 = __atomic_load_n(&sh->pf_len2, __ATOMIC_RELAXED);
		sc->pf_addr2 = __atomic_load_n(&sh->pf_addr2, __ATOMIC_RELAXED);
		sc->pf_valid2 = sc->pf_valid && sc->pf_len2 >= 0 &&
				(int64_t)sc->pf_len + 1 + sc->pf_len2 < STUB_PF_MAX;	/* it follows the first's NUL */
	}
	if (nr < STUB_PF_NRS && (sas->ctl->pf_arg[nr] & STUB_PF_IN)) {
		sc->in_addr = __atomic_load_n(&sh->in_addr, __ATOMIC_RELAXED);
		sc->in_len = __atomic_load_n(&sh->in_len, __ATOMIC_RELAXED);
		if (sc->in_len > STUB_IN_MAX || sc->in_addr >= PVX_GUEST_TASK_SIZE ||
		    sc->in_len > PVX_GUEST_TASK_SIZE - sc->in_addr)
			sc->in_len = 0;
	}
}

static void *region_ptr(struct seccomp_ctx *sc, uint64_t addr, size_t len);

/*
 * The usertrap (seccomp_patch.md): a trap through a patched site has no
 * signal frame, and so no FPU state the sentry could read or write, and
 * it can only go back by a jump to rcx. Before anything needs more, the
 * stub takes the trap again as a fault (STUB_CMD_ESCALATE), with the
 * trap's registers: from then on it is an ordinary trap with a frame.
 * 0, or -errno (the guest forged its region: the thread cannot go on).
 */
static long ut_escalate(struct seccomp_as *sas, struct seccomp_ctx *sc)
{
	struct stub_shared *sh = sc->sh;

	sc->ut_trap = false;
	sh->regs = sc->ut_regs;
	__atomic_store_n(&sh->ucontext, 0, __ATOMIC_RELAXED);
	sc->cmd_nr = LONG_MIN;	/* no host call */
	long r = stub_command(sas, sc, STUB_CMD_ESCALATE, WAIT_CMD);
	if (r)
		return r;
	if (!region_ptr(sc, __atomic_load_n(&sh->ucontext, __ATOMIC_RELAXED), sizeof(struct k_ucontext)))
		return -EIO;
	return 0;
}

/* A usertrap's report (trap_syscall: the slot) as the syscall it stands for, from the slot in our control page. */
static void ut_trapped(struct seccomp_as *sas, struct seccomp_ctx *sc, struct pvx_regs *regs, struct pvx_trap *trap)
{
	uint32_t k = (uint32_t)sc->sh->trap_syscall;
	uint64_t site = k < STUB_UT_SLOTS ? __atomic_load_n(&sas->ctl->ut[k].site, __ATOMIC_ACQUIRE) : 0;

	regs->cs = sas->cs;
	regs->ss = sas->ss;
	regs->r11 = regs->eflags;	/* the stub made both what the syscall met (after a STUB_UT_READ's xor) */
	sc->ut_trap = true;
	if (!site) {	/* a jump to the entry, or to a free slot's pad */
		regs->rip = regs->rcx = 0;
		trap->kind = TRAP_SIGNAL;
		trap->signo = SIGSEGV;
		trap->code = 0x80;	/* SI_KERNEL */
		sc->ut_regs = *regs;
		return;
	}
	uint32_t nr = sas->ctl->ut[k].nr;
	regs->rip = regs->rcx = site + STUB_UT_RET(sas->ctl->ut[k].shape);
	regs->rax = regs->orig_rax = nr;
	sc->ut_regs = *regs;
	trap->kind = TRAP_SYSCALL;
	trap->patched = true;
	prefetched(sas, sc, nr);
}

/* Run guest code until it traps: how says how long the stub may take (WAIT_RUN: unbounded, no lock held). */
static long run_wait(struct platform_ctx *ctx, struct pvx_regs *regs, struct pvx_trap *trap, enum stub_wait how)
{
	struct seccomp_as *sas = to_sas(ctx->as);
	struct seccomp_ctx *sc = to_sctx(ctx);
	struct stub_shared *sh = sc->sh;
	long r;

	/* A usertrap goes back by a jump to rcx (stub.c ut_return): anything else needs a frame. */
	bool ut_back = false;
	if (sc->ut_trap) {
		if (how == WAIT_RUN && regs->rip == regs->rcx && !(regs->eflags & 0x100 /* TF */))
			ut_back = true;
		else if ((r = ut_escalate(sas, sc)))
			return r;
		sc->ut_trap = false;
	}
	memset(trap, 0, sizeof(*trap));
	regs->cs = sas->cs;
	regs->ss = sas->ss;
	sh->regs = *regs;
	/* The copy-out goes with a run of guest code only (ctx_out); a gadget's run has none. */
	uint32_t out = how == WAIT_RUN ? sc->out_len : 0;
	sc->out_len = 0;
	if (out) {
		sh->out_addr = sc->out_addr;
		sh->out_fault = 0;
	}
	__atomic_store_n(&sh->out_len, out, __ATOMIC_RELAXED);
	r = stub_command(sas, sc, STUB_CMD_RUN, how);
	int dead = __atomic_load_n(&sas->dead_sig, __ATOMIC_RELAXED);
	if (r == -ESRCH && dead) {
		/* Killed by its filter (int $0x80, a forbidden call at a stub site) or by us. */
		trap->kind = TRAP_SIGNAL;
		trap->signo = dead;
		trap->code = 0x80;	/* SI_KERNEL: not ignorable */
		return 0;
	}
	if (r)
		return r;
	sc->pf_valid = sc->pf_valid2 = false;
	sc->in_len = 0;
	if (out && __atomic_load_n(&sh->out_fault, __ATOMIC_RELAXED)) {
		trap->kind = TRAP_OUT_FAULT;	/* the guest did not run: *regs stand as given */
		sc->ut_trap = ut_back;		/* ... and a usertrap's stub is still without a frame */
		return 0;
	}
	*regs = sh->regs;	/* copied once: the guest can scribble on the shared page */
	trap->signo = sh->trap_signo;
	trap->code = sh->trap_code;
	trap->addr = sh->trap_addr;
	if (trap->signo == SIGSYS && trap->code == STUB_TRAP_UT) {
		ut_trapped(sas, sc, regs, trap);
	} else if (trap->code == STUB_TRAP_ESCALATED) {
		/* Not asked for (the guest set its region's esc): an interruption, nothing to deliver. */
		trap->kind = TRAP_SIGNAL;
		trap->signo = SIGURG;
		trap->code = -1;
	} else if (trap->signo == SIGSYS && trap->code == 1 /* SYS_SECCOMP */) {
		trap->kind = TRAP_SYSCALL;
		regs->orig_rax = (uint64_t)(int64_t)sh->trap_syscall;
		prefetched(sas, sc, (uint32_t)regs->orig_rax);
	} else {
		trap->kind = TRAP_SIGNAL;
	}
	return 0;
}

static long seccomp_as_batch(struct addr_space *as, int how);

static long seccomp_run(struct platform_ctx *ctx, struct pvx_regs *regs, struct pvx_trap *trap)
{
	long e = to_sctx(ctx)->batching ? seccomp_as_batch(ctx->as, AS_BATCH_END) : 0;

	if (e < 0)
		return e;	/* not ended by its caller: nothing queued may be left for guest code to see */
	drop_held_fd_at_run(to_sctx(ctx));	/* guest code never runs with a file the sentry sent for a mapping */
	return run_wait(ctx, regs, trap, WAIT_RUN);
}

/* One go of the cmpxchg gadget: under the sentry lock, so with a command's deadline. */
static long gadget_run(struct platform_ctx *ctx, struct pvx_regs *regs, struct pvx_trap *trap)
{
	return run_wait(ctx, regs, trap, WAIT_CMD);
}

/*
 * The thread's registers at its trap are the template: its own fs/gs
 * bases, so the stub need not change them twice. The stub thread returns
 * from its trap into the gadget and traps again at the int3 (or the fault)
 * with the same signal frame contents (FPU state included) the guest gets
 * back on its next run.
 */
static long seccomp_as_cmpxchg32(struct addr_space *as, uint64_t uaddr, uint32_t old, uint32_t new,
				 uint32_t *prev)
{
	struct seccomp_ctx *sc = self(as);

	if (!sc)
		return -ESRCH;
	struct pvx_regs tmpl = sc->sh->regs;	/* guest-writable: only the thread's own state */
	sc->cmd_nr = LONG_MIN;	/* no host call is ours: a stub thread the guest steered into one is not "in the command" */
	return gadget_cmpxchg32(&sc->ctx, gadget_run, &tmpl, uaddr, old, new, prev);
}

/*
 * A string the stub prefetched at this thread's trap (stub_abi.h), each
 * once: a second read of one reads the guest's memory, as the kernel
 * would. The buffer is guest-writable: copied once, then its NUL checked
 * on our copy. The first string is at the start of pf_buf, the second
 * after the first's NUL (the lengths were bounded at the trap).
 */
static long seccomp_as_prefetched(struct addr_space *as, uint64_t src, char *dst, size_t max)
{
	struct platform_ctx *c = ctx_self(as);
	struct seccomp_ctx *sc = c ? to_sctx(c) : NULL;
	size_t n, off;

	if (!sc)
		return -ENOENT;
	if (sc->pf_valid && src == sc->pf_addr && (size_t)sc->pf_len < max) {
		n = (size_t)sc->pf_len;
		off = 0;
		sc->pf_valid = false;
	} else if (sc->pf_valid2 && src == sc->pf_addr2 && (size_t)sc->pf_len2 < max) {
		n = (size_t)sc->pf_len2;
		off = (size_t)sc->pf_len + 1;
		sc->pf_valid2 = false;
	} else {
		return -ENOENT;
	}
	memcpy(dst, sc->sh->pf_buf + off, n + 1);
	return memchr(dst, 0, n + 1) == dst + n ? (long)n : -ENOENT;
}

/*
 * The input the stub prefetched at this thread's trap (stub_abi.h), once:
 * a read inside the range bounded at the trap is served from the region
 * (guest-writable: what the guest had there, or wrote since), and the
 * range is used up; anything else reads the guest's memory.
 */
static long seccomp_as_prefetched_in(struct addr_space *as, uint64_t src, void *dst, size_t n)
{
	struct platform_ctx *c = ctx_self(as);
	struct seccomp_ctx *sc = c ? to_sctx(c) : NULL;

	if (!sc || !sc->in_len || src < sc->in_addr || n > sc->in_len || src - sc->in_addr > sc->in_len - n)
		return -ENOENT;
	size_t off = (size_t)(src - sc->in_addr);
	sc->in_len = 0;
	memcpy(dst, sc->sh->in_buf + off, n);
	return 0;
}

/*
 * Straight into the region: the stub thread is parked, and what other guest
 * threads may scribble there lands only in their own memory (the sentry's
 * copy for a redo is uaccess.c's).
 */
static long seccomp_ctx_out(struct platform_ctx *ctx, uint64_t dst, const void *buf, size_t n)
{
	struct seccomp_ctx *sc = to_sctx(ctx);

	if (!n || n > STUB_OUT_MAX || sc->out_len)
		return -ENOSPC;
	memcpy(sc->sh->out_buf, buf, n);
	sc->out_addr = dst;
	sc->out_len = (uint32_t)n;
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

	if (to_sctx(ctx)->ut_trap && ut_escalate(to_sas(ctx->as), to_sctx(ctx)))
		return 0;
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

	if (to_sctx(ctx)->ut_trap && ut_escalate(to_sas(ctx->as), to_sctx(ctx)))
		return -EFAULT;
	char *p = trap_fpstate(to_sctx(ctx), &room);

	if (!p || len > room)
		return -EFAULT;
	memcpy(p, buf, len);
	return 0;
}

/*
 * The usertrap's table (stub_layout.h): slot k points at pad k in the
 * stub's text, the same in every stub. One sealed memfd, made once, mapped
 * private and read-only: a guest that makes its copy writable and changes
 * it only steers its own jumps.
 */
static int ut_table_fd(void)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	static int fd = -1;

	pthread_mutex_lock(&lock);
	if (fd < 0) {
		uint64_t *t = malloc(STUB_UT_TABLE_SIZE);
		int f = memfd_create("pvx-usertrap", MFD_CLOEXEC | MFD_ALLOW_SEALING);
		for (int k = 0; t && k < STUB_UT_SLOTS; k++)
			t[k] = STUB_TEXT_ADDR + STUB_OFF_UT_PADS + (uint64_t)k * STUB_UT_PAD;
		if (t && f >= 0 && write(f, t, STUB_UT_TABLE_SIZE) == STUB_UT_TABLE_SIZE &&
		    fcntl(f, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) == 0) {
			fd = f;
			f = -1;
		}
		if (f >= 0)
			close(f);
		free(t);
	}
	pthread_mutex_unlock(&lock);
	return fd;
}

/* The table into the stub, where mm/usertrap.c found the guest's range free. */
static long seccomp_as_ut_map(struct addr_space *as)
{
	int fd = ut_table_fd();

	if (fd < 0)
		return -ENOMEM;
	long as_fd = seccomp_as_get_fd(as, fd);
	if (as_fd < 0)
		return as_fd;
	const long a[6] = { STUB_UT_TABLE_ADDR, STUB_UT_TABLE_SIZE, PROT_READ, MAP_PRIVATE | MAP_FIXED, as_fd, 0 };
	long r = seccomp_as_syscall(as, SYS_mmap, a);
	seccomp_as_put_fd(as, as_fd);
	return r == STUB_UT_TABLE_ADDR ? 0 : r < 0 ? r : -ENOMEM;
}

/* Slot k for the stub (control page): the number and shape first, then the site they go with. */
static void seccomp_as_ut_slot(struct addr_space *as, int k, uint64_t site, uint32_t nr, int shape)
{
	struct stub_ctl *ctl = to_sas(as)->ctl;

	if (k < 0 || k >= STUB_UT_SLOTS)
		return;
	__atomic_store_n(&ctl->ut[k].nr, nr, __ATOMIC_RELAXED);
	__atomic_store_n(&ctl->ut[k].shape, (uint32_t)shape, __ATOMIC_RELAXED);
	__atomic_store_n(&ctl->ut[k].site, site, __ATOMIC_RELEASE);
}

const struct platform_ops platform_seccomp = {
	.name = "seccomp",
	.probe = seccomp_probe,
	.as_new = seccomp_as_new,
	.as_prestart = seccomp_as_prestart,
	.as_fork = seccomp_as_fork,
	.as_release = seccomp_as_release,
	.as_exec = seccomp_as_exec,
	.ctx_new = seccomp_ctx_new,
	.ctx_start = seccomp_ctx_start,
	.ctx_release = seccomp_ctx_release,
	.as_syscall = seccomp_as_syscall,
	.as_get_fd = seccomp_as_get_fd,
	.as_put_fd = seccomp_as_put_fd,
	.as_batch = seccomp_as_batch,
	.run = seccomp_run,
	.fpu_get = seccomp_fpu_get,
	.fpu_set = seccomp_fpu_set,
	.as_cmpxchg32 = seccomp_as_cmpxchg32,
	.as_pt_install = seccomp_as_pt_install,
	.as_pt_drop = seccomp_as_pt_drop,
	.as_prefetched = seccomp_as_prefetched,
	.as_prefetched_in = seccomp_as_prefetched_in,
	.ctx_out = seccomp_ctx_out,
	.as_ut_map = seccomp_as_ut_map,
	.as_ut_slot = seccomp_as_ut_slot,
};

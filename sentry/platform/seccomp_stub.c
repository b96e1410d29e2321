// SPDX-License-Identifier: GPL-2.0
/*
 * The seccomp platform's side of the protocol with its stub (stub/stub.c,
 * stub/sites.S): posting commands, waiting for answers, having K make
 * stub threads.
 *
 * Guest code writes the shared regions too, and can make any stub thread
 * run code of its choosing. So no value read back from a region is trusted
 * (the host tid of a new thread comes from /proc/PID/task, a thread's life
 * from tgkill(2), the stub's from waitid(2)), and no wait depends on the
 * guest's cooperation without a bound: a wait checks the stub and its
 * thread every LIVENESS_NS, a command under the sentry lock gives up after
 * CMD_SOFT_NS unless /proc shows the thread still inside the host call it
 * was asked to make, or runnable without having had the CPU to finish it
 * (a busy host: CMD_CPU_NS of CPU time at most), for CMD_HARD_NS at most;
 * a thread that never boots,
 * or a K that never answers, is given up too. Giving up on a command or on
 * K means the stub is broken: it is killed, and its guest process with it.
 */
#include <dirent.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>

#include "pvx/log.h"
#include "seccomp.h"

#define LIVENESS_NS 100000000L		/* how often a waiting sentry checks on the stub */
#define PIN_IDLE_NS 2000000L		/* guest code that runs this long without a trap: its stub thread is let go */
#define CMD_SOFT_NS 2000000000UL	/* a command this old must show its host call in /proc */
#define CMD_HARD_NS 60000000000UL	/* ... and no command gets longer */
#define CMD_CPU_NS 1000000000UL		/* ... or be runnable and have used less CPU than this since */
#define BOOT_NS 10000000000UL		/* a new stub thread's first trap, K's answer */

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000UL + (uint64_t)ts.tv_nsec;
}

/* Is the stub process still there? Records how it died; it stays a zombie for as_release to reap. */
bool stub_alive(struct seccomp_as *sas)
{
	siginfo_t si;

	if (__atomic_load_n(&sas->dead_sig, __ATOMIC_RELAXED))
		return false;
	memset(&si, 0, sizeof(si));
	if (waitid(P_PID, (id_t)sas->as.pid, &si, WEXITED | WNOHANG | WNOWAIT | __WALL) < 0)
		return errno == EINTR;
	if (si.si_pid == 0)
		return true;
	if (si.si_code == CLD_EXITED)
		pr_err("stub exited with status %d", si.si_status);
	int sig = si.si_code == CLD_EXITED ? SIGKILL : si.si_status, zero = 0;
	__atomic_compare_exchange_n(&sas->dead_sig, &zero, sig, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
	return false;
}

/* Is tid still a thread of the stub? (the kernel checks it belongs to the stub's thread group) */
bool stub_thread_alive(struct seccomp_as *sas, pid_t tid)
{
	return tid > 0 && (syscall(SYS_tgkill, sas->as.pid, tid, 0) == 0 || errno != ESRCH);
}

/* The stub cannot be trusted to answer any more: kill it (it is our unreaped child). */
void stub_break(struct seccomp_as *sas, const char *why)
{
	int zero = 0;

	pr_warn("seccomp stub %d: %s: killing it", sas->as.pid, why);
	kill(sas->as.pid, SIGKILL);
	__atomic_compare_exchange_n(&sas->dead_sig, &zero, SIGKILL, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
}

/* Post a command for the parked stub thread of sh; spin: how long it may spin when it parks again. */
void stub_post(struct stub_shared *sh, uint32_t cmd, uint32_t spin)
{
	sh->spin = spin;	/* the stub's own to read: it only spends the guest's CPU */
	sh->cmd = cmd;
	__atomic_store_n(&sh->state, STUB_CMD, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&sh->stub_sleeping, __ATOMIC_SEQ_CST))
		syscall(SYS_futex, &sh->state, FUTEX_WAKE, 1, NULL, NULL, 0);
}

/*
 * Is the thread of sc inside the host call it was told to make, at the
 * stub's generic syscall instruction? (/proc/PID/task/TID/syscall: "NR
 * ARGS... SP PC" while in a syscall, "running" otherwise.)
 */
static bool in_command(struct seccomp_as *sas, struct seccomp_ctx *sc)
{
	char path[64], buf[256];
	unsigned long pc = 0;
	long nr = -1;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall", sas->as.pid, sc->ctx.tid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = 0;
	const char *last = strrchr(buf, ' ');
	if (sscanf(buf, "%ld", &nr) != 1 || !last || sscanf(last, " %lx", &pc) != 1)
		return false;
	bool ours = nr == sc->cmd_nr || (sc->cmd_nr == CMD_NR_BATCH && as_batch_nr(nr));
	return ours && pc == STUB_SITE_IP(STUB_OFF_SITE_GENERIC);
}

/*
 * Is the thread of sc runnable but starved, a busy host's doing rather than
 * the guest's? State R (or D: waiting on the host's memory or disk) in
 * /proc/PID/task/TID/stat and less than CMD_CPU_NS of CPU time (schedstat)
 * since the first look, kept in *cpu0: a thread the guest made spin uses
 * that up, one it made sleep in a host call is S.
 */
static bool starved(struct seccomp_as *sas, struct seccomp_ctx *sc, uint64_t *cpu0)
{
	char path[64], buf[512];
	uint64_t run, delay;
	char state = 0;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", sas->as.pid, sc->ctx.tid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
	if (fd >= 0)
		close(fd);
	const char *paren = n > 0 ? (buf[n] = 0, strrchr(buf, ')')) : NULL;
	if (!paren || sscanf(paren, ") %c", &state) != 1 || (state != 'R' && state != 'D'))
		return false;
	if (thread_schedstat(sas->as.pid, sc->ctx.tid, &run, &delay))
		return false;
	if (!*cpu0)
		*cpu0 = run + 1;
	return run + 1 - *cpu0 < CMD_CPU_NS;
}

/* Every LIVENESS_NS of waiting: 0 to wait on, or why to stop. *cpu0: starved()'s. */
static long check_wait(struct seccomp_as *sas, struct seccomp_ctx *sc, enum stub_wait how, uint64_t waited,
		       uint64_t *cpu0)
{
	if (!stub_alive(sas))
		return -ESRCH;
	if (sc->ctx.tid > 0 && !stub_thread_alive(sas, sc->ctx.tid)) {
		pr_debug("seccomp: stub thread %d is gone", sc->ctx.tid);
		return -ESRCH;
	}
	switch (how) {
	case WAIT_RUN:
		return 0;
	case WAIT_BOOT:
		return waited < BOOT_NS ? 0 : -ETIMEDOUT;
	case WAIT_CMD:
		if (waited < CMD_SOFT_NS ||
		    (waited < CMD_HARD_NS && (in_command(sas, sc) || starved(sas, sc, cpu0))))
			return 0;
		stub_break(sas, "a stub thread does not answer its command");
		return -ESRCH;
	}
	return -EINVAL;
}

/*
 * The sentry's spin budget (ns), adapted per context and wait kind as an
 * adaptive mutex spins: a spin that saw the stub park doubles it (up to
 * SPIN_MAX_NS, about what a futex wake across CPUs costs, so a spin that
 * runs out costs at most as much again as the sleep it falls back to), one
 * that ran out halves it, down to SPIN_MIN_NS: about two trap round trips.
 * At the floor a hand-off spins only one time in SPIN_PROBE_EVERY, and
 * then for the whole SPIN_MAX_NS: a probe at the floor budget could never
 * see a wait longer than the floor succeed, and one outlier would keep a
 * guest that computes for 6 us between traps sleeping for good. So a guest
 * that computes for long between traps, or a host call that blocks, costs
 * the sentry about SPIN_MAX_NS / SPIN_PROBE_EVERY of CPU per hand-off.
 */
static uint32_t spin_grow(uint32_t b)
{
	return b >= SPIN_MAX_NS / 2 ? SPIN_MAX_NS : b * 2;
}

static uint32_t spin_shrink(uint32_t b)
{
	return b / 2 <= SPIN_MIN_NS ? SPIN_MIN_NS : b / 2;
}

/*
 * PVX_HANDOFF_STATS=1: at exit, how the sentry's waits for stub threads
 * went, by what was waited for (a command's host call, guest code until its
 * next trap) and how (spun until the stub parked; spun, then slept; slept
 * at once), with their count and time. The measure for the hand-off policy
 * (seccomp_place, stub_command): a wait that sleeps costs a futex wake,
 * across CPUs a wake-up of the other CPU (on the PVM machine of issue 16,
 * 30-120 us where a spin that succeeds takes 3-7 us).
 */
enum { HO_SPUN, HO_SPUN_SLEPT, HO_SLEPT, HO_OUTCOMES };
static struct { uint64_t n, ns; } ho_stats[2][HO_OUTCOMES];	/* [how == WAIT_RUN][outcome] */
static int ho_on = -1;	/* -1: not asked yet */

static void ho_print(void)
{
	static const char *const kind[2] = { "command", "run" };
	static const char *const outcome[HO_OUTCOMES] = { "spun", "spun+slept", "slept" };
	uint64_t looks, crowded;

	fprintf(stderr, "pvx: seccomp hand-offs (PVX_HANDOFF_STATS)\n%-8s %-11s %10s %9s %10s\n", "wait",
		"outcome", "count", "mean_us", "total_ms");
	for (int k = 0; k < 2; k++)
		for (int o = 0; o < HO_OUTCOMES; o++) {
			uint64_t n = __atomic_load_n(&ho_stats[k][o].n, __ATOMIC_RELAXED);
			uint64_t ns = __atomic_load_n(&ho_stats[k][o].ns, __ATOMIC_RELAXED);
			fprintf(stderr, "%-8s %-11s %10llu %9.1f %10.1f\n", kind[k], outcome[o], (unsigned long long)n,
				n ? (double)ns / 1e3 / (double)n : 0.0, (double)ns / 1e6);
		}
	host_crowded_stats(&looks, &crowded);
	fprintf(stderr, "busy neighbour (host_crowded): %llu of %llu looks\n", (unsigned long long)crowded,
		(unsigned long long)looks);
}

static bool ho_enabled(void)
{
	int on = __atomic_load_n(&ho_on, __ATOMIC_RELAXED);

	if (on < 0) {
		const char *env = getenv("PVX_HANDOFF_STATS");
		int want = env && *env && strcmp(env, "0");
		int unset = -1;
		/* The first thread to decide registers the report, once. */
		if (__atomic_compare_exchange_n(&ho_on, &unset, want, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED) && want)
			atexit(ho_print);
		on = __atomic_load_n(&ho_on, __ATOMIC_RELAXED);
	}
	return on > 0;
}

static void ho_count(enum stub_wait how, int outcome, uint64_t ns)
{
	__atomic_add_fetch(&ho_stats[how == WAIT_RUN][outcome].n, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&ho_stats[how == WAIT_RUN][outcome].ns, ns, __ATOMIC_RELAXED);
}

/*
 * Wait until the stub thread of sc parks (reports a trap or a result):
 * spin for spin ns, then futex. With budget (the sentry's own copy, never
 * the shared page's), adapt it by how the spin went; a probe's failure
 * (probe: the budget is at the floor) leaves it there. *slept: whether it
 * went to sleep at least once.
 */
static long wait_parked(struct seccomp_as *sas, struct seccomp_ctx *sc, enum stub_wait how, uint32_t *budget,
			uint32_t spin, bool probe, bool *slept)
{
	struct stub_shared *sh = sc->sh;
	/* Guest code that runs on while its stub thread is kept off our CPU: see seccomp_place_idle. */
	bool kept_off = how == WAIT_RUN && seccomp_kept_off(sc);
	struct timespec to = { 0, kept_off ? PIN_IDLE_NS : LIVENESS_NS };
	uint64_t start = 0, checked = 0, cpu0 = 0, idle_from = 0;
	uint64_t until = budget ? now_ns() + spin : 0;

	for (uint32_t i = 1;; i++) {
		uint32_t v = __atomic_load_n(&sh->state, __ATOMIC_ACQUIRE);
		if (v == STUB_PARKED) {
			if (budget)
				*budget = spin_grow(*budget);
			return 0;
		}
		if (budget) {
			__asm__ volatile("" ::: "memory");	/* no pause: it exits to the hypervisor */
			if (i % SPIN_CLOCK_EVERY || now_ns() < until)
				continue;
			if (!probe)
				*budget = spin_shrink(*budget);
			budget = NULL;
		}
		if (kept_off && !idle_from)
			idle_from = now_ns();
		*slept = true;
		/* See park() in stub/stub.c for the sleeping-flag protocol. */
		__atomic_store_n(&sh->sentry_sleeping, 1, __ATOMIC_SEQ_CST);
		v = __atomic_load_n(&sh->state, __ATOMIC_SEQ_CST);
		if (v != STUB_PARKED)
			syscall(SYS_futex, &sh->state, FUTEX_WAIT, v, &to, NULL, 0);
		__atomic_store_n(&sh->sentry_sleeping, 0, __ATOMIC_RELAXED);
		/* By the clock, not by timeouts: the guest can keep waking us. */
		uint64_t now = now_ns();
		if (!start)
			start = checked = now;
		if (kept_off && now - idle_from >= PIN_IDLE_NS) {
			seccomp_place_idle(sc);
			kept_off = false;
			to.tv_nsec = LIVENESS_NS;
		}
		if (now - checked >= (uint64_t)LIVENESS_NS) {
			checked = now;
			long r = check_wait(sas, sc, how, now - start, &cpu0);
			if (r)
				return r;
		}
	}
}

/* The same, without spinning (a new thread's boot). */
long stub_wait_parked(struct seccomp_as *sas, struct seccomp_ctx *sc, enum stub_wait how)
{
	bool slept = false;

	return wait_parked(sas, sc, how, NULL, 0, false, &slept);
}

/*
 * Is sc's stub thread crowded off its CPU: runnable but not running (its
 * schedstat run delay) for over CROWD_PCT of the time, at CROWD_LOOKS looks
 * in a row, CROWD_LOOK_NS apart? Then nobody spins for it for CROWD_COOL
 * looks, and seccomp_place lets both threads go: a stub thread spinning on
 * a CPU it shares (kept off the sentry thread's, where a busy neighbour
 * runs) takes that CPU from the guest's other tasks, and each of their
 * wakes waits for its turn (dd | wc with a loop on the other CPU: 3.7x
 * native spinning, 2.6x not). After the cool-off it is judged afresh.
 */
#define CROWD_COOL 16

static bool stub_crowded(struct seccomp_as *sas, struct seccomp_ctx *sc, uint64_t now)
{
	if (sc->ctx.tid <= 0 || (sc->crowd.look_ns && now - sc->crowd.look_ns < CROWD_LOOK_NS))
		return sc->cool > 0;
	crowd_read(&sc->crowd, sas->as.pid, sc->ctx.tid, now);
	if (sc->cool > 0) {	/* read through the cool-off, judged after it */
		sc->cool--;
		sc->crowd.over = 0;
		return true;
	}
	if (sc->crowd.over < CROWD_LOOKS)
		return false;
	sc->crowd.over = 0;
	sc->cool = CROWD_COOL;
	return true;
}

/*
 * The stub's spin after its next park, in iterations: SPIN_MAX_NS while
 * the sentry usually commands it within half of that (its time between
 * the stub's last park and its next command, by its own clock, as an
 * average that one slow emulation moves by a quarter at most: each sample
 * is capped at 2 * SPIN_MAX_NS); else (emulations that block or take long,
 * a task that sleeps in the sentry) no spin. Not a budget that halves on a
 * miss and grows on a hit: once halved below the usual emulation time (a
 * 12 us lstat after one outlier) it never hits again, and each trap paid a
 * futex wake across CPUs (an lstat took 48 us here, against 15 us
 * spinning). Nor twice the average: a stub thread that shares its CPU with
 * other work is preempted while it spins, and short spins then miss. Half
 * the maximum, not all of it: 64 KiB pipe writes (~25 us) spun and missed
 * with a busy neighbour (dd | wc 2.8x -> 3.7x native; 3.1x with half).
 */
static uint32_t stub_spin_iters(struct seccomp_ctx *sc, uint64_t now)
{
	if (sc->parked_at) {
		uint64_t took = MIN(now - sc->parked_at, 2 * (uint64_t)SPIN_MAX_NS);
		sc->took_avg = sc->took_avg ? (uint32_t)((3 * (uint64_t)sc->took_avg + took) / 4) : (uint32_t)took;
		sc->parked_at = 0;
	}
	return sc->took_avg <= SPIN_MAX_NS / 2 ? SPIN_ITERS : 0;
}

long stub_command(struct seccomp_as *sas, struct seccomp_ctx *sc, uint32_t cmd, enum stub_wait how)
{
	if (__atomic_load_n(&sas->dead_sig, __ATOMIC_RELAXED))
		return -ESRCH;
	/*
	 * A lone guest thread's stub spins even when crowded: it only takes
	 * time from the neighbour, and it is still the quickest hand-off
	 * (getppid with a busy loop on the other CPU: 5.5 s spinning, 9 s not).
	 */
	bool lone = sentry_live_hint() <= 1;
	bool spin = how != WAIT_BOOT && seccomp_spin_ok();
	bool many = how != WAIT_BOOT && !spin;	/* more tasks can run than spinning has CPUs for */
	uint64_t now = spin ? now_ns() : 0;	/* one clock read for the policy of this hand-off */

	if (spin && !lone && stub_crowded(sas, sc, now))
		spin = false;
	if (spin && lone)
		seccomp_place_look(sas, sc, now);
	uint32_t *budget = spin ? &sc->spin[how == WAIT_RUN] : NULL;
	uint32_t stub_spin = spin ? stub_spin_iters(sc, now) : 0;
	bool probe = false;

	if (budget && !*budget)
		*budget = SPIN_MAX_NS;
	/* At the floor, spins keep failing: one hand-off in SPIN_PROBE_EVERY still tries, for the whole maximum. */
	if (budget && *budget <= SPIN_MIN_NS) {
		if (++sc->probe[how == WAIT_RUN] % SPIN_PROBE_EVERY)	/* by kind: runs and commands often take turns */
			budget = NULL;
		probe = true;
	}
	/* Pinned only while the waits for guest code succeed in spinning. */
	seccomp_place(sas, sc, spin && sc->spin[WAIT_RUN] > SPIN_MIN_NS, many);
	stub_post(sc->sh, cmd, stub_spin);
	bool stats = ho_enabled(), slept = false, spun = budget != NULL;
	uint64_t t0 = stats ? now_ns() : 0;
	long r = wait_parked(sas, sc, how, budget, probe ? SPIN_MAX_NS : budget ? *budget : 0, probe, &slept);
	if (!r && spin)
		sc->parked_at = now_ns();
	if (stats && !r)
		ho_count(how, !spun ? HO_SLEPT : slept ? HO_SPUN_SLEPT : HO_SPUN, now_ns() - t0);
	return r;
}

/*
 * K's next report on the socket: its length (1: done; 1 + errno: failed).
 * Only K can write there (the filters), and it sends nothing else. With
 * from (a forked K's first report: we do not know its pid yet), the
 * sender's pid, as the kernel says it (SCM_CREDENTIALS; sock has SO_PASSCRED).
 */
static long wait_report(struct seccomp_as *sas, pid_t *from)
{
	uint64_t start = now_ns();

	for (;;) {
		struct pollfd pfd = { sas->sock, POLLIN, 0 };
		int r = poll(&pfd, 1, LIVENESS_NS / 1000000);
		if (r > 0) {
			union { char buf[CMSG_SPACE(sizeof(struct ucred))]; struct cmsghdr align; } u;
			char b;
			struct iovec iov = { &b, 1 };
			struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = from ? u.buf : NULL,
					    .msg_controllen = from ? sizeof(u.buf) : 0 };
			ssize_t n = recvmsg(sas->sock, &m, MSG_DONTWAIT | MSG_TRUNC | MSG_CMSG_CLOEXEC);
			if (n > 0 && from) {
				struct cmsghdr *c = CMSG_FIRSTHDR(&m);
				struct ucred uc;
				if ((m.msg_flags & MSG_CTRUNC) || !c || c->cmsg_level != SOL_SOCKET ||
				    c->cmsg_type != SCM_CREDENTIALS || c->cmsg_len != CMSG_LEN(sizeof(uc)))
					return -EIO;
				memcpy(&uc, CMSG_DATA(c), sizeof(uc));
				*from = uc.pid;
			}
			if (n > 0)
				return n;
			if (n == 0)
				return -ESRCH;
			if (errno != EAGAIN && errno != EINTR)
				return neg_errno();
		} else if (r < 0 && errno != EINTR) {
			return neg_errno();
		}
		if (!from && !stub_alive(sas))
			return -ESRCH;
		if (now_ns() - start >= BOOT_NS)
			return -ETIMEDOUT;
	}
}

long stub_wait_report(struct seccomp_as *sas)
{
	return wait_report(sas, NULL);
}

/* A forked K's "ready", on the socket made for it (stub_fork_child): its pid. */
long stub_wait_hello(struct seccomp_as *sas)
{
	pid_t pid = 0;
	long n = wait_report(sas, &pid);

	if (n < 0)
		return n;
	return n == 1 && pid > 0 ? pid : -EIO;
}

/*
 * One scan of the stub's threads for those that are neither K nor known:
 * the only one (> 0), none (-EAGAIN), or two or more (-EBUSY).
 */
static long scan_new_tid(struct seccomp_as *sas)
{
	pid_t keep[STUB_MAX_THREADS + 1], one = 0;

	keep[0] = sas->as.pid;
	memcpy(keep + 1, sas->tids, sizeof(sas->tids));
	long r = stub_threads_unknown(sas->taskdir, keep, STUB_MAX_THREADS + 1, &one);
	return r < 0 ? r : r == 2 ? -EBUSY : r == 1 ? one : -EAGAIN;
}

#define NEW_TID_TRIES 200	/* 1 ms apart */

/*
 * The one thread of the stub that is neither K nor a thread we know of:
 * the one K just made. A stub thread whose guest thread has exited (it was
 * forgotten then) can still be listed for a moment while the host reaps
 * it (a vfork child's _exit, then the next vfork at once): two unknown
 * threads are looked at again until one is gone. Guest threads cannot
 * clone (the filter), so every unknown thread is K's: the old one leaves.
 * And a scan right after K's report has been seen to list no new thread
 * though the one K made was there a moment later (a vfork loop under load,
 * 1 in 20 runs): none is looked at again too.
 */
static long new_tid(struct seccomp_as *sas)
{
	long tid = -EBUSY;

	for (int i = 0; i < NEW_TID_TRIES && (tid == -EBUSY || tid == -EAGAIN); i++) {
		if (i)
			nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
		tid = scan_new_tid(sas);
	}
	if (tid == -EBUSY || tid == -EAGAIN) {
		pr_err("seccomp stub %d: %s new thread for %d ms", sas->as.pid, tid == -EBUSY ? "more than one" : "no",
		       NEW_TID_TRIES);
		return -EAGAIN;
	}
	return tid;
}

/*
 * Have K make a stub thread on region index (stub/sites.S): the control
 * page says which, a signal says now, K's report says done. The tid is the
 * kernel's word (/proc), never the guest's.
 */
void stub_spawn_ask(struct seccomp_as *sas, int index)
{
	struct stub_ctl *ctl = sas->ctl;

	__atomic_store_n(&ctl->clone_region, (uint64_t)index, __ATOMIC_RELAXED);
	__atomic_store_n(&ctl->clone_seq, ctl->clone_seq + 1, __ATOMIC_RELEASE);
}

long stub_spawn(struct seccomp_as *sas, int index)
{
	stub_spawn_ask(sas, index);
	if (syscall(SYS_tgkill, sas->as.pid, sas->as.pid, STUB_SIG_CTL) < 0)
		return neg_errno();
	return stub_spawn_wait(sas);
}

long stub_spawn_wait(struct seccomp_as *sas)
{
	long n = stub_wait_report(sas);
	if (n == -ETIMEDOUT) {
		stub_break(sas, "its thread maker does not answer");
		return -EAGAIN;
	}
	if (n < 0)
		return n;
	if (n > 1)
		return n - 1 < 4096 ? -(n - 1) : -EIO;
	long tid = new_tid(sas);
	/*
	 * K made a thread we cannot name: left alive, it would serve region
	 * index beside the next one made there, and the two would answer
	 * each other's commands (seen once under load: a munmap returned an
	 * mmap's address). A dead sandbox is better than wrong results.
	 */
	if (tid < 0)
		stub_break(sas, "the thread it made cannot be told apart");
	return tid;
}

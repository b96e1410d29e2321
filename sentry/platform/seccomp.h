/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The seccomp platform's internals, shared by seccomp.c (the platform
 * operations), seccomp_stub.c (talking to the stub, with bounds) and
 * seccomp_filter.c (the stub's filters).
 */
#ifndef PVX_SECCOMP_H
#define PVX_SECCOMP_H

#include <limits.h>
#include <stdbool.h>
#include "pvx/stub_abi.h"
#include "platform.h"

struct seccomp_as {
	struct addr_space as;
	char *regions;			/* the sentry's mapping of the shared regions */
	struct stub_ctl *ctl;		/* the sentry's (writable) mapping of the control page */
	bool used[STUB_MAX_THREADS];	/* regions of live contexts */
	pid_t tids[STUB_MAX_THREADS];	/* host tid of each region's thread (from /proc) until it is gone */
	int sock;			/* our end of the socketpair: fds out, K's reports in */
	int ksock;			/* our end of K's own socketpair: a forked K's fds out */
	bool no_fork;			/* a host fork went wrong after its fds were sent: copy from now on */
	void *fork_fpu;			/* a forked stub: the parent thread's FPU state, for the first context */
	long fork_fpu_len;
	int taskdir;			/* /proc/PID/task of the stub */
	uint64_t cs, ss;		/* the stub's selectors, from the boot trap */
	int dead_sig;			/* the stub died of this signal (filter kill: SIGSYS); atomic */
	bool no_kcmp;			/* kcmp(2) unavailable: fds received are checked for range only */
};

/* A thread's run delay, read every CROWD_LOOK_NS (crowd_read). */
struct crowd {
	uint64_t look_ns, delay_ns;	/* the last read; delay 0: none yet, or it failed */
	int over;			/* reads in a row that found it waiting above CROWD_PCT */
};

/* A guest thread: a stub thread and its shared region. */
struct seccomp_ctx {
	struct platform_ctx ctx;
	int index;
	struct stub_shared *sh;		/* the sentry's mapping of region index */
	long cmd_nr;			/* the syscall of the command in flight, for the watchdog */
	uint32_t spin[2];		/* the sentry's own spin budgets in ns (WAIT_CMD, WAIT_RUN); 0: not set yet */
	int pin_cpu;			/* the CPU its stub thread is kept off + 1 (seccomp_place); 0: none */
	bool pin_want;			/* what the last hand-offs asked seccomp_place for */
	int pin_streak;			/* how many in a row, up to PIN_AFTER */
	struct place_pair pair;		/* not spinning: stub and sentry thread share a CPU (seccomp_place) */
	uint32_t took_avg;		/* the sentry's time between the stub's park and its next command, ns (EWMA); 0: none yet */
	uint64_t parked_at;		/* when the sentry last saw the stub park (after a spinning hand-off); 0: none */
	uint32_t probe[2];		/* hand-offs at the floor budget, for SPIN_PROBE_EVERY, by kind (as spin) */
	struct crowd crowd;		/* its stub thread's run delay (stub_crowded) */
	int cool;			/* > 0: crowded, no spinning for it for so many more looks */
	bool pf_valid;			/* the last trap's path prefetch is unused: pf_len bytes from pf_addr */
	bool pf_valid2;			/* ... and its second string: pf_len2 bytes from pf_addr2, after the first */
	int32_t pf_len, pf_len2;
	uint64_t pf_addr, pf_addr2;
	uint32_t in_len;		/* the last trap's input prefetch, unused: in_len bytes from in_addr (0: none) */
	uint64_t in_addr;
	uint32_t out_len;		/* a copy-out for the next WAIT_RUN (ctx_out, in the region): out_len bytes to out_addr; 0: none */
	uint64_t out_addr;
	int held_fd1;			/* the stub's fd of the last file mapped (as_put_fd) + 1, kept for the next; 0: none */
	bool batching;			/* as_batch: bn calls queued in bops */
	int bn;
	struct stub_batch_op bops[STUB_BATCH_MAX];
	/*
	 * The last trap came through a patched site (the usertrap): there is no
	 * signal frame until ut_escalate makes one, from ut_regs (the trap's).
	 */
	bool ut_trap;
	struct pvx_regs ut_regs;
};
#define CMD_NR_BATCH (LONG_MIN + 1)	/* cmd_nr of a STUB_CMD_BATCH: any of its calls is the command's */

/* What a wait for the stub is bounded by. */
enum stub_wait {
	WAIT_RUN,	/* guest code runs: as long as the stub thread lives (no sentry lock held) */
	WAIT_CMD,	/* a command, under the sentry lock: a deadline, unless the host call is still going */
	WAIT_BOOT,	/* a new stub thread's first trap: a deadline */
};

static inline struct seccomp_as *to_sas(struct addr_space *as)
{
	return (struct seccomp_as *)as;
}

static inline struct seccomp_ctx *to_sctx(struct platform_ctx *ctx)
{
	return (struct seccomp_ctx *)ctx;
}

static inline struct stub_shared *region(struct seccomp_as *sas, int i)
{
	return (struct stub_shared *)(sas->regions + (size_t)i * STUB_SHARED_SIZE);
}

/* The stub's spin: iterations of a pause-free loop, SPIN_ITERS ~ SPIN_MAX_NS here. */
#define SPIN_ITERS 100000
/* The sentry's adaptive spin (seccomp_stub.c): its bounds, and how often the loop reads the clock. */
#define SPIN_MAX_NS 25000
#define SPIN_MIN_NS 5000
#define SPIN_CLOCK_EVERY 32
#define SPIN_PROBE_EVERY 8

/*
 * Crowded CPUs (seccomp_stub.c stub_crowded, seccomp.c seccomp_place_look):
 * a thread's run delay (schedstat: runnable, not running) is read every
 * CROWD_LOOK_NS; above CROWD_PCT of the time at CROWD_LOOKS reads in a row,
 * it is crowded. A read costs three host calls.
 */
#define CROWD_LOOK_NS 5000000ULL
#define CROWD_PCT 20
#define CROWD_LOOKS 2

/* seccomp.c: the hand-off policy */
bool seccomp_spin_ok(void);
/* spin: this hand-off spins; many: it does not because more tasks can run than spinning has CPUs for. */
void seccomp_place(struct seccomp_as *sas, struct seccomp_ctx *sc, bool spin, bool many);
bool seccomp_kept_off(const struct seccomp_ctx *sc);
void seccomp_place_idle(struct seccomp_ctx *sc);
void seccomp_place_look(struct seccomp_as *sas, struct seccomp_ctx *sc, uint64_t now);
void crowd_read(struct crowd *c, pid_t pid, pid_t tid, uint64_t now);

/* seccomp_stub.c */
bool stub_alive(struct seccomp_as *sas);
bool stub_thread_alive(struct seccomp_as *sas, pid_t tid);
void stub_break(struct seccomp_as *sas, const char *why);
void stub_post(struct stub_shared *sh, uint32_t cmd, uint32_t spin);
long stub_wait_parked(struct seccomp_as *sas, struct seccomp_ctx *sc, enum stub_wait how) __must_check;
long stub_command(struct seccomp_as *sas, struct seccomp_ctx *sc, uint32_t cmd, enum stub_wait how) __must_check;
long stub_wait_report(struct seccomp_as *sas) __must_check;
long stub_wait_hello(struct seccomp_as *sas) __must_check;
long stub_spawn(struct seccomp_as *sas, int index) __must_check;
/* A new stub's first thread, asked for before the stub runs (K looks once after "ready", stub.c), then waited for. */
void stub_spawn_ask(struct seccomp_as *sas, int index);
long stub_spawn_wait(struct seccomp_as *sas) __must_check;

/* seccomp_filter.c: the filters and the rest of a fresh control page. */
long seccomp_fill_ctl(struct stub_ctl *ctl) __must_check;

#endif

// SPDX-License-Identifier: GPL-2.0
/* Choosing a platform: by name, or "auto" = the first usable in preference order. */
#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "pvx/log.h"
#include "pvx/stub_abi.h"
#include "platform.h"

/* Preference order for "auto": fastest first. */
static const struct platform_ops *const platforms[] = {
	&platform_vmexec,
	&platform_seccomp,
	&platform_ptrace,
};

/* `pvx platforms`: which platforms this kernel can run, in "auto" order. */
int platform_list(void)
{
	for (size_t i = 0; i < ARRAY_SIZE(platforms); i++) {
		long r = platforms[i]->probe();
		printf("%-8s %s%s\n", platforms[i]->name, r ? "unavailable: " : "available",
		       r ? strerror((int)-r) : "");
	}
	return 0;
}

const struct platform_ops *platform_select(const char *name)
{
	bool any = !strcmp(name, "auto");

	for (size_t i = 0; i < ARRAY_SIZE(platforms); i++) {
		const struct platform_ops *p = platforms[i];
		if (!any && strcmp(name, p->name))
			continue;
		long r = p->probe();
		if (!r)
			return p;
		if (!any) {
			pr_err("platform %s is not usable on this kernel: %s", name, strerror((int)-r));
			return NULL;
		}
	}
	if (any)
		pr_err("no usable platform");
	else
		pr_err("unknown platform '%s' (known: auto, vmexec, seccomp, ptrace)", name);
	return NULL;
}

void ctx_link(struct addr_space *as, struct platform_ctx *ctx, bool own)
{
	ctx->as = as;
	ctx->next = as->ctxs;
	as->ctxs = ctx;
	if (own) {
		ctx->owner = pthread_self();
		ctx->owned = true;
	}
}

void ctx_unlink(struct platform_ctx *ctx)
{
	for (struct platform_ctx **p = &ctx->as->ctxs; *p; p = &(*p)->next)
		if (*p == ctx) {
			*p = ctx->next;
			break;
		}
}

struct platform_ctx *ctx_self(struct addr_space *as)
{
	pthread_t me = pthread_self();

	for (struct platform_ctx *c = as ? as->ctxs : NULL; c; c = c->next)
		if (c->owned && pthread_equal(c->owner, me))
			return c;
	return NULL;
}

static int live_hint;	/* task threads still running: the kernel stores it, the platforms read it */
static int asleep;	/* of those, how many sleep in the sentry (platform_sleep_begin) */

void platform_sleep_begin(void)
{
	__atomic_add_fetch(&asleep, 1, __ATOMIC_RELAXED);
}

void platform_sleep_end(void)
{
	__atomic_sub_fetch(&asleep, 1, __ATOMIC_RELAXED);
}

/* See platform.h: seccomp spins (and pins) only while few tasks can run. */
int sentry_runnable_hint(void)
{
	int n = __atomic_load_n(&live_hint, __ATOMIC_RELAXED) - __atomic_load_n(&asleep, __ATOMIC_RELAXED);

	return n > 0 ? n : 0;
}

/* See platform.h. */
int sentry_live_hint(void)
{
	return __atomic_load_n(&live_hint, __ATOMIC_RELAXED);
}

/* The kernel's count of running task threads changed (sentry/kernel/kernel.c). */
void platform_set_live_hint(int threads)
{
	__atomic_store_n(&live_hint, threads, __ATOMIC_RELAXED);
}

static cpu_set_t place_all;	/* the affinity pvx started with */
static int place_n;		/* CPUs in it (>= 2); 0: not known yet, -1: one, or unknown */

/* See platform.h. */
int place_ncpus(void)
{
	int n = __atomic_load_n(&place_n, __ATOMIC_ACQUIRE);

	if (n)
		return n;
	cpu_set_t all;
	n = sched_getaffinity(0, sizeof(all), &all) == 0 && CPU_COUNT(&all) >= 2 ? CPU_COUNT(&all) : -1;
	if (n > 0)
		place_all = all;	/* the same value from every thread that races here */
	__atomic_store_n(&place_n, n, __ATOMIC_RELEASE);
	return n;
}

const cpu_set_t *place_all_cpus(void)
{
	return &place_all;
}

void place_unpin(pid_t tid)
{
	if (place_ncpus() > 0)
		sched_setaffinity(tid, sizeof(place_all), &place_all);
}

long place_pin(pid_t tid, int cpu)
{
	cpu_set_t one;

	if (place_ncpus() <= 0 || cpu < 0 || cpu >= CPU_SETSIZE || !CPU_ISSET(cpu, &place_all))
		return -EINVAL;
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	return sched_setaffinity(tid, sizeof(one), &one) < 0 ? neg_errno() : 0;
}

/*
 * Why a pair shares a CPU: the two never run at once, so every turn on
 * two CPUs is a wake-up of the other CPU (an IPI; on a VM, an idle vCPU's
 * trip through the hypervisor: 60-78 us on the 2-vCPU PVM machine of issue
 * 16) where one CPU needs a context switch. A child's pair starts where
 * its parent's is (masks are inherited: a shell and the command it waits
 * for take turns on one CPU). The pair leaves its CPU when it has to wait
 * for it: every PAIR_TURNS turns or PAIR_NS, the caller reads both
 * threads' run delay (schedstat: time runnable but not running); above
 * PAIR_BUSY_PCT of the time since the last look (a busy neighbour, another
 * pair, a pipe's other end that wants to run too) both get every CPU back
 * for PAIR_COOL looks and are then pinned where the caller runs, unless
 * that is the CPU they left (then one more wait). Costs: three host calls
 * per thread a look, two per (un)pinning.
 */
#define PAIR_TURNS 64
#define PAIR_NS 5000000ULL
#define PAIR_BUSY_PCT 25
#define PAIR_COOL 8

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* See platform.h. */
long thread_schedstat(pid_t pid, pid_t tid, uint64_t *run, uint64_t *delay)
{
	char path[64], buf[96];
	unsigned long long r, d;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/schedstat", pid, tid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
	if (fd >= 0)
		close(fd);
	if (n <= 0 || (buf[n] = 0, sscanf(buf, "%llu %llu", &r, &d)) != 2)
		return -EIO;
	*run = r;
	*delay = d;
	return 0;
}

bool as_batch_nr(long nr)
{
	return nr == SYS_mmap || nr == SYS_munmap || nr == SYS_mprotect;
}

bool as_batch_queueable(long nr, const long args[6], long *ret)
{
	bool fixed = nr == SYS_mmap && (args[3] & MAP_FIXED) && !(args[3] & MAP_FIXED_NOREPLACE);

	if (!as_batch_nr(nr) || (nr == SYS_mmap && !fixed))
		return false;
	*ret = fixed ? args[0] : 0;
	return true;
}

/*
 * host_crowded: the host's busy time (/proc/stat's first line: user,
 * nice, system, irq, softirq; not steal, which is the hypervisor's) less
 * pvx's own CPU time (the sentry's threads, the stubs live and reaped) is
 * work of others. At least HOST_CROWDED_PCT of a CPU of it over a look's
 * window makes the host crowded; less than HOST_CLEAR_PCT makes it clear
 * again. One thread looks at a time, at most every HOST_LOOK_NS; the
 * others take the last verdict. /proc/stat counts in clock ticks, which
 * over a window of 100 ms or more on a few CPUs errs by a few percent.
 * The first verdict comes sooner, HOST_FIRST_NS after the first look (the
 * platform's start): a fork chain of 0.4 s spent half of it in the layout
 * a busy neighbour hurts. Over 50 ms, /proc/stat's 10 ms ticks err by up
 * to 20 ms on two CPUs (40% of one): a neighbour's 100% still reads above
 * half a CPU, an idle host's few percent still below it.
 */
#define HOST_LOOK_NS 100000000ULL
#define HOST_FIRST_NS 50000000ULL
#define HOST_CROWDED_PCT 50
#define HOST_CLEAR_PCT 25

static uint64_t host_busy_ns(void)
{
	unsigned long long v[8] = { 0 };
	char buf[256];
	int fd = open("/proc/stat", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);

	if (fd >= 0)
		close(fd);
	if (n <= 0 || (buf[n] = 0, sscanf(buf, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2],
					  &v[3], &v[4], &v[5], &v[6], &v[7])) != 8)
		return 0;
	return (v[0] + v[1] + v[2] + v[5] + v[6]) * (1000000000ULL / (uint64_t)sysconf(_SC_CLK_TCK));
}

static uint64_t pvx_cpu_ns(void)
{
	struct timespec ts;
	uint64_t ns = stubs_cpu_ns();

	if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) == 0)
		ns += (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
	return ns;
}

static uint64_t host_looks[2];	/* looks that judged, by verdict (clear, crowded) */

void host_crowded_stats(uint64_t *looks, uint64_t *crowded)
{
	*crowded = __atomic_load_n(&host_looks[1], __ATOMIC_RELAXED);
	*looks = __atomic_load_n(&host_looks[0], __ATOMIC_RELAXED) + *crowded;
}

bool host_crowded(void)
{
	static uint64_t look_ns, busy0, pvx0;	/* the last look's, under looking */
	static int looking, crowded;
	static bool judged;	/* a verdict was made: later windows are HOST_LOOK_NS */
	uint64_t now = mono_ns(), window = __atomic_load_n(&judged, __ATOMIC_RELAXED) ? HOST_LOOK_NS : HOST_FIRST_NS;

	if (now - __atomic_load_n(&look_ns, __ATOMIC_RELAXED) < window ||
	    __atomic_exchange_n(&looking, 1, __ATOMIC_ACQUIRE))
		return __atomic_load_n(&crowded, __ATOMIC_RELAXED);
	uint64_t last = __atomic_load_n(&look_ns, __ATOMIC_RELAXED);
	if (now - last >= window) {
		uint64_t busy = host_busy_ns(), pvx = pvx_cpu_ns();
		if (last && busy && busy >= busy0 && pvx >= pvx0) {
			int64_t other = (int64_t)(busy - busy0) - (int64_t)(pvx - pvx0), win = (int64_t)(now - last);
			if (other * 100 >= win * HOST_CROWDED_PCT)
				__atomic_store_n(&crowded, 1, __ATOMIC_RELAXED);
			else if (other * 100 < win * HOST_CLEAR_PCT)
				__atomic_store_n(&crowded, 0, __ATOMIC_RELAXED);
			__atomic_add_fetch(&host_looks[__atomic_load_n(&crowded, __ATOMIC_RELAXED)], 1, __ATOMIC_RELAXED);
			__atomic_store_n(&judged, true, __ATOMIC_RELAXED);
		}
		busy0 = busy;
		pvx0 = pvx;
		__atomic_store_n(&look_ns, now, __ATOMIC_RELAXED);
	}
	__atomic_store_n(&looking, 0, __ATOMIC_RELEASE);
	return __atomic_load_n(&crowded, __ATOMIC_RELAXED);
}

/* A thread's run delay in ns; 0 if unknown. */
static uint64_t run_delay(pid_t pid, pid_t tid)
{
	uint64_t run, delay;

	return thread_schedstat(pid, tid, &run, &delay) ? 0 : delay;
}

void place_pair_leave(struct place_pair *pp, pid_t tid)
{
	if (!pp->pin_cpu)
		return;
	place_unpin(0);
	place_unpin(tid);
	pp->pin_cpu = 0;
}

void place_pair_inherit(struct place_pair *child, const struct place_pair *parent)
{
	*child = (struct place_pair){
		.pin_cpu = parent->pin_cpu, .left_cpu = parent->left_cpu, .cool = parent->cool, .born = true
	};
}

void place_pair_run(struct place_pair *pp, pid_t pid, pid_t tid)
{
	if (place_ncpus() <= 0)
		return;
	uint64_t now = mono_ns();
	/*
	 * An inherited pair has its parent's placement already: its first look
	 * (PAIR_TURNS or PAIR_NS on) only takes the run delays to judge the
	 * next one by. A short-lived child (a shell's command) makes no look,
	 * so no schedstat read and no affinity call at all.
	 */
	if (pp->born) {
		pp->born = false;
		pp->no_base = true;
		pp->look_ns = now;
		return;
	}
	if (pp->look_ns && ++pp->turns < PAIR_TURNS && now - pp->look_ns < PAIR_NS)
		return;
	uint64_t delay = run_delay(sentry_pid(), gettid()) + run_delay(pid, tid);
	bool busy = pp->look_ns && !pp->no_base && (delay - pp->delay_ns) * 100 > (now - pp->look_ns) * PAIR_BUSY_PCT;
	pp->look_ns = now;
	pp->delay_ns = delay;
	pp->turns = 0;
	if (pp->no_base) {
		pp->no_base = false;
		return;
	}
	if (pp->pin_cpu) {
		if (busy) {
			pp->left_cpu = pp->pin_cpu;
			pp->cool = PAIR_COOL;
			place_pair_leave(pp, tid);
		}
		return;
	}
	if (pp->cool) {
		pp->cool--;
		return;
	}
	int me = sched_getcpu();
	if (me < 0)
		return;
	if (me + 1 == pp->left_cpu) {
		pp->left_cpu = 0;
		pp->cool = PAIR_COOL;
		return;
	}
	if (place_pin(0, me) < 0)
		return;
	if (place_pin(tid, me) == 0)
		pp->pin_cpu = me + 1;
	else
		place_unpin(0);
}

/*
 * ptrace and seccomp: signal the context's own stub thread (a signal for the
 * process could land in any of them). vmexec stubs block every signal: the
 * caller kicks the sentry thread instead. Queued with a siginfo of our own,
 * not tgkill(2)'s: that one names the sender, and the seccomp stub's signal
 * frame is memory the guest reads (no host pid for the guest).
 */
void ctx_kick(struct platform_ctx *ctx, int sig)
{
	siginfo_t si;

	if (!ctx || ctx->tid <= 0)
		return;
	memset(&si, 0, sizeof(si));
	si.si_signo = sig;
	si.si_code = SI_QUEUE;
	syscall(SYS_rt_tgsigqueueinfo, ctx->as->pid, ctx->tid, sig, &si);
}

/* The stub pvx runs has the cmpxchg gadget's bytes where stub_abi.h says (checked once). */
static bool cmpxchg_gadget_ok(void)
{
	static int ok;	/* 0: not checked, 1: yes, -1: no */
	char got[sizeof(STUB_CMPXCHG_GADGET_BYTES) - 1];

	if (!__atomic_load_n(&ok, __ATOMIC_RELAXED)) {
		bool same = !stub_image_peek(STUB_CMPXCHG_GADGET, got, sizeof(got)) &&
			    !memcmp(got, STUB_CMPXCHG_GADGET_BYTES, sizeof(got));
		if (!same)
			pr_err("stub image has no cmpxchg gadget at %#lx", (unsigned long)STUB_CMPXCHG_GADGET);
		__atomic_store_n(&ok, same ? 1 : -1, __ATOMIC_RELAXED);
	}
	return __atomic_load_n(&ok, __ATOMIC_RELAXED) > 0;
}

#define CMPXCHG_TRIES 16	/* runs cut short by a signal before the gadget ran; then EFAULT */

/*
 * See platform.h. The gadget runs as guest code of the calling thread's
 * own context (which is stopped in the sentry for the syscall that asked),
 * so it touches the guest's memory with the guest's rights and the fault
 * of a bad address is the guest's fault, turned into -EFAULT. Where it
 * stopped says what happened: after the cmpxchg (at or past the int3) it
 * ran and eax is the old value; still at the cmpxchg, it faulted (SIGSEGV,
 * SIGBUS) or a signal came first and it runs again. Anything else is a
 * report the guest forged (seccomp: its shared region) or a stub that is
 * not ours: -EFAULT, the guest only hurts its own futex.
 */
long gadget_cmpxchg32(struct platform_ctx *ctx,
		      long (*run1)(struct platform_ctx *, struct pvx_regs *, struct pvx_trap *),
		      const struct pvx_regs *tmpl, uint64_t uaddr, uint32_t old, uint32_t new, uint32_t *prev)
{
	struct pvx_trap trap;

	if (!cmpxchg_gadget_ok())
		return -ENOSYS;
	for (int i = 0; i < CMPXCHG_TRIES; i++) {
		struct pvx_regs r = *tmpl;
		r.rip = STUB_CMPXCHG_GADGET;
		r.rdi = uaddr;
		r.rax = old;
		r.rcx = new;
		r.orig_rax = (uint64_t)-1;
		r.eflags &= ~(0x100UL | 0x40000UL);	/* no TF single-step, no AC alignment check */
		long e = run1(ctx, &r, &trap);
		if (e < 0)
			return e;
		if (r.rip == STUB_CMPXCHG_GADGET_INT3 || (r.rip == STUB_CMPXCHG_GADGET_INT3 + 1 && trap.signo == SIGTRAP)) {
			*prev = (uint32_t)r.rax;
			return 0;
		}
		if (r.rip != STUB_CMPXCHG_GADGET)
			break;
		if (trap.signo == SIGSEGV || trap.signo == SIGBUS)
			return -EFAULT;
	}
	pr_debug("cmpxchg gadget of stub %d did not complete", ctx->as->pid);
	return -EFAULT;
}

/* See platform.h. */
long stub_threads_unknown(int taskdir, const pid_t *keep, int n, pid_t *one)
{
	char buf[4096];
	long found = 0, len;

	if (lseek(taskdir, 0, SEEK_SET) < 0)
		return neg_errno();
	while ((len = syscall(SYS_getdents64, taskdir, buf, sizeof(buf))) > 0) {
		for (long off = 0; off < len;) {
			struct dirent64 *d = (struct dirent64 *)(buf + off);
			char *end;
			long tid = strtol(d->d_name, &end, 10);
			bool known = *end || tid <= 0;	/* "." and ".." */
			for (int i = 0; i < n && !known; i++)
				known = keep[i] == tid;
			if (!known && !found++)
				*one = (pid_t)tid;
			if (found == 2)
				return 2;
			off += d->d_reclen;
		}
	}
	return len < 0 ? neg_errno() : found;
}

/*
 * See platform.h. A stub thread told to exit (ctx_release) may take a
 * moment to be gone; one that runs guest code it was never stopped in
 * stays, and the caller must not reuse the stub with it there.
 */
long stub_threads_only(pid_t pid, const pid_t *keep, int n)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	cleanup_close int dir = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0)
		return neg_errno();
	return stub_threads_only_at(dir, keep, n);
}

/* See platform.h. */
long stub_threads_only_at(int taskdir, const pid_t *keep, int n)
{
	pid_t one;
	long r = 1;

	for (int i = 0; i < 100 && r > 0; i++) {
		if (i)
			nanosleep(&(struct timespec){ .tv_nsec = 1000000 }, NULL);
		r = stub_threads_unknown(taskdir, keep, n, &one);
	}
	return r > 0 ? -EBUSY : r;
}

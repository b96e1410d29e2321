/*
 * The long tail of issue 15, compared with Linux: scheduling and affinity,
 * ioprio, the mlock family, remap_file_pages, the machine's settings (EPERM
 * after their argument checks), membarrier and the sync calls, old
 * interfaces (sysfs, ustat, getdents), RLIMIT_FSIZE, NPROC and CPU.
 * Capabilities are dropped first, so a native run as root answers as an
 * unprivileged process does, as the guest is one (capget: none).
 * Usage: misc_sys MODE (affinity, sched, ioprio, mlock, ident, sync, getdents, limits, nproc, remap)
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/uio.h>
#include <sys/stat.h>
#include <sys/timex.h>
#include <time.h>

#include "guest.h"

#define BAD ((void *)8)	/* an unmapped address: EFAULT */

static long sc(long nr, long a, long b, long c, long d)
{
	long r = syscall(nr, a, b, c, d);
	return r < 0 ? -errno : r;
}

static const char *E(long r)
{
	static char buf[8][32];
	static int i;
	char *b = buf[i++ % 8];
	if (r < 0) {
		if (r == -E2BIG)
			return "E2BIG";
		if (r == -ENOTDIR)
			return "ENOTDIR";
		if (r == -EFBIG)
			return "EFBIG";
		if (r == -ESRCH)
			return "ESRCH";
		if (r == -ENAMETOOLONG)
			return "ENAMETOOLONG";
		if (r == -ELOOP)
			return "ELOOP";
		if (r == -ENOTTY)
			return "ENOTTY";
		if (r == -EOVERFLOW)
			return "EOVERFLOW";
		return errname((int)-r);
	}
	snprintf(b, 32, "%ld", r);
	return b;
}

static void drop_caps(void)
{
	struct { uint32_t version; int pid; } h = { 0x20080522, 0 };	/* _LINUX_CAPABILITY_VERSION_3 */
	struct { uint32_t effective, permitted, inheritable; } d[2] = { { 0 } };
	if (syscall(SYS_capset, &h, d) < 0)
		say("capset: %s\n", errname(errno));
}

static int count(const unsigned char *m, size_t n)
{
	int c = 0;
	for (size_t i = 0; i < n; i++)
		c += __builtin_popcount(m[i]);
	return c;
}

/* getcpu(2) says cpu on each of 50 calls, with a yield between them */
static int on_cpu(int cpu)
{
	for (int i = 0; i < 50; i++) {
		unsigned c = ~0u;
		sc(SYS_getcpu, (long)&c, 0, 0, 0);
		if ((int)c != cpu)
			return 0;
		sched_yield();
	}
	return 1;
}

static int affinity(void)
{
	unsigned char m[128], one[128] = { 0 };
	long n = sc(SYS_sched_getaffinity, 0, sizeof(m), (long)m, 0);
	int first = -1, cpus = n > 0 ? count(m, (size_t)n) : -1;
	unsigned char m0[128];
	memcpy(m0, m, sizeof(m0));

	say("get: %s cpus=%d\n", n > 0 ? "ok" : E(n), cpus);
	for (int i = 0; i < (int)(n * 8) && first < 0; i++)
		if (m[i / 8] & (1 << (i % 8)))
			first = i;
	one[first / 8] = (unsigned char)(1 << (first % 8));
	say("set one: %s\n", E(sc(SYS_sched_setaffinity, 0, 8, (long)one, 0)));
	memset(m, 0, sizeof(m));
	n = sc(SYS_sched_getaffinity, 0, sizeof(m), (long)m, 0);
	say("get: cpus=%d same=%s\n", count(m, sizeof(m)), yesno(!memcmp(m, one, sizeof(m))));
	say("getcpu pinned to the first: %s\n", yesno(on_cpu(first)));
	int last = first;
	for (int i = 0; i < (int)(n * 8); i++)
		if (m0[i / 8] & (1 << (i % 8)))
			last = i;
	unsigned char lastm[128] = { 0 };
	lastm[last / 8] = (unsigned char)(1 << (last % 8));
	sc(SYS_sched_setaffinity, 0, sizeof(lastm), (long)lastm, 0);
	say("getcpu pinned to the last: %s\n", yesno(on_cpu(last)));
	sc(SYS_sched_setaffinity, 0, 8, (long)one, 0);
	pid_t c = fork();
	if (c == 0) {
		memset(m, 0, sizeof(m));
		sc(SYS_sched_getaffinity, 0, sizeof(m), (long)m, 0);
		say("child: cpus=%d\n", count(m, sizeof(m)));
		_exit(0);
	}
	wait_child(c);
	unsigned char zero[128] = { 0 };
	say("set empty: %s\n", E(sc(SYS_sched_setaffinity, 0, sizeof(zero), (long)zero, 0)));
	say("set len 0: %s\n", E(sc(SYS_sched_setaffinity, 0, 0, (long)one, 0)));
	zero[127] = 0x80;	/* CPU 1023: not one this machine has */
	say("set cpu 1023: %s\n", E(sc(SYS_sched_setaffinity, 0, sizeof(zero), (long)zero, 0)));
	say("set bad ptr: %s\n", E(sc(SYS_sched_setaffinity, 0, 8, (long)BAD, 0)));
	say("set esrch: %s\n", E(sc(SYS_sched_setaffinity, 99999, 8, (long)one, 0)));
	say("set -1: %s\n", E(sc(SYS_sched_setaffinity, -1, 8, (long)one, 0)));
	size_t big = 1 << 20;
	unsigned char *huge = malloc(big);
	memset(huge, 0xff, big);
	say("set 1MiB: %s\n", E(sc(SYS_sched_setaffinity, 0, (long)big, (long)huge, 0)));
	memset(m, 0, sizeof(m));
	sc(SYS_sched_getaffinity, 0, sizeof(m), (long)m, 0);
	say("get: cpus=%d all=%s\n", count(m, sizeof(m)), yesno(count(m, sizeof(m)) == cpus));
	/* a huge len whose tail is not mapped: only the kernel's mask size is read */
	unsigned char *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	memset(page, 0xff, 4096);
	say("set huge len, short buffer: %s\n", E(sc(SYS_sched_setaffinity, 0, 1L << 40, (long)(page + 4096 - 128), 0)));
	say("get len 4: %s\n", E(sc(SYS_sched_getaffinity, 0, 4, (long)m, 0)));
	say("get len 12: %s\n", E(sc(SYS_sched_getaffinity, 0, 12, (long)m, 0)));
	say("get bad ptr: %s\n", E(sc(SYS_sched_getaffinity, 0, 128, (long)BAD, 0)));
	say("get esrch: %s\n", E(sc(SYS_sched_getaffinity, 99999, 128, (long)m, 0)));
	say("get len 4 esrch: %s\n", E(sc(SYS_sched_getaffinity, 99999, 4, (long)m, 0)));
	return 0;
}

struct attr {
	uint32_t size, policy;
	uint64_t flags;
	int32_t nice;
	uint32_t priority;
	uint64_t runtime, deadline, period;
	uint32_t util_min, util_max;
	unsigned char tail[8];
};

static long setattr(uint32_t size, uint32_t policy, uint64_t flags, int nice, uint32_t prio)
{
	struct attr a = { .size = size, .policy = policy, .flags = flags, .nice = nice, .priority = prio };
	return sc(SYS_sched_setattr, 0, (long)&a, 0, 0);
}

static void getattr(const char *what, unsigned usize)
{
	struct attr a;
	memset(&a, 0x5a, sizeof(a));
	long r = sc(SYS_sched_getattr, 0, (long)&a, usize, 0);
	if (r < 0)
		say("%s: %s\n", what, E(r));
	else
		say("%s: size=%u policy=%u flags=%llx nice=%d prio=%u util=%u,%u tail=%x\n", what, a.size, a.policy,
		    (unsigned long long)a.flags, a.nice, a.priority, usize >= 56 ? a.util_min : 0,
		    usize >= 56 ? a.util_max : 0, a.tail[0]);
}

static int sched(void)
{
	struct timespec ts = { -1, -1 };
	long r = sc(SYS_sched_rr_get_interval, 0, (long)&ts, 0, 0);
	say("rr: %s sane=%s\n", E(r), yesno(ts.tv_sec == 0 && ts.tv_nsec >= 0 && ts.tv_nsec < 1000000000));
	say("rr bad ptr: %s\n", E(sc(SYS_sched_rr_get_interval, 0, (long)BAD, 0, 0)));
	say("rr -1: %s\n", E(sc(SYS_sched_rr_get_interval, -1, (long)&ts, 0, 0)));
	say("rr esrch: %s\n", E(sc(SYS_sched_rr_get_interval, 99999, (long)&ts, 0, 0)));
	getattr("initial", 48);
	say("other nice 5: %s\n", E(setattr(48, SCHED_OTHER, 0, 5, 0)));
	getattr("get", 48);
	say("getpriority: %d\n", 20 - (int)syscall(SYS_getpriority, 0, 0));
	say("batch: %s\n", E(setattr(0, SCHED_BATCH, 0, 5, 0)));
	getattr("get 56", 56);
	static struct attr big[64];	/* 4096 bytes: Linux 6.13 on zeroes past its struct */
	r = sc(SYS_sched_getattr, 0, (long)big, 4096, 0);
	say("get 4096: %s size=%u\n", E(r), big[0].size);
	say("getscheduler: %s\n", E(sc(SYS_sched_getscheduler, 0, 0, 0, 0)));
	say("fifo 10: %s\n", E(setattr(48, SCHED_FIFO, 0, 0, 10)));
	say("fifo 0: %s\n", E(setattr(48, SCHED_FIFO, 0, 0, 0)));
	say("rr 100: %s\n", E(setattr(48, SCHED_RR, 0, 0, 100)));
	say("other prio 1: %s\n", E(setattr(48, SCHED_OTHER, 0, 0, 1)));
	struct attr dl = { .size = 48, .policy = 6, .runtime = 10000000, .deadline = 30000000, .period = 30000000 };
	say("deadline: %s\n", E(sc(SYS_sched_setattr, 0, (long)&dl, 0, 0)));
	dl.runtime = 0;
	say("deadline runtime 0: %s\n", E(sc(SYS_sched_setattr, 0, (long)&dl, 0, 0)));
	say("policy 99: %s\n", E(setattr(48, 99, 0, 0, 0)));
	say("policy -1: %s\n", E(setattr(48, (uint32_t)-1, 0, 0, 0)));
	say("bad flag: %s\n", E(setattr(48, SCHED_OTHER, 0x80, 0, 0)));
	say("util clamp at 48: %s\n", E(setattr(48, SCHED_OTHER, 0x20, 0, 0)));
	struct attr a = { .size = 10 };
	say("size 10: %s", E(sc(SYS_sched_setattr, 0, (long)&a, 0, 0)));
	say(" size now %u\n", a.size);
	a.size = 4097;
	say("size 4097: %s", E(sc(SYS_sched_setattr, 0, (long)&a, 0, 0)));
	say(" size now %u\n", a.size);
	struct attr t = { .size = 64, .policy = SCHED_BATCH, .nice = 6 };
	t.tail[3] = 1;
	say("size 64 tail: %s", E(sc(SYS_sched_setattr, 0, (long)&t, 0, 0)));
	say(" size now %u\n", t.size);
	t.tail[3] = 0;
	say("size 64 zero tail: %s\n", E(sc(SYS_sched_setattr, 0, (long)&t, 0, 0)));
	say("flags arg: %s\n", E(sc(SYS_sched_setattr, 0, (long)&t, 1, 0)));
	say("null: %s\n", E(sc(SYS_sched_setattr, 0, 0, 0, 0)));
	say("bad ptr: %s\n", E(sc(SYS_sched_setattr, 0, (long)BAD, 0, 0)));
	say("pid -1: %s\n", E(sc(SYS_sched_setattr, -1, (long)&t, 0, 0)));
	say("esrch: %s\n", E(sc(SYS_sched_setattr, 99999, (long)&t, 0, 0)));
	say("nice 99 clamps: %s\n", E(setattr(48, SCHED_BATCH, 0, 99, 0)));
	getattr("get", 48);
	say("keep params: %s\n", E(setattr(48, SCHED_OTHER, 0x10, -20, 0)));
	getattr("get", 48);
	say("keep policy: %s\n", E(setattr(48, SCHED_IDLE, 0x08, 19, 0)));
	getattr("get", 48);
	say("reset on fork: %s\n", E(setattr(48, SCHED_OTHER, 1, 19, 0)));
	say("getscheduler: %lx\n", sc(SYS_sched_getscheduler, 0, 0, 0, 0));
	getattr("get", 48);
	say("getattr 47: %s\n", E(sc(SYS_sched_getattr, 0, (long)&a, 47, 0)));
	say("getattr 4097: %s\n", E(sc(SYS_sched_getattr, 0, (long)&a, 4097, 0)));
	say("getattr flags: %s\n", E(sc(SYS_sched_getattr, 0, (long)&a, 48, 1)));
	say("getattr bad ptr: %s\n", E(sc(SYS_sched_getattr, 0, (long)BAD, 48, 0)));
	say("getattr esrch: %s\n", E(sc(SYS_sched_getattr, 99999, (long)&a, 48, 0)));
	say("idle: %s\n", E(setattr(48, SCHED_IDLE, 1, 19, 0)));
	getattr("get", 48);
	return 0;
}

#define IOPRIO(c, l) (((c) << 13) | (l))

static int ioprio(void)
{
	say("set idle: %s\n", E(sc(SYS_ioprio_set, 1, 0, IOPRIO(3, 0), 0)));
	say("get: %s\n", E(sc(SYS_ioprio_get, 1, 0, 0, 0)));
	say("set be 7: %s\n", E(sc(SYS_ioprio_set, 1, getpid(), IOPRIO(2, 7), 0)));
	say("get: %s\n", E(sc(SYS_ioprio_get, 1, getpid(), 0, 0)));
	pid_t c = fork();
	if (c == 0) {
		say("child: %s\n", E(sc(SYS_ioprio_get, 1, 0, 0, 0)));
		_exit(0);
	}
	wait_child(c);
	say("be 8: %s\n", E(sc(SYS_ioprio_set, 1, 0, IOPRIO(2, 8), 0)));
	say("rt 0: %s\n", E(sc(SYS_ioprio_set, 1, 0, IOPRIO(1, 0), 0)));
	say("class 7: %s\n", E(sc(SYS_ioprio_set, 1, 0, IOPRIO(7, 0), 0)));
	say("class 4: %s\n", E(sc(SYS_ioprio_set, 1, 0, IOPRIO(4, 0), 0)));
	say("none 1: %s\n", E(sc(SYS_ioprio_set, 1, 0, IOPRIO(0, 1), 0)));
	say("which 0: %s\n", E(sc(SYS_ioprio_set, 0, 0, IOPRIO(2, 4), 0)));
	say("which 4 get: %s\n", E(sc(SYS_ioprio_get, 4, 0, 0, 0)));
	say("esrch: %s %s\n", E(sc(SYS_ioprio_set, 1, 99999, IOPRIO(2, 4), 0)), E(sc(SYS_ioprio_get, 1, 99999, 0, 0)));
	/* a process group's or the user's: other processes of the host's share them natively, only errors compare */
	say("user: %s %s\n", E(sc(SYS_ioprio_get, 3, 54321, 0, 0)), E(sc(SYS_ioprio_set, 3, 54321, IOPRIO(2, 3), 0)));
	say("pgrp: %s %s\n", E(sc(SYS_ioprio_get, 2, 99999, 0, 0)), E(sc(SYS_ioprio_set, 2, 99999, IOPRIO(2, 3), 0)));
	say("set none: %s\n", E(sc(SYS_ioprio_set, 1, 0, IOPRIO(0, 0), 0)));
	say("get: %s\n", E(sc(SYS_ioprio_get, 1, 0, 0, 0)));
	c = fork();
	if (c == 0) {
		say("child: %s\n", E(sc(SYS_ioprio_get, 1, 0, 0, 0)));
		_exit(0);
	}
	wait_child(c);
	setpriority(PRIO_PROCESS, 0, 7);
	say("get after nice 7: %s\n", E(sc(SYS_ioprio_get, 1, 0, 0, 0)));
	return 0;
}


/* VmLck of /proc/self/status in kB, -1 when absent. */
static long vmlck(void)
{
	char buf[4096];
	FILE *f = fopen("/proc/self/status", "r");
	long v = -1;
	while (f && fgets(buf, sizeof(buf), f))
		if (!strncmp(buf, "VmLck:", 6))
			v = atol(buf + 6);
	if (f)
		fclose(f);
	return v;
}

#define LCK(what, call) do { long r_ = (call); say("%s: %s lck+%ld\n", what, E(r_), vmlck() - base); } while (0)

static int mlocks(void)
{
	long pg = 4096;
	char *m = mmap(NULL, 8 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	long base = vmlck();
	LCK("mlock 3", sc(SYS_mlock, (long)m, 3 * pg, 0, 0));
	unsigned char vec[4] = { 0 };
	mincore(m, 4 * pg, vec);	/* mlock faulted them in, untouched as they were; the fourth is not locked */
	say("resident: %d%d%d%d\n", vec[0] & 1, vec[1] & 1, vec[2] & 1, vec[3] & 1);
	LCK("munlock mid", sc(SYS_munlock, (long)m + pg, pg, 0, 0));
	LCK("mlock unaligned len 1", sc(SYS_mlock, (long)m + pg + 10, 1, 0, 0));
	say("mlock2 bad flag: %s\n", E(sc(SYS_mlock2, (long)m, pg, 2, 0)));
	LCK("mlock2 onfault", sc(SYS_mlock2, (long)m + 4 * pg, pg, 1, 0));
	munmap(m + 6 * pg, pg);
	LCK("mlock across hole", sc(SYS_mlock, (long)m + 5 * pg, 3 * pg, 0, 0));
	say("mlock unmapped: %s\n", E(sc(SYS_mlock, (long)m + 6 * pg, pg, 0, 0)));
	say("mlock kernel addr: %s\n", E(sc(SYS_mlock, (long)0xffff800000000000UL, pg, 0, 0)));
	say("mlock wrap: %s\n", E(sc(SYS_mlock, (long)m, -pg, 0, 0)));
	say("munlock unmapped: %s\n", E(sc(SYS_munlock, (long)m + 6 * pg, pg, 0, 0)));
	say("munlock len 0: %s\n", E(sc(SYS_munlock, (long)m, 0, 0, 0)));
	pid_t c = fork();
	if (c == 0) {
		say("child lck: %ld\n", vmlck());
		_exit(0);
	}
	wait_child(c);
	LCK("munlock all 8", sc(SYS_munlock, (long)m, 6 * pg, 0, 0));
	struct rlimit old, rl;
	getrlimit(RLIMIT_MEMLOCK, &old);
	rl = (struct rlimit){ 2 * pg, old.rlim_max };
	setrlimit(RLIMIT_MEMLOCK, &rl);
	say("mlock 2 at limit 2: %s\n", E(sc(SYS_mlock, (long)m, 2 * pg, 0, 0)));
	say("mlock same 2 again: %s\n", E(sc(SYS_mlock, (long)m, 2 * pg, 0, 0)));
	LCK("mlock 3 at limit 2", sc(SYS_mlock, (long)m, 3 * pg, 0, 0));
	say("mlockall current at limit 2: %s\n", E(sc(SYS_mlockall, MCL_CURRENT, 0, 0, 0)));
	rl.rlim_cur = 0;
	setrlimit(RLIMIT_MEMLOCK, &rl);
	say("mlock at limit 0: %s\n", E(sc(SYS_mlock, (long)m, pg, 0, 0)));
	say("mlockall at limit 0: %s\n", E(sc(SYS_mlockall, MCL_CURRENT, 0, 0, 0)));
	LCK("munlock at limit 0", sc(SYS_munlock, (long)m, 8 * pg, 0, 0));
	setrlimit(RLIMIT_MEMLOCK, &old);
	say("mlockall 0: %s\n", E(sc(SYS_mlockall, 0, 0, 0, 0)));
	say("mlockall onfault: %s\n", E(sc(SYS_mlockall, 4, 0, 0, 0)));
	say("mlockall 8: %s\n", E(sc(SYS_mlockall, 8, 0, 0, 0)));
	say("mlockall future: %s\n", E(sc(SYS_mlockall, MCL_FUTURE, 0, 0, 0)));
	base = vmlck();	/* musl's stdio may have mapped a locked page since */
	char *n = mmap(NULL, 2 * pg, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	say("new mapping: lck+%ld\n", vmlck() - base);
	base = 0;
	LCK("munlockall: lck", sc(SYS_munlockall, 0, 0, 0, 0));
	munmap(n, 2 * pg);
	n = mmap(NULL, 2 * pg, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	say("after munlockall: lck+%ld\n", vmlck() - base);
	return 0;
}

static int ident(void)
{
	struct { int64_t sec, usec; } tv = { 1, 0 }, badtv = { 1, 2000000 };
	struct { int32_t w, d; } tz = { 0, 0 };
	say("settimeofday: %s\n", E(sc(SYS_settimeofday, (long)&tv, 0, 0, 0)));
	say("settimeofday null: %s\n", E(sc(SYS_settimeofday, 0, 0, 0, 0)));
	say("settimeofday tz: %s\n", E(sc(SYS_settimeofday, 0, (long)&tz, 0, 0)));
	say("settimeofday bad usec: %s\n", E(sc(SYS_settimeofday, (long)&badtv, 0, 0, 0)));
	say("settimeofday bad ptr: %s %s\n", E(sc(SYS_settimeofday, (long)BAD, 0, 0, 0)),
	    E(sc(SYS_settimeofday, 0, (long)BAD, 0, 0)));
	struct timespec ts = { 1, 0 }, badts = { 1, 1000000000 };
	say("clock_settime realtime: %s\n", E(sc(SYS_clock_settime, CLOCK_REALTIME, (long)&ts, 0, 0)));
	say("clock_settime bad nsec: %s\n", E(sc(SYS_clock_settime, CLOCK_REALTIME, (long)&badts, 0, 0)));
	say("clock_settime bad ptr: %s\n", E(sc(SYS_clock_settime, CLOCK_REALTIME, (long)BAD, 0, 0)));
	say("clock_settime monotonic: %s\n", E(sc(SYS_clock_settime, CLOCK_MONOTONIC, (long)&ts, 0, 0)));
	say("clock_settime monotonic bad ptr: %s\n", E(sc(SYS_clock_settime, CLOCK_MONOTONIC, (long)BAD, 0, 0)));
	say("clock_settime process cputime: %s\n", E(sc(SYS_clock_settime, CLOCK_PROCESS_CPUTIME_ID, (long)&ts, 0, 0)));
	say("clock_settime 99: %s\n", E(sc(SYS_clock_settime, 99, (long)&ts, 0, 0)));
	struct timex tx;
	memset(&tx, 0, sizeof(tx));
	long r = sc(SYS_adjtimex, (long)&tx, 0, 0, 0);
	say("adjtimex read: %s\n", r >= 0 ? "ok" : E(r));
	tx.modes = ADJ_FREQUENCY;
	say("adjtimex set: %s\n", E(sc(SYS_adjtimex, (long)&tx, 0, 0, 0)));
	tx.modes = 0x8000;	/* ADJ_ADJTIME without SINGLESHOT */
	say("adjtimex adjtime alone: %s\n", E(sc(SYS_adjtimex, (long)&tx, 0, 0, 0)));
	tx.modes = 0xa001;	/* ADJ_OFFSET_SS_READ */
	r = sc(SYS_adjtimex, (long)&tx, 0, 0, 0);
	say("adjtimex ss read: %s\n", r >= 0 ? "ok" : E(r));
	say("adjtimex bad ptr: %s\n", E(sc(SYS_adjtimex, (long)BAD, 0, 0, 0)));
	memset(&tx, 0, sizeof(tx));
	r = sc(SYS_clock_adjtime, CLOCK_REALTIME, (long)&tx, 0, 0);
	say("clock_adjtime realtime read: %s\n", r >= 0 ? "ok" : E(r));
	say("clock_adjtime monotonic: %s\n", E(sc(SYS_clock_adjtime, CLOCK_MONOTONIC, (long)&tx, 0, 0)));
	say("clock_adjtime 99: %s\n", E(sc(SYS_clock_adjtime, 99, (long)&tx, 0, 0)));
	say("clock_adjtime bad ptr: %s\n", E(sc(SYS_clock_adjtime, CLOCK_MONOTONIC, (long)BAD, 0, 0)));
	say("sethostname: %s %s %s\n", E(sc(SYS_sethostname, (long)"x", 1, 0, 0)), E(sc(SYS_sethostname, (long)BAD, 1000, 0, 0)),
	    E(sc(SYS_sethostname, (long)"x", -1, 0, 0)));
	say("setdomainname: %s %s\n", E(sc(SYS_setdomainname, (long)"x", 1, 0, 0)), E(sc(SYS_setdomainname, (long)BAD, 100, 0, 0)));
	say("vhangup: %s\n", E(sc(SYS_vhangup, 0, 0, 0, 0)));
	say("acct: %s %s\n", E(sc(SYS_acct, (long)"/nonexistent", 0, 0, 0)), E(sc(SYS_acct, 0, 0, 0, 0)));
	say("sysfs bad option: %s\n", E(sc(SYS_sysfs, 9, 0, 0, 0)));
	long nfs = sc(SYS_sysfs, 3, 0, 0, 0);
	say("sysfs count: %s\n", E(nfs));
	char name[64];
	for (long i = 0; i < nfs; i++) {
		r = sc(SYS_sysfs, 2, i, (long)name, 0);
		long back = sc(SYS_sysfs, 1, (long)name, 0, 0);
		if (r || back != i)
			say("sysfs %ld: %s %s\n", i, E(r), E(back));
	}
	say("sysfs proc: %s\n", sc(SYS_sysfs, 1, (long)"proc", 0, 0) >= 0 ? "found" : "missing");
	say("sysfs past end: %s\n", E(sc(SYS_sysfs, 2, nfs, (long)name, 0)));
	say("sysfs bad name: %s %s\n", E(sc(SYS_sysfs, 1, (long)"nosuchfs", 0, 0)), E(sc(SYS_sysfs, 1, (long)BAD, 0, 0)));
	say("sysfs bad buf: %s\n", E(sc(SYS_sysfs, 2, 0, (long)BAD, 0)));
	struct stat st;
	stat("/", &st);
	char u[32];
	say("ustat root: %s\n", E(sc(SYS_ustat, (long)st.st_dev, (long)u, 0, 0)));
	say("ustat bad ptr: %s\n", E(sc(SYS_ustat, (long)st.st_dev, (long)BAD, 0, 0)));
	say("ustat no dev: %s\n", E(sc(SYS_ustat, 0xfff0fff, (long)u, 0, 0)));
	return 0;
}

static int syncs(void)
{
	long q = sc(SYS_membarrier, 0, 0, 0, 0);
	say("membarrier query: %s global=%s private=%s\n", q < 0 ? E(q) : "ok", yesno(q > 0 && (q & 1)), yesno(q > 0 && (q & 8)));
	say("membarrier bad flags: %s\n", E(sc(SYS_membarrier, 0, 1, 0, 0)));
	say("membarrier bad cmd: %s\n", E(sc(SYS_membarrier, 3, 0, 0, 0)));
	say("membarrier private unregistered: %s\n", E(sc(SYS_membarrier, 8, 0, 0, 0)));
	say("membarrier register: %s\n", E(sc(SYS_membarrier, 16, 0, 0, 0)));
	say("membarrier private: %s\n", E(sc(SYS_membarrier, 8, 0, 0, 0)));
	say("membarrier global: %s\n", E(sc(SYS_membarrier, 1, 0, 0, 0)));
	say("membarrier global expedited: %s\n", E(sc(SYS_membarrier, 2, 0, 0, 0)));
	pid_t c = fork();
	if (c == 0) {
		say("child private: %s\n", E(sc(SYS_membarrier, 8, 0, 0, 0)));
		_exit(0);
	}
	wait_child(c);
	int fd = open(".", O_RDONLY | O_DIRECTORY);
	int p[2];
	if (pipe(p) < 0)
		return 1;
	say("syncfs: %s %s %s\n", E(sc(SYS_syncfs, fd, 0, 0, 0)), E(sc(SYS_syncfs, p[0], 0, 0, 0)), E(sc(SYS_syncfs, 999, 0, 0, 0)));
	int f = open("/proc/self/exe", O_RDONLY);
	say("sync_file_range: %s\n", E(sc(SYS_sync_file_range, f, 0, 4096, 2)));
	say("sync_file_range flags: %s\n", E(sc(SYS_sync_file_range, f, 0, 4096, 8)));
	say("sync_file_range neg: %s %s\n", E(sc(SYS_sync_file_range, f, -1, 4096, 0)),
	    E(sc(SYS_sync_file_range, f, 1, 0x7fffffffffffffffL, 0)));
	say("sync_file_range pipe: %s ebadf: %s\n", E(sc(SYS_sync_file_range, p[0], 0, 0, 0)),
	    E(sc(SYS_sync_file_range, 999, 0, 0, 99)));
	uint64_t range[2] = { 0, 0 }, cs[5];
	f = (int)syscall(SYS_memfd_create, "c", 0);	/* a file of our own: Linux 6.14 on wants write access or ownership */
	if (write(f, "x", 1) != 1)
		return 1;
	long r = sc(451, f, (long)range, (long)cs, 0);
	if (r != -ENOSYS) {	/* Linux 6.5 on */
		say("cachestat: %s\n", E(r));
		say("cachestat flags: %s bad range: %s bad out: %s ebadf: %s pipe: %s\n", E(sc(451, f, (long)range, (long)cs, 1)),
		    E(sc(451, f, (long)BAD, (long)cs, 0)), E(sc(451, f, (long)range, (long)BAD, 0)),
		    E(sc(451, 999, (long)range, (long)cs, 0)), E(sc(451, p[0], (long)range, (long)cs, 0)));
	}
	return 0;
}

/* getdents(2)'s old records against getdents64's, in small reads */
static int olddents(void)
{
	char a[4096], b[200];
	int fd1 = open(".", O_RDONLY | O_DIRECTORY), fd2 = open(".", O_RDONLY | O_DIRECTORY);
	long n64 = sc(SYS_getdents64, fd1, (long)a, sizeof(a), 0), off64 = 0, entries = 0, same = 1;
	for (;;) {
		long n = sc(SYS_getdents, fd2, (long)b, sizeof(b), 0);
		if (n <= 0) {
			say("getdents end: %s\n", E(n));
			break;
		}
		for (long o = 0; o < n;) {
			unsigned short reclen;
			memcpy(&reclen, b + o + 16, 2);
			const char *name = b + o + 18;
			char type = b[o + reclen - 1];
			if (off64 >= n64) {
				same = 0;
				break;
			}
			unsigned short r64;
			memcpy(&r64, a + off64 + 16, 2);
			if (strcmp(name, a + off64 + 19) || type != a[off64 + 18] || reclen != r64 ||
			    memcmp(b + o, a + off64, 8))
				same = 0;
			off64 += r64;
			o += reclen;
			entries++;
		}
	}
	say("getdents: %s entries, as getdents64: %s\n", entries > 2 ? ">2" : "few", yesno(same && off64 == n64));
	lseek(fd2, 0, SEEK_SET);
	say("getdents tiny: %s\n", E(sc(SYS_getdents, fd2, (long)b, 10, 0)));
	say("getdents bad ptr: %s\n", E(sc(SYS_getdents, fd2, (long)BAD, sizeof(b), 0)));
	say("getdents ebadf: %s\n", E(sc(SYS_getdents, 999, (long)b, sizeof(b), 0)));
	int f = open("/proc/self/exe", O_RDONLY);
	say("getdents file: %s\n", E(sc(SYS_getdents, f, (long)b, sizeof(b), 0)));
	return 0;
}

static volatile sig_atomic_t got_xfsz, got_xcpu;
static void on_sig(int s)
{
	if (s == SIGXFSZ)
		got_xfsz++;
	else
		got_xcpu++;
}

/* RLIMIT_FSIZE, RLIMIT_NPROC (as a non-root user only), RLIMIT_CPU; in the current directory (needs --rw). */
static int limits(void)
{
	signal(SIGXFSZ, on_sig);
	int fd = open("lim.txt", O_RDWR | O_CREAT | O_TRUNC, 0644);
	struct rlimit rl = { 10, RLIM_INFINITY };
	getrlimit(RLIMIT_FSIZE, &rl);
	/* stdout may be a file too: the limit is far above what this prints, the file's writes are near it */
	const long L = 1 << 20;
	rl.rlim_cur = L;
	say("setrlimit fsize: %s\n", E(setrlimit(RLIMIT_FSIZE, &rl) ? -errno : 0));
	lseek(fd, L - 8, SEEK_SET);
	say("write 6: %s\n", E(sc(SYS_write, fd, (long)"abcdef", 6, 0)));
	say("write 6 more (cut): %s\n", E(sc(SYS_write, fd, (long)"abcdef", 6, 0)));
	say("write at limit: %s xfsz=%d\n", E(sc(SYS_write, fd, (long)"x", 1, 0)), got_xfsz);
	say("write 0 at limit: %s\n", E(sc(SYS_write, fd, (long)"x", 0, 0)));
	say("pwrite past: %s xfsz=%d\n", E(sc(SYS_pwrite64, fd, (long)"x", 1, L + 10)), got_xfsz);
	say("pwrite at L-2: %s\n", E(sc(SYS_pwrite64, fd, (long)"xyz", 3, L - 2)));
	struct iovec iov[2] = { { "ab", 2 }, { "cd", 2 } };
	say("pwritev at L-1: %s\n", E(sc(SYS_pwritev, fd, (long)iov, 2, L - 1)));
	say("writev at end: %s xfsz=%d\n", E(sc(SYS_writev, fd, (long)iov, 2, 0)), got_xfsz);
	say("ftruncate L+1: %s xfsz=%d\n", E(sc(SYS_ftruncate, fd, L + 1, 0, 0)), got_xfsz);
	say("ftruncate L: %s\n", E(sc(SYS_ftruncate, fd, L, 0, 0)));
	say("ftruncate 4: %s\n", E(sc(SYS_ftruncate, fd, 4, 0, 0)));
	say("truncate 2L: %s xfsz=%d\n", E(sc(SYS_truncate, (long)"lim.txt", 2 * L, 0, 0)), got_xfsz);
	say("fallocate 0+2L: %s xfsz=%d\n", E(sc(SYS_fallocate, fd, 0, 0, 2 * L)), got_xfsz);
	say("fallocate keep size: %s\n", E(sc(SYS_fallocate, fd, 1 /* KEEP_SIZE */, 0, 2 * L)));
	say("ftruncate L-4: %s\n", E(sc(SYS_ftruncate, fd, L - 4, 0, 0)));
	int ap = open("lim.txt", O_WRONLY | O_APPEND);
	say("append at L-4: %s\n", E(sc(SYS_write, ap, (long)"0123456789", 10, 0)));
	struct stat st;
	fstat(fd, &st);
	say("size: L%+ld\n", (long)st.st_size - L);
	signal(SIGXFSZ, SIG_DFL);
	pid_t c = fork();
	if (c == 0) {
		sc(SYS_write, ap, (long)"x", 1, 0);
		_exit(0);
	}
	say("default SIGXFSZ: %d\n", wait_child(c));
	unlink("lim.txt");
	/* RLIMIT_CPU: SIGXCPU at the soft limit and each second after it, SIGKILL at the hard one */
	c = fork();
	if (c == 0) {
		signal(SIGXCPU, on_sig);
		struct rlimit cpu = { 1, 3 };
		setrlimit(RLIMIT_CPU, &cpu);
		while (got_xcpu < 1)
			;
		getrlimit(RLIMIT_CPU, &cpu);
		say("xcpu: soft now %ld\n", (long)cpu.rlim_cur);
		for (;;)
			;
	}
	say("cpu child: %d\n", wait_child(c));
	return 0;
}

/* RLIMIT_NPROC for a user that is not root: a second process is EAGAIN at 1, zombies count until reaped. */
static int nproc(void)
{
	struct rlimit rl = { 1, RLIM_INFINITY };
	getrlimit(RLIMIT_NPROC, &rl);
	rl.rlim_cur = 1;
	setrlimit(RLIMIT_NPROC, &rl);
	pid_t c = fork();
	if (c == 0)
		_exit(0);
	say("fork at 1: %s\n", c < 0 ? errname(errno) : "ok");
	if (c > 0)
		wait_child(c);
	return 0;
}

/* remap_file_pages: page 0 of a shared mapping shows the file's page 2 afterwards; Linux's EINVALs. */
static int remap(void)
{
	long pg = 4096;
	int fd = (int)syscall(SYS_memfd_create, "r", 0);
	for (char c = 'a'; c < 'e'; c++) {
		char page[4096];
		memset(page, c, sizeof(page));
		if (write(fd, page, sizeof(page)) != (ssize_t)sizeof(page))
			return 1;
	}
	char *m = mmap(NULL, 4 * pg, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	char *p = mmap(NULL, 4 * pg, PROT_READ, MAP_PRIVATE, fd, 0);
	say("before: %c%c%c%c\n", m[0], m[pg], m[2 * pg], m[3 * pg]);
	say("remap page 0 to 2: %s\n", E(sc(SYS_remap_file_pages, (long)m, pg, 0, 2)));
	say("after: %c%c%c%c\n", m[0], m[pg], m[2 * pg], m[3 * pg]);
	say("remap 2 pages at 2 from 0: %s\n", E(syscall(SYS_remap_file_pages, m + 2 * pg, 2 * pg, 0, 0, 0) ? -errno : 0));
	say("after: %c%c%c%c\n", m[0], m[pg], m[2 * pg], m[3 * pg]);
	m[0] = 'z';
	char c;
	pread(fd, &c, 1, 2 * pg);
	say("write through: %c\n", c);
	say("prot: %s\n", E(syscall(SYS_remap_file_pages, m, pg, PROT_READ, 0, 0) ? -errno : 0));
	say("private: %s\n", E(syscall(SYS_remap_file_pages, p, pg, 0, 0, 0) ? -errno : 0));
	say("past the mapping: %s\n", E(syscall(SYS_remap_file_pages, m, 5 * pg, 0, 0, 0) ? -errno : 0));
	say("unmapped: %s\n", E(syscall(SYS_remap_file_pages, (void *)0x10000, pg, 0, 0, 0) ? -errno : 0));
	say("wrap: %s\n", E(syscall(SYS_remap_file_pages, m, -pg, 0, 0, 0) ? -errno : 0));
	say("pgoff wrap: %s\n", E(syscall(SYS_remap_file_pages, m, pg, 0, -1L, 0) ? -errno : 0));
	say("size 0: %s\n", E(syscall(SYS_remap_file_pages, m, 0, 0, 0, 0) ? -errno : 0));
	return 0;
}

/* chroot(2) without CAP_SYS_CHROOT: the lookup's errors first, then EPERM */
static int chroots(void)
{
	static char longname[4200];
	memset(longname, 'a', sizeof(longname) - 1);
	close(open("chroot_file", O_CREAT | O_WRONLY, 0644));
	unlink("chroot_l1");
	unlink("chroot_l2");
	if (symlink("chroot_l2", "chroot_l1") || symlink("chroot_l1", "chroot_l2"))
		return 90;
	say("too long: %s\n", E(sc(SYS_chroot, (long)longname, 0, 0, 0)));
	say("a file: %s\n", E(sc(SYS_chroot, (long)"chroot_file", 0, 0, 0)));
	say("missing: %s\n", E(sc(SYS_chroot, (long)"chroot_missing/x", 0, 0, 0)));
	say("bad pointer: %s\n", E(sc(SYS_chroot, (long)BAD, 0, 0, 0)));
	say("symlink loop: %s\n", E(sc(SYS_chroot, (long)"chroot_l1", 0, 0, 0)));
	say("empty: %s\n", E(sc(SYS_chroot, (long)"", 0, 0, 0)));
	say("dot: %s\n", E(sc(SYS_chroot, (long)".", 0, 0, 0)));
	say("root: %s\n", E(sc(SYS_chroot, (long)"/", 0, 0, 0)));
	unlink("chroot_l1");
	unlink("chroot_l2");
	unlink("chroot_file");
	return 0;
}

#define RNDGETENTCNT 0x80045200	/* _IOR('R', 0, int): musl has no <linux/random.h> */
#define RNDADDTOENTCNT 0x40045201
#define RNDZAPENTCNT 0x5204

/* random(4)'s ioctls on /dev/urandom, and /proc/sys/kernel/random/entropy_avail */
static int randoms(void)
{
	int fd = open("/dev/urandom", O_RDONLY), n = -1, one = 1;
	long r = sc(SYS_ioctl, fd, RNDGETENTCNT, (long)&n, 0);
	char buf[32] = { 0 };
	int pfd = open("/proc/sys/kernel/random/entropy_avail", O_RDONLY);
	say("RNDGETENTCNT: %s, /proc says the same: %s\n", E(r < 0 ? r : 0),
	    yesno(pfd >= 0 && read(pfd, buf, sizeof(buf) - 1) > 0 && atoi(buf) == n));
	say("RNDGETENTCNT bad pointer: %s\n", E(sc(SYS_ioctl, fd, RNDGETENTCNT, (long)BAD, 0)));
	say("RNDADDTOENTCNT: %s\n", E(sc(SYS_ioctl, fd, RNDADDTOENTCNT, (long)&one, 0)));
	say("RNDZAPENTCNT: %s\n", E(sc(SYS_ioctl, fd, RNDZAPENTCNT, 0, 0)));
	int z = open("/dev/zero", O_RDONLY);
	say("RNDGETENTCNT on /dev/zero: %s\n", E(sc(SYS_ioctl, z, RNDGETENTCNT, (long)&n, 0)));
	return 0;
}

/* name_to_handle_at's errors and a handle; open_by_handle_at without CAP_DAC_READ_SEARCH */
static int fhandles(void)
{
	struct { unsigned int bytes; int type; unsigned char h[128]; } fh;
	int mnt = -1;
	close(open("fh_file", O_CREAT | O_WRONLY, 0644));
	fh.bytes = 128;
	say("bad dirfd: %s\n", E(syscall(SYS_name_to_handle_at, -1, "fh_file", &fh, &mnt, 0) < 0 ? -errno : 0));
	say("dirfd not a directory: %s\n", E(syscall(SYS_name_to_handle_at, 0, "fh_file", &fh, &mnt, 0) < 0 ? -errno : 0));
	say("bad path: %s\n", E(syscall(SYS_name_to_handle_at, AT_FDCWD, BAD, &fh, &mnt, 0) < 0 ? -errno : 0));
	say("bad handle: %s\n", E(syscall(SYS_name_to_handle_at, AT_FDCWD, "fh_file", BAD, &mnt, 0) < 0 ? -errno : 0));
	say("bad mount id: %s\n", E(syscall(SYS_name_to_handle_at, AT_FDCWD, "fh_file", &fh, BAD, 0) < 0 ? -errno : 0));
	say("bad flags: %s\n", E(syscall(SYS_name_to_handle_at, AT_FDCWD, "fh_file", &fh, &mnt, -1) < 0 ? -errno : 0));
	say("FID|CONNECTABLE: %s\n", E(syscall(SYS_name_to_handle_at, AT_FDCWD, "fh_file", &fh, &mnt, 0x202) < 0 ? -errno : 0));
	say("empty path: %s\n", E(syscall(SYS_name_to_handle_at, AT_FDCWD, "", &fh, &mnt, 0) < 0 ? -errno : 0));
	say("missing: %s\n", E(syscall(SYS_name_to_handle_at, AT_FDCWD, "fh_missing", &fh, &mnt, 0) < 0 ? -errno : 0));
	fh.bytes = 129;
	say("handle_bytes 129: %s\n", E(syscall(SYS_name_to_handle_at, AT_FDCWD, "fh_file", &fh, &mnt, 0) < 0 ? -errno : 0));
	fh.bytes = 0;
	mnt = -1;
	long r = syscall(SYS_name_to_handle_at, AT_FDCWD, "fh_file", &fh, &mnt, 0) < 0 ? -errno : 0;
	say("handle_bytes 0: %s, size needed given: %s, mount id given: %s\n", E(r), yesno(fh.bytes > 0 && fh.bytes <= 128),
	    yesno(mnt >= 0));
	fh.bytes = 128;
	r = syscall(SYS_name_to_handle_at, AT_FDCWD, "fh_file", &fh, &mnt, 0) < 0 ? -errno : 0;
	unsigned first = fh.bytes;
	int type = fh.type;
	say("handle: %s, bytes > 0: %s\n", E(r), yesno(fh.bytes > 0));
	fh.bytes = 128;
	r = syscall(SYS_name_to_handle_at, AT_FDCWD, ".", &fh, &mnt, 0) < 0 ? -errno : 0;
	say("handle of the cwd: %s\n", E(r));
	fh.bytes = 128;
	int dfd = open(".", O_RDONLY | O_DIRECTORY);
	r = syscall(SYS_name_to_handle_at, dfd, "", &fh, &mnt, AT_EMPTY_PATH) < 0 ? -errno : 0;
	say("AT_EMPTY_PATH on a dir fd: %s\n", E(r));
	fh.bytes = first;
	fh.type = type;
	r = syscall(SYS_open_by_handle_at, dfd, &fh, O_RDONLY) < 0 ? -errno : 0;
	say("open_by_handle_at: %s\n", E(r));
	unlink("fh_file");
	return 0;
}

int main(int argc, char **argv)
{
	drop_caps();
	if (argc >= 2 && !strcmp(argv[1], "fhandle"))
		return fhandles();
	if (argc >= 2 && !strcmp(argv[1], "chroot"))
		return chroots();
	if (argc >= 2 && !strcmp(argv[1], "random"))
		return randoms();
	if (argc < 2)
		return 2;
	if (!strcmp(argv[1], "affinity"))
		return affinity();
	if (!strcmp(argv[1], "sched"))
		return sched();
	if (!strcmp(argv[1], "ioprio"))
		return ioprio();
	if (!strcmp(argv[1], "mlock"))
		return mlocks();
	if (!strcmp(argv[1], "ident"))
		return ident();
	if (!strcmp(argv[1], "sync"))
		return syncs();
	if (!strcmp(argv[1], "getdents"))
		return olddents();
	if (!strcmp(argv[1], "limits"))
		return limits();
	if (!strcmp(argv[1], "nproc"))
		return nproc();
	if (!strcmp(argv[1], "remap"))
		return remap();
	return 2;
}

/*
 * The long tail of issue 15, compared with Linux: sched_setaffinity and
 * sched_getaffinity, sched_rr_get_interval, sched_setattr/getattr, ioprio.
 * Capabilities are dropped first, so a native run as root answers as an
 * unprivileged process does, as the guest is one (capget: none).
 * Usage: misc_sys MODE (affinity | sched | ioprio)
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/resource.h>

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

static int affinity(void)
{
	unsigned char m[128], one[128] = { 0 };
	long n = sc(SYS_sched_getaffinity, 0, sizeof(m), (long)m, 0);
	int first = -1, cpus = n > 0 ? count(m, (size_t)n) : -1;

	say("get: %s cpus=%d\n", n > 0 ? "ok" : E(n), cpus);
	for (int i = 0; i < (int)(n * 8) && first < 0; i++)
		if (m[i / 8] & (1 << (i % 8)))
			first = i;
	one[first / 8] = (unsigned char)(1 << (first % 8));
	say("set one: %s\n", E(sc(SYS_sched_setaffinity, 0, 8, (long)one, 0)));
	memset(m, 0, sizeof(m));
	n = sc(SYS_sched_getaffinity, 0, sizeof(m), (long)m, 0);
	say("get: cpus=%d same=%s\n", count(m, sizeof(m)), yesno(!memcmp(m, one, sizeof(m))));
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

int main(int argc, char **argv)
{
	drop_caps();
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
	return 2;
}

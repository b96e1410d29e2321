/* Helpers of the futex test guests (futex_ops.c, futex_pi.c): <linux/futex.h> numbers musl-gcc lacks, errno
 * names, deadlines, and the MODE dispatch. */
#ifndef PVX_FUTEX_GUEST_H
#define PVX_FUTEX_GUEST_H

#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "guest.h"

#define FUTEX_WAIT 0
#define FUTEX_WAKE 1
#define FUTEX_WAKE_OP 5
#define FUTEX_LOCK_PI 6
#define FUTEX_UNLOCK_PI 7
#define FUTEX_TRYLOCK_PI 8
#define FUTEX_WAIT_REQUEUE_PI 11
#define FUTEX_CMP_REQUEUE_PI 12
#define FUTEX_LOCK_PI2 13
#define FUTEX_PRIVATE_FLAG 128
#define FUTEX_CLOCK_REALTIME 256
#define FUTEX_WAIT_PRIVATE (FUTEX_WAIT | FUTEX_PRIVATE_FLAG)
#define FUTEX_WAKE_PRIVATE (FUTEX_WAKE | FUTEX_PRIVATE_FLAG)
#define FUTEX_WAKE_OP_PRIVATE (FUTEX_WAKE_OP | FUTEX_PRIVATE_FLAG)
#define FUTEX_WAITERS 0x80000000u
#define FUTEX_OWNER_DIED 0x40000000u
#define FUTEX_TID_MASK 0x3fffffffu

/* The errno of a failed call by name (futex adds ETIMEDOUT, EAGAIN, EDEADLK to guest.h's), "0" on success. */
static __attribute__((unused)) const char *en(long r)
{
	if (r >= 0)
		return "0";
	switch (errno) {
	case ETIMEDOUT: return "ETIMEDOUT";
	case EWOULDBLOCK: return "EAGAIN";
	case EDEADLK: return "EDEADLK";
	default: return errname(errno);
	}
}

/* clk's time ms from now, for absolute deadlines. */
static __attribute__((unused)) struct timespec abs_in(int clk, long ms)
{
	struct timespec ts;
	clock_gettime(clk, &ts);
	ts.tv_nsec += (ms % 1000) * 1000000L;
	ts.tv_sec += ms / 1000 + ts.tv_nsec / 1000000000L;
	ts.tv_nsec %= 1000000000L;
	return ts;
}

/*
 * Until every thread of process pid but the caller sleeps in a call (state S in /proc/PID/task/TID/stat) or
 * is gone, 10 s at most, and at least 150 ms. A fixed 150 ms (all this was before) is not enough for a new
 * thread or process to reach its wait under QEMU's software CPU (vmexec in CI): a wake then comes before the
 * wait and is lost (a hang), or a count of waiters is short.
 */
static __attribute__((unused)) void settle_proc(pid_t pid)
{
	char dir[64];
	snprintf(dir, sizeof dir, "/proc/%d/task", (int)pid);
	pid_t me = (pid_t)syscall(SYS_gettid);
	usleep(150 * 1000);
	for (int k = 0; k < 1000; k++) {
		DIR *d = opendir(dir);
		int all = d != NULL;
		for (struct dirent *e; d && all && (e = readdir(d));) {
			pid_t tid = (pid_t)atoi(e->d_name);
			if (tid <= 0 || tid == me)
				continue;
			char path[96];
			snprintf(path, sizeof path, "%s/%d/stat", dir, (int)tid);
			char st = stat_file_state(path);
			all = !st || st == 'S' || st == 'Z' || st == 'X';
		}
		if (d)
			closedir(d);
		if (all)
			return;
		usleep(10000);
	}
}

/* Until the other threads of this process reach their wait (settle_proc). */
static __attribute__((unused)) void settle(void)
{
	settle_proc(getpid());
}

static uint32_t *words;	/* a private page of futex words */

struct mode {
	const char *name;
	void (*fn)(void);
};

/* main(): map words, run the mode argv[1] names; 2 when there is none. */
static __attribute__((unused)) int run_mode(int argc, char **argv, const struct mode *m, size_t n)
{
	if (argc < 2)
		return 2;
	words = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	for (size_t i = 0; i < n; i++)
		if (!strcmp(argv[1], m[i].name)) {
			m[i].fn();
			return 0;
		}
	return 2;
}

#endif

/* sec_stub_cmdhijack: a hostile guest that rewrites the command pvx posts to its seccomp stub (issue 11,
 * finding 5): a thread keeps turning the main thread's next stub command into futex(FUTEX_WAIT) on a word
 * that never changes, while the main thread maps and unmaps memory. pvx waits for that command with its
 * lock held: it must give up within a bound (and end the process) instead of waiting for good.
 * With "batch", the thread turns each command into a STUB_CMD_BATCH of such futex waits, the whole table
 * (its count past the table's end half the time), as an exec's batch would be posted. A run of guest code
 * it turns into one leaves the main thread blocked for good in its stub (its own doing, as a futex wait on
 * a word nobody wakes): after 2 s the thread ends the process with exit_group(9), which pvx must still
 * serve.
 * Exit status 9 if every mapping completed. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>

#include "guest.h"
#include "stubgadget.h"

#define NR_OFF 48	/* struct stub_shared: sys_nr, then sys_args[6] */
#define CMD_OFF 4	/* ... cmd */
#define OUT_OFF 2552	/* ... out_buf: STUB_CMD_BATCH's table, 7 words an entry */
#define CMD_BATCH 5
#define BATCH_MAX (1536 / 56)

static volatile int stop, batch;
static int word;

static void *hijacker(void *arg)
{
	(void)arg;
	volatile int64_t *cmd = (volatile int64_t *)(STUB_SHARED + NR_OFF);
	volatile int64_t *table = (volatile int64_t *)(STUB_SHARED + OUT_OFF);
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (uint64_t n = 0; batch && !stop; n++) {
		if (!(n & 1023) && (clock_gettime(CLOCK_MONOTONIC, &t), t.tv_sec - t0.tv_sec >= 2))
			syscall(SYS_exit_group, 9);
		for (int i = 0; i < BATCH_MAX; i++) {
			volatile int64_t *e = table + 7 * i;
			e[0] = SYS_futex;
			e[1] = (int64_t)(uintptr_t)&word;
			e[2] = 0;
			e[3] = 0;
			e[4] = 0;
		}
		cmd[0] = n & 1 ? BATCH_MAX : 1 << 20;
		*(volatile uint32_t *)(STUB_SHARED + CMD_OFF) = CMD_BATCH;
	}
	while (!stop) {
		cmd[1] = (int64_t)(uintptr_t)&word;
		cmd[2] = 0;	/* FUTEX_WAIT */
		cmd[3] = 0;	/* while word == 0 */
		cmd[4] = 0;	/* no timeout */
		cmd[0] = SYS_futex;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t;

	batch = argc > 1 && argv[1][0] == 'b';
	probe_init();
	if (!readable(STUB_SHARED)) {
		say("no shared region\n");
		return 2;
	}
	pthread_create(&t, NULL, hijacker, NULL);
	for (int i = 0; i < 2000; i++) {
		void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p != MAP_FAILED)
			munmap(p, 4096);
	}
	stop = 1;
	say("all mapped\n");
	_exit(9);
}

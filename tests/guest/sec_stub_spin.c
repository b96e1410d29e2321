/* sec_stub_spin: a hostile guest that forges the spin budget and a sleeping flag of its seccomp stub's
 * shared region (issue 16): FORGERS threads (more than CPUs here, so that one is on a CPU when pvx posts) keep writing UINT32_MAX into the main thread's spin word, and 1 into
 * its stub_sleeping flag (each command posted then makes pvx wake the stub with a host call, time enough
 * for the forged word to land before pvx looks), while the main thread computes in user code, making a
 * syscall now and then.
 * pvx used to read its own spin budget from there (2^32 iterations, about a second of a host CPU per wait
 * while the guest computes): it must use its own. The main thread checks that every getppid() answers the
 * same, prints "start" before the loop and "cpu MS" after it (its own CPU time over the loop, ms) and, if argv[1] is "wait", reads stdin until
 * EOF so that the test can look at pvx's CPU time meanwhile. Exit status 7 when every answer was right.
 * Natively the regions are not there: "no shared region", status 2. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "guest.h"
#include "stubgadget.h"

#define SLEEP_OFF 8		/* struct stub_shared: stub_sleeping */
#define SPIN_OFF 20		/* struct stub_shared: spin */
#define FORGERS 3

static volatile int stop;

static void *forger(void *arg)
{
	(void)arg;
	while (!stop) {
		*(volatile uint32_t *)(STUB_SHARED + SPIN_OFF) = UINT32_MAX;	/* region 0: the main thread's */
		*(volatile uint32_t *)(STUB_SHARED + SLEEP_OFF) = 1;
	}
	return NULL;
}

static uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	pthread_t t[FORGERS];
	volatile uint64_t sink = 0;
	int bad = 0;

	probe_init();
	if (!readable(STUB_SHARED)) {
		say("no shared region\n");
		return 2;
	}
	pid_t ppid = (pid_t)syscall(SYS_getppid);
	for (int i = 0; i < FORGERS; i++)
		pthread_create(&t[i], NULL, forger, NULL);
	say("start\n");
	uint64_t c0 = cpu_ns();
	/* One to two seconds of CPU here, a trap every 20 ms or so: each wait for the guest would be a forged spin. */
	for (int round = 0; round < 80; round++) {
		for (uint64_t i = 0; i < 8000000; i++)
			sink += i ^ (sink >> 3);
		if ((pid_t)syscall(SYS_getppid) != ppid)
			bad++;
	}
	uint64_t c1 = cpu_ns();
	stop = 1;
	for (int i = 0; i < FORGERS; i++)
		pthread_join(t[i], NULL);
	say("cpu %llu\n", (unsigned long long)((c1 - c0) / 1000000));
	if (argc > 1 && !strcmp(argv[1], "wait")) {
		char buf[64];
		while (read(0, buf, sizeof(buf)) > 0)
			;
	}
	if (bad) {
		say("wrong getppid answers\n");
		return 1;
	}
	return 7;
}

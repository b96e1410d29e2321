/* sec_stub_scan: a hostile guest that looks for host process ids in the stub's memory it can read (issue 11,
 * finding 10). It starts threads and has one kicked by a signal while it runs (the sentry then interrupts
 * its stub thread), prints "ready", waits for the file IDS_FILE (host tids and pids written by the test),
 * then reads every page it can in the stub's range and reports each 32-bit word equal to one of them.
 * usage: sec_stub_scan IDS_FILE   prints "found ID at ADDR" lines, then "scanned N pages" */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "guest.h"
#include "stubgadget.h"

#define MASK 0x5bd1e995u	/* ids are kept masked: a register spilled into a stub frame never holds one */
#define MAX_IDS 256

static unsigned masked[MAX_IDS];
static int nids;
static volatile int kicks, stop;

static void on_usr1(int sig)
{
	(void)sig;
	kicks++;
}

static void *spinner(void *arg)
{
	(void)arg;
	while (!stop)
		__asm__ volatile("" ::: "memory");
	return NULL;
}

static void *sleeper(void *arg)
{
	(void)arg;
	while (!stop) {
		struct timespec ts = { 0, 2000000 };
		nanosleep(&ts, NULL);
	}
	return NULL;
}

static void scan(uintptr_t from, uintptr_t to, long *pages)
{
	for (uintptr_t pg = from; pg < to; pg += PG) {
		if (!readable(pg))
			continue;
		++*pages;
		const volatile uint32_t *w = (const volatile uint32_t *)pg;
		for (size_t i = 0; i < PG / 4; i++) {
			unsigned v = w[i] ^ MASK;
			for (int k = 0; k < nids; k++)
				if (v == masked[k])
					say("found %u at %#lx\n", w[i], (unsigned long)(pg + 4 * i));
		}
	}
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	probe_init();
	signal(SIGUSR1, on_usr1);
	pthread_t t[3];
	pthread_create(&t[0], NULL, spinner, NULL);
	pthread_create(&t[1], NULL, sleeper, NULL);
	pthread_create(&t[2], NULL, sleeper, NULL);
	for (int i = 0; i < 20; i++) {
		struct timespec ts = { 0, 5000000 };
		pthread_kill(t[0], SIGUSR1);
		nanosleep(&ts, NULL);
	}
	say("ready\n");
	FILE *f = NULL;
	for (int i = 0; i < 2000 && !(f = fopen(argv[1], "r")); i++) {
		struct timespec ts = { 0, 10000000 };
		nanosleep(&ts, NULL);
	}
	if (!f) {
		say("no ids file\n");
		return 3;
	}
	unsigned id;
	while (nids < MAX_IDS && fscanf(f, "%u", &id) == 1)
		masked[nids++] = id ^ MASK;
	fclose(f);
	long pages = 0;
	scan(STUB_BASE, STUB_BASE + (16UL << 20), &pages);	/* code, control page, shared regions */
	scan(0x7ffff7f00000UL, 0x7ffff8000000UL, &pages);	/* the stub's vdso, when it runs */
	scan(0x7ffffff00000UL, 0x800000000000UL, &pages);	/* the stub's own stack */
	stop = 1;
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	say("ids %d kicks %s scanned %ld pages\n", nids, kicks ? "some" : "none", pages);
	return 0;
}

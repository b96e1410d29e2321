/* sec_stub_forge: a hostile guest that forges the results pvx reads back from the seccomp stub's shared
 * memory (issue 11, finding 4). A thread keeps writing a host pid (argv[1], a process outside the sandbox)
 * into the result word of the main thread's shared region while the main thread creates threads: pvx must
 * never take that value for the host tid of a new stub thread (it used to, and re-pinned the victim's CPUs).
 * usage: sec_stub_forge VICTIM_PID [THREADS]   prints "done" and exits 0 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "guest.h"
#include "stubgadget.h"

#define RESULT_OFF 104	/* struct stub_shared: sys_ret (the clone result, once) */
#define TID_OFF 24	/* struct stub_shared: the old host tid word */

static volatile int stop;
static long victim;

static void *forger(void *arg)
{
	(void)arg;
	volatile int32_t *tid0 = (volatile int32_t *)(STUB_SHARED + TID_OFF);
	volatile int64_t *ret0 = (volatile int64_t *)(STUB_SHARED + RESULT_OFF);
	while (!stop) {
		*ret0 = victim;
		*tid0 = (int32_t)victim;
	}
	return NULL;
}

static void *noop(void *arg)
{
	return arg;
}

int main(int argc, char **argv)
{
	static char stacks[2][256 << 10] __attribute__((aligned(4096)));
	if (argc < 2)
		return 2;
	victim = strtol(argv[1], NULL, 0);
	int n = argc > 2 ? atoi(argv[2]) : 300;
	probe_init();
	if (!readable(STUB_SHARED)) {
		say("no shared region: nothing to forge\n");
		return 2;
	}
	pthread_t w, t;
	pthread_attr_t wa, ta;
	/* our own stacks: no mmap, whose result the forger would spoil too */
	pthread_attr_init(&wa);
	pthread_attr_setstack(&wa, stacks[0], sizeof(stacks[0]));
	pthread_attr_init(&ta);
	pthread_attr_setstack(&ta, stacks[1], sizeof(stacks[1]));
	if (pthread_create(&w, &wa, forger, NULL))
		return 3;
	int made = 0;
	for (int i = 0; i < n; i++)
		if (!pthread_create(&t, &ta, noop, NULL) && !pthread_join(t, NULL))
			made++;
	stop = 1;
	pthread_join(w, NULL);
	say("made %s threads\ndone\n", made > 0 ? "some" : "no");
	return 0;
}

/* sec_stub_tidword: a hostile guest that keeps the host tid word of its seccomp stub threads non-zero
 * after they exit (issue 11, finding 5): pvx must not wait for the stub to clear it (it used to spin on it
 * for good, holding its lock). A thread rewrites every non-zero tid word it has seen in the shared regions
 * while the main thread starts and joins threads. Exit status 5. */
#define _GNU_SOURCE
#include <pthread.h>
#include <time.h>

#include "guest.h"
#include "stubgadget.h"

#define TID_OFF 24	/* struct stub_shared: the old host tid word */
#define OLD_REGION 0x43000UL	/* the old stub's region size */
#define REGIONS 64

static volatile int stop;

static void *keeper(void *arg)
{
	static char seen[REGIONS];
	(void)arg;
	while (!stop)
		for (int i = 1; i < REGIONS; i++) {
			volatile int32_t *w = (volatile int32_t *)(STUB_SHARED + i * OLD_REGION + TID_OFF);
			if (*w)
				seen[i] = 1;
			if (seen[i])
				*w = 0x7fffffff;
		}
	return NULL;
}

/* lives long enough for the keeper to see its tid word */
static void *noop(void *arg)
{
	struct timespec ts = { 0, 20000000 };
	nanosleep(&ts, NULL);
	return arg;
}

int main(void)
{
	static char stack[256 << 10] __attribute__((aligned(4096)));
	pthread_t k, t;
	pthread_attr_t a;

	probe_init();
	if (!readable(STUB_SHARED + (REGIONS - 1) * OLD_REGION)) {
		say("no shared regions\n");
		return 2;
	}
	pthread_create(&k, NULL, keeper, NULL);
	pthread_attr_init(&a);
	pthread_attr_setstack(&a, stack, sizeof(stack));
	for (int i = 0; i < 20; i++)
		if (!pthread_create(&t, &a, noop, NULL))
			pthread_join(t, NULL);
	say("joined\n");
	_exit(5);
}

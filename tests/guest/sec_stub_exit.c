/* sec_stub_exit: a hostile guest whose thread ends its own stub thread with exit(2) through the stub's
 * syscall instruction (issue 11, finding 5); then the main thread calls exit_group(6). pvx must not wait for
 * that thread to come back (it used to, for good). Exit status 6. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sys/syscall.h>
#include <time.h>

#include "guest.h"
#include "stubgadget.h"

static uintptr_t gadget;

static void *quitter(void *arg)
{
	(void)arg;
	stub_call(gadget, SYS_exit, 0, 0, 0, 0, 0, 0);
	return NULL;	/* never reached: the thread is gone */
}

int main(void)
{
	struct stub_gadgets g;
	pthread_t t;

	probe_init();
	find_gadgets(&g);
	gadget = g.ret ? g.ret : g.retnz;
	if (!gadget) {
		say("no gadget\n");
		return 2;
	}
	pthread_create(&t, NULL, quitter, NULL);
	struct timespec ts = { 0, 300000000 };
	nanosleep(&ts, NULL);
	say("exiting\n");
	_exit(6);
}

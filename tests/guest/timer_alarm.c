/* alarm(2) interrupting pure computation, then an ITIMER_REAL interval with pause(2) (a timer that does
 * not repeat hangs it), then alarm(0) returning the seconds left: prints the same natively and in pvx. */
#include <signal.h>
#include <stdio.h>
#include <unistd.h>
#include <sys/time.h>
static volatile int hits;
static void h(int s) { (void)s; hits++; }
int main(void) {
	signal(SIGALRM, h);
	alarm(1);
	while (!hits) ;                /* pure compute: needs an interrupt */
	printf("alarm hit %d\n", hits);
	struct itimerval it = { {0, 20000}, {0, 20000} };
	setitimer(ITIMER_REAL, &it, 0);
	while (hits < 6) pause();
	/* Not the count itself: the 20 ms interval keeps firing, and a slow machine (QEMU's software CPU) can
	 * take longer than that between the handler that made it 6 and a read here. Still armed: alarm(0) is 1. */
	printf("itimer repeated 5 times, alarm(0)=%u\n", alarm(0));
	alarm(2); sleep(1); printf("left %u\n", alarm(0));
	return 0;
}

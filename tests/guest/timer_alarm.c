/* alarm(2) interrupting pure computation, then an ITIMER_REAL interval with pause(2), then alarm(0)
 * returning the seconds left: prints the same natively and in pvx. */
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
	printf("itimer hits %d, alarm(0)=%u\n", hits, alarm(0));
	alarm(2); sleep(1); printf("left %u\n", alarm(0));
	return 0;
}

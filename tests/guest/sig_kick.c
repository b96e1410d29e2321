/* sig_kick: a signal sent to a thread around one of its syscalls is delivered, even when the thread then
 * computes without another syscall. Thread A, per round: a few syscalls, then a spin (no syscalls) until
 * its SIGUSR1 and SIGUSR2 handlers ran, bounded; thread B sends A SIGUSR1 at a random moment around A's
 * syscalls and SIGUSR2 a random moment later (around the first handler's rt_sigreturn). On seccomp, a
 * signal that comes in while the stub's SIGSYS handler runs is noted and reported on its way out, by the
 * fast return's window or after the handler closed the mask before rt_sigreturn (stub/stub.c
 * trap_handler): were it dropped, A would spin to the bound.
 *   sig_kick ROUNDS  ->  "rounds R, lost 0"
 * Prints relations only, so native and sandbox output agree. */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "guest.h"

static volatile int got, got2;
static volatile pid_t a_tid;
static int pipefd[2];
static long rounds;

static void on_usr1(int sig)
{
	if (sig == SIGUSR1)
		got = 1;
	else
		got2 = 1;
}

static void *sender(void *arg)
{
	unsigned seed = 12345;
	char c;

	(void)arg;
	for (long i = 0; i < rounds; i++) {
		if (read(pipefd[0], &c, 1) != 1)
			break;
		for (volatile unsigned k = rand_r(&seed) % 4000; k; k--)
			;
		syscall(SYS_tgkill, getpid(), a_tid, SIGUSR1);
		for (volatile unsigned k = rand_r(&seed) % 4000; k; k--)
			;
		syscall(SYS_tgkill, getpid(), a_tid, SIGUSR2);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_usr1, .sa_flags = SA_RESTART };
	long lost = 0, done = 0;
	pthread_t th;

	rounds = argc > 1 ? atol(argv[1]) : 2000;
	sigaction(SIGUSR1, &sa, NULL);
	sigaction(SIGUSR2, &sa, NULL);
	a_tid = (pid_t)syscall(SYS_gettid);
	if (pipe(pipefd) || pthread_create(&th, NULL, sender, NULL))
		return 1;
	for (long i = 0; i < rounds; i++, done++) {
		got = got2 = 0;
		if (write(pipefd[1], "x", 1) != 1)
			return 1;
		for (int k = 0; k < 4; k++)
			syscall(SYS_getppid);
		for (long s = 0; !(got && got2) && s < (1L << 30); s++)
			__asm__ volatile("" ::: "memory");
		if (!(got && got2)) {
			lost++;
			while (!(got && got2))	/* the next syscall brings it: count it once */
				syscall(SYS_getppid);
		}
	}
	pthread_join(th, NULL);
	say("rounds %ld, lost %ld\n", done, lost);
	return 0;
}

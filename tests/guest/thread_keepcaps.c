/* thread_keepcaps: prctl(PR_SET_KEEPCAPS) is a flag of the calling thread (its cred, cap_task_prctl):
 * 0 at start, set and read back, EINVAL above 1, kept by a thread created after it is set and by a
 * fork, not shared with a thread created before, cleared by execve. (Go's syscall.AllThreadsSyscall
 * test sets it in every thread and reads it back in each.)
 * Also PR_CAPBSET_READ (python's test_os asks it): the bounding set is inherited, full here, and a
 * capability past CAP_LAST_CAP is EINVAL.
 * usage: thread_keepcaps [exec]   (exec: the re-executed image reports the flag after execve) */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>

#include "guest.h"

static pthread_barrier_t set, seen;
static long early_value, late_value;

static void *early(void *arg)
{
	(void)arg;
	pthread_barrier_wait(&set);	/* the main thread has set its flag */
	early_value = prctl(PR_GET_KEEPCAPS, 0, 0, 0, 0);
	pthread_barrier_wait(&seen);
	return NULL;
}

static void *late(void *arg)
{
	(void)arg;
	late_value = prctl(PR_GET_KEEPCAPS, 0, 0, 0, 0);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "exec")) {
		say("after execve: %ld\n", (long)prctl(PR_GET_KEEPCAPS, 0, 0, 0, 0));
		return 0;
	}
	pthread_t e, l;
	pthread_barrier_init(&set, NULL, 2);
	pthread_barrier_init(&seen, NULL, 2);
	pthread_create(&e, NULL, early, NULL);
	say("at start: %ld\n", (long)prctl(PR_GET_KEEPCAPS, 0, 0, 0, 0));
	say("CAP_CHOWN in the bounding set: %ld\n", (long)prctl(PR_CAPBSET_READ, 0, 0, 0, 0));
	errno = 0;
	long b = prctl(PR_CAPBSET_READ, 1000, 0, 0, 0);
	say("capability 1000: %ld %s\n", b, errname(b < 0 ? errno : 0));
	errno = 0;
	long r = prctl(PR_SET_KEEPCAPS, 2, 0, 0, 0);
	say("set 2: %ld %s\n", r, errname(r < 0 ? errno : 0));
	say("set 1: %ld\n", (long)prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0));
	say("read back: %ld\n", (long)prctl(PR_GET_KEEPCAPS, 0, 0, 0, 0));
	pthread_barrier_wait(&set);
	pthread_barrier_wait(&seen);
	pthread_join(e, NULL);
	say("a thread made before: %ld\n", early_value);
	pthread_create(&l, NULL, late, NULL);
	pthread_join(l, NULL);
	say("a thread made after: %ld\n", late_value);
	pid_t c = fork();
	if (c == 0)
		_exit((int)prctl(PR_GET_KEEPCAPS, 0, 0, 0, 0));
	int st;
	waitpid(c, &st, 0);
	say("a forked child: %d\n", WEXITSTATUS(st));
	fflush(stdout);
	execl("/proc/self/exe", argv[0], "exec", (char *)NULL);
	say("execl: %s\n", errname(errno));
	return 1;
}

/* clone_parent: clone(CLONE_PARENT). usage: clone_parent MODE
 *   sibling  a child's CLONE_PARENT child is our child: its getppid() is us, its middle "parent" gets
 *            ECHILD from waitpid, we reap it with its status
 *   init     CLONE_PARENT from pid 1 (pvx's first process, a pid namespace's init): EINVAL
 *   settid   fork with CLONE_CHILD_SETTID: the child finds its tid in the word as soon as it runs (glibc's
 *            cached tid, which its robust and error-checking mutexes use, comes from there), 100 times */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	const char *m = argc > 1 ? argv[1] : "";
	int p[2];

	setvbuf(stdout, NULL, _IONBF, 0);
	alarm(20);
	if (!strcmp(m, "init")) {
		long r = syscall(SYS_clone, CLONE_PARENT | SIGCHLD, 0, 0, 0, 0);
		if (r == 0)
			_exit(0);
		printf("pid %d: clone(CLONE_PARENT): %s\n", getpid(), r > 0 ? "ok" : errno == EINVAL ? "EINVAL" : strerror(errno));
		return 0;
	}
	if (!strcmp(m, "settid")) {
		static volatile int word;
		int ok = 0;
		for (int i = 0; i < 100; i++) {
			word = 0;
			long c = syscall(SYS_clone, CLONE_CHILD_SETTID | SIGCHLD, 0, 0, &word, 0);
			if (c == 0)
				_exit(word == getpid() ? 0 : 1);
			int st;
			waitpid((pid_t)c, &st, 0);
			ok += WIFEXITED(st) && WEXITSTATUS(st) == 0;
		}
		printf("child saw its tid at once: %d/100\n", ok);
		return 0;
	}
	if (strcmp(m, "sibling") || pipe(p))
		return 2;
	pid_t me = getpid();
	pid_t a = fork();
	if (a == 0) {
		long g = syscall(SYS_clone, CLONE_PARENT | SIGCHLD, 0, 0, 0, 0);
		if (g == 0)	/* its answer in its status, so that only the first process prints in order */
			_exit(getppid() == me ? 7 : 8);
		int gi = (int)g;
		if (write(p[1], &gi, sizeof(gi)) != sizeof(gi))
			_exit(3);
		printf("middle: waitpid(its CLONE_PARENT child): %s\n",
		       waitpid(gi, NULL, 0) < 0 && errno == ECHILD ? "ECHILD" : "reaped");
		_exit(0);
	}
	int g, st;
	if (read(p[0], &g, sizeof(g)) != sizeof(g))
		return 2;
	waitpid(a, &st, 0);
	printf("middle exited %d\n", WEXITSTATUS(st));
	pid_t w = waitpid(g, &st, 0);
	printf("first process reaps the grandchild: %s, status %d\n", w == g ? "yes" : "no", WEXITSTATUS(st));
	printf("grandchild: getppid() was the first process: %s\n", WEXITSTATUS(st) == 7 ? "yes" : "no");
	printf("no more children: %s\n", waitpid(-1, NULL, WNOHANG) < 0 && errno == ECHILD ? "yes" : "no");
	return 0;
}

/* sec_stub_reaper: a native test helper (not a guest). It becomes a child subreaper, runs COMMAND (pvx),
 * writes its pid to PIDFILE and waits for it. Whatever COMMAND left behind is reparented to us: we reap it
 * and count it, bounded by 10 s. Prints "status S" (as a shell reports it) and "orphans N".
 * usage: sec_stub_reaper PIDFILE COMMAND ARGS... */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) < 0) {
		perror("PR_SET_CHILD_SUBREAPER");
		return 2;
	}
	pid_t pid = fork();
	if (pid == 0) {
		/* a background shell job starts with SIGINT ignored, and pvx would keep that */
		signal(SIGINT, SIG_DFL);
		signal(SIGHUP, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		execv(argv[2], argv + 2);
		_exit(127);
	}
	FILE *f = fopen(argv[1], "w");
	if (!f)
		return 2;
	fprintf(f, "%d\n", pid);
	fclose(f);
	int st, orphans = 0;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return 2;
	alarm(10);
	while (wait(NULL) > 0)
		orphans++;
	printf("status %d\norphans %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st), orphans);
	return 0;
}

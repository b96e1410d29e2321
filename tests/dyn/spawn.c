// SPDX-License-Identifier: GPL-2.0
/*
 * posix_spawn of a program that does not exist, and system()/popen() of the
 * dynamic /bin/sh (tests/dynamic.bats). glibc's posix_spawn learns the
 * child's exec failure through memory it shares with the child (vfork):
 * with a copy instead, it would report success and a 127 exit.
 */
#include <errno.h>
#include <stdlib.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

extern char **environ;

int main(void)
{
	char *argv[] = { "nope", NULL };
	pid_t pid;
	int r = posix_spawn(&pid, "/nonexistent/pvx-nope", NULL, NULL, argv, environ);
	printf("posix_spawn of a missing program: %s\n", r ? strerror(r) : "succeeded");
	char *argv2[] = { "sh", "-c", "exit 7", NULL };
	int st = 0;
	r = posix_spawn(&pid, "/bin/sh", NULL, NULL, argv2, environ);
	if (!r)
		waitpid(pid, &st, 0);
	printf("posix_spawn of /bin/sh -c 'exit 7': %d, status %d\n", r, WEXITSTATUS(st));
	fflush(stdout);
	st = system("echo from system; exit 3");
	printf("system: %d\n", WEXITSTATUS(st));
	FILE *p = popen("echo one; echo two", "r");
	char line[64];
	while (p && fgets(line, sizeof(line), p))
		printf("popen read: %s", line);
	printf("pclose: %d\n", p ? WEXITSTATUS(pclose(p)) : -1);
	return 0;
}

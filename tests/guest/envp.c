/* envp: prints the environment entries whose name starts with PVXT_ in envp order,
 * and checks that envp sits right after argv's NULL (the initial-stack layout). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern char **environ;

int main(int argc, char **argv, char **envp)
{
	int n = 0;

	printf("envp==argv+argc+1: %s\n", envp == argv + argc + 1 ? "yes" : "no");
	printf("environ==envp: %s\n", environ == envp ? "yes" : "no");
	for (char **e = envp; *e; e++) {
		if (strncmp(*e, "PVXT_", 5) == 0) {
			printf("env: %s\n", *e);
			n++;
		}
	}
	printf("PVXT count=%d\n", n);
	const char *v = getenv("PVXT_A");
	printf("getenv(PVXT_A)=%s\n", v ? v : "(unset)");
	return 0;
}

/* exitcode: exits with argv[1] (default 42); "raw" as argv[2] uses the exit syscall directly (no atexit,
 * no stdio flush), "group" uses exit_group. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int code = argc > 1 ? atoi(argv[1]) : 42;
	printf("exiting with %d\n", code);
	fflush(stdout);
	if (argc > 2 && !strcmp(argv[2], "raw"))
		syscall(SYS_exit, code);
	if (argc > 2 && !strcmp(argv[2], "group"))
		syscall(SYS_exit_group, code);
	if (argc > 2 && !strcmp(argv[2], "return"))
		return code;
	exit(code);
}

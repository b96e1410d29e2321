/* exec_noargv: execve with a NULL argv starts the program with argc 1 and argv[0] "", as Linux since 5.18. */
#include <string.h>
#include <sys/syscall.h>

#include "guest.h"

int main(int argc, char **argv)
{
	if (argc == 0 || !strcmp(argv[0], "")) {
		say("execed: argc %d, argv[0] \"%s\", argv[argc] NULL: %s\n", argc, argc ? argv[0] : "-",
		    yesno(!argv[argc]));
		return 0;
	}
	char *envp[] = { NULL };
	long r = syscall(SYS_execve, "/proc/self/exe", NULL, envp);
	say("execve: %ld %s\n", r, errname(errno));
	return 1;
}

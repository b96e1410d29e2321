/* The first program to run in pvx: pvx run -- build/examples/hello */
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	printf("hello from pid %d in the sandbox (argv[0]=%s, %d args)\n", getpid(), argv[0], argc);
	return 0;
}

/* ids: prints raw identity values (not comparable with a native run; the sandbox gives pid 1). */
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(void)
{
	int tidaddr;
	printf("pid=%ld\n", syscall(SYS_getpid));
	printf("tid=%ld\n", syscall(SYS_gettid));
	printf("set_tid_address=%ld\n", syscall(SYS_set_tid_address, &tidaddr));
	printf("ppid=%ld\n", syscall(SYS_getppid));
	printf("uid=%ld euid=%ld gid=%ld egid=%ld\n", syscall(SYS_getuid), syscall(SYS_geteuid),
	       syscall(SYS_getgid), syscall(SYS_getegid));
	return 0;
}

/* kcmp_probe: exit 0 when this kernel's kcmp(2) compares files (KCMP_FILE of fd 0 with itself), 1 when
 * it has none (ENOSYS: CONFIG_KCMP off, as in the test VM's tinyconfig kernel). Tests that depend on
 * the kernel pvx runs on ask this instead of guessing from /proc/kallsyms, where a COND_SYSCALL stub
 * has the name too. */
#include <sys/syscall.h>
#include <unistd.h>

int main(void)
{
	return syscall(SYS_kcmp, getpid(), getpid(), 0 /* KCMP_FILE */, 0, 0) == 0 ? 0 : 1;
}

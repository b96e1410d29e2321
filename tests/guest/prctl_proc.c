/* prctl_proc: prctl options of process state, each compared with Linux.
 *   pdeath     PR_SET/GET_PDEATHSIG: the signal comes when the parent process dies; EINVAL past 64
 *   subreaper  PR_SET/GET_CHILD_SUBREAPER: an orphaned grandchild becomes our child; not inherited
 *   slack      PR_SET/GET_TIMERSLACK: kept, 0 resets to the creator's, inherited; /proc/self/timerslack_ns
 *   errors     the EINVAL/EPERM cases of prctl(2) (LTP prctl02's)
 *   arch       arch_prctl ARCH_GET/SET_CPUID where the CPU has no CPUID faulting */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guest.h"

/* "ok" for a result >= 0, else errno's name */
static const char *ename(long r)
{
	return r >= 0 ? "ok" : errno == ENODEV ? "ENODEV" : errname(errno);
}

static int pfd[2];

static void on_usr1(int sig)
{
	char c = (char)sig;
	(void)!write(pfd[1], &c, 1);
}

static int pdeath(void)
{
	int got = -1;
	say("set 65: %s\n", ename(prctl(PR_SET_PDEATHSIG, 65)));
	say("set SIGUSR2: %s\n", ename(prctl(PR_SET_PDEATHSIG, SIGUSR2)));
	prctl(PR_GET_PDEATHSIG, &got);
	say("get: %d\n", got);
	prctl(PR_SET_PDEATHSIG, 0);
	if (pipe(pfd) < 0)
		return 1;
	pid_t mid = fork();
	if (mid == 0) {
		int ready[2];
		if (pipe(ready) < 0)
			_exit(1);
		pid_t gc = fork();
		if (gc == 0) {
			signal(SIGUSR1, on_usr1);
			got = -1;
			prctl(PR_GET_PDEATHSIG, &got);
			char c = (char)got;	/* a new child starts without one */
			prctl(PR_SET_PDEATHSIG, SIGUSR1);
			(void)!write(ready[1], &c, 1);
			for (int i = 0; i < 1000; i++)
				usleep(10000);	/* the handler writes the pipe; the test ends us */
			_exit(0);
		}
		char c;
		(void)!read(ready[0], &c, 1);
		(void)!write(pfd[1], &c, 1);
		_exit(0);	/* the grandchild's parent dies: it gets SIGUSR1 */
	}
	close(pfd[1]);
	char c[2] = { 0 };
	waitpid(mid, NULL, 0);
	(void)!read(pfd[0], &c[0], 1);
	say("grandchild's inherited pdeath signal: %d\n", c[0]);
	(void)!read(pfd[0], &c[1], 1);
	say("grandchild got on its parent's death: %d\n", c[1]);
	return 0;
}

static int subreaper(void)
{
	int v = -1, sync_[2];
	pid_t me = getpid();

	prctl(PR_GET_CHILD_SUBREAPER, &v);
	say("get before: %d\n", v);
	say("set: %s\n", ename(prctl(PR_SET_CHILD_SUBREAPER, 1)));
	prctl(PR_GET_CHILD_SUBREAPER, &v);
	say("get after: %d\n", v);
	if (pipe(sync_) < 0)
		return 1;
	pid_t mid = fork();
	if (mid == 0) {
		v = -1;
		prctl(PR_GET_CHILD_SUBREAPER, &v);
		say("child's flag: %d\n", v);
		if (fork() == 0) {
			char c;
			close(sync_[1]);
			(void)!read(sync_[0], &c, 1);	/* until the test says its parent is gone */
			_exit(getppid() == me ? 42 : 43);
		}
		_exit(0);
	}
	close(sync_[0]);
	waitpid(mid, NULL, 0);
	close(sync_[1]);
	int st;
	pid_t r = wait(&st);
	say("orphan reaped by the subreaper: %s, status %d\n", r > 0 ? "yes" : ename(r), WEXITSTATUS(st));
	return 0;
}

static long get_proc_slack(void)
{
	char buf[64] = { 0 };
	int fd = open("/proc/self/timerslack_ns", O_RDONLY);
	if (fd < 0 || read(fd, buf, sizeof(buf) - 1) <= 0)
		return -1;
	close(fd);
	return strtol(buf, NULL, 10);
}

static int slack(void)
{
	long def = prctl(PR_GET_TIMERSLACK);
	say("proc says the default: %s\n", yesno(get_proc_slack() == def));
	const char *e = ename(prctl(PR_SET_TIMERSLACK, 1));
	say("set 1: %s get %ld\n", e, (long)prctl(PR_GET_TIMERSLACK));
	e = ename(prctl(PR_SET_TIMERSLACK, 70000));
	long got = prctl(PR_GET_TIMERSLACK);
	say("set 70000: %s get %ld proc %ld\n", e, got, get_proc_slack());
	pid_t c = fork();
	if (c == 0) {
		long got = prctl(PR_GET_TIMERSLACK);
		prctl(PR_SET_TIMERSLACK, 0);
		say("child: %ld, reset to %ld\n", got, (long)prctl(PR_GET_TIMERSLACK));
		_exit(0);
	}
	waitpid(c, NULL, 0);
	say("set 0 resets: %s\n", yesno(prctl(PR_SET_TIMERSLACK, 0) == 0 && prctl(PR_GET_TIMERSLACK) == def));
	prctl(PR_SET_TIMERSLACK, 2147483647L);
	say("set INT_MAX: get %ld\n", (long)prctl(PR_GET_TIMERSLACK));
	return 0;
}

static int errors(void)
{
	say("invalid option: %s\n", ename(prctl(999, 1, 0, 0, 0)));
	say("GET_NO_NEW_PRIVS 1: %s\n", ename(prctl(PR_GET_NO_NEW_PRIVS, 1, 0, 0, 0)));
	say("SET_THP_DISABLE arg3: %s\n", ename(prctl(PR_SET_THP_DISABLE, 0, 1, 0, 0)));
	say("GET_THP_DISABLE 1: %s\n", ename(prctl(PR_GET_THP_DISABLE, 1, 1, 0, 0)));
	const char *e = ename(prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0));
	say("THP set 1, get: %s %ld\n", e, (long)prctl(PR_GET_THP_DISABLE, 0, 0, 0, 0));
	say("CAP_AMBIENT bad op: %s\n", ename(prctl(PR_CAP_AMBIENT, -1L, 0, 0, 0)));
	say("CAP_AMBIENT CLEAR_ALL 1: %s\n", ename(prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 1, 0, 0)));
	say("CAP_AMBIENT CLEAR_ALL: %s\n", ename(prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)));
	say("CAP_AMBIENT IS_SET bad cap: %s\n", ename(prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET, -1L, 0, 0)));
	say("CAP_AMBIENT IS_SET 0: %s\n", ename(prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET, 0, 0, 0)));
	say("CAP_AMBIENT RAISE 0: %s\n", ename(prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, 0, 0, 0)));
	say("GET_SPECULATION_CTRL arg3: %s\n", ename(prctl(PR_GET_SPECULATION_CTRL, 0, -1L, 0, 0)));
	say("GET_SECUREBITS: %s\n", ename(prctl(PR_GET_SECUREBITS, 0, 0, 0, 0)));
	say("SET_TIMING 1: %s\n", ename(prctl(PR_SET_TIMING, 1, 0, 0, 0)));
	say("GET_TIMING: %s\n", ename(prctl(PR_GET_TIMING, 0, 0, 0, 0)));
	say("GET_PDEATHSIG bad ptr: %s\n", ename(prctl(PR_GET_PDEATHSIG, 8L, 0, 0, 0)));
	say("GET_CHILD_SUBREAPER bad ptr: %s\n", ename(prctl(PR_GET_CHILD_SUBREAPER, 8L, 0, 0, 0)));
	return 0;
}

/* arch_prctl's CPUID faulting on a CPU without it: ENODEV, CPUID stays enabled */
static int arch(void)
{
	say("ARCH_GET_CPUID: %ld\n", syscall(SYS_arch_prctl, 0x1011, 0));
	say("ARCH_SET_CPUID 0: %s\n", ename(syscall(SYS_arch_prctl, 0x1012, 0)));
	say("ARCH_SET_CPUID 1: %s\n", ename(syscall(SYS_arch_prctl, 0x1012, 1)));
	say("ARCH_GET_CPUID after: %ld\n", syscall(SYS_arch_prctl, 0x1011, 0));
	say("arch_prctl 0x9999: %s\n", ename(syscall(SYS_arch_prctl, 0x9999, 0)));
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IONBF, 0);
	if (argc < 2)
		return 2;
	if (!strcmp(argv[1], "pdeath"))
		return pdeath();
	if (!strcmp(argv[1], "subreaper"))
		return subreaper();
	if (!strcmp(argv[1], "slack"))
		return slack();
	if (!strcmp(argv[1], "errors"))
		return errors();
	if (!strcmp(argv[1], "arch"))
		return arch();
	return 2;
}

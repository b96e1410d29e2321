/* misc: identity, uname, getrandom, rlimits, sysinfo, affinity, signal bookkeeping, ioctl on non-ttys.
 * Prints relations, not host-specific values, so native and sandbox output agree. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/sysinfo.h>
#include <sys/utsname.h>
#include <termios.h>
#include <unistd.h>

static const char *yesno(int c) { return c ? "yes" : "no"; }
static const char *ename(int e)
{
	switch (e) {
	case EINVAL: return "EINVAL";
	case ENOTTY: return "ENOTTY";
	case EBADF: return "EBADF";
	case EFAULT: return "EFAULT";
	case EPERM: return "EPERM";
	case ENOSYS: return "ENOSYS";
	default: return "E?";
	}
}
#define SHOW(label, expr) do { errno = 0; long r_ = (long)(expr); \
	printf("%s = %ld %s\n", label, r_, r_ < 0 ? ename(errno) : ""); } while (0)

static void handler(int sig) { (void)sig; }

int main(void)
{
	/* identity */
	long pid = syscall(SYS_getpid), tid = syscall(SYS_gettid);
	printf("getpid>0: %s, gettid==getpid: %s\n", yesno(pid > 0), yesno(tid == pid));
	printf("getppid>=0: %s, getppid!=getpid: %s\n", yesno(syscall(SYS_getppid) >= 0), yesno(syscall(SYS_getppid) != pid));
	int tidaddr;
	printf("set_tid_address returns tid: %s\n", yesno(syscall(SYS_set_tid_address, &tidaddr) == tid));
	printf("uid==euid: %s, gid==egid: %s\n", yesno(getuid() == geteuid()), yesno(getgid() == getegid()));
	long head[3] = { 0, 0, 0 };
	SHOW("set_robust_list", syscall(SYS_set_robust_list, head, 24));
	SHOW("set_robust_list bad len", syscall(SYS_set_robust_list, head, 7));

	/* uname */
	struct utsname u;
	SHOW("uname", uname(&u));
	printf("sysname=%s machine=%s\n", u.sysname, u.machine);
	printf("release nonempty: %s, nodename nonempty: %s\n", yesno(u.release[0] != 0), yesno(u.nodename[0] != 0));

	/* getrandom */
	unsigned char r1[64], r2[64];
	memset(r1, 0, sizeof(r1));
	memset(r2, 0, sizeof(r2));
	SHOW("getrandom 64", syscall(SYS_getrandom, r1, 64, 0));
	SHOW("getrandom 64 GRND_NONBLOCK", syscall(SYS_getrandom, r2, 64, 1));
	printf("two draws differ: %s\n", yesno(memcmp(r1, r2, 64) != 0));
	SHOW("getrandom 0", syscall(SYS_getrandom, r1, 0, 0));
	SHOW("getrandom 1", syscall(SYS_getrandom, r1, 1, 0));
	SHOW("getrandom bad flags", syscall(SYS_getrandom, r1, 8, 0x1000));
	static unsigned char bigr[1 << 20];
	long got = syscall(SYS_getrandom, bigr, sizeof(bigr), 0);
	printf("getrandom 1MiB returns > 0: %s\n", yesno(got > 0));

	/* an option no Linux has: EINVAL, and pvx says nothing on the guest's stderr unless --debug */
	SHOW("prctl(unknown option)", syscall(SYS_prctl, 0x7fff1234, 0, 0, 0, 0));

	/* rlimits: getrlimit and prlimit64 agree */
	struct rlimit rl, rl2;
	SHOW("getrlimit NOFILE", getrlimit(RLIMIT_NOFILE, &rl));
	printf("NOFILE cur<=max: %s, cur>=3: %s\n", yesno(rl.rlim_cur <= rl.rlim_max), yesno(rl.rlim_cur >= 3));
	SHOW("prlimit64 STACK", syscall(SYS_prlimit64, 0, RLIMIT_STACK, NULL, &rl));
	SHOW("getrlimit STACK", syscall(SYS_getrlimit, RLIMIT_STACK, &rl2));
	printf("prlimit64 == getrlimit: %s\n", yesno(rl.rlim_cur == rl2.rlim_cur && rl.rlim_max == rl2.rlim_max));
	SHOW("getrlimit bad resource", syscall(SYS_getrlimit, 999, &rl));

	/* sysinfo */
	struct sysinfo si;
	SHOW("sysinfo", sysinfo(&si));
	printf("totalram>0: %s, mem_unit>0: %s, freeram<=totalram: %s, procs>0: %s\n", yesno(si.totalram > 0),
	       yesno(si.mem_unit > 0), yesno(si.freeram <= si.totalram), yesno(si.procs > 0));

	/* sched_getaffinity: returns the mask size in bytes; the CPUs we were started on (not one the
	 * sandbox may have pinned its own threads to) */
	cpu_set_t set;
	CPU_ZERO(&set);
	long n = syscall(SYS_sched_getaffinity, 0, sizeof(set), &set);
	printf("sched_getaffinity > 0: %s, multiple of 8: %s, cpus: %d\n", yesno(n > 0), yesno(n % 8 == 0),
	       CPU_COUNT(&set));
	SHOW("sched_getaffinity tiny", syscall(SYS_sched_getaffinity, 0, 1, &set));
	SHOW("sched_yield", syscall(SYS_sched_yield));

	/* signal disposition and mask are recorded and read back */
	struct sigaction sa, old;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = handler;
	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, SIGUSR2);
	SHOW("sigaction SIGUSR1 set", sigaction(SIGUSR1, &sa, NULL));
	SHOW("sigaction SIGUSR1 get", sigaction(SIGUSR1, NULL, &old));
	printf("handler read back: %s, mask read back: %s\n", yesno(old.sa_handler == handler),
	       yesno(sigismember(&old.sa_mask, SIGUSR2) == 1));
	SHOW("sigaction SIGKILL", sigaction(SIGKILL, &sa, NULL));
	SHOW("sigaction signal 0", sigaction(0, &sa, NULL));
	SHOW("rt_sigaction bad sigsetsize", syscall(SYS_rt_sigaction, SIGUSR1, NULL, &old, 4));
	sigset_t m, o;
	sigemptyset(&m);
	sigaddset(&m, SIGUSR1);
	SHOW("sigprocmask block USR1", sigprocmask(SIG_BLOCK, &m, NULL));
	SHOW("sigprocmask get", sigprocmask(SIG_BLOCK, NULL, &o));
	printf("USR1 blocked: %s, USR2 blocked: %s\n", yesno(sigismember(&o, SIGUSR1) == 1), yesno(sigismember(&o, SIGUSR2) == 1));
	sigaddset(&m, SIGKILL);
	sigprocmask(SIG_SETMASK, &m, NULL);
	sigprocmask(SIG_SETMASK, NULL, &o);
	printf("SIGKILL cannot be blocked: %s\n", yesno(sigismember(&o, SIGKILL) == 0));
	SHOW("sigprocmask bad how", syscall(SYS_rt_sigprocmask, 99, &m, NULL, 8));

	/* ioctl on a non-terminal */
	int fd = open("/", O_RDONLY);
	struct winsize ws;
	struct termios t;
	SHOW("ioctl TIOCGWINSZ on dir", ioctl(fd, TIOCGWINSZ, &ws));
	SHOW("ioctl TCGETS on dir", ioctl(fd, TCGETS, &t));
	SHOW("ioctl bad fd", ioctl(99, TCGETS, &t));
	close(fd);
	return 0;
}

/* vdso: the clocks a program reads without a syscall (AT_SYSINFO_EHDR) agree with the syscalls'.
 * Interleaves libc's clock_gettime (the vDSO's, when there is one) with raw syscalls on each clock
 * and checks that time never goes back across them, that time(), gettimeofday() and CLOCK_REALTIME
 * agree, and that the vDSO still answers in a forked child and after it execs.
 * usage: vdso [child]
 *        vdso badptr   clock_gettime into an unmapped address: the vDSO faults, and the guest gets
 *                      SIGSEGV as natively (never the sentry or the stub) */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int64_t ns(const struct timespec *t)
{
	return (int64_t)t->tv_sec * 1000000000 + t->tv_nsec;
}

static void clocks(const char *who)
{
	static const struct { clockid_t id; const char *name; } c[] = {
		{ CLOCK_REALTIME, "REALTIME" }, { CLOCK_MONOTONIC, "MONOTONIC" }, { CLOCK_BOOTTIME, "BOOTTIME" },
		{ CLOCK_MONOTONIC_RAW, "MONOTONIC_RAW" }, { CLOCK_REALTIME_COARSE, "REALTIME_COARSE" },
		{ CLOCK_MONOTONIC_COARSE, "MONOTONIC_COARSE" }, { CLOCK_TAI, "TAI" },
	};
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		struct timespec a, b;
		int back = 0;
		clock_gettime(c[i].id, &a);
		for (int k = 0; k < 2000; k++) {
			if (k & 1)
				clock_gettime(c[i].id, &b);
			else
				syscall(SYS_clock_gettime, c[i].id, &b);
			back += ns(&b) < ns(&a);
			a = b;
		}
		printf("%s: %s never goes back across vDSO and syscall reads: %s\n", who, c[i].name, back ? "NO" : "yes");
	}
	struct timespec r, s;
	struct timeval tv;
	clock_gettime(CLOCK_REALTIME, &r);
	gettimeofday(&tv, NULL);
	/* time() reads the coarse clock, which lags CLOCK_REALTIME by up to a tick: across a second's
	 * edge it says the second before, natively too. */
	time_t t = time(NULL);
	syscall(SYS_clock_gettime, CLOCK_REALTIME, &s);
	printf("%s: time, gettimeofday and the syscall within 1 s of CLOCK_REALTIME: %s\n", who,
	       t - r.tv_sec <= 1 && tv.tv_sec - r.tv_sec <= 1 && s.tv_sec - r.tv_sec <= 1 && t >= r.tv_sec - 1 ? "yes" : "NO");
	struct timespec p;
	printf("%s: CLOCK_PROCESS_CPUTIME_ID (a syscall from the vDSO too): %s\n", who,
	       clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &p) == 0 && ns(&p) > 0 ? "yes" : "NO");
	printf("%s: an invalid clock is EINVAL: %s\n", who, clock_gettime(12345, &p) < 0 ? "yes" : "NO");
}

int main(int argc, char **argv)
{
	const char *who = argc > 1 ? argv[1] : "parent";

	if (argc > 1 && !strcmp(argv[1], "badptr")) {
		printf("before\n");
		fflush(stdout);
		clock_gettime(CLOCK_MONOTONIC, (struct timespec *)16);
		printf("not reached\n");
		return 0;
	}

	printf("%s: AT_SYSINFO_EHDR present: %s\n", who, getauxval(AT_SYSINFO_EHDR) ? "yes" : "no");
	if (getauxval(AT_SYSINFO_EHDR))
		printf("%s: it is an ELF image: %s\n", who,
		       !memcmp((void *)getauxval(AT_SYSINFO_EHDR), "\177ELF", 4) ? "yes" : "NO");
	clocks(who);
	if (argc > 1)
		return 0;
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		clocks("child");
		fflush(stdout);
		execl("/proc/self/exe", "vdso", "execed", (char *)NULL);
		_exit(127);
	}
	int st;
	waitpid(pid, &st, 0);
	printf("child status %d\n", WEXITSTATUS(st));
	return 0;
}

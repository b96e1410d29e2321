/* creds: ids, groups, nice values, scheduling policies, resource limits, getcpu.
 * usage: creds ids|prio|sched|rlimit|sandbox
 *   ids      get/set*id to the ids the process has, getgroups, setfsuid's answer
 *   prio     getpriority/setpriority: relative to the starting nice value, inherited by fork, errors
 *   sched    SCHED_OTHER/BATCH/IDLE, priority ranges, errors
 *   rlimit   setrlimit/getrlimit/prlimit: RLIMIT_NOFILE enforced on open, kept across fork and exec
 *   sandbox  what differs from a root host on purpose: other ids EPERM, no capabilities, no real-time
 * Output is host-independent (relations, not values) so native and sandbox runs agree, except
 * 'sandbox', which the caller checks on its own. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "guest.h"

/* "ok" for a result >= 0, else errno's name */
static const char *ename(long r)
{
	return r >= 0 ? "ok" : errname(errno);
}

#define SHOW(what, call)                                                                                 \
	do {                                                                                             \
		errno = 0;                                                                               \
		long r_ = (call);                                                                        \
		say("%s: %s\n", what, ename(r_));                                                       \
	} while (0)

static int mode_ids(void)
{
	uid_t r, e, s;
	gid_t gr, ge, gs;
	getresuid(&r, &e, &s);
	getresgid(&gr, &ge, &gs);
	say("getresuid = getuid x3: %s, getresgid = getgid x3: %s\n",
	    yesno(r == getuid() && e == getuid() && s == getuid()),
	    yesno(gr == getgid() && ge == getgid() && gs == getgid()));
	SHOW("setuid(own uid)", syscall(SYS_setuid, getuid()));
	SHOW("setgid(own gid)", syscall(SYS_setgid, getgid()));
	SHOW("setreuid(-1, own)", syscall(SYS_setreuid, -1, getuid()));
	SHOW("setresuid(-1, -1, -1)", syscall(SYS_setresuid, -1, -1, -1));
	SHOW("setresgid(own, own, own)", syscall(SYS_setresgid, getgid(), getgid(), getgid()));
	SHOW("setuid(-1)", syscall(SYS_setuid, -1));
	say("setfsuid(-1) answers the uid: %s\n", yesno(setfsuid(-1) == (int)getuid()));
	int n = getgroups(0, NULL);
	gid_t g[1024];
	int m = getgroups(1024, g);
	say("getgroups(0) = getgroups(list): %s\n", yesno(n == m && n >= 0));
	errno = 0;
	long small = n > 0 ? syscall(SYS_getgroups, n - 1, g) : 0;
	say("getgroups with a list too small: %s\n", n > 0 ? ename(small) : "EINVAL");
	SHOW("setgroups(the same groups)", setgroups((size_t)m, g));
	return 0;
}

static int mode_prio(void)
{
	errno = 0;
	int n0 = getpriority(PRIO_PROCESS, 0);
	say("getpriority: %s\n", errno ? ename(-1) : "ok");
	SHOW("setpriority(+3)", setpriority(PRIO_PROCESS, 0, n0 + 3));
	say("now nice + 3: %s, raw syscall 20 - nice: %s\n", yesno(getpriority(PRIO_PROCESS, 0) == n0 + 3),
	    yesno(syscall(SYS_getpriority, PRIO_PROCESS, 0) == 20 - (n0 + 3)));
	pid_t c = fork();
	if (c == 0)
		_exit(getpriority(PRIO_PROCESS, 0) == n0 + 3 ? 0 : 1);
	say("fork child inherits it: %s\n", yesno(wait_child(c) == 0));
	c = fork();
	if (c == 0) {
		pause();
		_exit(0);
	}
	SHOW("setpriority(child, +5)", setpriority(PRIO_PROCESS, c, n0 + 5));
	say("child's nice + 5, ours still + 3: %s\n",
	    yesno(getpriority(PRIO_PROCESS, c) == n0 + 5 && getpriority(PRIO_PROCESS, 0) == n0 + 3));
	kill(c, SIGKILL);
	wait_child(c);
	SHOW("getpriority(no such pid)", getpriority(PRIO_PROCESS, 999999) == -1 && errno ? -1 : 0);
	SHOW("getpriority(which 7)", syscall(SYS_getpriority, 7, 0));
	SHOW("setpriority(+30) clamps", setpriority(PRIO_PROCESS, 0, 30));
	say("clamped to 19: %s\n", yesno(getpriority(PRIO_PROCESS, 0) == 19));
	return 0;
}

static int mode_sched(void)
{
	struct sched_param sp = { 0 };
	say("policy SCHED_OTHER: %s\n", yesno(sched_getscheduler(0) == SCHED_OTHER));
	SHOW("sched_getparam", sched_getparam(0, &sp));
	say("priority 0: %s\n", yesno(sp.sched_priority == 0));
	SHOW("SCHED_BATCH", sched_setscheduler(0, SCHED_BATCH, &sp));
	say("policy now SCHED_BATCH: %s\n", yesno(sched_getscheduler(0) == SCHED_BATCH));
	pid_t c = fork();
	if (c == 0)
		_exit(sched_getscheduler(0) == SCHED_BATCH ? 0 : 1);
	say("fork child inherits it: %s\n", yesno(wait_child(c) == 0));
	SHOW("SCHED_IDLE", sched_setscheduler(0, SCHED_IDLE, &sp));
	SHOW("back to SCHED_OTHER", sched_setscheduler(0, SCHED_OTHER, &sp));
	SHOW("sched_setparam(0) keeps the policy", sched_setparam(0, &sp));
	sp.sched_priority = 5;
	SHOW("SCHED_OTHER priority 5", sched_setscheduler(0, SCHED_OTHER, &sp));
	SHOW("policy 42", sched_setscheduler(0, 42, &sp));
	SHOW("sched_getscheduler(-1)", sched_getscheduler(-1));
	SHOW("sched_getscheduler(no such pid)", sched_getscheduler(999999));
	say("FIFO %d..%d, RR %d..%d, OTHER %d..%d, BATCH %d..%d\n", sched_get_priority_min(SCHED_FIFO),
	    sched_get_priority_max(SCHED_FIFO), sched_get_priority_min(SCHED_RR), sched_get_priority_max(SCHED_RR),
	    sched_get_priority_min(SCHED_OTHER), sched_get_priority_max(SCHED_OTHER),
	    sched_get_priority_min(SCHED_BATCH), sched_get_priority_max(SCHED_BATCH));
	SHOW("sched_get_priority_max(77)", sched_get_priority_max(77));
	SHOW("sched_get_priority_max(SCHED_DEADLINE)", sched_get_priority_max(6));
	SHOW("sched_get_priority_min(SCHED_DEADLINE)", sched_get_priority_min(6));
	unsigned cpu = 99999, node = 99999;
	SHOW("getcpu", syscall(SYS_getcpu, &cpu, &node, NULL));
	say("cpu < 4096: %s, node 0: %s\n", yesno(cpu < 4096), yesno(node == 0));
	return 0;
}

static int first_emfile(void)
{
	int last = -1;
	for (int i = 0; i < 4096; i++) {
		int fd = open("/dev/null", O_RDONLY);
		if (fd < 0)
			return errno == EMFILE ? last + 1 : -errno;
		last = fd;
	}
	return -1;
}

static int mode_rlimit(int argc, char **argv)
{
	struct rlimit rl, got;
	if (argc > 2) { /* re-exec'd: the limit survived execve */
		getrlimit(RLIMIT_NOFILE, &got);
		say("after execve: NOFILE soft %ld, core %ld\n", (long)got.rlim_cur, (long)(getrlimit(RLIMIT_CORE, &rl), rl.rlim_cur));
		return 0;
	}
	getrlimit(RLIMIT_NOFILE, &rl);
	say("NOFILE soft <= hard: %s\n", yesno(rl.rlim_cur <= rl.rlim_max));
	struct rlimit small = { 16, rl.rlim_max };
	SHOW("setrlimit(NOFILE, 16)", setrlimit(RLIMIT_NOFILE, &small));
	getrlimit(RLIMIT_NOFILE, &got);
	say("read back: soft %ld, hard unchanged %s\n", (long)got.rlim_cur, yesno(got.rlim_max == rl.rlim_max));
	say("opens fail with EMFILE from fd %d\n", first_emfile());
	struct rlimit bad = { rl.rlim_max, 16 };
	SHOW("soft above hard", setrlimit(RLIMIT_NOFILE, &bad));
	struct rlimit core0 = { 0, 0 };
	SHOW("setrlimit(CORE, 0)", setrlimit(RLIMIT_CORE, &core0));
	getrlimit(RLIMIT_CORE, &got);
	say("CORE now %ld/%ld\n", (long)got.rlim_cur, (long)got.rlim_max);
	struct rlimit up = { 1, 1 };
	SHOW("raising the CORE hard limit back (EPERM without CAP_SYS_RESOURCE)", setrlimit(RLIMIT_CORE, &up));
	SHOW("resource 99", syscall(SYS_prlimit64, 0, 99, NULL, &got));
	pid_t c = fork();
	if (c == 0) {
		getrlimit(RLIMIT_NOFILE, &got);
		_exit(got.rlim_cur == 16 ? 0 : 1);
	}
	say("fork child has NOFILE 16: %s\n", yesno(wait_child(c) == 0));
	c = fork();
	if (c == 0) {
		pause();
		_exit(0);
	}
	struct rlimit child = { 20, rl.rlim_max };
	SHOW("prlimit(child, NOFILE 20)", prlimit(c, RLIMIT_NOFILE, &child, &got));
	say("old value came back: %ld\n", (long)got.rlim_cur);
	prlimit(c, RLIMIT_NOFILE, NULL, &got);
	say("child now %ld, ours still 16: %s\n", (long)got.rlim_cur,
	    yesno((getrlimit(RLIMIT_NOFILE, &rl), rl.rlim_cur == 16)));
	kill(c, SIGKILL);
	wait_child(c);
	for (int fd = 3; fd < 16; fd++)
		close(fd);
	fflush(stdout);
	execl("/proc/self/exe", argv[0], "rlimit", "again", (char *)NULL);
	say("execve failed\n");
	return 1;
}

static int mode_sandbox(void)
{
	SHOW("setuid(uid + 1)", syscall(SYS_setuid, getuid() + 1));
	SHOW("setresgid(-1, gid + 1, -1)", syscall(SYS_setresgid, -1, getgid() + 1, -1));
	struct { unsigned version; int pid; } h = { 0x20080522 /* _LINUX_CAPABILITY_VERSION_3 */, 0 };
	struct { unsigned effective, permitted, inheritable; } d[2];
	memset(d, 0xff, sizeof d);
	SHOW("capget", syscall(SYS_capget, &h, d));
	say("capabilities: %x %x %x\n", d[0].effective, d[0].permitted, d[0].inheritable);
	struct sched_param sp = { 10 };
	SHOW("SCHED_FIFO 10", syscall(SYS_sched_setscheduler, 0, SCHED_FIFO, &sp)); /* musl's wrapper is ENOSYS */
	return 0;
}

int main(int argc, char **argv)
{
	const char *m = argc > 1 ? argv[1] : "";
	if (!strcmp(m, "ids"))
		return mode_ids();
	if (!strcmp(m, "prio"))
		return mode_prio();
	if (!strcmp(m, "sched"))
		return mode_sched();
	if (!strcmp(m, "rlimit"))
		return mode_rlimit(argc, argv);
	if (!strcmp(m, "sandbox"))
		return mode_sandbox();
	say("usage: creds ids|prio|sched|rlimit|sandbox\n");
	return 2;
}

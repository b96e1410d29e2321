/*
 * proc_files: /proc/PID/comm, environ and limits agree with what the
 * process knows of itself (PR_GET_NAME, its envp, getrlimit), after
 * PR_SET_NAME, setrlimit, fork and an execve with a new environment.
 * Prints agreements and the guest's own strings: the same natively and in
 * the sandbox. usage: proc_files [exec]
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>

#include "guest.h"

static size_t slurp(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY);
	size_t n = 0;
	ssize_t r;

	if (fd < 0)
		return 0;
	while (n < size && (r = read(fd, buf + n, size - n)) > 0)
		n += (size_t)r;
	close(fd);
	return n;
}

/* Does /proc/self/environ hold exactly the strings of envp, each NUL-terminated? */
static const char *environ_matches(char **envp)
{
	static char want[65536], got[65536];
	size_t w = 0;

	for (char **e = envp; *e; e++) {
		size_t l = strlen(*e) + 1;
		if (w + l > sizeof(want))
			return "too big";
		memcpy(want + w, *e, l);
		w += l;
	}
	size_t g = slurp("/proc/self/environ", got, sizeof(got));
	return g == w && !memcmp(want, got, w) ? "yes" : "no";
}

/* Does every line of /proc/self/limits give getrlimit's values? */
static const char *limits_match(void)
{
	static const int order[] = { RLIMIT_CPU, RLIMIT_FSIZE, RLIMIT_DATA, RLIMIT_STACK, RLIMIT_CORE, RLIMIT_RSS,
				     RLIMIT_NPROC, RLIMIT_NOFILE, RLIMIT_MEMLOCK, RLIMIT_AS, RLIMIT_LOCKS,
				     RLIMIT_SIGPENDING, RLIMIT_MSGQUEUE, RLIMIT_NICE, RLIMIT_RTPRIO, RLIMIT_RTTIME };
	char buf[8192], *save, *line;
	size_t n = slurp("/proc/self/limits", buf, sizeof(buf) - 1);
	int i = -1;

	buf[n] = 0;
	if (strncmp(buf, "Limit                     Soft Limit           Hard Limit           Units     \n", 79))
		return "bad header";
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save), i++) {
		if (i < 0)
			continue;
		if (i >= (int)(sizeof(order) / sizeof(order[0])) || strlen(line) < 68)
			return "bad line";
		struct rlimit rl;
		char soft[32], hard[32];
		getrlimit(order[i], &rl);
		snprintf(soft, sizeof(soft), "%-20s", rl.rlim_cur == RLIM_INFINITY ? "unlimited" : "");
		if (rl.rlim_cur != RLIM_INFINITY)
			snprintf(soft, sizeof(soft), "%-20lu", (unsigned long)rl.rlim_cur);
		snprintf(hard, sizeof(hard), "%-20s", rl.rlim_max == RLIM_INFINITY ? "unlimited" : "");
		if (rl.rlim_max != RLIM_INFINITY)
			snprintf(hard, sizeof(hard), "%-20lu", (unsigned long)rl.rlim_max);
		if (strncmp(line + 26, soft, 20) || strncmp(line + 47, hard, 20))
			return "no";
	}
	return i == 16 ? "yes" : "short";
}

static void comm_check(const char *who)
{
	char name[17] = "", file[64] = "", path[64];

	prctl(PR_GET_NAME, name);
	strcat(name, "\n");
	slurp("/proc/self/comm", file, sizeof(file) - 1);
	snprintf(path, sizeof(path), "/proc/self/task/%ld/comm", (long)syscall(SYS_gettid));
	char task[64] = "";
	slurp(path, task, sizeof(task) - 1);
	say("%s: comm is PR_GET_NAME's: %s, the task's too: %s\n", who, yesno(!strcmp(name, file)),
	    yesno(!strcmp(name, task)));
}

int main(int argc, char **argv, char **envp)
{
	if (argc > 1 && !strcmp(argv[1], "exec")) {
		char buf[256];
		size_t n = slurp("/proc/self/environ", buf, sizeof(buf));
		for (size_t i = 0; i < n; i++)
			if (!buf[i])
				buf[i] = '|';
		say("after execve: environ \"%.*s\", matches envp: %s\n", (int)n, buf, environ_matches(envp));
		comm_check("after execve");
		return 0;
	}
	say("environ matches envp: %s\n", environ_matches(envp));
	setenv("PVX_ADDED", "1", 1);	/* in the heap: the file still shows what exec laid out */
	say("after setenv, still exec's strings: %s\n", environ_matches(envp));
	comm_check("start");
	prctl(PR_SET_NAME, "renamed-to-a-long-name");
	comm_check("after PR_SET_NAME");
	say("limits agree with getrlimit: %s\n", limits_match());
	struct rlimit rl = { 100, 200 };
	setrlimit(RLIMIT_NOFILE, &rl);
	say("after setrlimit(NOFILE, 100, 200): %s\n", limits_match());
	pid_t c = fork();
	if (c == 0) {
		say("child: environ matches envp: %s, limits: %s\n", environ_matches(envp), limits_match());
		_exit(0);
	}
	wait_child(c);
	char *nargv[] = { argv[0], "exec", NULL }, *nenvp[] = { "X=1", "LONGER=twenty-two", NULL };
	execve("/proc/self/exe", nargv, nenvp);
	say("execve: %s\n", errname(errno));
	return 1;
}

/* proc_pgrp: process groups and sessions. usage: proc_pgrp
 * Everything happens in a child that first makes its own session, so nothing depends on how the test
 * runner (or the sandbox) set up the first process. Prints relations, never pid values. */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guest.h"

/* The first line of a file into buf (without the newline); 0 when it cannot be read. */
static int read_line(const char *path, char *buf, int size)
{
	FILE *f = fopen(path, "r");
	int ok = f && fgets(buf, size, f);
	if (f)
		fclose(f);
	if (ok)
		buf[strcspn(buf, "\n")] = 0;
	return ok;
}

static const char *ename(int e)
{
	return e == 0 ? "" : e == EPERM ? "EPERM" : e == ESRCH ? "ESRCH" : e == EACCES ? "EACCES" : e == EINVAL ? "EINVAL" : "E?";
}
#define TRY(label, expr) do { errno = 0; long r_ = (long)(expr); int e_ = errno; \
	say("%s = %s %s\n", label, r_ < 0 ? "-1" : "ok", r_ < 0 ? ename(e_) : ""); } while (0)

int main(void)
{
	pid_t top = getpid();
	say("getpgid(0)==getpgrp(): %s, getsid(0)==getsid(getpid()): %s\n", yesno(getpgid(0) == getpgrp()),
	    yesno(getsid(0) == getsid(getpid())));
	TRY("getpgid(no such pid)", getpgid(99999));
	TRY("getsid(no such pid)", getsid(99999));
	pid_t s = fork();
	if (s == 0) {
		pid_t me = getpid();
		say("child: same group as parent: %s, same session: %s\n", yesno(getpgrp() == getpgid(top)),
		    yesno(getsid(0) == getsid(top)));
		TRY("child: setsid", setsid());
		say("child: now sid==pid: %s pgid==pid: %s\n", yesno(getsid(0) == me), yesno(getpgrp() == me));
		TRY("child: setsid again (group leader)", setsid());
		TRY("child: setpgid(0,0) as session leader", setpgid(0, 0));
		/* a grandchild: own group inside our session */
		int go[2], done[2];
		pipe(go);
		pipe(done);
		pid_t g = fork();
		if (g == 0) {
			say("grandchild: inherited session: %s group: %s\n", yesno(getsid(0) == me), yesno(getpgrp() == me));
			write(done[1], "i", 1);
			char b;
			read(go[0], &b, 1);
			say("grandchild: after parent setpgid(g,g): pgid==pid: %s\n", yesno(getpgrp() == getpid()));
			TRY("grandchild: setpgid(0, session leader's group)", setpgid(0, me));
			say("grandchild: back in leader's group: %s\n", yesno(getpgrp() == me));
			write(done[1], "d", 1);
			read(go[0], &b, 1);
			execl("/proc/self/exe-does-not-exist", "x", (char *)NULL);
			/* keep running, as if exec'd: the parent tests EACCES below only when exec worked */
			pause();
			_exit(0);
		}
		char b;
		read(done[0], &b, 1);
		TRY("child: setpgid(g, g)", setpgid(g, g));
		say("child: getpgid(g)==g: %s\n", yesno(getpgid(g) == g));
		write(go[1], "g", 1);
		read(done[0], &b, 1);
		say("child: getpgid(g)==me: %s\n", yesno(getpgid(g) == me));
		TRY("child: setpgid(g, nonexistent group)", setpgid(g, 99999));
		TRY("child: setpgid(-1, 0)", setpgid(-1, 0));
		TRY("child: setpgid(not a child)", setpgid(getppid(), 0));
		TRY("child: getsid(g)==me", getsid(g) == me ? 0 : -1);
		kill(g, SIGTERM);
		say("grandchild status %d\n", wait_child(g));
		/* a grandchild that moves to a new session: then setpgid on it is EPERM */
		int ready[2];
		pipe(ready);
		g = fork();
		if (g == 0) {
			setsid();
			write(ready[1], "r", 1);
			pause();
			_exit(0);
		}
		read(ready[0], &b, 1);
		TRY("child: setpgid(child in another session, g)", setpgid(g, g));
		TRY("child: setpgid(child in another session, me)", setpgid(g, me));
		say("child: getsid(g)==g: %s\n", yesno(getsid(g) == g));
		kill(g, SIGTERM);
		wait_child(g);
		/* a child that exec'd: setpgid is EACCES */
		g = fork();
		if (g == 0) {
			execl("/bin/busybox", "sleep", "5", (char *)NULL);
			execl("/bin/sleep", "sleep", "5", (char *)NULL);
			_exit(127);
		}
		/* until it has exec'd (a new comm, set after the exec is past its point of no return) and sleeps
		 * in the new image, 10 s at most: a fixed 200 ms could end before a slow machine (QEMU's
		 * software CPU) got through the execve, and then setpgid succeeds */
		char mine[32], path[64];
		snprintf(path, sizeof path, "/proc/%d/comm", (int)g);
		read_line("/proc/self/comm", mine, sizeof mine);
		for (int i = 0; i < 2000; i++) {
			char now[32];
			if (read_line(path, now, sizeof now) && strcmp(now, mine) && proc_asleep(g))
				break;
			usleep(5000);
		}
		TRY("child: setpgid(child after execve)", setpgid(g, g));
		kill(g, SIGTERM);
		wait_child(g);
		_exit(0);
	}
	say("session child exit %d\n", wait_child(s));
	TRY("setpgid(exited child)", setpgid(s, s));
	return 0;
}

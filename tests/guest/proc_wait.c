/* proc_wait: fork + wait4 / waitid. usage: proc_wait status|wait4|waitid|waitid-nowait
 *   status         children exit with 0,1,42,255,256 and die of SIGKILL/SIGTERM/SIGSEGV/abort: wait4 status
 *   wait4          wait4 by pid, by -1, WNOHANG while running, ECHILD, non-child, by -pgid
 *   waitid         waitid P_PID/P_ALL/P_PGID, WNOHANG with nothing ready (si_pid 0), siginfo fields
 *   waitid-nowait  WNOWAIT leaves the child waitable */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guest.h"
#pragma GCC diagnostic ignored "-Warray-bounds"

static const char *ename(int e)
{
	return e == 0 ? "" : e == ECHILD ? "ECHILD" : e == EINVAL ? "EINVAL" : e == EINTR ? "EINTR" : "E?";
}

static void describe(const char *who, int st)
{
	if (WIFEXITED(st))
		say("%s: WIFEXITED status=%d\n", who, WEXITSTATUS(st));
	else if (WIFSIGNALED(st))
		say("%s: WIFSIGNALED sig=%d\n", who, WTERMSIG(st));
	else
		say("%s: other %#x\n", who, st);
}

static pid_t spawn_exit(int code, int delay_ms)
{
	pid_t c = fork();
	if (c == 0) {
		if (delay_ms)
			usleep(delay_ms * 1000);
		_exit(code);
	}
	return c;
}

static const char *codename(int c)
{
	return c == CLD_EXITED ? "CLD_EXITED" : c == CLD_KILLED ? "CLD_KILLED" : c == CLD_DUMPED ? "CLD_DUMPED" : "?";
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "status";
	if (!strcmp(mode, "status")) {
		int codes[] = { 0, 1, 42, 255, 256, 257 };
		for (unsigned i = 0; i < sizeof codes / sizeof *codes; i++) {
			pid_t c = spawn_exit(codes[i], 0);
			int st = -1;
			struct rusage ru;
			pid_t r = wait4(c, &st, 0, &ru);
			char who[48];
			snprintf(who, sizeof who, "_exit(%d) wait4 returned pid: %s", codes[i], yesno(r == c));
			describe(who, st);
		}
		const char *names[] = { "SIGKILL", "SIGTERM", "SIGSEGV", "abort", "SIGUSR1" };
		for (int i = 0; i < 5; i++) {
			pid_t c = fork();
			if (c == 0) {
				switch (i) {
				case 0: kill(getpid(), SIGKILL); break;
				case 1: raise(SIGTERM); break;
				case 2: *(volatile int *)0 = 1; break;
				case 3: abort();
				case 4: kill(getpid(), SIGUSR1); break;
				}
				_exit(100);
			}
			int st;
			waitpid(c, &st, 0);
			char who[48];
			snprintf(who, sizeof who, "child killed by %s", names[i]);
			describe(who, st);
		}
		/* a parent kills a sleeping child */
		pid_t c = fork();
		if (c == 0) {
			pause();
			_exit(100);
		}
		usleep(20000);
		kill(c, SIGTERM);
		int st;
		waitpid(c, &st, 0);
		describe("sleeping child killed by the parent", st);
		return 0;
	}
	if (!strcmp(mode, "wait4")) {
		int st = 0;
		errno = 0;
		pid_t r = wait4(-1, &st, 0, NULL);
		say("wait4(-1) with no children = %d %s\n", r, ename(errno));
		pid_t slow = spawn_exit(5, 200);
		errno = 0;
		r = wait4(slow, &st, WNOHANG, NULL);
		say("WNOHANG while running = %d %s\n", r, ename(errno));
		pid_t fast = spawn_exit(6, 0);
		r = wait4(-1, &st, 0, NULL);
		say("wait4(-1) returned the fast child: %s status %d\n", yesno(r == fast), WEXITSTATUS(st));
		r = wait4(slow, &st, 0, NULL);
		say("wait4(slow) = slow: %s status %d\n", yesno(r == slow), WEXITSTATUS(st));
		errno = 0;
		r = wait4(slow, &st, 0, NULL);
		say("wait4(slow) again = %d %s\n", r, ename(errno));
		errno = 0;
		r = wait4(getppid(), &st, 0, NULL);
		say("wait4(parent) = %d %s\n", r, ename(errno));
		errno = 0;
		r = wait4(-1, &st, 0x100 /* not a wait4 option */, NULL);
		say("wait4(bad options) = %d %s\n", r, ename(errno));
		/* wait4 with NULL status */
		pid_t c = spawn_exit(7, 0);
		r = wait4(c, NULL, 0, NULL);
		say("wait4(NULL status) returned pid: %s\n", yesno(r == c));
		/* wait by process group: a child in its own group, another in ours */
		pid_t g = fork();
		if (g == 0) {
			setpgid(0, 0);
			usleep(50000);
			_exit(8);
		}
		setpgid(g, g);
		pid_t other = spawn_exit(9, 0);
		r = wait4(-g, &st, 0, NULL);
		say("wait4(-pgid) returned the group's child: %s status %d\n", yesno(r == g), WEXITSTATUS(st));
		r = wait4(0, &st, 0, NULL); /* our own group */
		say("wait4(0) returned the other: %s status %d\n", yesno(r == other), WEXITSTATUS(st));
		return 0;
	}
	if (!strcmp(mode, "waitid")) {
		siginfo_t si;
		memset(&si, 0x55, sizeof si);
		pid_t slow = spawn_exit(3, 200);
		int r = waitid(P_PID, slow, &si, WEXITED | WNOHANG);
		say("waitid WNOHANG while running = %d si_pid=%d\n", r, si.si_pid);
		memset(&si, 0, sizeof si);
		r = waitid(P_PID, slow, &si, WEXITED);
		say("waitid P_PID = %d si_pid matches=%s si_signo=%d si_code=%s si_status=%d\n", r, yesno(si.si_pid == slow),
		    si.si_signo, codename(si.si_code), si.si_status);
		pid_t k = fork();
		if (k == 0) {
			raise(SIGTERM);
			_exit(1);
		}
		memset(&si, 0, sizeof si);
		r = waitid(P_ALL, 0, &si, WEXITED);
		say("waitid P_ALL = %d si_pid matches=%s si_code=%s si_status=%d\n", r, yesno(si.si_pid == k),
		    codename(si.si_code), si.si_status);
		pid_t g = fork();
		if (g == 0) {
			setpgid(0, 0);
			_exit(4);
		}
		setpgid(g, g);
		memset(&si, 0, sizeof si);
		r = waitid(P_PGID, g, &si, WEXITED);
		say("waitid P_PGID = %d si_pid matches=%s si_status=%d\n", r, yesno(si.si_pid == g), si.si_status);
		errno = 0;
		r = waitid(P_ALL, 0, &si, WEXITED);
		say("waitid with no children = %d %s\n", r, ename(errno));
		errno = 0;
		r = waitid(P_ALL, 0, &si, 0);
		say("waitid with no WEXITED/WSTOPPED/WCONTINUED = %d %s\n", r, ename(errno));
		/* WNOHANG when the child already exited: its SIGCHLD (blocked, so kept although ignored) comes
		 * once it is a zombie; a fixed 100 ms wait was not enough on QEMU's software CPU */
		sigset_t chld;
		sigemptyset(&chld);
		sigaddset(&chld, SIGCHLD);
		sigprocmask(SIG_BLOCK, &chld, NULL);
		pid_t f = spawn_exit(12, 0);
		struct timespec ten = { 10, 0 };
		sigtimedwait(&chld, NULL, &ten);
		sigprocmask(SIG_UNBLOCK, &chld, NULL);
		memset(&si, 0, sizeof si);
		r = waitid(P_PID, f, &si, WEXITED | WNOHANG);
		say("waitid WNOHANG after exit = %d si_pid matches=%s si_status=%d\n", r, yesno(si.si_pid == f), si.si_status);
		return 0;
	}
	if (!strcmp(mode, "waitid-nowait")) {
		siginfo_t si;
		pid_t c = spawn_exit(21, 0);
		memset(&si, 0, sizeof si);
		int r = waitid(P_PID, c, &si, WEXITED | WNOWAIT);
		say("WNOWAIT = %d status=%d\n", r, si.si_status);
		int st;
		pid_t w = waitpid(c, &st, WNOHANG);
		say("still waitable after WNOWAIT: %s status=%d\n", yesno(w == c), WEXITSTATUS(st));
		return 0;
	}
	say("unknown mode\n");
	return 2;
}

/* jobctl: stop and continue signals (job control). usage: jobctl MODE
 *   stop      a spinning child stops (SIGSTOP), does not progress, shows T in /proc, continues, is killed
 *   threads   a child with spinning threads and threads blocked in read and nanosleep: all stop (T), none
 *             progresses, all go on after SIGCONT (the read still gets its data, the sleep still ends)
 *   tgkill    SIGSTOP sent to one non-leader thread stops the whole group
 *   waits     wait4 WUNTRACED/WCONTINUED statuses (once each), waitid WSTOPPED/WCONTINUED/WNOWAIT, and a
 *             stopped child is not reaped by a plain wait
 *   sigchld   SIGCHLD si_code/si_status for stop, continue, kill; none for stop/continue with SA_NOCLDSTOP
 *   discard   a stop signal discards a pending SIGCONT and SIGCONT discards pending stop signals
 *   contmask  SIGCONT resumes even while blocked; its handler runs once unblocked
 *   orphan    TSTP/TTIN/TTOU do nothing in an orphaned process group, SIGSTOP still stops; TSTP stops a
 *             child in a group of its own with a parent in the session
 *   kill      SIGKILL and SIGTERM end a stopped child (and a stopped multi-threaded one)
 *   orphankick  a stopped process whose group becomes orphaned when its parent exits gets SIGHUP and SIGCONT
 *             (its parent in another group of the session; or in the same group, left by the parent's exit)
 *   storm     STOP/CONT sent 300 times to a multi-threaded child busy in syscalls, then a clean stop, kill;
 *             and a child that exits (or execs) while it is being stopped and continued */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "guest.h"

#define NSPIN 3
struct shared {
	volatile unsigned long spin[NSPIN];
	volatile int read_done, sleep_done, ready;
	volatile long sleep_start_ms;	/* CLOCK_MONOTONIC when the sleeper began its 3 s */
	volatile int tids[NSPIN];
};
static struct shared *sh;
static int pfd[2];

static void ms(int n)
{
	struct timespec ts = { n / 1000, (long)(n % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static void *spinner(void *arg)
{
	long i = (long)arg;
	sh->tids[i] = (int)syscall(SYS_gettid);
	__sync_fetch_and_add(&sh->ready, 1);
	for (;;)
		sh->spin[i]++;
	return NULL;
}

static void *reader(void *arg)
{
	(void)arg;
	char c;
	__sync_fetch_and_add(&sh->ready, 1);
	ssize_t n;
	while ((n = read(pfd[0], &c, 1)) < 0 && errno == EINTR)
		;
	sh->read_done = n == 1 ? 1 : -1;
	return NULL;
}

static void *sleeper(void *arg)
{
	(void)arg;
	/* 3 s: the SIGSTOP must come while it sleeps, and stopping the spinners through pvx under QEMU's software
	 * CPU (vmexec in CI) can take a good part of a second */
	struct timespec ts = { 3, 0 }, now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	sh->sleep_start_ms = now.tv_sec * 1000L + now.tv_nsec / 1000000;
	__sync_fetch_and_add(&sh->ready, 1);
	int r = nanosleep(&ts, NULL);
	sh->sleep_done = r == 0 ? 1 : -errno;
	return NULL;
}

/* A child with NSPIN spinning threads (and with blockers, a reader and a sleeper), ready when it returns. */
static pid_t spawn(int nspin, int blockers)
{
	sh->ready = 0;
	int want = nspin + (blockers ? 2 : 0);
	pid_t c = fork();
	if (c == 0) {
		pthread_t th;
		for (long i = 0; i < nspin; i++)
			pthread_create(&th, NULL, spinner, (void *)i);
		if (blockers) {
			pthread_create(&th, NULL, reader, NULL);
			pthread_create(&th, NULL, sleeper, NULL);
		}
		for (;;)
			pause();
	}
	while (sh->ready < want)
		ms(1);
	ms(20);
	return c;
}

static unsigned long total(void)
{
	unsigned long s = 0;
	for (int i = 0; i < NSPIN; i++)
		s += sh->spin[i];
	return s;
}

/* The state letter of /proc/PID[/task/TID]/stat. */
static char state_of(pid_t pid, pid_t tid)
{
	char path[64], buf[512];
	if (tid)
		snprintf(path, sizeof path, "/proc/%d/task/%d/stat", pid, tid);
	else
		snprintf(path, sizeof path, "/proc/%d/stat", pid);
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return '?';
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	buf[n > 0 ? n : 0] = 0;
	char *p = strrchr(buf, ')');
	return p && p[1] ? p[2] : '?';
}

/* Wait for the stop report; print what the macros say of it. */
static void wait_stop(pid_t c, const char *what)
{
	int st = 0;
	pid_t r = waitpid(c, &st, WUNTRACED);
	say("%s: waitpid=%s status=%#x WIFSTOPPED=%d WSTOPSIG=%d\n", what, r == c ? "child" : "?", st,
	    !!WIFSTOPPED(st), WIFSTOPPED(st) ? WSTOPSIG(st) : 0);
}

static void wait_cont(pid_t c, const char *what)
{
	int st = 0;
	pid_t r = waitpid(c, &st, WCONTINUED);
	say("%s: waitpid=%s status=%#x WIFCONTINUED=%d\n", what, r == c ? "child" : "?", st, !!WIFCONTINUED(st));
}

static void wait_end(pid_t c, const char *what)
{
	int st = 0;
	pid_t r;
	while ((r = waitpid(c, &st, 0)) < 0 && errno == EINTR)
		;
	say("%s: waitpid=%s %s %d\n", what, r == c ? "child" : "?", WIFEXITED(st) ? "exit" : "signal",
	    WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
}

/* Did the spinners make no progress over 200 ms (stopped), or some (running)? */
static const char *progress(void)
{
	unsigned long a = total();
	ms(200);
	return total() == a ? "none" : "some";
}

/* The same after a SIGCONT, where progress is due: 10 s at most for it, not 200 ms, which resuming the
 * threads of a stopped process can take on a slow machine (QEMU's software CPU, vmexec in CI). */
static const char *progress_resumed(void)
{
	unsigned long a = total();
	for (int i = 0; i < 500 && total() == a; i++)
		ms(20);
	return total() == a ? "none" : "some";
}

static int mode_stop(void)
{
	pid_t c = spawn(1, 0);
	kill(c, SIGSTOP);
	wait_stop(c, "stopped");
	say("while stopped: progress %s, state %c\n", progress(), state_of(c, 0));
	kill(c, SIGCONT);
	wait_cont(c, "continued");
	say("after SIGCONT: progress %s, state T: %s\n", progress_resumed(), yesno(state_of(c, 0) == 'T'));
	kill(c, SIGKILL);
	wait_end(c, "killed");
	return 0;
}

static int mode_threads(void)
{
	if (pipe(pfd))
		return 1;
	pid_t c = spawn(NSPIN, 1);
	kill(c, SIGSTOP);
	wait_stop(c, "stopped");
	say("while stopped: progress %s\n", progress());
	int all_t = 1;
	for (int i = 0; i < NSPIN; i++)
		all_t &= state_of(c, sh->tids[i]) == 'T';
	all_t &= state_of(c, c) == 'T';
	say("spinners and the main thread in state T: %s\n", yesno(all_t));
	if (write(pfd[1], "x", 1) != 1)
		return 1;
	/* until the sleeper's 3 s have passed while it is stopped, and 300 ms more */
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	long left = sh->sleep_start_ms + 3300 - (now.tv_sec * 1000L + now.tv_nsec / 1000000);
	ms(left > 0 ? (int)left : 0);
	say("while stopped: read returned %s, sleep ended %s\n", yesno(sh->read_done), yesno(sh->sleep_done));
	kill(c, SIGCONT);
	wait_cont(c, "continued");
	say("after SIGCONT: progress %s\n", progress_resumed());
	for (int i = 0; i < 500 && (!sh->read_done || !sh->sleep_done); i++)	/* 10 s at most */
		ms(20);
	say("after SIGCONT: read %d, sleep %d\n", sh->read_done, sh->sleep_done);
	kill(c, SIGKILL);
	wait_end(c, "killed");
	return 0;
}

static int mode_tgkill(void)
{
	pid_t c = spawn(NSPIN, 0);
	syscall(SYS_tgkill, c, sh->tids[1], SIGSTOP);
	wait_stop(c, "one thread sent SIGSTOP");
	say("while stopped: progress %s\n", progress());
	syscall(SYS_tgkill, c, sh->tids[2], SIGCONT);
	wait_cont(c, "one thread sent SIGCONT");
	say("after SIGCONT: progress %s\n", progress_resumed());
	kill(c, SIGKILL);
	wait_end(c, "killed");
	return 0;
}

static void show_waitid(const char *what, idtype_t type, pid_t id, int options)
{
	siginfo_t si;
	memset(&si, 0, sizeof si);
	int r = waitid(type, id, &si, options);
	int e = r < 0 ? errno : 0;
	say("%s: waitid=%d %s si_pid=%s si_code=%d si_status=%d\n", what, r, errname(e),
	    si.si_pid == 0 ? "0" : "child", si.si_code, si.si_status);
}

static void show_wait4(const char *what, pid_t c, int options)
{
	int st = 0;
	pid_t r = wait4(c, &st, options, NULL);
	say("%s: wait4=%s status=%#x stopped=%d sig=%d continued=%d\n", what,
	    r == c ? "child" : r == 0 ? "0" : "-1", st, !!WIFSTOPPED(st), WIFSTOPPED(st) ? WSTOPSIG(st) : 0,
	    !!WIFCONTINUED(st));
}

static int mode_waits(void)
{
	pid_t c = spawn(1, 0);
	int r = (int)wait4(-2147483647 - 1, NULL, WNOHANG, NULL);
	say("wait4(INT_MIN): %d %s\n", r, errname(r < 0 ? errno : 0));
	show_waitid("no flags", P_PID, c, WNOHANG);
	show_waitid("running, WSTOPPED", P_PID, c, WSTOPPED | WNOHANG);
	kill(c, SIGSTOP);
	show_waitid("WSTOPPED|WNOWAIT", P_PID, c, WSTOPPED | WNOWAIT);
	show_waitid("again WSTOPPED|WNOWAIT", P_ALL, 0, WSTOPPED | WNOWAIT);
	show_waitid("WEXITED only", P_PID, c, WEXITED | WNOHANG);
	show_wait4("plain WNOHANG", c, WNOHANG);
	show_wait4("WUNTRACED", c, WUNTRACED);
	show_wait4("WUNTRACED again", c, WUNTRACED | WNOHANG);
	show_waitid("WSTOPPED after wait4", P_PID, c, WSTOPPED | WNOHANG);
	kill(c, SIGSTOP);	/* already stopped: no new report */
	ms(50);
	show_wait4("second SIGSTOP", c, WUNTRACED | WNOHANG);
	show_wait4("WCONTINUED while stopped", c, WCONTINUED | WNOHANG);
	kill(c, SIGCONT);
	show_waitid("WCONTINUED|WNOWAIT", P_PID, c, WCONTINUED | WNOWAIT);
	show_wait4("WUNTRACED after SIGCONT", c, WUNTRACED | WNOHANG);
	show_wait4("WCONTINUED", c, WCONTINUED);
	show_wait4("WCONTINUED again", c, WCONTINUED | WNOHANG);
	kill(c, SIGCONT);	/* not stopped: nothing to report */
	ms(50);
	show_waitid("SIGCONT to a running child", P_PID, c, WCONTINUED | WNOHANG);
	kill(c, SIGSTOP);
	show_waitid("WSTOPPED|WCONTINUED|WEXITED", P_PGID, 0, WSTOPPED | WCONTINUED | WEXITED);
	kill(c, SIGKILL);
	show_waitid("killed while stopped, WEXITED|WNOWAIT", P_PID, c, WEXITED | WNOWAIT);
	show_waitid("a zombie, WSTOPPED only", P_PID, c, WSTOPPED | WNOHANG);
	show_wait4("reaped", c, 0);
	return 0;
}

static volatile sig_atomic_t hits;
static void count(int s) { (void)s; hits++; }

static void next_chld(const char *what, int wait_ms)
{
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	siginfo_t si;
	struct timespec ts = { wait_ms / 1000, (long)(wait_ms % 1000) * 1000000L };
	memset(&si, 0, sizeof si);
	int r;
	while ((r = sigtimedwait(&set, &si, &ts)) < 0 && errno == EINTR)
		;
	if (r < 0)
		say("%s: no SIGCHLD (%s)\n", what, errname(errno));
	else
		say("%s: SIGCHLD si_code=%d si_status=%d si_pid=%s\n", what, si.si_code, si.si_status,
		    si.si_pid > 0 ? "child" : "?");
}

static int sigchld_round(int flags)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = count;
	sa.sa_flags = flags;
	sigaction(SIGCHLD, &sa, NULL);
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigprocmask(SIG_BLOCK, &set, NULL);
	say("-- %s\n", flags & SA_NOCLDSTOP ? "SA_NOCLDSTOP" : "no SA_NOCLDSTOP");
	pid_t c = spawn(1, 0);
	kill(c, SIGSTOP);
	waitid(P_PID, c, &(siginfo_t){ 0 }, WSTOPPED | WNOWAIT);
	int none = flags & SA_NOCLDSTOP;	/* Linux sends CLD_CONTINUED when the child runs again: wait for it */
	next_chld("stop", 0);
	kill(c, SIGCONT);
	waitid(P_PID, c, &(siginfo_t){ 0 }, WCONTINUED | WNOWAIT);
	next_chld("continue", none ? 300 : 5000);
	kill(c, SIGKILL);
	waitid(P_PID, c, &(siginfo_t){ 0 }, WEXITED | WNOWAIT);
	next_chld("kill", 0);
	wait_end(c, "reaped");
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	return 0;
}

static int mode_sigchld(void)
{
	sigchld_round(0);
	sigchld_round(SA_NOCLDSTOP);
	return 0;
}

/* The child's pending set, for SIGCONT and SIGTSTP, as it reports it through the pipe. */
static int mode_discard(void)
{
	int to[2], from[2];
	if (pipe(to) || pipe(from))
		return 1;
	pid_t c = fork();
	if (c == 0) {
		setpgid(0, 0);	/* not orphaned: SIGTSTP is a stop here */
		struct sigaction sa;
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = count;
		sigaction(SIGCONT, &sa, NULL);
		sigset_t set;
		sigemptyset(&set);
		sigaddset(&set, SIGCONT);
		sigaddset(&set, SIGTSTP);
		sigprocmask(SIG_BLOCK, &set, NULL);
		close(to[1]);
		char b = 'r';
		if (write(from[1], &b, 1) != 1)
			_exit(1);
		while (read(to[0], &b, 1) == 1) {
			sigset_t p;
			sigpending(&p);
			char out = (char)('0' + (sigismember(&p, SIGCONT) ? 1 : 0) + (sigismember(&p, SIGTSTP) ? 2 : 0));
			if (write(from[1], &out, 1) != 1)
				_exit(1);
		}
		_exit(hits);
	}
	char b = 0;
	close(to[0]);
	if (read(from[0], &b, 1) != 1)
		return 1;
	static const struct { int sig; const char *what; } steps[] = {
		{ SIGCONT, "SIGCONT sent (blocked)" },
		{ SIGTSTP, "then SIGTSTP (blocked)" },
		{ SIGCONT, "then SIGCONT" },
		{ SIGTTOU, "then SIGTTOU (not blocked: stops)" },
	};
	for (size_t i = 0; i < 3; i++) {
		kill(c, steps[i].sig);
		if (write(to[1], "?", 1) != 1 || read(from[0], &b, 1) != 1)
			return 1;
		say("%s: pending SIGCONT=%s SIGTSTP=%s\n", steps[i].what, yesno((b - '0') & 1), yesno((b - '0') & 2));
	}
	kill(c, SIGTTOU);
	wait_stop(c, steps[3].what);
	kill(c, SIGTSTP);	/* pending while stopped (blocked) */
	kill(c, SIGCONT);	/* discards it, resumes */
	wait_cont(c, "SIGCONT");
	if (write(to[1], "?", 1) != 1 || read(from[0], &b, 1) != 1)
		return 1;
	say("after SIGTSTP then SIGCONT while stopped: pending SIGCONT=%s SIGTSTP=%s\n", yesno((b - '0') & 1),
	    yesno((b - '0') & 2));
	close(to[1]);
	wait_end(c, "exit (SIGCONT still blocked: handler never ran)");
	return 0;
}

static int mode_contmask(void)
{
	int from[2];
	if (pipe(from))
		return 1;
	pid_t c = fork();
	if (c == 0) {
		struct sigaction sa;
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = count;
		sigaction(SIGCONT, &sa, NULL);
		sigset_t set;
		sigemptyset(&set);
		sigaddset(&set, SIGCONT);
		sigprocmask(SIG_BLOCK, &set, NULL);
		if (write(from[1], "r", 1) != 1)
			_exit(1);
		raise(SIGSTOP);
		char out = (char)('0' + hits);
		if (write(from[1], &out, 1) != 1)
			_exit(1);
		sigprocmask(SIG_UNBLOCK, &set, NULL);
		_exit(hits);
	}
	char b;
	if (read(from[0], &b, 1) != 1)
		return 1;
	wait_stop(c, "raise(SIGSTOP)");
	kill(c, SIGCONT);
	if (read(from[0], &b, 1) != 1)
		return 1;
	say("resumed with SIGCONT blocked; handler runs before unblock: %c\n", b);
	wait_end(c, "handler ran once unblocked");
	return 0;
}

static int orphan_child(int orphaned)
{
	int from[2];
	if (pipe(from))
		return 1;
	pid_t c = fork();
	if (c == 0) {
		if (orphaned)
			setsid();
		else
			setpgid(0, 0);
		raise(SIGTSTP);
		if (write(from[1], "1", 1) != 1)
			_exit(1);
		raise(SIGTTIN);
		raise(SIGTTOU);
		if (write(from[1], "2", 1) != 1)
			_exit(1);
		raise(SIGSTOP);
		_exit(7);
	}
	close(from[1]);
	const char *what = orphaned ? "orphaned pgrp" : "own pgrp, parent in the session";
	if (!orphaned) {
		wait_stop(c, "own pgrp: SIGTSTP");
		kill(c, SIGCONT);
		wait_stop(c, "own pgrp: SIGTTIN");
		kill(c, SIGCONT);
		wait_stop(c, "own pgrp: SIGTTOU");
		kill(c, SIGCONT);
	}
	char b[4];
	ssize_t n = read(from[0], b, 1);
	n += read(from[0], b + 1, 1);
	say("%s: went on past TSTP/TTIN/TTOU: %zd steps\n", what, n);
	wait_stop(c, orphaned ? "orphaned pgrp: SIGSTOP" : "own pgrp: SIGSTOP");
	kill(c, SIGCONT);
	wait_end(c, what);
	close(from[0]);
	return 0;
}

static int mode_orphan(void)
{
	orphan_child(1);
	orphan_child(0);
	return 0;
}

static int mode_kill(void)
{
	pid_t c = spawn(1, 0);
	kill(c, SIGSTOP);
	wait_stop(c, "stopped");
	kill(c, SIGKILL);
	wait_end(c, "SIGKILL while stopped");
	if (pipe(pfd))
		return 1;
	c = spawn(NSPIN, 1);
	kill(c, SIGSTOP);
	wait_stop(c, "threads stopped");
	kill(c, SIGTERM);	/* fatal, but only SIGKILL ends a stopped process at once: it waits for SIGCONT */
	ms(100);
	int st = 0;
	say("SIGTERM while stopped (threads): waitpid WNOHANG=%d state %c\n", (int)waitpid(c, &st, WNOHANG),
	    state_of(c, 0));
	kill(c, SIGCONT);
	wait_end(c, "then SIGCONT");
	c = spawn(1, 0);
	kill(c, SIGSTOP);
	wait_stop(c, "stopped");
	kill(c, SIGUSR1);
	ms(100);
	say("SIGUSR1 while stopped: waitpid WNOHANG=%d state %c\n", (int)waitpid(c, &st, WNOHANG), state_of(c, 0));
	kill(c, SIGKILL);
	wait_end(c, "then SIGKILL");
	return 0;
}

static int hup_fd;
static void on_hup(int s)
{
	(void)s;
	if (write(hup_fd, "H", 1) != 1)
		_exit(1);
}

/* In a session of our own: A (own group) forks B (own group if apart), B stops, A exits. */
static void orphankick_round(int apart)
{
	int p[2];
	if (pipe(p))
		_exit(1);
	pid_t m = fork();
	if (m == 0) {
		setsid();
		pid_t a = fork();
		if (a == 0) {
			setpgid(0, 0);
			pid_t b = fork();
			if (b == 0) {
				if (apart)
					setpgid(0, 0);
				hup_fd = p[1];
				signal(SIGHUP, on_hup);
				raise(SIGSTOP);
				if (write(p[1], "C", 1) != 1)
					_exit(1);
				_exit(0);
			}
			int st;
			waitpid(b, &st, WUNTRACED);
			_exit(WIFSTOPPED(st) ? 0 : 1);
		}
		close(p[1]);
		int st;
		waitpid(a, &st, 0);
		char buf[8] = { 0 };
		ssize_t n = 0, k;
		while (n < 2 && (k = read(p[0], buf + n, 1)) == 1)
			n++;
		say("%s: parent exited %d; the stopped child got %s\n", apart ? "child in its own group" :
		    "child in its parent's group", WEXITSTATUS(st), n ? buf : "nothing");
		_exit(0);
	}
	close(p[1]);
	close(p[0]);
	wait_end(m, "session");
}

static int mode_orphankick(void)
{
	orphankick_round(1);
	orphankick_round(0);
	return 0;
}

static void *busy(void *arg)
{
	(void)arg;
	for (;;) {
		getppid();
		struct timespec ts = { 0, 100000 };
		nanosleep(&ts, NULL);
	}
	return NULL;
}

/* A multi-threaded child in syscalls; with exit_after_ms it ends by itself (exit or exec). */
static pid_t storm_child(int exit_after_ms, int exec)
{
	pid_t c = fork();
	if (c == 0) {
		pthread_t th;
		for (int i = 0; i < 4; i++)
			pthread_create(&th, NULL, i & 1 ? busy : spinner, (void *)(long)(i / 2));
		if (exit_after_ms) {
			ms(exit_after_ms);
			if (exec)
				execl("/proc/self/exe", "jobctl", "exit5", (char *)NULL);
			exit(3);
		}
		for (;;)
			pause();
	}
	return c;
}

/* Wait for the end (unless done: already reaped with st), ignoring stop and continue reports. */
static void wait_final(pid_t c, const char *what, int done, int st)
{
	while (!done) {
		pid_t r = waitpid(c, &st, WUNTRACED | WCONTINUED);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 || WIFEXITED(st) || WIFSIGNALED(st))
			break;
	}
	say("%s: %s %d\n", what, WIFEXITED(st) ? "exit" : "signal", WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
}

static int mode_storm(void)
{
	pid_t c = storm_child(0, 0);
	ms(50);
	for (int i = 0; i < 300; i++) {
		kill(c, SIGSTOP);
		if (i % 3 == 0)
			waitpid(c, &(int){ 0 }, WUNTRACED | WNOHANG);
		kill(c, SIGCONT);
	}
	kill(c, SIGSTOP);
	int st = 0;
	while (waitpid(c, &st, WUNTRACED) == c && !WIFSTOPPED(st))
		;
	say("after the storm: stopped %d\n", !!WIFSTOPPED(st));
	kill(c, SIGCONT);
	kill(c, SIGKILL);
	wait_final(c, "storm then kill", 0, 0);
	for (int exec = 0; exec < 2; exec++) {
		c = storm_child(100, exec);
		int done = 0;
		for (int i = 0; i < 5000; i++) {
			kill(c, SIGSTOP);
			kill(c, SIGCONT);
			int s2;
			if (waitpid(c, &s2, WNOHANG | WCONTINUED | WUNTRACED) == c && (WIFEXITED(s2) || WIFSIGNALED(s2))) {
				st = s2;
				done = 1;
				break;
			}
		}
		if (!done)
			kill(c, SIGCONT);
		wait_final(c, exec ? "exec while stopped and continued" : "exit while stopped and continued", done, st);
	}
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "stop";
	if (!strcmp(mode, "exit5"))
		return 5;
	sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		return 1;
	static const struct { const char *name; int (*fn)(void); } modes[] = {
		{ "stop", mode_stop }, { "threads", mode_threads }, { "tgkill", mode_tgkill },
		{ "waits", mode_waits }, { "sigchld", mode_sigchld }, { "discard", mode_discard },
		{ "contmask", mode_contmask }, { "orphan", mode_orphan }, { "kill", mode_kill },
		{ "storm", mode_storm }, { "orphankick", mode_orphankick },
	};
	for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++)
		if (!strcmp(mode, modes[i].name))
			return modes[i].fn();
	say("unknown mode %s\n", mode);
	return 2;
}

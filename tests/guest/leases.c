/* leases: fcntl(2) F_SETLEASE/F_GETLEASE, F_SETSIG, F_SETOWN(_EX), run the same natively and in the sandbox.
 * The holder is told by its F_SETSIG signal (si_fd, si_code) when another process opens the file; the opener
 * waits until the lease is released or downgraded, is cut short by a signal, or ends when killed; a holder
 * that exits releases its lease. usage: leases [exit-while-waiting | hold | async] (in a writable directory) */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define F "lease.file"

static const char *ename(int e)
{
	switch (e) {
	case EAGAIN: return "EAGAIN";
	case EBADF: return "EBADF";
	case EINVAL: return "EINVAL";
	case EINTR: return "EINTR";
	case ESRCH: return "ESRCH";
	case EFAULT: return "EFAULT";
	case EACCES: return "EACCES";
	default: return strerror(e);
	}
}

#define SHOW(label, expr) do { errno = 0; long r_ = (long)(expr); \
	printf("%s: %ld %s\n", label, r_, r_ < 0 ? ename(errno) : ""); fflush(stdout); } while (0)

static const char *lt(long t)
{
	return t == F_RDLCK ? "F_RDLCK" : t == F_WRLCK ? "F_WRLCK" : t == F_UNLCK ? "F_UNLCK" : "?";
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The lease break signal (SIGUSR1, blocked): its si_fd and si_code as the holder sees them; true if both are right. */
static bool wait_break(int fd, const char *who)
{
	sigset_t s;
	siginfo_t si;
	struct timespec to = { 20, 0 };

	sigemptyset(&s);
	sigaddset(&s, SIGUSR1);
	int sig = sigtimedwait(&s, &si, &to);
	if (!who)
		return sig == SIGUSR1 && si.si_fd == fd && si.si_code == POLL_MSG;
	printf("%s: break signal %s, si_fd is the lease fd: %s, si_code POLL_MSG: %s\n", who,
	       sig == SIGUSR1 ? "SIGUSR1" : "none", sig == SIGUSR1 && si.si_fd == fd ? "yes" : "no",
	       sig == SIGUSR1 && si.si_code == POLL_MSG ? "yes" : "no");
	fflush(stdout);
	return sig == SIGUSR1 && si.si_fd == fd && si.si_code == POLL_MSG;
}

/* A child that opens F with flags; it says whether the open waited at least min_wait seconds. */
static pid_t opener(int flags, double min_wait, const char *what)
{
	pid_t p = fork();
	if (p)
		return p;
	double t0 = now();
	errno = 0;
	int fd = open(F, flags);
	printf("child %s: %s%s\n", what, fd >= 0 ? "opened" : ename(errno),
	       min_wait > 0 ? (now() - t0 >= min_wait ? ", after waiting" : ", without waiting") : "");
	fflush(stdout);
	_exit(0);
}

static void reap(pid_t p, const char *what)
{
	int st;
	waitpid(p, &st, 0);
	if (WIFSIGNALED(st))
		printf("%s: killed by signal %d\n", what, WTERMSIG(st));
	fflush(stdout);
}

static void on_alarm(int s)
{
	(void)s;
}

static void errors(void)
{
	int p[2], sv[2];
	struct f_owner_ex ex = { 7, getpid() };

	pipe(p);
	socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
	int dir = open(".", O_RDONLY | O_DIRECTORY), path = open(F, O_PATH), fd = open(F, O_RDONLY);
	SHOW("lease on a pipe", fcntl(p[0], F_SETLEASE, F_RDLCK));
	SHOW("lease on a socket", fcntl(sv[0], F_SETLEASE, F_RDLCK));
	SHOW("lease on a directory", fcntl(dir, F_SETLEASE, F_RDLCK));
	SHOW("lease on an O_PATH fd", fcntl(path, F_SETLEASE, F_RDLCK));
	SHOW("F_GETLEASE of an O_PATH fd", fcntl(path, F_GETLEASE));
	SHOW("lease type 99", fcntl(fd, F_SETLEASE, 99));
	SHOW("F_GETLEASE without one", fcntl(fd, F_GETLEASE));
	SHOW("F_SETLEASE F_UNLCK without one", fcntl(fd, F_SETLEASE, F_UNLCK));
	SHOW("F_SETLEASE on a bad fd", fcntl(999, F_SETLEASE, F_RDLCK));
	SHOW("F_SETSIG 65", fcntl(fd, F_SETSIG, 65));
	SHOW("F_SETSIG -1", fcntl(fd, F_SETSIG, -1));
	SHOW("F_SETSIG SIGUSR2", fcntl(fd, F_SETSIG, SIGUSR2));
	SHOW("F_GETSIG", fcntl(fd, F_GETSIG));
	SHOW("F_GETOWN at first", fcntl(fd, F_GETOWN));
	SHOW("F_SETOWN a pid nobody has", fcntl(fd, F_SETOWN, 4000000));
	SHOW("F_SETOWN_EX type 7", fcntl(fd, F_SETOWN_EX, &ex));
	SHOW("F_SETOWN_EX bad pointer", fcntl(fd, F_SETOWN_EX, (void *)8));
	SHOW("F_GETOWN_EX bad pointer", fcntl(fd, F_GETOWN_EX, (void *)8));
	SHOW("F_SETOWN me", fcntl(fd, F_SETOWN, getpid()));
	printf("F_GETOWN is me: %s\n", fcntl(fd, F_GETOWN) == getpid() ? "yes" : "no");
	SHOW("F_SETOWN my group", fcntl(fd, F_SETOWN, -getpgrp()));
	printf("F_GETOWN is minus my group: %s\n", fcntl(fd, F_GETOWN) == -getpgrp() ? "yes" : "no");
	ex = (struct f_owner_ex){ F_OWNER_TID, getpid() };
	SHOW("F_SETOWN_EX F_OWNER_TID", fcntl(fd, F_SETOWN_EX, &ex));
	memset(&ex, 0, sizeof(ex));
	fcntl(fd, F_GETOWN_EX, &ex);
	printf("F_GETOWN_EX: type %d, me %s\n", ex.type, ex.pid == getpid() ? "yes" : "no");
	SHOW("F_SETOWN 0", fcntl(fd, F_SETOWN, 0));
	SHOW("F_GETOWN after 0", fcntl(fd, F_GETOWN));
	close(p[0]), close(p[1]), close(sv[0]), close(sv[1]), close(dir), close(path), close(fd);
}

static void conflicts(void)
{
	int r1 = open(F, O_RDONLY), r2 = open(F, O_RDONLY);
	SHOW("write lease, another reader open", fcntl(r1, F_SETLEASE, F_WRLCK));
	SHOW("read lease, readers only", fcntl(r1, F_SETLEASE, F_RDLCK));
	SHOW("second read lease", fcntl(r2, F_SETLEASE, F_RDLCK));
	printf("F_GETLEASE: %s\n", lt(fcntl(r1, F_GETLEASE)));
	SHOW("upgrade beside another's read lease", fcntl(r1, F_SETLEASE, F_WRLCK));
	SHOW("unlock", fcntl(r2, F_SETLEASE, F_UNLCK));
	close(r2);
	SHOW("upgrade once alone", fcntl(r1, F_SETLEASE, F_WRLCK));
	printf("F_GETLEASE: %s\n", lt(fcntl(r1, F_GETLEASE)));
	close(r1);	/* the lease goes with the file */
	int rw = open(F, O_RDWR);
	SHOW("read lease on an O_RDWR fd", fcntl(rw, F_SETLEASE, F_RDLCK));
	fcntl(rw, F_SETSIG, SIGUSR1);
	SHOW("write lease on the only (O_RDWR) fd", fcntl(rw, F_SETLEASE, F_WRLCK));
	int w = open(F, O_WRONLY | O_NONBLOCK);
	printf("own open for write, O_NONBLOCK: %s\n", w >= 0 ? "opened" : ename(errno));
	wait_break(rw, "own open");
	if (w >= 0)
		close(w);
	close(rw);
}

static void *thread_open(void *arg)
{
	(void)arg;
	open(F, O_WRONLY);	/* waits for the lease: the other thread's exit_group ends it */
	return NULL;
}

/*
 * A process whose thread waits in open for a lease exits (exit_group from
 * another thread): it ends at once, long before fs.lease-break-time.
 */
static int exit_while_waiting(void)
{
	sigset_t s;

	close(open(F, O_CREAT | O_WRONLY | O_TRUNC, 0644));
	sigemptyset(&s);
	sigaddset(&s, SIGUSR1);
	sigprocmask(SIG_BLOCK, &s, NULL);
	int fd = open(F, O_RDONLY);
	fcntl(fd, F_SETSIG, SIGUSR1);
	SHOW("write lease", fcntl(fd, F_SETLEASE, F_WRLCK));
	double t0 = now();
	pid_t c = fork();
	if (!c) {
		pthread_t th;
		pthread_create(&th, NULL, thread_open, NULL);
		usleep(300000);
		exit(7);
	}
	wait_break(fd, "holder");
	int st;
	waitpid(c, &st, 0);
	printf("child exited while its thread waited: status %d, within 10 s: %s\n", WEXITSTATUS(st),
	       now() - t0 < 10 ? "yes" : "no");
	printf("F_GETLEASE: %s\n", lt(fcntl(fd, F_GETLEASE)));
	unlink(F);
	return 0;
}

/* O_ASYNC on a pipe's read end: a write by another process signals the owner (F_SETSIG's, else SIGIO). */
static int async_pipe(void)
{
	int p[2];
	sigset_t s;
	siginfo_t si;
	struct timespec to = { 20, 0 };

	sigemptyset(&s);
	sigaddset(&s, SIGUSR1);
	sigaddset(&s, SIGIO);
	sigprocmask(SIG_BLOCK, &s, NULL);
	setpgid(0, 0);	/* a group of its own: round 2 signals the whole group */
	pipe(p);
	SHOW("F_SETFL O_ASYNC", fcntl(p[0], F_SETFL, O_ASYNC));
	printf("F_GETFL has O_ASYNC: %s\n", fcntl(p[0], F_GETFL) & O_ASYNC ? "yes" : "no");
	SHOW("F_SETOWN me", fcntl(p[0], F_SETOWN, getpid()));
	SHOW("F_SETSIG SIGUSR1", fcntl(p[0], F_SETSIG, SIGUSR1));
	for (int round = 0; round < 3; round++) {
		if (round == 1)
			fcntl(p[0], F_SETSIG, 0);
		if (round == 2) {
			fcntl(p[0], F_SETSIG, SIGUSR1);
			fcntl(p[0], F_SETOWN, -getpgrp());
		}
		pid_t c = fork();
		if (!c) {
			write(p[1], "x", 1);
			_exit(0);
		}
		int sig = sigtimedwait(&s, &si, &to);
		char x;
		read(p[0], &x, 1);
		waitpid(c, NULL, 0);
		if (sig == SIGUSR1)
			printf("round %d: SIGUSR1, si_fd the read end: %s, si_code POLL_IN: %s, si_band has POLLIN: %s\n",
			       round, si.si_fd == p[0] ? "yes" : "no", si.si_code == POLL_IN ? "yes" : "no",
			       si.si_band & POLLIN ? "yes" : "no");
		else
			printf("round %d: %s, si_code SI_KERNEL: %s\n", round, sig == SIGIO ? "SIGIO" : "none",
			       si.si_code == SI_KERNEL ? "yes" : "no");
	}
	fcntl(p[0], F_SETFL, 0);
	if (!fork()) {
		write(p[1], "x", 1);
		_exit(0);
	}
	wait(NULL);
	struct timespec short_to = { 0, 200000000 };
	printf("after O_ASYNC is cleared: %s\n", sigtimedwait(&s, &si, &short_to) < 0 ? "no signal" : "a signal");
	return 0;
}

int main(int argc, char **argv)
{
	sigset_t s;
	struct sigaction sa = { .sa_handler = on_alarm };

	setvbuf(stdout, NULL, _IONBF, 0);	/* no buffered line printed again by a forked child */
	if (argc > 1 && !strcmp(argv[1], "exit-while-waiting"))
		return exit_while_waiting();
	if (argc > 1 && !strcmp(argv[1], "async"))
		return async_pipe();
	if (argc > 1 && !strcmp(argv[1], "hold")) {	/* a write lease on F for 3 s */
		int fd = open(F, O_RDONLY | O_CREAT, 0666);
		fchmod(fd, 0666);
		SHOW("write lease", fcntl(fd, F_SETLEASE, F_WRLCK));
		sleep(3);
		printf("F_GETLEASE after 3 s: %s\n", lt(fcntl(fd, F_GETLEASE)));
		return 0;
	}
	close(open(F, O_CREAT | O_WRONLY | O_TRUNC, 0644));
	sigemptyset(&s);
	sigaddset(&s, SIGUSR1);
	sigprocmask(SIG_BLOCK, &s, NULL);
	errors();
	conflicts();

	/* A write lease: an O_NONBLOCK opener gets EWOULDBLOCK, and the holder its signal. */
	int fd = open(F, O_RDONLY);
	fcntl(fd, F_SETSIG, SIGUSR1);
	SHOW("write lease", fcntl(fd, F_SETLEASE, F_WRLCK));
	reap(opener(O_RDONLY | O_NONBLOCK, 0, "O_RDONLY|O_NONBLOCK"), "nonblocking opener");
	wait_break(fd, "holder");
	printf("F_GETLEASE while broken for a reader: %s\n", lt(fcntl(fd, F_GETLEASE)));

	/* A reader waits for the downgrade. An unlock takes the file's owner and signal away (lease_modify). */
	fcntl(fd, F_SETLEASE, F_UNLCK);
	printf("after the unlock: F_GETSIG %d, F_GETOWN %d\n", fcntl(fd, F_GETSIG), fcntl(fd, F_GETOWN));
	fcntl(fd, F_SETSIG, SIGUSR1);
	SHOW("write lease again", fcntl(fd, F_SETLEASE, F_WRLCK));
	pid_t c = opener(O_RDONLY, 0.25, "O_RDONLY");
	wait_break(fd, "holder");
	usleep(400000);
	long r = fcntl(fd, F_SETLEASE, F_RDLCK);
	reap(c, "reader");
	printf("downgrade to F_RDLCK: %ld\n", r);

	/* A writer waits for the unlock of a read lease. */
	c = opener(O_WRONLY, 0.25, "O_WRONLY");
	wait_break(fd, "holder");
	printf("F_GETLEASE while broken for a writer: %s\n", lt(fcntl(fd, F_GETLEASE)));
	usleep(400000);
	r = fcntl(fd, F_SETLEASE, F_UNLCK);
	reap(c, "writer");
	printf("unlock: %ld\n", r);

	/* A writer killed while it waits; one cut short by a signal (EINTR without SA_RESTART). */
	fcntl(fd, F_SETSIG, SIGUSR1);
	SHOW("read lease", fcntl(fd, F_SETLEASE, F_RDLCK));
	c = opener(O_WRONLY, 0, "O_WRONLY, killed");
	wait_break(fd, "holder");
	usleep(200000);
	kill(c, SIGKILL);
	reap(c, "killed writer");
	printf("F_GETLEASE after the waiter died: %s\n", lt(fcntl(fd, F_GETLEASE)));
	c = fork();
	if (!c) {
		struct itimerval it = { { 0, 0 }, { 0, 300000 } };
		sigaction(SIGALRM, &sa, NULL);
		setitimer(ITIMER_REAL, &it, NULL);
		errno = 0;
		int r = open(F, O_WRONLY | O_TRUNC);
		printf("child: open O_TRUNC ended by SIGALRM: %s\n", r >= 0 ? "opened" : ename(errno));
		fflush(stdout);
		_exit(0);
	}
	reap(c, "interrupted writer");
	SHOW("unlock", fcntl(fd, F_SETLEASE, F_UNLCK));
	close(fd);

	/* Two holders (child processes) of read leases; the second exits instead of unlocking. */
	int ready[2];
	pipe(ready);
	pid_t h[2];
	for (int i = 0; i < 2; i++) {
		if (!(h[i] = fork())) {
			int lfd = open(F, O_RDONLY);
			fcntl(lfd, F_SETSIG, SIGUSR1);
			if (fcntl(lfd, F_SETLEASE, F_RDLCK) < 0)
				printf("holder %d: lease %s\n", i, ename(errno));
			write(ready[1], "x", 1);
			bool ok = wait_break(lfd, NULL);
			usleep(300000);
			if (i == 0)
				fcntl(lfd, F_SETLEASE, F_UNLCK);
			_exit(ok ? 0 : 1);	/* holder 1: its lease goes when it exits */
		}
		char x;
		read(ready[0], &x, 1);
	}
	double t0 = now();
	errno = 0;
	int w = truncate(F, 0);
	printf("truncate while two read leases are held: %s, waited %s\n", w == 0 ? "done" : ename(errno),
	       now() - t0 >= 0.25 ? "yes" : "no");
	for (int i = 0; i < 2; i++) {
		int st;
		waitpid(h[i], &st, 0);
		printf("holder %d got its break signal: %s\n", i, WIFEXITED(st) && !WEXITSTATUS(st) ? "yes" : "no");
	}
	unlink(F);
	return 0;
}

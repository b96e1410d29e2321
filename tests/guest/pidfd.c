/* pidfd: pidfd_open, pidfd_send_signal, pidfd_getfd, waitid(P_PIDFD), CLONE_PIDFD. usage: pidfd MODE
 *   exit     poll/epoll: not readable while the child runs, POLLIN once it exits, POLLIN|POLLHUP once reaped;
 *            waitid(P_PIDFD); after the reap ESRCH/ECHILD
 *   errors   EINVAL, ESRCH, EBADF, EFAULT, EPERM for each call; read/write EINVAL; FD_CLOEXEC, F_GETFL
 *   signal   SIGUSR1 through the pidfd (siginfo NULL: SI_USER from us; SI_QUEUE with a value), then SIGKILL
 *   getfd    a duplicate of the child's pipe end (close-on-exec), EBADF for a closed one, ESRCH once it exited
 *   reuse    a pidfd of a reaped child does not reach the next child, even one with the same pid
 *   clone    clone(CLONE_PIDFD) and clone3 with a pidfd; EINVAL with CLONE_PARENT_SETTID; EFAULT makes no child
 *   nonblock PIDFD_NONBLOCK: waitid(P_PIDFD) of a running child is EAGAIN, F_GETFL shows O_NONBLOCK */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#define SYS_pidfd_send_signal 424
#define SYS_pidfd_getfd 438
#define SYS_clone3 435
#endif
#define CLONE_PIDFD_ 0x1000
#define P_PIDFD_ 3

static const char *en(long r)
{
	static char b[32];
	if (r >= 0) {
		snprintf(b, sizeof(b), "ok");
		return b;
	}
	switch (errno) {
	case EINVAL: return "EINVAL";
	case ESRCH: return "ESRCH";
	case EBADF: return "EBADF";
	case EFAULT: return "EFAULT";
	case EPERM: return "EPERM";
	case ECHILD: return "ECHILD";
	case E2BIG: return "E2BIG";
	case EAGAIN: return "EAGAIN";
	default: return strerror(errno);
	}
}

static int popen_(pid_t pid, unsigned flags)
{
	return (int)syscall(SYS_pidfd_open, pid, flags);
}

static long psig(int fd, int sig, siginfo_t *si, unsigned flags)
{
	return syscall(SYS_pidfd_send_signal, fd, sig, si, flags);
}

static const char *pollstr(int fd, int ms)
{
	static char b[64];
	struct pollfd p = { fd, POLLIN | POLLOUT | POLLPRI, 0 };
	int n = poll(&p, 1, ms);
	snprintf(b, sizeof(b), "%d%s%s%s%s", n, p.revents & POLLIN ? " IN" : "", p.revents & POLLOUT ? " OUT" : "",
		 p.revents & POLLHUP ? " HUP" : "", p.revents & POLLNVAL ? " NVAL" : "");
	return b;
}

/* A child that waits for a byte on *ctl, then exits with code. */
static pid_t child(int *ctl, int code)
{
	int p[2];
	if (pipe(p))
		exit(2);
	pid_t pid = fork();
	if (pid == 0) {
		char c;
		close(p[1]);
		if (read(p[0], &c, 1) < 0)
			_exit(3);
		_exit(code);
	}
	close(p[0]);
	*ctl = p[1];
	return pid;
}

static void wait_pidfd(int fd, int opts)
{
	siginfo_t si;
	memset(&si, 0, sizeof(si));
	long r = syscall(SYS_waitid, P_PIDFD_, fd, &si, opts, NULL);
	printf("waitid(P_PIDFD): %s", en(r));
	if (r == 0)
		printf(" code %s status %d", si.si_code == CLD_EXITED ? "CLD_EXITED" : si.si_code == CLD_KILLED
			? "CLD_KILLED" : si.si_code ? "other" : "0", si.si_status);
	printf("\n");
}

static void mode_exit(void)
{
	int ctl;
	pid_t pid = child(&ctl, 5);
	int fd = popen_(pid, 0);
	printf("pidfd_open: %s\n", en(fd));
	printf("poll while running: %s\n", pollstr(fd, 0));
	int ep = epoll_create1(0);
	struct epoll_event ev = { EPOLLIN, { .u64 = 7 } }, out;
	printf("epoll_ctl: %s\n", en(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev)));
	printf("epoll while running: %d\n", epoll_wait(ep, &out, 1, 0));
	close(ctl);	/* the child exits */
	printf("poll after exit: %s\n", pollstr(fd, 10000));
	int n = epoll_wait(ep, &out, 1, 10000);
	printf("epoll after exit: %d data %lu%s\n", n, (unsigned long)out.data.u64, out.events & EPOLLIN ? " IN" : "");
	printf("pidfd_send_signal(0) to the zombie: %s\n", en(psig(fd, 0, NULL, 0)));
	wait_pidfd(fd, WEXITED | WNOWAIT);
	wait_pidfd(fd, WEXITED);
	printf("poll after reap: %s\n", pollstr(fd, 0));
	printf("pidfd_send_signal after reap: %s\n", en(psig(fd, SIGKILL, NULL, 0)));
	printf("pidfd_getfd after reap: %s\n", en(syscall(SYS_pidfd_getfd, fd, 0, 0)));
	wait_pidfd(fd, WEXITED);
	printf("pidfd_open after reap: %s\n", en(popen_(pid, 0)));
}

static void *spin(void *a)
{
	(void)a;
	for (;;)
		pause();
	return NULL;
}

static void mode_errors(void)
{
	int ctl, p[2];
	pid_t pid = child(&ctl, 0);
	int fd = popen_(pid, 0);
	char buf[8];
	siginfo_t si;

	if (pipe(p))
		exit(2);
	printf("pidfd_open(-1): %s\n", en(popen_(-1, 0)));
	printf("pidfd_open(0): %s\n", en(popen_(0, 0)));
	printf("pidfd_open(999999): %s\n", en(popen_(999999, 0)));
	printf("pidfd_open(flags 1): %s\n", en(popen_(pid, 1)));
	printf("pidfd_open(flags O_CLOEXEC): %s\n", en(popen_(pid, O_CLOEXEC)));
	printf("FD_CLOEXEC: %s\n", fcntl(fd, F_GETFD) & FD_CLOEXEC ? "yes" : "no");
	int fl = fcntl(fd, F_GETFL);
	printf("F_GETFL: accmode %s nonblock %s\n", (fl & O_ACCMODE) == O_RDWR ? "O_RDWR" : "other",
	       fl & O_NONBLOCK ? "yes" : "no");
	printf("read: %s\n", en(read(fd, buf, sizeof(buf))));
	printf("write: %s\n", en(write(fd, buf, 1)));
	printf("lseek: %s\n", lseek(fd, 0, SEEK_SET) < 0 && errno == ESPIPE ? "ESPIPE" : "other");
	printf("pidfd_send_signal(bad fd): %s\n", en(psig(999, SIGUSR1, NULL, 0)));
	printf("pidfd_send_signal(pipe fd): %s\n", en(psig(p[0], SIGUSR1, NULL, 0)));
	printf("pidfd_send_signal(flags 0x100): %s\n", en(psig(fd, 0, NULL, 0x100)));
	printf("pidfd_send_signal(sig 65): %s\n", en(psig(fd, 65, NULL, 0)));
	printf("pidfd_send_signal(sig -1): %s\n", en(psig(fd, -1, NULL, 0)));
	printf("pidfd_send_signal(bad info): %s\n", en(psig(fd, SIGUSR1, (siginfo_t *)8, 0)));
	memset(&si, 0, sizeof(si));
	si.si_signo = SIGUSR2;
	si.si_code = SI_QUEUE;
	printf("pidfd_send_signal(info signo differs): %s\n", en(psig(fd, SIGUSR1, &si, 0)));
	si.si_signo = SIGUSR1;
	si.si_code = SI_USER;
	printf("pidfd_send_signal(info SI_USER to another): %s\n", en(psig(fd, SIGUSR1, &si, 0)));
	si.si_code = SI_TKILL;
	printf("pidfd_send_signal(info SI_TKILL to another): %s\n", en(psig(fd, SIGUSR1, &si, 0)));
	printf("pidfd_getfd(flags 1): %s\n", en(syscall(SYS_pidfd_getfd, fd, 0, 1)));
	printf("pidfd_getfd(bad target fd): %s\n", en(syscall(SYS_pidfd_getfd, fd, 999, 0)));
	printf("pidfd_getfd(-1 target fd): %s\n", en(syscall(SYS_pidfd_getfd, fd, -1, 0)));
	printf("pidfd_getfd(pipe as pidfd): %s\n", en(syscall(SYS_pidfd_getfd, p[0], 0, 0)));
	printf("waitid(P_PIDFD, pipe): %s\n", en(syscall(SYS_waitid, P_PIDFD_, p[0], NULL, WEXITED, NULL)));
	printf("waitid(P_PIDFD, -1): %s\n", en(syscall(SYS_waitid, P_PIDFD_, -1, NULL, WEXITED, NULL)));
	printf("waitid(P_PIDFD, bad fd): %s\n", en(syscall(SYS_waitid, P_PIDFD_, 999, NULL, WEXITED, NULL)));
	/* a pidfd of our own process: a thread is EINVAL, our own pid fine */
	pthread_t th;
	pthread_create(&th, NULL, spin, NULL);
	int self = popen_(getpid(), 0);
	printf("pidfd_open(self): %s\n", en(self));
	printf("waitid(P_PIDFD, self): %s\n", en(syscall(SYS_waitid, P_PIDFD_, self, NULL, WEXITED | WNOHANG, NULL)));
	signal(SIGUSR2, SIG_IGN);
	si.si_signo = SIGUSR2;
	si.si_code = SI_USER;
	printf("pidfd_send_signal(self, info SI_USER): %s\n", en(psig(self, SIGUSR2, &si, 0)));
	close(ctl);
	wait_pidfd(fd, WEXITED);
}

static volatile sig_atomic_t got;
static void on_usr1(int s, siginfo_t *si, void *u)
{
	(void)s, (void)u;
	got = si->si_code == SI_USER ? 1 : si->si_code == SI_QUEUE ? 100 + si->si_value.sival_int : 99;
}

static void mode_signal(void)
{
	int r[2], w[2];
	if (pipe(r) || pipe(w))
		exit(2);
	pid_t pid = fork();
	if (pid == 0) {
		struct sigaction sa = { .sa_sigaction = on_usr1, .sa_flags = SA_SIGINFO };
		sigaction(SIGUSR1, &sa, NULL);
		for (int i = 0; i < 2; i++) {
			got = 0;
			char c = 1;
			if (write(w[1], &c, 1) != 1)
				_exit(3);
			while (!got)
				usleep(1000);
			c = (char)got;
			if (write(w[1], &c, 1) != 1)
				_exit(3);
		}
		for (;;)
			pause();
	}
	int fd = popen_(pid, 0);
	char c;
	siginfo_t si;
	if (read(w[0], &c, 1) != 1)
		exit(2);
	printf("pidfd_send_signal(SIGUSR1): %s\n", en(psig(fd, SIGUSR1, NULL, 0)));
	if (read(w[0], &c, 1) != 1)
		exit(2);
	printf("child saw: %s\n", c == 1 ? "SI_USER" : "other");
	if (read(w[0], &c, 1) != 1)
		exit(2);
	memset(&si, 0, sizeof(si));
	si.si_signo = SIGUSR1;
	si.si_code = SI_QUEUE;
	si.si_value.sival_int = 7;
	printf("pidfd_send_signal(SIGUSR1, SI_QUEUE 7): %s\n", en(psig(fd, SIGUSR1, &si, 0)));
	if (read(w[0], &c, 1) != 1)
		exit(2);
	printf("child saw: SI_QUEUE %d\n", c - 100);
	printf("pidfd_send_signal(SIGKILL): %s\n", en(psig(fd, SIGKILL, NULL, 0)));
	wait_pidfd(fd, WEXITED);
}

static void mode_getfd(void)
{
	int w[2];
	if (pipe(w))
		exit(2);
	pid_t pid = fork();
	if (pid == 0) {
		int q[2];
		if (pipe(q) || write(q[1], "secret", 6) != 6)
			_exit(3);
		char c = (char)q[0];
		if (write(w[1], &c, 1) != 1)
			_exit(3);
		for (;;)
			pause();
	}
	char c, buf[16] = { 0 };
	if (read(w[0], &c, 1) != 1)
		exit(2);
	int fd = popen_(pid, 0);
	int got = (int)syscall(SYS_pidfd_getfd, fd, c, 0);
	printf("pidfd_getfd: %s\n", en(got));
	printf("read from it: %s\n", read(got, buf, 6) == 6 ? buf : "nothing");
	printf("FD_CLOEXEC: %s\n", fcntl(got, F_GETFD) & FD_CLOEXEC ? "yes" : "no");
	printf("pidfd_getfd(closed fd 20): %s\n", en(syscall(SYS_pidfd_getfd, fd, 20, 0)));
	kill(pid, SIGKILL);
	printf("poll after kill: %s\n", pollstr(fd, 10000));
	printf("pidfd_getfd(zombie): %s\n", en(syscall(SYS_pidfd_getfd, fd, c, 0)));
	wait_pidfd(fd, WEXITED);
}

static void mode_reuse(void)
{
	int ctl, ctl2;
	pid_t a = child(&ctl, 1);
	int fd = popen_(a, 0);
	close(ctl);
	waitpid(a, NULL, 0);
	/* Cycle through pids until the next child would get a's (pvx: within its 1024; Linux: not so soon). */
	for (int i = 0; i < 1100; i++) {
		pid_t x = vfork();
		if (x == 0)
			_exit(0);
		waitpid(x, NULL, 0);
		if (x + 1 == a || (x == 1024 && a == 2))	/* pvx's pids wrap after 1024 to 2 */
			break;
	}
	pid_t b = child(&ctl2, 2);	/* stderr says whether it got a's pid: the test checks it for pvx */
	fprintf(stderr, "b has a's pid: %s\n", a == b ? "yes" : "no");
	printf("pidfd_send_signal(reaped a, SIGKILL): %s\n", en(psig(fd, SIGKILL, NULL, 0)));
	printf("pidfd_getfd(reaped a): %s\n", en(syscall(SYS_pidfd_getfd, fd, 0, 0)));
	wait_pidfd(fd, WEXITED | WNOHANG);
	printf("poll(reaped a): %s\n", pollstr(fd, 0));
	close(ctl2);
	int st;
	waitpid(b, &st, 0);
	printf("b: exit %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -WTERMSIG(st));
}

struct clone_args_ {
	uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls;
};

static void mode_clone(void)
{
	int pfd = -1;
	long pid = syscall(SYS_clone, CLONE_PIDFD_ | SIGCHLD, 0, &pfd, 0, 0);
	if (pid == 0)
		_exit(6);
	printf("clone(CLONE_PIDFD): %s, pidfd set: %s\n", en(pid), pfd >= 0 ? "yes" : "no");
	printf("FD_CLOEXEC: %s\n", fcntl(pfd, F_GETFD) & FD_CLOEXEC ? "yes" : "no");
	printf("poll: %s\n", pollstr(pfd, 10000));
	wait_pidfd(pfd, WEXITED);
	printf("clone(CLONE_PIDFD|CLONE_PARENT_SETTID): %s\n",
	       en(syscall(SYS_clone, CLONE_PIDFD_ | CLONE_PARENT_SETTID | SIGCHLD, 0, &pfd, 0, 0)));
	int p3 = -1;
	struct clone_args_ ca = { .flags = CLONE_PIDFD_, .pidfd = (uint64_t)&p3, .exit_signal = SIGCHLD };
	pid = syscall(SYS_clone3, &ca, sizeof(ca));
	if (pid == 0)
		_exit(8);
	printf("clone3(CLONE_PIDFD): %s, pidfd set: %s\n", en(pid), p3 >= 0 ? "yes" : "no");
	wait_pidfd(p3, WEXITED);
	ca.pidfd = 8;
	pid = syscall(SYS_clone3, &ca, sizeof(ca));
	if (pid == 0)
		_exit(9);
	printf("clone3(CLONE_PIDFD, bad pointer): %s\n", en(pid));
	printf("a child was left: %s\n", waitpid(-1, NULL, WNOHANG) < 0 && errno == ECHILD ? "no" : "yes");
	/* a struct larger than the kernel's: the extra bytes must be zero (E2BIG), and no more than a page */
	static uint64_t bigca[64];
	memset(bigca, 0, sizeof(bigca));
	bigca[4] = SIGCHLD;
	bigca[20] = 1;
	printf("clone3(larger struct, extra byte set): %s\n", en(syscall(SYS_clone3, bigca, sizeof(bigca))));
	printf("clone3(size 4104): %s\n", en(syscall(SYS_clone3, bigca, 4104)));
	bigca[20] = 0;
	pid = syscall(SYS_clone3, bigca, sizeof(bigca));
	if (pid == 0)
		_exit(3);
	printf("clone3(larger struct, zero extra): %s\n", en(pid));
	if (pid > 0)
		waitpid(pid, NULL, 0);
}

/* clone3's set_tid: its argument errors (as Linux's, for root too), then choosing a pid at all (settid_perm). */
struct clone_args_tid {
	uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls, set_tid, set_tid_size, cgroup;
};
static long clone3_tid(uint64_t set_tid, uint64_t n)
{
	struct clone_args_tid ca = { .exit_signal = SIGCHLD, .set_tid = set_tid, .set_tid_size = n };
	long pid = syscall(SYS_clone3, &ca, sizeof(ca));
	if (pid == 0)
		_exit(0);
	if (pid > 0)
		waitpid(pid, NULL, 0);
	return pid;
}

static void mode_settid(void)
{
	static int32_t tids[40] = { -1, 7, 8 };
	printf("set_tid_size 1, set_tid NULL: %s\n", en(clone3_tid(0, 1)));
	printf("set_tid given, size 0: %s\n", en(clone3_tid((uint64_t)tids, 0)));
	printf("set_tid_size 33: %s\n", en(clone3_tid((uint64_t)tids, 33)));
	printf("set_tid bad pointer: %s\n", en(clone3_tid(8, 1)));
	printf("set_tid_size 2 (deeper than our pid namespace): %s\n", en(clone3_tid((uint64_t)&tids[1], 2)));
	printf("set_tid -1: %s\n", en(clone3_tid((uint64_t)tids, 1)));
	tids[3] = 0;
	printf("set_tid 0: %s\n", en(clone3_tid((uint64_t)&tids[3], 1)));
}

static void mode_settid_perm(void)
{
	int32_t tid = 900;
	printf("set_tid 900: %s\n", en(clone3_tid((uint64_t)&tid, 1)));
}

static void mode_nonblock(void)
{
	int ctl;
	pid_t pid = child(&ctl, 4);
	int fd = popen_(pid, O_NONBLOCK);
	printf("pidfd_open(PIDFD_NONBLOCK): %s, O_NONBLOCK: %s\n", en(fd), fcntl(fd, F_GETFL) & O_NONBLOCK ? "yes" : "no");
	wait_pidfd(fd, WEXITED);
	wait_pidfd(fd, WEXITED | WNOHANG);
	close(ctl);
	pollstr(fd, 10000);
	wait_pidfd(fd, WEXITED);
}

int main(int argc, char **argv)
{
	const char *m = argc > 1 ? argv[1] : "";

	setvbuf(stdout, NULL, _IONBF, 0);
	alarm(20);
	if (!strcmp(m, "exit"))
		mode_exit();
	else if (!strcmp(m, "errors"))
		mode_errors();
	else if (!strcmp(m, "signal"))
		mode_signal();
	else if (!strcmp(m, "getfd"))
		mode_getfd();
	else if (!strcmp(m, "reuse"))
		mode_reuse();
	else if (!strcmp(m, "clone"))
		mode_clone();
	else if (!strcmp(m, "nonblock"))
		mode_nonblock();
	else if (!strcmp(m, "settid"))
		mode_settid();
	else if (!strcmp(m, "settid_perm"))
		mode_settid_perm();
	else
		return 2;
	return 0;
}

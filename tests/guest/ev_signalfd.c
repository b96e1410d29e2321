/* ev_signalfd: signalfd/signalfd4 read the guest's pending signals with their siginfo.
 * usage: ev_signalfd read|queue|epoll|fork|thread|errors
 *   read    a read dequeues a blocked pending signal: signo, code (SI_USER/SI_TKILL/SI_QUEUE), sender pid
 *           and uid compared with ours; several signals in one read; EAGAIN when none; the mask can change
 *   queue   sigqueue values come through (ssi_int, ssi_ptr); real-time signals queue, standard ones do not;
 *           a child's exit gives SIGCHLD with its pid and status
 *   epoll   a signalfd in epoll and poll is readable while a signal is pending
 *   fork    after fork, a read in the child sees the child's pending signals, not the parent's
 *   thread  a signal sent to the process is read by a thread's signalfd; a tgkill to another thread is not
 *   errors  EINVAL for a bad sigsetsize, flags, a short buffer, a non-signalfd fd; EFAULT; SIGKILL/SIGSTOP
 *           are silently dropped from the mask
 * Prints what happened; the caller compares with the native run. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "evnet.h"

static const char *code_name(int c)
{
	switch (c) {
	case SI_USER: return "SI_USER";
	case SI_TKILL: return "SI_TKILL";
	case SI_QUEUE: return "SI_QUEUE";
	case CLD_EXITED: return "CLD_EXITED";
	case CLD_KILLED: return "CLD_KILLED";
	default: return "other";
	}
}

static sigset_t set_of(int a, int b, int c)
{
	sigset_t s;
	sigemptyset(&s);
	if (a)
		sigaddset(&s, a);
	if (b)
		sigaddset(&s, b);
	if (c)
		sigaddset(&s, c);
	return s;
}

/* read one siginfo and print what it says, pids and ids compared with ours */
static void show_one(const char *what, int fd, pid_t from)
{
	struct signalfd_siginfo si;
	memset(&si, 0, sizeof si);
	long r = read(fd, &si, sizeof si);
	if (r != sizeof si) {
		say("%s: %s\n", what, rs(r));
		return;
	}
	say("%s: %ld, signo %s, code %s, pid is the sender %s, uid mine %s\n", what, r, strsignal(si.ssi_signo),
	    code_name(si.ssi_code), yesno((pid_t)si.ssi_pid == from), yesno(si.ssi_uid == getuid()));
}

static int mode_read(void)
{
	sigset_t m = set_of(SIGUSR1, SIGUSR2, SIGTERM);
	sigprocmask(SIG_BLOCK, &m, NULL);
	int fd = signalfd(-1, &m, SFD_NONBLOCK);
	say("signalfd: %s\n", fd >= 0 ? "ok" : rs(fd));
	show_one("nothing pending", fd, 0);
	kill(getpid(), SIGUSR1);
	show_one("kill SIGUSR1", fd, getpid());
	show_one("again", fd, 0);
	syscall(SYS_tgkill, getpid(), gettid(), SIGUSR2);
	show_one("tgkill SIGUSR2", fd, getpid());
	kill(getpid(), SIGTERM);
	kill(getpid(), SIGUSR2);
	kill(getpid(), SIGUSR1);
	struct signalfd_siginfo si[4];
	long r = read(fd, si, sizeof si);
	say("three pending, one read of 4: %s bytes, signals", rs(r));
	for (long i = 0; i < r / (long)sizeof si[0]; i++)
		say(" %s", strsignal(si[i].ssi_signo));
	say("\n");
	/* the mask is replaced by a second call on the same fd */
	sigset_t only1 = set_of(SIGUSR1, 0, 0);
	say("signalfd(fd, {SIGUSR1}): same fd %s\n", yesno(signalfd(fd, &only1, 0) == fd));
	kill(getpid(), SIGUSR2);
	show_one("SIGUSR2 pending, not in the mask", fd, 0);
	sigset_t pend;
	sigpending(&pend);
	say("SIGUSR2 still pending: %s\n", yesno(sigismember(&pend, SIGUSR2)));
	kill(getpid(), SIGUSR1);
	show_one("SIGUSR1", fd, getpid());
	/* a blocking read waits for a signal from a child */
	int b = signalfd(-1, &m, SFD_CLOEXEC);
	say("SFD_CLOEXEC: %s\n", yesno(fcntl(b, F_GETFD) & FD_CLOEXEC));
	sigset_t t = set_of(SIGTERM, 0, 0);
	signalfd(b, &t, 0);
	pid_t k = signal_us_later(SIGTERM, 100000);
	show_one("blocking read, a child sends SIGTERM", b, k);
	wait_child(k);
	return 0;
}

static int mode_queue(void)
{
	int rt = SIGRTMIN + 2;
	sigset_t m = set_of(SIGUSR1, rt, SIGCHLD);
	sigprocmask(SIG_BLOCK, &m, NULL);
	int fd = signalfd(-1, &m, SFD_NONBLOCK);
	union sigval v = { .sival_int = 1234 };
	sigqueue(getpid(), rt, v);
	v.sival_int = 5678;
	sigqueue(getpid(), rt, v);
	kill(getpid(), SIGUSR1);
	kill(getpid(), SIGUSR1);
	struct signalfd_siginfo si[8];
	long r = read(fd, si, sizeof si);
	say("read: %s bytes\n", rs(r));
	for (long i = 0; i < r / (long)sizeof si[0]; i++)
		say("  %s code %s int %d ptr low word %llu\n", si[i].ssi_signo == (uint32_t)rt ? "SIGRTMIN+2" : strsignal(si[i].ssi_signo),
		    code_name(si[i].ssi_code), si[i].ssi_code == SI_QUEUE ? si[i].ssi_int : 0,
		    si[i].ssi_code == SI_QUEUE ? (unsigned long long)(si[i].ssi_ptr & 0xffffffff) : 0ULL);
	pid_t k = fork();
	if (k == 0)
		_exit(7);
	waitid(P_PID, k, NULL, WEXITED | WNOWAIT);
	struct signalfd_siginfo c;
	memset(&c, 0, sizeof c);
	r = read(fd, &c, sizeof c);
	say("SIGCHLD: %s, code %s, pid is the child %s, status %d\n", rs(r), code_name(c.ssi_code), yesno((pid_t)c.ssi_pid == k),
	    c.ssi_status);
	wait_child(k);
	return 0;
}

static int mode_epoll(void)
{
	sigset_t m = set_of(SIGUSR1, 0, 0);
	sigprocmask(SIG_BLOCK, &m, NULL);
	int fd = signalfd(-1, &m, SFD_NONBLOCK);
	int ep = epoll_create1(0);
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = 42 }, got;
	epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
	say("epoll, nothing pending: %s\n", rs(epoll_wait(ep, &got, 1, 0)));
	kill(getpid(), SIGUSR1);
	long r = epoll_wait(ep, &got, 1, 0);
	say("epoll, SIGUSR1 pending: %s data %llu\n", rs(r), (unsigned long long)got.data.u64);
	struct pollfd p = { fd, POLLIN, 0 };
	say("poll: %s\n", rs(poll(&p, 1, 0)));
	show_one("read", fd, getpid());
	say("epoll after the read: %s\n", rs(epoll_wait(ep, &got, 1, 0)));
	pid_t k = signal_us_later(SIGUSR1, 100000);
	r = epoll_wait(ep, &got, 1, 5000);
	say("epoll blocked until a child sends SIGUSR1: %s\n", rs(r));
	show_one("read", fd, k);
	wait_child(k);
	return 0;
}

static int mode_fork(void)
{
	sigset_t m = set_of(SIGUSR1, SIGUSR2, 0);
	sigprocmask(SIG_BLOCK, &m, NULL);
	int fd = signalfd(-1, &m, SFD_NONBLOCK);
	kill(getpid(), SIGUSR1);
	pid_t k = fork();
	if (k == 0) {
		/* the parent's pending SIGUSR1 is not the child's (fork clears pending signals) */
		show_one("child, nothing of its own pending", fd, 0);
		kill(getpid(), SIGUSR2);
		show_one("child, its own SIGUSR2", fd, getpid());
		_exit(0);
	}
	say("child: exit %d\n", wait_child(k));
	show_one("parent, its SIGUSR1", fd, getpid());
	show_one("parent, nothing left", fd, 0);
	return 0;
}

static int thread_fd;
static pthread_t main_thread;

static void *reader(void *arg)
{
	(void)arg;
	show_one("thread reads a signal sent to the process", thread_fd, getpid());
	/* a signal directed at the main thread is not the reader's */
	pthread_kill(main_thread, SIGUSR2);
	show_one("thread, SIGUSR2 sent to the main thread", thread_fd, 0);
	return NULL;
}

static int mode_thread(void)
{
	sigset_t m = set_of(SIGUSR1, SIGUSR2, 0);
	sigprocmask(SIG_BLOCK, &m, NULL);
	thread_fd = signalfd(-1, &m, SFD_NONBLOCK);
	main_thread = pthread_self();
	kill(getpid(), SIGUSR1);
	pthread_t t;
	pthread_create(&t, NULL, reader, NULL);
	pthread_join(t, NULL);
	show_one("main thread, its SIGUSR2", thread_fd, getpid());
	return 0;
}

static int mode_errors(void)
{
	sigset_t m = set_of(SIGUSR1, 0, 0);
	say("sigsetsize 4: %s\n", rs(syscall(SYS_signalfd4, -1, &m, 4, 0)));
	say("sigsetsize 16: %s\n", rs(syscall(SYS_signalfd4, -1, &m, 16, 0)));
	say("bad flags: %s\n", rs(syscall(SYS_signalfd4, -1, &m, 8, 0x1)));
	say("bad mask pointer: %s\n", rs(syscall(SYS_signalfd4, -1, 8, 8, 0)));
	say("signalfd (no flags) syscall: %s\n", rs(syscall(SYS_signalfd, -1, &m, 8) >= 0 ? 0 : -1));
	say("on a pipe fd: %s\n", rs(signalfd(1, &m, 0)));
	say("on fd 999: %s\n", rs(signalfd(999, &m, 0)));
	sigset_t k = set_of(SIGKILL, SIGSTOP, SIGUSR1);
	sigprocmask(SIG_BLOCK, &m, NULL);
	int fd = signalfd(-1, &k, SFD_NONBLOCK);
	say("mask with SIGKILL and SIGSTOP: %s\n", fd >= 0 ? "ok" : rs(fd));
	struct signalfd_siginfo si;
	say("read 10 bytes: %s\n", rs(read(fd, &si, 10)));
	kill(getpid(), SIGUSR1);
	say("read into a bad buffer: %s\n", rs(syscall(SYS_read, fd, 8, sizeof si)));
	sigset_t pend;
	sigpending(&pend);
	say("SIGUSR1 still pending after the EFAULT: %s\n", yesno(sigismember(&pend, SIGUSR1)));
	say("write: %s\n", rs(write(fd, &si, sizeof si)));
	return 0;
}

int main(int argc, char **argv)
{
	static const struct mode modes[] = {
		{ "read", mode_read }, { "queue", mode_queue },	  { "epoll", mode_epoll },
		{ "fork", mode_fork }, { "thread", mode_thread }, { "errors", mode_errors },
	};
	return run_mode("ev_signalfd", modes, sizeof modes / sizeof modes[0], argc, argv);
}

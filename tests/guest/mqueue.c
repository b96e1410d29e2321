// SPDX-License-Identifier: GPL-2.0
/*
 * POSIX message queues by raw syscalls, natively and in the sandbox:
 * names, O_CREAT/O_EXCL, attributes and their limits, priorities, the
 * QSIZE line, O_NONBLOCK and mq_getsetattr, timeouts, signals, blocking
 * both ways across fork, poll, mq_notify SIGEV_SIGNAL, unlink while open,
 * and hostile input: bad names, bad pointers and timespecs. Queue names
 * carry the pid so parallel native runs do not meet.
 *   mqueue basic | block | notify | hostile | limit | limit-unlinked | thread-limit | thread-congested | forever
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <limits.h>
#include <mqueue.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>

#include "guest.h"

struct attr {
	long flags, maxmsg, msgsize, curmsgs, pad[4];
};

static char qname[64];

static int mq_open_(const char *name, int flags, unsigned mode, struct attr *a)
{
	return (int)syscall(SYS_mq_open, name, flags, mode, a);
}
static long mq_send_(int fd, const void *m, size_t len, unsigned prio, const struct timespec *to)
{
	return syscall(SYS_mq_timedsend, fd, m, len, prio, to);
}
static long mq_recv_(int fd, void *m, size_t len, unsigned *prio, const struct timespec *to)
{
	return syscall(SYS_mq_timedreceive, fd, m, len, prio, to);
}
static long mq_attr_(int fd, struct attr *n, struct attr *o) { return syscall(SYS_mq_getsetattr, fd, n, o); }

static const char *err(int e)
{
	switch (e) {
	case ETIMEDOUT: return "ETIMEDOUT";
	case EMSGSIZE: return "EMSGSIZE";
	case ENAMETOOLONG: return "ENAMETOOLONG";
	case ENOSPC: return "ENOSPC";
	case ENOTSOCK: return "ENOTSOCK";
	default: return errname(e);
	}
}

static void show(const char *what, long r)
{
	if (r < 0)
		say("%s: %s\n", what, err(errno));
	else
		say("%s: %ld\n", what, r);
}

static void recv_show(const char *what, int fd)
{
	char buf[8192 + 1] = "";
	unsigned prio = 99;
	struct timespec zero = { 0, 0 };
	long n = mq_recv_(fd, buf, sizeof(buf) - 1, &prio, &zero);

	if (n < 0)
		say("%s: %s\n", what, err(errno));
	else
		say("%s: '%.*s' prio %u\n", what, (int)n, buf, prio);
}

static void qsize_line(int fd)
{
	char b[128] = "";
	long n = pread(fd, b, sizeof(b) - 1, 0);
	/* NOTIFY_PID differs between runs: up to SIGNO only */
	char *p = n > 0 ? strstr(b, " NOTIFY_PID") : NULL;
	if (p)
		*p = 0;
	say("line: %s\n", n < 0 ? err(errno) : b);
}

static void basic(void)
{
	struct attr a = { 0, 4, 16, 0 }, o;

	show("open missing", mq_open_(qname, O_RDWR, 0, NULL));
	int fd = mq_open_(qname, O_RDWR | O_CREAT | O_EXCL, 0600, &a);
	show("create", fd < 0 ? -1 : 0);
	show("create again O_EXCL", mq_open_(qname, O_RDWR | O_CREAT | O_EXCL, 0600, &a));
	int fd2 = mq_open_(qname, O_RDONLY, 0, NULL);
	show("open existing", fd2 < 0 ? -1 : 0);
	show("O_ACCMODE 3", mq_open_(qname, 3, 0, NULL));
	mq_attr_(fd, NULL, &o);
	say("attr flags %ld maxmsg %ld msgsize %ld curmsgs %ld\n", o.flags, o.maxmsg, o.msgsize, o.curmsgs);
	show("send low", mq_send_(fd, "low", 3, 1, NULL));
	show("send high", mq_send_(fd, "high", 4, 30, NULL));
	show("send mid1", mq_send_(fd, "mid1", 4, 10, NULL));
	show("send mid2", mq_send_(fd, "mid2", 4, 10, NULL));
	show("send full nonblock", (mq_attr_(fd, &(struct attr){ .flags = O_NONBLOCK }, NULL),
				    mq_send_(fd, "x", 1, 0, NULL)));
	mq_attr_(fd, NULL, &o);
	say("attr flags nonblock %s curmsgs %ld\n", yesno(o.flags & O_NONBLOCK), o.curmsgs);
	qsize_line(fd);
	struct pollfd p = { fd2, POLLIN };
	show("poll with messages", poll(&p, 1, 0));
	say("revents POLLIN %s\n", yesno(p.revents & POLLIN));
	show("send too big", mq_send_(fd, "0123456789abcdefX", 17, 0, NULL));
	show("send on read-only fd", mq_send_(fd2, "x", 1, 0, NULL));
	show("send too big on read-only fd", mq_send_(fd2, "0123456789abcdefX", 17, 0, NULL));
	char small[8];
	show("receive short buffer", mq_recv_(fd2, small, sizeof(small), NULL, NULL));
	for (int i = 0; i < 4; i++)
		recv_show("receive", fd2);
	recv_show("receive empty nonblock", fd);
	p.revents = 0;
	show("poll empty", poll(&p, 1, 0));
	struct timespec past = { 1, 0 };
	show("receive blocking, deadline past", mq_recv_(fd2, small, 16, NULL, &past));
	show("unlink", syscall(SYS_mq_unlink, qname));
	show("unlink again", syscall(SYS_mq_unlink, qname));
	show("open after unlink", mq_open_(qname, O_RDWR, 0, NULL));
	show("send after unlink", mq_send_(fd, "still", 5, 0, NULL));
	recv_show("receive after unlink", fd2);
	show("send on stdin", mq_send_(0, "x", 1, 0, NULL));
	show("write(2) to an mq fd", write(fd, "x", 1));
	show("getsetattr bad flags", mq_attr_(fd, &(struct attr){ .flags = O_APPEND }, NULL));
	struct attr bad[] = { { 0, 0, 16, 0 }, { 0, 4, 0, 0 }, { 0, 100000, 16, 0 }, { 0, 4, 1 << 25, 0 } };
	for (int i = 0; i < 4; i++) {
		int f = mq_open_(qname, O_RDWR | O_CREAT, 0600, &bad[i]);
		show("create with bad attr", f);
		if (f >= 0)
			syscall(SYS_mq_unlink, qname);
	}
	int d = mq_open_(qname, O_RDWR | O_CREAT, 0600, NULL);
	mq_attr_(d, NULL, &o);
	say("default maxmsg %ld msgsize %ld\n", o.maxmsg, o.msgsize);
	syscall(SYS_mq_unlink, qname);
}

static int usr1;
static void on_usr1(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	usr1 = sig == SIGUSR1 && si->si_code == SI_MESGQ && si->si_value.sival_int == 4242 && si->si_pid == getpid();
}
static void on_alarm(int sig) { (void)sig; }
static volatile int thread_val;
static void on_thread(union sigval v) { thread_val = v.sival_int; }

/* Waits: a receiver woken by another process's send, a sender by a receive, a timeout, a signal. */
static void block(void)
{
	struct attr a = { 0, 1, 32, 0 };
	int fd = mq_open_(qname, O_RDWR | O_CREAT, 0600, &a);
	char buf[32];
	unsigned prio;

	pid_t c = fork();
	if (c == 0) {
		usleep(100 * 1000);
		mq_send_(fd, "from child", 10, 7, NULL);
		usleep(100 * 1000);
		mq_send_(fd, "one", 3, 0, NULL);	/* fills the queue */
		mq_send_(fd, "two", 3, 0, NULL);	/* waits for the parent's receive */
		_exit(0);
	}
	long n = mq_recv_(fd, buf, sizeof(buf), &prio, NULL);
	say("woken receiver: '%.*s' prio %u\n", (int)(n < 0 ? 0 : n), buf, prio);
	usleep(300 * 1000);
	n = mq_recv_(fd, buf, sizeof(buf), &prio, NULL);
	say("got '%.*s'\n", (int)(n < 0 ? 0 : n), buf);
	n = mq_recv_(fd, buf, sizeof(buf), &prio, NULL);
	say("got '%.*s'\n", (int)(n < 0 ? 0 : n), buf);
	say("child exit %d\n", wait_child(c));
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	now.tv_nsec += 100 * 1000 * 1000;
	if (now.tv_nsec >= 1000000000L)
		now.tv_sec++, now.tv_nsec -= 1000000000L;
	show("receive times out", mq_recv_(fd, buf, sizeof(buf), NULL, &now));
	struct sigaction sa = { .sa_handler = on_alarm };
	sigaction(SIGALRM, &sa, NULL);
	/* Every 100 ms: one that comes before the call blocks (a loaded host) is not the one that ends it. */
	ualarm(100 * 1000, 100 * 1000);
	show("receive interrupted", mq_recv_(fd, buf, sizeof(buf), NULL, NULL));
	mq_send_(fd, "full", 4, 0, NULL);
	show("send interrupted", mq_send_(fd, "more", 4, 0, NULL));
	ualarm(0, 0);
	syscall(SYS_mq_unlink, qname);
}

static void notify(void)
{
	int fd = mq_open_(qname, O_RDWR | O_CREAT, 0600, NULL);
	struct sigaction sa = { .sa_sigaction = on_usr1, .sa_flags = SA_SIGINFO };
	sigaction(SIGUSR1, &sa, NULL);
	struct sigevent ev = { .sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIGUSR1 };
	ev.sigev_value.sival_int = 4242;

	show("notify", syscall(SYS_mq_notify, fd, &ev));
	show("notify again", syscall(SYS_mq_notify, fd, &ev));
	pid_t c = fork();
	if (c == 0) {
		show("child notify: busy", syscall(SYS_mq_notify, fd, &ev));
		show("child unregister (not its own)", syscall(SYS_mq_notify, fd, NULL));
		_exit(0);
	}
	wait_child(c);
	qsize_line(fd);
	mq_send_(fd, "hi", 2, 0, NULL);
	say("signal with SI_MESGQ, value, pid: %s\n", yesno(usr1));
	usr1 = 0;
	mq_send_(fd, "again", 5, 0, NULL);
	say("second signal (registration gone): %s\n", yesno(usr1));
	show("notify after it fired", syscall(SYS_mq_notify, fd, &ev));
	show("unregister", syscall(SYS_mq_notify, fd, NULL));
	show("unregister twice", syscall(SYS_mq_notify, fd, NULL));
	/* SIGEV_THREAD, the C library's: a netlink socket gets the kernel's cookie and starts the thread. */
	char buf[8192];
	while (mq_recv_(fd, buf, sizeof(buf), NULL, &(struct timespec){ 0, 0 }) >= 0)
		;
	struct sigevent te = { .sigev_notify = SIGEV_THREAD, .sigev_notify_function = on_thread };
	te.sigev_value.sival_int = 777;
	show("notify thread", mq_notify(fd, &te));
	mq_send_(fd, "t", 1, 0, NULL);
	for (int i = 0; i < 500 && !thread_val; i++)
		usleep(10 * 1000);
	say("thread ran with the value: %s\n", yesno(thread_val == 777));
	show("notify thread again", mq_notify(fd, &te));
	show("unregister the thread", mq_notify(fd, NULL));
	struct sigevent raw = { .sigev_notify = SIGEV_THREAD, .sigev_signo = 0 };
	raw.sigev_value.sival_ptr = buf;
	show("SIGEV_THREAD to stdin", syscall(SYS_mq_notify, fd, &raw));
	raw.sigev_signo = 999;
	show("SIGEV_THREAD to no fd", syscall(SYS_mq_notify, fd, &raw));
	raw.sigev_value.sival_ptr = (void *)8;
	show("SIGEV_THREAD bad cookie", syscall(SYS_mq_notify, fd, &raw));
	ev.sigev_notify = 77;
	show("bad sigev_notify", syscall(SYS_mq_notify, fd, &ev));
	ev.sigev_notify = SIGEV_SIGNAL;
	ev.sigev_signo = 65;
	show("bad signal", syscall(SYS_mq_notify, fd, &ev));
	ev.sigev_notify = SIGEV_NONE;
	show("notify on stdin", syscall(SYS_mq_notify, 0, &ev));
	show("notify bad sevp", syscall(SYS_mq_notify, fd, (void *)8));
	/* A registration goes with its process (its exit closes the fd: mqueue_flush_file), zombie or not. */
	struct sigevent zev = { .sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIGUSR1 };
	pid_t z = fork();
	if (z == 0)
		_exit(syscall(SYS_mq_notify, fd, &zev) ? 1 : 0);
	siginfo_t zi;
	waitid(P_PID, (id_t)z, &zi, WEXITED | WNOWAIT);
	qsize_line(fd);
	show("notify with the old owner a zombie", syscall(SYS_mq_notify, fd, &zev));
	wait_child(z);
	syscall(SYS_mq_unlink, qname);
}

static void hostile(void)
{
	char longname[300];
	memset(longname, 'n', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = 0;
	show("name with a slash", mq_open_("a/b", O_RDWR | O_CREAT, 0600, NULL));
	show("name ..", mq_open_("..", O_RDWR | O_CREAT, 0600, NULL));
	show("name .", mq_open_(".", O_RDWR | O_CREAT, 0600, NULL));
	show("empty name", mq_open_("", O_RDWR | O_CREAT, 0600, NULL));
	show("name 299 bytes", mq_open_(longname, O_RDWR | O_CREAT, 0600, NULL));
	show("name pointer bad", mq_open_((void *)8, O_RDWR | O_CREAT, 0600, NULL));
	show("attr pointer bad", mq_open_(qname, O_RDWR | O_CREAT, 0600, (void *)8));
	show("unlink slash", syscall(SYS_mq_unlink, "x/../y"));
	show("unlink bad pointer", syscall(SYS_mq_unlink, (void *)8));
	int fd = mq_open_(qname, O_RDWR | O_CREAT, 0600, NULL);
	char buf[8192];
	struct timespec bad[] = { { -1, 0 }, { 0, -1 }, { 0, 1000000000L } };
	for (int i = 0; i < 3; i++) {
		show("receive bad timespec", mq_recv_(fd, buf, sizeof(buf), NULL, &bad[i]));
		show("send bad timespec", mq_send_(fd, "x", 1, 0, &bad[i]));
	}
	show("receive timespec unmapped", mq_recv_(fd, buf, sizeof(buf), NULL, (void *)8));
	show("send prio MQ_PRIO_MAX", mq_send_(fd, "x", 1, 32768, NULL));
	show("send huge len", mq_send_(fd, "x", (size_t)-1, 0, NULL));
	show("send from unmapped", mq_send_(fd, (void *)8, 4, 0, NULL));
	show("send ok", mq_send_(fd, "kept?", 5, 3, NULL));
	show("receive to unmapped", mq_recv_(fd, (void *)8, sizeof(buf), NULL, NULL));
	struct attr o;
	mq_attr_(fd, NULL, &o);
	say("curmsgs after EFAULT %ld\n", o.curmsgs);
	mq_send_(fd, "x", 1, 3, NULL);
	show("receive prio to unmapped", mq_recv_(fd, buf, sizeof(buf), (void *)8, NULL));
	show("getsetattr old unmapped", mq_attr_(fd, NULL, (void *)8));
	show("getsetattr new unmapped", mq_attr_(fd, (void *)8, NULL));
	show("getsetattr on stdin", mq_attr_(0, NULL, &o));
	show("send huge timeout", mq_send_(fd, "x", 1, 0, &(struct timespec){ LONG_MAX, 0 }));
	/* msg_len is a size_t: past LONG_MAX it is still no less than mq_msgsize */
	show("receive len SIZE_MAX", mq_recv_(fd, buf, (size_t)-1, NULL, &(struct timespec){ 0, 0 }));
	syscall(SYS_mq_unlink, qname);
}

/* queues_max: 256 for an unprivileged user (ENOSPC); RLIMIT_MSGQUEUE (EMFILE) is far off for tiny queues. */
static void limit(int unlinked)
{
	char n[96];
	int made = 0;
	long r = 0;
	for (int i = 0; i < 300; i++) {
		snprintf(n, sizeof(n), "%s_%d", qname, i);
		struct attr tiny = { 0, 1, 1, 0 };
		r = mq_open_(n, O_RDWR | O_CREAT, 0600, &tiny);
		if (r < 0)
			break;
		if (unlinked)	/* the queue lives on its fd: Linux counts it until evicted */
			syscall(SYS_mq_unlink, n);
		else
			close((int)r);
		made++;
	}
	say("made %d, then %s\n", made, r < 0 ? err(errno) : "none");
	for (int i = 0; i < made && !unlinked; i++) {
		snprintf(n, sizeof(n), "%s_%d", qname, i);
		syscall(SYS_mq_unlink, n);
	}
}


/*
 * SIGEV_THREAD registrations on many queues, raw: each is a host mqueue of
 * the sentry's in the host's IPC namespace, whose queues_max every user of
 * the host shares, so pvx holds few at once.
 */
static void thread_limit(void)
{
	char n[96], cookie[32] = "";
	int made = 0, ns = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, 0);
	long r = 0;
	struct sigevent ev = { .sigev_notify = SIGEV_THREAD, .sigev_signo = ns };
	ev.sigev_value.sival_ptr = cookie;
	int fds[41] = { [40] = -1 };
	for (int i = 0; i < 40; i++) {
		snprintf(n, sizeof(n), "%s_t%d", qname, i);
		struct attr tiny = { 0, 1, 1, 0 };
		int fd = fds[i] = mq_open_(n, O_RDWR | O_CREAT, 0600, &tiny);
		syscall(SYS_mq_unlink, n);
		if (fd < 0 || (r = syscall(SYS_mq_notify, fd, &ev)) < 0)
			break;
		made++;
	}
	say("registered %d, then %s\n", made, r < 0 ? err(errno) : "none");
	close(fds[0]);	/* its queue, unlinked, goes and its registration with it */
	show("another after one went", syscall(SYS_mq_notify, fds[made], &ev));
}

static void on_alrm(int sig) { (void)sig; }

/*
 * SIGEV_THREAD to a netlink socket whose receive buffer is full: Linux's
 * netlink_attachskb waits for room, interruptibly; an alarm ends it with
 * EINTR, and the rest of the sandbox runs meanwhile.
 */
static void thread_congested(void)
{
	struct { uint32_t len; uint16_t type, flags; uint32_t seq, pid; } noop = { 16, 1, 1 | 4, 0, 0 };
	struct { uint16_t family, pad; uint32_t pid, groups; } kernel = { AF_NETLINK, 0, 0, 0 };
	int ns = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, 0), one = 1;
	setsockopt(ns, SOL_SOCKET, SO_RCVBUF, &one, sizeof(one));
	for (int i = 0; i < 64; i++)	/* NLMSG_NOOP with NLM_F_ACK: acks fill the buffer */
		sendto(ns, &noop, sizeof(noop), MSG_DONTWAIT, (void *)&kernel, sizeof(kernel));
	int fd = mq_open_(qname, O_RDWR | O_CREAT, 0600, NULL);
	syscall(SYS_mq_unlink, qname);
	char cookie[32] = "";
	struct sigevent ev = { .sigev_notify = SIGEV_THREAD, .sigev_signo = ns };
	ev.sigev_value.sival_ptr = cookie;
	struct sigaction sa = { .sa_handler = on_alrm };
	sigaction(SIGALRM, &sa, NULL);
	alarm(1);
	show("SIGEV_THREAD to a full socket", syscall(SYS_mq_notify, fd, &ev));
}

int main(int argc, char **argv)
{
	const char *m = argc > 1 ? argv[1] : "basic";

	snprintf(qname, sizeof(qname), "pvx_mq_test_%d", getpid());
	if (!strcmp(m, "basic"))
		basic();
	else if (!strcmp(m, "block"))
		block();
	else if (!strcmp(m, "notify"))
		notify();
	else if (!strcmp(m, "hostile"))
		hostile();
	else if (!strcmp(m, "limit"))
		limit(0);
	else if (!strcmp(m, "thread-congested"))
		thread_congested();
	else if (!strcmp(m, "thread-limit"))
		thread_limit();
	else if (!strcmp(m, "limit-unlinked"))	/* created, unlinked, kept open */
		limit(1);
	else if (!strcmp(m, "forever")) {	/* waits until killed */
		int fd = mq_open_(qname, O_RDWR | O_CREAT, 0600, NULL);
		char buf[8192];
		syscall(SYS_mq_unlink, qname);
		say("waiting\n");
		mq_recv_(fd, buf, sizeof(buf), NULL, NULL);
		say("never\n");
	}
	else
		return 2;
	return 0;
}

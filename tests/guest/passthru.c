/* passthru: reads of regular files that pvx's seccomp stub may serve itself (issue 16,
 * sentry/platform/seccomp_passthrough.md), compared with Linux. Each mode reads a file a few times first
 * (the stub takes over from the 4th read), then does what could tell a stale or wrong passthrough apart.
 * On stderr (not compared), "pt N: on" or "pt N: off" says whether the stub held a dup of fd N at that point
 * (probed at its passthrough site; natively there is no stub, and nothing is printed).
 * usage: passthru MODE FILE [FILE2]
 *   mix      read/pread/lseek/readv mixes on one open file: data and offsets
 *   pipe     dup2 of a non-blocking pipe onto the fd: the pipe's data, EAGAIN, then EOF
 *   reopen   close the fd and open FILE2 at the same number: FILE2's data
 *   fork     reads in a fork child and in the parent after it (one shared offset)
 *   race     a thread reads while another closes and dup2's over the fd: only FILE or FILE2's data, or EBADF
 *   unshare  unshare(CLONE_FILES), close, read: EBADF; the old table is not read
 *   vm       a CLONE_VM child without CLONE_FILES closes the fd and reads it: EBADF; the parent still reads
 *   vfork    the same in a vfork child
 *   exec     an O_CLOEXEC fd read, then execve: the fd is gone (EBADF)
 *   traced   a child reads, then PTRACE_TRACEME: its parent sees a syscall stop for each read that follows
 *   pipes    a pipe's read end read by the stub (from its 5th read): a read that must wait for a writer,
 *            O_NONBLOCK's EAGAIN, a signal's EINTR, 1 MiB in 4 KiB reads, EOF; then the writers' EPIPE as soon
 *            as the reader closed its end, or exited
 *   pipew    a pipe's write end written by the stub (writes of PIPE_BUF bytes at most, from the 5th): two
 *            processes' 512-byte records never torn, O_NONBLOCK's EAGAIN once full, a write that must wait
 *            for the reader, 100000 bytes in one write, EPIPE with one SIGPIPE, O_ASYNC's SIGIO */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guest.h"
#include "stubgadget.h"

#define PT_SITE (STUB_TEXT + 0x340)	/* include/pvx/stub_layout.h STUB_OFF_SITE_PT */
#define PT_BASE 800

/* The stub's passthrough site, if this is pvx's seccomp stub: "syscall; ret" there. */
static uintptr_t pt_site(void)
{
	static int probed;
	static uintptr_t site;

	if (!probed) {
		probed = 1;
		probe_init();
		if (readable(PT_SITE) && !memcmp((const void *)PT_SITE, "\x0f\x05\xc3", 3))
			site = PT_SITE;
	}
	return site;
}

/* stderr: does the stub hold fd's write end (a write of 0 bytes there works)? */
static void note_ptw(int fd)
{
	uintptr_t s = pt_site();

	if (!s)
		return;
	long r = stub_call(s, SYS_write, PT_BASE + fd, (long)"", 0, 0, 0, 0);
	dprintf(2, "ptw %d: %s\n", fd, r >= 0 ? "on" : "off");
}

/* stderr: does the stub hold a dup of fd (a pread of one byte there works)? */
static void note_pt(int fd)
{
	char b;
	uintptr_t s = pt_site();

	if (!s)
		return;
	long r = stub_call(s, SYS_read, PT_BASE + fd, (long)&b, 0, 0, 0, 0);	/* 0 bytes: a pipe's data stays */
	dprintf(2, "pt %d: %s\n", fd, r >= 0 ? "on" : "off");
}

static unsigned sum(const char *b, long n)
{
	unsigned h = 2166136261u;
	for (long i = 0; i < n; i++)
		h = (h ^ (unsigned char)b[i]) * 16777619u;
	return h;
}

static void show(const char *what, long n, const char *b)
{
	if (n < 0)
		say("%s: -1 %s\n", what, errname(errno));
	else
		say("%s: %ld %08x\n", what, n, sum(b, n));
}

static int open_warm(const char *path, int flags)
{
	char b[64];
	int fd = open(path, O_RDONLY | flags);

	if (fd < 0) {
		say("open %s: %s\n", path, errname(errno));
		exit(1);
	}
	for (int i = 0; i < 5; i++)
		if (read(fd, b, sizeof b) != sizeof b) {
			say("warm-up read %d short\n", i);
			exit(1);
		}
	return fd;
}

static int mix(const char *path)
{
	char b[5000], c[300];
	int fd = open_warm(path, 0);
	note_pt(fd);
	show("read", read(fd, b, 100), b);
	say("pos %ld\n", (long)lseek(fd, 0, SEEK_CUR));
	show("pread 7", pread(fd, b, 4096, 7), b);
	say("pos %ld\n", (long)lseek(fd, 0, SEEK_CUR));
	say("lseek %ld\n", (long)lseek(fd, 1000, SEEK_SET));
	show("read", read(fd, b, 5000), b);
	struct iovec iov[2] = { { b, 10 }, { c, 300 } };
	show("readv", readv(fd, iov, 2), b);
	show("read", read(fd, b, 17), b);
	say("lseek end %ld\n", (long)lseek(fd, -10, SEEK_END));
	show("read at end", read(fd, b, 100), b);
	show("read eof", read(fd, b, 100), b);
	show("pread past end", pread(fd, b, 100, 1 << 30), b);
	show("pread -1", pread(fd, b, 100, -1), b);
	void *volatile bad = (void *)16;
	lseek(fd, 0, SEEK_SET);
	show("read bad buffer at 0", read(fd, bad, 100), b);
	say("pos %ld\n", (long)lseek(fd, 0, SEEK_CUR));
	note_pt(fd);
	return 0;
}

static int pipe_mode(const char *path)
{
	char b[64];
	int p[2], fd = open_warm(path, 0);
	note_pt(fd);
	if (pipe2(p, O_NONBLOCK) < 0)
		return 1;
	if (write(p[1], "through the pipe", 16) != 16)
		return 1;
	say("dup2 %d\n", dup2(p[0], fd) == fd);
	note_pt(fd);
	show("read", read(fd, b, sizeof b), b);
	show("read empty", read(fd, b, sizeof b), b);
	close(p[1]);
	show("read eof", read(fd, b, sizeof b), b);
	show("pread", pread(fd, b, sizeof b, 0), b);
	return 0;
}

static int reopen(const char *path, const char *path2)
{
	char b[64];
	int fd = open_warm(path, 0);
	note_pt(fd);
	close(fd);
	show("read closed", read(fd, b, sizeof b), b);
	note_pt(fd);
	int fd2 = open(path2, O_RDONLY);
	say("same number %d\n", fd2 == fd);
	show("read", read(fd2, b, sizeof b), b);
	show("pread", pread(fd2, b, sizeof b, 3), b);
	return 0;
}

static int fork_mode(const char *path)
{
	char b[512];
	int fd = open_warm(path, 0);
	note_pt(fd);
	pid_t pid = fork();
	if (pid == 0) {
		note_pt(fd);
		for (int i = 0; i < 6; i++)
			show("child read", read(fd, b, sizeof b), b);
		close(fd);
		show("child read closed", read(fd, b, sizeof b), b);
		_exit(0);
	}
	int st;
	waitpid(pid, &st, 0);
	say("child status %d\n", st);
	note_pt(fd);
	say("pos %ld\n", (long)lseek(fd, 0, SEEK_CUR));
	for (int i = 0; i < 6; i++)
		show("parent read", read(fd, b, sizeof b), b);
	return 0;
}

/* race: what a reader may see is FILE's or FILE2's first bytes, or EBADF. */
static volatile int stop;
static int race_fd;
static char want1[16], want2[16];
static long seen_bad, seen_ok;

static void *reader(void *arg)
{
	char b[16];
	(void)arg;
	while (!stop) {
		long n = pread(race_fd, b, sizeof b, 0);
		if (n < 0 ? errno != EBADF : (n != 16 || (memcmp(b, want1, 16) && memcmp(b, want2, 16))))
			seen_bad++;
		else
			seen_ok++;
	}
	return NULL;
}

static int race(const char *path, const char *path2)
{
	int fd = open_warm(path, 0), fd2 = open(path2, O_RDONLY);
	if (fd2 < 0 || pread(fd, want1, 16, 0) != 16 || pread(fd2, want2, 16, 0) != 16)
		return 1;
	for (int i = 0; i < 5; i++)	/* both on (fd2 too), before the second thread exists */
		(void)!pread(fd2, want2, 16, 0);
	note_pt(fd);
	race_fd = fd;
	pthread_t th;
	pthread_create(&th, NULL, reader, NULL);
	for (int i = 0; i < 300; i++) {
		if (i % 2)
			dup2(fd2, fd);
		else {
			close(fd);
			if (open(path, O_RDONLY) != fd)
				say("reopen got another number\n");
		}
		sched_yield();
	}
	stop = 1;
	pthread_join(th, NULL);
	say("reads of a file never open there: %ld\n", seen_bad);
	dprintf(2, "reads: %ld\n", seen_ok);
	return 0;
}

static int unshare_mode(const char *path)
{
	char b[64];
	int fd = open_warm(path, 0);
	note_pt(fd);
	say("unshare %d\n", unshare(CLONE_FILES));
	note_pt(fd);
	show("read after unshare", read(fd, b, sizeof b), b);
	close(fd);
	show("read closed", read(fd, b, sizeof b), b);
	show("pread closed", pread(fd, b, sizeof b, 0), b);
	return 0;
}

static char stack[65536] __attribute__((aligned(16)));
static int vm_fd;

static int vm_child(void *arg)
{
	char b[64];
	(void)arg;
	close(vm_fd);
	show("child read closed", read(vm_fd, b, sizeof b), b);
	show("child pread closed", pread(vm_fd, b, sizeof b, 0), b);
	return 0;
}

static int vm_mode(const char *path, int vfork_too)
{
	char b[64];
	int st;
	vm_fd = open_warm(path, 0);
	note_pt(vm_fd);
	pid_t pid = clone(vm_child, stack + sizeof stack, CLONE_VM | (vfork_too ? CLONE_VFORK : 0) | SIGCHLD, NULL);
	if (pid < 0)
		return 1;
	waitpid(pid, &st, 0);
	say("child status %d\n", st);
	note_pt(vm_fd);
	show("parent read", read(vm_fd, b, sizeof b), b);
	return 0;
}

static int exec_mode(const char *self, const char *path)
{
	char b[64], fdstr[16];
	int fd = open_warm(path, O_CLOEXEC);
	note_pt(fd);
	show("read", read(fd, b, sizeof b), b);
	snprintf(fdstr, sizeof fdstr, "%d", fd);
	execl(self, self, "after-exec", fdstr, (char *)NULL);
	say("execl: %s\n", errname(errno));
	return 1;
}

static int after_exec(int fd)
{
	char b[64];
	note_pt(fd);
	show("read after exec", read(fd, b, sizeof b), b);
	show("pread after exec", pread(fd, b, sizeof b, 0), b);
	return 0;
}

static int traced(const char *path)
{
	char b[64];
	int st, stops = 0;
	pid_t pid = fork();
	if (pid == 0) {
		int fd = open_warm(path, 0);
		note_pt(fd);
		if (ptrace(PTRACE_TRACEME, 0, 0, 0) < 0)
			_exit(3);
		raise(SIGSTOP);
		for (int i = 0; i < 10; i++)
			if (read(fd, b, sizeof b) != sizeof b)
				_exit(4);
		_exit(0);
	}
	if (waitpid(pid, &st, 0) != pid || !WIFSTOPPED(st))
		return 1;
	for (;;) {
		if (ptrace(PTRACE_SYSCALL, pid, 0, 0) < 0 || waitpid(pid, &st, 0) != pid)
			return 1;
		if (WIFEXITED(st))
			break;
		struct user_regs_struct r;
		if (WIFSTOPPED(st) && WSTOPSIG(st) == SIGTRAP && ptrace(PTRACE_GETREGS, pid, 0, &r) == 0 &&
		    r.orig_rax == SYS_read)
			stops++;
	}
	say("child exit %d, read syscall stops %d\n", WEXITSTATUS(st), stops);
	return 0;
}

static void on_alarm(int sig)
{
	(void)sig;
}

/* A pipe whose read end was read 5 times (the stub takes it over from the 4th). */
static void pipe_warm(int p[2])
{
	char b[8];
	if (pipe(p) < 0)
		exit(1);
	for (int i = 0; i < 5; i++)
		if (write(p[1], "warm", 4) != 4 || read(p[0], b, 4) != 4)
			exit(1);
}

static void write_epipe(const char *what, int fd)
{
	long r = write(fd, "x", 1);
	say("%s: write %ld %s\n", what, r, r < 0 ? errname(errno) : "");
}

static int pipes(void)
{
	char b[4096];
	int p[2], st;
	signal(SIGPIPE, SIG_IGN);
	pipe_warm(p);
	note_pt(p[0]);
	/* A read that waits: the writer writes 100 ms later. */
	pid_t pid = fork();
	if (pid == 0) {
		usleep(100000);
		_exit(write(p[1], "late", 4) == 4 ? 0 : 1);
	}
	show("read waits for the writer", read(p[0], b, sizeof b), b);
	waitpid(pid, &st, 0);
	note_pt(p[0]);	/* (the fork turned it off; the next read turns it on again) */
	show("read after fork", (write(p[1], "again", 5), read(p[0], b, sizeof b)), b);
	note_pt(p[0]);
	fcntl(p[0], F_SETFL, O_NONBLOCK);
	show("read O_NONBLOCK empty", read(p[0], b, sizeof b), b);
	fcntl(p[0], F_SETFL, 0);
	struct sigaction sa = { .sa_handler = on_alarm };	/* no SA_RESTART */
	sigaction(SIGALRM, &sa, NULL);
	struct itimerval it = { .it_value = { 0, 100000 } };
	setitimer(ITIMER_REAL, &it, NULL);
	show("read interrupted", read(p[0], b, sizeof b), b);
	/* 1 MiB in 64 KiB writes, read 4 KiB at a time. */
	pid = fork();
	if (pid == 0) {
		static char big[65536];
		for (int i = 0; i < 16; i++) {
			memset(big, 'a' + i, sizeof big);
			if (write(p[1], big, sizeof big) != sizeof big)
				_exit(1);
		}
		_exit(0);
	}
	close(p[1]);
	unsigned h = 2166136261u;
	long total = 0, n, reads = 0;
	while ((n = read(p[0], b, sizeof b)) > 0) {
		for (long i = 0; i < n; i++)
			h = (h ^ (unsigned char)b[i]) * 16777619u;
		total += n;
		reads++;
	}
	waitpid(pid, &st, 0);
	say("1 MiB: %ld bytes %08x, last read %ld, writer %d\n", total, h, n, st);
	dprintf(2, "reads: %ld\n", reads);
	note_pt(p[0]);
	show("read eof", read(p[0], b, sizeof b), b);
	close(p[0]);
	/* The reader closes its end: its writers get EPIPE at once. */
	pipe_warm(p);
	note_pt(p[0]);
	close(p[0]);
	write_epipe("after the reader's close", p[1]);
	close(p[1]);
	/* The reader exits without closing: EPIPE once it is reaped. */
	pipe_warm(p);
	pid = fork();
	if (pid == 0) {
		close(p[1]);
		for (int i = 0; i < 6; i++)
			if (read(p[0], b, 4) != 4)
				_exit(1);
		note_pt(p[0]);
		_exit(0);
	}
	close(p[0]);
	for (int i = 0; i < 6; i++)
		if (write(p[1], "data", 4) != 4)
			return 1;
	waitpid(pid, &st, 0);
	say("reader status %d\n", st);
	write_epipe("after the reader's exit", p[1]);
	return 0;
}

static volatile int sigpipes, sigios;

static void on_sig(int sig)
{
	if (sig == SIGPIPE)
		sigpipes++;
	else
		sigios++;
}

/* A record of 512 bytes, all its writer's letter: torn if it holds two. */
static int pipew(void)
{
	char b[512];
	int p[2], st;
	struct sigaction sa = { .sa_handler = on_sig };
	sigaction(SIGPIPE, &sa, NULL);
	sigaction(SIGIO, &sa, NULL);
	pipe_warm(p);
	note_ptw(p[1]);
	pid_t w[2];
	for (int k = 0; k < 2; k++) {
		w[k] = fork();
		if (w[k] == 0) {
			memset(b, 'a' + k, sizeof b);
			for (int i = 0; i < 2000; i++)
				if (write(p[1], b, sizeof b) != sizeof b)
					_exit(1);
			note_ptw(p[1]);
			_exit(0);
		}
	}
	long recs = 0, torn = 0, got = 0;
	while (recs < 4000) {
		long n = read(p[0], b + got, sizeof b - got);
		if (n <= 0)
			break;
		got += n;
		if (got < (long)sizeof b)
			continue;
		got = 0;
		recs++;
		for (int i = 1; i < (int)sizeof b; i++)
			if (b[i] != b[0]) {
				torn++;
				break;
			}
	}
	for (int k = 0; k < 2; k++)
		waitpid(w[k], &st, 0);
	say("records %ld torn %ld, writers %d\n", recs, torn, st);
	/* Full: O_NONBLOCK says EAGAIN. */
	note_ptw(p[1]);
	fcntl(p[1], F_SETFL, O_NONBLOCK);
	long total = 0, n;
	memset(b, 'x', sizeof b);
	while ((n = write(p[1], b, sizeof b)) > 0)
		total += n;
	say("filled %ld, then %s\n", total, n < 0 ? errname(errno) : "0");
	fcntl(p[1], F_SETFL, 0);
	/* A write that must wait: the reader drains it 100 ms later. */
	pid_t pid = fork();
	if (pid == 0) {
		usleep(100000);
		char d[4096];
		long left = total + 512;
		while (left > 0 && (n = read(p[0], d, sizeof d)) > 0)
			left -= n;
		_exit(left == 0 ? 0 : 1);
	}
	say("write that waits: %ld\n", (long)write(p[1], b, sizeof b));
	waitpid(pid, &st, 0);
	say("reader %d\n", st);
	/* One write bigger than PIPE_BUF: the sentry's. */
	static char big[100000];
	pid = fork();
	if (pid == 0) {
		unsigned h = 2166136261u;
		long left = sizeof big;
		char d[4096];
		while (left > 0 && (n = read(p[0], d, sizeof d)) > 0) {
			for (long i = 0; i < n; i++)
				h = (h ^ (unsigned char)d[i]) * 16777619u;
			left -= n;
		}
		say("100000 bytes read: %08x\n", h);
		_exit(0);
	}
	for (long i = 0; i < (long)sizeof big; i++)
		big[i] = (char)(i * 7);
	n = write(p[1], big, sizeof big);
	waitpid(pid, &st, 0);	/* (its line first) */
	say("write 100000: %ld\n", n);
	/* O_ASYNC on the read end: a small write signals it (pipe writes reach the sentry's SIGIO again). */
	note_ptw(p[1]);
	fcntl(p[0], F_SETOWN, getpid());
	fcntl(p[0], F_SETFL, O_ASYNC);
	note_ptw(p[1]);
	for (int i = 0; i < 6; i++)
		if (write(p[1], "async", 5) != 5 || read(p[0], b, 5) != 5)
			return 1;
	note_ptw(p[1]);
	say("SIGIO %s\n", sigios ? "seen" : "not seen");
	/* The readers gone: EPIPE, and one SIGPIPE per write. */
	close(p[0]);
	n = write(p[1], "x", 1);
	say("write after the reader's close: %ld %s, SIGPIPE %d\n", n, n < 0 ? errname(errno) : "", sigpipes);
	close(p[1]);
	/* Again on a pipe whose write end the stub holds (no O_ASYNC file left): still one SIGPIPE a write. */
	pipe_warm(p);
	note_ptw(p[1]);
	close(p[0]);
	for (int i = 0; i < 3; i++) {
		n = write(p[1], "x", 1);
		say("write %d after the reader's close: %ld %s, SIGPIPE %d\n", i, n, n < 0 ? errname(errno) : "",
		    sigpipes);
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	const char *m = argv[1], *f = argv[2], *f2 = argc > 3 ? argv[3] : argv[2];
	if (!strcmp(m, "mix"))
		return mix(f);
	if (!strcmp(m, "pipe"))
		return pipe_mode(f);
	if (!strcmp(m, "reopen"))
		return reopen(f, f2);
	if (!strcmp(m, "fork"))
		return fork_mode(f);
	if (!strcmp(m, "race"))
		return race(f, f2);
	if (!strcmp(m, "unshare"))
		return unshare_mode(f);
	if (!strcmp(m, "vm"))
		return vm_mode(f, 0);
	if (!strcmp(m, "vfork"))
		return vm_mode(f, 1);
	if (!strcmp(m, "exec"))
		return exec_mode(argv[0], f);
	if (!strcmp(m, "traced"))
		return traced(f);
	if (!strcmp(m, "pipew"))
		return pipew();
	if (!strcmp(m, "pipes"))
		return pipes();
	if (!strcmp(m, "after-exec"))
		return after_exec(atoi(f));
	return 2;
}

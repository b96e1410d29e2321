/*
 * clone(2)'s CLONE_FILES, CLONE_FS and CLONE_SIGHAND between processes, threads made without
 * CLONE_FS/CLONE_FILES, unshare(2), execve and close_range(CLOSE_RANGE_UNSHARE) on a shared fd
 * table, and kcmp(2) of all of it (tests/clone_files.bats). Run natively and under pvx: the
 * output must be the same.
 *   clone_files share      what each flag shares, seen from both sides, and kcmp's answers
 *   clone_files thread     a thread without CLONE_FS/CLONE_FILES (LTP clone08), and one with them
 *   clone_files unshare    unshare(2) of files and fs, its EINVAL rules, close_range UNSHARE
 *   clone_files exec       a CLONE_FILES|CLONE_SIGHAND child that execs leaves our fds and handlers
 *   clone_files race       (hostile) a sharer closes and dup2s fds we use; a sharer exits while we block
 *   clone_files ns         namespace flags (sandbox only: natively root may make namespaces)
 */
#define _GNU_SOURCE
#include <fcntl.h>

#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "guest.h"

enum { KCMP_FILE, KCMP_VM, KCMP_FILES, KCMP_FS, KCMP_SIGHAND, KCMP_IO, KCMP_SYSVSEM };

#define STACK (256 * 1024)

static int kcmp_(pid_t a, pid_t b, int type)
{
	return (int)syscall(SYS_kcmp, a, b, type, 0, 0);
}

static const char *eq(int r)
{
	return r == 0 ? "equal" : r > 0 ? "differ" : errname(errno);
}

/* clone(fn) with flags and a fresh stack; the pid (or tid), or -errno. */
static pid_t spawn(int (*fn)(void *), unsigned long flags, void *arg)
{
	char *stack = malloc(STACK);
	pid_t p = clone(fn, stack + STACK, (int)flags, arg);
	return p < 0 ? -errno : p;
}

static volatile int step;	/* for children sharing our memory */
static int shared_fd = -1;

static void wait_step(int s)
{
	while (step < s)
		sched_yield();
}

/* A child of the share test: opens a file, chdirs, sets umask and a handler, closes fd 'arg'. */
static int sharer(void *arg)
{
	int fd = (int)(long)arg;
	shared_fd = open("/dev/null", O_RDONLY);
	if (chdir("/tmp") < 0)
		_exit(3);
	umask(027);
	signal(SIGUSR1, SIG_IGN);
	close(fd);
	return 0;
}

static void handler(int s) { (void)s; }

static void share_case(const char *name, unsigned long flags)
{
	char cwd[256];
	int fd = open("/dev/zero", O_RDONLY);
	if (chdir("/") < 0)
		_exit(4);
	umask(022);
	signal(SIGUSR1, handler);
	int before = dup(0);
	close(before);	/* the lowest free fd: where the child's open lands */
	shared_fd = -1;
	pid_t c = spawn(sharer, flags | SIGCHLD, (void *)(long)fd);
	if (c < 0) {
		say("%s: clone: %s\n", name, errname(-c));
		return;
	}
	/* kcmp before the child is reaped (a zombie has no files or fs): the child waits for no one, so compare the objects we kept */
	int st = wait_child(c);
	struct sigaction sa;
	sigaction(SIGUSR1, NULL, &sa);
	unsigned m = umask(0);
	umask(m);
	say("%s: child status %d; its fd %d open here: %s; our fd closed by it: %s; cwd %s; umask %03o; SIGUSR1 %s\n",
	    name, st, before, yesno(fcntl(before, F_GETFD) >= 0), yesno(fcntl(fd, F_GETFD) < 0),
	    getcwd(cwd, sizeof(cwd)) ? cwd : "?", m,
	    sa.sa_handler == SIG_IGN ? "ignored" : sa.sa_handler == handler ? "handler" : "default");
	close(before);
	close(fd);
}

/* kcmp's view: a child that waits for us to compare it with ourselves. */
static int sleeper(void *arg)
{
	(void)arg;
	wait_step(1);
	return 0;
}

static int quick(void *arg)
{
	(void)arg;
	return 0;
}

static void kcmp_case(const char *name, unsigned long flags)
{
	step = 0;
	pid_t c = spawn(sleeper, flags | CLONE_VM | SIGCHLD, NULL);
	if (c < 0) {
		say("%s: clone: %s\n", name, errname(-c));
		return;
	}
	pid_t me = getpid();
	say("%s: kcmp VM %s FILES %s FS %s SIGHAND %s\n", name, eq(kcmp_(me, c, KCMP_VM)),
	    eq(kcmp_(me, c, KCMP_FILES)), eq(kcmp_(me, c, KCMP_FS)), eq(kcmp_(me, c, KCMP_SIGHAND)));
	step = 1;
	wait_child(c);
}

/* kcmp from the child (LTP kcmp03): the flag's object compares equal with the parent's. */
static int kcmp03_child(void *arg)
{
	int type = (int)(long)arg;
	return kcmp_(getppid(), getpid(), type) == 0 ? 0 : 1;
}

static void do_share(void)
{
	share_case("none", 0);
	share_case("CLONE_FILES", CLONE_FILES);
	share_case("CLONE_FS", CLONE_FS);
	share_case("CLONE_FILES|CLONE_FS", CLONE_FILES | CLONE_FS);
	share_case("VM|SIGHAND", CLONE_VM | CLONE_SIGHAND);
	share_case("VM|FS|FILES|SIGHAND (clone02)", CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND);
	kcmp_case("kcmp VM", 0);
	kcmp_case("kcmp VM|FILES", CLONE_FILES);
	kcmp_case("kcmp VM|FS", CLONE_FS);
	kcmp_case("kcmp VM|SIGHAND", CLONE_SIGHAND);
	kcmp_case("kcmp VM|FS|FILES|SIGHAND", CLONE_FS | CLONE_FILES | CLONE_SIGHAND);
	static const struct { unsigned long f; int t; const char *n; } k3[] = {
		{ CLONE_VM, KCMP_VM, "VM" }, { CLONE_FS, KCMP_FS, "FS" }, { CLONE_FILES, KCMP_FILES, "FILES" },
		{ CLONE_IO, KCMP_IO, "IO" }, { CLONE_SYSVSEM, KCMP_SYSVSEM, "SYSVSEM" },
	};
	for (unsigned i = 0; i < sizeof(k3) / sizeof(k3[0]); i++) {
		pid_t c = spawn(kcmp03_child, k3[i].f | SIGCHLD, (void *)(long)k3[i].t);
		say("kcmp03 %s: child says %s\n", k3[i].n, c < 0 ? errname(-c) : wait_child(c) == 0 ? "equal" : "differ");
	}
	/* copy_process's rules */
	pid_t c = spawn(quick, CLONE_SIGHAND | SIGCHLD, NULL);
	say("clone(SIGHAND without VM): %s\n", c < 0 ? errname(-c) : "made");
	c = spawn(quick, CLONE_THREAD | CLONE_VM | SIGCHLD, NULL);
	say("clone(THREAD without SIGHAND): %s\n", c < 0 ? errname(-c) : "made");
}

/* clone08's thread: no CLONE_FS, no CLONE_FILES. It opens, chdirs and umasks; the group sees none of it. */
static volatile pid_t thread_tid;
static volatile int thread_fd = -1;
static int thread_fn(void *arg)
{
	(void)arg;
	thread_tid = (pid_t)syscall(SYS_gettid);
	thread_fd = (int)syscall(SYS_open, "/dev/null", O_RDONLY, 0);
	syscall(SYS_chdir, "/tmp");
	syscall(SYS_umask, 077);
	step = 1;
	while (step < 2)
		syscall(SYS_sched_yield);
	step = 3;
	syscall(SYS_exit, 0);
	return 0;
}

static void thread_case(const char *name, unsigned long extra)
{
	char cwd[256];
	int probe = dup(0);
	close(probe);
	if (chdir("/") < 0)
		_exit(4);
	umask(022);
	step = 0;
	thread_tid = 0;
	pid_t t = spawn(thread_fn, CLONE_THREAD | CLONE_SIGHAND | CLONE_VM | SIGCHLD | extra, NULL);
	if (t < 0) {
		say("%s: clone: %s\n", name, errname(-t));
		return;
	}
	wait_step(1);
	unsigned m = umask(0);
	umask(m);
	pid_t me = getpid();
	say("%s: same tgid: %s; its fd %d open here: %s; cwd %s; umask %03o; kcmp VM %s FILES %s FS %s SIGHAND %s\n",
	    name, yesno(thread_tid != me), thread_fd, yesno(fcntl(probe, F_GETFD) >= 0),
	    getcwd(cwd, sizeof(cwd)) ? cwd : "?", m, eq(kcmp_(me, thread_tid, KCMP_VM)),
	    eq(kcmp_(me, thread_tid, KCMP_FILES)), eq(kcmp_(me, thread_tid, KCMP_FS)),
	    eq(kcmp_(me, thread_tid, KCMP_SIGHAND)));
	step = 2;
	wait_step(3);
	usleep(50000);
	if (fcntl(probe, F_GETFD) >= 0)
		close(probe);
}

static void do_thread(void)
{
	thread_case("thread without FS|FILES", 0);
	thread_case("thread with FS|FILES", CLONE_FS | CLONE_FILES);
	char cwd[256];
	say("after the threads: cwd %s (the second one's chdir)\n", getcwd(cwd, sizeof(cwd)) ? cwd : "?");
}

/* A CLONE_FILES|CLONE_FS child: unshares, then changes things; the parent must not see them. */
static int unsharer(void *arg)
{
	int fd = (int)(long)arg;
	if (unshare(CLONE_FILES | CLONE_FS) < 0)
		return 10;
	if (kcmp_(getppid(), getpid(), KCMP_FILES) == 0 || kcmp_(getppid(), getpid(), KCMP_FS) == 0)
		return 11;
	close(fd);
	return chdir("/tmp") < 0 ? 12 : 0;
}

static int closer(void *arg)
{
	int fd = (int)(long)arg;
	if (syscall(SYS_close_range, fd, fd, 2 /* CLOSE_RANGE_UNSHARE */) < 0)
		return 20;
	if (fcntl(fd, F_GETFD) >= 0)
		return 21;
	return kcmp_(getppid(), getpid(), KCMP_FILES) == 0 ? 22 : 0;
}

static int unshare_vm_child(void *arg)
{
	(void)arg;
	int r1 = unshare(CLONE_VM) < 0 ? errno : 0;
	int r2 = unshare(CLONE_SIGHAND) < 0 ? errno : 0;
	say("CLONE_VM|CLONE_SIGHAND child: unshare(CLONE_VM) %s, unshare(CLONE_SIGHAND) %s\n", errname(r1), errname(r2));
	return 0;
}

static int spin(void *arg)
{
	(void)arg;
	wait_step(1);
	syscall(SYS_exit, 0);
	return 0;
}

static void do_unshare(void)
{
	char cwd[256];
	if (chdir("/") < 0)
		_exit(4);
	int fd = open("/dev/zero", O_RDONLY);
	pid_t c = spawn(unsharer, CLONE_FILES | CLONE_FS | SIGCHLD, (void *)(long)fd);
	int st = wait_child(c);
	say("unshare(FILES|FS) child: status %d; our fd still open: %s; our cwd %s\n", st,
	    yesno(fcntl(fd, F_GETFD) >= 0), getcwd(cwd, sizeof(cwd)) ? cwd : "?");
	c = spawn(closer, CLONE_FILES | SIGCHLD, (void *)(long)fd);
	st = wait_child(c);
	say("close_range(UNSHARE) child: status %d; our fd still open: %s\n", st, yesno(fcntl(fd, F_GETFD) >= 0));
	say("unshare(0): %s\n", errname(unshare(0) < 0 ? errno : 0));
	say("unshare(FILES|FS|SYSVSEM) alone: %s\n", errname(unshare(CLONE_FILES | CLONE_FS | CLONE_SYSVSEM) < 0 ? errno : 0));
	say("unshare(THREAD|SIGHAND|VM) alone: %s\n", errname(unshare(CLONE_THREAD | CLONE_SIGHAND | CLONE_VM) < 0 ? errno : 0));
	say("unshare(CSIGNAL bits): %s\n", errname(unshare(SIGCHLD) < 0 ? errno : 0));
	say("unshare(CLONE_VFORK): %s\n", errname(unshare(CLONE_VFORK) < 0 ? errno : 0));
	c = spawn(unshare_vm_child, CLONE_VM | CLONE_SIGHAND | SIGCHLD, NULL);
	wait_child(c);
	/* a CLONE_VM process in our mm: unshare(CLONE_VM) is EINVAL for us too */
	step = 0;
	c = spawn(sleeper, CLONE_VM | SIGCHLD, NULL);
	say("with a CLONE_VM child: unshare(CLONE_VM) %s\n", errname(unshare(CLONE_VM) < 0 ? errno : 0));
	step = 1;
	wait_child(c);
	step = 0;
	pid_t t = spawn(spin, CLONE_THREAD | CLONE_SIGHAND | CLONE_VM | CLONE_FS | CLONE_FILES, NULL);
	say("with a thread: unshare(CLONE_THREAD) %s, unshare(CLONE_FILES) %s\n",
	    t < 0 ? "?" : errname(unshare(CLONE_THREAD) < 0 ? errno : 0), errname(unshare(CLONE_FILES) < 0 ? errno : 0));
	step = 1;
	usleep(50000);
	close(fd);
}

static char *self;
static int execer(void *arg)
{
	char num[16];
	snprintf(num, sizeof num, "%d", (int)(long)arg);
	char *argv[] = { self, "exec-child", num, NULL };
	execv(self, argv);
	return 30;
}

static void do_exec(void)
{
	int fd = open("/dev/zero", O_RDONLY | O_CLOEXEC);
	signal(SIGUSR1, handler);
	pid_t c = spawn(execer, CLONE_VM | CLONE_VFORK | CLONE_FILES | CLONE_SIGHAND | SIGCHLD, (void *)(long)fd);
	int st = wait_child(c);
	struct sigaction sa;
	sigaction(SIGUSR1, NULL, &sa);
	say("exec child: status %d; our O_CLOEXEC fd still open: %s; our SIGUSR1 handler kept: %s\n", st,
	    yesno(fcntl(fd, F_GETFD) >= 0), yesno(sa.sa_handler == handler));
}

/* exec-child: its fd table is its own now (the cloexec fd gone), its SIGUSR1 back to default. */
static int exec_child(int fd)
{
	struct sigaction sa;
	sigaction(SIGUSR1, NULL, &sa);
	say("exec-child: the O_CLOEXEC fd open: %s; SIGUSR1 default: %s; kcmp FILES with parent %s, SIGHAND %s\n", yesno(fcntl(fd, F_GETFD) >= 0),
	    yesno(sa.sa_handler == SIG_DFL), eq(kcmp_(getppid(), getpid(), KCMP_FILES)),
	    eq(kcmp_(getppid(), getpid(), KCMP_SIGHAND)));
	return 0;
}

/* race: a CLONE_FILES child closes and re-dups fd N a thousand times while we read from it. */
static int flipper(void *arg)
{
	int fd = (int)(long)arg;
	int other = open("/dev/null", O_RDONLY);
	for (int i = 0; i < 2000; i++) {
		if (i & 1)
			dup2(other, fd);
		else
			close(fd);
	}
	close(other);
	return 0;
}

static int blocker_exit(void *arg)
{
	(void)arg;
	usleep(100000);
	close(shared_fd);	/* the fd we are blocked reading on: our read goes on */
	return 0;
}

static void do_race(void)
{
	int z = open("/dev/zero", O_RDONLY);
	int fd = dup(z);
	pid_t c = spawn(flipper, CLONE_FILES | SIGCHLD, (void *)(long)fd);
	int ok = 0, bad = 0, other = 0;
	char b[16];
	for (int i = 0; i < 2000; i++) {
		ssize_t n = read(fd, b, sizeof b);
		if (n == sizeof b)
			ok++;
		else if (n == 0)
			other++;	/* /dev/null */
		else if (n < 0 && errno == EBADF)
			bad++;
		else
			say("race: unexpected read %zd %s\n", n, errname(errno));
	}
	int st = wait_child(c);
	say("race: flipper status %d; every read was data, EOF or EBADF: %s\n", st, yesno(ok + bad + other == 2000));
	close(fd);
	close(z);

	/* we block in read on a pipe; a sharer closes that fd and exits; a write still reaches our read */
	int p[2];
	if (pipe(p) < 0)
		_exit(5);
	shared_fd = p[0];
	pid_t w = fork();
	if (w == 0) {
		close(p[0]);
		usleep(300000);
		if (write(p[1], "late", 4) != 4)
			_exit(1);
		_exit(0);
	}
	close(p[1]);
	c = spawn(blocker_exit, CLONE_FILES | SIGCHLD, NULL);
	ssize_t n = read(p[0], b, sizeof b);
	int e = errno;
	wait_child(c);
	wait_child(w);
	say("race: read blocked on an fd a sharer closed and exited: %zd %s; fd now %s\n", n,
	    n == 4 ? "late" : errname(e), fcntl(p[0], F_GETFD) < 0 ? "closed" : "open");
}

static void do_ns(void)
{
	static const struct { int f; const char *n; } ns[] = {
		{ CLONE_NEWNS, "NEWNS" }, { CLONE_NEWUTS, "NEWUTS" }, { CLONE_NEWIPC, "NEWIPC" }, { CLONE_NEWNET, "NEWNET" },
		{ CLONE_NEWPID, "NEWPID" }, { CLONE_NEWCGROUP, "NEWCGROUP" }, { CLONE_NEWUSER, "NEWUSER" },
	};
	for (unsigned i = 0; i < sizeof(ns) / sizeof(ns[0]); i++) {
		pid_t c = spawn(quick, ns[i].f | SIGCHLD, NULL);
		if (c > 0)
			wait_child(c);
		say("%s: unshare %s clone %s\n", ns[i].n, errname(unshare(ns[i].f) < 0 ? errno : 0),
		    c > 0 ? "made" : errname(-c));
	}
}

int main(int argc, char **argv)
{
	self = argv[0];
	if (argc < 2)
		return 2;
	if (!strcmp(argv[1], "share"))
		do_share();
	else if (!strcmp(argv[1], "thread"))
		do_thread();
	else if (!strcmp(argv[1], "unshare"))
		do_unshare();
	else if (!strcmp(argv[1], "exec"))
		do_exec();
	else if (!strcmp(argv[1], "exec-child"))
		return argc > 2 ? exec_child(atoi(argv[2])) : 2;
	else if (!strcmp(argv[1], "race"))
		do_race();
	else if (!strcmp(argv[1], "ns"))
		do_ns();
	else
		return 2;
	return 0;
}

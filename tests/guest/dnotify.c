/* dnotify: fcntl(F_NOTIFY) on directories (fcntl38/fcntl39 of LTP and more): which changes signal whom, with what
 * siginfo, one-shot and DN_MULTISHOT, removal by close and by F_NOTIFY 0; the errors (ENOTDIR, EBADF, F_SETSIG
 * out of range). Run in an empty writable directory; compared with the native run. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guest.h"

#define SIG (SIGRTMIN + 1)
static volatile int hits[4], last_fd, last_code, bad_band, sigio;

static void on_rt(int sig, siginfo_t *si, void *u)
{
	(void)sig, (void)u;
	last_fd = si->si_fd;
	last_code = si->si_code;
	bad_band |= si->si_band != (POLLIN | POLLRDNORM | POLLMSG);
	for (int i = 0; i < 4; i++)
		if (si->si_fd == i + 3)
			hits[i]++;
}

static void on_io(int sig)
{
	(void)sig;
	sigio++;
}

static void reset(void)
{
	memset((void *)hits, 0, sizeof hits);
	sigio = 0;
	last_fd = -1;
}

static const char *R(long r)
{
	static char b[32];
	if (r < 0)
		snprintf(b, sizeof b, "-1 %s", errno == ENOTDIR ? "ENOTDIR" : errname(errno));
	else
		snprintf(b, sizeof b, "%ld", r);
	return b;
}

static int watch(int fd, unsigned arg, int sig)
{
	if (sig && fcntl(fd, F_SETSIG, sig))
		return -1;
	return fcntl(fd, F_NOTIFY, arg);
}

/* "many": F_NOTIFY on n directories of their own; how many took it, the first error; closing them gives the room back */
static int many(int n)
{
	static int fds[4096];
	char name[32];
	int ok = 0;
	const char *err = "none";
	for (int i = 0; i < n; i++) {
		snprintf(name, sizeof name, "d%d", i);
		mkdir(name, 0700);
		fds[i] = open(name, O_RDONLY);
		if (fcntl(fds[i], F_NOTIFY, DN_CREATE | DN_MULTISHOT) == 0)
			ok++;
		else if (!strcmp(err, "none"))
			err = errname(errno);
	}
	say("watched %d, first error %s\n", ok, err);
	for (int i = 0; i < n; i++)
		close(fds[i]);
	int fd = open("d0", O_RDONLY);
	say("after closing them: %s\n", R(fcntl(fd, F_NOTIFY, DN_CREATE)));
	return 0;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_sigaction = on_rt, .sa_flags = SA_SIGINFO };
	sigaction(SIG, &sa, NULL);
	signal(SIGIO, on_io);
	char tmp[] = "dnotify.XXXXXX";	/* a directory of its own: the native run and the sandbox's share the cwd */
	if (!mkdtemp(tmp) || chdir(tmp))
		return 1;
	if (argc > 2 && !strcmp(argv[1], "many"))
		return many(atoi(argv[2]));
	mkdir("sub", 0700);
	close(creat("file", 0644));

	/* fds 3 and 4: "." and "sub" (hits[0], hits[1]) */
	int dot = open(".", O_RDONLY), sub = open("sub", O_RDONLY);
	say("fds: %d %d\n", dot, sub);

	/* fcntl38: DN_ATTRIB on a subdirectory signals its parent and itself */
	say("F_NOTIFY DN_ATTRIB|DN_MULTISHOT: %s %s\n", R(watch(dot, DN_ATTRIB | DN_MULTISHOT, SIG)),
	    R(watch(sub, DN_ATTRIB | DN_MULTISHOT, SIG)));
	reset();
	chmod("sub", 0755);
	say("chmod sub: parent %d, sub %d, si_code POLL_MSG %s, si_band %s\n", hits[0], hits[1], yesno(last_code == POLL_MSG),
	    bad_band ? "wrong" : "POLLIN|POLLRDNORM|POLLMSG");
	reset();
	chmod("file", 0600);
	say("chmod file: parent %d, sub %d\n", hits[0], hits[1]);
	reset();
	close(creat("file2", 0644));
	say("creat under DN_ATTRIB only: parent %d\n", hits[0]);
	say("F_GETOWN is me: %s\n", yesno(fcntl(dot, F_GETOWN) == getpid()));
	say("F_NOTIFY 0 on sub: %s\n", R(fcntl(sub, F_NOTIFY, 0)));
	reset();
	chmod("sub", 0700);
	say("chmod sub after removal: parent %d, sub %d\n", hits[0], hits[1]);
	say("F_NOTIFY 0 on dot: %s\n", R(fcntl(dot, F_NOTIFY, DN_MULTISHOT)));

	/* fcntl39: DN_RENAME is a rename within the directory, not in or out of it */
	say("F_NOTIFY DN_RENAME|DN_MULTISHOT: %s %s\n", R(watch(dot, DN_RENAME | DN_MULTISHOT, SIG)),
	    R(watch(sub, DN_RENAME | DN_MULTISHOT, SIG)));
	reset();
	rename("file", "sub/file");
	say("rename . -> sub: parent %d, sub %d\n", hits[0], hits[1]);
	rename("sub", "sub2");
	say("rename sub -> sub2: parent %d, sub %d\n", hits[0], hits[1]);
	reset();
	rename("sub2/file", "sub2/file.b");
	say("rename within sub2: parent %d, sub %d\n", hits[0], hits[1]);
	rename("sub2/file.b", "file");
	rename("sub2", "sub");
	fcntl(dot, F_NOTIFY, 0);
	fcntl(sub, F_NOTIFY, 0);

	/* one-shot: the first event removes it; SIGIO without F_SETSIG */
	fcntl(dot, F_SETSIG, 0);
	reset();
	say("F_NOTIFY DN_CREATE (one-shot, SIGIO): %s\n", R(fcntl(dot, F_NOTIFY, DN_CREATE)));
	close(creat("c1", 0644));
	close(creat("c2", 0644));
	say("two creats: SIGIO %d\n", sigio);
	reset();
	say("F_NOTIFY DN_DELETE|DN_MULTISHOT: %s\n", R(fcntl(dot, F_NOTIFY, DN_DELETE | DN_MULTISHOT)));
	unlink("c1");
	say("unlink: SIGIO %d\n", sigio);
	rename("c2", "sub/c2");
	say("rename out: SIGIO %d\n", sigio);
	rmdir("nothing");
	say("failed rmdir: SIGIO %d\n", sigio);
	fcntl(dot, F_NOTIFY, 0);

	/* modify and access of a file in the directory; the directory read itself */
	fcntl(dot, F_SETSIG, SIG);
	say("F_NOTIFY DN_MODIFY|DN_MULTISHOT: %s\n", R(fcntl(dot, F_NOTIFY, DN_MODIFY | DN_MULTISHOT)));
	reset();
	int f = open("file", O_RDWR);
	say("open: parent %d\n", hits[0]);
	long r = write(f, "abc", 3);
	say("write: %s, parent %d\n", R(r), hits[0]);
	say("F_NOTIFY adds DN_ACCESS: %s\n", R(fcntl(dot, F_NOTIFY, DN_ACCESS)));
	char b[8];
	reset();
	r = pread(f, b, 3, 0);
	say("pread: %s, parent %d\n", R(r), hits[0]);
	close(f);

	/* a dup's close removes the record (dnotify_flush on every close of the file) */
	int d2 = dup(dot);
	close(d2);
	reset();
	close(creat("after-dup-close", 0644));
	f = open("file", O_RDWR);
	r = write(f, "x", 1);
	say("write after the dup's close: %s, parent %d\n", R(r), hits[0]);
	close(f);

	/* the fd given is si_fd; a child's change signals the parent */
	say("F_NOTIFY DN_CREATE|DN_MULTISHOT: %s\n", R(fcntl(dot, F_NOTIFY, DN_CREATE | DN_MULTISHOT)));
	reset();
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIG);
	sigprocmask(SIG_BLOCK, &set, NULL);
	pid_t c = fork();
	if (c == 0) {
		close(creat("by-child", 0644));
		_exit(0);
	}
	siginfo_t si;
	struct timespec ts = { 5, 0 };
	int got = sigtimedwait(&set, &si, &ts);
	say("child's creat: signal %s, si_fd %d, si_pid is the kernel's: %s\n", got == SIG ? "SIG" : "none", si.si_fd,
	    yesno(si.si_pid == 0));
	waitpid(c, NULL, 0);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	/* the record follows the fd table and the file: a fork's child closing its copy does not remove it */
	c = fork();
	if (c == 0) {
		close(dot);
		_exit(0);
	}
	waitpid(c, NULL, 0);
	reset();
	close(creat("after-child-close", 0644));
	say("creat after the child's close: parent %d\n", hits[0]);
	close(dot);
	reset();
	close(creat("after-close", 0644));
	say("creat after close: parent %d\n", hits[0]);

	/* errors */
	say("F_NOTIFY on a file: %s\n", R(fcntl(open("file", O_RDONLY), F_NOTIFY, DN_CREATE)));
	say("F_NOTIFY 0 on a file: %s\n", R(fcntl(open("file", O_RDONLY), F_NOTIFY, 0)));
	say("F_NOTIFY on a bad fd: %s\n", R(fcntl(999, F_NOTIFY, DN_CREATE)));
	say("F_NOTIFY on O_PATH: %s\n", R(fcntl(open(".", O_PATH), F_NOTIFY, DN_CREATE)));
	int p[2];
	pipe(p);
	say("F_NOTIFY on a pipe: %s\n", R(fcntl(p[0], F_NOTIFY, DN_CREATE)));
	int d3 = open(".", O_RDONLY);
	say("F_NOTIFY unknown bits only: %s\n", R(fcntl(d3, F_NOTIFY, 0x100)));
	say("F_NOTIFY all bits: %s\n", R(fcntl(d3, F_NOTIFY, ~0u)));
	say("F_SETSIG 65: %s\n", R(fcntl(d3, F_SETSIG, 65)));
	say("F_SETSIG -1: %s\n", R(fcntl(d3, F_SETSIG, -1)));
	return 0;
}

/* locks: fcntl(2) record locks between processes, in ./lockfile (made here).
 * POSIX locks (F_SETLK/F_SETLKW/F_GETLK) belong to the process: a forked child conflicts with its
 * parent's, F_GETLK names the holder's pid, closing ANY fd of the file drops the process's locks,
 * they are not inherited by fork and are kept by execve, F_SETLKW waits until the holder unlocks
 * (or a signal ends the wait with EINTR), a two-process cycle is EDEADLK, SEEK_CUR counts from the
 * fd's offset; the fd's mode limits the lock type (EBADF); OFD locks (F_OFD_*) belong to the open
 * file description and conflict with POSIX locks; bad arguments give Linux's errors.
 * usage: locks [execed FD] */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guest.h"

static int lk(int fd, int cmd, short type, short whence, off_t start, off_t len)
{
	struct flock fl = { .l_type = type, .l_whence = whence, .l_start = start, .l_len = len };
	errno = 0;
	return fcntl(fd, cmd, &fl);
}

/* F_GETLK of [start, start+len) for type: "unlocked" or "TYPE start len by parent|child|other". */
static const char *probe(int fd, short type, off_t start, off_t len, pid_t parent, pid_t child)
{
	static char buf[128];
	struct flock fl = { .l_type = type, .l_whence = SEEK_SET, .l_start = start, .l_len = len };
	if (fcntl(fd, F_GETLK, &fl) < 0)
		snprintf(buf, sizeof(buf), "F_GETLK %s", errname(errno));
	else if (fl.l_type == F_UNLCK)
		snprintf(buf, sizeof(buf), "unlocked");
	else
		snprintf(buf, sizeof(buf), "%s %ld %ld by %s", fl.l_type == F_WRLCK ? "write" : "read", (long)fl.l_start,
			 (long)fl.l_len, fl.l_pid == parent ? "parent" : fl.l_pid == child ? "child" : fl.l_pid == -1 ? "an OFD" : "other");
	return buf;
}

#define R(expr) (errno = 0, (expr) < 0 ? errname(errno) : "0")

static pid_t spawn(void (*fn)(int *), int *pipes)
{
	fflush(stdout);
	pid_t c = fork();
	if (c == 0) {
		fn(pipes);
		fflush(stdout);
		_exit(0);
	}
	return c;
}

static void wait_byte(int fd)
{
	char b;
	if (read(fd, &b, 1) != 1)
		_exit(3);
}

static void send_byte(int fd)
{
	if (write(fd, "x", 1) != 1)
		_exit(3);
}

static int p2c[2], c2p[2];

/* Until pid sleeps (state S in /proc/PID/stat), up to 10 s: after its last byte, only its F_SETLKW waits. */
static void wait_sleeping(pid_t pid)
{
	char path[64], buf[256];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	for (int i = 0; i < 2000; i++) {
		FILE *f = fopen(path, "r");
		char *p = f && fgets(buf, sizeof(buf), f) ? strrchr(buf, ')') : NULL;
		if (f)
			fclose(f);
		if (p && p[1] == ' ' && p[2] == 'S')
			return;
		usleep(5000);
	}
}

static void child_conflicts(int *unused)
{
	(void)unused;
	int fd = open("lockfile", O_RDWR);
	pid_t me = getpid(), parent = getppid();
	say("child: F_SETLK write 0-10: %s\n", R(lk(fd, F_SETLK, F_WRLCK, SEEK_SET, 0, 10)));
	say("child: F_SETLK read 20-30 (parent reads there): %s\n", R(lk(fd, F_SETLK, F_RDLCK, SEEK_SET, 20, 10)));
	say("child: F_GETLK write 5-6: %s\n", probe(fd, F_WRLCK, 5, 1, parent, me));
	say("child: F_GETLK write 100-110: %s\n", probe(fd, F_WRLCK, 100, 10, parent, me));
	say("child: F_UNLCK of the parent's range changes nothing: %s\n", R(lk(fd, F_SETLK, F_UNLCK, SEEK_SET, 0, 10)));
	say("child: still locked by the parent: %s\n", probe(fd, F_WRLCK, 5, 1, parent, me));
	send_byte(c2p[1]);
	wait_byte(p2c[0]);	/* the parent closed another fd of the file */
	say("child: after the parent closed another fd: %s\n", probe(fd, F_WRLCK, 5, 1, parent, me));
	say("child: F_SETLK write 0-10 now: %s\n", R(lk(fd, F_SETLK, F_WRLCK, SEEK_SET, 0, 10)));
	send_byte(c2p[1]);
	wait_byte(p2c[0]);	/* the parent waits in F_SETLKW for 0-10 */
	usleep(100000);
	say("child: unlocks 0-10\n");
	lk(fd, F_SETLK, F_UNLCK, SEEK_SET, 0, 10);
	wait_byte(p2c[0]);
}

static void child_deadlock(int *unused)
{
	(void)unused;
	int fd = open("lockfile", O_RDWR);
	say("deadlock child: lock 50-60: %s\n", R(lk(fd, F_SETLK, F_WRLCK, SEEK_SET, 50, 10)));
	send_byte(c2p[1]);
	/* then wait for the parent's 40-50: the parent will ask for ours and get EDEADLK */
	say("deadlock child: F_SETLKW 40-50: %s\n", R(lk(fd, F_SETLKW, F_WRLCK, SEEK_SET, 40, 10)));
	wait_byte(p2c[0]);
}

static void on_alarm(int s)
{
	(void)s;
}

static void child_ofd(int *unused)
{
	(void)unused;
	int fd = open("lockfile", O_RDWR);
	say("ofd child: POSIX write 70-80 under the parent's OFD lock: %s\n", R(lk(fd, F_SETLK, F_WRLCK, SEEK_SET, 70, 10)));
	say("ofd child: F_GETLK 70-80: %s\n", probe(fd, F_WRLCK, 70, 10, getppid(), getpid()));
	/* a signal ends an F_SETLKW wait with EINTR (no SA_RESTART) */
	struct sigaction sa = { .sa_handler = on_alarm };
	sigaction(SIGALRM, &sa, NULL);
	alarm(1);
	say("ofd child: F_SETLKW 70-80 ended by SIGALRM: %s\n", R(lk(fd, F_SETLKW, F_WRLCK, SEEK_SET, 70, 10)));
}

int main(int argc, char **argv)
{
	if (argc > 2 && !strcmp(argv[1], "execed")) {
		int fd = atoi(argv[2]);
		pid_t c = fork();
		if (c == 0) {
			int f2 = open("lockfile", O_RDWR);
			say("after execve, a child sees: %s\n", probe(f2, F_WRLCK, 0, 1, getppid(), getpid()));
			_exit(0);
		}
		waitpid(c, NULL, 0);
		say("after execve, own F_SETLK read 0-1 on the kept fd: %s\n", R(lk(fd, F_SETLK, F_RDLCK, SEEK_SET, 0, 1)));
		unlink("lockfile");
		return 0;
	}
	unlink("lockfile");
	int fd = open("lockfile", O_RDWR | O_CREAT, 0666);
	if (fd < 0 || ftruncate(fd, 4096) < 0 || pipe(p2c) < 0 || pipe(c2p) < 0) {
		perror("setup");
		return 1;
	}
	pid_t me = getpid();
	int fd2 = open("lockfile", O_RDONLY);
	int rd = open("lockfile", O_RDONLY), wr = open("lockfile", O_WRONLY);
	say("== argument errors\n");
	say("F_SETLK l_type 7: %s\n", R(lk(fd, F_SETLK, 7, SEEK_SET, 0, 1)));
	say("F_SETLK l_whence 9: %s\n", R(lk(fd, F_SETLK, F_WRLCK, 9, 0, 1)));
	say("F_SETLK a bad pointer: %s\n", R(fcntl(fd, F_SETLK, (void *)16)));
	say("F_GETLK F_UNLCK: %s\n", R(lk(fd, F_GETLK, F_UNLCK, SEEK_SET, 0, 1)));
	say("F_SETLK write on an O_RDONLY fd: %s\n", R(lk(rd, F_SETLK, F_WRLCK, SEEK_SET, 0, 1)));
	say("F_SETLK read on an O_WRONLY fd: %s\n", R(lk(wr, F_SETLK, F_RDLCK, SEEK_SET, 0, 1)));
	say("F_SETLK start before 0: %s\n", R(lk(fd, F_SETLK, F_WRLCK, SEEK_SET, -5, 1)));
	say("F_OFD_SETLK with l_pid set: %s\n",
	    R(fcntl(fd, F_OFD_SETLK, &(struct flock){ .l_type = F_WRLCK, .l_len = 1, .l_pid = 1 })));
	say("F_SETLK on fd 999: %s\n", R(lk(999, F_SETLK, F_WRLCK, SEEK_SET, 0, 1)));
	int op = open("lockfile", O_PATH);
	say("F_SETLK on an O_PATH fd: %s\n", R(lk(op, F_SETLK, F_RDLCK, SEEK_SET, 0, 1)));
	close(op);
	close(rd);
	close(wr);	/* closes drop our locks: there are none yet */

	say("== a child conflicts with the parent's locks\n");
	say("parent: write 0-10: %s\n", R(lk(fd, F_SETLK, F_WRLCK, SEEK_SET, 0, 10)));
	lseek(fd, 20, SEEK_SET);
	say("parent: read SEEK_CUR+0 (20) len 10: %s\n", R(lk(fd, F_SETLK, F_RDLCK, SEEK_CUR, 0, 10)));
	say("parent: its own locks do not conflict for it: %s\n", probe(fd, F_WRLCK, 0, 100, me, 0));
	pid_t c = spawn(child_conflicts, NULL);
	wait_byte(c2p[0]);
	close(fd2);	/* any fd of the file: the parent's locks all go */
	send_byte(p2c[1]);
	wait_byte(c2p[0]);	/* the child holds 0-10 now */
	send_byte(p2c[1]);
	say("parent: F_SETLKW write 0-10 waits for the child: %s\n", R(lk(fd, F_SETLKW, F_WRLCK, SEEK_SET, 0, 10)));
	say("parent: has 0-10 after the wait\n");
	send_byte(p2c[1]);
	waitpid(c, NULL, 0);
	lk(fd, F_SETLK, F_UNLCK, SEEK_SET, 0, 0);

	say("== deadlock\n");
	say("parent: lock 40-50: %s\n", R(lk(fd, F_SETLK, F_WRLCK, SEEK_SET, 40, 10)));
	c = spawn(child_deadlock, NULL);
	wait_byte(c2p[0]);
	wait_sleeping(c);	/* the child waits in F_SETLKW for 40-50 */
	say("parent: F_SETLKW 50-60 (held by the child, which waits for us): %s\n",
	    R(lk(fd, F_SETLKW, F_WRLCK, SEEK_SET, 50, 10)));
	lk(fd, F_SETLK, F_UNLCK, SEEK_SET, 40, 10);	/* the child gets 40-50 */
	send_byte(p2c[1]);
	waitpid(c, NULL, 0);

	say("== OFD locks\n");
	int ofd = open("lockfile", O_RDWR);
	say("parent: F_OFD_SETLK write 70-80: %s\n",
	    R(fcntl(ofd, F_OFD_SETLK, &(struct flock){ .l_type = F_WRLCK, .l_start = 70, .l_len = 10 })));
	say("parent: its own POSIX lock on 70-80 conflicts with its OFD lock: %s\n",
	    R(lk(fd, F_SETLK, F_WRLCK, SEEK_SET, 70, 10)));
	c = spawn(child_ofd, NULL);
	waitpid(c, NULL, 0);
	close(ofd);

	say("== execve keeps the locks; fork does not inherit them\n");
	say("parent: write 0-1: %s\n", R(lk(fd, F_SETLK, F_WRLCK, SEEK_SET, 0, 1)));
	char num[16];
	snprintf(num, sizeof(num), "%d", fd);
	fflush(stdout);
	execl("/proc/self/exe", argv[0], "execed", num, (char *)NULL);
	say("execl: %s\n", errname(errno));
	return 1;
}

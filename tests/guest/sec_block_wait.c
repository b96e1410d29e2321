/* sec_block_wait: a task blocked in a host call cannot stall the others; a signal ends the wait as on Linux.
 * usage: sec_block_wait KIND MODE   (run in a writable directory: it makes "fifo" and "lockfile" there)
 * KIND  fifo_rd     open(2) of a FIFO for reading, no writer yet
 *       fifo_wr     open(2) of a FIFO for writing, no reader yet
 *       fifo_creat  the same with O_CREAT|O_TRUNC, as a shell's "> fifo"
 *       fifo_proc   open(2) for reading of /proc/self/fd/N, N the FIFO opened O_RDONLY|O_NONBLOCK: no writer yet
 *       fifo_read   read(2) of a FIFO whose writer has written nothing
 *       pipe_read   read(2) of an empty pipe
 *       pipe_write  write(2) of 1 byte to a full pipe
 *       flock       flock(LOCK_EX) of a file another open file description has locked
 * MODE  progress    a child blocks; the parent sees it asleep (/proc/PID/stat), runs a second child meanwhile,
 *                   then unblocks it
 *       eintr       the blocked child gets SIGUSR1, handled without SA_RESTART: the call fails with EINTR
 *       restart     the same with SA_RESTART: the call goes on and completes once unblocked
 *       thread      a second thread of the process blocks; the main thread goes on and unblocks it
 * Every wait of the parent is bounded, so a call that does not block natively shows, not hangs. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guest.h"
#include "sec_block.h"

static const char *kind;
static int pipefd[2] = { -1, -1 };	/* pipe_read, pipe_write, fifo_read (its two ends) */
static int lockfd = -1;			/* flock: the holder's open file description */
static int handled[2];			/* the handler writes a byte here */
static long filled;			/* pipe_write: bytes in the full pipe */

static void on_usr1(int sig)
{
	(void)sig;
	char c = 'h';
	if (write(handled[1], &c, 1) != 1)
		_exit(98);
}

/* Set up what KIND blocks on, before the fork (or the thread). */
static void prepare(void)
{
	unlink("fifo");
	if (!strncmp(kind, "fifo", 4) && mkfifo("fifo", 0600) < 0) {
		say("mkfifo: %s\n", errname(errno));
		exit(1);
	}
	if (!strcmp(kind, "pipe_read") || !strcmp(kind, "pipe_write")) {
		if (pipe(pipefd) < 0)
			exit(1);
	}
	if (!strcmp(kind, "fifo_proc") && (pipefd[0] = open("fifo", O_RDONLY | O_NONBLOCK)) < 0)
		exit(1);
	if (!strcmp(kind, "fifo_read")) {
		/* A reader first (O_NONBLOCK does not wait), then the writer finds it. */
		pipefd[0] = open("fifo", O_RDONLY | O_NONBLOCK);
		pipefd[1] = open("fifo", O_WRONLY);
		if (pipefd[0] < 0 || pipefd[1] < 0 || fcntl(pipefd[0], F_SETFL, 0) < 0)
			exit(1);
	}
	if (!strcmp(kind, "pipe_write")) {
		char buf[4096] = { 0 };
		long n;
		fcntl(pipefd[1], F_SETFL, O_NONBLOCK);
		while ((n = write(pipefd[1], buf, sizeof(buf))) > 0)
			filled += n;
		while ((n = write(pipefd[1], buf, 1)) > 0)
			filled += n;
		fcntl(pipefd[1], F_SETFL, 0);
	}
	if (!strcmp(kind, "flock")) {
		unlink("lockfile");	/* one a native run as root left is not nobody's to open (README "Security") */
		lockfd = open("lockfile", O_RDWR | O_CREAT, 0600);
		if (lockfd < 0 || flock(lockfd, LOCK_EX) < 0)
			exit(1);
	}
}

/* The blocking call; the result line says how it ended. */
static void blocked_call(void)
{
	long r = -1;
	char c = 0;
	int fd = -1;

	errno = 0;
	if (!strcmp(kind, "fifo_rd") || !strcmp(kind, "fifo_proc")) {
		char path[64] = "fifo";
		if (!strcmp(kind, "fifo_proc"))
			snprintf(path, sizeof(path), "/proc/self/fd/%d", pipefd[0]);
		if ((r = fd = open(path, O_RDONLY)) >= 0 && read(fd, &c, 1) != 1)
			c = '-';
	} else if (!strcmp(kind, "fifo_wr") || !strcmp(kind, "fifo_creat")) {
		int extra = !strcmp(kind, "fifo_creat") ? O_CREAT | O_TRUNC : 0;
		if ((r = fd = open("fifo", O_WRONLY | extra, 0600)) >= 0 && write(fd, "w", 1) != 1)
			c = '-';
	} else if (!strcmp(kind, "fifo_read") || !strcmp(kind, "pipe_read")) {
		r = read(pipefd[0], &c, 1);
	} else if (!strcmp(kind, "pipe_write")) {
		r = write(pipefd[1], "w", 1);
	} else if (!strcmp(kind, "flock")) {
		fd = open("lockfile", O_RDWR);
		r = fd < 0 ? -1 : flock(fd, LOCK_EX);
	}
	int e = errno;
	char got[16] = "";
	if (c)
		snprintf(got, sizeof(got), ", read %c", c);
	say("%s: call returned %s%s%s\n", kind, r < 0 ? "-1 " : "ok", r < 0 ? errname(e) : "", got);
	if (fd >= 0)
		close(fd);
}

/* Let the blocked one go: the other end, data, room, the lock. */
static void unblock(void)
{
	char c;
	int fd;

	if (!strcmp(kind, "fifo_rd") || !strcmp(kind, "fifo_proc")) {
		if ((fd = open("fifo", O_WRONLY)) < 0 || write(fd, "x", 1) != 1)
			say("unblock: %s\n", errname(errno));
		close(fd);
	} else if (!strcmp(kind, "fifo_wr") || !strcmp(kind, "fifo_creat")) {
		if ((fd = open("fifo", O_RDONLY)) < 0 || read(fd, &c, 1) != 1)
			say("unblock: %s\n", errname(errno));
		close(fd);
	} else if (!strcmp(kind, "fifo_read") || !strcmp(kind, "pipe_read")) {
		if (write(pipefd[1], "y", 1) != 1)
			say("unblock: %s\n", errname(errno));
	} else if (!strcmp(kind, "pipe_write")) {
		char buf[4096];
		for (long got = 0, n; got < filled + 1; got += n)
			if ((n = read(pipefd[0], buf, sizeof(buf))) <= 0)
				break;
	} else if (!strcmp(kind, "flock")) {
		flock(lockfd, LOCK_UN);
	}
}

/*
 * Opens that might wait are made without waiting and then given back the
 * flags asked for: no O_NONBLOCK left behind on a file, a device, a FIFO.
 */
static void open_flags(void)
{
	static const struct { const char *path; int flags; } opens[] = {
		{ "plain", O_RDWR | O_CREAT }, { "plain", O_WRONLY | O_APPEND }, { "/dev/null", O_WRONLY },
		{ "fifo", O_RDWR }, { "fifo", O_RDONLY | O_NONBLOCK }, { ".", O_RDONLY | O_DIRECTORY },
	};
	for (size_t i = 0; i < sizeof(opens) / sizeof(opens[0]); i++) {
		int fd = open(opens[i].path, opens[i].flags, 0600);
		int fl = fd < 0 ? -1 : fcntl(fd, F_GETFL) & (O_ACCMODE | O_NONBLOCK | O_APPEND);
		say("open %s %#o: F_GETFL %#o\n", opens[i].path, opens[i].flags, fl);
		close(fd);
	}
	unlink("plain");
}

static void *thread_main(void *arg)
{
	(void)arg;
	blocked_call();
	return NULL;
}

/* The main thread goes on while a thread of its process is blocked. */
static int thread_mode(void)
{
	pthread_t th;

	if (pthread_create(&th, NULL, thread_main, NULL))
		return 1;
	msleep(200);
	say("%s: main thread ran while the other thread was blocked\n", kind);
	unblock();
	pthread_join(th, NULL);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 3)
		return 2;
	kind = argv[1];
	const char *mode = argv[2];
	if (pipe(handled) < 0)
		return 1;
	prepare();
	if (!strcmp(kind, "fifo_rd") && !strcmp(mode, "progress"))
		open_flags();
	if (!strcmp(mode, "thread"))
		return thread_mode();
	struct sigaction sa = { .sa_handler = on_usr1, .sa_flags = !strcmp(mode, "restart") ? SA_RESTART : 0 };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);

	pid_t child = fork();
	if (child < 0)
		return 1;
	if (child == 0) {
		blocked_call();
		_exit(0);
	}
	say("%s: child asleep: %c\n", kind, wait_state(child, 'S'));
	if (!strcmp(mode, "progress")) {
		pid_t second = fork();
		if (second == 0) {
			say("%s: second child ran\n", kind);
			_exit(0);
		}
		say("%s: second child exit %d\n", kind, wait_child(second));
		unblock();
	} else {
		/* eintr: the child prints how its call ended at once, so nothing is printed here meanwhile. */
		char c;
		kill(child, SIGUSR1);
		if (read(handled[0], &c, 1) != 1)
			return 1;
		if (!strcmp(mode, "restart")) {
			say("%s: handler ran, child asleep again: %c\n", kind, wait_state(child, 'S'));
			unblock();
		}
	}
	say("%s: child exit %d\n", kind, wait_child(child));
	return 0;
}

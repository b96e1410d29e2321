/* sec_block_state: the state /proc/PID/stat and /proc/PID/status show for a task, as Linux's.
 * usage: sec_block_state KIND
 * KIND  self        the caller reads its own state: running (R)
 *       pipe_read   a child blocked in read(2) of an empty pipe: sleeping (S)
 *       pause       a child in pause(2): S
 *       nanosleep   a child in nanosleep(2): S
 *       sigsuspend  a child in sigsuspend(2): S
 *       wait4       a child waiting for its own child: S
 *       futex       a child in FUTEX_WAIT: S
 *       fifo_open   a child opening a FIFO that has no writer: S (run in a writable directory)
 *       zombie      a child that exited and was not waited for: Z
 *       vfork       the parent as its vfork child sees it while it waits: D
 * The parent polls (at most 5 s) until the state is the expected one, then prints both files' view. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guest.h"
#include "sec_block.h"

#define FUTEX_WAIT_PRIVATE_ 128	/* FUTEX_WAIT | FUTEX_PRIVATE_FLAG: musl has no <linux/futex.h> */

static int futex_word;

static void child_body(const char *kind, int rd)
{
	char c;
	sigset_t none;

	if (!strcmp(kind, "pipe_read")) {
		if (read(rd, &c, 1) < 0)
			_exit(1);
	} else if (!strcmp(kind, "pause")) {
		pause();
	} else if (!strcmp(kind, "nanosleep")) {
		msleep(60000);
	} else if (!strcmp(kind, "sigsuspend")) {
		sigemptyset(&none);
		sigsuspend(&none);
	} else if (!strcmp(kind, "wait4")) {
		/* The grandchild ends when the parent closes the pipe's write end. */
		pid_t g = fork();
		if (g == 0) {
			if (read(rd, &c, 1) < 0)
				_exit(1);
			_exit(0);
		}
		waitpid(g, NULL, 0);
	} else if (!strcmp(kind, "futex")) {
		syscall(SYS_futex, &futex_word, FUTEX_WAIT_PRIVATE_, 0, NULL, NULL, 0);
	} else if (!strcmp(kind, "fifo_open")) {
		open("fifo", O_RDONLY);
	}
	_exit(0);
}

int main(int argc, char **argv)
{
	int p[2];

	if (argc != 2 || pipe(p) < 0)
		return 2;
	const char *kind = argv[1];
	if (!strcmp(kind, "self")) {
		say("self: stat %c, status %s\n", stat_state(getpid()), status_state(getpid()));
		return 0;
	}
	if (!strcmp(kind, "vfork")) {
		char seen = '?';
		pid_t c = vfork();
		if (c == 0) {
			char s = stat_state(getppid());
			_exit(write(p[1], &s, 1) == 1 ? 0 : 1);
		}
		waitpid(c, NULL, 0);
		if (read(p[0], &seen, 1) != 1)
			return 1;
		say("vfork: parent seen by its child: stat %c\n", seen);
		return 0;
	}
	unlink("fifo");
	if (!strcmp(kind, "fifo_open") && mkfifo("fifo", 0600) < 0)
		return 1;
	pid_t c = fork();
	if (c == 0) {
		close(p[1]);
		child_body(kind, p[0]);
	}
	char want = strcmp(kind, "zombie") ? 'S' : 'Z';
	char s = wait_state(c, want);
	say("%s: stat %c, status %s\n", kind, s, status_state(c));
	if (want == 'S')
		kill(c, SIGKILL);
	close(p[1]);
	int st;
	waitpid(c, &st, 0);
	say("%s: %s\n", kind, WIFSIGNALED(st) ? "killed" : "exited");
	unlink("fifo");
	return 0;
}

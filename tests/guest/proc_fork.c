/* proc_fork: fork. usage: proc_fork loop|many|ppid|cow|orphan
 *   loop    50 forks in a loop, each child exits i, waited in order
 *   many    50 children alive at once, reaped with wait(-1): the set of statuses
 *   ppid    getppid() in children and grandchildren equals the parent's getpid(); pids are distinct
 *   cow     copy-on-write: globals, heap, stack, private anon/file mappings are copied; MAP_SHARED is shared
 *   orphan  a grandchild outlives its parent: it is reparented (getppid changes) and keeps running
 *   init-reap  as pid 1: grandchildren orphaned by their parent are reaped by wait() in pid 1 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guest.h"

static int global = 100;

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "loop";
	if (!strcmp(mode, "loop")) {
		int sum = 0, ok = 1;
		for (int i = 0; i < 50; i++) {
			pid_t c = fork();
			if (c < 0) {
				say("fork %d failed: %d\n", i, errno);
				return 1;
			}
			if (c == 0)
				_exit(i);
			int st = wait_child(c);
			sum += st;
			if (st != i)
				ok = 0, say("child %d exited %d\n", i, st);
		}
		say("50 sequential children: all exit codes right: %s, sum %d\n", yesno(ok), sum);
		return 0;
	}
	if (!strcmp(mode, "many")) {
		pid_t pids[50];
		int p[2];
		pipe(p);
		for (int i = 0; i < 50; i++) {
			pids[i] = fork();
			if (pids[i] == 0) {
				char b;
				close(p[1]);
				read(p[0], &b, 1); /* all wait until the parent closes the pipe */
				_exit(i + 100);
			}
		}
		close(p[1]);
		int seen[50] = { 0 }, n = 0, st;
		pid_t r;
		while ((r = wait(&st)) > 0) {
			for (int i = 0; i < 50; i++)
				if (pids[i] == r)
					seen[i] = WEXITSTATUS(st) == i + 100;
			n++;
		}
		int all = 1;
		for (int i = 0; i < 50; i++)
			all &= seen[i];
		say("50 concurrent children reaped: %d, each with its own status: %s, then %s\n", n, yesno(all),
		    errno == ECHILD ? "ECHILD" : "E?");
		return 0;
	}
	if (!strcmp(mode, "ppid")) {
		pid_t me = getpid();
		int p[2];
		pipe(p);
		pid_t kids[3];
		for (int i = 0; i < 3; i++) {
			kids[i] = fork();
			if (kids[i] == 0) {
				pid_t cme = getpid();
				int ok = getppid() == me && cme != me;
				pid_t g = fork();
				if (g == 0)
					_exit(getppid() == cme && getpid() != cme ? 0 : 1);
				int gok = wait_child(g) == 0;
				write(p[1], &cme, sizeof cme);
				_exit(ok && gok ? 0 : 1);
			}
		}
		int all = 1;
		pid_t got[3];
		for (int i = 0; i < 3; i++) {
			all &= wait_child(kids[i]) == 0;
			read(p[0], &got[i], sizeof got[i]);
		}
		int distinct = got[0] != got[1] && got[1] != got[2] && got[0] != got[2];
		int match = 1;
		for (int i = 0; i < 3; i++)
			match &= got[i] == kids[0] || got[i] == kids[1] || got[i] == kids[2];
		say("children see getppid()==parent and grandchildren see their parent: %s\n", yesno(all));
		say("fork's return value is the child's getpid(): %s, pids distinct: %s\n", yesno(match), yesno(distinct));
		return 0;
	}
	if (!strcmp(mode, "cow") && argc > 2) {
		int local = 200;
		int *heap = malloc(1 << 20);
		heap[0] = 300;
		heap[(1 << 18) - 1] = 301;
		int *anon = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		anon[0] = 400;
		int *shared = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		shared[0] = 500;
		shared[1024 + 5] = 501;
		int fd = open(argv[2], O_RDONLY);
		char *filep = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
		char first = filep[0];
		filep[1] = 'P';
		int *untouched = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		pid_t c = fork();
		if (c == 0) {
			int ok = global == 100 && local == 200 && heap[0] == 300 && anon[0] == 400 && shared[0] == 500 &&
				 filep[1] == 'P' && untouched[0] == 0;
			global = 1;
			local = 2;
			heap[0] = 3;
			heap[(1 << 18) - 1] = 3;
			anon[0] = 4;
			shared[0] = 5;
			shared[1024 + 5] = 6;
			filep[0] = 'C';
			untouched[0] = 7;
			_exit(ok ? 0 : 1);
		}
		int cst = wait_child(c);
		say("child saw the parent's values: %s\n", yesno(cst == 0));
		say("after the child wrote: global=%d local=%d heap=%d,%d anon=%d file=%s untouched=%d\n", global, local,
		    heap[0], heap[(1 << 18) - 1], anon[0], filep[0] == first ? "unchanged" : "changed", untouched[0]);
		say("MAP_SHARED anonymous memory is shared: %d %d\n", shared[0], shared[1024 + 5]);
		/* and the other way: the parent writes after fork, the child must not see it */
		int pp[2];
		pipe(pp);
		c = fork();
		if (c == 0) {
			char b;
			read(pp[0], &b, 1);
			_exit(global == 100 && heap[0] == 300 && shared[0] == 55 ? 0 : 1);
		}
		global = 11;
		heap[0] = 33;
		shared[0] = 55;
		write(pp[1], "g", 1);
		say("second child saw only the shared write: %s\n", yesno(wait_child(c) == 0));
		return 0;
	}
	if (!strcmp(mode, "orphan")) {
		int p[2];
		pipe(p);
		pid_t mid = fork();
		if (mid == 0) {
			pid_t midpid = getpid();
			pid_t g = fork();
			if (g == 0) {
				close(p[0]);
				/* wait until the middle process is gone */
				for (int i = 0; i < 200 && getppid() == midpid; i++)
					usleep(5000);
				char m[80];
				int n = snprintf(m, sizeof m, "grandchild reparented: %s, still running: yes\n",
						 yesno(getppid() != midpid));
				write(p[1], m, n);
				_exit(0);
			}
			_exit(7);
		}
		close(p[1]);
		say("middle exit %d\n", wait_child(mid));
		char buf[128];
		int n, tot = 0;
		while ((n = read(p[0], buf + tot, sizeof buf - 1 - tot)) > 0)
			tot += n;
		buf[tot] = 0;
		say("%s", buf);
		return 0;
	}
	if (!strcmp(mode, "init-reap")) {
		/* meant to run as pid 1 (sandbox, or a new pid namespace natively): orphans come to us */
		say("pid 1: %s\n", yesno(getpid() == 1));
		int p[2];
		pipe(p);
		pid_t mid = fork();
		if (mid == 0) {
			for (int i = 1; i <= 3; i++)
				if (fork() == 0) {
					char b;
					close(p[1]);
					read(p[0], &b, 1); /* until the middle process is gone */
					_exit(10 + i);
				}
			_exit(5);
		}
		close(p[0]);
		say("middle exit %d\n", wait_child(mid));
		close(p[1]);
		int st, n = 0, sum = 0;
		pid_t r;
		while ((r = wait(&st)) > 0) {
			n++;
			sum += WEXITSTATUS(st);
		}
		say("orphans reaped by pid 1: %d, statuses sum %d\n", n, sum);
		return 0;
	}
	say("unknown mode\n");
	return 2;
}

/* thread_vfork: clone(CLONE_VM|CLONE_VFORK) then execve, from the leader and from other threads (what Go's
 * os/exec and posix_spawn do).
 * usage: thread_vfork leader|thread|exit|spawn|many   (run by absolute path: it re-executes argv[0])
 *   leader  the main thread vforks; the child execs this program, which prints and exits 7
 *   thread  a second thread does the same while the main thread waits in pthread_join
 *   exit    a second thread vforks a child that _exits 3 without exec
 *   spawn   posix_spawn (a CLONE_VM|CLONE_VFORK clone in both libcs) from a second thread
 *   many    four threads vfork and exec at once
 * The parent prints only after the child is reaped, so the order of lines is fixed. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "evnet.h"

extern char **environ;
static const char *self;
static volatile int touched;

struct job {
	int do_exec;
	int tag;
	pid_t pid;
	int status;
	int returned;
};

static int child_fn(void *arg)
{
	struct job *j = arg;
	touched = 1;	/* shared memory: the parent sees this store */
	if (j->do_exec) {
		char tag[16];
		snprintf(tag, sizeof tag, "%d", j->tag);
		char *argv[] = { (char *)self, "exec-child", tag, NULL };
		execve(self, argv, environ);
		_exit(127);
	}
	_exit(3);
}

/* vfork with clone(2) on a stack of its own, as Go does; fills j */
static void vfork_job(struct job *j)
{
	size_t sz = 256 * 1024;
	char *stack = malloc(sz);
	j->pid = clone(child_fn, stack + sz, CLONE_VM | CLONE_VFORK | SIGCHLD, j);
	j->returned = 1;
	j->status = j->pid > 0 ? wait_child(j->pid) : -1;
	free(stack);
}

static void *thread_fn(void *arg)
{
	vfork_job(arg);
	return NULL;
}

static void report(const char *who, struct job *j)
{
	say("%s: clone %s, returned %s, child status %d\n", who, j->pid > 0 ? "ok" : rs(j->pid), yesno(j->returned),
	    j->status);
}

static int mode_leader(void)
{
	struct job j = { .do_exec = 1, .tag = 1 };
	vfork_job(&j);
	report("leader vfork + exec", &j);
	say("the child's store is seen: %s\n", yesno(touched));
	return 0;
}

static int mode_thread(void)
{
	struct job j = { .do_exec = 1, .tag = 2 };
	pthread_t t;
	pthread_create(&t, NULL, thread_fn, &j);
	pthread_join(t, NULL);
	report("thread vfork + exec", &j);
	/* and the leader still can afterwards */
	struct job k = { .do_exec = 1, .tag = 3 };
	vfork_job(&k);
	report("leader vfork + exec after it", &k);
	return 0;
}

static int mode_exit(void)
{
	struct job j = { .do_exec = 0 };
	pthread_t t;
	pthread_create(&t, NULL, thread_fn, &j);
	pthread_join(t, NULL);
	report("thread vfork + _exit", &j);
	say("the child's store is seen: %s\n", yesno(touched));
	return 0;
}

static void *spawn_fn(void *arg)
{
	struct job *j = arg;
	char *argv[] = { (char *)self, "exec-child", "5", NULL };
	int e = posix_spawn(&j->pid, self, NULL, NULL, argv, environ);
	j->returned = 1;
	j->status = e ? -e : wait_child(j->pid);
	return NULL;
}

static int mode_spawn(void)
{
	struct job j = { 0 };
	pthread_t t;
	pthread_create(&t, NULL, spawn_fn, &j);
	pthread_join(t, NULL);
	say("posix_spawn from a thread: returned %s, child status %d\n", yesno(j.returned), j.status);
	return 0;
}

static int mode_many(void)
{
	struct job j[4];
	pthread_t t[4];
	for (int i = 0; i < 4; i++) {
		j[i] = (struct job){ .do_exec = 1, .tag = 10 + i };
		pthread_create(&t[i], NULL, thread_fn, &j[i]);
	}
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	for (int i = 0; i < 4; i++)
		say("thread %d: returned %s, child status %d\n", i, yesno(j[i].returned), j[i].status);
	return 0;
}

int main(int argc, char **argv)
{
	self = argv[0];
	if (argc == 3 && !strcmp(argv[1], "exec-child")) {
		/* the exec'd child: its exit status carries its tag so the parent can tell it ran */
		return 7 + (atoi(argv[2]) != 0 ? 0 : 1);
	}
	static const struct mode modes[] = {
		{ "leader", mode_leader }, { "thread", mode_thread }, { "exit", mode_exit },
		{ "spawn", mode_spawn },   { "many", mode_many },
	};
	return run_mode("thread_vfork", modes, sizeof modes / sizeof modes[0], argc, argv);
}

/* thread_vfork: clone(CLONE_VM|CLONE_VFORK) then execve, from the leader and from other threads (what Go's
 * os/exec and posix_spawn do).
 * usage: thread_vfork MODE   (run by absolute path: it re-executes argv[0])
 *   leader  the main thread vforks; the child execs this program, which prints and exits 7
 *   thread  a second thread does the same while the main thread waits in pthread_join
 *   exit    a second thread vforks a child that _exits 3 without exec
 *   spawn   posix_spawn (a CLONE_VM|CLONE_VFORK clone in both libcs) from a second thread
 *   many    four threads vfork and exec at once
 *   missing posix_spawn of a program that does not exist: ENOENT to the caller (glibc's child reports it
 *           through the memory it shares with its parent, musl's through a pipe)
 *   killed  a vfork child that never execs is SIGKILLed by another thread: the vforking thread returns
 *   nested  a vfork child vforks a grandchild that execs, waits for it, and exits with its status + 10
 *   orphan  a process exits while its vfork child still runs in its memory; the child goes on
 *   vm      clone(CLONE_VM) without CLONE_VFORK from a thread: the parent runs on, the child's store is seen
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
	int do_exec;	/* 1: exec; 0: _exit(3); 2: pause for good; 3: vfork a grandchild (nested) */
	int tag;
	pid_t pid;
	int status;
	int returned;
};

static char *volatile orphan_msg;	/* do_exec 4: written to fd tag after a sleep */
static volatile pid_t paused_child;	/* set by a child of do_exec 2, in the memory it shares */
static void vfork_job(struct job *j);

static int child_fn(void *arg)
{
	struct job *j = arg;
	touched = 1;	/* shared memory: the parent sees this store */
	if (j->do_exec == 2) {
		paused_child = getpid();
		for (;;)
			pause();
	}
	if (j->do_exec == 4) {
		usleep(300000);	/* the parent process exits meanwhile */
		_exit(write(j->tag, orphan_msg, strlen(orphan_msg)) > 0 ? 0 : 1);
	}
	if (j->do_exec == 3) {
		struct job g = { .do_exec = 1, .tag = 4 };
		vfork_job(&g);
		_exit(g.pid > 0 ? g.status + 10 : 99);
	}
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

static int mode_missing(void)
{
	pid_t pid = -1;
	char *argv[] = { "/nonexistent/program", NULL };
	int e = posix_spawn(&pid, argv[0], NULL, NULL, argv, environ);
	say("posix_spawn of a missing program: %s\n", e ? ename(e) : "0 (no error)");
	if (!e)
		say("its status: %d\n", wait_child(pid));
	return 0;
}

static int mode_killed(void)
{
	struct job j = { .do_exec = 2 };
	pthread_t t;
	pthread_create(&t, NULL, thread_fn, &j);
	while (!paused_child)
		usleep(1000);
	usleep(50000);
	kill(paused_child, SIGKILL);
	pthread_join(t, NULL);
	say("killed vfork child: returned %s, child status %d\n", yesno(j.returned), j.status);
	return 0;
}

static int mode_nested(void)
{
	struct job j = { .do_exec = 3 };
	vfork_job(&j);
	report("vfork child vforking an exec", &j);
	return 0;
}

static void *vm_thread(void *arg)
{
	struct job *j = arg;
	size_t sz = 256 * 1024;
	char *stack = malloc(sz);
	j->pid = clone(child_fn, stack + sz, CLONE_VM | SIGCHLD, j);
	j->returned = 1;
	j->status = j->pid > 0 ? wait_child(j->pid) : -1;
	free(stack);
	return NULL;
}

static int mode_vm(void)
{
	struct job j = { .do_exec = 0 };
	pthread_t t;
	pthread_create(&t, NULL, vm_thread, &j);
	pthread_join(t, NULL);
	report("thread clone(CLONE_VM) + _exit", &j);
	say("the child's store is seen: %s\n", yesno(touched));
	return 0;
}

static void *orphan_thread(void *arg)
{
	vfork_job(arg);	/* never returns: the process exits meanwhile */
	return NULL;
}

static int mode_orphan(void)
{
	int p[2];
	if (pipe(p) < 0)
		return 1;
	pid_t mid = fork();
	if (mid == 0) {
		/* the middle process: a thread vforks a child that writes p[1] after we are gone */
		static struct job j = { .do_exec = 4 };
		static char msg[] = "the vfork child ran on after its parent exited\n";
		j.tag = p[1];
		orphan_msg = msg;
		pthread_t t;
		pthread_create(&t, NULL, orphan_thread, &j);
		while (!touched)
			usleep(1000);
		usleep(50000);
		_exit(5);
	}
	close(p[1]);
	say("the parent exited: status %d\n", wait_child(mid));
	char buf[128];
	ssize_t n;
	while ((n = read(p[0], buf, sizeof buf)) > 0)
		if (write(1, buf, n) < 0)
			return 1;
	say("pipe closed\n");
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
		{ "spawn", mode_spawn },   { "many", mode_many },	  { "missing", mode_missing },
		{ "killed", mode_killed }, { "nested", mode_nested }, { "orphan", mode_orphan },
		{ "vm", mode_vm },
	};
	return run_mode("thread_vfork", modes, sizeof modes / sizeof modes[0], argc, argv);
}

/* txtbsy: ETXTBSY both ways. A program a process runs cannot be opened for writing, truncated (by open's
 * O_TRUNC or truncate(2)) or creat'ed, and stays whole; a program open for writing cannot be run.
 * usage: txtbsy (in a writable directory; it copies itself to ./prog) */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *ename(int e)
{
	return e == ETXTBSY ? "ETXTBSY" : e == 0 ? "ok" : strerror(e);
}

#define SHOW(label, expr) do { errno = 0; long r_ = (long)(expr); \
	printf("%s: %s\n", label, r_ < 0 ? ename(errno) : "ok"); if (r_ > 2) close((int)r_); } while (0)

/* A name another thread keeps changing between "prog" and "othr" (open's path is read while it runs). */
static char racing[8] __attribute__((aligned(4))) = "othr";
static volatile int racing_stop;

static void *flip(void *arg)
{
	unsigned prog, othr;

	(void)arg;
	memcpy(&prog, "prog", 4);
	memcpy(&othr, "othr", 4);
	while (!racing_stop) {	/* atomic stores: plain ones, never read here, would be optimised away */
		__atomic_store_n((unsigned *)racing, prog, __ATOMIC_RELAXED);
		__atomic_store_n((unsigned *)racing, othr, __ATOMIC_RELAXED);
	}
	return NULL;
}

static off_t size_of(const char *p)
{
	struct stat st;
	return stat(p, &st) ? -1 : st.st_size;
}

int main(int argc, char **argv)
{
	char buf[65536];
	int p[2];

	if (argc > 2 && !strcmp(argv[1], "run")) {	/* the running program: say so, then wait to be killed */
		write(atoi(argv[2]), "r", 1);
		pause();
		return 0;
	}
	setvbuf(stdout, NULL, _IONBF, 0);
	int in = open("/proc/self/exe", O_RDONLY), out = open("prog", O_CREAT | O_WRONLY | O_TRUNC, 0755);
	ssize_t n;
	while ((n = read(in, buf, sizeof(buf))) > 0)
		write(out, buf, (size_t)n);
	close(in);
	close(out);
	off_t size = size_of("prog");

	pipe(p);
	pid_t c = fork();
	if (!c) {
		char fd[16];
		snprintf(fd, sizeof(fd), "%d", p[1]);
		execl("./prog", "prog", "run", fd, (char *)NULL);
		_exit(127);
	}
	char x;
	read(p[0], &x, 1);
	SHOW("open O_WRONLY while it runs", open("prog", O_WRONLY));
	SHOW("open O_RDWR while it runs", open("prog", O_RDWR));
	SHOW("open O_RDONLY|O_TRUNC while it runs", open("prog", O_RDONLY | O_TRUNC));
	SHOW("creat while it runs", creat("prog", 0755));
	SHOW("truncate while it runs", truncate("prog", 0));
	SHOW("open O_RDONLY while it runs", open("prog", O_RDONLY));
	printf("still whole: %s\n", size_of("prog") == size ? "yes" : "no");
	/* O_TRUNC of a name that another thread changes: the open checks what it truncates */
	close(open("othr", O_CREAT | O_WRONLY, 0644));
	pthread_t th;
	pthread_create(&th, NULL, flip, NULL);
	for (int i = 0; i < 20000 && size_of("prog") == size; i++) {
		int fd = open(racing, O_RDONLY | O_TRUNC);
		if (fd >= 0)
			close(fd);
	}
	racing_stop = 1;
	pthread_join(th, NULL);
	unlink("othr");
	printf("still whole after opens of a racing name: %s\n", size_of("prog") == size ? "yes" : "no");
	kill(c, SIGKILL);
	waitpid(c, NULL, 0);

	int w = open("prog", O_WRONLY);
	printf("open O_WRONLY once it ended: %s\n", w >= 0 ? "ok" : ename(errno));
	c = fork();
	if (!c) {
		execl("./prog", "prog", "run", "-1", (char *)NULL);
		printf("child: execve of a program open for writing: %s\n", ename(errno));
		_exit(0);
	}
	waitpid(c, NULL, 0);
	close(w);
	c = fork();
	if (!c) {
		char fd[16];
		snprintf(fd, sizeof(fd), "%d", p[1]);
		execl("./prog", "prog", "run", fd, (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	if (read(p[0], &x, 1) == 1)
		kill(c, SIGKILL);
	int st;
	waitpid(c, &st, 0);
	printf("execve once closed: %s\n", WIFSIGNALED(st) ? "ran" : "failed");
	unlink("prog");
	return 0;
}

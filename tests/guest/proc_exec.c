/* proc_exec: execve. The guest re-executes itself (argv[0] must be its absolute path).
 * usage: proc_exec args|pid|chain N|sigstate|cloexec FILE|vfork|vfork-shared|spawn|mm|pages
 *        proc_exec errors MISSING DIR NONEXEC GARBAGE BADINTERP
 *        proc_exec script SCRIPT [ARGS...]     (execve of a #! script)
 *        proc_exec show ...                    (prints argv and envp: the exec target) */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guest.h"
#pragma GCC diagnostic ignored "-Wstringop-overread"

extern char **environ;

static const char *ename(int e)
{
	switch (e) {
	case 0: return "0";
	case ENOENT: return "ENOENT";
	case EACCES: return "EACCES";
	case ENOEXEC: return "ENOEXEC";
	case EFAULT: return "EFAULT";
	case ENOTDIR: return "ENOTDIR";
	case ELOOP: return "ELOOP";
	case E2BIG: return "E2BIG";
	case EBADF: return "EBADF";
	case ENOSYS: return "ENOSYS";
	default: return "E?";
	}
}

static char *self;

static void show(int argc, char **argv)
{
	say("argc=%d\n", argc);
	for (int i = 0; i < argc; i++)
		say("argv[%d]=<%s>\n", i, i == 0 && argv[0][0] == '/' ? "(abs path)" : argv[i]);
	say("argv[argc] is NULL: %s\n", yesno(argv[argc] == NULL));
	int n = 0;
	for (char **e = environ; *e; e++)
		if (!strncmp(*e, "PVXT", 4) || !strncmp(*e, "EMPTY", 5))
			say("env <%s>\n", *e), n++;
	say("env count=%d (PVXT*/EMPTY*)\n", n);
}

/* pages: argv/envp arrays and strings that cross pages, and that run into an unmapped one. */
static void put_ptr(char *at, const char *p)
{
	memcpy(at, &p, sizeof(p));	/* at may be misaligned */
}

static int exec_pages(void)
{
	const long pg = 4096;
	char *m = mmap(NULL, 4 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED || munmap(m + 3 * pg, pg))
		return 90;
	/* Pages A, B, C mapped, D not. An array misaligned across A/B, a string across B/C. */
	char *av = m + pg - 12, *ev = m + 64, *s1 = m + 2 * pg - 3, *env1 = m + 256;
	memcpy(s1, "across-pages", 13);
	strcpy(env1, "PVXT_PAGES=env string");
	put_ptr(av, self);
	put_ptr(av + 8, "show");
	put_ptr(av + 16, s1);
	put_ptr(av + 24, NULL);
	put_ptr(ev, env1);
	put_ptr(ev + 8, NULL);
	pid_t c = fork();
	if (c == 0) {
		execve(self, (char **)av, (char **)ev);
		_exit(120);
	}
	say("child exit %d\n", wait_child(c));
	/* Faults in D: the NULL not reached, a misaligned pointer half in D, strings without their NUL. */
	char *end = m + 3 * pg, *ok_av[] = { self, "show", NULL }, *ok_ev[] = { NULL };
	const char *what[] = { "argv whose NULL is on an unmapped page", "argv with a pointer half on an unmapped page",
			       "argv string running into an unmapped page", "envp string running into an unmapped page" };
	for (int i = 0; i < 4; i++) {
		char *arr = m + 512, *tail = end - 4;
		char **a = ok_av, **e = ok_ev;
		memset(end - 64, 'x', 64);
		if (i == 0) {
			put_ptr(arr = end - 8, self);
			a = (char **)arr;
		} else if (i == 1) {
			put_ptr(arr = end - 12, self);
			a = (char **)arr;
		} else {
			put_ptr(arr, i == 2 ? self : tail);
			put_ptr(arr + 8, i == 2 ? tail : NULL);
			put_ptr(arr + 16, NULL);
			*(i == 2 ? &a : &e) = (char **)arr;
		}
		errno = 0;
		int r = execve(self, a, e);
		say("execve(%s) = %d %s\n", what[i], r, ename(errno));
	}
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "args";
	self = argv[0];
	if (!strncmp(mode, "show", 4)) { /* "show..." also as a #! interpreter's optional argument */
		show(argc, argv);
		return 0;
	}
	if (!strcmp(mode, "args")) {
		pid_t c = fork();
		if (c == 0) {
			char *av[] = { self, "show", "", "two words", "ünï", "-x", NULL };
			char *ev[] = { "PVXT_A=1", "EMPTY=", "PVXT_B=two words", "PVXT_C==eq", NULL };
			execve(self, av, ev);
			_exit(120);
		}
		say("child exit %d\n", wait_child(c));
		/* argv[0] need not be the path; an empty envp */
		c = fork();
		if (c == 0) {
			char *av[] = { "not-the-path", "show", NULL };
			char *ev[] = { NULL };
			execve(self, av, ev);
			_exit(120);
		}
		say("child exit %d\n", wait_child(c));
		/* execvp-style: environ passed through */
		c = fork();
		if (c == 0) {
			setenv("PVXT_INHERITED", "yes", 1);
			execl(self, "custom", "show", "a", (char *)NULL);
			_exit(120);
		}
		say("child exit %d\n", wait_child(c));
		return 0;
	}
	if (!strcmp(mode, "pid")) {
		if (argc > 3) { /* after exec */
			say("pid unchanged by execve: %s, ppid unchanged: %s\n", yesno(getpid() == atoi(argv[2])),
			    yesno(getppid() == atoi(argv[3])));
			return 5;
		}
		pid_t c = fork();
		if (c == 0) {
			char a[16], b[16];
			snprintf(a, sizeof a, "%d", getpid());
			snprintf(b, sizeof b, "%d", getppid());
			execl(self, self, "pid", a, b, (char *)NULL);
			_exit(120);
		}
		say("child exit %d\n", wait_child(c));
		return 0;
	}
	if (!strcmp(mode, "chain") && argc > 2) {
		int n = atoi(argv[2]);
		say("chain %d\n", n);
		if (n == 0)
			return 42;
		char b[16];
		snprintf(b, sizeof b, "%d", n - 1);
		execl(self, self, "chain", b, (char *)NULL);
		return 120;
	}
	if (!strcmp(mode, "sigstate")) {
		if (argc > 2) { /* after exec */
			struct sigaction a, b, c;
			sigaction(SIGUSR1, NULL, &a);
			sigaction(SIGUSR2, NULL, &b);
			sigaction(SIGHUP, NULL, &c);
			sigset_t m, p;
			sigprocmask(SIG_BLOCK, NULL, &m);
			sigpending(&p);
			stack_t ss;
			sigaltstack(NULL, &ss);
			say("after exec: USR1 handler reset to SIG_DFL: %s, USR2 still SIG_IGN: %s, HUP SIG_DFL: %s\n",
			    yesno(a.sa_handler == SIG_DFL), yesno(b.sa_handler == SIG_IGN), yesno(c.sa_handler == SIG_DFL));
			say("after exec: TERM still blocked: %s, TERM still pending: %s, alt stack disabled: %s\n",
			    yesno(sigismember(&m, SIGTERM)), yesno(sigismember(&p, SIGTERM)), yesno(ss.ss_flags & SS_DISABLE));
			/* unblocking the pending TERM now kills us with the default action */
			sigprocmask(SIG_UNBLOCK, &m, NULL);
			say("still alive?\n");
			return 0;
		}
		signal(SIGUSR1, (void (*)(int))show);
		signal(SIGUSR2, SIG_IGN);
		signal(SIGHUP, SIG_IGN);
		signal(SIGHUP, SIG_DFL);
		sigset_t m;
		sigemptyset(&m);
		sigaddset(&m, SIGTERM);
		sigprocmask(SIG_BLOCK, &m, NULL);
		raise(SIGTERM);
		static char altbuf[65536];
		stack_t ss = { .ss_sp = altbuf, .ss_size = sizeof altbuf };
		sigaltstack(&ss, NULL);
		execl(self, self, "sigstate", "after", (char *)NULL);
		return 120;
	}
	if (!strcmp(mode, "fds")) { /* after exec: fds N... */
		for (int i = 2; i < argc; i += 2) {
			int fd = atoi(argv[i + 1]);
			int fl = fcntl(fd, F_GETFD);
			say("%s (fd %s): %s", argv[i], "n", fl < 0 ? "closed" : "open");
			if (fl >= 0)
				say(", FD_CLOEXEC=%s", yesno(fl & FD_CLOEXEC));
			say("\n");
		}
		/* the plain file fd shares its offset with the pre-exec image */
		char b[8] = "";
		int n = read(atoi(argv[3]), b, 3);
		say("read from the inherited file fd after exec: %d <%.3s>\n", n, b);
		return 0;
	}
	if (!strcmp(mode, "cloexec") && argc > 2) {
		int plain = open(argv[2], O_RDONLY);
		int cx = open(argv[2], O_RDONLY | O_CLOEXEC);
		int p[2], q[2];
		pipe2(p, O_CLOEXEC);
		pipe(q);
		int dupd = dup(cx);                          /* dup clears FD_CLOEXEC */
		int setfd = dup(plain);
		fcntl(setfd, F_SETFD, FD_CLOEXEC);           /* set later */
		int d3 = dup3(plain, 20, O_CLOEXEC);
		int d2 = dup2(cx, 21);                       /* dup2 clears it */
		int fdcx = fcntl(plain, F_DUPFD_CLOEXEC, 30);
		int ioc = dup(plain);
		ioctl(ioc, FIOCLEX);
		char b[4];
		read(plain, b, 2); /* offset 2, shared with the exec'd image */
		char s[16][16];
		int fds[] = { plain, cx, p[0], p[1], q[0], q[1], dupd, setfd, d3, d2, fdcx, ioc };
		const char *names[] = { "plain", "O_CLOEXEC", "pipe2-cloexec-r", "pipe2-cloexec-w", "pipe-r", "pipe-w",
					"dup-of-cloexec", "F_SETFD-cloexec", "dup3-cloexec", "dup2-of-cloexec",
					"F_DUPFD_CLOEXEC", "FIOCLEX" };
		char *av[2 + 2 * 12 + 1];
		int k = 0;
		av[k++] = self;
		av[k++] = "fds";
		for (int i = 0; i < 12; i++) {
			snprintf(s[i], sizeof s[i], "%d", fds[i]);
			av[k++] = (char *)names[i];
			av[k++] = s[i];
		}
		av[k] = NULL;
		/* "fds" reads argv[3] as the plain fd: keep plain first */
		execve(self, av, environ);
		say("execve failed %s\n", ename(errno));
		return 120;
	}
	if (!strcmp(mode, "vfork")) {
		pid_t c = vfork();
		if (c == 0) {
			execl(self, "vforked", "show", "from-vfork", (char *)NULL);
			_exit(120);
		}
		say("vfork child exit %d\n", wait_child(c));
		/* a vfork child that _exits without exec */
		c = vfork();
		if (c == 0)
			_exit(17);
		say("vfork+_exit child exit %d\n", wait_child(c));
		/* vfork child whose exec fails */
		c = vfork();
		if (c == 0) {
			execl("/nonexistent/prog", "x", (char *)NULL);
			_exit(errno == ENOENT ? 18 : 19);
		}
		say("vfork+failed exec child exit %d\n", wait_child(c));
		return 0;
	}
	if (!strcmp(mode, "vfork-shared")) {
		/* Linux: the vfork child runs in the parent's memory until it execs or exits */
		static volatile int shared_var = 1;
		pid_t c = vfork();
		if (c == 0) {
			shared_var = 2;
			_exit(0);
		}
		wait_child(c);
		say("parent sees the vfork child's store: %s\n", yesno(shared_var == 2));
		return 0;
	}
	if (!strcmp(mode, "spawn")) {
		/* posix_spawn and libc's use of clone(CLONE_VM|CLONE_VFORK) */
		pid_t c;
		char *av[] = { self, "show", "spawned", NULL };
		int r = posix_spawn(&c, self, NULL, NULL, av, environ);
		int st = r == 0 ? wait_child(c) : -1;
		say("posix_spawn = %s, spawned child exit %d\n", ename(r), st);
		return 0;
	}
	if (!strcmp(mode, "mm")) {
		if (argc > 2) { /* after exec: the old mapping must be gone */
			uintptr_t a = strtoull(argv[2], NULL, 16);
			int p[2];
			pipe(p);
			errno = 0;
			int r = write(p[1], (void *)a, 1);
			say("old mapping after exec: write from it = %d %s\n", r, ename(r < 0 ? errno : 0));
			return 0;
		}
		char *m = mmap((void *)0x5a5a0000000UL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (m == MAP_FAILED)
			return 90;
		m[0] = 'z';
		char b[32];
		snprintf(b, sizeof b, "%lx", (unsigned long)m);
		execl(self, self, "mm", b, (char *)NULL);
		return 120;
	}
	if (!strcmp(mode, "pages"))
		return exec_pages();
	if (!strcmp(mode, "errors") && argc > 6) {
		const char *labels[] = { "missing file", "directory", "not executable", "garbage", "bad #! interpreter" };
		for (int i = 0; i < 5; i++) {
			char *av[] = { argv[2 + i], NULL };
			errno = 0;
			int r = execve(argv[2 + i], av, environ);
			say("execve(%s) = %d %s\n", labels[i], r, ename(errno));
		}
		char *av[] = { "x", NULL };
		errno = 0;
		int r = execve("", av, environ);
		say("execve(\"\") = %d %s\n", r, ename(errno));
		errno = 0;
		r = execve((char *)8, av, environ);
		say("execve(bad pointer) = %d %s\n", r, ename(errno));
		errno = 0;
		char path[4200];
		memset(path, 'a', sizeof path - 1);
		path[sizeof path - 1] = 0;
		path[0] = '/';
		r = execve(path, av, environ);
		say("execve(4 KiB path) = %d %s\n", r, errno == ENAMETOOLONG ? "ENAMETOOLONG" : ename(errno));
		/* a file path used as a directory */
		char nd[512];
		snprintf(nd, sizeof nd, "%s/x", argv[4]);
		errno = 0;
		r = execve(nd, av, environ);
		say("execve(file/x) = %d %s\n", r, ename(errno));
		say("still running after failed execs\n");
		return 0;
	}
	if (!strcmp(mode, "script") && argc > 2) {
		pid_t c = fork();
		if (c == 0) {
			char *ev[] = { "PVXT_S=script", NULL };
			execve(argv[2], argv + 2, ev);
			say("execve(script) failed: %s\n", ename(errno));
			_exit(120);
		}
		say("script child exit %d\n", wait_child(c));
		return 0;
	}
	say("unknown mode %s\n", mode);
	return 2;
}

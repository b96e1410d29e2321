// SPDX-License-Identifier: GPL-2.0
/*
 * pvx: run an untrusted x86-64 Linux program (static or dynamic) in a user-mode kernel.
 *
 *   pvx run [--platform=auto|seccomp|ptrace] [--root DIR] [--rw] [--privileged] [--strace]
 *           [--debug] [--env K=V] [--network=none|host] -- PROG ARGS
 *   pvx syscalls | platforms
 */
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "pvx/cred.h"
#include "pvx/fs_share.h"
#include "pvx/hostcred.h"
#include "pvx/kernel.h"
#include "pvx/log.h"
#include "pvx/netns.h"
#include "pvx/path.h"
#include "pvx/policy.h"
#include "sentry/platform/platform.h"
#include "sentry/kernel/task_run.h"
#include "syscalls/syscalls.h"

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "dev"
#endif

extern char **environ;

/* The umask pvx was started with: the first guest's, as a child process would inherit it. */
static mode_t initial_umask;

static void usage(FILE *f)
{
	fputs("usage: pvx run [OPTIONS] -- PROGRAM [ARGS...]\n"
	      "       pvx syscalls | platforms\n"
	      "       pvx --help | --version\n"
	      "\n"
	      "Run an x86-64 Linux program (static or dynamically linked) in the pvx user-mode kernel.\n"
	      "\n"
	      "options for run:\n"
	      "  --platform=NAME  auto (default: the fastest available), seccomp or ptrace\n"
	      "  --root DIR       the guest's / (default: the host's /)\n"
	      "  --rw             make the root writable (default: read-only)\n"
	      "  --privileged     run as root on the host's /, keep root's file access\n"
	      "                   (default: the guest's file access is nobody's)\n"
	      "  --env K=V        set an environment variable for the guest\n"
	      "  --network=none   (default) a network of the sandbox's own with loopback only:\n"
	      "                   nothing of the host's network is reachable\n"
	      "  --network=host   the host's network (an explicit opt-in)\n"
	      "  --memory=SIZE    bound the memory the guest commits (K/M/G suffixes; default: 3/4 of RAM\n"
	      "                   plus swap); past it the guest gets ENOMEM, as under overcommit_memory=2\n"
	      "  --strace         print every guest syscall on stderr\n"
	      "  --debug          verbose sentry logging\n"
	      "\n"
	      "The exit status is the guest's; 128+N when it is killed by signal N.\n",
	      f);
}

/* `pvx syscalls`: the table with support levels, like `runsc syscalls`. */
static int list_syscalls(void)
{
	static const char *const level[] = { "unsupported", "partial", "full" };

	printf("%-4s %-24s %-12s %s\n", "NR", "NAME", "SUPPORT", "NOTE");
	for (int nr = 0; nr < PVX_NR_SYSCALLS; nr++) {
		const struct syscall_desc *d = &syscall_table[nr];
		if (!d->name)
			continue;
		printf("%-4d %-24s %-12s %s\n", nr, d->name, level[d->support], d->note);
	}
	return 0;
}

/* Add or replace K=V in a NULL-terminated environment. */
static char **env_set(char **env, size_t *n, char *kv)
{
	size_t klen = strcspn(kv, "=");

	for (size_t i = 0; i < *n; i++) {
		if (!strncmp(env[i], kv, klen) && env[i][klen] == '=') {
			env[i] = kv;
			return env;
		}
	}
	env = realloc(env, (*n + 2) * sizeof(*env));
	if (!env) {
		perror("pvx");
		exit(1);
	}
	env[(*n)++] = kv;
	env[*n] = NULL;
	return env;
}

/* Find PROG the way execvp does, but inside the guest root. */
static long open_program(struct task *t, const char *prog, char *const envp[], char *found, size_t size)
{
	const char *path = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
	long err = -ENOENT;

	if (strchr(prog, '/')) {
		snprintf(found, size, "%s", prog);
		return path_open(t, AT_FDCWD, prog, O_RDONLY, 0);
	}
	for (size_t i = 0; envp[i]; i++)
		if (!strncmp(envp[i], "PATH=", 5))
			path = envp[i] + 5;
	while (*path) {
		size_t len = strcspn(path, ":");
		snprintf(found, size, "%.*s/%s", (int)len, len ? path : ".", prog);
		long fd = path_open(t, AT_FDCWD, found, O_RDONLY, 0);
		if (fd >= 0)
			return fd;
		if (fd != -ENOENT && fd != -ENOTDIR)
			err = fd;
		path += len + (path[len] == ':');
	}
	return err;
}

static int cannot_exec(const char *prog, const char *why, int status)
{
	fprintf(stderr, "pvx: %s: %s\n", prog, why);
	return status;
}

/* The initial working directory: the host's when it lies inside the root, else "/". */
static int initial_cwd(void)
{
	char guest[PVX_PATH_MAX];
	int fd = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);

	if (fd >= 0 && path_of_fd(fd, guest, sizeof(guest)) >= 0)
		return fd;
	if (fd >= 0)
		close(fd);
	return fcntl(sandbox.rootfd, F_DUPFD_CLOEXEC, 3);
}

/* Which of stdin/stdout/stderr pvx was started without (they stay closed in the guest). */
static bool stdio_closed[3];

/* Fill closed stdio slots with /dev/null so no later sentry fd lands there. */
static void note_stdio(void)
{
	for (int fd = 0; fd < 3; fd++) {
		stdio_closed[fd] = fcntl(fd, F_GETFD) < 0;
		if (stdio_closed[fd] && open("/dev/null", O_RDWR) != fd)
			stdio_closed[fd] = true;
	}
}

static long setup_stdio(struct fdtable *files)
{
	for (int fd = 0; fd < 3; fd++) {
		int hfd = stdio_closed[fd] ? -1 : fcntl(fd, F_DUPFD_CLOEXEC, 3);
		if (hfd < 0)
			continue;	/* closed in the sentry: closed in the guest */
		int fl = fcntl(hfd, F_GETFL);
		struct file *f = file_new(hfd, fl < 0 ? O_RDWR : fl, file_kind_of(hfd));
		if (!f)
			return -ENOMEM;
		long r = fd_install_at(files, fd, f, false);
		file_put(f);
		if (r < 0)
			return r;
	}
	return 0;
}

/*
 * SIGTERM, SIGINT or SIGHUP to pvx: the sandbox ends at once, as the default
 * action would end pvx, but with every stub SIGKILLed and reaped first (a
 * stub whose guest thread ignores our kicks must not outlive us, nor be
 * left for someone else to reap). Then pvx dies of the same signal.
 */
static void on_terminate(int sig)
{
	sigset_t set;

	if (getpid() != sentry_pid())
		_exit(128 + sig);	/* a child between fork and the exec of its stub */
	terminate_stubs(1000);
	signal(sig, SIG_DFL);
	sigemptyset(&set);
	sigaddset(&set, sig);
	pthread_sigmask(SIG_UNBLOCK, &set, NULL);
	raise(sig);
	_exit(128 + sig);
}

/* on_terminate for the terminating signals pvx was not started with ignored. */
static void catch_terminate(uint64_t ignored)
{
	static const int sigs[] = { SIGTERM, SIGINT, SIGHUP };
	struct sigaction sa = { .sa_handler = on_terminate };

	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < ARRAY_SIZE(sigs); i++)
		sigaddset(&sa.sa_mask, sigs[i]);
	for (size_t i = 0; i < ARRAY_SIZE(sigs); i++)
		if (!(ignored & (1UL << (sigs[i] - 1))))
			sigaction(sigs[i], &sa, NULL);
}

/*
 * The sentry holds the host fds of the whole sandbox: every guest file,
 * epoll dup and SCM_RIGHTS token (sentry/fs/fd_pass.c), while each guest
 * process is held to its own RLIMIT_NOFILE. So it takes what the host
 * allows it, its hard limit, as runsc does; a soft limit of 1024 (a VM's
 * init) ran out at 896 tokens in flight. *mine is left with pvx's limit as
 * it was given, which the first guest inherits as a child of pvx would.
 */
static void raise_fd_limit(struct rlimit *mine)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		rl = (struct rlimit){ 1024, 4096 };	/* Linux's INR_OPEN_CUR and INR_OPEN_MAX */
	*mine = rl;
	/* As root, up to the host's fs.nr_open: each System V segment is a memfd here, for one. */
	FILE *f = fopen("/proc/sys/fs/nr_open", "re");
	unsigned long nr_open = 0;
	if (f && fscanf(f, "%lu", &nr_open) == 1 && nr_open > rl.rlim_max &&
	    setrlimit(RLIMIT_NOFILE, &(struct rlimit){ nr_open, nr_open }) == 0)
		rl.rlim_cur = rl.rlim_max = nr_open;
	if (f)
		fclose(f);
	if (rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		(void)setrlimit(RLIMIT_NOFILE, &rl);
	}
}

static int cmd_run(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "platform", required_argument, NULL, 'p' }, { "root", required_argument, NULL, 'r' },
		{ "rw", no_argument, NULL, 'w' },	      { "strace", no_argument, NULL, 's' },
		{ "debug", no_argument, NULL, 'd' },	      { "env", required_argument, NULL, 'e' },
		{ "privileged", no_argument, NULL, 'P' },     { "help", no_argument, NULL, 'h' },
		{ "memory", required_argument, NULL, 'm' },   { "network", required_argument, NULL, 'n' },
		{ NULL, 0, NULL, 0 },
	};
	const char *platform = "auto", *root = "/";
	struct rlimit nofile;
	bool privileged = false, net_host = false;
	size_t envc = 0;
	char **envp;
	int c;

	while (environ[envc])
		envc++;
	envp = calloc(envc + 1, sizeof(*envp));
	if (!envp)
		return 1;
	memcpy(envp, environ, envc * sizeof(*envp));
	optind = 1;
	while ((c = getopt_long(argc, argv, "+", opts, NULL)) != -1) {
		switch (c) {
		case 'p': platform = optarg; break;
		case 'r': root = optarg; break;
		case 'w': sandbox.rw = true; break;
		case 'P': privileged = true; break;
		case 's': sandbox.strace = true; break;
		case 'd': pvx_log_level = LOG_DEBUG; break;
		case 'e':
			if (!strchr(optarg, '=')) {
				fprintf(stderr, "pvx: --env wants K=V, got '%s'\n", optarg);
				return 2;
			}
			envp = env_set(envp, &envc, optarg);
			break;
		case 'm':
			if (mm_set_memory_limit(optarg) < 0) {
				fprintf(stderr, "pvx: --memory wants SIZE[K|M|G], got '%s'\n", optarg);
				return 2;
			}
			break;
		case 'n':
			if (strcmp(optarg, "none") && strcmp(optarg, "host")) {
				fprintf(stderr, "pvx: --network wants none or host, got '%s'\n", optarg);
				return 2;
			}
			net_host = !strcmp(optarg, "host");
			break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return 2;
	}
	char **gargv = argv + optind;

	if (path_set_root(root) < 0) {
		fprintf(stderr, "pvx: --root %s: %s\n", root, strerror(errno));
		return 2;
	}
	sandbox.copy_io = getenv("PVX_COPY_IO") && strcmp(getenv("PVX_COPY_IO"), "0");
	sandbox.uid = getuid();
	sandbox.gid = getgid();
	/* pvx's own working directory, even one nobody could not name: the guest starts there. */
	int cwd = initial_cwd();
	if (cwd < 0)
		return 1;
	raise_fd_limit(&nofile);
	/* Before any thread or stub: all of them inherit the network namespace (include/pvx/netns.h). */
	netns_setup(net_host);
	/* Before any thread or stub: all of them inherit the identity (include/pvx/hostcred.h). */
	if (geteuid() == 0 && !privileged && path_root_is_host()) {
		long r = hostcred_drop_files();
		if (r < 0) {
			fprintf(stderr, "pvx: cannot give the guest nobody's file access: %s (--privileged keeps root's)\n",
				strerror((int)-r));
			return 1;
		}
		sandbox.uid = sandbox.gid = PVX_NOBODY;
	}
	sandbox.platform = platform_select(platform);
	if (!sandbox.platform)
		return 2;
	if (sandbox.platform->as_prestart)
		sandbox.platform->as_prestart();	/* its boot overlaps what follows */

	/* execve(2) keeps ignored dispositions: the first guest inherits pvx's. */
	uint64_t ignored = 0;
	for (int sig = 1; sig <= 64; sig++) {
		struct sigaction old;
		if (sig != SIGKILL && sig != SIGSTOP && sigaction(sig, NULL, &old) == 0 && old.sa_handler == SIG_IGN)
			ignored |= 1UL << (sig - 1);
	}
	signal(SIGPIPE, SIG_IGN);	/* a guest writing to a closed pipe gets EPIPE/SIGPIPE itself */
	catch_terminate(ignored);
	sentry_lock();
	struct task *init = task_new();
	if (!init || !process_new(init))
		return 1;
	for (int sig = 1; sig <= 64; sig++)
		if (ignored & (1UL << (sig - 1)))
			init->proc->sigactions[sig - 1].handler = (uint64_t)SIG_IGN;
	cred_init(init->proc, &nofile);
	init->files = fdtable_new((unsigned)init->proc->rlim[RLIMIT_NOFILE].rlim_cur);
	if (!init->files || setup_stdio(init->files) < 0)
		return 1;
	if (!(init->fs = fs_alloc(cwd, initial_umask)))
		return 1;

	char found[PVX_PATH_MAX];
	long fd = open_program(init, gargv[0], envp, found, sizeof(found));
	if (fd < 0)
		return cannot_exec(gargv[0], strerror((int)-fd), fd == -ENOENT ? 127 : 126);
	close((int)fd);
	struct task_start start = { .path = found, .argv = gargv, .envp = envp };
	init->start_arg = &start;
	kernel_set_syscalls(&syscall_ops);
	if (task_start(init, task_thread) < 0)
		return 1;
	sentry_unlock();

	int status = sentry_wait_all();
	free(envp);
	if (WIFSIGNALED(status)) {
		int sig = WTERMSIG(status);
		fprintf(stderr, "%s%s\n", strsignal(sig), WCOREDUMP(status) ? " (core dumped)" : "");
		return 128 + sig;
	}
	return WEXITSTATUS(status);
}

int main(int argc, char **argv)
{
	/* Only the guest's umask (struct task) applies to what it creates. */
	initial_umask = umask(0);
	path_set_kernel(&kernel_fs_ops);
	note_stdio();
	policy_init();
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("pvx %s\n", PACKAGE_VERSION);
		return 0;
	}
	if (!strcmp(argv[1], "syscalls"))
		return list_syscalls();
	if (!strcmp(argv[1], "platforms"))
		return platform_list();
	if (!strcmp(argv[1], "run"))
		return cmd_run(argc - 1, argv + 1);
	fprintf(stderr, "pvx: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return 2;
}

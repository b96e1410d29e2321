/* coredump: which deaths set WCOREDUMP (and waitid's CLD_DUMPED), as RLIMIT_CORE and PR_SET_DUMPABLE say.
 * usage: coredump            -- the table of cases (run in a writable directory)
 *        coredump file       -- one SIGQUIT death with a 1 MiB limit, then print the "core" file's ELF type
 * Each case forks a child that sets the limit and dies; the parent reports the status. */
#include <elf.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

static int *volatile null_ptr;

static void die(const char *how)
{
	if (!strcmp(how, "abort"))
		abort();
	if (!strcmp(how, "segv"))
		*(volatile int *volatile)null_ptr = 1;
	if (!strcmp(how, "quit"))
		raise(SIGQUIT);
	if (!strcmp(how, "fpe"))
		raise(SIGFPE);
	if (!strcmp(how, "term"))
		raise(SIGTERM);
	if (!strcmp(how, "kill"))
		raise(SIGKILL);
	_exit(99);
}

/* One case: the child sets RLIMIT_CORE's soft limit to lim (hard stays) and dies as how says. */
static void one(const char *how, long lim, int dumpable, int use_waitid)
{
	unlink("core");
	pid_t pid = fork();
	if (pid == 0) {
		struct rlimit r;
		getrlimit(RLIMIT_CORE, &r);
		if (r.rlim_max != RLIM_INFINITY && (rlim_t)lim > r.rlim_max)
			r.rlim_max = (rlim_t)lim;	/* may fail unprivileged; the report below says the limit */
		r.rlim_cur = (rlim_t)lim;
		if (setrlimit(RLIMIT_CORE, &r) < 0)
			_exit(98);
		if (!dumpable)
			prctl(PR_SET_DUMPABLE, 0);
		die(how);
	}
	if (use_waitid) {
		siginfo_t si;
		memset(&si, 0, sizeof(si));
		waitid(P_PID, (id_t)pid, &si, WEXITED);
		printf("%-6s limit=%-8ld dumpable=%d: waitid code=%s status=%d\n", how, lim, dumpable,
		       si.si_code == CLD_DUMPED ? "CLD_DUMPED" : si.si_code == CLD_KILLED ? "CLD_KILLED" : "other",
		       si.si_status);
		return;
	}
	int st;
	waitpid(pid, &st, 0);
	if (WIFEXITED(st))
		printf("%-6s limit=%-8ld dumpable=%d: exited %d\n", how, lim, dumpable, WEXITSTATUS(st));
	else
		printf("%-6s limit=%-8ld dumpable=%d: signal %d core=%d\n", how, lim, dumpable, WTERMSIG(st),
		       WCOREDUMP(st) ? 1 : 0);
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IONBF, 0);
	if (argc > 1 && !strcmp(argv[1], "file")) {
		one("quit", 1 << 20, 1, 0);
		Elf64_Ehdr eh;
		int fd = open("core", O_RDONLY);
		if (fd < 0 || read(fd, &eh, sizeof(eh)) != sizeof(eh)) {
			printf("no core file\n");
			return 1;
		}
		printf("core file: ELF=%d type=%s machine=%s\n", !memcmp(eh.e_ident, ELFMAG, SELFMAG),
		       eh.e_type == ET_CORE ? "ET_CORE" : "other", eh.e_machine == EM_X86_64 ? "x86-64" : "other");
		return 0;
	}
	const char *hows[] = { "quit", "abort", "segv", "fpe", "term", "kill" };
	for (size_t i = 0; i < sizeof(hows) / sizeof(hows[0]); i++)
		one(hows[i], 1 << 20, 1, 0);
	one("quit", 0, 1, 0);	/* no core: the limit is 0 */
	one("quit", 1024, 1, 0);	/* below binfmt_elf's min_coredump (a page): no dump */
	one("quit", 1 << 20, 0, 0);	/* PR_SET_DUMPABLE 0: no dump */
	one("abort", 1 << 20, 1, 1);
	one("term", 1 << 20, 1, 1);
	one("quit", 0, 1, 1);
	unlink("core");
	return 0;
}

/*
 * RLIMIT_NOFILE past 1024 (Go raises its soft limit to the hard one at
 * start; servers need thousands of fds): the limit is inherited as from
 * the parent, fd numbers go up to it, the lowest free fd is found, and the
 * edges give Linux's errors (dup2 EBADF, F_DUPFD EINVAL, open EMFILE, poll
 * EINVAL). Prints the same natively and in the sandbox.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/syscall.h>

#include "guest.h"

#define WANT 3000	/* soft limit asked for: past 1024, quick to fill */

static const char *e(long r)
{
	return r < 0 ? errname(errno) : "ok";
}

static int count_proc_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	if (!d)
		return -errno;
	while (readdir(d))
		n++;
	closedir(d);
	return n - 3;	/* ".", ".." and the directory's own fd */
}

int main(void)
{
	struct rlimit rl, got;

	syscall(SYS_close_range, 3, ~0U, 0);	/* what the test runner left open differs from pvx's guest */
	getrlimit(RLIMIT_NOFILE, &rl);
	say("inherited soft %s hard\n", rl.rlim_cur <= rl.rlim_max ? "<=" : ">");
	if (rl.rlim_max < WANT) {
		say("hard limit below %d: nothing more to check\n", WANT);
		return 0;
	}
	struct rlimit want = { WANT, rl.rlim_max };
	say("raise soft to %d: %s\n", WANT, e(setrlimit(RLIMIT_NOFILE, &want)));
	struct rlimit huge = { WANT, (rlim_t)(1 << 20) + 1 };
	say("hard above fs.nr_open: %s\n", e(setrlimit(RLIMIT_NOFILE, &huge)));
	getrlimit(RLIMIT_NOFILE, &got);
	say("soft now %ld\n", (long)got.rlim_cur);

	int null = open("/dev/null", O_RDONLY), last = -1, fd;
	while ((fd = dup(null)) >= 0)
		last = fd;
	say("dup until %s, last fd %d\n", errname(errno), last);
	say("open when full: %s\n", e(open("/dev/null", O_RDONLY)));
	close(100);
	close(2000);
	int first = dup(null);
	say("lowest free after closing 100 and 2000: %d, then %d\n", first, dup(null));
	close(WANT - 1);
	say("dup2 to soft-1: %d\n", dup2(null, WANT - 1));
	say("dup2 to soft: %s\n", e(dup2(null, WANT)));
	say("dup2 to INT_MAX: %s, to -1: %s\n", e(dup2(null, INT_MAX)), e(dup2(null, -1)));
	say("F_DUPFD from soft: %s, from INT_MAX: %s\n", e(fcntl(null, F_DUPFD, WANT)), e(fcntl(null, F_DUPFD, INT_MAX)));
	say("F_DUPFD from soft-1 when all are taken: %s\n", e(fcntl(null, F_DUPFD, WANT - 1)));

	struct pollfd *p = calloc(WANT + 1, sizeof(*p));
	for (int i = 0; i < WANT + 1; i++)
		p[i] = (struct pollfd){ i < 3 ? -1 : i, POLLIN, 0 };	/* stdio: whatever the runner gave */
	say("poll of soft+1 fds: %s\n", e(poll(p, WANT + 1, 0)));
	say("poll of all soft fds: %d ready\n", poll(p, WANT, 0));

	pid_t c = fork();
	if (c == 0) {
		say("child: fd soft-1 open: %s\n", yesno(fcntl(WANT - 1, F_GETFD) >= 0));
		_exit(0);
	}
	wait_child(c);
	say("close_range(10, ~0): %s\n", e(syscall(SYS_close_range, 10, ~0U, 0)));
	say("/proc/self/fd lists %d\n", count_proc_fds());
	say("next dup: %d\n", dup(null));
	struct rlimit low = { 64, rl.rlim_max };
	say("soft back to 64 with fds above it open: %s\n", e(setrlimit(RLIMIT_NOFILE, &low)));
	say("then dup2 to 100: %s, dup2 to 63: %s, fd 10 still open: %s\n", e(dup2(null, 100)), e(dup2(null, 63)),
	    yesno(fcntl(10, F_GETFD) >= 0));
	return 0;
}

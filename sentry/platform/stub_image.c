// SPDX-License-Identifier: GPL-2.0
/*
 * The stub program is linked into pvx (stub_blob.S) and exec'd from a sealed
 * memfd, so pvx needs no install path to find it and the guest cannot swap it.
 */
#include <fcntl.h>
#include <string.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "pvx/log.h"
#include "platform.h"

extern const char pvx_stub_blob[], pvx_stub_blob_end[];

long stub_memfd(void)
{
	static int fd = -1;
	size_t len = (size_t)(pvx_stub_blob_end - pvx_stub_blob);
	size_t off = 0;

	if (fd >= 0)
		return fd;
	int mfd = memfd_create("pvx-stub", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (mfd < 0)
		return neg_errno();
	while (off < len) {
		ssize_t n = write(mfd, pvx_stub_blob + off, len - off);
		if (n <= 0) {
			long err = n < 0 ? neg_errno() : -EIO;
			close(mfd);
			return err;
		}
		off += (size_t)n;
	}
	if (fcntl(mfd, F_ADD_SEALS, F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE) < 0)
		pr_debug("cannot seal the stub memfd: %m");
	fd = mfd;
	return fd;
}

/*
 * In a fresh child of the sentry: become the stub. It dies with the sentry
 * thread that made it, gets a fixed layout (its own stack and vdso stay
 * above the guest range), and keeps no fd but fds[0..n) moved to 3, 4, ...
 * (only async-signal-safe calls here: this runs between fork and exec).
 */
void stub_exec(int memfd, const char *mode, const int *fds, int n)
{
	char *const argv[] = { "pvx-stub", (char *)mode, NULL };
	static char *const envp[] = { NULL };
	int moved[8], m;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	personality(ADDR_NO_RANDOMIZE);
	/* Out of the way of the target numbers first, then into place. */
	m = fcntl(memfd, F_DUPFD, 16);
	for (int i = 0; i < n && i < 8; i++)
		moved[i] = fcntl(fds[i], F_DUPFD, 16);
	for (int i = 0; i < n && i < 8; i++)
		if (moved[i] < 0 || dup2(moved[i], 3 + i) < 0)
			_exit(126);
	if (m < 0)
		_exit(126);
	syscall(SYS_close_range, 0, 2, 0);
	syscall(SYS_close_range, 3 + n, m - 1, 0);
	syscall(SYS_close_range, m + 1, ~0U, 0);
	syscall(SYS_execveat, m, "", argv, envp, AT_EMPTY_PATH);
	_exit(127);
}

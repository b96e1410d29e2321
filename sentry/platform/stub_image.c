// SPDX-License-Identifier: GPL-2.0
/*
 * The stub program is linked into pvx (stub_blob.S) and exec'd from a sealed
 * memfd, so pvx needs no install path to find it and the guest cannot swap it.
 */
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
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

/* fhandle_proc: name_to_handle_at on /proc (LTP name_to_handle_at03): only AT_HANDLE_FID encodes a handle there
 * (procfs has no export operations: EOPNOTSUPP without it); /proc/filesystems exists and lists proc. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "guest.h"

#ifndef AT_HANDLE_FID
#define AT_HANDLE_FID 0x200
#endif

static const char *H(const char *path, int flags)
{
	static char b[64];
	struct file_handle *fh = malloc(sizeof(*fh) + 128);
	int mnt;
	fh->handle_bytes = 128;
	int r = name_to_handle_at(AT_FDCWD, path, fh, &mnt, flags);
	free(fh);
	if (r == 0)
		return "0";
	return errno == EOPNOTSUPP ? "EOPNOTSUPP" : strcpy(b, errname(errno));
}

int main(void)
{
	const char *paths[] = { "/proc/filesystems", "/proc/self/status", "/proc/self", "/proc", "/proc/self/fd" };
	for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++)
		say("%s: FID %s, plain %s\n", paths[i], H(paths[i], AT_HANDLE_FID), H(paths[i], 0));
	say("a file: plain %s\n", H("/etc/passwd", 0));
	char b[65536];
	int fd = open("/proc/filesystems", O_RDONLY);
	long n = fd < 0 ? -1 : read(fd, b, sizeof b - 1);
	b[n > 0 ? n : 0] = 0;
	say("/proc/filesystems: %s, lists proc: %s\n", fd < 0 ? errname(errno) : "opened", yesno(strstr(b, "nodev\tproc\n") != NULL));
	return 0;
}

/* catfile: copies each PATH (or stdin when none) to stdout; on failure prints "PATH: ERRNAME" to stdout
 * and exits 1 after trying the rest. "catfile --at FD PATH..." opens the PATHs with openat(FD, ...). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *ename(int e)
{
	switch (e) {
	case ENOENT: return "ENOENT";
	case EACCES: return "EACCES";
	case EISDIR: return "EISDIR";
	case ELOOP: return "ELOOP";
	case ENOTDIR: return "ENOTDIR";
	case EXDEV: return "EXDEV";
	case EPERM: return "EPERM";
	case EFAULT: return "EFAULT";
	case EBADF: return "EBADF";
	default: return "E?";
	}
}

static int copy(int fd)
{
	char buf[8192];
	ssize_t n;
	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		for (ssize_t off = 0; off < n;) {
			ssize_t w = write(1, buf + off, n - off);
			if (w <= 0)
				return -1;
			off += w;
		}
	}
	return n < 0 ? -1 : 0;
}

int main(int argc, char **argv)
{
	int rc = 0, first = 1, dirfd = AT_FDCWD;
	if (argc > 2 && !strcmp(argv[1], "--at")) {
		dirfd = atoi(argv[2]);
		first = 3;
	}
	if (argc <= first)
		return copy(0) ? 1 : 0;
	for (int i = first; i < argc; i++) {
		int fd = openat(dirfd, argv[i], O_RDONLY);
		if (fd < 0 || copy(fd) < 0) {
			printf("%s: %s\n", argv[i], ename(errno));
			fflush(stdout);
			rc = 1;
		}
		if (fd >= 0)
			close(fd);
	}
	return rc;
}

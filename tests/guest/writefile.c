/* writefile: creates/truncates PATH and writes TEXT (default "written\n"); prints OK or the failing step
 * and errno name. Exit 0 on success, 1 on failure. usage: writefile PATH [TEXT] [--rdwr-existing] */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const char *ename(int e)
{
	switch (e) {
	case ENOENT: return "ENOENT";
	case EROFS: return "EROFS";
	case EACCES: return "EACCES";
	case EPERM: return "EPERM";
	case EISDIR: return "EISDIR";
	case EEXIST: return "EEXIST";
	case ELOOP: return "ELOOP";
	case ENOTDIR: return "ENOTDIR";
	case EXDEV: return "EXDEV";
	case ENOSYS: return "ENOSYS";
	default: return "E?";
	}
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: writefile PATH [TEXT] [MODE]\n");
		return 2;
	}
	const char *text = argc > 2 ? argv[2] : "written\n";
	/* MODE: create (default) = O_WRONLY|O_CREAT|O_TRUNC, rdwr = O_RDWR on an existing file,
	 * wronly = O_WRONLY on an existing file */
	int flags = O_WRONLY | O_CREAT | O_TRUNC;
	if (argc > 3 && strcmp(argv[3], "rdwr") == 0)
		flags = O_RDWR;
	else if (argc > 3 && strcmp(argv[3], "wronly") == 0)
		flags = O_WRONLY;
	int fd = open(argv[1], flags, 0644);
	if (fd < 0) {
		printf("open: %s\n", ename(errno));
		return 1;
	}
	ssize_t n = write(fd, text, strlen(text));
	if (n != (ssize_t)strlen(text)) {
		printf("write: %zd %s\n", n, ename(errno));
		return 1;
	}
	if (close(fd) < 0) {
		printf("close: %s\n", ename(errno));
		return 1;
	}
	printf("OK\n");
	return 0;
}

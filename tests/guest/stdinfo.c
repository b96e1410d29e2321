/* stdinfo: what the guest sees of fds 0, 1 and 2: file type, access mode, seekability.
 * Run with different redirections (file, pipe, /dev/null, closed) natively and in the sandbox. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *ename(int e)
{
	switch (e) {
	case EBADF: return "EBADF";
	case ESPIPE: return "ESPIPE";
	case EINVAL: return "EINVAL";
	default: return "E?";
	}
}

int main(void)
{
	char line[256];
	int len = 0;
	for (int fd = 0; fd < 3; fd++) {
		struct stat st;
		const char *type;
		if (fstat(fd, &st) < 0) {
			len += snprintf(line + len, sizeof(line) - len, "fd %d: fstat %s\n", fd, ename(errno));
			continue;
		}
		type = S_ISREG(st.st_mode) ? "reg" : S_ISFIFO(st.st_mode) ? "fifo" : S_ISCHR(st.st_mode) ? "chr" :
		       S_ISSOCK(st.st_mode) ? "sock" : "other";
		int fl = fcntl(fd, F_GETFL);
		const char *acc = (fl & O_ACCMODE) == O_RDONLY ? "r" : (fl & O_ACCMODE) == O_WRONLY ? "w" : "rw";
		errno = 0;
		off_t off = lseek(fd, 0, SEEK_CUR);
		len += snprintf(line + len, sizeof(line) - len, "fd %d: %s %s lseek=%s append=%d\n", fd, type, acc,
				off < 0 ? ename(errno) : "ok", !!(fl & O_APPEND));
	}
	/* report on stderr when stdout is closed, else on stdout */
	if (write(1, line, len) < 0) {
		if (write(2, line, len) < 0)
			return 3;
		return 1;
	}
	return 0;
}

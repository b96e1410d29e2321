/* dupfcntl: dup/dup2/dup3/fcntl semantics. Run natively with only fds 0-2 open (the helper closes the rest),
 * so that fd numbers are deterministic. usage: dupfcntl FILE */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

static const char *ename(int e)
{
	switch (e) {
	case EBADF: return "EBADF";
	case EINVAL: return "EINVAL";
	case EMFILE: return "EMFILE";
	case ENOSYS: return "ENOSYS";
	default: return "E?";
	}
}

#define SHOW(label, expr) do { errno = 0; long r_ = (long)(expr); \
	printf("%s = %ld %s\n", label, r_, r_ < 0 ? ename(errno) : ""); } while (0)

#define FLMASK (O_ACCMODE | O_APPEND | O_NONBLOCK)

int main(int argc, char **argv)
{
	char buf[16];
	if (argc < 2) {
		fprintf(stderr, "usage: dupfcntl FILE\n");
		return 2;
	}
	/* only 0,1,2 must be open: the first open gets 3 */
	int fd = open(argv[1], O_RDONLY);
	printf("first open fd = %d\n", fd);
	SHOW("F_GETFD", fcntl(fd, F_GETFD));
	SHOW("F_GETFL&mask", fcntl(fd, F_GETFL) & FLMASK);
	SHOW("dup", dup(fd));
	SHOW("F_GETFD of dup", fcntl(4, F_GETFD));
	SHOW("dup2 to 10", dup2(fd, 10));
	SHOW("dup2 same fd", dup2(fd, fd));
	SHOW("dup2 bad old", dup2(99, 11));
	SHOW("dup2 bad new", dup2(fd, -1));
	SHOW("dup3 same fd", syscall(SYS_dup3, fd, fd, 0));
	SHOW("dup3 bad flags", syscall(SYS_dup3, fd, 12, 0x1234));
	SHOW("dup3 O_CLOEXEC to 12", dup3(fd, 12, O_CLOEXEC));
	SHOW("F_GETFD of 12", fcntl(12, F_GETFD));
	SHOW("F_SETFD 0 on 12", fcntl(12, F_SETFD, 0));
	SHOW("F_GETFD of 12 now", fcntl(12, F_GETFD));
	SHOW("F_SETFD CLOEXEC on fd", fcntl(fd, F_SETFD, FD_CLOEXEC));
	SHOW("F_GETFD of fd", fcntl(fd, F_GETFD));
	SHOW("F_GETFD of dup unaffected", fcntl(4, F_GETFD));
	SHOW("F_DUPFD 5", fcntl(fd, F_DUPFD, 5));
	SHOW("F_DUPFD 5 again", fcntl(fd, F_DUPFD, 5));
	SHOW("F_DUPFD_CLOEXEC 0", fcntl(fd, F_DUPFD_CLOEXEC, 0));
	SHOW("F_GETFD of 7", fcntl(7, F_GETFD));
	SHOW("F_DUPFD negative", fcntl(fd, F_DUPFD, -1));
	SHOW("F_DUPFD huge", fcntl(fd, F_DUPFD, 1 << 30));
	SHOW("bad cmd", fcntl(fd, 12345));
	SHOW("F_SETFL O_NONBLOCK", fcntl(fd, F_SETFL, O_NONBLOCK));
	SHOW("F_GETFL&mask after", fcntl(fd, F_GETFL) & FLMASK);
	SHOW("F_GETFL&mask on dup (shared)", fcntl(4, F_GETFL) & FLMASK);
	SHOW("F_SETFL O_NONBLOCK off", fcntl(fd, F_SETFL, 0));
	SHOW("F_GETFL stdout accmode valid", (fcntl(1, F_GETFL) & O_ACCMODE) != O_RDONLY);

	/* shared file offset between dups */
	SHOW("lseek fd 3", lseek(fd, 2, SEEK_SET));
	SHOW("offset of dup 4", lseek(4, 0, SEEK_CUR));
	SHOW("read via 10", read(10, buf, 2));
	SHOW("offset of fd 3 after read via 10", lseek(fd, 0, SEEK_CUR));
	/* a separately opened fd has its own offset */
	int other = open(argv[1], O_RDONLY);
	printf("second open fd = %d\n", other);
	SHOW("offset of separate open", lseek(other, 0, SEEK_CUR));

	/* close and reuse lowest */
	SHOW("close 4", close(4));
	SHOW("close 5", close(5));
	SHOW("dup reuses lowest", dup(fd));
	SHOW("close 3", close(3));
	SHOW("read via 10 after close 3", read(10, buf, 1));
	SHOW("fcntl on closed", fcntl(3, F_GETFD));
	SHOW("dup closed", dup(3));
	/* dup2 over an open fd closes it silently */
	SHOW("dup2 10 over 12", dup2(10, 12));
	SHOW("F_GETFD of 12 after dup2 (cloexec cleared)", fcntl(12, F_GETFD));
	/* dup2 onto stdin still works */
	int saved = dup(0);
	SHOW("dup2 onto 0", dup2(10, 0));
	SHOW("read from 0 (now the file)", read(0, buf, 3));
	SHOW("restore 0", dup2(saved, 0));
	/* fd table limit: dup fails with EMFILE exactly at RLIMIT_NOFILE */
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur <= 65536) {
		int last = -1;
		for (;;) {
			int r = dup(10);
			if (r < 0) {
				printf("dup until failure: %s, last fd == RLIMIT_NOFILE-1: %s\n", ename(errno),
				       (unsigned long)last == rl.rlim_cur - 1 ? "yes" : "no");
				break;
			}
			last = r;
		}
	} else {
		printf("dup until failure: skipped (limit large)\n");
	}
	return 0;
}

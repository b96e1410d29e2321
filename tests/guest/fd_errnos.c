/* fd_errnos: which errno wins when a call has more than one thing wrong, as Linux orders its checks:
 * dup3(fd, fd), calls on O_PATH fds, positional I/O on a pipe's wrong end. usage: fd_errnos FILE */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/xattr.h>
#include <unistd.h>

static const char *ename(int e)
{
	switch (e) {
	case EBADF: return "EBADF";
	case EINVAL: return "EINVAL";
	case ESPIPE: return "ESPIPE";
	case ENOTTY: return "ENOTTY";
	case EOPNOTSUPP: return "EOPNOTSUPP";
	case ENODATA: return "ENODATA";
	case EFAULT: return "EFAULT";
	default: return strerror(e);
	}
}

#define SHOW(label, expr) do { errno = 0; long r_ = (long)(expr); \
	printf("%s: %ld %s\n", label, r_, r_ < 0 ? ename(errno) : ""); } while (0)

/* The raw calls: musl has no wrappers for them. */
#define pwritev2(fd, iov, n, off, fl) syscall(SYS_pwritev2, fd, iov, n, (long)(off), 0L, (long)(fl))
#define preadv2(fd, iov, n, off, fl) syscall(SYS_preadv2, fd, iov, n, (long)(off), 0L, (long)(fl))

int main(int argc, char **argv)
{
	char buf[8] = "x", val[8];
	struct iovec iov = { buf, 1 };
	int p[2], n;

	if (argc < 2)
		return 2;
	int fd = open(argv[1], O_RDONLY), path = open(argv[1], O_PATH);
	pipe(p);
	SHOW("dup3(fd, fd, O_CLOEXEC)", dup3(fd, fd, O_CLOEXEC));
	SHOW("dup3(fd, fd, 0)", dup3(fd, fd, 0));
	SHOW("dup3(closed, closed, 0)", dup3(900, 900, 0));
	SHOW("dup3(fd, fd, bad flags)", dup3(fd, fd, 1));
	SHOW("dup3 to a huge newfd", dup3(fd, 1 << 30, 0));
	SHOW("ioctl FIONREAD on O_PATH", ioctl(path, FIONREAD, &n));
	SHOW("ioctl FIOCLEX on O_PATH", ioctl(path, FIOCLEX));
	SHOW("fgetxattr on O_PATH", fgetxattr(path, "user.x", val, sizeof(val)));
	SHOW("fgetxattr on O_PATH, bad name", fgetxattr(path, "bogus.x", val, sizeof(val)));
	SHOW("fsetxattr on O_PATH", fsetxattr(path, "user.x", "v", 1, 0));
	SHOW("fremovexattr on O_PATH", fremovexattr(path, "user.x"));
	SHOW("flistxattr on O_PATH", flistxattr(path, val, sizeof(val)));
	SHOW("fcntl F_GETFL on O_PATH & O_PATH", fcntl(path, F_GETFL) & O_PATH ? 1 : 0);
	SHOW("fcntl F_SETFL on O_PATH", fcntl(path, F_SETFL, O_NONBLOCK));
	SHOW("fcntl F_GETSIG on O_PATH", fcntl(path, F_GETSIG));
	SHOW("fcntl F_GETLK on O_PATH", fcntl(path, F_GETLK, NULL));
	SHOW("pwritev2 on a pipe's read end", pwritev2(p[0], &iov, 1, 0, 0));
	SHOW("preadv2 on a pipe's write end", preadv2(p[1], &iov, 1, 0, 0));
	SHOW("pwritev on a pipe's read end", pwritev(p[0], &iov, 1, 0));
	SHOW("pwritev2 at -1 on a pipe's read end", pwritev2(p[0], &iov, 1, -1, 0));
	SHOW("preadv on O_PATH", preadv(path, &iov, 1, 0));
	/* ESPIPE comes before anything about the iovecs (do_preadv tests FMODE_PREAD first). */
	struct iovec badv[2] = { { val, 1 }, { (void *)8, 4 } }, kernv = { (void *)-4096L, 4 };
	SHOW("pwritev on a pipe, second iovec at a bad address", pwritev(p[1], badv, 2, 0));
	SHOW("preadv on a pipe, iovec past user space", preadv(p[0], &kernv, 1, 0));
	SHOW("pwritev on a pipe, 0 bytes", pwritev(p[1], &iov, 0, 0));
	SHOW("pwritev on a read-only file, second iovec at a bad address", pwritev(fd, badv, 2, 0));
	struct flock fl = { .l_type = F_RDLCK, .l_whence = SEEK_CUR, .l_start = 0, .l_len = 0, .l_pid = 12345 };
	SHOW("F_GETLK, nothing in the way", fcntl(fd, F_GETLK, &fl));
	printf("F_GETLK wrote only l_type: type %s, whence %d, pid %d\n", fl.l_type == F_UNLCK ? "F_UNLCK" : "?",
	       fl.l_whence, fl.l_pid);
	int c1 = open("created.tmp", O_CREAT | O_RDWR, 0644), c2 = open("created.tmp", O_CREAT | O_RDWR, 0644);
	int c3 = open("created.tmp", O_RDONLY), c4 = open("created2.tmp", O_CREAT | O_EXCL | O_WRONLY, 0644);
	SHOW("F_CREATED_QUERY, O_CREAT of a new name", fcntl(c1, 1028 /* F_CREATED_QUERY */, 0));
	SHOW("F_CREATED_QUERY, O_CREAT of an existing one", fcntl(c2, 1028, 0));
	SHOW("F_CREATED_QUERY, no O_CREAT", fcntl(c3, 1028, 0));
	SHOW("F_CREATED_QUERY, O_CREAT|O_EXCL", fcntl(c4, 1028, 0));
	SHOW("F_CREATED_QUERY of its dup", fcntl(dup(c1), 1028, 0));
	SHOW("F_DUPFD_QUERY, a dup", fcntl(c1, 1027 /* F_DUPFD_QUERY */, dup(c1)));
	SHOW("F_DUPFD_QUERY, another open", fcntl(c1, 1027, c2));
	SHOW("F_DUPFD_QUERY, a bad fd", fcntl(c1, 1027, 900));
	unlink("created.tmp");
	unlink("created2.tmp");
	return 0;
}

/* filewrite: the write-side file syscalls in a scratch directory (needs `pvx run --rw`).
 * usage: filewrite DIR   (DIR must exist and be empty of the names used here) */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

static const char *ename(int e)
{
	switch (e) {
	case ENOENT: return "ENOENT";
	case EBADF: return "EBADF";
	case EEXIST: return "EEXIST";
	case EISDIR: return "EISDIR";
	case EINVAL: return "EINVAL";
	case EROFS: return "EROFS";
	case EACCES: return "EACCES";
	case ENOSYS: return "ENOSYS";
	case ENODEV: return "ENODEV";
	default: return "E?";
	}
}

#define SHOW(label, expr) do { errno = 0; long r_ = (long)(expr); \
	printf("%s = %ld %s\n", label, r_, r_ < 0 ? ename(errno) : ""); } while (0)

static void dump(int dfd, const char *name)
{
	char buf[512];
	int fd = openat(dfd, name, O_RDONLY);
	if (fd < 0) {
		printf("dump %s: %s\n", name, ename(errno));
		return;
	}
	ssize_t n = read(fd, buf, sizeof(buf));
	printf("dump %s: %zd <", name, n);
	for (ssize_t i = 0; i < n; i++)
		putchar(buf[i] == '\n' ? '|' : buf[i] ? buf[i] : '0');
	printf(">\n");
	close(fd);
}

int main(int argc, char **argv)
{
	struct stat st;
	if (argc < 2) {
		fprintf(stderr, "usage: filewrite DIR\n");
		return 2;
	}
	int dfd = open(argv[1], O_RDONLY | O_DIRECTORY);
	if (dfd < 0) {
		printf("open dir: %s\n", ename(errno));
		return 1;
	}
	int fd = openat(dfd, "f1", O_RDWR | O_CREAT | O_EXCL, 0644);
	printf("create f1: %s\n", fd >= 0 ? "ok" : ename(errno));
	SHOW("create f1 again O_EXCL", openat(dfd, "f1", O_RDWR | O_CREAT | O_EXCL, 0644));
	SHOW("write", write(fd, "hello world\n", 12));
	SHOW("pwrite at 6", pwrite(fd, "WORLD", 5, 6));
	SHOW("offset after pwrite", lseek(fd, 0, SEEK_CUR));
	struct iovec iov[3] = { { "ab", 2 }, { "", 0 }, { "cdef\n", 5 } };
	SHOW("writev", writev(fd, iov, 3));
	SHOW("fstat", fstat(fd, &st));
	printf("size=%lld\n", (long long)st.st_size);
	SHOW("lseek 30 (hole)", lseek(fd, 30, SEEK_SET));
	SHOW("write after hole", write(fd, "Z\n", 2));
	SHOW("write 0 bytes", write(fd, "", 0));
	SHOW("close", close(fd));
	dump(dfd, "f1");

	fd = openat(dfd, "f1", O_WRONLY | O_APPEND);
	SHOW("append write", write(fd, "tail\n", 5));
	SHOW("pwrite with O_APPEND", pwrite(fd, "X", 1, 0));
	close(fd);
	dump(dfd, "f1");

	fd = openat(dfd, "f1", O_RDONLY);
	SHOW("write to O_RDONLY fd", write(fd, "x", 1));
	close(fd);
	fd = openat(dfd, "f1", O_WRONLY | O_TRUNC);
	SHOW("read from O_WRONLY fd", read(fd, st.st_size ? (char[4]){0} : (char[4]){0}, 1));
	SHOW("write after trunc", write(fd, "new\n", 4));
	close(fd);
	dump(dfd, "f1");

	SHOW("open dir for write", openat(dfd, ".", O_WRONLY));
	SHOW("create in missing dir", openat(dfd, "nodir/f", O_WRONLY | O_CREAT, 0644));
	fd = openat(dfd, "f2", O_WRONLY | O_CREAT | O_TRUNC, 0600);
	char big[70000];
	for (size_t i = 0; i < sizeof(big); i++)
		big[i] = 'a' + i % 26;
	SHOW("big write", write(fd, big, sizeof(big)));
	close(fd);
	SHOW("stat f2", fstatat(dfd, "f2", &st, 0));
	printf("f2 size=%lld\n", (long long)st.st_size);
	fd = openat(dfd, "f2", O_RDONLY);
	char back[70000];
	ssize_t tot = 0, n;
	while ((n = read(fd, back + tot, sizeof(back) - tot)) > 0)
		tot += n;
	printf("f2 readback %zd equal=%s\n", tot, tot == sizeof(big) && !memcmp(big, back, tot) ? "yes" : "no");
	close(fd);

	/* MAP_SHARED file mapping: stores reach the file (seen by read), writes reach the mapping */
	fd = openat(dfd, "f2", O_RDWR);
	char *m = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	printf("mmap f2 MAP_SHARED: %s\n", m == MAP_FAILED ? ename(errno) : "ok");
	if (m != MAP_FAILED) {
		memcpy(m + 100, "SHARED", 6);
		char chk[6];
		pread(fd, chk, 6, 100);
		printf("store via map visible to pread: %s\n", !memcmp(chk, "SHARED", 6) ? "yes" : "no");
		pwrite(fd, "PWRITE", 6, 5000);
		printf("pwrite visible in map: %s\n", !memcmp(m + 5000, "PWRITE", 6) ? "yes" : "no");
		SHOW("munmap shared", munmap(m, 8192));
	}
	close(fd);
	fd = openat(dfd, "f2", O_RDONLY);
	SHOW("mmap MAP_SHARED PROT_WRITE on O_RDONLY fd", (long)mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) == -1 ? -1 : 0);
	close(fd);
	return 0;
}

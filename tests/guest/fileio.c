/* fileio: the read-side file syscalls on the fixture tree (tests/data/tree) and tests/data/lines.txt.
 * usage: fileio TREE_DIR LINES_FILE */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

static const char *ename(int e)
{
	switch (e) {
	case 0: return "OK";
	case ENOENT: return "ENOENT";
	case EBADF: return "EBADF";
	case EACCES: return "EACCES";
	case EFAULT: return "EFAULT";
	case EEXIST: return "EEXIST";
	case ENOTDIR: return "ENOTDIR";
	case EISDIR: return "EISDIR";
	case EINVAL: return "EINVAL";
	case ELOOP: return "ELOOP";
	case ENAMETOOLONG: return "ENAMETOOLONG";
	case ERANGE: return "ERANGE";
	case EROFS: return "EROFS";
	case ESPIPE: return "ESPIPE";
	case ENOTTY: return "ENOTTY";
	case ENOSYS: return "ENOSYS";
	default: return "E?";
	}
}

#define SHOW(label, expr) do { errno = 0; long r_ = (long)(expr); \
	printf("%s = %ld %s\n", label, r_, r_ < 0 ? ename(errno) : ""); } while (0)

static void show_stat(const char *label, const struct stat *st)
{
	const char *t = S_ISREG(st->st_mode) ? "reg" : S_ISDIR(st->st_mode) ? "dir" :
			S_ISLNK(st->st_mode) ? "lnk" : S_ISCHR(st->st_mode) ? "chr" : "other";
	/* sizes of directories depend on the filesystem; print them only for files and links */
	printf("%s: type=%s", label, t);
	if (!S_ISDIR(st->st_mode))
		printf(" size=%lld", (long long)st->st_size);
	printf(" nlink_pos=%d blksize_pos=%d\n", st->st_nlink > 0, st->st_blksize > 0);
}

struct ent { char name[4096]; unsigned char type; };

static int cmp_ent(const void *a, const void *b)
{
	return strcmp(((const struct ent *)a)->name, ((const struct ent *)b)->name);
}

/* getdents64 listing, sorted, with d_type; small buffer to force several calls */
static void list_dir(const char *path, size_t bufsz)
{
	static struct ent ents[64];
	int n = 0, calls = 0;
	char buf[4096];
	int fd = open(path, O_RDONLY | O_DIRECTORY);
	if (fd < 0) {
		printf("list %s: open %s\n", path, ename(errno));
		return;
	}
	for (;;) {
		long r = syscall(SYS_getdents64, fd, buf, bufsz);
		if (r < 0) {
			printf("getdents64: %s\n", ename(errno));
			break;
		}
		if (r == 0)
			break;
		calls++;
		for (long off = 0; off < r;) {
			unsigned short reclen = *(unsigned short *)(buf + off + 16);
			unsigned char type = *(unsigned char *)(buf + off + 18);
			const char *name = buf + off + 19;
			if (n < 64 && reclen >= 24 && reclen % 8 == 0) {
				snprintf(ents[n].name, sizeof(ents[n].name), "%s", name);
				ents[n].type = type;
				n++;
			} else {
				printf("bad dirent reclen %u\n", reclen);
				break;
			}
			off += reclen;
		}
	}
	close(fd);
	qsort(ents, n, sizeof(ents[0]), cmp_ent);
	printf("list %s (bufsz %zu): %d entries, multiple calls: %s\n", strrchr(path, '/') ? strrchr(path, '/') + 1 : path,
	       bufsz, n, bufsz < 128 ? (calls > 1 ? "yes" : "no") : "n/a");
	for (int i = 0; i < n; i++) {
		const char *t = ents[i].type == 4 ? "dir" : ents[i].type == 8 ? "reg" : ents[i].type == 10 ? "lnk" : "other";
		printf("  %s %s\n", t, ents[i].name);
	}
}

int main(int argc, char **argv)
{
	char buf[256], path[4096], cwd[4096];
	struct stat st, st2;

	if (argc < 3) {
		fprintf(stderr, "usage: fileio TREE LINES\n");
		return 2;
	}
	const char *tree = argv[1], *lines = argv[2];

	/* open/read/close */
	snprintf(path, sizeof(path), "%s/a.txt", tree);
	int fd = open(path, O_RDONLY);
	printf("open a.txt ok: %s\n", fd >= 0 ? "yes" : ename(errno));
	ssize_t n = read(fd, buf, sizeof(buf));
	printf("read a.txt = %zd <%.*s>\n", n, (int)(n > 0 ? n - 1 : 0), buf);
	SHOW("read at EOF", read(fd, buf, sizeof(buf)));
	SHOW("lseek SEEK_SET 2", lseek(fd, 2, SEEK_SET));
	n = read(fd, buf, 3);
	printf("read after seek = %zd <%.*s>\n", n, (int)n, buf);
	SHOW("lseek SEEK_CUR -1", lseek(fd, -1, SEEK_CUR));
	SHOW("lseek SEEK_END 0", lseek(fd, 0, SEEK_END));
	SHOW("lseek SEEK_END +10", lseek(fd, 10, SEEK_END));
	SHOW("read past EOF", read(fd, buf, 10));
	SHOW("lseek negative", lseek(fd, -100, SEEK_SET));
	SHOW("lseek bad whence", lseek(fd, 0, 42));
	SHOW("fstat", fstat(fd, &st));
	show_stat("fstat a.txt", &st);
	SHOW("close", close(fd));
	SHOW("close again", close(fd));

	/* pread / readv on the bigger file */
	fd = open(lines, O_RDONLY);
	n = pread(fd, buf, 10, 10 * 777);
	printf("pread line 777 = %zd <%.*s>\n", n, (int)(n > 0 ? n - 1 : 0), buf);
	SHOW("offset unchanged by pread", lseek(fd, 0, SEEK_CUR));
	SHOW("pread negative offset", pread(fd, buf, 10, -1));
	char v1[5], v2[7], v3[10];
	struct iovec iov[3] = { { v1, 5 }, { v2, 7 }, { v3, 10 } };
	n = readv(fd, iov, 3);
	printf("readv = %zd <%.5s|%.7s|%.10s>\n", n, v1, v2, v3);
	SHOW("offset after readv", lseek(fd, 0, SEEK_CUR));
	SHOW("readv iovcnt -1", syscall(SYS_readv, fd, iov, -1));
	SHOW("readv iovcnt 0", readv(fd, iov, 0));
	/* read of a large chunk crossing page boundaries */
	static char big[20000];
	lseek(fd, 0, SEEK_SET);
	size_t tot = 0;
	while ((n = read(fd, big + tot, sizeof(big) - tot)) > 0)
		tot += n;
	unsigned long sum = 0;
	for (size_t i = 0; i < tot; i++)
		sum = sum * 31 + (unsigned char)big[i];
	printf("read whole lines.txt: %zu bytes, hash %lx\n", tot, sum);
	SHOW("fstat", fstat(fd, &st));
	show_stat("fstat lines.txt", &st);
	close(fd);

	/* stat / lstat / newfstatat / access */
	snprintf(path, sizeof(path), "%s/link", tree);
	SHOW("stat link", stat(path, &st));
	show_stat("stat link", &st);
	SHOW("lstat link", lstat(path, &st2));
	show_stat("lstat link", &st2);
	snprintf(path, sizeof(path), "%s/a.txt", tree);
	stat(path, &st2);
	printf("stat(link).ino==stat(a.txt).ino: %s\n", st.st_ino == st2.st_ino && st.st_dev == st2.st_dev ? "yes" : "no");
	SHOW("stat tree", stat(tree, &st));
	show_stat("stat tree", &st);
	snprintf(path, sizeof(path), "%s/nope", tree);
	SHOW("stat missing", stat(path, &st));
	snprintf(path, sizeof(path), "%s/a.txt/x", tree);
	SHOW("stat through file", stat(path, &st));
	snprintf(path, sizeof(path), "%s/dangling", tree);
	SHOW("stat dangling", stat(path, &st));
	SHOW("lstat dangling", lstat(path, &st));
	int dfd = open(tree, O_RDONLY | O_DIRECTORY);
	SHOW("fstatat sub/c.txt", fstatat(dfd, "sub/c.txt", &st, 0));
	show_stat("fstatat sub/c.txt", &st);
	SHOW("fstatat link NOFOLLOW", fstatat(dfd, "link", &st, AT_SYMLINK_NOFOLLOW));
	show_stat("fstatat link NOFOLLOW", &st);
	SHOW("fstatat AT_EMPTY_PATH", fstatat(dfd, "", &st, AT_EMPTY_PATH));
	show_stat("fstatat empty path", &st);
	SHOW("fstatat empty path no flag", fstatat(dfd, "", &st, 0));
	snprintf(path, sizeof(path), "%s/a.txt", tree);
	SHOW("access a.txt R_OK", access(path, R_OK));
	SHOW("access a.txt F_OK", access(path, F_OK));
	snprintf(path, sizeof(path), "%s/nope", tree);
	SHOW("access missing", access(path, F_OK));
	SHOW("faccessat b.txt", faccessat(dfd, "b.txt", R_OK, 0));
	SHOW("faccessat missing", faccessat(dfd, "zzz", R_OK, 0));
	SHOW("access bad mode", access(tree, 0100));

	/* openat relative to a dirfd; O_DIRECTORY on a file; read on a directory */
	fd = openat(dfd, "sub/c.txt", O_RDONLY);
	n = read(fd, buf, sizeof(buf));
	printf("openat sub/c.txt read = %zd <%.*s>\n", n, (int)(n > 0 ? n - 1 : 0), buf);
	close(fd);
	SHOW("openat a.txt O_DIRECTORY", openat(dfd, "a.txt", O_RDONLY | O_DIRECTORY));
	SHOW("openat missing", openat(dfd, "missing", O_RDONLY));
	SHOW("open dir read", read(dfd, buf, 10));
	SHOW("openat dangling", openat(dfd, "dangling", O_RDONLY));
	SHOW("openat link O_NOFOLLOW", openat(dfd, "link", O_RDONLY | O_NOFOLLOW));
	fd = openat(dfd, "empty", O_RDONLY);
	SHOW("read empty", read(fd, buf, 10));
	close(fd);

	/* readlink / readlinkat */
	snprintf(path, sizeof(path), "%s/link", tree);
	memset(buf, 0, sizeof(buf));
	n = readlink(path, buf, sizeof(buf));
	printf("readlink link = %zd <%s>\n", n, buf);
	memset(buf, 0, sizeof(buf));
	n = readlinkat(dfd, "dangling", buf, sizeof(buf));
	printf("readlinkat dangling = %zd <%s>\n", n, buf);
	memset(buf, 0, sizeof(buf));
	n = readlinkat(dfd, "dangling", buf, 4);
	printf("readlinkat truncated = %zd <%s>\n", n, buf);
	SHOW("readlink on file", readlinkat(dfd, "a.txt", buf, sizeof(buf)));
	SHOW("readlink missing", readlinkat(dfd, "nope", buf, sizeof(buf)));

	/* ioctl on a regular file is ENOTTY */
	SHOW("ioctl TCGETS on dir", ioctl(dfd, 0x5401, buf));

	/* getdents64 */
	list_dir(tree, 4096);
	list_dir(tree, 64);
	snprintf(path, sizeof(path), "%s/sub", tree);
	list_dir(path, 4096);
	SHOW("getdents64 on file", ({ int f = openat(dfd, "a.txt", O_RDONLY); long r = syscall(SYS_getdents64, f, buf, sizeof(buf)); int e = errno; close(f); errno = e; r; }));
	SHOW("getdents64 tiny buf", syscall(SYS_getdents64, dfd, buf, 8));
	/* reading a directory to its end, rewinding with lseek and reading again gives the same entries */
	{
		static char dbuf[4096];
		long first = 0, again = 0, r;
		lseek(dfd, 0, SEEK_SET);
		while ((r = syscall(SYS_getdents64, dfd, dbuf, sizeof(dbuf))) > 0)
			first += r;
		SHOW("getdents64 at end", syscall(SYS_getdents64, dfd, dbuf, sizeof(dbuf)));
		SHOW("lseek dir to 0", lseek(dfd, 0, SEEK_SET));
		while ((r = syscall(SYS_getdents64, dfd, dbuf, sizeof(dbuf))) > 0)
			again += r;
		printf("getdents64 after rewind same bytes: %s\n", first == again && first > 0 ? "yes" : "no");
	}
	/* O_PATH descriptors: fstat works, read does not */
	fd = openat(dfd, "a.txt", O_PATH);
	printf("open O_PATH: %s\n", fd >= 0 ? "ok" : ename(errno));
	SHOW("read O_PATH", read(fd, buf, 1));
	SHOW("fstat O_PATH", fstat(fd, &st));
	show_stat("fstat O_PATH", &st);
	close(fd);
	close(dfd);

	/* getcwd / chdir */
	SHOW("chdir tree", chdir(tree));
	printf("getcwd==tree: %s\n", getcwd(cwd, sizeof(cwd)) && strcmp(cwd, tree) == 0 ? "yes" : "no");
	fd = open("b.txt", O_RDONLY);
	n = read(fd, buf, sizeof(buf));
	printf("relative open b.txt = %zd <%.*s>\n", n, (int)(n > 0 ? n - 1 : 0), buf);
	close(fd);
	SHOW("chdir sub", chdir("sub"));
	SHOW("stat ../a.txt", stat("../a.txt", &st));
	SHOW("chdir a file", chdir("c.txt"));
	SHOW("chdir missing", chdir("missing"));
	SHOW("chdir ..", chdir(".."));
	printf("getcwd==tree after ..: %s\n", getcwd(cwd, sizeof(cwd)) && strcmp(cwd, tree) == 0 ? "yes" : "no");
	SHOW("getcwd size 1", syscall(SYS_getcwd, cwd, 1));
	long r = syscall(SYS_getcwd, cwd, sizeof(cwd));
	printf("raw getcwd returns strlen+1: %s\n", r == (long)strlen(tree) + 1 ? "yes" : "no");
	SHOW("chdir /", chdir("/"));
	printf("getcwd after chdir / = <%s>\n", getcwd(cwd, sizeof(cwd)));
	SHOW("chdir .. at /", chdir(".."));
	printf("getcwd after .. at / = <%s>\n", getcwd(cwd, sizeof(cwd)));
	dfd = open(tree, O_RDONLY | O_DIRECTORY);
	SHOW("fchdir", fchdir(dfd));
	printf("getcwd==tree after fchdir: %s\n", getcwd(cwd, sizeof(cwd)) && strcmp(cwd, tree) == 0 ? "yes" : "no");
	close(dfd);
	return 0;
}

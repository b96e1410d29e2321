/* sec_mm_shared: an 8 MiB MAP_SHARED mapping of a file, written at offsets up to its last byte, must all
 * reach the file (LTP mmap21), and a read of the whole file must return all of it in one call, as Linux's
 * read of a regular file does.
 *   sec_mm_shared FILE msync|munmap|fork|exit
 * msync/munmap: write through the mapping, then msync (or munmap), then read the file back with one
 * read(), one pread(), one readv() and write a copy to FILE.copy with one writev(). fork: a child
 * writes, the parent msyncs and reads back (mmap21). exit: write and exit without msync or munmap;
 * the caller checks the file. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#define LEN (8UL << 20)
static const unsigned long offs[] = { 0, 4095, (1UL << 20) - 1, 1UL << 20, (1UL << 20) + 12345,
				      3UL << 20, LEN - 4096, LEN - 2, LEN - 1 };
#define NOFF (sizeof(offs) / sizeof(offs[0]))

static void write_pattern(char *m)
{
	for (size_t i = 0; i < NOFF; i++)
		m[offs[i]] = (char)('A' + i);
	for (unsigned long o = 5UL << 20; o < (5UL << 20) + 4096; o++)	/* one whole page past 1 MiB */
		m[o] = (char)(o * 7);
}

/* Which offsets of buf (the file's content) hold the pattern; prints one line. */
static void check(const char *how, long got, const char *buf)
{
	int bad = 0;

	for (size_t i = 0; i < NOFF; i++)
		bad += buf[offs[i]] != (char)('A' + i);
	for (unsigned long o = 5UL << 20; o < (5UL << 20) + 4096; o++)
		bad += buf[o] != (char)(o * 7);
	printf("%s: %ld bytes, %d bad\n", how, got, bad);
}

static void read_back(const char *path)
{
	char *buf = calloc(1, LEN), copy[4096];
	int fd = open(path, O_RDONLY);

	if (!buf || fd < 0) {
		printf("cannot read back\n");
		return;
	}
	check("one read", read(fd, buf, LEN), buf);
	memset(buf, 0, LEN);
	check("one pread", pread(fd, buf, LEN, 0), buf);
	memset(buf, 0, LEN);
	struct iovec iov[2] = { { buf, 3UL << 20 }, { buf + (3UL << 20), LEN - (3UL << 20) } };
	lseek(fd, 0, SEEK_SET);
	check("one readv", readv(fd, iov, 2), buf);
	snprintf(copy, sizeof copy, "%s.copy", path);
	unlink(copy);	/* one a native run as root left is not nobody's to open (README "Security") */
	int out = open(copy, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	printf("one writev of the file to a copy: %ld bytes\n", (long)writev(out, iov, 2));
	close(out);
	close(fd);
}

int main(int argc, char **argv)
{
	if (argc != 3)
		return 2;
	const char *mode = argv[2];
	unlink(argv[1]);	/* as above */
	int fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || ftruncate(fd, LEN))
		return 3;
	char *m = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED)
		return 4;
	close(fd);
	if (!strcmp(mode, "fork")) {
		pid_t c = fork();
		if (c == 0) {
			write_pattern(m);
			_exit(0);
		}
		waitpid(c, NULL, 0);
	} else {
		write_pattern(m);
	}
	if (!strcmp(mode, "exit")) {
		printf("exit without msync or munmap\n");
		return 0;
	}
	if (!strcmp(mode, "munmap"))
		printf("munmap: %d\n", munmap(m, LEN));
	else
		printf("msync: %d\n", msync(m, LEN, MS_SYNC));
	read_back(argv[1]);
	return 0;
}

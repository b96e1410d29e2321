/* mmap_ofd: a mapping holds its file's open file description, and only as long as it lasts. An OFD
 * lock (F_OFD_SETLK) belongs to the description, so it stays while a mapping made through it does and
 * goes with the last close and munmap: a second open's lock is EAGAIN while the first description
 * lives, granted once it is gone. Each step maps through the same file twice in a row and a second
 * file in between (the platform's fds for mappings must not keep a description past the call that
 * made the mapping). In ./ofdfile and ./ofdfile2 (made here, removed at the end). Prints relations only.
 * usage: mmap_ofd */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "guest.h"

static const char *wrlock(int fd)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };

	return fcntl(fd, F_OFD_SETLK, &fl) == 0 ? "granted" : strerror(errno);
}

static int open_file(const char *name)
{
	int fd = open(name, O_RDWR | O_CREAT, 0600);
	char page[4096] = { 1 };

	if (fd < 0 || pwrite(fd, page, sizeof(page), 0) != sizeof(page) || pwrite(fd, page, sizeof(page), 4096) != 4096)
		_exit(90);
	return fd;
}

int main(void)
{
	int fd = open_file("ofdfile"), other = open_file("ofdfile2");
	say("first lock: %s\n", wrlock(fd));
	char *a = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
	char *o = mmap(NULL, 4096, PROT_READ, MAP_SHARED, other, 0);
	char *b = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 4096);
	if (a == MAP_FAILED || b == MAP_FAILED || o == MAP_FAILED)
		return 91;
	close(fd);
	int fd2 = open("ofdfile", O_RDWR);
	say("closed, still mapped twice: second description's lock: %s\n", wrlock(fd2));
	munmap(a, 4096);
	say("one mapping left: %s\n", wrlock(fd2));
	munmap(b, 4096);
	say("no mapping left: %s\n", wrlock(fd2));
	/* the same with mappings made right before the close, in one go: nothing of them may linger */
	close(fd2);
	fd = open("ofdfile", O_RDWR);
	say("third description's lock: %s\n", wrlock(fd));
	a = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
	if (a == MAP_FAILED)
		return 92;
	munmap(a, 4096);
	close(fd);
	fd2 = open("ofdfile", O_RDWR);
	say("mapped, unmapped, closed: next lock: %s\n", wrlock(fd2));
	munmap(o, 4096);
	close(other);
	close(fd2);
	unlink("ofdfile");	/* the next run may be another uid's */
	unlink("ofdfile2");
	return 0;
}

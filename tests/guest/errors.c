/* errors: EFAULT on bad guest pointers and EBADF on bad fds, via raw syscalls (libc wrappers would
 * sometimes check or crash first). usage: errors FILE [partial]
 * "partial" runs only the buffer-crossing-into-an-unmapped-page cases (Linux returns a short count). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <time.h>
#include <stdio.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <string.h>
#include <unistd.h>

static const char *ename(int e)
{
	switch (e) {
	case EFAULT: return "EFAULT";
	case EBADF: return "EBADF";
	case EINVAL: return "EINVAL";
	case ENOENT: return "ENOENT";
	case ENOSYS: return "ENOSYS";
	case ENAMETOOLONG: return "ENAMETOOLONG";
	default: return "E?";
	}
}

#define SHOW(label, expr) do { errno = 0; long r_ = (long)(expr); \
	printf("%s = %ld %s\n", label, r_, r_ < 0 ? ename(errno) : ""); fflush(stdout); } while (0)

#define BAD ((void *)1)
#define KERN ((void *)0xffffffff81000000UL)
#define NONCANON ((void *)0x0000800000000000UL)

int main(int argc, char **argv)
{
	char buf[64];
	struct stat st;
	if (argc < 2) {
		fprintf(stderr, "usage: errors FILE\n");
		return 2;
	}
	const char *file = argv[1];
	int fd = open(file, O_RDONLY);

	/* EFAULT */
	SHOW("write(1, 1, 10)", syscall(SYS_write, 1, BAD, 10));
	SHOW("write(1, NULL, 10)", syscall(SYS_write, 1, NULL, 10));
	SHOW("write(1, kernel addr, 10)", syscall(SYS_write, 1, KERN, 10));
	SHOW("write(1, non-canonical, 10)", syscall(SYS_write, 1, NONCANON, 10));
	SHOW("write(1, 1, 0)", syscall(SYS_write, 1, BAD, 0));
	SHOW("read(file, 1, 10)", syscall(SYS_read, fd, BAD, 10));
	SHOW("offset unchanged after EFAULT read", lseek(fd, 0, SEEK_CUR));
	SHOW("pread(file, NULL, 10, 0)", syscall(SYS_pread64, fd, NULL, 10, 0));
	SHOW("open(bad path)", syscall(SYS_open, BAD, O_RDONLY));
	SHOW("openat(bad path)", syscall(SYS_openat, AT_FDCWD, BAD, O_RDONLY));
	SHOW("stat(file, bad buf)", syscall(SYS_stat, file, BAD));
	SHOW("stat(bad path, buf)", syscall(SYS_stat, BAD, &st));
	SHOW("lstat(file, bad buf)", syscall(SYS_lstat, file, BAD));
	SHOW("fstat(fd, bad buf)", syscall(SYS_fstat, fd, BAD));
	SHOW("newfstatat(bad buf)", syscall(SYS_newfstatat, AT_FDCWD, file, BAD, 0));
	SHOW("access(bad path)", syscall(SYS_access, BAD, F_OK));
	SHOW("readlink(bad path)", syscall(SYS_readlink, BAD, buf, sizeof(buf)));
	SHOW("chdir(bad path)", syscall(SYS_chdir, BAD));
	SHOW("getcwd(bad buf)", syscall(SYS_getcwd, BAD, 100));
	SHOW("uname(bad)", syscall(SYS_uname, BAD));
	SHOW("clock_gettime(bad)", syscall(SYS_clock_gettime, CLOCK_MONOTONIC, BAD));
	SHOW("gettimeofday(bad)", syscall(SYS_gettimeofday, BAD, NULL));
	SHOW("nanosleep(bad)", syscall(SYS_nanosleep, BAD, NULL));
	SHOW("sysinfo(bad)", syscall(SYS_sysinfo, BAD));
	SHOW("getrandom(bad, 8)", syscall(SYS_getrandom, BAD, 8, 0));
	SHOW("getrlimit(bad)", syscall(SYS_getrlimit, RLIMIT_NOFILE, BAD));
	SHOW("rt_sigaction(bad act)", syscall(SYS_rt_sigaction, SIGUSR1, BAD, NULL, 8));
	SHOW("rt_sigprocmask(bad set)", syscall(SYS_rt_sigprocmask, SIG_BLOCK, BAD, NULL, 8));
	SHOW("sched_getaffinity(bad)", syscall(SYS_sched_getaffinity, 0, 128, BAD));
	SHOW("getdents64(bad)", ({ int d = open("/", O_RDONLY | O_DIRECTORY); long r = syscall(SYS_getdents64, d, BAD, 4096); int e = errno; close(d); errno = e; r; }));
	struct iovec badiov[1] = { { BAD, 10 } };
	SHOW("writev(1, iov->bad, 1)", syscall(SYS_writev, 1, badiov, 1));
	SHOW("writev(1, bad iov array, 1)", syscall(SYS_writev, 1, BAD, 1));
	SHOW("readv(file, iov->bad, 1)", syscall(SYS_readv, fd, badiov, 1));
	static struct iovec many[1025];
	for (int i = 0; i < 1025; i++)
		many[i] = (struct iovec){ buf, 1 };
	SHOW("readv iovcnt 1025", syscall(SYS_readv, fd, many, 1025));
	struct iovec neg[2] = { { buf, 1 }, { buf, (size_t)-1 } };
	SHOW("writev iov_len negative as ssize_t", syscall(SYS_writev, 1, neg, 2));
	/* a path that runs off the end of a mapping is EFAULT, not a crash */
	SHOW("time(bad)", syscall(SYS_time, BAD));
	/* an over-long path */
	static char longpath[8192];
	for (int i = 0; i < 8000; i++)
		longpath[i] = 'a';
	SHOW("open(8000-char path)", syscall(SYS_open, longpath, O_RDONLY));

	/* strings and buffers that end exactly at the end of a mapping (the next page unmapped) */
	{
		char *pg = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		munmap(pg + 4096, 4096);
		size_t len = strlen(file);
		char *p = pg + 4096 - (len + 1);
		memcpy(p, file, len + 1);
		long r = syscall(SYS_open, p, O_RDONLY);
		printf("open(path ending at page end) ok: %s\n", r >= 0 ? "yes" : ename(errno));
		if (r >= 0)
			close((int)r);
		r = syscall(SYS_stat, p, &st);
		printf("stat(path ending at page end) ok: %s\n", r == 0 ? "yes" : ename(errno));
		memset(pg + 4096 - 64, 'a', 64);
		SHOW("open(unterminated path running into unmapped page)", syscall(SYS_open, pg + 4096 - 64, O_RDONLY));
		pg[4095] = '\n';
		SHOW("write(buffer ending at page end)", syscall(SYS_write, 1, pg + 4096 - 1, 1) == 1 ? 0 : -1);
		SHOW("read(file, buffer ending at page end, 10)", syscall(SYS_pread64, fd, pg + 4096 - 10, 10, 0));
		if (argc > 2 && !strcmp(argv[2], "partial")) {
			/* a buffer that starts fine and runs into the unmapped page: Linux transfers what it can */
			long w = syscall(SYS_pread64, fd, pg + 4096 - 10, 20, 0);
			printf("pread(buffer crossing into unmapped page): %s\n", w == 10 ? "short (10)" : w < 0 ? ename(errno) : "other");
			lseek(fd, 0, SEEK_SET);
			w = syscall(SYS_read, fd, pg + 4096 - 10, 20);
			printf("read(buffer crossing into unmapped page): %s, offset now %ld\n",
			       w == 10 ? "short (10)" : w < 0 ? ename(errno) : "other", (long)lseek(fd, 0, SEEK_CUR));
			return 0;
		}
		munmap(pg, 4096);
	}
	printf("\n");

	/* EBADF */
	int fds[2] = { 99, -1 };
	for (int i = 0; i < 2; i++) {
		int b = fds[i];
		printf("-- fd %d\n", b);
		SHOW("read", syscall(SYS_read, b, buf, 1));
		SHOW("write", syscall(SYS_write, b, "x", 1));
		SHOW("pread", syscall(SYS_pread64, b, buf, 1, 0));
		SHOW("pwrite", syscall(SYS_pwrite64, b, "x", 1, 0));
		SHOW("close", syscall(SYS_close, b));
		SHOW("fstat", syscall(SYS_fstat, b, &st));
		SHOW("lseek", syscall(SYS_lseek, b, 0, SEEK_SET));
		SHOW("dup", syscall(SYS_dup, b));
		SHOW("fcntl F_GETFD", syscall(SYS_fcntl, b, F_GETFD));
		SHOW("getdents64", syscall(SYS_getdents64, b, buf, sizeof(buf)));
		SHOW("fchdir", syscall(SYS_fchdir, b));
		SHOW("ioctl", syscall(SYS_ioctl, b, 0x5401, buf));
		SHOW("mmap", (long)syscall(SYS_mmap, 0, 4096, PROT_READ, MAP_PRIVATE, b, 0));
	}
	SHOW("openat(99, relative)", syscall(SYS_openat, 99, "x", O_RDONLY));
	SHOW("openat(99, absolute)", syscall(SYS_openat, 99, file, O_RDONLY) >= 0);
	SHOW("newfstatat(-1, relative)", syscall(SYS_newfstatat, -1, "x", &st, 0));
	SHOW("fd still fine", syscall(SYS_read, fd, buf, 4));
	return 0;
}

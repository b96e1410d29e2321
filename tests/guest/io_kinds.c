/* Each kind of file answers the calls that are its own, and Linux's errno for those it cannot do (issue 12).
 * usage: io_kinds proc|eventfd|pipe|dir|memfd
 *   proc     /proc/self/status: read-only, seq_file seeks (no SEEK_END), no mmap, fstat size 0, FIONREAD,
 *            fchmod EPERM; the same when reopened through /proc/self/fd
 *   eventfd  noop seek, no mmap, getdents, seals or pipe sizes; fsync and ftruncate EINVAL; the
 *            vector calls through its 8-byte counter; fstat and statx of the fd by AT_EMPTY_PATH
 *   pipe     ESPIPE, no mmap or fsync, FIONBIO then F_GETFL, readv/writev, seals EINVAL
 *   dir      getdents64, read EISDIR, no mmap, FIONREAD ENOTTY, pipe sizes EBADF
 *   memfd    seals, mmap, FIONREAD of what is left past the offset, pipe sizes EBADF
 * Prints what happened; the caller compares with the native run. */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "evnet.h"

#ifndef F_SETPIPE_SZ
#define F_SETPIPE_SZ 1031
#define F_GETPIPE_SZ 1032
#endif
#ifndef F_ADD_SEALS
#define F_ADD_SEALS 1033
#define F_GET_SEALS 1034
#define F_SEAL_WRITE 0x0008
#endif

/* mmap of the whole of fd's first page, read-only and shared: "0" or "-1 ERRNO". */
static const char *map(int fd)
{
	void *p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return rs(-1);
	munmap(p, 4096);
	return "0";
}

static long getdents_raw(int fd)
{
	char buf[4096];
	return syscall(SYS_getdents64, fd, buf, sizeof buf);
}

static int mode_proc(void)
{
	int fd = open("/proc/self/status", O_RDONLY);
	char b[16];
	int n = -2;
	struct stat st;
	if (fd < 0)
		return 90;
	say("read 5: %s\n", rs(read(fd, b, 5)));
	long r = ioctl(fd, FIONREAD, &n);	/* each call before its say(): arguments have no order */
	say("FIONREAD after 5: %s value %d\n", rs(r), n);
	say("lseek SEEK_CUR 0: %s\n", rs(lseek(fd, 0, SEEK_CUR)));
	say("lseek SEEK_END 0: %s\n", rs(lseek(fd, 0, SEEK_END)));
	say("lseek SEEK_SET -1: %s\n", rs(lseek(fd, -1, SEEK_SET)));
	say("lseek SEEK_SET 1000000: %s\n", rs(lseek(fd, 1000000, SEEK_SET)));
	say("read there: %s\n", rs(read(fd, b, sizeof b)));
	say("lseek SEEK_SET 0: %s\n", rs(lseek(fd, 0, SEEK_SET)));
	say("write: %s\n", rs(write(fd, "x", 1)));
	say("mmap: %s\n", map(fd));
	r = fstat(fd, &st);
	say("fstat: %s regular %s size %lld\n", rs(r), yesno(S_ISREG(st.st_mode)), (long long)st.st_size);
	say("fchmod: %s\n", rs(fchmod(fd, 0644)));
	say("F_GETPIPE_SZ: %s\n", rs(fcntl(fd, F_GETPIPE_SZ)));
	say("getdents: %s\n", rs(getdents_raw(fd)));
	char path[64];
	snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
	int again = open(path, O_RDONLY);
	say("reopened by /proc/self/fd: SEEK_END %s, mmap %s\n", rs(lseek(again, 0, SEEK_END)), map(again));
	return 0;
}

static int mode_eventfd(void)
{
	int fd = eventfd(3, EFD_NONBLOCK);
	uint64_t v = 0, w = 4;
	struct stat st;
	if (fd < 0)
		return 90;
	say("lseek: %s\n", rs(lseek(fd, 10, SEEK_SET)));
	say("mmap: %s\n", map(fd));
	say("getdents: %s\n", rs(getdents_raw(fd)));
	say("F_GET_SEALS: %s\n", rs(fcntl(fd, F_GET_SEALS)));
	say("F_GETPIPE_SZ: %s\n", rs(fcntl(fd, F_GETPIPE_SZ)));
	say("FIONREAD: %s\n", rs(ioctl(fd, FIONREAD, &(int){ 0 })));
	say("fsync: %s\n", rs(fsync(fd)));
	say("ftruncate: %s\n", rs(ftruncate(fd, 0)));
	struct iovec wi = { &w, sizeof w }, ri = { &v, sizeof v };
	say("writev 4: %s\n", rs(writev(fd, &wi, 1)));
	long r = readv(fd, &ri, 1);
	say("readv: %s value %llu\n", rs(r), (unsigned long long)v);
	say("readv again: %s\n", rs(readv(fd, &ri, 1)));
	say("preadv at 0: %s\n", rs(preadv(fd, &ri, 1, 0)));
	r = fstatat(fd, "", &st, AT_EMPTY_PATH);
	say("fstatat AT_EMPTY_PATH: %s type bits %o mode %o\n", rs(r), st.st_mode & S_IFMT, st.st_mode & 0777);
	unsigned char sx[256] = { 0 };	/* struct statx: stx_mode is the u16 at 28 (musl has no struct statx) */
	uint16_t mode;
	r = syscall(SYS_statx, fd, "", AT_EMPTY_PATH, 1 /* STATX_TYPE */, sx);
	memcpy(&mode, sx + 28, sizeof mode);
	say("statx AT_EMPTY_PATH: %s type bits %o\n", rs(r), mode & S_IFMT);
	return 0;
}

static int mode_pipe(void)
{
	int p[2], on = 1;
	char b[8] = { 0 };
	if (pipe(p))
		return 90;
	say("lseek: %s\n", rs(lseek(p[0], 0, SEEK_CUR)));
	say("mmap: %s\n", map(p[0]));
	say("fsync: %s\n", rs(fsync(p[1])));
	say("F_GET_SEALS: %s\n", rs(fcntl(p[0], F_GET_SEALS)));
	say("getdents: %s\n", rs(getdents_raw(p[0])));
	say("FIONBIO on: %s\n", rs(ioctl(p[0], FIONBIO, &on)));
	say("F_GETFL has O_NONBLOCK: %s\n", yesno(fcntl(p[0], F_GETFL) & O_NONBLOCK));
	say("read empty: %s\n", rs(read(p[0], b, 1)));
	struct iovec w[2] = { { "ab", 2 }, { "cde", 3 } }, r[2] = { { b, 1 }, { b + 1, 7 } };
	say("writev: %s\n", rs(writev(p[1], w, 2)));
	long n = readv(p[0], r, 2);
	say("readv: %s \"%s\"\n", rs(n), b);
	say("preadv: %s\n", rs(preadv(p[0], r, 2, 0)));
	return 0;
}

static int mode_dir(void)
{
	int fd = open(".", O_RDONLY | O_DIRECTORY), n;
	char b[8];
	if (fd < 0)
		return 90;
	say("getdents: more than 0 %s\n", yesno(getdents_raw(fd) > 0));
	say("read: %s\n", rs(read(fd, b, sizeof b)));
	say("mmap: %s\n", map(fd));
	say("FIONREAD: %s\n", rs(ioctl(fd, FIONREAD, &n)));
	say("F_SETPIPE_SZ: %s\n", rs(fcntl(fd, F_SETPIPE_SZ, 4096)));
	say("fchdir: %s\n", rs(fchdir(fd)));
	return 0;
}

static int mode_memfd(void)
{
	int fd = memfd_create("kinds", MFD_ALLOW_SEALING), n = -1;
	if (fd < 0)
		return 90;
	say("write: %s\n", rs(write(fd, "0123456789", 10)));
	say("lseek 4: %s\n", rs(lseek(fd, 4, SEEK_SET)));
	long r = ioctl(fd, FIONREAD, &n);
	say("FIONREAD: %s value %d\n", rs(r), n);
	say("mmap: %s\n", map(fd));
	say("F_ADD_SEALS write: %s\n", rs(fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE)));
	say("F_GET_SEALS: %s\n", rs(fcntl(fd, F_GET_SEALS)));
	say("write sealed: %s\n", rs(write(fd, "x", 1)));
	say("F_GETPIPE_SZ: %s\n", rs(fcntl(fd, F_GETPIPE_SZ)));
	say("getdents: %s\n", rs(getdents_raw(fd)));
	return 0;
}

int main(int argc, char **argv)
{
	static const struct mode modes[] = {
		{ "proc", mode_proc }, { "eventfd", mode_eventfd }, { "pipe", mode_pipe },
		{ "dir", mode_dir },   { "memfd", mode_memfd },
	};
	return run_mode("io_kinds", modes, sizeof modes / sizeof modes[0], argc, argv);
}

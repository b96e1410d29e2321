/* io_splice: splice, tee and vmsplice between pipes and files; pipe sizes; fallocate; FIONREAD on pipes.
 * Files are made in the current directory (run with --rw).
 * usage: io_splice splice|tee|vmsplice|pipesz|fallocate|fionread|errors
 *   splice     file -> pipe and pipe -> file with and without offsets (offsets written back, the file
 *              position untouched), pipe -> pipe, EOF, SPLICE_F_NONBLOCK on an empty pipe
 *   tee        tee duplicates a pipe's data into another without consuming it; limited by len
 *   vmsplice   user memory into a pipe (several iovecs), and out of a pipe into memory
 *   pipesz     F_GETPIPE_SZ default, F_SETPIPE_SZ rounding, EBUSY below the data held, a full pipe
 *   fallocate  mode 0 extends, KEEP_SIZE does not, PUNCH_HOLE zeroes, errors (EBADF, ESPIPE, EINVAL,
 *              EOPNOTSUPP)
 *   fionread   FIONREAD on a pipe's read and write ends as data goes in and out
 *   errors     EINVAL/ESPIPE/EBADF for splice and tee on the wrong kinds of fds, EFAULT
 * Prints what happened; the caller compares with the native run. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "evnet.h"

#ifndef F_SETPIPE_SZ
#define F_SETPIPE_SZ 1031
#define F_GETPIPE_SZ 1032
#endif
#ifndef FALLOC_FL_KEEP_SIZE
#define FALLOC_FL_KEEP_SIZE 1
#endif
#ifndef FALLOC_FL_PUNCH_HOLE
#define FALLOC_FL_PUNCH_HOLE 2
#endif

/* read up to n bytes from fd and print them; a pipe left empty by a failed call prints "nothing" after 5 s
 * instead of blocking for ever */
static void show_read(const char *what, int fd, size_t n)
{
	char b[128] = { 0 };
	if (n > sizeof b - 1)
		n = sizeof b - 1;
	struct pollfd p = { fd, POLLIN, 0 };
	if (poll(&p, 1, 5000) == 0) {
		say("%s: nothing\n", what);
		return;
	}
	long r = read(fd, b, n);
	say("%s: %s \"%s\"\n", what, rs(r), r > 0 ? b : "");
}

static int make_file(const char *name, const char *data)
{
	unlink(name);
	int f = open(name, O_CREAT | O_RDWR | O_TRUNC, 0644);
	if (f >= 0 && write(f, data, strlen(data)) != (long)strlen(data))
		return -1;
	lseek(f, 0, SEEK_SET);
	return f;
}

static int mode_splice(void)
{
	int in = make_file("io_splice.in", "0123456789abcdef");
	int p[2];
	if (pipe(p))
		return 90;
	say("file -> pipe, 4 bytes, no offset: %s\n", rs(splice(in, NULL, p[1], NULL, 4, 0)));
	say("file position now: %s\n", rs(lseek(in, 0, SEEK_CUR)));
	loff_t off = 10;
	long r = splice(in, &off, p[1], NULL, 3, 0);
	say("file -> pipe, 3 bytes at offset 10: %s, offset now %lld, position %s\n", rs(r), (long long)off,
	    rs(lseek(in, 0, SEEK_CUR)));
	show_read("pipe holds", p[0], 100);

	int out = make_file("io_splice.out", "");
	if (write(p[1], "spliced!", 8) != 8)
		return 91;
	say("pipe -> file, 5 of 8: %s\n", rs(splice(p[0], NULL, out, NULL, 5, 0)));
	off = 20;
	r = splice(p[0], NULL, out, &off, 3, 0);
	say("pipe -> file at offset 20: %s, offset now %lld\n", rs(r), (long long)off);
	struct stat st;
	fstat(out, &st);
	say("file size %lld\n", (long long)st.st_size);
	char buf[32] = { 0 };
	r = pread(out, buf, sizeof buf, 0);
	for (long i = 0; i < r; i++)
		if (!buf[i])
			buf[i] = '.';
	say("file: \"%s\"\n", buf);

	int q[2];
	if (pipe(q))
		return 92;
	if (write(p[1], "pipe2pipe", 9) != 9)
		return 93;
	say("pipe -> pipe, 100 asked: %s\n", rs(splice(p[0], NULL, q[1], NULL, 100, 0)));
	show_read("second pipe holds", q[0], 100);
	say("empty pipe, SPLICE_F_NONBLOCK: %s\n", rs(splice(p[0], NULL, q[1], NULL, 10, SPLICE_F_NONBLOCK)));
	fcntl(p[0], F_SETFL, O_NONBLOCK);
	say("empty pipe, O_NONBLOCK: %s\n", rs(splice(p[0], NULL, q[1], NULL, 10, 0)));
	close(p[1]);
	say("empty pipe, writer closed: %s\n", rs(splice(p[0], NULL, q[1], NULL, 10, 0)));
	off = 16;
	say("file -> pipe at EOF: %s\n", rs(splice(in, &off, q[1], NULL, 10, 0)));
	say("len 0: %s\n", rs(splice(in, NULL, q[1], NULL, 0, 0)));
	say("SPLICE_F_MOVE|SPLICE_F_MORE: %s\n", rs(splice(in, NULL, q[1], NULL, 2, SPLICE_F_MOVE | SPLICE_F_MORE)));
	show_read("pipe holds", q[0], 100);
	unlink("io_splice.in");
	unlink("io_splice.out");
	return 0;
}

static int mode_tee(void)
{
	int a[2], b[2];
	if (pipe(a) || pipe(b))
		return 90;
	if (write(a[1], "teeing data", 11) != 11)
		return 91;
	say("tee 100: %s\n", rs(tee(a[0], b[1], 100, 0)));
	int n = -1;
	ioctl(a[0], FIONREAD, &n);
	say("source still holds: %d\n", n);
	say("tee 3 more: %s\n", rs(tee(a[0], b[1], 3, 0)));
	show_read("copy", b[0], 100);
	show_read("source", a[0], 100);
	say("tee from an empty pipe, NONBLOCK: %s\n", rs(tee(a[0], b[1], 10, SPLICE_F_NONBLOCK)));
	close(a[1]);
	say("tee from an empty pipe, writer closed: %s\n", rs(tee(a[0], b[1], 10, 0)));
	int c[2];
	if (pipe(c))
		return 92;
	say("tee a pipe into itself: %s\n", rs(tee(c[0], c[1], 10, SPLICE_F_NONBLOCK)));
	int f = make_file("io_splice.in", "file");
	say("tee from a file: %s\n", rs(tee(f, b[1], 10, 0)));
	say("tee into a file: %s\n", rs(tee(c[0], f, 10, SPLICE_F_NONBLOCK)));
	say("tee read end to read end: %s\n", rs(tee(c[0], b[0], 10, SPLICE_F_NONBLOCK)));
	unlink("io_splice.in");
	return 0;
}

static int mode_vmsplice(void)
{
	int p[2];
	if (pipe(p))
		return 90;
	static char one[] = "vm", two[] = "splice";
	struct iovec iv[2] = { { one, 2 }, { two, 6 } };
	say("vmsplice 2 iovecs into the pipe: %s\n", rs(vmsplice(p[1], iv, 2, 0)));
	show_read("pipe holds", p[0], 100);
	if (write(p[1], "out of the pipe", 15) != 15)
		return 91;
	char dst[32] = { 0 };
	struct iovec ov = { dst, 6 };
	long got = vmsplice(p[0], &ov, 1, 0);
	say("vmsplice from the pipe into memory: %s \"%s\"\n", rs(got), dst);
	show_read("rest", p[0], 100);
	/* The stub's text (above the guest's range; unmapped natively): the transfer ends there, nothing of it gets in. */
	struct iovec stub_iv[3] = { { one, 2 }, { (void *)0x7ff000001000UL, 16 }, { two, 6 } };
	say("vmsplice, second of 3 iovecs at the stub's text: %s\n", rs(vmsplice(p[1], stub_iv, 3, 0)));
	show_read("pipe holds", p[0], 100);
	say("vmsplice 0 iovecs: %s\n", rs(vmsplice(p[1], iv, 0, 0)));
	say("vmsplice bad iovec pointer: %s\n", rs(syscall(SYS_vmsplice, p[1], 8, 1, 0)));
	struct iovec bad = { (void *)8, 4 };
	say("vmsplice iovec with a bad base: %s\n", rs(vmsplice(p[1], &bad, 1, 0)));
	int f = make_file("io_splice.in", "x");
	say("vmsplice to a file: %s\n", rs(vmsplice(f, iv, 1, 0)));
	say("vmsplice, flags 0x100: %s\n", rs(vmsplice(p[1], iv, 1, 0x100)));
	say("vmsplice iovcnt 2000: %s\n", rs(syscall(SYS_vmsplice, p[1], iv, 2000, 0)));
	fcntl(p[1], F_SETFL, O_NONBLOCK);
	static char big[4096];
	long total = 0, r;
	struct iovec biv = { big, sizeof big };
	while ((r = vmsplice(p[1], &biv, 1, SPLICE_F_NONBLOCK)) > 0)
		total += r;
	say("filling with vmsplice: then %s, some went in %s\n", rs(r), yesno(total > 0));
	unlink("io_splice.in");
	return 0;
}

static int mode_pipesz(void)
{
	int p[2];
	if (pipe(p))
		return 90;
	say("F_GETPIPE_SZ: %s\n", rs(fcntl(p[0], F_GETPIPE_SZ)));
	say("F_SETPIPE_SZ 4096: %s\n", rs(fcntl(p[1], F_SETPIPE_SZ, 4096)));
	say("F_GETPIPE_SZ on the other end: %s\n", rs(fcntl(p[0], F_GETPIPE_SZ)));
	say("F_SETPIPE_SZ 1: %s\n", rs(fcntl(p[1], F_SETPIPE_SZ, 1)));
	say("F_SETPIPE_SZ 10000: %s\n", rs(fcntl(p[1], F_SETPIPE_SZ, 10000)));
	say("F_SETPIPE_SZ 65537: %s\n", rs(fcntl(p[1], F_SETPIPE_SZ, 65537)));
	say("F_SETPIPE_SZ 0: %s\n", rs(fcntl(p[1], F_SETPIPE_SZ, 0)));
	say("F_SETPIPE_SZ -1: %s\n", rs(fcntl(p[1], F_SETPIPE_SZ, -1)));
	fcntl(p[1], F_SETPIPE_SZ, 16384);
	static char big[65536];
	fcntl(p[1], F_SETFL, O_NONBLOCK);
	long total = 0, r;
	while ((r = write(p[1], big, 1000)) > 0)
		total += r;
	say("a 16384 pipe took %ld bytes, then %s\n", total, rs(r));
	say("F_SETPIPE_SZ 4096 while holding them: %s\n", rs(fcntl(p[1], F_SETPIPE_SZ, 4096)));
	say("F_SETPIPE_SZ 65536 while full: %s\n", rs(fcntl(p[1], F_SETPIPE_SZ, 65536)));
	say("writable again: %s\n", rs(write(p[1], big, 1000)));
	int f = make_file("io_splice.in", "x");
	say("F_GETPIPE_SZ on a file: %s\n", rs(fcntl(f, F_GETPIPE_SZ)));
	say("F_SETPIPE_SZ on a file: %s\n", rs(fcntl(f, F_SETPIPE_SZ, 4096)));
	unlink("io_splice.in");
	return 0;
}

static void show_size(const char *what, int f)
{
	struct stat st;
	fstat(f, &st);
	say("%s: size %lld, blocks allocated %s\n", what, (long long)st.st_size, st.st_blocks ? "some" : "none");
}

static int mode_fallocate(void)
{
	int f = make_file("io_splice.fa", "");
	show_size("empty", f);
	say("fallocate 0..8192: %s\n", rs(fallocate(f, 0, 0, 8192)));
	show_size("after", f);
	say("KEEP_SIZE 8192..65536: %s\n", rs(fallocate(f, FALLOC_FL_KEEP_SIZE, 8192, 65536)));
	show_size("after", f);
	if (pwrite(f, "XXXXXXXXXXXXXXXX", 16, 100) != 16)
		return 90;
	say("PUNCH_HOLE|KEEP_SIZE 104..108: %s\n", rs(fallocate(f, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 104, 4)));
	char b[17] = { 0 };
	if (pread(f, b, 16, 100) != 16)
		return 91;
	for (int i = 0; i < 16; i++)
		if (!b[i])
			b[i] = '.';
	say("bytes 100..116: \"%s\"\n", b);
	say("PUNCH_HOLE without KEEP_SIZE: %s\n", rs(fallocate(f, FALLOC_FL_PUNCH_HOLE, 0, 4)));
	say("len 0: %s\n", rs(fallocate(f, 0, 0, 0)));
	say("offset -1: %s\n", rs(fallocate(f, 0, -1, 10)));
	say("unknown mode 0x1000: %s\n", rs(fallocate(f, 0x1000, 0, 10)));
	int ro = open("io_splice.fa", O_RDONLY);
	say("on a read-only fd: %s\n", rs(fallocate(ro, 0, 0, 10)));
	int p[2];
	if (pipe(p))
		return 92;
	say("on a pipe: %s\n", rs(fallocate(p[1], 0, 0, 10)));
	say("on a directory: %s\n", rs(fallocate(open(".", O_RDONLY | O_DIRECTORY), 0, 0, 10)));
	say("on fd 999: %s\n", rs(fallocate(999, 0, 0, 10)));
	unlink("io_splice.fa");
	return 0;
}

static int mode_fionread(void)
{
	int p[2], n = -1;
	if (pipe(p))
		return 90;
	long r = ioctl(p[0], FIONREAD, &n);
	say("empty: %s value %d\n", rs(r), n);
	if (write(p[1], "12345", 5) != 5 || write(p[1], "678", 3) != 3)
		return 91;
	r = ioctl(p[0], FIONREAD, &n);
	say("after 5 + 3 bytes, read end: %s value %d\n", rs(r), n);
	r = ioctl(p[1], FIONREAD, &n);
	say("write end: %s value %d\n", rs(r), n);
	char b[4];
	if (read(p[0], b, 4) != 4)
		return 92;
	r = ioctl(p[0], FIONREAD, &n);
	say("after reading 4: %s value %d\n", rs(r), n);
	static char big[70000];
	fcntl(p[1], F_SETFL, O_NONBLOCK);
	while (write(p[1], big, sizeof big) > 0)
		;
	r = ioctl(p[0], FIONREAD, &n);
	say("full: %s value at least 61440 %s\n", rs(r), yesno(n >= 61440));
	say("bad pointer: %s\n", rs(ioctl(p[0], FIONREAD, (int *)8)));
	int f = make_file("io_splice.in", "file data");
	r = ioctl(f, FIONREAD, &n);
	say("regular file of 9 bytes: %s value %d\n", rs(r), n);
	unlink("io_splice.in");
	return 0;
}

static int mode_errors(void)
{
	int f = make_file("io_splice.in", "data"), g = make_file("io_splice.out", "");
	int p[2];
	if (pipe(p))
		return 90;
	loff_t off = 0;
	say("file -> file: %s\n", rs(splice(f, NULL, g, NULL, 4, 0)));
	say("offset given for a pipe: %s\n", rs(splice(p[0], &off, g, NULL, 4, 0)));
	say("file -> pipe, bad offset pointer: %s\n", rs(syscall(SYS_splice, f, 8, p[1], NULL, 4, 0)));
	off = -1;
	say("file -> pipe, offset -1: %s\n", rs(splice(f, &off, p[1], NULL, 4, 0)));
	say("unknown flags: %s\n", rs(splice(f, NULL, p[1], NULL, 4, 0x100)));
	say("from fd 999: %s\n", rs(splice(999, NULL, p[1], NULL, 4, 0)));
	say("into a read end: %s\n", rs(splice(f, NULL, p[0], NULL, 4, 0)));
	say("from a write end: %s\n", rs(splice(p[1], NULL, g, NULL, 4, SPLICE_F_NONBLOCK)));
	int ro = open("io_splice.out", O_RDONLY);
	if (write(p[1], "xy", 2) != 2)
		return 91;
	say("pipe -> a read-only file: %s\n", rs(splice(p[0], NULL, ro, NULL, 2, 0)));
	int ap = open("io_splice.out", O_WRONLY | O_APPEND);
	say("pipe -> an O_APPEND file: %s\n", rs(splice(p[0], NULL, ap, NULL, 2, 0)));
	say("pipe -> the same pipe: %s\n", rs(splice(p[0], NULL, p[1], NULL, 2, SPLICE_F_NONBLOCK)));
	say("tee on files: %s\n", rs(tee(f, g, 4, 0)));
	unlink("io_splice.in");
	unlink("io_splice.out");
	return 0;
}

int main(int argc, char **argv)
{
	static const struct mode modes[] = {
		{ "splice", mode_splice },	 { "tee", mode_tee },	    { "vmsplice", mode_vmsplice },
		{ "pipesz", mode_pipesz },	 { "fallocate", mode_fallocate }, { "fionread", mode_fionread },
		{ "errors", mode_errors },
	};
	return run_mode("io_splice", modes, sizeof modes / sizeof modes[0], argc, argv);
}

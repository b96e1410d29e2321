/* proc_fds: fds across fork. usage: proc_fds dup2|offset|pipe-eof|pipe-big|nonblock FILE
 *   dup2       the parent dup2()s a pipe's write end to fd 10; the child writes through fd 10
 *   offset     a file's offset is shared across fork (child reads/seeks, parent sees it); FD_CLOEXEC is
 *              per-fd and inherited; closing in the child does not close in the parent
 *   pipe-eof   3 children write a line each; EOF comes only when every writer (incl. a slow one) closed
 *   pipe-big   a child streams 4 MiB through a pipe; the parent counts and checksums
 *   nonblock   O_NONBLOCK pipe: EAGAIN when empty with writers, 0 at EOF; a full pipe; EPIPE */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "guest.h"

static int read_all(int fd, char *buf, int cap)
{
	int n = 0, r;
	while (n < cap && (r = read(fd, buf + n, cap - n)) != 0) {
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		n += r;
	}
	buf[n < cap ? n : cap - 1] = 0;
	return n;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "dup2";
	if (!strcmp(mode, "dup2")) {
		int p[2];
		pipe(p);
		say("dup2 = %d\n", dup2(p[1], 10));
		close(p[1]);
		pid_t c = fork();
		if (c == 0) {
			close(p[0]);
			const char m[] = "through fd 10\n";
			int w = write(10, m, sizeof m - 1);
			dup2(10, 1);       /* and stdout too */
			say("through stdout redirected to the pipe\n");
			_exit(w == sizeof m - 1 ? 0 : 1);
		}
		close(10);
		char buf[256];
		int n = read_all(p[0], buf, sizeof buf);
		say("parent read %d bytes:\n%s", n, buf);
		say("child exit %d\n", wait_child(c));
		return 0;
	}
	if (!strcmp(mode, "offset") && argc > 2) {
		int fd = open(argv[2], O_RDONLY);
		int cx = open(argv[2], O_RDONLY | O_CLOEXEC);
		char b[16] = "";
		read(fd, b, 4);
		pid_t c = fork();
		if (c == 0) {
			char cb[8] = "";
			int n = read(fd, cb, 5);
			say("child read %d <%.5s>, child sees FD_CLOEXEC on cx: %s\n", n, cb, yesno(fcntl(cx, F_GETFD) & FD_CLOEXEC));
			lseek(fd, 100, SEEK_CUR);
			fcntl(cx, F_SETFD, 0); /* per-process fd table: the parent's flag is untouched */
			close(cx);
			_exit(0);
		}
		wait_child(c);
		say("parent offset after the child: %ld\n", (long)lseek(fd, 0, SEEK_CUR));
		say("parent's cx still open: %s, FD_CLOEXEC: %s\n", yesno(fcntl(cx, F_GETFD) >= 0),
		    yesno(fcntl(cx, F_GETFD) & FD_CLOEXEC));
		/* O_APPEND-free shared offset the other way */
		lseek(fd, 0, SEEK_SET);
		c = fork();
		if (c == 0) {
			_exit((int)lseek(fd, 0, SEEK_CUR));
		}
		say("child saw the parent's rewind: %s\n", yesno(wait_child(c) == 0));
		/* separate open(): separate offsets */
		int fd2 = open(argv[2], O_RDONLY);
		read(fd2, b, 7);
		say("independent open offset %ld vs %ld\n", (long)lseek(fd, 0, SEEK_CUR), (long)lseek(fd2, 0, SEEK_CUR));
		return 0;
	}
	if (!strcmp(mode, "pipe-eof")) {
		int p[2], go[2];
		pipe(p);
		pipe(go);
		pid_t kids[4];
		for (int i = 0; i < 3; i++) {
			kids[i] = fork();
			if (kids[i] == 0) {
				close(p[0]);
				close(go[0]);
				close(go[1]);
				char m[32];
				int n = snprintf(m, sizeof m, "line from child %d\n", i);
				usleep(i * 20000);
				write(p[1], m, n);
				_exit(i);
			}
		}
		/* a slow writer that writes nothing but holds the write end for 200 ms after the parent starts its
		 * clock (the go pipe's EOF): counted from its own start, the parent's forks and returns on a slow
		 * machine (QEMU's software CPU) could eat into the 200 ms before t0 */
		kids[3] = fork();
		if (kids[3] == 0) {
			close(p[0]);
			close(go[1]);
			char g;
			while (read(go[0], &g, 1) < 0 && errno == EINTR)
				;
			usleep(200000);
			_exit(3);
		}
		close(p[1]);
		close(go[0]);
		char buf[512];
		struct timespec t0, t1;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		close(go[1]);
		int n = read_all(p[0], buf, sizeof buf);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		long ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
		/* the children's lines, in child order: the order they came in is the scheduler's */
		say("read %d bytes until EOF:\n", n);
		for (int i = 0; i < 3; i++) {
			char m[32];
			snprintf(m, sizeof m, "line from child %d\n", i);
			if (strstr(buf, m))
				say("%s", m);
		}
		/* EOF only once the slow writer (200 ms) is gone too */
		say("EOF waited for the slow writer: %s\n", yesno(ms >= 150));
		say("slow writer exit %d\n", wait_child(kids[3]));
		for (int i = 0; i < 3; i++)
			say("child %d exit %d\n", i, wait_child(kids[i]));
		say("another read at EOF = %d\n", (int)read(p[0], buf, 1));
		return 0;
	}
	if (!strcmp(mode, "pipe-big")) {
		int p[2];
		pipe(p);
		pid_t c = fork();
		if (c == 0) {
			close(p[0]);
			static unsigned char blk[65536 + 13];
			uint32_t x = 12345;
			long total = 0;
			while (total < 4 << 20) {
				int len = 1 + (int)(x % sizeof blk);
				if (total + len > 4 << 20)
					len = (4 << 20) - total;
				for (int i = 0; i < len; i++) {
					x = x * 1103515245 + 12345;
					blk[i] = x >> 16;
				}
				int off = 0;
				while (off < len) {
					int w = write(p[1], blk + off, len - off);
					if (w <= 0)
						_exit(1);
					off += w;
				}
				total += len;
			}
			_exit(0);
		}
		close(p[1]);
		static unsigned char rb[100000];
		long total = 0;
		uint64_t h = 1469598103934665603ULL;
		int r;
		while ((r = read(p[0], rb, 1 + total % sizeof rb)) > 0) {
			for (int i = 0; i < r; i++)
				h = (h ^ rb[i]) * 1099511628211ULL;
			total += r;
		}
		say("read %ld bytes, fnv %016llx, child exit %d\n", total, (unsigned long long)h, wait_child(c));
		return 0;
	}
	if (!strcmp(mode, "nonblock")) {
		signal(SIGPIPE, SIG_IGN);
		int p[2];
		pipe2(p, O_NONBLOCK);
		char b[8];
		errno = 0;
		int r = read(p[0], b, sizeof b);
		say("empty pipe, writer open: %d %s\n", r, errno == EAGAIN ? "EAGAIN" : "E?");
		long total = 0;
		static char big[65536];
		while ((r = write(p[1], big, sizeof big)) > 0)
			total += r;
		say("filled the pipe with %ld bytes, then %s\n", total, errno == EAGAIN ? "EAGAIN" : "E?");
		errno = 0;
		r = write(p[1], big, 1);
		say("one more byte: %d %s\n", r, errno == EAGAIN ? "EAGAIN" : "E?");
		pid_t c = fork();
		if (c == 0) {
			/* the child drains 4096 bytes: a PIPE_BUF write can proceed */
			read(p[0], big, 4096);
			_exit(0);
		}
		wait_child(c);
		r = write(p[1], big, 4096);
		say("after the child drained 4096: write(4096) = %d\n", r);
		close(p[1]);
		total = 0;
		while ((r = read(p[0], big, sizeof big)) > 0)
			total += r;
		say("drained %ld bytes, then read = %d (EOF)\n", total, r);
		int q[2];
		pipe(q);
		close(q[0]);
		errno = 0;
		r = write(q[1], "x", 1);
		say("write with no reader: %d %s\n", r, errno == EPIPE ? "EPIPE" : "E?");
		say("F_GETFL has O_NONBLOCK: %s, O_WRONLY on the write end: %s\n", yesno(fcntl(p[0], F_GETFL) & O_NONBLOCK),
		    yesno((fcntl(q[1], F_GETFL) & O_ACCMODE) == O_WRONLY));
		return 0;
	}
	say("unknown mode\n");
	return 2;
}

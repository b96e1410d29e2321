/* sec_stub_passthru: a hostile guest aimed at the seccomp stub's passthrough site (issue 16,
 * sentry/platform/seccomp_passthrough.md), where the stub reads a guest's regular file on its own dup of it.
 * The guest jumps there with registers it chose; it must get nothing read(2) would not give it: other calls
 * and fds outside [800, 928) kill the process (SIGSYS), and a dup is there only while the guest has the file
 * open at that number in the one fd table of its address space. Any line starting with "ESCAPE" is a failure.
 * usage: sec_stub_passthru MODE [FILE]
 *   openat | below | above | wbelow | wabove   the call or fd the filter must refuse (the process dies):
 *            openat, read of fd 799 and 928, write to fd 799 and 928
 *   write    write at the site on the stub's dup of FILE (opened read-only): EBADF, nothing written
 *   pipew    a pipe whose ends were each used 5 times (the stub's): at the site, a write to the read end's
 *            fd and a read of the write end's are EBADF, 100000 bytes written to the write end's fd go in
 *            part (65536, non-blocking) without waiting, 1 byte into the full pipe is EAGAIN
 *   clear    read of fd 800+7 where fd 7 was never open: EBADF
 *   closed   FILE read 5 times (the stub's), closed: its dup is gone (EBADF)
 *   dup2     the same, with another file dup2'd over it: reads that file or EBADF, never FILE
 *   unshare  after unshare(CLONE_FILES): EBADF
 *   vm       in a CLONE_VM child without CLONE_FILES: EBADF
 *   pipe     a pipe read 5 times (the stub's): at the site its empty read end answers EAGAIN at once (the
 *            stub's open of it is non-blocking: no sleep where no signal reaches the thread), pread ESPIPE;
 *            once closed, EBADF
 *   ctl      the control page (its bitmap) is not writable, neither by a store nor by mprotect at a stub site
 *   dup3-sock | dup3-ksock | dup3-pt | dup3-below | dup3-flags   dup3 at the stub's generic site, which allows
 *            only dup3(a received fd, 800 + g, 0): of the stub's sockets (3, 6), of a passthrough fd, onto
 *            fd 799, with O_CLOEXEC: the process dies
 * Natively there is no stub: "no stub", exit 2. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guest.h"
#include "stubgadget.h"

#define PT_SITE (STUB_TEXT + 0x340)	/* include/pvx/stub_layout.h STUB_OFF_SITE_PT */
#define PT_BASE 800
#define STUB_CTL (STUB_BASE + 0x80000)

static uintptr_t site;
static char buf[4096];

static long pt(long nr, long fd, long a1, long a2, long a3)
{
	return stub_call(site, nr, fd, a1, a2, a3, 0, 0);
}

static int open_warm(const char *path)
{
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		exit(3);
	for (int i = 0; i < 5; i++)
		if (read(fd, buf, 64) != 64)
			exit(3);
	long r = pt(SYS_pread64, PT_BASE + fd, (long)buf, 16, 0);
	say("while open: %s\n", r == 16 ? "read" : "not read");
	return fd;
}

static void expect_ebadf(const char *what, int fd)
{
	long r = pt(SYS_pread64, PT_BASE + fd, (long)buf, 16, 0);
	if (r >= 0)
		say("ESCAPE: %s: read %ld bytes of a file not open there\n", what, r);
	else
		say("%s: %s\n", what, r == -EBADF ? "EBADF" : "other error");
}

/* A pipe whose ends were each used 5 times (the stub's from the 4th), and a 10 s alarm against a sleep. */
static void pipe_warm(int p[2])
{
	if (pipe(p) < 0)
		exit(3);
	for (int i = 0; i < 5; i++)
		if (write(p[1], "warm", 4) != 4 || read(p[0], buf, 4) != 4)
			exit(3);
	alarm(10);
}

static char stack[65536] __attribute__((aligned(16)));
static int vm_fd;

static int vm_child(void *arg)
{
	(void)arg;
	close(vm_fd);
	expect_ebadf("CLONE_VM child, fd closed in its own table", vm_fd);
	return 0;
}

int main(int argc, char **argv)
{
	const char *m = argc > 1 ? argv[1] : "", *f = argc > 2 ? argv[2] : "/proc/self/exe";

	probe_init();
	if (!readable(PT_SITE) || memcmp((const void *)PT_SITE, "\x0f\x05\xc3", 3)) {
		say("no stub\n");
		return 2;
	}
	site = PT_SITE;
	int fd = open_warm(f);
	if (!strcmp(m, "write")) {
		long r = pt(SYS_write, PT_BASE + fd, (long)"x", 1, 0);
		if (r >= 0)
			say("ESCAPE: write at the passthrough site to a read-only file returned %ld\n", r);
		else
			say("write to a read-only file: %s\n", r == -EBADF ? "EBADF" : "other error");
	} else if (!strcmp(m, "wbelow") || !strcmp(m, "wabove")) {
		long n = m[1] == 'b' ? PT_BASE - 1 : PT_BASE + 128;
		long r = pt(SYS_write, n, (long)"x", 1, 0);
		say("ESCAPE: write to fd %ld at the passthrough site returned %ld\n", n, r);
	} else if (!strcmp(m, "pipew")) {
		static char big[100000];
		int p[2];
		pipe_warm(p);	/* a site call that sleeps would end at its alarm, killed by SIGALRM */
		long r = pt(SYS_write, PT_BASE + p[1], (long)"x", 0, 0);
		say("write end held: %s\n", r == 0 ? "yes" : "no");
		r = pt(SYS_write, PT_BASE + p[0], (long)"x", 1, 0);
		say("write to the read end: %s\n", r == -EBADF ? "EBADF" : "other");
		r = pt(SYS_read, PT_BASE + p[1], (long)buf, 1, 0);
		say("read of the write end: %s\n", r == -EBADF ? "EBADF" : "other");
		r = pt(SYS_write, PT_BASE + p[1], (long)big, sizeof big, 0);
		say("100000 bytes: %ld\n", r);
		r = pt(SYS_write, PT_BASE + p[1], (long)"x", 1, 0);
		say("1 byte into the full pipe: %s\n", r == -EAGAIN ? "EAGAIN" : "other");
	} else if (!strcmp(m, "openat")) {
		long r = pt(SYS_openat, AT_FDCWD, (long)"/etc/passwd", O_RDONLY, 0);
		say("ESCAPE: openat at the passthrough site returned %ld\n", r);
	} else if (!strcmp(m, "below")) {
		long r = pt(SYS_read, PT_BASE - 1, (long)buf, 16, 0);
		say("ESCAPE: read of fd %d at the passthrough site returned %ld\n", PT_BASE - 1, r);
	} else if (!strcmp(m, "above")) {
		long r = pt(SYS_read, PT_BASE + 128, (long)buf, 16, 0);
		say("ESCAPE: read of fd %d at the passthrough site returned %ld\n", PT_BASE + 128, r);
	} else if (!strcmp(m, "clear")) {
		expect_ebadf("fd 7, never open", 7);
	} else if (!strcmp(m, "closed")) {
		close(fd);
		expect_ebadf("closed", fd);
	} else if (!strcmp(m, "dup2")) {
		char want[16], got[16];
		int other = open("/proc/self/exe", O_RDONLY);
		if (other < 0 || pread(other, want, 16, 0) != 16)
			return 3;
		dup2(other, fd);
		long r = pt(SYS_pread64, PT_BASE + fd, (long)got, 16, 0);
		if (r == 16 && memcmp(got, want, 16))
			say("ESCAPE: after dup2 the site still reads the old file\n");
		else
			say("dup2: %s\n", r == 16 ? "the new file" : r == -EBADF ? "EBADF" : "other error");
	} else if (!strcmp(m, "unshare")) {
		if (unshare(CLONE_FILES))
			return 3;
		close(fd);
		expect_ebadf("after unshare(CLONE_FILES), closed", fd);
	} else if (!strcmp(m, "vm")) {
		int st;
		vm_fd = fd;
		pid_t pid = clone(vm_child, stack + sizeof stack, CLONE_VM | SIGCHLD, NULL);
		if (pid < 0 || waitpid(pid, &st, 0) != pid)
			return 3;
		say("child status %d\n", st);
	} else if (!strcmp(m, "pipe")) {
		int p[2];
		pipe_warm(p);	/* a site read that sleeps would end at its alarm, killed by SIGALRM */
		long r = pt(SYS_read, PT_BASE + p[0], (long)buf, 16, 0);
		say("pipe empty: %s\n", r == -EAGAIN ? "EAGAIN" : r == -EBADF ? "EBADF (not the stub's)" : "other");
		r = pt(SYS_pread64, PT_BASE + p[0], (long)buf, 16, 0);
		say("pipe pread: %s\n", r == -ESPIPE ? "ESPIPE" : "other");
		if (write(p[1], "data", 4) != 4)
			return 3;
		r = pt(SYS_read, PT_BASE + p[0], (long)buf, 16, 0);
		say("pipe with data: %ld\n", r);
		close(p[0]);
		expect_ebadf("pipe closed", p[0]);
	} else if (!strcmp(m, "ctl")) {
		if (sigsetjmp(probe_jb, 1) == 0) {
			probing = 1;
			*(volatile uint64_t *)(STUB_CTL + 72) = ~0UL;	/* pt_bits */
			probing = 0;
			say("ESCAPE: wrote the control page\n");
		} else {
			say("store to the control page: fault\n");
		}
		struct stub_gadgets g;
		find_gadgets(&g);
		uintptr_t gd = gadget_nonzero(&g);
		if (!gd)
			return 3;
		long r = stub_call(gd, SYS_mprotect, STUB_CTL, PG, PROT_READ | PROT_WRITE, 0, 0, 0);
		say("ESCAPE: mprotect of the control page at a stub site returned %ld\n", r);
	} else if (!strncmp(m, "dup3-", 5)) {
		struct stub_gadgets g;
		find_gadgets(&g);
		uintptr_t gd = gadget_nonzero(&g);
		if (!gd)
			return 3;
		long from = PT_BASE + fd, to = PT_BASE + 100, flags = 0;
		if (!strcmp(m, "dup3-sock"))
			from = 3;
		else if (!strcmp(m, "dup3-ksock"))
			from = 6;
		else if (!strcmp(m, "dup3-below"))
			from = 3, to = PT_BASE - 1;
		else if (!strcmp(m, "dup3-flags"))
			from = 3, flags = O_CLOEXEC;
		else if (strcmp(m, "dup3-pt"))
			return 2;
		long r = stub_call(gd, SYS_dup3, from, to, flags, 0, 0, 0);
		say("ESCAPE: dup3(%ld, %ld, %ld) at a stub site returned %ld\n", from, to, flags, r);
	} else {
		return 2;
	}
	return 0;
}

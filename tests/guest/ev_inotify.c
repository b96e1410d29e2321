/* ev_inotify: inotify_init/init1/add_watch/rm_watch on a directory made in the current one (run with --rw).
 * usage: ev_inotify events|moves|self|nonblock|errors
 *   events    create, open, modify, close_write, attrib, delete, mkdir/rmdir (IN_ISDIR) in a watched
 *             directory, each with its name; rm_watch gives IN_IGNORED; FIONREAD counts the bytes queued
 *   moves     rename inside a directory and between two watched ones: IN_MOVED_FROM/TO with the names and
 *             one nonzero cookie shared by the pair, a different cookie for the next rename
 *   self      a watch on a file: IN_MODIFY, IN_ATTRIB, IN_DELETE_SELF then IN_IGNORED; IN_ONESHOT; the same
 *             path twice gives the same wd; IN_MASK_ADD
 *   nonblock  IN_NONBLOCK EAGAIN, IN_CLOEXEC, poll and epoll readiness, a blocking read woken by a child
 *   errors    ENOENT, EINVAL (mask 0, bad flags, bad wd, a buffer too small), ENOTDIR (IN_ONLYDIR),
 *             EBADF, EFAULT on a bad path
 * Prints what happened; the caller compares with the native run. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdint.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "evnet.h"

#define D "ev_inotify.d"
#define D2 "ev_inotify.e"

/* remove what a previous run (maybe natively as root) left */
static void clean(void)
{
	static const char *files[] = { D "/a", D "/b", D "/c", D "/moved", D2 "/b", D2 "/a", D "/f", "ev_inotify.f", "ev_inotify.h", "ev_inotify.l" };
	for (unsigned i = 0; i < sizeof files / sizeof files[0]; i++)
		unlink(files[i]);
	rmdir(D "/sub");
	rmdir(D);
	rmdir(D2);
}

static const char *mask_names(uint32_t m)
{
	static char b[256];
	static const struct {
		uint32_t bit;
		const char *name;
	} n[] = {
		{ IN_ACCESS, "ACCESS" },	   { IN_MODIFY, "MODIFY" },	{ IN_ATTRIB, "ATTRIB" },
		{ IN_CLOSE_WRITE, "CLOSE_WRITE" }, { IN_CLOSE_NOWRITE, "CLOSE_NOWRITE" }, { IN_OPEN, "OPEN" },
		{ IN_MOVED_FROM, "MOVED_FROM" },   { IN_MOVED_TO, "MOVED_TO" }, { IN_CREATE, "CREATE" },
		{ IN_DELETE, "DELETE" },	   { IN_DELETE_SELF, "DELETE_SELF" }, { IN_MOVE_SELF, "MOVE_SELF" },
		{ IN_UNMOUNT, "UNMOUNT" },	   { IN_Q_OVERFLOW, "Q_OVERFLOW" }, { IN_IGNORED, "IGNORED" },
		{ IN_ISDIR, "ISDIR" },
	};
	b[0] = 0;
	for (unsigned i = 0; i < sizeof n / sizeof n[0]; i++)
		if (m & n[i].bit) {
			strcat(b, b[0] ? "|" : "");
			strcat(b, n[i].name);
		}
	return b[0] ? b : "0";
}

static uint32_t cookies[16];
static int ncookies;

/* read and print every queued event; wds printed as names given in wdname() order; cookies as c1, c2... */
static void drain(int fd, const int *wds, const char *const *names, int nw)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	int fl = fcntl(fd, F_GETFL);
	fcntl(fd, F_SETFL, fl | O_NONBLOCK);
	for (;;) {
		long n = read(fd, buf, sizeof buf);
		if (n <= 0)
			break;
		for (char *p = buf; p < buf + n;) {
			struct inotify_event *e = (struct inotify_event *)p;
			const char *w = "?";
			for (int i = 0; i < nw; i++)
				if (wds[i] == e->wd)
					w = names[i];
			char c[16] = "0";
			if (e->cookie) {
				int i;
				for (i = 0; i < ncookies && cookies[i] != e->cookie; i++)
					;
				if (i == ncookies && ncookies < 16)
					cookies[ncookies++] = e->cookie;
				snprintf(c, sizeof c, "c%d", i + 1);
			}
			say("  %s %s \"%s\" cookie %s len %s\n", w, mask_names(e->mask), e->len ? e->name : "",
			    c, e->len % 16 == 0 ? "padded to 16" : "odd");
			p += sizeof *e + e->len;
		}
	}
	fcntl(fd, F_SETFL, fl);
}

static int mode_events(void)
{
	clean();
	mkdir(D, 0777);
	int fd = inotify_init();
	say("inotify_init: %s\n", fd >= 0 ? "ok" : rs(fd));
	int wd = inotify_add_watch(fd, D, IN_ALL_EVENTS);
	say("add_watch: %s\n", wd >= 1 ? "a positive wd" : rs(wd));
	const char *names[] = { "dir" };
	int f = open(D "/a", O_CREAT | O_WRONLY, 0644);
	int n = -1;
	long r = ioctl(fd, FIONREAD, &n);
	say("FIONREAD after a create: %s, bytes %s\n", rs(r), n > 0 && n % 16 == 0 ? "a multiple of 16" : "unexpected");
	if (write(f, "data", 4) != 4)
		return 90;
	close(f);
	say("create, write, close:\n");
	drain(fd, &wd, names, 1);
	chmod(D "/a", 0600);
	f = open(D "/a", O_RDONLY);
	char c[8];
	if (read(f, c, sizeof c) != 4)
		return 91;
	close(f);
	say("chmod, open for reading, read, close:\n");
	drain(fd, &wd, names, 1);
	unlink(D "/a");
	mkdir(D "/sub", 0777);
	rmdir(D "/sub");
	say("unlink, mkdir, rmdir:\n");
	drain(fd, &wd, names, 1);
	say("rm_watch: %s\n", rs(inotify_rm_watch(fd, wd)));
	drain(fd, &wd, names, 1);
	say("rm_watch again: %s\n", rs(inotify_rm_watch(fd, wd)));
	close(open(D "/b", O_CREAT | O_WRONLY, 0644));
	say("after rm_watch, a create:\n");
	drain(fd, &wd, names, 1);
	int w2 = inotify_add_watch(fd, D, IN_CREATE | IN_DELETE);
	say("a new watch gets a new wd: %s\n", yesno(w2 > wd));
	unlink(D "/b");
	close(open(D "/c", O_CREAT | O_WRONLY, 0644));
	say("only CREATE and DELETE:\n");
	drain(fd, &w2, names, 1);
	clean();
	return 0;
}

static int mode_moves(void)
{
	clean();
	mkdir(D, 0777);
	mkdir(D2, 0777);
	int fd = inotify_init1(0);
	int wds[2] = { inotify_add_watch(fd, D, IN_MOVE | IN_CREATE | IN_DELETE | IN_MOVE_SELF),
		       inotify_add_watch(fd, D2, IN_MOVE | IN_CREATE | IN_DELETE) };
	const char *names[] = { "dir1", "dir2" };
	say("two watches, different wds: %s\n", yesno(wds[0] > 0 && wds[1] > 0 && wds[0] != wds[1]));
	close(open(D "/a", O_CREAT | O_WRONLY, 0644));
	rename(D "/a", D "/moved");
	say("create a, rename a -> moved:\n");
	drain(fd, wds, names, 2);
	rename(D "/moved", D2 "/b");
	say("rename moved -> the other directory's b:\n");
	drain(fd, wds, names, 2);
	close(open(D "/a", O_CREAT | O_WRONLY, 0644));
	rename(D2 "/b", D "/a");
	say("rename b back over an existing a:\n");
	drain(fd, wds, names, 2);
	rename(D "/a", "ev_inotify.f");
	say("rename out of the watched directories:\n");
	drain(fd, wds, names, 2);
	rename("ev_inotify.f", D2 "/a");
	say("rename in from outside:\n");
	drain(fd, wds, names, 2);
	say("cookies seen: %d, all nonzero and distinct per pair: yes\n", ncookies);
	clean();
	return 0;
}

static int mode_self(void)
{
	clean();
	close(open("ev_inotify.f", O_CREAT | O_WRONLY, 0644));
	int fd = inotify_init1(IN_NONBLOCK);
	int wd = inotify_add_watch(fd, "ev_inotify.f", IN_MODIFY | IN_ATTRIB | IN_DELETE_SELF);
	const char *names[] = { "file" };
	say("watch a file: %s\n", wd > 0 ? "ok" : rs(wd));
	int again = inotify_add_watch(fd, "ev_inotify.f", IN_MODIFY);
	say("the same path again: the same wd %s\n", yesno(again == wd));
	int hl = link("ev_inotify.f", "ev_inotify.h") == 0;
	int viahl = inotify_add_watch(fd, "ev_inotify.h", IN_MODIFY | IN_MASK_ADD);
	say("a hard link to it: the same wd %s (linked %s)\n", yesno(viahl == wd), yesno(hl));
	unlink("ev_inotify.h");
	int f = open("ev_inotify.f", O_WRONLY);
	if (write(f, "x", 1) != 1)
		return 90;
	close(f);
	chmod("ev_inotify.f", 0600);
	say("write and chmod (the mask is MODIFY only, then MODIFY|... by IN_MASK_ADD):\n");
	drain(fd, &wd, names, 1);
	inotify_add_watch(fd, "ev_inotify.f", IN_ATTRIB | IN_DELETE_SELF | IN_MASK_ADD);
	chmod("ev_inotify.f", 0644);
	unlink("ev_inotify.f");
	say("chmod, unlink:\n");
	drain(fd, &wd, names, 1);
	say("rm_watch after IN_IGNORED: %s\n", rs(inotify_rm_watch(fd, wd)));
	close(open("ev_inotify.f", O_CREAT | O_WRONLY, 0644));
	int os = inotify_add_watch(fd, "ev_inotify.f", IN_ATTRIB | IN_ONESHOT);
	chmod("ev_inotify.f", 0600);
	chmod("ev_inotify.f", 0644);
	say("IN_ONESHOT, two chmods:\n");
	drain(fd, &os, names, 1);
	say("IN_MASK_ADD|IN_MASK_CREATE: %s\n", rs(inotify_add_watch(fd, "ev_inotify.f", IN_ATTRIB | IN_MASK_ADD | IN_MASK_CREATE)));
	int mc = inotify_add_watch(fd, "ev_inotify.f", IN_ATTRIB);
	say("IN_MASK_CREATE on a watched path: %s\n", rs(inotify_add_watch(fd, "ev_inotify.f", IN_ATTRIB | IN_MASK_CREATE)));
	(void)mc;
	unlink("ev_inotify.f");
	return 0;
}

static int mode_nonblock(void)
{
	clean();
	mkdir(D, 0777);
	int fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	say("IN_NONBLOCK: %s, IN_CLOEXEC: %s\n", yesno(fcntl(fd, F_GETFL) & O_NONBLOCK), yesno(fcntl(fd, F_GETFD) & FD_CLOEXEC));
	int wd = inotify_add_watch(fd, D, IN_CREATE);
	char buf[512];
	say("read, nothing queued: %s\n", rs(read(fd, buf, sizeof buf)));
	struct pollfd p = { fd, POLLIN, 0 };
	say("poll, nothing queued: %s\n", rs(poll(&p, 1, 0)));
	int ep = epoll_create1(0);
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = 5 };
	epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
	close(open(D "/a", O_CREAT | O_WRONLY, 0644));
	say("poll after a create: %s\n", rs(poll(&p, 1, 0)));
	say("epoll after a create: %s\n", rs(epoll_wait(ep, &ev, 1, 0)));
	say("read: %s\n", rs(read(fd, buf, sizeof buf) > 0 ? 0 : -1));
	int b = inotify_init();
	inotify_add_watch(b, D, IN_DELETE);
	pid_t k = fork();
	if (k == 0) {
		usleep(100000);
		unlink(D "/a");
		_exit(0);
	}
	long r = read(b, buf, sizeof buf);
	struct inotify_event *e = (struct inotify_event *)buf;
	say("blocking read woken by a child's unlink: %s, DELETE %s, name \"%s\"\n", r > 0 ? "ok" : rs(r),
	    yesno(r > 0 && (e->mask & IN_DELETE)), r > 0 ? e->name : "");
	say("child: exit %d\n", wait_child(k));
	(void)wd;
	clean();
	return 0;
}

static int mode_errors(void)
{
	clean();
	mkdir(D, 0777);
	close(open("ev_inotify.f", O_CREAT | O_WRONLY, 0644));
	int fd = inotify_init1(IN_NONBLOCK);
	say("init1 bad flags: %s\n", rs(inotify_init1(0x1)));
	say("add_watch a missing path: %s\n", rs(inotify_add_watch(fd, "ev_inotify.missing", IN_ALL_EVENTS)));
	say("add_watch mask 0: %s\n", rs(inotify_add_watch(fd, D, 0)));
	say("add_watch only unknown bits: %s\n", rs(inotify_add_watch(fd, D, 0x00100000)));
	say("add_watch IN_ONLYDIR on a file: %s\n", rs(inotify_add_watch(fd, "ev_inotify.f", IN_ONLYDIR | IN_MODIFY)));
	say("add_watch bad path pointer: %s\n", rs(syscall(SYS_inotify_add_watch, fd, 8, IN_MODIFY)));
	say("add_watch on a pipe fd: %s\n", rs(inotify_add_watch(1, D, IN_MODIFY)));
	say("add_watch on fd 999: %s\n", rs(inotify_add_watch(999, D, IN_MODIFY)));
	say("rm_watch wd 12345: %s\n", rs(inotify_rm_watch(fd, 12345)));
	say("rm_watch wd -1: %s\n", rs(inotify_rm_watch(fd, -1)));
	int wd = inotify_add_watch(fd, D, IN_CREATE);
	close(open(D "/a", O_CREAT | O_WRONLY, 0644));
	char buf[64];
	say("read 8 bytes, an event of 32 queued: %s\n", rs(read(fd, buf, 8)));
	say("read into a bad buffer: %s\n", rs(syscall(SYS_read, fd, 8, 64)));
	say("write: %s\n", rs(write(fd, buf, 8)));
	say("lseek: %s\n", rs(lseek(fd, 0, SEEK_SET)));
	(void)wd;
	say("add_watch IN_DONT_FOLLOW on a symlink: ");
	unlink("ev_inotify.l");
	symlink("ev_inotify.missing", "ev_inotify.l");
	say("%s\n", rs(inotify_add_watch(fd, "ev_inotify.l", IN_ATTRIB | IN_DONT_FOLLOW) > 0 ? 0 : -1));
	say("and following it: %s\n", rs(inotify_add_watch(fd, "ev_inotify.l", IN_ATTRIB)));
	unlink("ev_inotify.l");
	clean();
	return 0;
}

int main(int argc, char **argv)
{
	static const struct mode modes[] = {
		{ "events", mode_events }, { "moves", mode_moves },   { "self", mode_self },
		{ "nonblock", mode_nonblock }, { "errors", mode_errors },
	};
	return run_mode("ev_inotify", modes, sizeof modes / sizeof modes[0], argc, argv);
}

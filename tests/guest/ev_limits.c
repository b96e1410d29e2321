/*
 * The sandbox's share of the host user's epoll and inotify budgets (issue 13; sentry/fs/epoll.c, inotify.c).
 *   epoll    register eventfds in epolls until ENOSPC (at most 100 epolls x 900 eventfds); print how many
 *            went, then that a DEL frees one and a closed epoll frees all of its own
 *   inotify  make inotify instances until EMFILE (at most 200); then, in the current directory (--rw),
 *            watch new files until ENOSPC (at most 10000); print the counts, then that rm_watch, a
 *            deleted file's IN_IGNORED read and a closed instance each give watches back
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/resource.h>
#include <unistd.h>

#include "evnet.h"

#define NEP 100
#define NEV 900

static int mode_epoll(void)
{
	static int ep[NEP], ev[NEV];
	struct rlimit rl = { 1024, 1024 };
	setrlimit(RLIMIT_NOFILE, &rl);
	for (int i = 0; i < NEP; i++)
		ep[i] = epoll_create1(0);
	for (int i = 0; i < NEV; i++)
		ev[i] = eventfd(0, 0);
	if (ep[NEP - 1] < 0 || ev[NEV - 1] < 0) {
		say("setup: %s\n", rs(-1));
		return 1;
	}
	long n = 0, r = 0;
	int ei = 0, vi = 0;
	struct epoll_event e = { .events = EPOLLIN };
	for (ei = 0; ei < NEP && r == 0; ei++)
		for (vi = 0; vi < NEV && (r = epoll_ctl(ep[ei], EPOLL_CTL_ADD, ev[vi], &e)) == 0; vi++)
			n++;
	say("registrations: %ld, then %s\n", n, r ? rs(r) : "no error");
	if (!r)
		return 0;
	ei--;
	/* the one refused stays refused; a DEL makes room for it */
	say("again: %s\n", rs(epoll_ctl(ep[ei], EPOLL_CTL_ADD, ev[vi], &e)));
	say("DEL one: %s\n", rs(epoll_ctl(ep[0], EPOLL_CTL_DEL, ev[0], NULL)));
	say("then ADD: %s\n", rs(epoll_ctl(ep[ei], EPOLL_CTL_ADD, ev[vi], &e)));
	say("and one more: %s\n", rs(epoll_ctl(ep[ei], EPOLL_CTL_ADD, ev[vi + 1], &e)));
	/* closing an epoll gives back all of its registrations; closing a registered fd gives back its own */
	close(ep[1]);
	long m = 0;
	for (int i = vi + 1; i < NEV && epoll_ctl(ep[ei], EPOLL_CTL_ADD, ev[i], &e) == 0; i++)
		m++;
	say("after closing an epoll, every fd left went: %s\n", m == NEV - vi - 1 ? "yes" : "no");
	return 0;
}

static int mode_inotify(void)
{
	static int in[200];
	int n = 0;
	long r;
	while (n < 200 && (r = in[n] = inotify_init1(0)) >= 0)
		n++;
	say("instances: %d, then %s\n", n, n < 200 ? rs(r) : "no error");
	for (int i = 1; i < n; i++)
		close(in[i]);
	int fd = in[0], w = 0;
	char name[32];
	for (w = 0; w < 10000; w++) {
		snprintf(name, sizeof name, "f%d", w);
		int c = open(name, O_CREAT | O_WRONLY, 0644);
		if (c < 0) {
			say("create %s: %s\n", name, rs(c));
			return 1;
		}
		close(c);
		if ((r = inotify_add_watch(fd, name, IN_ALL_EVENTS)) < 0)
			break;
	}
	say("watches: %d, then %s\n", w, w < 10000 ? rs(r) : "no error");
	if (w == 10000)
		return 0;
	say("a path already watched: %s\n", inotify_add_watch(fd, "f0", IN_MODIFY) > 0 ? "its wd" : rs(-1));
	/* rm_watch gives one back */
	say("rm_watch f1: %s\n", rs(inotify_rm_watch(fd, 2)));
	snprintf(name, sizeof name, "f%d", w);
	say("then %s: %s\n", name, inotify_add_watch(fd, name, IN_ALL_EVENTS) > 0 ? "a wd" : rs(-1));
	/* a watched file deleted: its IN_IGNORED, once read, gives one back */
	unlink("f5");
	static char buf[1 << 16];
	int ignored = 0;
	for (int tries = 0; tries < 10 && !ignored; tries++) {
		long got = read(fd, buf, sizeof buf);
		for (long at = 0; got > 0 && at < got;) {
			struct inotify_event *e = (struct inotify_event *)(buf + at);
			if (e->mask & IN_IGNORED)
				ignored = 1;
			at += (long)sizeof(*e) + e->len;
		}
	}
	say("IN_IGNORED read: %s\n", ignored ? "yes" : "no");
	snprintf(name, sizeof name, "f%d", w + 1);
	int c = open(name, O_CREAT | O_WRONLY, 0644);
	close(c);
	say("then %s: %s\n", name, inotify_add_watch(fd, name, IN_ALL_EVENTS) > 0 ? "a wd" : rs(-1));
	snprintf(name, sizeof name, "f%d", w + 2);
	c = open(name, O_CREAT | O_WRONLY, 0644);
	close(c);
	say("and %s: %s\n", name, rs(inotify_add_watch(fd, name, IN_ALL_EVENTS)));
	/* a closed instance gives back all of its watches */
	close(fd);
	fd = inotify_init1(0);
	say("after close, %s: %s\n", name, inotify_add_watch(fd, name, IN_ALL_EVENTS) > 0 ? "a wd" : rs(-1));
	return 0;
}

static const struct mode modes[] = {
	{ "epoll", mode_epoll },
	{ "inotify", mode_inotify },
};

int main(int argc, char **argv)
{
	return run_mode("ev_limits", modes, sizeof(modes) / sizeof(modes[0]), argc, argv);
}

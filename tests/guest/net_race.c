/*
 * Files closed by another thread while a call waits on them (issue 13): Linux keeps the open file for the
 * call that is using it, so the wait goes on and ends as it would have; the fd number is free at once.
 *   recv     a thread blocks in recv on a socketpair end; the main thread closes that fd, reuses the number
 *            for a pipe, then the peer sends: the recv gets the data
 *   accept   the same with accept on a listening AF_UNIX socket and a connect after the close
 *   epoll    the same with epoll_wait on an epoll whose fd is closed, then the registered pipe written
 *   read     the same with read on a pipe, then the writer writes
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "evnet.h"

static int fd_used;
static volatile int waiter_tid;
static long result;
static char got[16];

static void *t_recv(void *a)
{
	(void)a;
	waiter_tid = (int)gettid();
	result = recv(fd_used, got, sizeof got - 1, 0);
	return NULL;
}

static void *t_read(void *a)
{
	(void)a;
	waiter_tid = (int)gettid();
	result = read(fd_used, got, sizeof got - 1);
	return NULL;
}

static void *t_accept(void *a)
{
	(void)a;
	waiter_tid = (int)gettid();
	result = accept(fd_used, NULL, NULL);
	return NULL;
}

static void *t_epoll(void *a)
{
	(void)a;
	waiter_tid = (int)gettid();
	struct epoll_event e;
	result = epoll_wait(fd_used, &e, 1, 60000);
	if (result > 0)
		snprintf(got, sizeof got, "%lu", (unsigned long)e.data.u64);
	return NULL;
}

/* Wait (at most ms) until the waiting thread sleeps in its call; then a little more. */
static void sleeping(int ms)
{
	for (int i = 0; i < ms / 10 && !(waiter_tid && asleep(waiter_tid)); i++)
		usleep(10000);
	usleep(20000);
}

/* Start fn on fd, let it block, close fd and take its number for a pipe; then go(); join; print. */
static void race(const char *what, int fd, void *(*fn)(void *), void (*go)(void))
{
	pthread_t th;
	fd_used = fd;
	waiter_tid = 0;
	pthread_create(&th, NULL, fn, NULL);
	sleeping(10000);
	say("%s: close %s", what, rs(close(fd)));
	int p[2];
	pipe(p);
	say(", the number reused: %s\n", p[0] == fd || p[1] == fd ? "yes" : "no");
	go();
	pthread_join(th, NULL);
	say("%s: the waiting call returned %s%s%s\n", what, result >= 0 ? "a result" : rs(result), got[0] ? ", " : "",
	    got);
	memset(got, 0, sizeof got);
}

static int peer = -1;
static void send_peer(void)
{
	send(peer, "data", 4, 0);
}

static int mode_recv(void)
{
	int sv[2];
	socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
	peer = sv[1];
	race("recv", sv[0], t_recv, send_peer);
	return 0;
}

static void write_peer(void)
{
	write(peer, "pipe", 4);
}

static int mode_read(void)
{
	int p[2];
	pipe(p);
	peer = p[1];
	race("read", p[0], t_read, write_peer);
	return 0;
}

static struct sockaddr_un addr = { .sun_family = AF_UNIX };
static void connect_peer(void)
{
	int c = socket(AF_UNIX, SOCK_STREAM, 0);
	say("connect: %s\n", rs(connect(c, (struct sockaddr *)&addr, sizeof addr)));
}

static int mode_accept(void)
{
	int l = socket(AF_UNIX, SOCK_STREAM, 0);
	snprintf(addr.sun_path, sizeof addr.sun_path, "race.sock");
	unlink(addr.sun_path);
	if (bind(l, (struct sockaddr *)&addr, sizeof addr) < 0 || listen(l, 4) < 0) {
		say("bind/listen: %s\n", rs(-1));
		return 1;
	}
	race("accept", l, t_accept, connect_peer);
	unlink(addr.sun_path);
	return 0;
}

static int mode_epoll(void)
{
	int ep = epoll_create1(0), p[2];
	pipe(p);
	struct epoll_event e = { .events = EPOLLIN, .data.u64 = 77 };
	epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &e);
	peer = p[1];
	race("epoll_wait", ep, t_epoll, write_peer);
	return 0;
}

static const struct mode modes[] = {
	{ "recv", mode_recv },
	{ "read", mode_read },
	{ "accept", mode_accept },
	{ "epoll", mode_epoll },
};

int main(int argc, char **argv)
{
	return run_mode("net_race", modes, sizeof(modes) / sizeof(modes[0]), argc, argv);
}

// SPDX-License-Identifier: GPL-2.0
/*
 * Linux AIO by raw syscalls (no libaio), natively and in the sandbox:
 * io_setup's checks, reads and writes (plain and vectored) on a file in
 * the cwd, fsync, eventfd notification, a pipe with RWF_NOWAIT, the events'
 * fields, io_getevents' ranges, timeouts and signals, io_pgetevents' mask,
 * and hostile input: forged contexts, bad iocb arrays and buffers, huge nr,
 * io_destroy while a thread waits. Output never shows addresses.
 *   aio basic | notify | hostile | wait | ring | busy
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>

#include "guest.h"

/* linux/aio_abi.h (musl has no kernel headers). */
typedef unsigned long aio_context_t;
enum { IOCB_CMD_PREAD = 0, IOCB_CMD_PWRITE = 1, IOCB_CMD_FSYNC = 2, IOCB_CMD_FDSYNC = 3, IOCB_CMD_POLL = 5,
       IOCB_CMD_NOOP = 6, IOCB_CMD_PREADV = 7, IOCB_CMD_PWRITEV = 8 };
#define IOCB_FLAG_RESFD 1
#ifndef RWF_NOWAIT
#define RWF_NOWAIT 0x8
#endif
struct io_event {
	uint64_t data, obj;
	int64_t res, res2;
};
struct iocb {
	uint64_t aio_data;
	uint32_t aio_key;
	int aio_rw_flags;
	uint16_t aio_lio_opcode;
	int16_t aio_reqprio;
	uint32_t aio_fildes;
	uint64_t aio_buf, aio_nbytes;
	int64_t aio_offset;
	uint64_t aio_reserved2;
	uint32_t aio_flags, aio_resfd;
};
_Static_assert(sizeof(struct iocb) == 64, "struct iocb");

static long io_setup(unsigned nr, aio_context_t *c) { return syscall(SYS_io_setup, nr, c); }
static long io_destroy(aio_context_t c) { return syscall(SYS_io_destroy, c); }
static long io_submit(aio_context_t c, long nr, struct iocb **cbs) { return syscall(SYS_io_submit, c, nr, cbs); }
static long io_cancel(aio_context_t c, struct iocb *cb, struct io_event *r) { return syscall(SYS_io_cancel, c, cb, r); }
static long io_getevents(aio_context_t c, long min, long nr, struct io_event *ev, struct timespec *to)
{
	return syscall(SYS_io_getevents, c, min, nr, ev, to);
}

/* "what: N" or "what: ERRNO". */
static void show(const char *what, long r)
{
	if (r < 0)
		say("%s: %s\n", what, errname(errno));
	else
		say("%s: %ld\n", what, r);
}

static void prep(struct iocb *cb, int op, int fd, void *buf, size_t n, long long off)
{
	memset(cb, 0, sizeof(*cb));
	cb->aio_lio_opcode = (uint16_t)op;
	cb->aio_fildes = (uint32_t)fd;
	cb->aio_buf = (uint64_t)(uintptr_t)buf;
	cb->aio_nbytes = n;
	cb->aio_offset = off;
}

static long submit1(aio_context_t c, struct iocb *cb)
{
	struct iocb *cbs[1] = { cb };
	return io_submit(c, 1, cbs);
}

/* Reap one event (1 s at most) and print its result and whether data and obj are the iocb's. */
static void reap(aio_context_t c, const char *what, struct iocb *cb)
{
	struct io_event ev = { 0 };
	struct timespec to = { 1, 0 };
	long n = io_getevents(c, 1, 1, &ev, &to);

	if (n != 1) {
		show(what, n);
		return;
	}
	if (ev.res < 0)
		say("%s: res %s data %s obj %s\n", what, errname((int)-ev.res), yesno(ev.data == cb->aio_data),
		    yesno(ev.obj == (uint64_t)(uintptr_t)cb));
	else
		say("%s: res %lld data %s obj %s\n", what, (long long)ev.res, yesno(ev.data == cb->aio_data),
		    yesno(ev.obj == (uint64_t)(uintptr_t)cb));
}

static int scratch(void)
{
	int fd = open("aio.tmp", O_RDWR | O_CREAT | O_TRUNC, 0600);

	if (fd < 0) {
		say("open: %s\n", errname(errno));
		_exit(1);
	}
	unlink("aio.tmp");
	return fd;
}

static void basic(void)
{
	aio_context_t c = 1;
	struct timespec zero = { 0, 0 };
	struct io_event evs[4];
	struct iocb cb;
	char buf[64] = "";

	show("setup ctx not 0", io_setup(4, &c));
	c = 0;
	show("setup nr 0", io_setup(0, &c));
	show("setup nr -1", io_setup(-1U, &c));
	show("setup NULL", io_setup(4, NULL));
	show("setup over aio-max-nr", io_setup(65537, &c));
	show("setup", io_setup(4, &c));
	say("ctx page aligned: %s\n", yesno(c && !(c & 4095)));
	int fd = scratch();
	prep(&cb, IOCB_CMD_PWRITE, fd, "hello, aio world", 16, 0);
	cb.aio_data = 0x1234;
	show("submit pwrite", submit1(c, &cb));
	say("aio_key %u\n", cb.aio_key);
	reap(c, "pwrite", &cb);
	prep(&cb, IOCB_CMD_PREAD, fd, buf, 9, 7);
	cb.aio_data = 77;
	show("submit pread", submit1(c, &cb));
	reap(c, "pread", &cb);
	say("read '%s'\n", buf);
	struct iovec wv[2] = { { "AB", 2 }, { "CDE", 3 } }, rv[2] = { { buf, 3 }, { buf + 10, 2 } };
	prep(&cb, IOCB_CMD_PWRITEV, fd, wv, 2, 20);
	show("submit pwritev", submit1(c, &cb));
	reap(c, "pwritev", &cb);
	memset(buf, 0, sizeof(buf));
	prep(&cb, IOCB_CMD_PREADV, fd, rv, 2, 20);
	show("submit preadv", submit1(c, &cb));
	reap(c, "preadv", &cb);
	say("readv '%.3s' '%.2s'\n", buf, buf + 10);
	prep(&cb, IOCB_CMD_PREAD, fd, buf, 10, 1000);
	submit1(c, &cb);
	reap(c, "pread past end", &cb);
	prep(&cb, IOCB_CMD_FSYNC, fd, NULL, 0, 0);
	show("submit fsync", submit1(c, &cb));
	reap(c, "fsync", &cb);
	prep(&cb, IOCB_CMD_FDSYNC, fd, NULL, 0, 0);
	show("submit fdatasync", submit1(c, &cb));
	reap(c, "fdatasync", &cb);
	prep(&cb, IOCB_CMD_FSYNC, fd, buf, 1, 0);
	show("fsync with a buffer", submit1(c, &cb));
	int p[2];
	if (pipe(p) < 0)
		_exit(1);
	prep(&cb, IOCB_CMD_FSYNC, p[0], NULL, 0, 0);
	show("fsync of a pipe", submit1(c, &cb));
	prep(&cb, 99, fd, buf, 1, 0);
	show("bad opcode", submit1(c, &cb));
	prep(&cb, IOCB_CMD_PREAD, fd, buf, 1, -1);
	show("negative offset", submit1(c, &cb));
	prep(&cb, IOCB_CMD_PREAD, fd, buf, 1, 0);
	cb.aio_rw_flags = 0x80000000;
	show("unknown rw flag", submit1(c, &cb));
	prep(&cb, IOCB_CMD_PREAD, 99, buf, 1, 0);
	show("bad fd", submit1(c, &cb));
	int ro = open("/dev/null", O_RDONLY);
	prep(&cb, IOCB_CMD_PWRITE, ro, buf, 1, 0);
	show("write to read-only fd", submit1(c, &cb));
	/* A pipe: its offset means nothing; RWF_NOWAIT on an empty one completes with EAGAIN. */
	if (write(p[1], "piped", 5) != 5)
		_exit(1);
	memset(buf, 0, sizeof(buf));
	prep(&cb, IOCB_CMD_PREAD, p[0], buf, sizeof(buf), 12345);
	show("submit pipe read", submit1(c, &cb));
	reap(c, "pipe read", &cb);
	say("pipe '%s'\n", buf);
	prep(&cb, IOCB_CMD_PREAD, p[0], buf, sizeof(buf), 0);
	cb.aio_rw_flags = RWF_NOWAIT;
	show("submit nowait", submit1(c, &cb));
	reap(c, "nowait", &cb);
	/* Ranges and timeouts of io_getevents. */
	show("getevents none ready, zero timeout", io_getevents(c, 1, 4, evs, &zero));
	show("getevents min > nr", io_getevents(c, 2, 1, evs, &zero));
	show("getevents min -1", io_getevents(c, -1, 1, evs, &zero));
	show("getevents 0 0", io_getevents(c, 0, 0, NULL, NULL));
	struct timespec shortwait = { 0, 20 * 1000 * 1000 };
	show("getevents times out", io_getevents(c, 1, 4, evs, &shortwait));
	/* Several at once, reaped in order. */
	struct iocb many[3], *mp[3] = { &many[0], &many[1], &many[2] };
	for (int i = 0; i < 3; i++) {
		prep(&many[i], IOCB_CMD_PWRITE, fd, "x", 1, 100 + i);
		many[i].aio_data = (uint64_t)i + 10;
	}
	show("submit 3", io_submit(c, 3, mp));
	long n = io_getevents(c, 3, 4, evs, &zero);
	show("getevents 3", n);
	for (long i = 0; i < n; i++)
		say("event %ld data %llu res %lld\n", i, (unsigned long long)evs[i].data, (long long)evs[i].res);
	show("cancel a completed request", io_cancel(c, &many[0], evs));
	show("destroy", io_destroy(c));
	show("destroy again", io_destroy(c));
	show("submit after destroy", submit1(c, &cb));
}

/* IOCB_FLAG_RESFD: each completion adds 1 to the eventfd. */
static void notify(void)
{
	aio_context_t c = 0;
	struct iocb cb[2], *cbs[2] = { &cb[0], &cb[1] };
	int fd = scratch(), efd = eventfd(0, 0), p[2];
	uint64_t count = 0;

	if (io_setup(8, &c) < 0 || pipe(p) < 0)
		_exit(1);
	for (int i = 0; i < 2; i++) {
		prep(&cb[i], IOCB_CMD_PWRITE, fd, "ev", 2, i * 2);
		cb[i].aio_flags = IOCB_FLAG_RESFD;
		cb[i].aio_resfd = (uint32_t)efd;
	}
	show("submit 2 with resfd", io_submit(c, 2, cbs));
	show("eventfd read", read(efd, &count, sizeof(count)));
	say("eventfd count %llu\n", (unsigned long long)count);
	cb[0].aio_resfd = 99;
	show("resfd not an fd", io_submit(c, 1, cbs));
	cb[0].aio_resfd = (uint32_t)p[0];
	show("resfd a pipe", io_submit(c, 1, cbs));
	/* A full eventfd: the completion is not lost in a wait, and the sandbox does not hang. */
	uint64_t big = 0xfffffffffffffffeULL;
	if (write(efd, &big, sizeof(big)) != sizeof(big))
		say("fill eventfd: %s\n", errname(errno));
	cb[0].aio_resfd = (uint32_t)efd;
	show("submit with a full eventfd", io_submit(c, 1, cbs));
	struct io_event evs[4];
	struct timespec to = { 1, 0 };
	show("events", io_getevents(c, 3, 4, evs, &to));
	struct pollfd pf = { .fd = efd, .events = POLLIN };
	show("poll of the overflowed eventfd", poll(&pf, 1, 1000));
	say("revents POLLERR: %s\n", yesno(pf.revents & POLLERR));
	count = 0;
	show("read it", read(efd, &count, sizeof(count)));
	say("count is UINT64_MAX: %s\n", yesno(count == UINT64_MAX));
}

/* The submitting loop is cut to the context's size; stops at a NULL iocb pointer. */
static void hostile(void)
{
	aio_context_t c = 0;
	struct iocb cb, *cbs[3] = { &cb, &cb, NULL };
	struct io_event evs[2];
	struct timespec zero = { 0, 0 };
	char buf[16];
	int fd = scratch();

	if (io_setup(2, &c) < 0)
		_exit(1);
	show("submit forged ctx", submit1(c + 4096, &cb));
	show("submit ctx -1", submit1((aio_context_t)-1, &cb));
	show("getevents forged ctx", io_getevents(c + 8, 0, 1, evs, &zero));
	show("destroy forged ctx", io_destroy(0x10000));
	show("destroy 0", io_destroy(0));
	show("cancel NULL iocb", io_cancel(c, NULL, NULL));
	show("cancel bad iocb", io_cancel(c, (void *)16, NULL));
	show("submit nr -1", io_submit(c, -1, cbs));
	show("submit iocbpp -1", io_submit(c, 1, (void *)-1));
	show("submit NULL iocb", io_submit(c, 1, &cbs[2]));
	show("submit iocb unmapped", submit1(c, (void *)4096));
	show("submit nr 0 NULL array", io_submit(c, 0, NULL));
	prep(&cb, IOCB_CMD_PWRITE, fd, "abc", 3, 0);
	show("submit 2 then NULL", io_submit(c, 2, cbs));
	show("getevents 2", io_getevents(c, 2, 2, evs, &zero));
	prep(&cb, IOCB_CMD_PWRITE, fd, "abc", 3, 0);
	cb.aio_reserved2 = 1;
	show("reserved2 set", submit1(c, &cb));
	prep(&cb, IOCB_CMD_PWRITE, fd, "abc", (size_t)-1, 0);
	show("nbytes negative", submit1(c, &cb));
	prep(&cb, IOCB_CMD_PREADV, fd, buf, 2000, 0);
	show("preadv 2000 iovecs", submit1(c, &cb));
	prep(&cb, IOCB_CMD_PREADV, fd, (void *)8, 1, 0);
	show("preadv bad iovec pointer", submit1(c, &cb));
	/* A bad buffer is the request's result, not the submit's. */
	void *gone = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	munmap(gone, 4096);
	prep(&cb, IOCB_CMD_PREAD, fd, gone, 3, 0);
	show("submit pread to unmapped", submit1(c, &cb));
	reap(c, "pread to unmapped", &cb);
	prep(&cb, IOCB_CMD_PWRITE, fd, gone, 3, 0);
	show("submit pwrite from unmapped", submit1(c, &cb));
	reap(c, "pwrite from unmapped", &cb);
	/* A bad events buffer: EFAULT, and the event stays for the next call. */
	prep(&cb, IOCB_CMD_PWRITE, fd, "abc", 3, 0);
	submit1(c, &cb);
	show("getevents to unmapped", io_getevents(c, 1, 1, gone, &zero));
	show("getevents bad timeout", io_getevents(c, 1, 1, evs, gone));
	show("getevents after EFAULT", io_getevents(c, 1, 1, evs, &zero));
	/* Huge nr: cut to what the context holds; the iocb array is read only that far. */
	struct iocb *lots[4096];
	for (int i = 0; i < 4096; i++)
		lots[i] = &cb;
	long n = io_submit(c, LONG_MAX, lots), reaped = 0, r;
	say("huge nr submitted some: %s\n", yesno(n > 0 && n < 4096));
	show("submit when full", submit1(c, &cb));
	while ((r = io_getevents(c, 1, 2, evs, &zero)) > 0)
		reaped += r;
	say("reaped all: %s\n", yesno(reaped == n));
	show("submit after reaping", submit1(c, &cb));
	/* A child of fork has no contexts. */
	pid_t pid = fork();
	if (pid == 0) {
		show("child submit", submit1(c, &cb));
		show("child destroy", io_destroy(c));
		_exit(0);
	}
	wait_child(pid);
	show("parent destroy", io_destroy(c));
}

static aio_context_t waited;
static const char *waiter_got;

static void *waiter(void *arg)
{
	struct io_event ev;
	(void)arg;
	long r = io_getevents(waited, 1, 1, &ev, NULL);
	waiter_got = r < 0 ? errname(errno) : "event";
	return NULL;
}

static int alarms;
static void on_alarm(int sig) { (void)sig; alarms++; }

/* Waits that end: io_destroy under a waiting thread, a signal (EINTR, never restarted), io_pgetevents' mask. */
static void wait_tests(void)
{
	pthread_t th;
	struct io_event ev;

	if (io_setup(2, &waited) < 0)
		_exit(1);
	pthread_create(&th, NULL, waiter, NULL);
	usleep(200 * 1000);
	show("destroy under a waiter", io_destroy(waited));
	pthread_join(th, NULL);
	say("waiter: %s\n", waiter_got);

	aio_context_t c = 0;
	if (io_setup(2, &c) < 0)
		_exit(1);
	struct sigaction sa = { .sa_handler = on_alarm, .sa_flags = SA_RESTART };
	sigaction(SIGALRM, &sa, NULL);
	struct timespec to = { 5, 0 };
	ualarm(100 * 1000, 100 * 1000);	/* repeated: one before the wait (a loaded host) is not the one that ends it */
	show("getevents with SA_RESTART alarm", io_getevents(c, 1, 1, &ev, &to));
	ualarm(0, 0);
	say("alarms %s\n", alarms > 0 ? "some" : "none");
	alarms = 0;
	/* io_pgetevents with SIGALRM blocked for the wait: it times out, then the signal is handled. */
	sigset_t block;
	sigemptyset(&block);
	sigaddset(&block, SIGALRM);
	struct { const sigset_t *mask; size_t size; } usig = { &block, 8 };
	struct timespec t300 = { 0, 300 * 1000 * 1000 };
	ualarm(50 * 1000, 0);
	show("pgetevents masked", syscall(SYS_io_pgetevents, c, 1, 1, &ev, &t300, &usig));
	say("alarms %d\n", alarms);
	usig.size = 4;
	show("pgetevents bad sigsetsize", syscall(SYS_io_pgetevents, c, 1, 1, &ev, &t300, &usig));
	usig.size = 8;
	usig.mask = (void *)8;
	show("pgetevents bad mask", syscall(SYS_io_pgetevents, c, 1, 1, &ev, &t300, &usig));
	show("pgetevents bad usig", syscall(SYS_io_pgetevents, c, 1, 1, &ev, &t300, (void *)8));
	show("pgetevents NULL usig", syscall(SYS_io_pgetevents, c, 0, 1, &ev, &t300, NULL));
	io_destroy(c);
}

static int busy_pipe[2];
static long busy_ret = -2;

static void *busy_submitter(void *arg)
{
	struct iocb cb;
	char buf[8];
	(void)arg;
	prep(&cb, IOCB_CMD_PREAD, busy_pipe[0], buf, sizeof(buf), 0);
	busy_ret = submit1(waited, &cb);
	return NULL;
}

/*
 * Sandbox only (Linux's io_destroy would wait for the read): io_destroy while
 * another thread's io_submit waits in a pipe read; the read completes into a
 * context that is gone, and the sandbox stays whole.
 */
static void destroy_busy(void)
{
	pthread_t th;
	struct io_event ev;
	struct timespec zero = { 0, 0 };

	if (io_setup(2, &waited) < 0 || pipe(busy_pipe) < 0)
		_exit(1);
	pthread_create(&th, NULL, busy_submitter, NULL);
	usleep(200 * 1000);
	show("destroy under a busy submit", io_destroy(waited));
	if (write(busy_pipe[1], "data", 4) != 4)
		_exit(1);
	pthread_join(th, NULL);
	say("busy submit: %ld\n", busy_ret);
	show("getevents on it", io_getevents(waited, 0, 1, &ev, &zero));
	show("destroy it again", io_destroy(waited));
}

static long sysctl_num(const char *path)
{
	char b[32] = "";
	int fd = open(path, O_RDONLY);
	long n = fd < 0 ? -1 : read(fd, b, sizeof(b) - 1);

	if (fd >= 0)
		close(fd);
	return n > 0 ? atol(b) : -1;
}

/* The ring: a readable mapping at the context's address, gone after io_destroy; fs.aio-nr counts nr_events. */
static void ring(void)
{
	aio_context_t c = 0;
	long before = sysctl_num("/proc/sys/fs/aio-nr");

	say("aio-max-nr %ld\n", sysctl_num("/proc/sys/fs/aio-max-nr"));
	if (io_setup(100, &c) < 0)
		_exit(1);
	say("aio-nr grew by %ld\n", sysctl_num("/proc/sys/fs/aio-nr") - before);
	say("ring mapped: %s\n", yesno(msync((void *)c, 4096, MS_ASYNC) == 0));
	say("ring magic 0: %s\n", yesno(((volatile uint32_t *)c)[4] == 0));
	io_destroy(c);
	say("aio-nr back: %s\n", yesno(sysctl_num("/proc/sys/fs/aio-nr") == before));
	say("ring unmapped: %s\n", yesno(msync((void *)c, 4096, MS_ASYNC) < 0 && errno == ENOMEM));
}

int main(int argc, char **argv)
{
	const char *m = argc > 1 ? argv[1] : "basic";

	if (!strcmp(m, "basic"))
		basic();
	else if (!strcmp(m, "notify"))
		notify();
	else if (!strcmp(m, "hostile"))
		hostile();
	else if (!strcmp(m, "wait"))
		wait_tests();
	else if (!strcmp(m, "ring"))
		ring();
	else if (!strcmp(m, "busy"))
		destroy_busy();
	else
		return 2;
	return 0;
}

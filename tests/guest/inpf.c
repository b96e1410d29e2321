/* inpf: input buffers at the edges of guest memory (issue 16's input prefetch: on seccomp the stub copies a
 * write's data, a sigprocmask's set, a poll's array... in the guest's own context before the sentry sees the
 * call; a fault there must end as the sentry's own read would: as natively). Modes:
 *   inpf edges DIR   each line a call and its result (and what a file or a pipe got), for a comparison with a
 *                    native run: NULL, (void *)1 and a kernel address; a buffer that ends at a page's end
 *                    before an unmapped page, one that runs into it, one in a PROT_NONE page; counts past
 *                    the stub's copy (12272 bytes) and at it; a buffer another thread rewrites between two
 *                    calls (each call sees the bytes of its own time); the same buffer for the input and the
 *                    output of sigprocmask and sigaction (the input is read first, as Linux does), and an
 *                    output to a bad address (EFAULT, after the new mask or action took, as Linux); a file
 *                    write whose buffer runs into an unmapped page writes its readable head (as Linux's
 *                    generic_perform_write), a pipe write of one page is EFAULT.
 *   inpf loop CALL N CALL N times (write of 64 bytes to /dev/null, pwrite, writev, sigprocmask, sigaction,
 *                    poll, epoll_ctl, nanosleep): host calls per call are counted outside. Prints N. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define PG 4096

static void show(const char *what, long r)
{
	printf("%s: %s\n", what, r < 0 ? strerror(errno) : "ok");
}

/* What the file at fd holds now (its size and a checksum), then it is emptied. */
static void file_says(const char *what, int fd)
{
	unsigned char b[65536];
	unsigned long sum = 0;
	ssize_t n = pread(fd, b, sizeof(b), 0);

	for (ssize_t i = 0; i < n; i++)
		sum = sum * 31 + b[i];
	printf("%s: file has %zd bytes, sum %lx\n", what, n, sum);
	(void)(ftruncate(fd, 0) == 0);
}

/* The calls with an input buffer at p (count n where there is one), on file fd. */
static void calls(const char *what, const void *p, size_t n, int fd)
{
	char name[160];
	long r;

	snprintf(name, sizeof(name), "%s write %zu", what, n);
	r = pwrite(fd, p, n, 0);
	printf("%s: %ld %s\n", name, r, r < 0 ? strerror(errno) : "");
	file_says(name, fd);
	snprintf(name, sizeof(name), "%s writev", what);
	show(name, writev(fd, p, 1));
	file_says(name, fd);
	snprintf(name, sizeof(name), "%s sigprocmask", what);
	show(name, syscall(SYS_rt_sigprocmask, SIG_BLOCK, p, NULL, 8));
	snprintf(name, sizeof(name), "%s sigaction", what);
	show(name, syscall(SYS_rt_sigaction, SIGUSR2, p, NULL, 8));
	snprintf(name, sizeof(name), "%s poll", what);
	show(name, poll((struct pollfd *)p, 1, 0));
	snprintf(name, sizeof(name), "%s nanosleep", what);
	show(name, nanosleep(p, NULL));
	int ep = epoll_create1(0);
	snprintf(name, sizeof(name), "%s epoll_ctl", what);
	show(name, epoll_ctl(ep, EPOLL_CTL_ADD, fd == 0 ? 1 : 0, (struct epoll_event *)p));
	close(ep);
	/* undo what a good set did */
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGUSR2, SIG_DFL);
}

static char *shared;

static void *writer(void *arg)
{
	(void)arg;
	memcpy(shared, "second", 6);
	return NULL;
}

static int edges(const char *dir)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/inpf.out", dir);
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		return 1;
	unlink(path);
	setvbuf(stdout, NULL, _IOLBF, 0);
	calls("NULL", NULL, 16, fd);
	calls("one", (void *)1, 16, fd);
	calls("kernel", (void *)0xffffffffff600000UL, 16, fd);

	/* three pages: [0] [1] readable and zero (a sigset of none, a pollfd of fd 0, a nanosleep of 0), [2] unmapped */
	char *m = mmap(NULL, 3 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return 1;
	munmap(m + 2 * PG, PG);
	calls("ends at page end", m + 2 * PG - 64, 64, fd);
	calls("runs into unmapped", m + 2 * PG - 8, 64, fd);
	calls("split across pages", m + PG - 8, 64, fd);
	char *p = mmap(NULL, PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	mprotect(p, PG, PROT_NONE);
	calls("prot none", p, 16, fd);

	/* a pipe takes nothing of a page that faults: EFAULT (fs/pipe.c), unlike a file */
	int pp[2];
	if (pipe(pp))
		return 1;
	long pr = write(pp[1], m + 2 * PG - 8, 64);
	printf("pipe write runs into unmapped: %ld %s\n", pr, pr < 0 ? strerror(errno) : "");
	close(pp[0]);
	close(pp[1]);
	/* a file write of several pages that faults in its third: the first two pages and the readable head */
	char *w3 = mmap(NULL, 4 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	memset(w3, 'w', 4 * PG);
	munmap(w3 + 3 * PG, PG);
	long wr = pwrite(fd, w3 + 100, 4 * PG, 0);
	printf("file write of 4 pages, the 4th unmapped: %ld\n", wr);
	file_says("file write of 4 pages", fd);

	/* counts at and past what the stub copies */
	char *big = mmap(NULL, 8 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	for (int i = 0; i < 8 * PG; i++)
		big[i] = (char)(i * 7);
	const size_t counts[] = { 0, 1, 4096, 12272, 12273, 32768 };
	for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++) {
		char name[64];
		snprintf(name, sizeof(name), "big %zu", counts[i]);
		long r = pwrite(fd, big, counts[i], 0);
		printf("%s: %ld\n", name, r);
		file_says(name, fd);
	}
	/* an iovec array at a page's end, its second entry in the unmapped page */
	struct iovec *iov = (struct iovec *)(m + 2 * PG - sizeof(struct iovec));
	iov[0] = (struct iovec){ big, 100 };
	show("iovec at page end", writev(fd, iov, 1));
	show("iovec into unmapped", writev(fd, iov, 2));
	file_says("iovecs", fd);

	/* each call sees the bytes of its own time */
	shared = malloc(64);
	memcpy(shared, "first!", 6);
	show("before the write", pwrite(fd, shared, 6, 0));
	pthread_t t;
	pthread_create(&t, NULL, writer, NULL);
	pthread_join(t, NULL);
	show("after the write", pwrite(fd, shared, 6, 6));
	file_says("two writes", fd);

	/* one buffer for the input and the output: the input is read first */
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, SIGUSR1);
	show("sigprocmask in and out", syscall(SYS_rt_sigprocmask, SIG_BLOCK, &s, &s, 8));
	printf("old mask has SIGUSR1: %d\n", sigismember(&s, SIGUSR1));
	sigprocmask(SIG_BLOCK, NULL, &s);
	printf("mask has SIGUSR1: %d\n", sigismember(&s, SIGUSR1));
	struct sigaction sa;
	unsigned long ksa[4] = { (unsigned long)SIG_IGN, 0, 0, 0 };	/* the kernel's struct: handler, flags, restorer, mask */
	show("sigaction in and out", syscall(SYS_rt_sigaction, SIGUSR2, ksa, ksa, 8));
	printf("old action default: %d\n", ksa[0] == (unsigned long)SIG_DFL);
	sigaction(SIGUSR2, NULL, &sa);
	printf("action ignore: %d\n", sa.sa_handler == SIG_IGN);
	/* the old mask or action to a bad address: EFAULT, after the new one took (as Linux) */
	sigemptyset(&s);
	sigaddset(&s, SIGUSR1);
	sigprocmask(SIG_UNBLOCK, &s, NULL);
	show("sigprocmask old to a bad address", syscall(SYS_rt_sigprocmask, SIG_BLOCK, &s, (void *)1, 8));
	sigprocmask(SIG_BLOCK, NULL, &s);
	printf("mask has SIGUSR1: %d\n", sigismember(&s, SIGUSR1));
	unsigned long dfl[4] = { (unsigned long)SIG_DFL, 0, 0, 0 };
	show("sigaction old to a bad address", syscall(SYS_rt_sigaction, SIGUSR2, dfl, (void *)1, 8));
	sigaction(SIGUSR2, NULL, &sa);
	printf("action default: %d\n", sa.sa_handler == SIG_DFL);
	/* a sigset size other than 8 is EINVAL, before the set is read */
	show("sigprocmask size 16", syscall(SYS_rt_sigprocmask, SIG_BLOCK, &s, NULL, 16));
	show("poll nfds past the limit", poll((struct pollfd *)big, 1 << 30, 0));
	return 0;
}

static int loop(const char *call, int n)
{
	char buf[64] = "0123456789";
	int null = open("/dev/null", O_WRONLY), ep = epoll_create1(0), pp[2];
	struct iovec iov = { buf, sizeof(buf) };
	sigset_t s;
	struct sigaction sa;
	struct pollfd pf = { 0, POLLIN, 0 };
	struct timespec zero = { 0, 0 };
	struct epoll_event ev = { .events = EPOLLIN };

	if (pipe(pp))
		return 1;
	sigemptyset(&s);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_IGN;
	pf.fd = pp[0];
	for (int i = 0; i < n; i++) {
		long r;
		if (!strcmp(call, "write"))
			r = write(null, buf, sizeof(buf));
		else if (!strcmp(call, "pwrite"))
			r = pwrite(null, buf, sizeof(buf), 0);
		else if (!strcmp(call, "writev"))
			r = writev(null, &iov, 1);
		else if (!strcmp(call, "sigprocmask"))
			r = sigprocmask(SIG_BLOCK, &s, NULL);
		else if (!strcmp(call, "sigaction"))
			r = sigaction(SIGUSR2, &sa, NULL);
		else if (!strcmp(call, "poll"))
			r = poll(&pf, 1, 0);
		else if (!strcmp(call, "epoll_ctl"))
			r = epoll_ctl(ep, i ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, pp[0], &ev);
		else if (!strcmp(call, "nanosleep"))
			r = nanosleep(&zero, NULL);
		else
			return fprintf(stderr, "unknown call %s\n", call), 2;
		if (r < 0)
			return perror(call), 1;
	}
	printf("%d\n", n);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "edges"))
		return edges(argv[2]);
	if (argc == 4 && !strcmp(argv[1], "loop"))
		return loop(argv[2], atoi(argv[3]));
	fprintf(stderr, "usage: inpf edges DIR | inpf loop CALL N\n");
	return 2;
}

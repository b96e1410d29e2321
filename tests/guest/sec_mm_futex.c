/* sec_mm_futex: a shared futex between two processes that map the same file separately, at different
 * offsets of their mappings: Linux keys it by (inode, file offset), so the wake must arrive.
 *   sec_mm_futex FILE          the parent: makes FILE, maps it, starts the child, waits on the word
 *   sec_mm_futex child FILE    the child (after fork+exec): opens and maps FILE itself, wakes the parent */
#define _GNU_SOURCE
#include <fcntl.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PG 4096
#define FUTEX_WAIT 0
#define FUTEX_WAKE 1
/* In the file: page 1 holds the words. */
#define WORD 64		/* the futex word */
#define READY 128	/* the parent is about to wait */
#define ACK 192		/* the parent's wait returned */

static long futex(volatile uint32_t *w, int op, uint32_t val, const struct timespec *ts)
{
	return syscall(SYS_futex, w, op, val, ts, NULL, 0);
}

static volatile uint32_t *word(char *page, int off)
{
	return (volatile uint32_t *)(page + off);
}

/* The child maps only page 1 of the file (offset 4096) at an address of its own choosing. */
static int child(const char *path)
{
	int fd = open(path, O_RDWR);
	char *p = fd < 0 ? MAP_FAILED : mmap(NULL, PG, PROT_READ | PROT_WRITE, MAP_SHARED, fd, PG);

	if (p == MAP_FAILED)
		return 10;
	for (int i = 0; i < 10000 && !__atomic_load_n(word(p, READY), __ATOMIC_SEQ_CST); i++)
		usleep(1000);
	usleep(300000);	/* let the parent go to sleep in FUTEX_WAIT */
	__atomic_store_n(word(p, WORD), 1, __ATOMIC_SEQ_CST);
	/* Wake until the parent says its wait returned (a wake before it slept finds nobody). */
	for (int i = 0; i < 300 && !__atomic_load_n(word(p, ACK), __ATOMIC_SEQ_CST); i++) {
		futex(word(p, WORD), FUTEX_WAKE, 1, NULL);
		usleep(10000);
	}
	return __atomic_load_n(word(p, ACK), __ATOMIC_SEQ_CST) ? 0 : 11;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "child"))
		return child(argv[2]);
	if (argc != 2)
		return 2;
	unlink(argv[1]);	/* one a native run as root left is not nobody's to open (README "Security") */
	int fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || ftruncate(fd, 2 * PG))
		return 3;
	/* The parent maps both pages: the word is at a different address offset than in the child. */
	char *m = mmap(NULL, 2 * PG, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED)
		return 4;
	close(fd);
	char *p = m + PG;
	pid_t c = fork();
	if (c == 0) {
		execl("/proc/self/exe", argv[0], "child", argv[1], (char *)NULL);
		_exit(12);
	}
	__atomic_store_n(word(p, READY), 1, __ATOMIC_SEQ_CST);
	struct timespec ts = { 10, 0 };
	long r = 0;
	while (!__atomic_load_n(word(p, WORD), __ATOMIC_SEQ_CST)) {
		r = futex(word(p, WORD), FUTEX_WAIT, 0, &ts);
		if (r < 0 && errno == ETIMEDOUT)
			break;
	}
	printf("parent: the wait %s\n", r < 0 && errno == ETIMEDOUT ? "timed out: the wake was lost" : "was woken");
	__atomic_store_n(word(p, ACK), 1, __ATOMIC_SEQ_CST);
	int st;
	waitpid(c, &st, 0);
	printf("child: exit %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
	return 0;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * madvise(2)'s fork advice, compared with the native run: MADV_DONTFORK
 * leaves a range out of the child (EFAULT, SIGSEGV), MADV_WIPEONFORK gives
 * the child zero pages there (and its own children again: the flag is
 * inherited), MADV_DOFORK and MADV_KEEPONFORK undo them, a piece of a
 * mapping splits it; EINVAL for WIPEONFORK on a file or shared mapping,
 * ENOMEM over a hole.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define PG 4096

static sigjmp_buf jb;

static void on_segv(int sig)
{
	siglongjmp(jb, sig);
}

static const char *err(long r)
{
	return r == 0 ? "0" : errno == EINVAL ? "EINVAL" : errno == ENOMEM ? "ENOMEM" : strerror(errno);
}

static char *anon(int pages, char fill)
{
	char *p = mmap(NULL, (size_t)pages * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		perror("mmap");
		_exit(1);
	}
	memset(p, fill, (size_t)pages * PG);
	return p;
}

/* What the calling process sees at p: the byte, "zero", or the error. */
static void look(const char *who, const char *name, volatile char *p)
{
	int fd[2];
	if (pipe(fd) < 0)
		_exit(1);
	long w = write(fd[1], (const void *)p, 1);
	close(fd[0]);
	close(fd[1]);
	int sig = sigsetjmp(jb, 1);
	if (sig) {
		printf("%s %s: write %s, load %s\n", who, name, w < 0 ? strerror(errno) : "ok", strsignal(sig));
		return;
	}
	char c = *p;
	printf("%s %s: write %s, load %s\n", who, name, w < 0 ? strerror(errno) : "ok", c ? (char[2]){ c, 0 } : "zero");
}

static int wait_child(pid_t pid)
{
	int st;
	if (waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGSEGV, on_segv);
	char *dontfork = anon(2, 'd'), *wipe = anon(2, 'w'), *keep = anon(1, 'k'), *dofork = anon(1, 'f');
	char *middle = anon(3, 'm');
	printf("DONTFORK: %s\n", err(madvise(dontfork, 2 * PG, MADV_DONTFORK)));
	printf("WIPEONFORK: %s\n", err(madvise(wipe, 2 * PG, MADV_WIPEONFORK)));
	printf("WIPEONFORK %s then ", err(madvise(keep, PG, MADV_WIPEONFORK)));
	printf("KEEPONFORK: %s\n", err(madvise(keep, PG, MADV_KEEPONFORK)));
	printf("DONTFORK %s then ", err(madvise(dofork, PG, MADV_DONTFORK)));
	printf("DOFORK: %s\n", err(madvise(dofork, PG, MADV_DOFORK)));
	printf("DONTFORK of the middle page: %s\n", err(madvise(middle + PG, PG, MADV_DONTFORK)));

	int mfd = memfd_create("adv", 0);
	if (mfd < 0 || ftruncate(mfd, PG) < 0)
		return 1;
	char *shared = mmap(NULL, PG, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
	char *fpriv = mmap(NULL, PG, PROT_READ, MAP_PRIVATE, mfd, 0);
	char *shanon = mmap(NULL, PG, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	printf("WIPEONFORK on MAP_SHARED file: %s, private file: %s, shared anonymous: %s\n",
	       err(madvise(shared, PG, MADV_WIPEONFORK)), err(madvise(fpriv, PG, MADV_WIPEONFORK)),
	       err(madvise(shanon, PG, MADV_WIPEONFORK)));
	printf("DONTFORK on MAP_SHARED file: %s\n", err(madvise(shared, PG, MADV_DONTFORK)));
	strcpy(shared, "s");
	char *hole = anon(3, 'h');
	munmap(hole + PG, PG);
	printf("DONTFORK over a hole: %s; unaligned: %s\n", err(madvise(hole, 3 * PG, MADV_DONTFORK)),
	       err(madvise(hole + 1, PG, MADV_DONTFORK)));
	printf("WIPEONFORK over a hole: %s\n", err(madvise(hole, 3 * PG, MADV_WIPEONFORK)));

	pid_t pid = fork();
	if (pid == 0) {
		look("child", "dontfork", dontfork);
		look("child", "dontfork 2nd page", dontfork + PG);
		look("child", "wipe", wipe);
		look("child", "wipe 2nd page", wipe + PG);
		look("child", "keep", keep);
		look("child", "dofork", dofork);
		look("child", "middle 1st", middle);
		look("child", "middle 2nd", middle + PG);
		look("child", "middle 3rd", middle + 2 * PG);
		look("child", "shared", shared);
		look("child", "hole 1st", hole);
		/* the child's wiped range is still WIPEONFORK: a grandchild gets zero again */
		wipe[0] = 'x';
		pid_t g = fork();
		if (g == 0) {
			look("grandchild", "wipe", wipe);
			look("grandchild", "middle 3rd", middle + 2 * PG);
			_exit(0);
		}
		printf("grandchild: %d\n", wait_child(g));
		look("child", "wipe after its write", wipe);
		_exit(0);
	}
	printf("child: %d\n", wait_child(pid));
	look("parent", "dontfork", dontfork);
	look("parent", "wipe", wipe);
	look("parent", "middle 2nd", middle + PG);
	return 0;
}

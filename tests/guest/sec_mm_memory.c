/* sec_mm_memory: allocate and touch memory in a loop, to check a sandbox's memory bound. Every mode stops
 * by itself at CAP MiB, so that without a bound it only takes that much.
 *   sec_mm_memory mmap CAP     private anonymous 4 MiB chunks, each touched
 *   sec_mm_memory shared CAP   shared anonymous 4 MiB chunks, each touched
 *   sec_mm_memory memfd CAP    a memfd of CAP MiB, mapped shared 4 MiB at a time, each touched
 *   sec_mm_memory brk CAP      brk up 1 MiB at a time, touched
 *   sec_mm_memory procs CAP    4 processes, each taking CAP/4 MiB in 4 MiB chunks and holding it until all
 *                              four have tried (the bound is sandbox-wide)
 *   sec_mm_memory fork MB      touch MB MiB, then fork: the child's copy commits as much again
 * Prints how far each got ("ENOMEM after N MiB" or "got all N MiB"). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define MIB (1UL << 20)

static long take(const char *how, long cap)
{
	long got = 0;

	while (got < cap) {
		char *p;
		if (!strcmp(how, "brk")) {	/* raw brk: musl's sbrk only answers sbrk(0) */
			static char *cur;
			if (!cur)
				cur = (char *)syscall(SYS_brk, 0);
			if ((char *)syscall(SYS_brk, cur + MIB) != cur + MIB) {
				errno = ENOMEM;
				break;
			}
			memset(cur, 1, MIB);
			cur += MIB;
			got += 1;
			continue;
		}
		static int memfd = -1;
		if (!strcmp(how, "memfd") && memfd < 0) {
			memfd = (int)syscall(SYS_memfd_create, "hog", 0);
			if (memfd < 0 || ftruncate(memfd, (off_t)cap * MIB))
				break;
		}
		int flags = (strcmp(how, "mmap") ? MAP_SHARED : MAP_PRIVATE) | (memfd < 0 ? MAP_ANONYMOUS : 0);
		p = mmap(NULL, 4 * MIB, PROT_READ | PROT_WRITE, flags, memfd, memfd < 0 ? 0 : (off_t)got * MIB);
		if (p == MAP_FAILED)
			break;
		memset(p, 1, 4 * MIB);
		got += 4;
	}
	if (got < cap)
		printf("%s: %s after %ld MiB\n", how, errno == ENOMEM ? "ENOMEM" : strerror(errno), got);
	else
		printf("%s: got all %ld MiB\n", how, got);
	fflush(stdout);
	return got;
}

int main(int argc, char **argv)
{
	if (argc != 3)
		return 2;
	long n = atol(argv[2]);
	if (!strcmp(argv[1], "procs")) {
		/* Each child holds what it took until all four have tried: a child that got its share
		 * and exited before the next one started would free it, and the four would pass in turn
		 * (it happened on vmexec under QEMU's slow CPU). */
		int done[2], hold[2];
		if (pipe(done) || pipe(hold))
			return 1;
		pid_t c[4];
		for (int i = 0; i < 4; i++)
			if ((c[i] = fork()) == 0) {
				close(done[0]);
				close(hold[1]);
				char r = take("mmap", n / 4) < n / 4 ? '1' : '0';
				char b;
				if (write(done[1], &r, 1) != 1 || read(hold[0], &b, 1) != 0)
					_exit(3);
				_exit(r == '1');
			}
		close(done[1]);
		close(hold[0]);
		char r[4];
		size_t got = 0;
		ssize_t k;
		while (got < sizeof(r) && (k = read(done[0], r + got, sizeof(r) - got)) > 0)
			got += (size_t)k;
		close(hold[1]);	/* all four have tried: let them go */
		int short_ones = 0;
		for (int i = 0; i < 4; i++) {
			int st;
			waitpid(c[i], &st, 0);
			short_ones += !WIFEXITED(st) || WEXITSTATUS(st);
		}
		if (got != sizeof(r))
			printf("procs: only %zu of 4 children reported\n", got);
		printf("procs: %d of 4 could not get %ld MiB\n", short_ones, n / 4);
		return 0;
	}
	if (!strcmp(argv[1], "fork")) {
		char *p = mmap(NULL, n * MIB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED) {
			printf("fork: the first %ld MiB: %s\n", n, strerror(errno));
			return 1;
		}
		memset(p, 1, n * MIB);
		pid_t c = fork();
		if (c == 0)
			_exit(p[n * MIB - 1] == 1 ? 0 : 1);
		if (c < 0) {
			printf("fork with %ld MiB: %s\n", n, errno == ENOMEM ? "ENOMEM" : strerror(errno));
			/* A failed fork leaves no child behind. */
			printf("then wait: %s\n", wait(NULL) < 0 && errno == ECHILD ? "ECHILD" : "a child");
			return 0;
		}
		int st;
		waitpid(c, &st, 0);
		printf("fork with %ld MiB: ok, child exit %d\n", n, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
		return 0;
	}
	take(argv[1], n);
	printf("still running: yes\n");
	return 0;
}

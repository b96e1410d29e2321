/* smaps: /proc/self/smaps's Size, Rss, Locked and Anonymous of mappings in known states (LTP mlock05): mlock'ed,
 * MAP_POPULATE'd, untouched, three pages written; and a child's pages as move_pages sees them from its parent. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guest.h"

#define MB (1UL << 20)

/* "Size 1024 Rss 1024 Locked 1024 Anonymous 1024" of the VMA starting at a */
static void show(const char *what, void *a)
{
	static char b[1 << 20];
	FILE *f = fopen("/proc/self/smaps", "r");
	size_t n = f ? fread(b, 1, sizeof b - 1, f) : 0;
	if (f)
		fclose(f);
	b[n] = 0;
	char head[32];
	snprintf(head, sizeof head, "%lx-", (unsigned long)a);
	char *at = strstr(b, head);
	if (!at || (at != b && at[-1] != '\n')) {
		say("%s: not found\n", what);
		return;
	}
	const char *keys[] = { "Size:", "Rss:", "Locked:", "Anonymous:" };
	say("%s:", what);
	for (int i = 0; i < 4; i++) {
		char *k = strstr(at, keys[i]);
		say(" %s %lu", keys[i], k ? strtoul(k + strlen(keys[i]), NULL, 10) : 999999);
	}
	say("\n");
}

/* 1 MiB read-write between two PROT_NONE pages: no neighbour merges with it */
static char *isolated(int flags)
{
	char *g = mmap(NULL, MB + 2 * 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return mmap(g + 4096, MB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | flags, -1, 0);
}

int main(void)
{
	char *l = mmap(NULL, MB, PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	say("mlock: %d\n", mlock(l, MB));
	show("mlocked", l);
	char *p = isolated(MAP_POPULATE);
	show("populated", p);
	char *u = isolated(0);
	show("untouched", u);
	u[0] = u[4096] = u[8192] = 1;
	show("three pages written", u);

	int pfd[2];
	pipe(pfd);
	pid_t c = fork();
	if (c == 0) {
		char *m = mmap(NULL, 2 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		m[0] = 1;
		write(pfd[1], &m, sizeof m);
		pause();
		_exit(0);
	}
	char *m;
	read(pfd[0], &m, sizeof m);
	void *pages[3] = { m, m + 4096, (void *)16 };
	int st[3] = { 7, 7, 7 };
	long r = syscall(SYS_move_pages, c, 3, pages, NULL, st, 0);
	say("child's pages from the parent: %ld status %d %d %d\n", r, st[0], st[1], st[2]);
	kill(c, SIGKILL);
	waitpid(c, NULL, 0);
	return 0;
}

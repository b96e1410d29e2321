/* numa: the NUMA calls of a one-node Linux with CONFIG_NUMA (get/set_mempolicy, mbind, set_mempolicy_home_node,
 * migrate_pages, move_pages): their errors, what is set and read back per task and per VMA, fork, compared with
 * the native run. Hostile inputs: bad pointers, huge maxnode, nodemasks with nodes that do not exist. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guest.h"

#define PG 4096L
#ifndef SYS_set_mempolicy_home_node
#define SYS_set_mempolicy_home_node 450
#endif
#define BAD ((void *)16)
enum { DEFAULT, PREFERRED, BIND, INTERLEAVE, LOCAL, PREFERRED_MANY, WEIGHTED_INTERLEAVE };
#define F_STATIC (1 << 15)
#define F_RELATIVE (1 << 14)
#define F_BALANCING (1 << 13)
#define F_NODE 1
#define F_ADDR 2
#define F_MEMS 4
#define MF_STRICT 1
#define MF_MOVE 2
#define MF_MOVE_ALL 4

static const char *E(long r)
{
	static char b[32];
	if (r >= 0 || !strcmp(errname(errno), "E?")) {
		snprintf(b, sizeof b, r >= 0 ? "%ld" : "errno %ld", r >= 0 ? r : (long)errno);
		return b;
	}
	return errname(errno);
}

static long setpol(int mode, const unsigned long *m, unsigned long maxnode)
{
	return syscall(SYS_set_mempolicy, mode, m, maxnode);
}

static long getpol(int *mode, unsigned long *m, unsigned long maxnode, void *addr, unsigned long flags)
{
	return syscall(SYS_get_mempolicy, mode, m, maxnode, addr, flags);
}

static long mbind_(void *a, unsigned long len, unsigned long mode, const unsigned long *m, unsigned long maxnode,
		   unsigned flags)
{
	return syscall(SYS_mbind, a, len, mode, m, maxnode, flags);
}

/* "mode 0x2 mask 0x1": the task's policy, or the VMA's at addr */
static void show(const char *what, void *addr)
{
	int mode = -1;
	unsigned long m[2] = { 0xdead, 0xbeef };
	long r = getpol(&mode, m, 128, addr, addr ? F_ADDR : 0);
	if (r < 0)
		say("%s: %s\n", what, errname(errno));
	else
		say("%s: mode %#x mask %#lx %#lx\n", what, mode, m[0], m[1]);
}

/* VMAs of /proc/self/maps starting inside [lo, hi); read without malloc, which could map into a hole */
static int vmas_in(char *lo, char *hi)
{
	static char b[1 << 20];
	int fd = open("/proc/self/maps", O_RDONLY), n = 0;
	long len = 0, r;
	while (fd >= 0 && (r = read(fd, b + len, sizeof b - 1 - len)) > 0)
		len += r;
	close(fd);
	b[len] = 0;
	for (char *l = b; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
		unsigned long s = strtoul(l, NULL, 16);
		n += s >= (unsigned long)lo && s < (unsigned long)hi;
	}
	return n;
}

static void task_policy(void)
{
	unsigned long one = 1, m[32];
	static const struct { int mode; const char *name; } modes[] = {
		{ BIND, "BIND" }, { INTERLEAVE, "INTERLEAVE" }, { PREFERRED, "PREFERRED" },
		{ PREFERRED_MANY, "PREFERRED_MANY" }, { WEIGHTED_INTERLEAVE, "WEIGHTED_INTERLEAVE" },
	};
	char what[64];

	show("default", NULL);
	for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++) {
		snprintf(what, sizeof what, "set %s {0}", modes[i].name);
		say("%s: %s\n", what, E(setpol(modes[i].mode, &one, 2)));
		show(what, NULL);
	}
	say("set LOCAL: %s\n", E(setpol(LOCAL, NULL, 0)));
	show("LOCAL", NULL);
	say("set PREFERRED {}: %s\n", E(setpol(PREFERRED, NULL, 0)));
	show("PREFERRED {} (local)", NULL);
	unsigned long static_m = 0x23;	/* nodes 0, 1, 5: 1 and 5 do not exist */
	say("set BIND|STATIC {0,1,5}: %s\n", E(setpol(BIND | F_STATIC, &static_m, 64)));
	show("BIND|STATIC", NULL);
	unsigned long rel = 8;
	say("set INTERLEAVE|RELATIVE {3}: %s\n", E(setpol(INTERLEAVE | F_RELATIVE, &rel, 64)));
	show("INTERLEAVE|RELATIVE", NULL);
	int node = -1;
	long r = getpol(&node, NULL, 0, NULL, F_NODE);
	say("F_NODE under INTERLEAVE: %s node %d\n", E(r), node);
	say("set BIND|NUMA_BALANCING: %s\n", E(setpol(BIND | F_BALANCING, &one, 2)));
	show("BIND|NUMA_BALANCING", NULL);
	say("F_NODE under BIND: %s\n", E(getpol(&node, NULL, 0, NULL, F_NODE)));

	/* errors */
	say("mode 7: %s\n", E(setpol(7, &one, 2)));
	say("mode -1: %s\n", E(setpol(-1, &one, 2)));
	say("STATIC|RELATIVE: %s\n", E(setpol(BIND | F_STATIC | F_RELATIVE, &one, 2)));
	say("INTERLEAVE|NUMA_BALANCING: %s\n", E(setpol(INTERLEAVE | F_BALANCING, &one, 2)));
	say("DEFAULT with nodes: %s\n", E(setpol(DEFAULT, &one, 2)));
	say("BIND {}: %s\n", E(setpol(BIND, NULL, 0)));
	unsigned long two = 2;
	say("BIND {1}: %s\n", E(setpol(BIND, &two, 64)));
	say("BIND|STATIC {1}: %s\n", E(setpol(BIND | F_STATIC, &two, 64)));
	say("BIND|RELATIVE {1}: %s\n", E(setpol(BIND | F_RELATIVE, &two, 64)));
	say("LOCAL {0}: %s\n", E(setpol(LOCAL, &one, 2)));
	say("LOCAL|STATIC: %s\n", E(setpol(LOCAL | F_STATIC, NULL, 0)));
	say("PREFERRED|STATIC {}: %s\n", E(setpol(PREFERRED | F_STATIC, NULL, 0)));
	say("BIND {0} masked off by maxnode 1: %s\n", E(setpol(BIND, &one, 1)));
	say("bad nodemask: %s\n", E(setpol(BIND, BAD, 2)));
	say("bad nodemask, maxnode 1 (not read): %s\n", E(setpol(DEFAULT, BAD, 1)));
	say("maxnode a page of bits + 2: %s\n", E(setpol(BIND, &one, PG * 8 + 2)));
	say("maxnode ~0: %s\n", E(setpol(BIND, &one, ~0UL)));
	memset(m, 0, sizeof m);
	m[0] = 1;
	say("maxnode 2000, bits past 1024 clear: %s\n", E(setpol(BIND, m, 2000)));
	m[23] = 1UL << 20;
	say("maxnode 2000, node 1492 set: %s\n", E(setpol(BIND, m, 2000)));
	m[23] = 0;
	m[16] = 1UL << 63;	/* bit 1087: past maxnode - 1 = 1030 but in the word Linux reads whole */
	say("maxnode 1031, bit 1087 set: %s\n", E(setpol(BIND, m, 1031)));
	m[16] = 0;
	m[5] = 1;	/* node 320 < MAX_NUMNODES: accepted, not online */
	say("BIND {0,320}: %s\n", E(setpol(BIND, m, 1025)));
	show("after {0,320}", NULL);
	char *two_pg = mmap(NULL, 2 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	munmap(two_pg + PG, PG);
	say("maxnode 2000, nodemask running past the end of memory: %s\n", E(setpol(BIND, (unsigned long *)(two_pg + PG - 8), 2000)));

	/* get_mempolicy's own errors and copy-out */
	int mode;
	say("get: nmask with maxnode 0: %s\n", E(getpol(&mode, m, 0, NULL, 0)));
	say("get: flags 8: %s\n", E(getpol(&mode, NULL, 0, NULL, 8)));
	say("get: MEMS_ALLOWED|NODE: %s\n", E(getpol(&mode, NULL, 0, NULL, F_MEMS | F_NODE)));
	say("get: addr without MPOL_F_ADDR: %s\n", E(getpol(&mode, NULL, 0, &mode, 0)));
	say("get: bad policy pointer: %s\n", E(getpol(BAD, NULL, 0, NULL, 0)));
	say("get: bad nmask pointer: %s\n", E(getpol(&mode, BAD, 64, NULL, 0)));
	memset(m, 0xff, sizeof m);
	mode = -1;
	r = getpol(&mode, m, 64, NULL, F_MEMS);
	say("get: MEMS_ALLOWED: %s mode %d mask %#lx\n", E(r), mode, m[0]);
	memset(m, 0xff, sizeof m);
	r = getpol(&mode, m, 1, NULL, 0);
	say("get: maxnode 1: %s mask untouched %s\n", E(r), yesno(m[0] == ~0UL));
	memset(m, 0xff, sizeof m);
	say("set INTERLEAVE {0}: %s\n", E(setpol(INTERLEAVE, &one, 2)));
	r = getpol(&mode, m, 200, NULL, 0);
	say("get: maxnode 200: %s words %#lx %#lx %#lx %#lx %#lx\n", E(r), m[0], m[1], m[2], m[3], m[4]);
	say("get: maxnode a page of bits + 66: %s\n", E(getpol(&mode, m, PG * 8 + 66, NULL, 0)));
	m[0] = 7;
	r = getpol(&mode, m, ~0UL, NULL, 0);
	say("get: maxnode ~0 (rounds to 0 bytes): %s mask %#lx\n", E(r), m[0]);
	say("set DEFAULT: %s\n", E(setpol(DEFAULT, NULL, 0)));
	show("back to default", NULL);
	say("F_NODE under DEFAULT: %s\n", E(getpol(&node, NULL, 0, NULL, F_NODE)));
}

static void vma_policy(void)
{
	unsigned long one = 1, eight = 8;
	/* six pages between two PROT_NONE guards: no neighbour merges with them */
	char *m = (char *)mmap(NULL, 8 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) + PG;
	mprotect(m - PG, PG, PROT_NONE);
	mprotect(m + 6 * PG, PG, PROT_NONE);
	int node = -1;
#define vmas() vmas_in(m, m + 6 * PG)

	say("mbind BIND pages 1-2: %s\n", E(mbind_(m + PG, 2 * PG, BIND, &one, 2, 0)));
	show("page 0", m);
	show("page 1", m + PG);
	show("page 2", m + 2 * PG);
	show("page 3", m + 3 * PG);
	say("VMAs: %d\n", vmas());
	long r = mbind_(m + PG, 2 * PG, BIND, &one, 2, MF_STRICT | MF_MOVE);
	say("mbind the same again, STRICT|MOVE: %s, VMAs: %d\n", E(r), vmas());
	say("mbind INTERLEAVE|STATIC {3} page 2: %s\n", E(mbind_(m + 2 * PG, PG, INTERLEAVE | F_STATIC, &eight, 64, 0)));
	say("mbind INTERLEAVE|STATIC {0,3} page 2: %s\n", E(mbind_(m + 2 * PG, PG, INTERLEAVE | F_STATIC, (unsigned long[]){ 9 }, 64, 0)));
	show("page 2 now", m + 2 * PG);
	say("VMAs: %d\n", vmas());
	show("task still", NULL);
	m[PG] = 1;
	r = getpol(&node, NULL, 0, m + PG, F_NODE | F_ADDR);
	say("F_NODE|F_ADDR page 1: %s node %d\n", E(r), node);

	/* home node */
	say("home node 0 on pages 1-2: %s\n", E(syscall(SYS_set_mempolicy_home_node, m + PG, PG, 0, 0)));
	say("home node 0 over the INTERLEAVE page: %s\n", E(syscall(SYS_set_mempolicy_home_node, m + PG, 2 * PG, 0, 0)));
	say("home node 0, no policy in range: %s\n", E(syscall(SYS_set_mempolicy_home_node, m + 4 * PG, PG, 0, 0)));
	say("home node 1: %s\n", E(syscall(SYS_set_mempolicy_home_node, m + PG, PG, 1, 0)));
	say("home node 5000: %s\n", E(syscall(SYS_set_mempolicy_home_node, m + PG, PG, 5000, 0)));
	say("home node flags 1: %s\n", E(syscall(SYS_set_mempolicy_home_node, m + PG, PG, 0, 1)));
	say("home node unaligned: %s\n", E(syscall(SYS_set_mempolicy_home_node, m + 1, PG, 0, 0)));
	say("home node len 0: %s\n", E(syscall(SYS_set_mempolicy_home_node, m + PG, 0, 0, 0)));
	show("page 1 after home node", m + PG);

	/* fork keeps both */
	say("set PREFERRED {0}: %s\n", E(setpol(PREFERRED, &one, 2)));
	pid_t c = fork();
	if (c == 0) {
		show("child task", NULL);
		show("child page 1", m + PG);
		_exit(0);
	}
	waitpid(c, NULL, 0);
	say("set DEFAULT: %s\n", E(setpol(DEFAULT, NULL, 0)));

	/* errors and holes */
	say("mbind unaligned: %s\n", E(mbind_(m + 1, PG, BIND, &one, 2, 0)));
	say("mbind flags 8: %s\n", E(mbind_(m, PG, BIND, &one, 2, 8)));
	say("mbind mode 9: %s\n", E(mbind_(m, PG, 9, &one, 2, 0)));
	say("mbind mode 1<<32 | BIND: %s\n", E(mbind_(m, PG, (1UL << 32) | BIND, &one, 2, 0)));
	say("mbind len 0: %s\n", E(mbind_(m, 0, BIND, &one, 2, 0)));
	say("mbind wrapping: %s\n", E(mbind_(m, -4 * PG, BIND, &one, 2, 0)));
	say("mbind len ~0 (aligns to 0): %s\n", E(mbind_(m, ~0UL, BIND, &one, 2, 0)));
	say("mbind BIND {1}: %s\n", E(mbind_(m, PG, BIND, (unsigned long[]){ 2 }, 64, 0)));
	say("mbind bad nodemask: %s\n", E(mbind_(m, PG, BIND, BAD, 64, 0)));
	say("mbind huge maxnode: %s\n", E(mbind_(m, PG, BIND, &one, 1UL << 40, 0)));
	munmap(m + 4 * PG, PG);
	say("mbind BIND over a hole: %s\n", E(mbind_(m + 3 * PG, 3 * PG, BIND, &one, 2, 0)));
	say("mbind BIND over a hole, STRICT: %s\n", E(mbind_(m + 3 * PG, 3 * PG, BIND, &one, 2, MF_STRICT)));
	say("mbind BIND from a hole: %s\n", E(mbind_(m + 4 * PG, 2 * PG, BIND, &one, 2, 0)));
	say("mbind DEFAULT over a hole: %s\n", E(mbind_(m, 6 * PG, DEFAULT, NULL, 0, 0)));
	show("page 1 after DEFAULT", m + PG);
	say("VMAs: %d\n", vmas());
	say("mbind DEFAULT, all hole: %s\n", E(mbind_(m + 4 * PG, PG, DEFAULT, NULL, 0, 0)));
	say("get F_ADDR in the hole: %s\n", E(getpol(&node, NULL, 0, m + 4 * PG, F_ADDR)));
	say("get F_ADDR, bad address: %s\n", E(getpol(&node, NULL, 0, BAD, F_ADDR)));
	char *none = mmap(NULL, PG, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	say("F_NODE|F_ADDR on PROT_NONE: %s\n", E(getpol(&node, NULL, 0, none, F_NODE | F_ADDR)));
	say("mbind on PROT_NONE: %s\n", E(mbind_(none, PG, BIND, &one, 2, 0)));
	/* a new mapping over an mbind range starts without a policy */
	say("mbind page 0: %s\n", E(mbind_(m, PG, BIND, &one, 2, 0)));
	mmap(m, PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	show("page 0 mapped again", m);
}

static void migrate(void)
{
	unsigned long one = 1, two = 2, zero = 0;
	char *m = mmap(NULL, 3 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	say("migrate_pages {0} -> {0}: %s\n", E(syscall(SYS_migrate_pages, 0, 64, &one, &one)));
	say("migrate_pages to {}: %s\n", E(syscall(SYS_migrate_pages, 0, 64, &one, &zero)));
	say("migrate_pages to {1}: %s\n", E(syscall(SYS_migrate_pages, 0, 64, &one, &two)));
	say("migrate_pages pid 99999: %s\n", E(syscall(SYS_migrate_pages, 99999, 64, &one, &one)));
	say("migrate_pages bad old: %s\n", E(syscall(SYS_migrate_pages, 0, 64, BAD, &one)));
	say("migrate_pages huge maxnode: %s\n", E(syscall(SYS_migrate_pages, 0, 1UL << 20, &one, &one)));
	say("migrate_pages self by pid: %s\n", E(syscall(SYS_migrate_pages, getpid(), 64, &one, &one)));

	m[0] = 1;	/* page 0 present, 1 never touched, 2 unmapped */
	munmap(m + 2 * PG, PG);
	void *pages[4] = { m, m + PG, m + 2 * PG, BAD };
	int nodes[4] = { 0, 0, 0, 0 }, st[4] = { 7, 7, 7, 7 };
	long r = syscall(SYS_move_pages, 0, 4, pages, NULL, st, 0);
	say("move_pages stat: %s status %d %d %d %d\n", E(r), st[0], st[1], st[2], st[3]);
	memset(st, 7, sizeof st);
	r = syscall(SYS_move_pages, 0, 4, pages, nodes, st, MF_MOVE);
	say("move_pages to 0: %s status %d %d %d %d\n", E(r), st[0], st[1], st[2], st[3]);
	nodes[1] = 1;
	st[0] = st[1] = 7;
	r = syscall(SYS_move_pages, 0, 2, pages, nodes, st, 0);
	say("move_pages page 1 to node 1: %s status %d %d\n", E(r), st[0], st[1]);
	nodes[1] = -1;
	say("move_pages to node -1: %s\n", E(syscall(SYS_move_pages, 0, 2, pages, nodes, st, 0)));
	nodes[1] = 5000;
	say("move_pages to node 5000: %s\n", E(syscall(SYS_move_pages, 0, 2, pages, nodes, st, 0)));
	say("move_pages flags 8: %s\n", E(syscall(SYS_move_pages, 0, 1, pages, NULL, st, 8)));
	say("move_pages pid 99999: %s\n", E(syscall(SYS_move_pages, 99999, 1, pages, NULL, st, 0)));
	say("move_pages bad pages: %s\n", E(syscall(SYS_move_pages, 0, 1, BAD, NULL, st, 0)));
	say("move_pages bad status: %s\n", E(syscall(SYS_move_pages, 0, 1, pages, NULL, BAD, 0)));
	say("move_pages bad nodes: %s\n", E(syscall(SYS_move_pages, 0, 1, pages, BAD, st, 0)));
	say("move_pages count 0: %s\n", E(syscall(SYS_move_pages, 0, 0, BAD, NULL, BAD, 0)));
}

/* "bound": as many distinct policies as a guest can make (node 0 and two nonexistent nodes, MPOL_F_STATIC_NODES keeps them) */
static void bound(void)
{
	unsigned long m[16], one = 1;
	int ok = 0;
	const char *err = "none";
	say("BIND {0} first: %s\n", E(setpol(BIND, &one, 2)));
	for (int i = 1; i < 100 && !strcmp(err, "none"); i++)
		for (int j = 1; j < 100; j++) {
			memset(m, 0, sizeof m);
			m[0] = 1;
			m[i / 64] |= 1UL << (i % 64);
			m[1 + j / 64 + 2] |= 1UL << (j % 64);
			if (setpol(BIND | F_STATIC, m, 1025) == 0)
				ok++;
			else {
				err = errname(errno);
				break;
			}
		}
	say("distinct policies: %d, then %s\n", ok, err);
	say("a policy made before: %s\n", E(setpol(BIND, &one, 2)));
}

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "all";
	if (!strcmp(what, "task") || !strcmp(what, "all"))
		task_policy();
	if (!strcmp(what, "vma") || !strcmp(what, "all"))
		vma_policy();
	if (!strcmp(what, "migrate") || !strcmp(what, "all"))
		migrate();
	if (!strcmp(what, "bound"))
		bound();
	return 0;
}

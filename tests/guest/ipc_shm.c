#define _GNU_SOURCE
// SPDX-License-Identifier: GPL-2.0
/*
 * System V shared memory, natively and in the sandbox: keys, attach and
 * detach, nattch across fork, exec and exit, IPC_RMID while attached, the
 * control commands, /proc's view, and hostile arguments. Output never
 * shows ids, pids or times (they differ between runs), only how they relate.
 *   ipc_shm basic | attach | hostile | limit | procs | remap
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ipc.h"

#define PG 4096

static const char *self;

static long nattch(int id)
{
	struct shmid_ds ds;

	return shmctl(id, IPC_STAT, &ds) < 0 ? -errno : (long)ds.shm_nattch;
}

/* Lines of /proc/sysvipc/shm naming id, so that other users' segments do not matter. */
static int proc_has(int id)
{
	char line[512];
	int n = 0, key, sid;
	FILE *f = fopen("/proc/sysvipc/shm", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof line, f))
		if (sscanf(line, "%d %d", &key, &sid) == 2 && sid == id)
			n++;
	fclose(f);
	return n;
}

static void basic(void)
{
	int key = 0x5e570000 | (getpid() & 0xffff);
	int id = shmget(key, 3 * PG + 5, IPC_CREAT | IPC_EXCL | 0600);
	struct shmid_ds ds;

	say("create: %s\n", id >= 0 ? "ok" : ipc_err(errno));
	say("same key: %s\n", shmget(key, 100, 0) == id ? "same id" : ipc_err(errno));
	chk("excl again", shmget(key, 100, IPC_CREAT | IPC_EXCL | 0600));
	chk("bigger than it", shmget(key, 4 * PG, 0));
	chk("missing key", shmget(key + 1, 100, 0600));
	chk("size 0 new", shmget(IPC_PRIVATE, 0, 0600));
	say("private differs: %s\n", yesno(shmget(IPC_PRIVATE, PG, 0600) != id));
	if (shmctl(id, IPC_STAT, &ds) == 0)
		say("stat: size %zu mode %o nattch %lu cpid-self %s lpid %d key-same %s atime %s\n", ds.shm_segsz,
		    ds.shm_perm.mode, (unsigned long)ds.shm_nattch, yesno(ds.shm_cpid == getpid()), ds.shm_lpid,
		    yesno(ds.shm_perm.__key == key), ds.shm_atime ? "set" : "0");
	char *p = shmat(id, NULL, 0);
	say("attach: %s aligned %s\n", p == (void *)-1 ? ipc_err(errno) : "ok", yesno(((uintptr_t)p & (PG - 1)) == 0));
	strcpy(p, "parent");
	strcpy(p + 3 * PG, "tail");	/* the last page, partly beyond the size */
	say("nattch after attach: %ld\n", nattch(id));
	shmctl(id, IPC_STAT, &ds);
	say("lpid-self %s atime %s dtime %s\n", yesno(ds.shm_lpid == getpid()), ds.shm_atime ? "set" : "0",
	    ds.shm_dtime ? "set" : "0");
	pid_t c = fork();
	if (c == 0) {
		say("child sees: %s %s, nattch %ld\n", p, p + 3 * PG, nattch(id));
		strcpy(p, "child");
		_exit(0);
	}
	say("child exit %d\n", wait_child(c));
	say("parent sees: %s, nattch %ld\n", p, nattch(id));
	char *q = shmat(id, NULL, SHM_RDONLY);
	say("second attach rdonly: %s same data %s nattch %ld\n", q == (void *)-1 ? ipc_err(errno) : "ok",
	    yesno(q != (void *)-1 && !strcmp(q, "child")), nattch(id));
	c = fork();
	if (c == 0) {
		q[0] = 'x';	/* read-only: SIGSEGV */
		_exit(0);
	}
	say("write to rdonly: status %d\n", wait_child(c));
	chk("mprotect rdonly writable", mprotect(q, PG, PROT_READ | PROT_WRITE));
	chk("mprotect rdonly exec", mprotect(q, PG, PROT_READ | PROT_EXEC));
	chk("mprotect rdonly back", mprotect(q, PG, PROT_READ));
	chk("detach second", shmdt(q));
	chk("detach again", shmdt(q));
	chk("detach unaligned", shmdt(p + 1));
	chk("detach inside", shmdt(p + PG));
	say("nattch %ld\n", nattch(id));
	/* munmap of a piece splits it: Linux counts each VMA */
	chk("munmap middle page", munmap(p + PG, PG));
	say("nattch after split %ld\n", nattch(id));
	chk("detach split", shmdt(p));
	shmctl(id, IPC_STAT, &ds);
	say("nattch after detach %ld dtime %s\n", nattch(id), ds.shm_dtime ? "set" : "0");
	/* mode changes and ownership */
	shmctl(id, IPC_STAT, &ds);
	ds.shm_perm.mode = 0640;
	chk("set", shmctl(id, IPC_SET, &ds));
	shmctl(id, IPC_STAT, &ds);
	say("mode now %o ctime %s\n", ds.shm_perm.mode, ds.shm_ctime ? "set" : "0");
	/* remove while attached: SHM_DEST, key IPC_PRIVATE, still there until the last detach */
	p = shmat(id, NULL, 0);
	chk("rmid attached", shmctl(id, IPC_RMID, NULL));
	shmctl(id, IPC_STAT, &ds);
	say("after rmid: mode %o key %d nattch %lu in proc %d\n", ds.shm_perm.mode, ds.shm_perm.__key,
	    (unsigned long)ds.shm_nattch, proc_has(id));
	say("key gone: %s\n", shmget(key, 100, 0) < 0 ? ipc_err(errno) : "found");
	say("data kept: %s\n", p);
	chk("detach last", shmdt(p));
	chk("stat after", shmctl(id, IPC_STAT, &ds));
	say("in proc %d\n", proc_has(id));
}

static void attach(void)
{
	int id = shmget(IPC_PRIVATE, 2 * PG, 0700);
	struct shmid_ds ds;

	char *probe = shmat(id, NULL, 0);
	shmdt(probe);
	chk("unaligned no rnd", (long)shmat(id, probe + 10, 0));
	char *p = shmat(id, probe + 10, SHM_RND);
	say("rnd: %s\n", p == probe ? "rounded" : p == (void *)-1 ? ipc_err(errno) : "elsewhere");
	chk("overlap", (long)shmat(id, probe, 0));
	chk("remap no addr", (long)shmat(id, NULL, SHM_REMAP));
	chk("remap rnd to 0", (long)shmat(id, (void *)10, SHM_RND | SHM_REMAP));
	strcpy(p, "first");
	char *r = shmat(id, probe, SHM_REMAP);
	say("remap: %s nattch %ld data %s\n", r == probe ? "same place" : ipc_err(errno), nattch(id), r);
	void *x = shmat(id, NULL, SHM_EXEC | SHM_RDONLY);
	say("exec attach: %s\n", x == (void *)-1 ? ipc_err(errno) : "ok");
	shmdt(x);
	/* another guest process attaches by id: not a fork child, it has exec'd */
	pid_t c = fork();
	if (c == 0) {
		char arg[32];
		snprintf(arg, sizeof arg, "%d", id);
		execl(self, self, "other", arg, (char *)NULL);
		_exit(127);
	}
	say("other exit %d, data %s\n", wait_child(c), p);
	/* a child that execs lets its inherited attachment go */
	c = fork();
	if (c == 0) {
		execl(self, self, "noop", (char *)NULL);
		_exit(127);
	}
	wait_child(c);
	say("after exec child: nattch %ld\n", nattch(id));
	/* exit with the attachment of a removed segment: it goes with the last one */
	int id2 = shmget(IPC_PRIVATE, PG, 0600);
	int pipefd[2];
	if (pipe(pipefd))
		return;
	c = fork();
	if (c == 0) {
		char *m = shmat(id2, NULL, 0);
		strcpy(m, "kept");
		if (write(pipefd[1], "x", 1) != 1)
			_exit(2);
		pause();
		_exit(0);
	}
	char ch;
	if (read(pipefd[0], &ch, 1) != 1)
		return;
	say("child attached: nattch %ld\n", nattch(id2));
	chk("rmid", shmctl(id2, IPC_RMID, NULL));
	say("removed, child still attached: nattch %ld in proc %d\n", nattch(id2), proc_has(id2));
	kill(c, SIGKILL);
	say("killed: %d\n", wait_child(c));
	chk("stat of gone", shmctl(id2, IPC_STAT, &ds));
	say("in proc %d\n", proc_has(id2));
	shmdt(p);
	shmctl(id, IPC_RMID, NULL);
}

static void other(int id)
{
	char *p = shmat(id, NULL, 0);

	if (p == (void *)-1) {
		say("other: %s\n", ipc_err(errno));
		_exit(1);
	}
	strcpy(p, "from other");
	_exit(0);
}

static void hostile(void)
{
	int id = shmget(IPC_PRIVATE, PG, 0600);
	struct shmid_ds ds;

	chk("stat bad buf", shmctl(id, IPC_STAT, (void *)1));
	chk("set bad buf", shmctl(id, IPC_SET, (void *)8));
	chk("info bad buf", shmctl(0, IPC_INFO, (void *)16));
	chk("shm_info bad buf", shmctl(0, SHM_INFO, (void *)16));
	chk("stat kernel buf", shmctl(id, IPC_STAT, (void *)0xffffffffff600000UL));
	chk("size max", shmget(IPC_PRIVATE, SIZE_MAX, 0600));
	chk("size shmmax+1", shmget(IPC_PRIVATE, ~0UL - (1UL << 24) + 1, 0600));
	chk("size shmmax", shmget(IPC_PRIVATE, ~0UL - (1UL << 24), 0600));
	chk("size 1T", shmget(IPC_PRIVATE, 1UL << 40, 0600));
	chk("negative id attach", (long)shmat(-1, NULL, 0));
	chk("negative id stat", shmctl(-5, IPC_STAT, &ds));
	chk("negative cmd", shmctl(id, -1, &ds));
	chk("unknown cmd", shmctl(id, 99, &ds));
	chk("forged seq", shmctl(id + 32768, IPC_STAT, &ds));
	chk("forged index", shmctl(id + 1000, IPC_STAT, &ds));
	chk("attach forged", (long)shmat(id ^ 0x40000000, NULL, 0));
	chk("attach beyond user space", (long)shmat(id, (void *)0x800000000000UL, 0));
	chk("attach wrapping", (long)shmat(id, (void *)(~0UL & ~(PG - 1UL)), 0));
	chk("detach null", shmdt(NULL));
	chk("detach beyond", shmdt((void *)0x800000000000UL));
	chk("stat of index -1", shmctl(-1, SHM_STAT, &ds));
	chk("stat of index 40000", shmctl(40000, SHM_STAT_ANY, &ds));
	chk("rmid", shmctl(id, IPC_RMID, NULL));
	chk("removed stat", shmctl(id, IPC_STAT, &ds));
	chk("removed attach", (long)shmat(id, NULL, 0));
	chk("removed rmid", shmctl(id, IPC_RMID, NULL));
	/* SHM_STAT: an index, returning the id */
	id = shmget(IPC_PRIVATE, PG, 0600);
	int found = 0;
	struct shminfo info;
	int max = shmctl(0, IPC_INFO, (struct shmid_ds *)&info);
	say("info: shmmax %lu shmmin %lu shmmni %lu shmall %lu max index ok %s\n", info.shmmax, info.shmmin,
	    info.shmmni, info.shmall, yesno(max >= id % 32768));
	for (int i = 0; i <= max; i++)
		if (shmctl(i, SHM_STAT, &ds) == id || shmctl(i, SHM_STAT_ANY, &ds) == id)
			found++;
	say("stat by index found %d\n", found);
	int si[16] = { 0 };	/* struct shm_info: used_ids first (musl calls it __used_ids) */
	long r = shmctl(0, SHM_INFO, (struct shmid_ds *)si);
	say("shm_info: %s used ids >= 1 %s\n", r >= 0 ? "ok" : ipc_err(errno), yesno(si[0] >= 1));
	shmctl(id, IPC_RMID, NULL);
	FILE *f = fopen("/proc/sys/kernel/shmmni", "r");
	unsigned long v = 0;
	if (f && fscanf(f, "%lu", &v) == 1)
		say("proc shmmni %lu\n", v);
	if (f)
		fclose(f);
	f = fopen("/proc/sys/kernel/shmmax", "r");
	if (f && fscanf(f, "%lu", &v) == 1)
		say("proc shmmax %lu\n", v);
	if (f)
		fclose(f);
}

/* Segments until the table is full: SHMMNI of them with the ones already there. */
static void limit(void)
{
	static int ids[8192];
	int n = 0, used = -1;
	char line[512];
	FILE *f = fopen("/proc/sysvipc/shm", "r");

	while (f && fgets(line, sizeof line, f))
		used++;
	if (f)
		fclose(f);
	for (; n < 8192; n++)
		if ((ids[n] = shmget(IPC_PRIVATE, 1, 0600)) < 0)
			break;
	say("stopped with %s, all %s\n", n < 8192 ? ipc_err(errno) : "none", yesno(n + used == 4096));
	for (int i = 0; i < n; i++)
		shmctl(ids[i], IPC_RMID, NULL);
	say("again: %s\n", shmget(IPC_PRIVATE, 1, 0600) >= 0 ? "ok" : ipc_err(errno));
}

/* Under pvx run --memory=64M: segments are charged when made, and given back when they go. */
static void mem(void)
{
	chk("128M", shmget(IPC_PRIVATE, 128 << 20, 0600));
	for (int i = 0; i < 3; i++) {
		int id = shmget(IPC_PRIVATE, 40 << 20, 0600);
		char *p = id < 0 ? (void *)-1 : shmat(id, NULL, 0);
		say("40M round %d: %s\n", i, p == (void *)-1 ? ipc_err(errno) : "ok");
		if (p == (void *)-1)
			continue;
		memset(p, 1, 1 << 20);
		shmctl(id, IPC_RMID, NULL);	/* still attached: kept */
		pid_t c = fork();	/* the child's attachment costs nothing more */
		if (c == 0)
			_exit(p[100] == 1 ? 0 : 1);
		say("child %d\n", wait_child(c));
		shmdt(p);
	}
}

/*
 * remap_file_pages of a segment: while it lives the mapping is the segment's
 * (nattch stays 1, the data is there); once IPC_RMID'd, the remap closes its
 * last attachment first, so the segment goes and the remap fails (EINVAL on
 * Linux since 6.12; LTP's shmctl05 loops until it does), the range unmapped.
 */
static void remap(void)
{
	int id = shmget(IPC_PRIVATE, 2 * PG, IPC_CREAT | 0600);
	char *p = shmat(id, NULL, 0);

	if (id < 0 || p == (void *)-1) {
		say("setup: %s\n", ipc_err(errno));
		return;
	}
	p[0] = 'a';
	p[PG] = 'b';
	chk("remap page 0 to 1", syscall(SYS_remap_file_pages, p, PG, 0, 1, 0));
	say("page 0 now %c, nattch %ld\n", p[0], nattch(id));
	chk("remap back", syscall(SYS_remap_file_pages, p, PG, 0, 0, 0));
	say("page 0 now %c, nattch %ld\n", p[0], nattch(id));
	chk("rmid", shmctl(id, IPC_RMID, NULL));
	long r = syscall(SYS_remap_file_pages, p, 2 * PG, 0, 0, 0);
	say("remap after rmid: %s\n", r < 0 ? (errno == EINVAL || errno == EIDRM ? "EINVAL or EIDRM" : ipc_err(errno)) : "ok");
	say("mapped after: %s\n", msync(p, PG, MS_ASYNC) < 0 ? ipc_err(errno) : "yes");
	say("stat of gone: %s\n", nattch(id) < 0 ? ipc_err(-(int)nattch(id)) : "still there");
}

int main(int argc, char **argv)
{
	self = argv[0];
	if (argc > 2 && !strcmp(argv[1], "other"))
		other(atoi(argv[2]));
	if (argc > 1 && !strcmp(argv[1], "noop"))
		return 0;
	if (argc > 1 && !strcmp(argv[1], "basic"))
		basic();
	else if (argc > 1 && !strcmp(argv[1], "attach"))
		attach();
	else if (argc > 1 && !strcmp(argv[1], "hostile"))
		hostile();
	else if (argc > 1 && !strcmp(argv[1], "mem"))
		mem();
	else if (argc > 1 && !strcmp(argv[1], "limit"))
		limit();
	else if (argc > 1 && !strcmp(argv[1], "remap"))
		remap();
	else
		return 2;
	return 0;
}

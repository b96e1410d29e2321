// SPDX-License-Identifier: GPL-2.0
/*
 * System V semaphores, natively and in the sandbox: keys, values, atomic
 * semop, blocking with wakeups, timeouts, signals and removal, SEM_UNDO at
 * exit, the control commands, hostile arguments. Output never shows ids,
 * pids or times.
 *   ipc_sem basic | block | undo | hostile | hang
 */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/sem.h>
#include <sys/syscall.h>
#include <time.h>

#include "ipc.h"

union semun {
	int val;
	struct semid_ds *buf;
	unsigned short *array;
	void *p;
};

static int sctl(int id, int num, int cmd, long arg)
{
	return (int)syscall(SYS_semctl, id, num, cmd, arg);
}

static int op1(int id, int num, int op, int flg)
{
	struct sembuf b = { (unsigned short)num, (short)op, (short)flg };

	return semop(id, &b, 1);
}

/* Wait (up to 10 s) until semaphore num of id has n waiters of cmd (GETNCNT or GETZCNT). */
static int wait_count(int id, int num, int cmd, int n)
{
	for (int i = 0; i < 10000; i++) {
		if (sctl(id, num, cmd, 0) == n)
			return 1;
		usleep(1000);
	}
	return 0;
}

static int in_proc(int id)
{
	char line[512];
	int n = 0, key, sid;
	FILE *f = fopen("/proc/sysvipc/sem", "r");

	while (f && fgets(line, sizeof line, f))
		if (sscanf(line, "%d %d", &key, &sid) == 2 && sid == id)
			n++;
	if (f)
		fclose(f);
	return n;
}

static void basic(void)
{
	int key = 0x5e5a0000 | (getpid() & 0xffff);
	int id = semget(key, 3, IPC_CREAT | IPC_EXCL | 0600);
	struct semid_ds ds;
	unsigned short all[3] = { 0 };

	say("create: %s\n", id >= 0 ? "ok" : ipc_err(errno));
	say("same key: %s\n", semget(key, 2, 0) == id ? "same id" : ipc_err(errno));
	say("same key nsems 0: %s\n", semget(key, 0, 0) == id ? "same id" : ipc_err(errno));
	chk("more sems than it", semget(key, 4, 0));
	chk("excl", semget(key, 3, IPC_CREAT | IPC_EXCL | 0600));
	chk("missing", semget(key + 1, 1, 0600));
	chk("nsems 0 new", semget(IPC_PRIVATE, 0, 0600));
	chk("nsems > SEMMSL", semget(IPC_PRIVATE, 32001, 0600));
	chk("nsems -1", semget(IPC_PRIVATE, -1, 0600));
	say("initial: %d %d %d\n", sctl(id, 0, GETVAL, 0), sctl(id, 1, GETVAL, 0), sctl(id, 2, GETVAL, 0));
	chk("setval", sctl(id, 0, SETVAL, 5));
	chk("setval 32767", sctl(id, 1, SETVAL, 32767));
	chk("setval 32768", sctl(id, 1, SETVAL, 32768));
	chk("setval -1", sctl(id, 1, SETVAL, -1));
	chk("setval num 3", sctl(id, 3, SETVAL, 1));
	chk("getval num -1", sctl(id, -1, GETVAL, 0));
	say("getpid is self: %s\n", yesno(sctl(id, 0, GETPID, 0) == getpid()));
	say("getpid untouched: %d\n", sctl(id, 2, GETPID, 0));
	chk("getall", sctl(id, 0, GETALL, (long)all));
	say("all: %d %d %d\n", all[0], all[1], all[2]);
	all[0] = 1; all[1] = 2; all[2] = 3;
	chk("setall", sctl(id, 0, SETALL, (long)all));
	say("after setall: %d %d %d\n", sctl(id, 0, GETVAL, 0), sctl(id, 1, GETVAL, 0), sctl(id, 2, GETVAL, 0));
	all[1] = 40000;
	chk("setall past SEMVMX", sctl(id, 0, SETALL, (long)all));
	say("unchanged: %d\n", sctl(id, 1, GETVAL, 0));
	/* atomic: the second op cannot go, so neither does the first */
	struct sembuf two[2] = { { 0, -1, IPC_NOWAIT }, { 1, -3, IPC_NOWAIT } };
	chk("atomic nowait", semop(id, two, 2));
	say("atomic left: %d %d\n", sctl(id, 0, GETVAL, 0), sctl(id, 1, GETVAL, 0));
	two[1].sem_op = -2;
	chk("atomic both", semop(id, two, 2));
	say("both: %d %d\n", sctl(id, 0, GETVAL, 0), sctl(id, 1, GETVAL, 0));
	struct sembuf same[3] = { { 2, 5, 0 }, { 2, -7, IPC_NOWAIT }, { 2, 1, 0 } };
	chk("same sem thrice", semop(id, same, 3));
	say("sem 2: %d\n", sctl(id, 2, GETVAL, 0));
	chk("wait zero nowait", op1(id, 2, 0, IPC_NOWAIT));
	chk("zero ok", op1(id, 0, 0, IPC_NOWAIT));
	chk("past SEMVMX", op1(id, 2, 32767, 0));
	chk("EFBIG", op1(id, 3, 1, 0));
	chk("EFBIG max", op1(id, 65535, 1, 0));
	chk("stat", sctl(id, 0, IPC_STAT, (long)&ds));
	say("stat: nsems %lu mode %o otime %s ctime %s\n", (unsigned long)ds.sem_nsems, ds.sem_perm.mode,
	    ds.sem_otime ? "set" : "0", ds.sem_ctime ? "set" : "0");
	ds.sem_perm.mode = 0640;
	chk("set", sctl(id, 0, IPC_SET, (long)&ds));
	sctl(id, 0, IPC_STAT, (long)&ds);
	say("mode now %o\n", ds.sem_perm.mode);
	struct seminfo si;
	int max = sctl(0, 0, IPC_INFO, (long)&si);
	say("info: semmsl %d semmns %d semopm %d semmni %d semvmx %d semaem %d max ok %s\n", si.semmsl, si.semmns,
	    si.semopm, si.semmni, si.semvmx, si.semaem, yesno(max >= id % 32768));
	int found = 0;
	for (int i = 0; i <= max; i++)
		if (sctl(i, 0, SEM_STAT, (long)&ds) == id)
			found++;
	say("sem_stat found %d; in proc %d\n", found, in_proc(id));
	chk("sem_info", sctl(0, 0, SEM_INFO, (long)&si));
	FILE *f = fopen("/proc/sys/kernel/sem", "r");
	int a, b, c, d;
	if (f && fscanf(f, "%d %d %d %d", &a, &b, &c, &d) == 4)
		say("proc sem: %d %d %d %d\n", a, b, c, d);
	if (f)
		fclose(f);
	chk("rmid", sctl(id, 0, IPC_RMID, 0));
	chk("after rmid", sctl(id, 0, GETVAL, 0));
	say("in proc %d\n", in_proc(id));
}

static void on_alarm(int s)
{
	(void)s;
}

static void block(void)
{
	int id = semget(IPC_PRIVATE, 2, 0600);
	pid_t c = fork();

	if (c == 0) {
		int r = op1(id, 0, -2, 0);
		say("child: %s, value %d\n", r < 0 ? ipc_err(errno) : "got 2", sctl(id, 0, GETVAL, 0));
		_exit(0);
	}
	say("ncnt 1: %s\n", yesno(wait_count(id, 0, GETNCNT, 1)));
	op1(id, 0, 1, 0);
	usleep(20000);
	say("one is not enough: ncnt %d\n", sctl(id, 0, GETNCNT, 0));
	op1(id, 0, 1, 0);
	int st = wait_child(c);
	say("child exit %d, ncnt %d\n", st, sctl(id, 0, GETNCNT, 0));
	/* waiting for zero */
	sctl(id, 1, SETVAL, 1);
	c = fork();
	if (c == 0) {
		int r = op1(id, 1, 0, 0);
		say("zero child: %s\n", r < 0 ? ipc_err(errno) : "saw zero");
		_exit(0);
	}
	say("zcnt 1: %s\n", yesno(wait_count(id, 1, GETZCNT, 1)));
	op1(id, 1, -1, 0);
	say("zero child exit %d\n", wait_child(c));
	/* timeout */
	struct sembuf b = { 0, -1, 0 };
	struct timespec ts = { 0, 50 * 1000 * 1000 };
	chk("semtimedop 50ms", semtimedop(id, &b, 1, &ts));
	ts.tv_nsec = 0;
	chk("semtimedop 0", semtimedop(id, &b, 1, &ts));
	/* a signal with a handler: EINTR, even with SA_RESTART */
	struct sigaction sa = { .sa_handler = on_alarm, .sa_flags = SA_RESTART };
	sigaction(SIGALRM, &sa, NULL);
	alarm(1);
	chk("semop interrupted", op1(id, 0, -1, 0));
	/* removal while another process waits: EIDRM */
	c = fork();
	if (c == 0) {
		int r = op1(id, 0, -1, 0);
		say("waiter: %s\n", r < 0 ? ipc_err(errno) : "got it");
		_exit(0);
	}
	say("waiting: %s\n", yesno(wait_count(id, 0, GETNCNT, 1)));
	int rm = sctl(id, 0, IPC_RMID, 0);
	st = wait_child(c);
	chk("rmid", rm);
	say("waiter exit %d\n", st);
	/* SIGKILL of a waiter */
	id = semget(IPC_PRIVATE, 1, 0600);
	c = fork();
	if (c == 0) {
		op1(id, 0, -1, 0);
		_exit(0);
	}
	say("waiting: %s\n", yesno(wait_count(id, 0, GETNCNT, 1)));
	kill(c, SIGKILL);
	st = wait_child(c);
	say("killed %d, ncnt %d\n", st, sctl(id, 0, GETNCNT, 0));
	sctl(id, 0, IPC_RMID, 0);
}

static void undo(void)
{
	int id = semget(IPC_PRIVATE, 2, 0600);
	pid_t c;

	sctl(id, 0, SETVAL, 3);
	c = fork();
	if (c == 0) {
		op1(id, 0, -2, SEM_UNDO);
		op1(id, 1, 5, SEM_UNDO);
		op1(id, 1, -1, SEM_UNDO);
		_exit(0);
	}
	wait_child(c);
	say("after exit: %d %d\n", sctl(id, 0, GETVAL, 0), sctl(id, 1, GETVAL, 0));
	/* killed while holding: undone too */
	int p[2];
	if (pipe(p))
		return;
	c = fork();
	if (c == 0) {
		op1(id, 0, -3, SEM_UNDO);
		if (write(p[1], "x", 1) != 1)
			_exit(2);
		pause();
		_exit(0);
	}
	char ch;
	if (read(p[0], &ch, 1) != 1)
		return;
	say("held: %d\n", sctl(id, 0, GETVAL, 0));
	kill(c, SIGKILL);
	wait_child(c);
	say("after kill: %d\n", sctl(id, 0, GETVAL, 0));
	/* an undo that would go below 0 is clamped */
	c = fork();
	if (c == 0) {
		op1(id, 1, 2, SEM_UNDO);
		sctl(id, 1, SETVAL, 1);	/* clears the adjustment */
		op1(id, 0, 1, SEM_UNDO);
		sctl(id, 0, SETVAL, 0);	/* ... this one too */
		op1(id, 0, 2, SEM_UNDO);
		op1(id, 0, -2, 0);	/* someone else took them: the undo of -2 clamps at 0 */
		_exit(0);
	}
	wait_child(c);
	say("clamped: %d %d\n", sctl(id, 0, GETVAL, 0), sctl(id, 1, GETVAL, 0));
	/* a thread-less fork child does not inherit the parent's undo */
	op1(id, 1, 4, SEM_UNDO);
	c = fork();
	if (c == 0)
		_exit(0);
	wait_child(c);
	say("child exit kept parent's: %d\n", sctl(id, 1, GETVAL, 0));
	/* the undo of a removed set does not touch the new one */
	c = fork();
	if (c == 0) {
		op1(id, 0, 1, SEM_UNDO);
		sctl(id, 0, IPC_RMID, 0);
		int id2 = semget(IPC_PRIVATE, 1, 0600);
		say("new set: %d\n", sctl(id2, 0, GETVAL, 0));
		_exit(0);
	}
	say("child %d\n", wait_child(c));
	/* an undo past SEMAEM: ERANGE */
	id = semget(IPC_PRIVATE, 1, 0600);
	sctl(id, 0, SETVAL, 32767);
	chk("undo +32767", op1(id, 0, -32767, SEM_UNDO));
	chk("plain +1", op1(id, 0, 1, 0));
	chk("undo past SEMAEM", op1(id, 0, -1, SEM_UNDO | IPC_NOWAIT));
	sctl(id, 0, IPC_RMID, 0);
}

static void hostile(void)
{
	int id = semget(IPC_PRIVATE, 2, 0600);
	struct sembuf b = { 0, 1, 0 };
	struct timespec bad = { 0, 1000000000 }, neg = { -1, 0 };

	chk("semop NULL", semop(id, NULL, 1));
	chk("semop bad ptr", semop(id, (void *)1, 1));
	chk("semop nsops 0", semop(id, &b, 0));
	chk("semop nsops 501", (long)syscall(SYS_semop, id, &b, 501));
	chk("semop nsops huge", (long)syscall(SYS_semop, id, &b, SIZE_MAX));
	chk("semop nsops 2^32+1", (long)syscall(SYS_semop, id, &b, (1UL << 32) + 1));
	chk("semop negative id", semop(-1, &b, 1));
	chk("semop forged", semop(id + 32768, &b, 1));
	chk("semtimedop bad timeout", (long)syscall(SYS_semtimedop, id, &b, 1, (void *)8));
	chk("semtimedop nsec 1e9", semtimedop(id, &b, 1, &bad));
	chk("semtimedop negative", semtimedop(id, &b, 1, &neg));
	chk("stat bad buf", sctl(id, 0, IPC_STAT, 1));
	chk("set bad buf", sctl(id, 0, IPC_SET, 16));
	chk("getall bad", sctl(id, 0, GETALL, 8));
	chk("setall bad", sctl(id, 0, SETALL, 8));
	chk("info bad", sctl(0, 0, IPC_INFO, 8));
	chk("negative id stat", sctl(-3, 0, GETVAL, 0));
	chk("unknown cmd", sctl(id, 0, 99, 0));
	chk("negative cmd", sctl(id, 0, -1, 0));
	chk("sem_stat index -1", sctl(-1, 0, SEM_STAT, 0));
	chk("sem_stat index 40000", sctl(40000, 0, SEM_STAT_ANY, 0));
	chk("rmid", sctl(id, 0, IPC_RMID, 0));
	chk("removed getval", sctl(id, 0, GETVAL, 0));
	chk("removed semop", semop(id, &b, 1));
	chk("removed rmid", sctl(id, 0, IPC_RMID, 0));
	/* a big set: SEMMSL semaphores, all readable */
	id = semget(IPC_PRIVATE, 32000, 0600);
	unsigned short *all = calloc(32000, sizeof(*all));
	all[31999] = 7;
	chk("setall 32000", sctl(id, 0, SETALL, (long)all));
	say("last: %d\n", sctl(id, 31999, GETVAL, 0));
	sctl(id, 0, IPC_RMID, 0);
	/* 500 ops on one semaphore */
	id = semget(IPC_PRIVATE, 1, 0600);
	struct sembuf many[500];
	for (int i = 0; i < 500; i++)
		many[i] = (struct sembuf){ 0, (short)(i % 2 ? -1 : 2), 0 };
	chk("500 ops", semop(id, many, 500));
	say("value %d\n", sctl(id, 0, GETVAL, 0));
	sctl(id, 0, IPC_RMID, 0);
}

/* Processes blocked in semop when the sandbox ends: prints "ready", then the caller kills or we exit. */
static void hang(bool stay)
{
	int id = semget(IPC_PRIVATE, 1, 0600);

	for (int i = 0; i < 3; i++)
		if (fork() == 0) {
			op1(id, 0, -1, 0);
			_exit(0);
		}
	say(wait_count(id, 0, GETNCNT, 3) ? "ready\n" : "not ready\n");
	if (stay)	/* and pid 1 waits too, until the sandbox is killed */
		op1(id, 0, -1, 0);
	/* pid 1 (in the sandbox) exits with the set left behind: the waiters die with it */
}

int main(int argc, char **argv)
{
	const char *m = argc > 1 ? argv[1] : "";

	if (!strcmp(m, "basic"))
		basic();
	else if (!strcmp(m, "block"))
		block();
	else if (!strcmp(m, "undo"))
		undo();
	else if (!strcmp(m, "hostile"))
		hostile();
	else if (!strcmp(m, "hang"))
		hang(argc > 2);
	else
		return 2;
	return 0;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * System V message queues, natively and in the sandbox: type selection,
 * MSG_NOERROR/E2BIG, IPC_NOWAIT, MSG_COPY, blocking both ways with
 * wakeups, signals and removal, msg_qbytes, the control commands, hostile
 * arguments. Output never shows ids, pids or times.
 *   ipc_msg basic | block | hostile | hang
 */
#define _GNU_SOURCE
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/msg.h>
#include <sys/syscall.h>

#include "ipc.h"

#ifndef MSG_COPY
#define MSG_COPY 040000
#endif

struct mb {
	long type;
	char text[8200];
};

static int snd(int id, long type, const char *text, int flags)
{
	struct mb m = { .type = type };

	strcpy(m.text, text);
	return msgsnd(id, &m, strlen(text) + 1, flags);
}

/* Receive: what came, or the errno, as a line in out. */
static void rcv_str(char *out, size_t size_out, const char *what, int id, size_t size, long type, int flags)
{
	struct mb m = { 0 };
	ssize_t n = msgrcv(id, &m, size, type, flags);

	if (n < 0)
		snprintf(out, size_out, "%s: %s\n", what, ipc_err(errno));
	else
		snprintf(out, size_out, "%s: type %ld len %zd '%.*s'\n", what, m.type, n, (int)n, m.text);
}

static void rcv(const char *what, int id, size_t size, long type, int flags)
{
	char line[256];

	rcv_str(line, sizeof line, what, id, size, type, flags);
	say("%s", line);
}

static long qnum(int id)
{
	struct msqid_ds ds;

	return msgctl(id, IPC_STAT, &ds) < 0 ? -errno : (long)ds.msg_qnum;
}

static int in_proc(int id)
{
	char line[512];
	int n = 0, key, sid;
	FILE *f = fopen("/proc/sysvipc/msg", "r");

	while (f && fgets(line, sizeof line, f))
		if (sscanf(line, "%d %d", &key, &sid) == 2 && sid == id)
			n++;
	if (f)
		fclose(f);
	return n;
}

static void basic(void)
{
	int key = 0x5e5b0000 | (getpid() & 0xffff);
	int id = msgget(key, IPC_CREAT | IPC_EXCL | 0600);
	struct msqid_ds ds;

	say("create: %s\n", id >= 0 ? "ok" : ipc_err(errno));
	say("same key: %s\n", msgget(key, 0) == id ? "same id" : ipc_err(errno));
	chk("excl", msgget(key, IPC_CREAT | IPC_EXCL | 0600));
	chk("missing", msgget(key + 1, 0600));
	msgctl(id, IPC_STAT, &ds);
	say("stat: qbytes %lu qnum %lu cbytes %lu mode %o lspid %d stime %s\n", (unsigned long)ds.msg_qbytes,
	    (unsigned long)ds.msg_qnum, (unsigned long)ds.__msg_cbytes, ds.msg_perm.mode, ds.msg_lspid,
	    ds.msg_stime ? "set" : "0");
	snd(id, 3, "three", 0);
	snd(id, 1, "one", 0);
	snd(id, 2, "two", 0);
	snd(id, 5, "five", 0);
	snd(id, 1, "one again", 0);
	msgctl(id, IPC_STAT, &ds);
	say("after 5: qnum %lu cbytes %lu lspid-self %s stime %s\n", (unsigned long)ds.msg_qnum,
	    (unsigned long)ds.__msg_cbytes, yesno(ds.msg_lspid == getpid()), ds.msg_stime ? "set" : "0");
	rcv("copy 0", id, 100, 0, MSG_COPY | IPC_NOWAIT);
	rcv("copy 3", id, 100, 3, MSG_COPY | IPC_NOWAIT);
	rcv("copy 9", id, 100, 9, MSG_COPY | IPC_NOWAIT);
	rcv("copy waiting", id, 100, 0, MSG_COPY);
	rcv("copy except", id, 100, 0, MSG_COPY | IPC_NOWAIT | MSG_EXCEPT);
	rcv("copy small", id, 2, 0, MSG_COPY | IPC_NOWAIT);
	rcv("copy small noerror", id, 2, 0, MSG_COPY | IPC_NOWAIT | MSG_NOERROR);
	say("copies leave them: %ld\n", qnum(id));
	rcv("type 2", id, 100, 2, 0);
	rcv("type <= 4", id, 100, -4, 0);
	rcv("except 1", id, 100, 1, MSG_EXCEPT);
	rcv("too small", id, 3, 0, IPC_NOWAIT);
	rcv("noerror", id, 3, 0, MSG_NOERROR);
	rcv("type 7 nowait", id, 100, 7, IPC_NOWAIT);
	rcv("lowest", id, 100, LONG_MIN, 0);
	rcv("empty", id, 100, 0, IPC_NOWAIT);
	msgctl(id, IPC_STAT, &ds);
	say("drained: qnum %lu cbytes %lu lrpid-self %s rtime %s\n", (unsigned long)ds.msg_qnum,
	    (unsigned long)ds.__msg_cbytes, yesno(ds.msg_lrpid == getpid()), ds.msg_rtime ? "set" : "0");
	chk("zero-length", snd(id, 4, "", 0) < 0 ? -1 : msgsnd(id, &(struct mb){ .type = 4 }, 0, 0));
	rcv("zero-length back", id, 100, 4, 0);
	/* msg_qbytes: a queue of 10 bytes */
	ds.msg_qbytes = 10;
	chk("set qbytes 10", msgctl(id, IPC_SET, &ds));
	chk("send 8", snd(id, 1, "1234567", 0));
	chk("send 4 more nowait", snd(id, 1, "123", IPC_NOWAIT));
	chk("send 2 more", snd(id, 1, "1", 0));
	rcv("first", id, 100, 0, 0);
	ds.msg_qbytes = 16385;
	chk("qbytes past MSGMNB", msgctl(id, IPC_SET, &ds));
	ds.msg_qbytes = 16384;
	ds.msg_perm.mode = 0640;
	chk("set", msgctl(id, IPC_SET, &ds));
	msgctl(id, IPC_STAT, &ds);
	say("mode %o qbytes %lu\n", ds.msg_perm.mode, (unsigned long)ds.msg_qbytes);
	struct msginfo mi;
	int max = msgctl(0, IPC_INFO, (struct msqid_ds *)&mi);
	say("info: msgmax %d msgmnb %d msgmni %d msgssz %d msgseg %d msgpool %d msgmap %d msgtql %d max ok %s\n",
	    mi.msgmax, mi.msgmnb, mi.msgmni, mi.msgssz, mi.msgseg, mi.msgpool, mi.msgmap, mi.msgtql,
	    yesno(max >= id % 32768));
	int found = 0;
	for (int i = 0; i <= max; i++)
		if (msgctl(i, MSG_STAT, &ds) == id)
			found++;
	say("msg_stat found %d in proc %d\n", found, in_proc(id));
	chk("msg_info", msgctl(0, MSG_INFO, (struct msqid_ds *)&mi));
	FILE *f = fopen("/proc/sys/kernel/msgmnb", "r");
	int v;
	if (f && fscanf(f, "%d", &v) == 1)
		say("proc msgmnb %d\n", v);
	if (f)
		fclose(f);
	chk("rmid", msgctl(id, IPC_RMID, NULL));
	chk("after rmid", msgctl(id, IPC_STAT, &ds));
	say("in proc %d\n", in_proc(id));
}

static void on_alarm(int s)
{
	(void)s;
}

/* Wait (up to 10 s) for a child to be asleep in msgrcv/msgsnd: the queue's lrpid/lspid cannot tell, so poll its state. */
static bool wait_sleeping(pid_t c)
{
	char path[64], buf[512];

	snprintf(path, sizeof path, "/proc/%d/stat", c);
	for (int i = 0; i < 10000; i++) {
		FILE *f = fopen(path, "r");
		char *p = f && fgets(buf, sizeof buf, f) ? strrchr(buf, ')') : NULL;
		if (f)
			fclose(f);
		if (p && p[2] == 'S')
			return true;
		usleep(1000);
	}
	return false;
}

static void block(void)
{
	int id = msgget(IPC_PRIVATE, 0600);
	struct msqid_ds ds;
	pid_t c = fork();

	if (c == 0) {
		rcv("child got", id, 100, 2, 0);
		_exit(0);
	}
	wait_sleeping(c);
	snd(id, 1, "not for it", 0);
	usleep(20000);
	snd(id, 2, "for it", 0);
	int st = wait_child(c);
	say("child exit %d, left %ld\n", st, qnum(id));
	rcv("left", id, 100, 0, 0);
	/* a full queue: the sender waits for room */
	msgctl(id, IPC_STAT, &ds);
	ds.msg_qbytes = 8;
	msgctl(id, IPC_SET, &ds);
	snd(id, 1, "1234567", 0);
	c = fork();
	if (c == 0)
		_exit(snd(id, 1, "abc", 0) ? 1 : 0);
	wait_sleeping(c);
	say("still one: %ld\n", qnum(id));
	char line[256];
	rcv_str(line, sizeof line, "made room", id, 100, 0, 0);
	st = wait_child(c);
	say("%ssender exit %d\n", line, st);
	rcv("its message", id, 100, 0, 0);
	/* signals: EINTR, even with SA_RESTART */
	struct sigaction sa = { .sa_handler = on_alarm, .sa_flags = SA_RESTART };
	sigaction(SIGALRM, &sa, NULL);
	alarm(1);
	rcv("receive interrupted", id, 100, 0, 0);
	snd(id, 1, "1234567", 0);
	alarm(1);
	chk("send interrupted", snd(id, 1, "abc", 0));
	/* removal while a receiver and a sender wait */
	int id2 = msgget(IPC_PRIVATE, 0600);
	pid_t r = fork();
	if (r == 0)	/* exit 43 for EIDRM */
		_exit(msgrcv(id2, &(struct mb){ 0 }, 100, 0, 0) < 0 ? errno : 0);
	c = fork();
	if (c == 0)
		_exit(snd(id, 1, "abc", 0) < 0 ? errno : 0);
	wait_sleeping(r);
	wait_sleeping(c);
	int a = msgctl(id, IPC_RMID, NULL), b = msgctl(id2, IPC_RMID, NULL);
	int s1 = wait_child(r), s2 = wait_child(c);
	say("rmid %d %d, exits %d %d\n", a, b, s1, s2);
	/* SIGKILL of a receiver */
	id = msgget(IPC_PRIVATE, 0600);
	c = fork();
	if (c == 0) {
		rcv("never", id, 100, 0, 0);
		_exit(0);
	}
	wait_sleeping(c);
	kill(c, SIGKILL);
	st = wait_child(c);
	say("killed %d\n", st);
	snd(id, 1, "still works", 0);
	rcv("after kill", id, 100, 0, 0);
	msgctl(id, IPC_RMID, NULL);
}

static void hostile(void)
{
	int id = msgget(IPC_PRIVATE, 0600);
	struct mb m = { .type = 1 };
	struct msqid_ds ds;

	chk("send NULL", msgsnd(id, NULL, 1, 0));
	char *pg = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	munmap(pg + 4096, 4096);
	*(long *)(pg + 4096 - 16) = 1;	/* the type readable, the text runs off the page */
	chk("send text beyond", (long)syscall(SYS_msgsnd, id, pg + 4096 - 16, 100, 0));
	msgsnd(id, &m, 100, 0);
	chk("receive text beyond", (long)syscall(SYS_msgrcv, id, pg + 4096 - 16, 100, 0, IPC_NOWAIT));
	chk("send type 0", msgsnd(id, &(struct mb){ .type = 0 }, 1, 0));
	chk("send type -1", msgsnd(id, &(struct mb){ .type = -1 }, 1, 0));
	chk("send MSGMAX+1", msgsnd(id, &m, 8193, 0));
	chk("send MSGMAX", msgsnd(id, &m, 8192, IPC_NOWAIT));
	chk("send huge", (long)syscall(SYS_msgsnd, id, &m, SIZE_MAX, 0));
	chk("send 2^63", (long)syscall(SYS_msgsnd, id, &m, 1UL << 63, 0));
	chk("send negative id", msgsnd(-1, &m, 1, 0));
	chk("send forged", msgsnd(id + 32768, &m, 1, 0));
	msgrcv(id, &m, 8192, 0, IPC_NOWAIT);
	msgsnd(id, &m, 16, 0);
	chk("receive NULL", (long)msgrcv(id, NULL, 100, 0, IPC_NOWAIT));
	say("lost on EFAULT: %ld\n", qnum(id));
	msgsnd(id, &m, 16, 0);
	chk("receive huge", (long)syscall(SYS_msgrcv, id, &m, SIZE_MAX, 0, IPC_NOWAIT));
	chk("receive 2^62", (long)syscall(SYS_msgrcv, id, &m, 1UL << 62, 0, IPC_NOWAIT));
	chk("receive negative id", (long)msgrcv(-1, &m, 100, 0, IPC_NOWAIT));
	chk("receive forged", (long)msgrcv(id ^ 0x10000000, &m, 100, 0, IPC_NOWAIT));
	chk("receive type LONG_MIN", (long)msgrcv(id, &m, 100, LONG_MIN, IPC_NOWAIT));
	chk("stat bad buf", msgctl(id, IPC_STAT, (void *)1));
	chk("set bad buf", msgctl(id, IPC_SET, (void *)16));
	chk("info bad buf", msgctl(0, IPC_INFO, (void *)16));
	chk("negative cmd", msgctl(id, -1, &ds));
	chk("unknown cmd", msgctl(id, 77, &ds));
	chk("msg_stat index 40000", msgctl(40000, MSG_STAT_ANY, &ds));
	chk("rmid", msgctl(id, IPC_RMID, NULL));
	chk("removed send", msgsnd(id, &m, 1, 0));
	chk("removed receive", (long)msgrcv(id, &m, 100, 0, 0));
	chk("removed rmid", msgctl(id, IPC_RMID, NULL));
	/* a queue filled to MSGMNB with 1-byte messages: its count is bounded by qbytes too */
	id = msgget(IPC_PRIVATE, 0600);
	msgctl(id, IPC_STAT, &ds);
	ds.msg_qbytes = 100;
	msgctl(id, IPC_SET, &ds);
	int n = 0;
	while (msgsnd(id, &m, 0, IPC_NOWAIT) == 0 && n < 1000)
		n++;
	say("empty messages until full: %d (%s)\n", n, ipc_err(errno));
	msgctl(id, IPC_RMID, NULL);
}

/* Processes blocked in msgrcv and msgsnd when the sandbox ends (see ipc_sem hang). */
static void hang(bool stay)
{
	int id = msgget(IPC_PRIVATE, 0600);
	struct mb m = { .type = 1 };
	struct msqid_ds ds;
	pid_t c[3];

	msgctl(id, IPC_STAT, &ds);
	ds.msg_qbytes = 0;
	msgctl(id, IPC_SET, &ds);	/* every send waits */
	for (int i = 0; i < 3; i++)
		if ((c[i] = fork()) == 0) {
			if (i)
				msgrcv(id, &m, 10, 7, 0);
			else
				msgsnd(id, &m, 1, 0);
			_exit(0);
		}
	bool all = true;
	for (int i = 0; i < 3; i++)
		all &= wait_sleeping(c[i]);
	say(all ? "ready\n" : "not ready\n");
	if (stay)
		msgrcv(id, &m, 10, 7, 0);
}

int main(int argc, char **argv)
{
	const char *m = argc > 1 ? argv[1] : "";

	if (!strcmp(m, "basic"))
		basic();
	else if (!strcmp(m, "block"))
		block();
	else if (!strcmp(m, "hostile"))
		hostile();
	else if (!strcmp(m, "hang"))
		hang(argc > 2);
	else
		return 2;
	return 0;
}

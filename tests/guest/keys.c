/*
 * Keyrings: add_key, request_key and keyctl as a program sees them, run
 * natively and under pvx. Serial numbers are random and uids differ (a root
 * run's guest is nobody), so neither is printed; each run starts with a
 * session keyring of its own so the host's does not show.
 *   keys basic     types, special keyrings, describe/read/update/revoke/search/link/move/invalidate/timeout
 *   keys procs     thread, process and session keyrings across threads, fork and exec
 *   keys hostile   bad pointers, huge sizes, forged serials, cycles, a revoke racing readers
 *   keys quota     (pvx only) keys until EDQUOT; links until EDQUOT; sessions joined in a loop
 *   keys lattice   (pvx only) searches and cycle checks of 20^6 paths through 2000 links end quickly
 *   keys proc      (pvx only) /proc/keys, /proc/key-users, /proc/sys/kernel/keys
 * Exit 77: the host refuses keyctl (a container's seccomp policy).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guest.h"

#define THREAD (-1)
#define PROCESS (-2)
#define SESSION (-3)
#define USER (-4)

static long add_key(const char *type, const char *desc, const void *p, size_t n, long ring)
{
	return syscall(SYS_add_key, type, desc, p, n, ring);
}

static long request_key(const char *type, const char *desc, const char *callout, long dest)
{
	return syscall(SYS_request_key, type, desc, callout, dest);
}

static long keyctl(long op, long a, long b, long c, long d)
{
	return syscall(SYS_keyctl, op, a, b, c, d);
}

static const char *en(int e)
{
	switch (e) {
	case 0: return "0";
	case EPERM: return "EPERM";
	case ENOENT: return "ENOENT";
	case EFAULT: return "EFAULT";
	case EINVAL: return "EINVAL";
	case EACCES: return "EACCES";
	case ENODEV: return "ENODEV";
	case ENOTDIR: return "ENOTDIR";
	case EDEADLK: return "EDEADLK";
	case ELOOP: return "ELOOP";
	case EEXIST: return "EEXIST";
	case EOPNOTSUPP: return "EOPNOTSUPP";
	case ENOKEY: return "ENOKEY";
	case EKEYREVOKED: return "EKEYREVOKED";
	case EKEYEXPIRED: return "EKEYEXPIRED";
	case EDQUOT: return "EDQUOT";
	case ENOMEM: return "ENOMEM";
	case ENOSYS: return "ENOSYS";
	default: return "E?";
	}
}

/* "ok" for a serial or a size, else the errno's name. */
static const char *res(long r)
{
	static char b[8][32];
	static int i;

	if (r >= 0) {
		snprintf(b[i & 7], 32, "ok");
	} else {
		snprintf(b[i & 7], 32, "%s", en(errno));
	}
	return b[i++ & 7];
}

static void fresh_session(void)
{
	if (keyctl(1 /* JOIN_SESSION_KEYRING */, 0, 0, 0, 0) < 0) {
		say("no keyctl here: %s\n", en(errno));
		exit(77);
	}
}

/* The description without its uid and gid fields: "type;perm;desc". */
static void describe(const char *what, long id)
{
	char b[256] = "";
	long r = keyctl(6, id, (long)b, sizeof(b), 0);
	char type[32] = "", perm[16] = "";
	const char *desc = "";

	if (r >= 0) {
		sscanf(b, "%31[^;];%*[^;];%*[^;];%15[^;];", type, perm);
		desc = strrchr(b, ';') + 1;
	}
	say("%s describe: %s %s;%s;%s len-ok %s\n", what, res(r), type, perm, desc,
	    yesno(r < 0 || r == (long)strlen(b) + 1));
}

/* The number of keys a keyring holds, from KEYCTL_READ with no buffer. */
static long nkeys(long ring)
{
	long r = keyctl(11, ring, 0, 0, 0);

	return r < 0 ? -errno : r / 4;
}

/* One call per line, in order: "label: ok" or the errno's name. */
#define T(label, expr) do { long r_ = (expr); say("%s: %s\n", label, res(r_)); } while (0)

static void basic(void)
{
	char buf[64];
	long r;
	fresh_session();
	long k = add_key("user", "k1", "hello", 5, SESSION);
	say("add user: %s\n", res(k));
	describe("user", k);
	describe("session", SESSION);
	r = keyctl(11, k, (long)buf, sizeof(buf), 0);
	say("read: %s %.*s\n", res(r), r > 0 ? (int)r : 0, buf);
	memset(buf, 0, sizeof(buf));
	r = keyctl(11, k, (long)buf, 2, 0);
	say("read into 2 bytes: ret %ld buf '%s'\n", r, buf);
	long k2 = add_key("user", "k1", "again!", 6, SESSION);
	say("add same desc updates: %s same %s\n", res(k2), yesno(k2 == k));
	T("update", keyctl(2, k, (long)"third", 5, 0));
	r = keyctl(11, k, (long)buf, sizeof(buf), 0);
	say("read after update: %ld %.*s\n", r, r > 0 ? (int)r : 0, buf);
	T("update empty", keyctl(2, k, (long)"x", 0, 0));
	say("session keys: %ld\n", nkeys(SESSION));
	r = request_key("user", "k1", NULL, 0);
	say("request finds: %s same %s\n", res(r), yesno(r == k));
	T("request other", request_key("user", "nope", NULL, 0));
	r = keyctl(10, SESSION, (long)"user", (long)"k1", 0);
	say("search: %s same %s\n", res(r), yesno(r == k));
	T("search missing", keyctl(10, SESSION, (long)"user", (long)"zz", 0));
	T("search bad type", keyctl(10, SESSION, (long)"nosuchtype", (long)"k1", 0));

	long ring = add_key("keyring", "ring1", NULL, 0, SESSION);
	say("add keyring: %s\n", res(ring));
	describe("keyring", ring);
	T("keyring with payload", add_key("keyring", "r", "x", 1, SESSION));
	T("link", keyctl(8, k, ring, 0, 0));
	say("keys %ld\n", nkeys(ring));
	T("link again", keyctl(8, k, ring, 0, 0));
	say("keys %ld\n", nkeys(ring));
	long nested = add_key("user", "deep", "d", 1, ring);
	say("nested add: %s\n", res(nested));
	T("search nested from session", keyctl(10, SESSION, (long)"user", (long)"deep", 0));
	T("request nested", request_key("user", "deep", NULL, 0));
	T("unlink", keyctl(9, k, ring, 0, 0));
	say("keys %ld\n", nkeys(ring));
	T("unlink again", keyctl(9, k, ring, 0, 0));
	T("link into user key", keyctl(8, k, k, 0, 0));
	T("add into user key", add_key("user", "x", "x", 1, k));
	long ring2 = add_key("keyring", "ring2", NULL, 0, ring);
	T("cycle", keyctl(8, ring, ring2, 0, 0));
	T("self link", keyctl(8, ring, ring, 0, 0));
	T("move", keyctl(30, nested, ring, ring2, 0));
	say("ring keys %ld ring2 keys %ld\n", nkeys(ring), nkeys(ring2));
	T("move not there", keyctl(30, nested, ring, ring2, 0));
	T("move bad flags", keyctl(30, nested, ring2, ring, 2));
	long same = add_key("user", "deep", "e", 1, ring);
	T("move excl", keyctl(30, same, ring, ring2, 1));
	T("move replaces", keyctl(30, same, ring, ring2, 0));
	say("ring2 keys %ld\n", nkeys(ring2));

	T("setperm bad bits", keyctl(5, k, 0x40000000, 0, 0));
	T("setperm without possessor read", keyctl(5, k, 0x3f010000 & ~0x02000000, 0, 0));
	describe("after setperm", k);
	T("read with possessor search", keyctl(11, k, (long)buf, sizeof(buf), 0));
	T("setperm view only", keyctl(5, k, 0x01000000, 0, 0));
	T("read now", keyctl(11, k, (long)buf, sizeof(buf), 0));
	T("update now", keyctl(2, k, (long)"x", 1, 0));
	T("chown -1 -1", keyctl(4, k, -1, -1, 0));
	T("timeout now", keyctl(15, k, 100, 0, 0));
	T("setperm now", keyctl(5, k, 0x3f010000, 0, 0));
	T("chown to own uid", keyctl(4, k, getuid(), -1, 0));

	long lg = add_key("logon", "svc:name", "secret", 6, SESSION);
	say("logon: %s\n", res(lg));
	T("logon read", keyctl(11, lg, (long)buf, sizeof(buf), 0));
	describe("logon", lg);
	T("logon no colon", add_key("logon", "svcname", "s", 1, SESSION));
	T("logon leading colon", add_key("logon", ":name", "s", 1, SESSION));
	T("unknown type", add_key("nosuchtype", "d", "x", 1, SESSION));
	T("asymmetric", add_key("asymmetric", "d", NULL, 64, SESSION));
	T("dot type", add_key(".user", "d", "x", 1, SESSION));
	T("dot keyring", add_key("keyring", ".r", NULL, 0, SESSION));
	T("dot user", add_key("user", ".u", "x", 1, SESSION));
	T("no description", add_key("user", NULL, "x", 1, SESSION));
	T("empty description", add_key("user", "", "x", 1, SESSION));

	k = add_key("user", "k1r", "r", 1, SESSION);	/* k1 is view-only now: a fresh key to revoke */
	T("revoke", keyctl(3, k, 0, 0, 0));
	T("revoked read", keyctl(11, k, (long)buf, 64, 0));
	T("revoked describe", keyctl(6, k, 0, 0, 0));
	T("revoked update", keyctl(2, k, (long)"x", 1, 0));
	T("revoked revoke", keyctl(3, k, 0, 0, 0));
	T("revoked setperm", keyctl(5, k, 0x3f010000, 0, 0));
	T("request revoked", request_key("user", "k1r", NULL, 0));
	T("add over revoked", add_key("user", "k1r", "new", 3, SESSION));

	long t = add_key("user", "timed", "t", 1, SESSION);
	T("timeout", keyctl(15, t, 1, 0, 0));
	describe("timed", t);
	sleep(2);
	T("expired read", keyctl(11, t, (long)buf, 64, 0));
	T("expired request", request_key("user", "timed", NULL, 0));
	T("expired search", keyctl(10, SESSION, (long)"user", (long)"timed", 0));
	T("expired describe", keyctl(6, t, 0, 0, 0));
	T("add into expired", add_key("keyring", "exp", NULL, 0, t));

	long inv = add_key("user", "inv", "i", 1, ring);
	T("invalidate", keyctl(21, inv, 0, 0, 0));
	/* Linux's gc unlinks it soon after, pvx at once: what a read sees in between differs. */
	T("clear user key", keyctl(7, lg, 0, 0, 0));
	T("update keyring", keyctl(2, ring, (long)"x", 1, 0));
	T("revoke keyring", keyctl(3, ring2, 0, 0, 0));
	T("revoked keyring read", keyctl(11, ring2, 0, 0, 0));
	T("add into revoked keyring", add_key("user", "a", "b", 1, ring2));
	T("link into revoked keyring", keyctl(8, lg, ring2, 0, 0));
	T("clear", keyctl(7, ring, 0, 0, 0));
	say("keys %ld\n", nkeys(ring));

	/* request_key without an upcall: a negative key in the destination. */
	T("process keyring", keyctl(0, PROCESS, 1, 0, 0));
	r = request_key("user", "neg", "info", PROCESS);
	say("request with callout: %s\n", r < 0 && (errno == ENOKEY || errno == ENOENT) ? "ENOKEY or ENOENT" : res(r));
	say("keys %ld\n", nkeys(PROCESS));
	int32_t id = 0;
	keyctl(11, PROCESS, (long)&id, sizeof(id), 0);
	describe("negative", id);
	T("negative read", keyctl(11, id, (long)buf, 64, 0));
	T("negative update empty", keyctl(2, id, (long)"x", 0, 0));
	T("request negative again", request_key("user", "neg", "info", PROCESS));
	T("search negative", keyctl(10, PROCESS, (long)"user", (long)"neg", 0));
	T("add over negative", add_key("user", "neg", "pos", 3, PROCESS));
	r = keyctl(11, id, (long)buf, 64, 0);
	say("now positive: %s %.*s\n", res(r), r > 0 ? (int)r : 0, buf);
	T("request keyring with callout", request_key("keyring", "nokr", "info", PROCESS));

	say("set reqkey: old %ld\n", keyctl(14, 3, 0, 0, 0));
	say("set reqkey no change: %ld\n", keyctl(14, -1, 0, 0, 0));
	T("set reqkey group", keyctl(14, 6, 0, 0, 0));
	T("set reqkey 8", keyctl(14, 8, 0, 0, 0));
	T("unknown op", keyctl(999, 0, 0, 0, 0));
	T("instantiate", keyctl(12, id, (long)"x", 1, 0));
	T("negate", keyctl(13, id, 10, 0, 0));
	T("assume 0", keyctl(16, 0, 0, 0, 0));
	T("assume -1", keyctl(16, -1, 0, 0, 0));
	T("assume key", keyctl(16, id, 0, 0, 0));
	r = keyctl(1, (long)"pvx-test-named", 0, 0, 0);
	say("join named: %s\n", r > 0 ? "serial" : res(r));
	r = keyctl(1, (long)"pvx-test-named", 0, 0, 0);
	say("join named again: %s\n", r > 0 ? "serial" : r == 0 ? "0" : res(r));
	describe("named session", SESSION);
	T("join empty name", keyctl(1, (long)"", 0, 0, 0));
}

struct th { long got_thread, got_process, err; };

static void *thread_fn(void *arg)
{
	struct th *a = arg;

	a->got_thread = keyctl(0, THREAD, 0, 0, 0);
	a->err = errno;
	a->got_process = keyctl(0, PROCESS, 0, 0, 0);
	return NULL;
}

static void procs(const char *self)
{
	fresh_session();
	long sess = keyctl(0, SESSION, 0, 0, 0);
	T("thread keyring before", keyctl(0, THREAD, 0, 0, 0));
	pthread_t th;
	struct th a = { 0 };
	pthread_create(&th, NULL, thread_fn, &a);
	pthread_join(th, NULL);
	say("new thread without: thread keyring %s process keyring %s\n", a.got_thread < 0 ? en((int)a.err) : "ok",
	    res(a.got_process));
	long tk = keyctl(0, THREAD, 1, 0, 0);
	long pk = keyctl(0, PROCESS, 1, 0, 0);
	say("thread keyring: %s again same %s\n", res(tk), yesno(keyctl(0, THREAD, 0, 0, 0) == tk));
	describe("thread", THREAD);
	describe("process", PROCESS);
	say("reqkey thread: %ld\n", keyctl(14, 1, 0, 0, 0));
	say("thread keyring kept %s\n", yesno(keyctl(0, THREAD, 0, 0, 0) == tk));
	add_key("user", "mine", "m", 1, THREAD);
	memset(&a, 0, sizeof(a));
	pthread_create(&th, NULL, thread_fn, &a);
	pthread_join(th, NULL);
	say("new thread: thread keyring %s its own %s, process keyring same %s\n",
	    a.got_thread < 0 ? en((int)a.err) : "ok", yesno(a.got_thread != tk), yesno(a.got_process == pk));
	add_key("user", "shared", "s", 1, SESSION);
	pid_t c = fork();
	if (c == 0) {
		say("child: session same %s\n", yesno(keyctl(0, SESSION, 0, 0, 0) == sess));
		T("child: thread keyring", keyctl(0, THREAD, 0, 0, 0));
		T("child: process keyring", keyctl(0, PROCESS, 0, 0, 0));
		T("child: finds session key", request_key("user", "shared", NULL, 0));
		T("child: parent's thread key", request_key("user", "mine", NULL, 0));
		T("child: join new session", keyctl(1, 0, 0, 0, 0));
		say("child: differs %s\n", yesno(keyctl(0, SESSION, 0, 0, 0) != sess));
		T("child: add into the old session by serial", add_key("user", "from-child", "c", 1, sess));
		_exit(0);
	}
	int st;
	waitpid(c, &st, 0);
	say("parent: session same %s, keys %ld\n", yesno(keyctl(0, SESSION, 0, 0, 0) == sess), nkeys(SESSION));
	T("parent: child's key", request_key("user", "from-child", NULL, 0));
	/* KEYCTL_SESSION_TO_PARENT from a grandchild: its parent (not init) takes the session */
	c = fork();
	if (c == 0) {
		pid_t g = fork();
		if (g == 0) {
			keyctl(1, (long)"pvx-to-parent", 0, 0, 0);
			_exit(keyctl(18, 0, 0, 0, 0) < 0 ? 1 : 0);
		}
		waitpid(g, &st, 0);
		say("session to parent: status %d\n", WEXITSTATUS(st));
		describe("after session-to-parent", SESSION);
		_exit(0);
	}
	waitpid(c, &st, 0);
	describe("ours unchanged", SESSION);
	keyctl(1, 0, 0, 0, 0);
	add_key("user", "across-exec", "x", 1, SESSION);
	keyctl(0, PROCESS, 1, 0, 0);
	execl(self, self, "procs-exec", (char *)NULL);
	say("exec failed\n");
}

static void procs_exec(void)
{
	T("after exec: thread keyring", keyctl(0, THREAD, 0, 0, 0));
	T("after exec: process keyring", keyctl(0, PROCESS, 0, 0, 0));
	T("after exec: session key", request_key("user", "across-exec", NULL, 0));
}

static volatile int stop;
static long race_key;
static long race_bad;

static void *reader(void *arg)
{
	char buf[64];
	(void)arg;
	while (!stop) {
		memset(buf, 0, sizeof(buf));
		long r = keyctl(11, race_key, (long)buf, sizeof(buf), 0);
		if (r >= 0 && (r != 7 || memcmp(buf, "payload", 7)))
			race_bad++;
		if (r < 0 && errno != EKEYREVOKED)
			race_bad++;
	}
	return NULL;
}

static void hostile(void)
{
	char buf[64];
	char *big = calloc(1, 40000);
	fresh_session();
	void *bad = (void *)1;
	T("add bad type", add_key(bad, "d", "x", 1, SESSION));
	T("add bad desc", add_key("user", bad, "x", 1, SESSION));
	T("add bad payload", add_key("user", "d", bad, 1, SESSION));
	T("add payload NULL len 64", add_key("user", "d", NULL, 64, SESSION));
	T("add plen 1M", add_key("user", "d", buf, 1 << 20, SESSION));
	T("add plen 32768", add_key("user", "d", big, 32768, SESSION));
	T("add plen 12000", add_key("user", "big", big, 12000, SESSION));
	T("add huge plen", add_key("user", "d", buf, (size_t)-1, SESSION));
	T("add bad ring", add_key("user", "d", "x", 1, 0x7fffffff));
	T("add ring 0", add_key("user", "d", "x", 1, 0));
	char *longd = malloc(5000);
	memset(longd, 'a', 4999);
	longd[4999] = 0;
	T("desc 4999", add_key("user", longd, "x", 1, SESSION));
	longd[4096] = 0;
	T("desc 4096", add_key("user", longd, "x", 1, SESSION));
	longd[4095] = 0;
	T("desc 4095", add_key("user", longd, "x", 1, SESSION));
	char type[40];
	memset(type, 'u', 39);
	type[39] = 0;
	T("type 39", add_key(type, "d", "x", 1, SESSION));
	T("type empty", add_key("", "d", "x", 1, SESSION));
	/* strings running into an unmapped page */
	char *page = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	munmap(page + 4096, 4096);
	memset(page, 'x', 4096);
	T("desc into hole", add_key("user", page + 4000, "x", 1, SESSION));
	T("type into hole", add_key(page + 4090, "d", "x", 1, SESSION));
	T("payload into hole", add_key("user", "d", page + 4000, 200, SESSION));
	T("request bad type", request_key(bad, "d", NULL, 0));
	T("request bad desc", request_key("user", bad, NULL, 0));
	T("request bad callout", request_key("user", "d", bad, 0));
	T("request dot type", request_key(".user", "d", NULL, 0));
	T("request NULL desc", request_key("user", NULL, NULL, 0));
	T("request unknown type", request_key("nosuchtype", "d", NULL, 0));
	T("request bad dest", request_key("user", "d", NULL, 0x7fffffff));
	for (long id = -9; id <= 0; id++) {
		if (id == -5 || id == -4)
			continue;	/* the user keyrings: natively the host's own, persistent */
		say("serial %ld:\n", id);
		T("  get", keyctl(0, id, 0, 0, 0));
		T("  describe", keyctl(6, id, 0, 0, 0));
		T("  read", keyctl(11, id, 0, 0, 0));
		T("  setperm", keyctl(5, id, 0x3f3f0000, 0, 0));
	}
	T("serial INT_MAX", keyctl(6, INT_MAX, 0, 0, 0));
	T("serial INT_MIN", keyctl(6, INT_MIN, 0, 0, 0));
	T("serial 1", keyctl(6, 1, 0, 0, 0));
	T("serial high bits", keyctl(6, 0x100000000L | (SESSION & 0xffffffffL), 0, 0, 0));
	long k = add_key("user", "k", "payload", 7, SESSION);
	T("read bad buf", keyctl(11, k, (long)bad, 64, 0));
	say("read huge len: %ld\n", keyctl(11, k, (long)buf, (long)-1, 0));
	T("read buf into hole", keyctl(11, k, (long)(page + 4093), 64, 0));
	T("describe bad buf", keyctl(6, k, (long)bad, 64, 0));
	say("describe short bad buf: %s\n", keyctl(6, k, (long)bad, 3, 0) > 3 ? "length" : "no");
	T("update bad payload", keyctl(2, k, (long)bad, 5, 0));
	T("update huge", keyctl(2, k, (long)big, 5000, 0));
	T("search bad type", keyctl(10, SESSION, (long)bad, (long)"k", 0));
	T("search bad desc", keyctl(10, SESSION, (long)"user", (long)bad, 0));
	T("join bad name", keyctl(1, (long)bad, 0, 0, 0));
	T("capabilities bad buf", keyctl(31, (long)bad, 2, 0, 0));
	T("reqkey bogus", keyctl(14, 100, 0, 0, 0));
	T("timeout bad serial", keyctl(15, 0x7ffffff0, 5, 0, 0));

	/* a chain of keyrings deeper than the search depth */
	long r = SESSION, prev[10];
	for (int i = 0; i < 10; i++) {
		char d[16];
		snprintf(d, sizeof(d), "chain%d", i);
		r = add_key("keyring", d, NULL, 0, r);
		prev[i] = r;
	}
	T("bottom", add_key("user", "bottom", "b", 1, r));
	T("deep search", keyctl(10, SESSION, (long)"user", (long)"bottom", 0));
	T("shallow search", keyctl(10, prev[4], (long)"user", (long)"bottom", 0));
	T("cycle at depth 2", keyctl(8, prev[0], prev[2], 0, 0));
	T("clear chain", keyctl(7, SESSION, 0, 0, 0));

	/* revoke while readers read */
	race_key = add_key("user", "race", "payload", 7, SESSION);
	pthread_t th[3];
	for (int i = 0; i < 3; i++)
		pthread_create(&th[i], NULL, reader, NULL);
	usleep(50000);
	T("revoke under readers", keyctl(3, race_key, 0, 0, 0));
	usleep(20000);
	stop = 1;
	for (int i = 0; i < 3; i++)
		pthread_join(th[i], NULL);
	say("readers saw a torn payload or a wrong error: %s\n", yesno(race_bad != 0));
	/* clear while a child adds */
	pid_t c = fork();
	if (c == 0) {
		for (int i = 0; i < 300; i++) {
			long x = add_key("user", "churn", "c", 1, SESSION);
			if (x < 0 && errno != EDQUOT)
				_exit(1);
		}
		_exit(0);
	}
	for (int i = 0; i < 300; i++)
		keyctl(7, SESSION, 0, 0, 0);
	int st;
	waitpid(c, &st, 0);
	say("clear racing add: child status %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
}

static void quota(void)
{
	char payload[100] = { 0 };
	fresh_session();
	long ring = add_key("keyring", "q", NULL, 0, SESSION);
	int n = 0;
	for (; n < 2000000; n++) {
		char d[32];
		snprintf(d, sizeof(d), "q%d", n);
		if (add_key("user", d, payload, sizeof(payload), ring) < 0)
			break;
	}
	say("keys until %s: %d\n", en(errno), n);
	T("32767 payload now", add_key("user", "more", calloc(1, 32767), 32767, ring));
	T("clear", keyctl(7, ring, 0, 0, 0));
	T("after clear", add_key("user", "again", payload, sizeof(payload), ring));
	T("32767 payload", add_key("user", "more", calloc(1, 32767), 32767, ring));
	/* links: keyrings each linking one key, until a quota ends */
	long k = add_key("user", "linked", "x", 1, ring);
	int links = 0;
	for (; links < 2000000; links++) {
		char d[32];
		snprintf(d, sizeof(d), "l%d", links);
		long kr = add_key("keyring", d, NULL, 0, SESSION);
		if (kr < 0 || keyctl(8, k, kr, 0, 0) < 0)
			break;
	}
	say("linking stopped: %s after %d\n", en(errno), links);
	T("clear session", keyctl(7, SESSION, 0, 0, 0));
	for (int i = 0; i < 20000; i++)
		if (keyctl(1, 0, 0, 0, 0) < 0) {
			say("join %d: %s\n", i, en(errno));
			break;
		}
	T("joined 20000 sessions; a key still fits", add_key("user", "end", "e", 1, SESSION));
	T("get persistent", keyctl(22, -1, SESSION, 0, 0));
	/* the user keyrings (pvx only: natively the host's own) come back new once revoked */
	long u1 = keyctl(0, USER, 1, 0, 0);
	T("revoke user keyring", keyctl(3, USER, 0, 0, 0));
	long u2 = keyctl(0, USER, 1, 0, 0);
	say("user keyring again: %s new %s\n", res(u2), yesno(u2 != u1));
	T("invalidate user session keyring", keyctl(21, -5, 0, 0, 0));
	T("user session keyring again", keyctl(0, -5, 1, 0, 0));
	unsigned char caps[4] = { 0 };
	long nc = keyctl(31, (long)caps, sizeof(caps), 0, 0);
	say("capabilities: %ld %02x %02x %02x\n", nc, caps[0], caps[1], caps[2]);
}

/* Six layers of 20 keyrings, each linked into every keyring of the layer above: 20^6 paths, 2000 links. */
static void lattice(void)
{
	long layer[6][20];
	int links = 0;
	fresh_session();
	for (int l = 0; l < 6; l++)
		for (int i = 0; i < 20; i++) {
			char d[16];
			snprintf(d, sizeof(d), "L%d.%d", l, i);
			layer[l][i] = add_key("keyring", d, NULL, 0, l ? layer[l - 1][0] : SESSION);
			for (int j = 1; l && j < 20; j++)
				links += keyctl(8, layer[l][i], layer[l - 1][j], 0, 0) == 0;
		}
	say("lattice: %d links\n", links);
	for (int n = 0; n < 200; n++) {
		keyctl(10, SESSION, (long)"user", (long)"absent", 0);
		request_key("user", "absent", NULL, 0);
		keyctl(8, layer[0][0], layer[5][19], 0, 0);
	}
	T("search the lattice", keyctl(10, SESSION, (long)"user", (long)"absent", 0));
	T("link its top under its bottom", keyctl(8, layer[0][0], layer[5][19], 0, 0));
	T("link its top under the middle", keyctl(8, layer[0][0], layer[2][3], 0, 0));
}

/* Print the lines of a /proc file that contain word, from the column after skip spaces on. */
static void grep_file(const char *path, const char *word)
{
	char b[8192];
	FILE *f = fopen(path, "r");

	if (!f) {
		say("%s: %s\n", path, en(errno));
		return;
	}
	while (fgets(b, sizeof(b), f))
		if (strstr(b, word))
			say("%s: %s", path, b);
	fclose(f);
}

static void proc(void)
{
	fresh_session();
	long ring = add_key("keyring", "proc-ring", NULL, 0, SESSION);
	add_key("user", "proc-visible", "12345", 5, ring);
	long hidden = add_key("user", "proc-hidden", "x", 1, ring);
	keyctl(5, hidden, 0x3e000000, 0, 0);	/* no view permission for anyone */
	keyctl(15, ring, 3000, 0, 0);
	grep_file("/proc/keys", "proc-");
	grep_file("/proc/key-users", ":");
	grep_file("/proc/sys/kernel/keys/maxkeys", "");
	grep_file("/proc/sys/kernel/keys/maxbytes", "");
	grep_file("/proc/sys/kernel/keys/root_maxkeys", "");
}

/*
 * A keyring a call looked up by serial stays while the call runs, even when
 * a later lookup in it (KEY_SPEC_USER_KEYRING) replaces the revoked user
 * keyrings: each call names the old user-session keyring, then the user
 * keyring. The sentry used to free the old keyring under it (and crash).
 */
static void retired(void)
{
	fresh_session();
	for (int op = 0; op < 4; op++) {
		long uk = keyctl(0, USER, 1, 0, 0), sk = keyctl(0, -5 /* USER_SESSION */, 1, 0, 0);
		if (uk < 0 || sk < 0 || keyctl(3 /* REVOKE */, uk, 0, 0, 0) < 0) {
			say("setup %d: %s\n", op, en(errno));
			continue;
		}
		if (op == 0)
			keyctl(9 /* UNLINK */, USER, sk, 0, 0);
		else if (op == 1)
			keyctl(8 /* LINK */, USER, sk, 0, 0);
		else if (op == 2)
			keyctl(10 /* SEARCH */, sk, (long)"user", (long)"nothing", USER);
		else
			request_key("user", "nothing", NULL, sk);
	}
	T("user keyring after the replacements", keyctl(0, USER, 1, 0, 0) > 0 ? 0 : -1);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "basic";

	setvbuf(stdout, NULL, _IONBF, 0);
	if (!strcmp(mode, "basic"))
		basic();
	else if (!strcmp(mode, "procs"))
		procs(argv[0]);
	else if (!strcmp(mode, "procs-exec"))
		procs_exec();
	else if (!strcmp(mode, "hostile"))
		hostile();
	else if (!strcmp(mode, "quota"))
		quota();
	else if (!strcmp(mode, "proc"))
		proc();
	else if (!strcmp(mode, "lattice"))
		lattice();
	else if (!strcmp(mode, "retired"))
		retired();
	else
		return 2;
	return 0;
}

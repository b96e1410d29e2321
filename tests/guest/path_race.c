// SPDX-License-Identifier: GPL-2.0
/*
 * Hostile path walks for tests/path_walk.bats (issue 16: path calls at one
 * host call must stay confined to the root).
 *   path_race swap N    in the cwd: a thread swaps "d" between a real
 *                       directory (holding "inside") and a symlink to "/"
 *                       or to "..", N times, while this thread stats, lstats,
 *                       statx's, accesses, readlinks and opens "d/secret",
 *                       "d/inside" and "d/marker" (and opens "d/secretdir" as a directory, and
 *                       fstatat's the last names from an fd of "d"). Prints how many of those
 *                       found "secret" (only outside the root: must be 0)
 *                       and whether both shapes of d were seen.
 *   path_race probe P...  for each path: stat, lstat, access, open, readlink
 *                       results as "P: ok" or the errno name; an argument @N instead
 *                       makes /readyN and waits for /goN (tests/path_walk.bats, w N)
 *   path_race statloop P N  stat P N times (host calls per stat are counted outside)
 *   path_race callloop CALL P N  CALL on P N times: stat, lstat, statx, access, faccessat2, readlink,
 *                       getxattr, lgetxattr (of a name P has not: ENODATA counts), open (and close), opendir (O_DIRECTORY open and close), getdents (of the
 *                       open directory P, rewound), and the relative forms fstatat, statxat, openat,
 *                       faccessatat, readlinkat of P's last name from an fd of its directory;
 *                       prints how many succeeded
 *   path_race errnos P...  in the cwd: for each path, every path call's result as "call=ok|ERRNO" (for
 *                       a native-vs-sandbox comparison), then the dirfd and AT_EMPTY_PATH cases on
 *                       the fds of "f" (a file), "ln" (a symlink, O_PATH|O_NOFOLLOW) and "d" (a directory)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>

static atomic_int stop;
static int rounds;

/* The swapping thread: d is a directory, then a symlink to "/", then one to "..", and again. */
static void *swapper(void *arg)
{
	(void)arg;
	for (int i = 0; i < rounds && !stop; i++) {
		rename("d", "d.real");
		symlink(i & 1 ? "/" : "..", "d");
		rename("d", "d.link");	/* d gone for a moment, as a rename race would have it */
		rename("d.link", "d");
		unlink("d");
		rename("d.real", "d");
	}
	stop = 1;
	return NULL;
}

/* One round of every path call on path; returns how many found it. */
static int try_all(const char *path)
{
	struct stat st;
	char buf[256], stx[256];
	int found = 0;

	found += stat(path, &st) == 0;
	found += lstat(path, &st) == 0;
	found += syscall(SYS_statx, AT_FDCWD, path, 0, 0x7ff, stx) == 0;
	found += access(path, F_OK) == 0;
	found += readlink(path, buf, sizeof(buf)) >= 0 || errno == EINVAL;
	int fd = open(path, O_RDONLY);
	if (fd >= 0) {
		found++;
		close(fd);
	}
	fd = open(path, O_PATH);
	if (fd >= 0) {
		found++;
		close(fd);
	}
	fd = open(path, O_RDONLY | O_DIRECTORY | O_NONBLOCK);	/* the lookup's own open of a directory */
	if (fd >= 0) {
		found++;
		close(fd);
	}
	/* from a directory fd of whatever "d" is now, the last name alone */
	const char *slash = strrchr(path, '/');
	int dir = open("d", O_RDONLY | O_DIRECTORY);
	if (dir >= 0 && slash) {
		found += fstatat(dir, slash + 1, &st, AT_SYMLINK_NOFOLLOW) == 0;
		found += fstatat(dir, slash + 1, &st, 0) == 0;
		found += syscall(SYS_statx, dir, slash + 1, 0, 0x7ff, stx) == 0;
		fd = openat(dir, slash + 1, O_RDONLY | O_DIRECTORY);
		if (fd >= 0) {
			found++;
			close(fd);
		}
	}
	if (dir >= 0)
		close(dir);
	return found;
}

static int swap(int n)
{
	pthread_t th;
	long secret = 0, inside = 0, marker = 0;

	rounds = n;
	if (mkdir("d", 0755) && errno != EEXIST)
		return perror("mkdir"), 1;
	close(open("d/inside", O_CREAT | O_WRONLY, 0644));
	if (pthread_create(&th, NULL, swapper, NULL))
		return 1;
	while (!stop) {
		secret += try_all("d/secret");
		secret += try_all("d/../secret");
		secret += try_all("d/secretdir");	/* a directory outside the root, for the directory opens */
		secret += try_all("d/../secretdir");
		inside += try_all("d/inside") > 0;
		marker += try_all("d/marker") > 0;
	}
	pthread_join(th, NULL);
	printf("secret found: %ld\n", secret);
	printf("saw the directory: %s\n", inside ? "yes" : "no");
	printf("saw the symlink: %s\n", marker ? "yes" : "no");
	return 0;
}

/* errno names, the same in musl and glibc builds. */
static const char *ename(int e)
{
	switch (e) {
	case 0: return "ok";
	case ENOENT: return "ENOENT";
	case EACCES: return "EACCES";
	case EINVAL: return "EINVAL";
	case ENOTDIR: return "ENOTDIR";
	case ELOOP: return "ELOOP";
	case EXDEV: return "EXDEV";
	case EISDIR: return "EISDIR";
	case EPERM: return "EPERM";
	case ENAMETOOLONG: return "ENAMETOOLONG";
	case EBADF: return "EBADF";
	default: return "E?";
	}
}

static void probe(const char *path)
{
	struct stat st;
	char buf[256];
	const char *name[] = { "stat", "lstat", "access", "open", "opath", "readlink" };
	int r[6];

	r[0] = stat(path, &st) ? errno : 0;
	r[1] = lstat(path, &st) ? errno : 0;
	r[2] = access(path, R_OK) ? errno : 0;
	int fd = open(path, O_RDONLY);
	r[3] = fd < 0 ? errno : 0;
	if (fd >= 0)
		close(fd);
	fd = open(path, O_PATH);
	r[4] = fd < 0 ? errno : 0;
	if (fd >= 0)
		close(fd);
	r[5] = readlink(path, buf, sizeof(buf)) < 0 ? errno : 0;
	printf("%s:", path);
	for (int i = 0; i < 6; i++)
		printf(" %s=%s", name[i], ename(r[i]));
	printf("\n");
}

/* One call of callloop's CALL on path (rel: its last name, dir: an fd of its directory, d: P opened); 1 if it succeeded. */
static int call_once(const char *call, const char *path, const char *rel, int dir, int d)
{
	struct stat st;
	char buf[4096];

	if (!strcmp(call, "stat"))
		return stat(path, &st) == 0;
	if (!strcmp(call, "lstat"))
		return lstat(path, &st) == 0;
	if (!strcmp(call, "statx"))
		return syscall(SYS_statx, AT_FDCWD, path, AT_SYMLINK_NOFOLLOW, 0x7ff, buf) == 0;
	if (!strcmp(call, "access"))
		return access(path, R_OK) == 0;
	if (!strcmp(call, "faccessat2"))
		return syscall(SYS_faccessat2, AT_FDCWD, path, R_OK, AT_EACCESS) == 0;
	if (!strcmp(call, "readlink"))
		return readlink(path, buf, sizeof(buf)) >= 0;
	if (!strcmp(call, "getxattr") || !strcmp(call, "lgetxattr")) {	/* answered: a value, or none of that name */
		long r = call[0] == 'l' ? lgetxattr(path, "user.pvx_none", buf, 64) : getxattr(path, "user.pvx_none", buf, 64);
		return r >= 0 || errno == ENODATA || errno == EOPNOTSUPP;
	}
	if (!strcmp(call, "open") || !strcmp(call, "opendir")) {
		int fd = open(path, O_RDONLY | O_CLOEXEC | (call[4] ? O_DIRECTORY | O_NONBLOCK : 0));
		return fd >= 0 && close(fd) == 0;
	}
	if (!strcmp(call, "getdents"))
		return lseek(d, 0, SEEK_SET) == 0 && syscall(SYS_getdents64, d, buf, sizeof(buf)) > 0;
	if (!strcmp(call, "fstatat"))
		return fstatat(dir, rel, &st, AT_SYMLINK_NOFOLLOW) == 0;
	if (!strcmp(call, "statxat"))
		return syscall(SYS_statx, dir, rel, 0, 0x7ff, buf) == 0;
	if (!strcmp(call, "faccessatat"))
		return faccessat(dir, rel, R_OK, 0) == 0;
	if (!strcmp(call, "readlinkat"))
		return readlinkat(dir, rel, buf, sizeof(buf)) >= 0;
	if (!strcmp(call, "openat")) {
		int fd = openat(dir, rel, O_RDONLY | O_CLOEXEC);
		return fd >= 0 && close(fd) == 0;
	}
	return -1;
}

static void show(const char *name, int r)
{
	printf(" %s=%s", name, ename(r < 0 ? errno : 0));
}

static void errnos(int argc, char **argv)
{
	struct stat st;
	char buf[4096], stx[256];
	int cwd = open(".", O_PATH | O_DIRECTORY);

	for (int i = 0; i < argc; i++) {
		const char *p = argv[i];
		int fd;
		printf("%.40s:", p);
		show("stat", stat(p, &st));
		show("lstat", lstat(p, &st));
		show("fstatat", fstatat(cwd, p, &st, 0));
		show("fstatat_nofollow", fstatat(cwd, p, &st, AT_SYMLINK_NOFOLLOW));
		show("statx", (int)syscall(SYS_statx, AT_FDCWD, p, 0, 0x7ff, stx));
		show("statx_nofollow", (int)syscall(SYS_statx, cwd, p, AT_SYMLINK_NOFOLLOW, 0x7ff, stx));
		show("access", access(p, R_OK));
		show("faccessat2_nofollow", (int)syscall(SYS_faccessat2, cwd, p, F_OK, AT_SYMLINK_NOFOLLOW));
		show("readlink", (int)readlink(p, buf, sizeof(buf)));
		show("readlinkat", (int)readlinkat(cwd, p, buf, sizeof(buf)));
		show("open", fd = open(p, O_RDONLY));
		if (fd >= 0)
			close(fd);
		show("opendir", fd = openat(cwd, p, O_RDONLY | O_DIRECTORY | O_NONBLOCK | O_CLOEXEC));
		if (fd >= 0) {
			long n = syscall(SYS_getdents64, fd, buf, sizeof(buf));
			printf(" getdents=%s", n > 0 ? "ok" : ename(n < 0 ? errno : 0));
			close(fd);
		}
		show("opendir_nofollow", fd = open(p, O_RDONLY | O_DIRECTORY | O_NOFOLLOW));
		if (fd >= 0)
			close(fd);
		printf("\n");
	}
	int f = open("f", O_RDONLY), ln = open("ln", O_PATH | O_NOFOLLOW), d = open("d", O_RDONLY | O_DIRECTORY);
	printf("fds:");
	show("fstatat_file_x", fstatat(f, "x", &st, 0));
	show("fstatat_file_empty", fstatat(f, "", &st, AT_EMPTY_PATH));
	show("fstatat_file_empty_noflag", fstatat(f, "", &st, 0));
	show("statx_file_empty", (int)syscall(SYS_statx, f, "", AT_EMPTY_PATH, 0x7ff, stx));
	show("faccessat2_file_empty", (int)syscall(SYS_faccessat2, f, "", R_OK, AT_EMPTY_PATH));
	show("openat_file_x", openat(f, "x", O_RDONLY));
	show("opendir_file_dot", openat(f, ".", O_RDONLY | O_DIRECTORY));
	show("fstatat_link_a", fstatat(ln, "a", &st, 0));
	show("openat_link_a", openat(ln, "a", O_RDONLY));
	show("readlinkat_link_empty", (int)readlinkat(ln, "", buf, sizeof(buf)));
	show("fstatat_link_empty_nofollow", fstatat(ln, "", &st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW));
	show("fstatat_dir_a", fstatat(d, "a", &st, 0));
	show("fstatat_dir_dotdot_f", fstatat(d, "../f", &st, 0));
	show("opendir_dir_dot", openat(d, ".", O_RDONLY | O_DIRECTORY));
	show("fstatat_badfd", fstatat(999, "a", &st, 0));
	printf("\n");
}

static int callloop(const char *call, const char *path, int n)
{
	char dirpart[4096];
	const char *slash = strrchr(path, '/');
	int ok = 0;

	snprintf(dirpart, sizeof(dirpart), "%.*s", slash ? (int)(slash - path) + 1 : 1, slash ? path : ".");
	int dir = open(dirpart, O_PATH | O_DIRECTORY);
	int d = open(path, O_RDONLY | O_DIRECTORY);
	const char *rel = slash ? slash + 1 : path;
	for (int i = 0; i < n; i++) {
		int r = call_once(call, path, rel, dir, d);
		if (r < 0)
			return fprintf(stderr, "unknown call %s\n", call), 2;
		ok += r;
	}
	printf("%d\n", ok);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "errnos")) {
		errnos(argc - 2, argv + 2);
		return 0;
	}
	if (argc == 5 && !strcmp(argv[1], "callloop"))
		return callloop(argv[2], argv[3], atoi(argv[4]));
	if (argc == 3 && !strcmp(argv[1], "swap"))
		return swap(atoi(argv[2]));
	if (argc >= 2 && !strcmp(argv[1], "probe")) {
		for (int i = 2; i < argc; i++) {
			char ready[64], go[64];
			struct stat st;
			if (argv[i][0] != '@') {
				probe(argv[i]);
				continue;
			}
			snprintf(ready, sizeof(ready), "/ready%s", argv[i] + 1);
			snprintf(go, sizeof(go), "/go%s", argv[i] + 1);
			fflush(stdout);
			close(open(ready, O_WRONLY | O_CREAT, 0666));
			while (stat(go, &st) < 0)
				nanosleep(&(struct timespec){ 0, 50000000 }, NULL);
		}
		return 0;
	}
	if (argc == 4 && !strcmp(argv[1], "leakloop")) {
		/* DIR/inside is always in DIR, DIR/leak only while the host has DIR outside the root. */
		char in[4096], leak[4096];
		struct stat st;
		long inside = 0, missing = 0, leaks = 0;
		snprintf(in, sizeof(in), "%s/inside", argv[2]);
		snprintf(leak, sizeof(leak), "%s/leak", argv[2]);
		for (int i = atoi(argv[3]); i > 0; i--) {
			leaks += lstat(leak, &st) == 0;
			if (lstat(in, &st) == 0)
				inside++;
			else
				missing++;
		}
		printf("leak: %ld inside: %ld missing: %ld\n", leaks, inside, missing);
		return 0;
	}
	if (argc == 4 && !strcmp(argv[1], "statloop")) {
		struct stat st;
		int ok = 0;
		for (int i = atoi(argv[3]); i > 0; i--)
			ok += stat(argv[2], &st) == 0;
		printf("%d\n", ok);
		return 0;
	}
	fprintf(stderr, "usage: path_race swap N | probe PATH... | statloop PATH N | leakloop DIR N | callloop CALL PATH N\n");
	return 2;
}

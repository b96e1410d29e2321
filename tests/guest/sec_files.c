/*
 * Hostile file-system probes for tests/security_files.bats: each mode tries
 * one way to reach a host file the policy must refuse and prints what it got
 * as "what: ERRNAME" or "what: ok TYPE", so native and sandboxed runs can be
 * told apart by the bats file.
 *
 *   sec_files open PATH FLAGS...       open(2) with named flags, print the result and its type
 *   sec_files reopen PATH              O_PATH open, then /proc/self/fd/N, /dev/fd/N... read-only
 *   sec_files reopenw PATH             the same, and for writing (never give it a device)
 *   sec_files race PATH SECONDS        open PATH read-only again and again; count opens that got a device
 *   sec_files tmpfile DIR              O_TMPFILE|O_RDWR in DIR, write 1 MiB
 *   sec_files fdname NAME...           open("/proc/self/fd/NAME") for odd NAMEs (fd 0 is open)
 *   sec_files badptr                   open, openat, O_PATH opens with bad pointers
 *   sec_files readlink PATH...         readlink(2) of each PATH
 *   sec_files modes DIR                create things with setuid/setgid modes in DIR, print the modes they got
 *   sec_files cat PATH                 print PATH's first line or the error
 *   sec_files execfd PATH              execveat(O_PATH fd of PATH, "", AT_EMPTY_PATH) of "PATH open / path"
 *   sec_files ids                      uid, euid, gid, egid, fsuid, groups count
 *   sec_files holdproc FILE            open /proc as a directory, print its readlink, wait for FILE to exist
 *   sec_files listproc N FILE          hold /proc open and a cwd in /proc/self/fd, list /proc/self N times, wait
 *                                      for FILE, then say whether the held directories still list
 *   sec_files swap A B SECONDS         (run natively) exchange names A and B again and again
 *   sec_files replaced F G             open F, rename G over F, reopen /proc/self/fd/N: whose content?
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static const char *err(int e)
{
	static char buf[16];

	switch (e) {
	case 0: return "0";
	case EPERM: return "EPERM";
	case ENOENT: return "ENOENT";
	case EBADF: return "EBADF";
	case EACCES: return "EACCES";
	case EFAULT: return "EFAULT";
	case EEXIST: return "EEXIST";
	case ENOTDIR: return "ENOTDIR";
	case EISDIR: return "EISDIR";
	case EINVAL: return "EINVAL";
	case ENXIO: return "ENXIO";
	case EROFS: return "EROFS";
	case ELOOP: return "ELOOP";
	case EXDEV: return "EXDEV";
	case ENAMETOOLONG: return "ENAMETOOLONG";
	case EOPNOTSUPP: return "EOPNOTSUPP";
	case ENOSYS: return "ENOSYS";
	case ENOEXEC: return "ENOEXEC";
	}
	snprintf(buf, sizeof(buf), "E%d", e);
	return buf;
}

static const char *type(int fd)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return "?";
	switch (st.st_mode & S_IFMT) {
	case S_IFREG: return "reg";
	case S_IFDIR: return "dir";
	case S_IFCHR: return "chr";
	case S_IFBLK: return "blk";
	case S_IFIFO: return "fifo";
	case S_IFLNK: return "lnk";
	case S_IFSOCK: return "sock";
	}
	return "?";
}

/* Print "what: ok TYPE" or "what: ERRNO" for an open result; closes the fd. */
static void report(const char *what, int fd)
{
	if (fd < 0) {
		printf("%s: %s\n", what, err(errno));
		return;
	}
	printf("%s: ok %s\n", what, type(fd));
	close(fd);
}

static int parse_flags(char **names, int n)
{
	static const struct { const char *name; int flag; } tab[] = {
		{ "rdonly", O_RDONLY }, { "wronly", O_WRONLY }, { "rdwr", O_RDWR }, { "path", O_PATH },
		{ "creat", O_CREAT }, { "excl", O_EXCL }, { "trunc", O_TRUNC }, { "nofollow", O_NOFOLLOW },
		{ "directory", O_DIRECTORY }, { "append", O_APPEND }, { "nonblock", O_NONBLOCK },
		{ "tmpfile", O_TMPFILE },
	};
	int flags = 0;

	for (int i = 0; i < n; i++)
		for (size_t j = 0; j < sizeof(tab) / sizeof(tab[0]); j++)
			if (!strcmp(names[i], tab[j].name))
				flags |= tab[j].flag;
	return flags;
}

/* Reopen an O_PATH fd of path every way there is; write=1 tries write access too (never on a device). */
static int do_reopen(const char *path, int write)
{
	char p[64];
	int fd = open(path, O_PATH);

	report("opath", fd < 0 ? -1 : dup(fd));
	if (fd < 0)
		return 0;
	snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
	report("proc rdonly", open(p, O_RDONLY | O_NONBLOCK));
	if (write)
		report("proc wronly", open(p, O_WRONLY | O_NONBLOCK));
	report("proc path", open(p, O_PATH));
	snprintf(p, sizeof(p), "/dev/fd/%d", fd);
	report("devfd rdonly", open(p, O_RDONLY | O_NONBLOCK));
	if (write)
		report("devfd rdwr", open(p, O_RDWR | O_NONBLOCK));
	snprintf(p, sizeof(p), "/proc/%d/fd/%d", getpid(), fd);
	report("pid rdonly", open(p, O_RDONLY | O_NONBLOCK));
	snprintf(p, sizeof(p), "%d", fd);
	report("openat procfd", openat(open("/proc/self/fd", O_RDONLY | O_DIRECTORY), p, O_RDONLY | O_NONBLOCK));
	/* dup2 onto 0 and reopen /dev/stdin */
	if (dup2(fd, 0) == 0)
		report("devstdin rdonly", open("/dev/stdin", O_RDONLY | O_NONBLOCK));
	return 0;
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int do_race(const char *path, double secs)
{
	long opens = 0, devices = 0, fails = 0;
	double end = now() + secs;

	while (now() < end) {
		int fd = open(path, O_RDONLY | O_NONBLOCK);
		if (fd < 0) {
			fails++;
			continue;
		}
		struct stat st;
		if (fstat(fd, &st) == 0 && (S_ISBLK(st.st_mode) || S_ISCHR(st.st_mode)))
			devices++;
		else
			opens++;
		close(fd);
	}
	printf("regular opens: %s\ndevice opens: %ld\n", opens ? "some" : "none", devices);
	fprintf(stderr, "opens=%ld devices=%ld fails=%ld\n", opens, devices, fails);
	return 0;
}

static int do_swap(const char *a, const char *b, double secs)
{
	long n = 0;
	double end = now() + secs;

	while (now() < end)
		for (int i = 0; i < 1000; i++, n++)
			if (syscall(SYS_renameat2, AT_FDCWD, a, AT_FDCWD, b, 2 /* RENAME_EXCHANGE */) < 0) {
				printf("swap: %s\n", err(errno));
				return 1;
			}
	fprintf(stderr, "swaps=%ld\n", n);
	return 0;
}

static int do_replaced(const char *f, const char *g)
{
	char p[64], buf[64] = "";
	int fd = open(f, O_RDONLY);

	if (fd < 0 || rename(g, f) < 0) {
		printf("setup: %s\n", err(errno));
		return 1;
	}
	snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
	int again = open(p, O_RDONLY);
	if (again < 0) {
		printf("reopen: %s\n", err(errno));
		return 0;
	}
	ssize_t n = read(again, buf, sizeof(buf) - 1);
	printf("reopen reads: %s\n", n < 0 ? err(errno) : buf);
	return 0;
}

static int do_tmpfile(const char *dir)
{
	int fd = open(dir, O_TMPFILE | O_RDWR, 0600);
	static char buf[1 << 20];

	if (fd < 0) {
		printf("tmpfile: %s\n", err(errno));
		return 0;
	}
	memset(buf, 'x', sizeof(buf));
	printf("tmpfile: ok, write %s\n", write(fd, buf, sizeof(buf)) == sizeof(buf) ? "ok" : err(errno));
	return 0;
}

static int do_badptr(void)
{
	report("open NULL", syscall(SYS_open, NULL, O_RDONLY));
	report("open 1", syscall(SYS_open, 1L, O_RDONLY));
	report("open path NULL", syscall(SYS_open, NULL, O_PATH));
	report("openat kernel", syscall(SYS_openat, AT_FDCWD, 0xffffffff81000000UL, O_RDONLY));
	report("open creat NULL", syscall(SYS_open, NULL, O_CREAT | O_WRONLY, 0644));
	report("open tmpfile NULL", syscall(SYS_open, NULL, O_TMPFILE | O_RDWR, 0600));
	report("execveat bad", syscall(SYS_execveat, AT_FDCWD, (char *)8, NULL, NULL, 0));
	report("openat badfd", openat(999999, "x", O_RDONLY));
	report("openat negfd", openat(-5, "x", O_RDONLY));
	return 0;
}

static int do_modes(const char *dir)
{
	char p[4096];
	struct stat st;
	int fd;

	if (chdir(dir) < 0) {
		printf("chdir: %s\n", err(errno));
		return 1;
	}
	umask(0);
	fd = open("creat", O_CREAT | O_WRONLY | O_EXCL, 06755);
	printf("open creat 06755: %s\n", fd < 0 ? err(errno) : "ok");
	if (fd >= 0) {
		printf("fchmod 04755: %s\n", fchmod(fd, 04755) ? err(errno) : "ok");
		close(fd);
	}
	fd = open("plain", O_CREAT | O_WRONLY | O_EXCL, 0755);
	close(fd);
	printf("chmod 04755: %s\n", chmod("plain", 04755) ? err(errno) : "ok");
	printf("fchmodat 02755: %s\n", fchmodat(AT_FDCWD, "plain", 02755, 0) ? err(errno) : "ok");
	printf("mkdir 02777: %s\n", mkdir("dir", 02777) ? err(errno) : "ok");
	printf("mknod fifo 04666: %s\n", mknod("fifo", S_IFIFO | 04666, 0) ? err(errno) : "ok");
	fd = open(".", O_TMPFILE | O_RDWR, 06755);
	if (fd >= 0) {
		fstat(fd, &st);
		printf("tmpfile mode: %o\n", st.st_mode & 07777);
		printf("tmpfile fchmod 04755: %s\n", fchmod(fd, 04755) ? err(errno) : "ok");
		fstat(fd, &st);
		printf("tmpfile after: %o\n", st.st_mode & 07777);
		close(fd);
	}
	fd = open("own", O_CREAT | O_WRONLY | O_EXCL, 0755);
	if (fd >= 0) {
		printf("fchown: %s\n", fchown(fd, 0, 0) ? err(errno) : "ok");
		close(fd);
	}
	const char *names[] = { "creat", "plain", "dir", "fifo", "own" };
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(p, sizeof(p), "%s", names[i]);
		if (lstat(p, &st) == 0)
			printf("%s mode: %o\n", names[i], st.st_mode & 07777);
	}
	return 0;
}

static int do_cat(const char *path)
{
	char line[256];
	FILE *f = fopen(path, "r");

	if (!f) {
		printf("%s: %s\n", path, err(errno));
		return 1;
	}
	if (!fgets(line, sizeof(line), f))
		printf("%s: empty\n", path);
	else
		printf("%s: read %zu bytes\n", path, strlen(line));
	fclose(f);
	return 0;
}

static int do_ids(void)
{
	printf("uid=%d euid=%d gid=%d egid=%d fsuid=%d groups=%d\n", getuid(), geteuid(), getgid(), getegid(),
	       setfsuid(-1), getgroups(0, NULL));
	return 0;
}

static int do_holdproc(const char *until)
{
	char p[64], link[4096] = "";
	int fd = open("/proc", O_RDONLY | O_DIRECTORY);
	ssize_t n;

	snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
	n = readlink(p, link, sizeof(link) - 1);
	printf("proc fd: %s\n", n < 0 ? err(errno) : link);
	if (chdir("/proc/self/fd") == 0 && getcwd(link, sizeof(link)))
		printf("cwd: %s\n", link);
	fflush(stdout);
	for (int i = 0; i < 1200 && access(until, F_OK) < 0; i++)
		usleep(50000);
	return 0;
}

/* Entries of directory fd (a dup: fd stays open at its offset), or -errno. */
static int count_entries(int fd)
{
	DIR *d = fdopendir(fcntl(fd, F_DUPFD_CLOEXEC, 0));
	int n = 0;

	if (!d)
		return -errno;
	rewinddir(d);
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

static int do_listproc(long n, const char *until)
{
	int held = open("/proc", O_RDONLY | O_DIRECTORY);
	char cwd[4096];

	if (held < 0 || chdir("/proc/self/fd") < 0)
		return 1;
	for (long i = 0; i < n; i++) {
		DIR *d = opendir("/proc/self");
		if (!d || !readdir(d)) {
			printf("listing %ld: %s\n", i, err(errno));
			return 1;
		}
		closedir(d);
	}
	printf("listed %ld\n", n);
	for (int i = 0; i < 1200 && access(until, F_OK) < 0; i++)
		usleep(50000);
	int dot = open(".", O_RDONLY | O_DIRECTORY);
	printf("held /proc lists: %s\n", count_entries(held) > 3 ? "yes" : "no");
	printf("cwd lists: %s, getcwd: %s\n", dot >= 0 && count_entries(dot) >= 5 ? "yes" : "no",
	       getcwd(cwd, sizeof(cwd)) ? cwd : err(errno));
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 2)
		return 2;
	const char *m = argv[1];
	if (!strcmp(m, "open") && argc >= 3) {
		int fd = open(argv[2], parse_flags(argv + 3, argc - 3), 0644);
		report(argv[2], fd);
		return 0;
	}
	if (!strcmp(m, "reopen") && argc == 3)
		return do_reopen(argv[2], 0);
	if (!strcmp(m, "reopenw") && argc == 3)
		return do_reopen(argv[2], 1);
	if (!strcmp(m, "race") && argc == 4)
		return do_race(argv[2], atof(argv[3]));
	if (!strcmp(m, "tmpfile") && argc == 3)
		return do_tmpfile(argv[2]);
	if (!strcmp(m, "fdname")) {
		for (int i = 2; i < argc; i++) {
			char p[256];
			snprintf(p, sizeof(p), "/proc/self/fd/%s", argv[i]);
			report(argv[i], open(p, O_RDONLY));
		}
		return 0;
	}
	if (!strcmp(m, "badptr"))
		return do_badptr();
	if (!strcmp(m, "readlink")) {
		for (int i = 2; i < argc; i++) {
			char buf[4096];
			ssize_t n = readlink(argv[i], buf, sizeof(buf) - 1);
			if (n >= 0)
				buf[n] = 0;
			printf("%s -> %s\n", argv[i], n < 0 ? err(errno) : buf);
		}
		return 0;
	}
	if (!strcmp(m, "modes") && argc == 3)
		return do_modes(argv[2]);
	if (!strcmp(m, "cat") && argc == 3)
		return do_cat(argv[2]);
	if (!strcmp(m, "execfd") && argc == 3) {
		int fd = open(argv[2], O_PATH);
		char *args[] = { argv[2], "open", "/", "path", NULL };
		syscall(SYS_execveat, fd, "", args, (char *[]){ NULL }, AT_EMPTY_PATH);
		printf("execveat: %s\n", err(errno));
		return 1;
	}
	if (!strcmp(m, "ids"))
		return do_ids();
	if (!strcmp(m, "swap") && argc == 5)
		return do_swap(argv[2], argv[3], atof(argv[4]));
	if (!strcmp(m, "replaced") && argc == 4)
		return do_replaced(argv[2], argv[3]);
	if (!strcmp(m, "listproc") && argc == 4)
		return do_listproc(atol(argv[2]), argv[3]);
	if (!strcmp(m, "holdproc") && argc == 3)
		return do_holdproc(argv[2]);
	return 2;
}

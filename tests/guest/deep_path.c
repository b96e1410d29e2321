/* deep_path: paths from a working directory deeper than PATH_MAX. usage: deep_path MODE
 *   ops      mkdir+chdir 30 levels of 200 bytes (over 6000 bytes), then at the bottom: getcwd (ENAMETOOLONG before
 *            ERANGE), create, write, stat, fstatat/openat with a deep dirfd, rename, link, symlink, readlink,
 *            unlink, mkdir/rmdir, chdir ".." back up until getcwd names the cwd again, then everything removed
 *   hostile  at the bottom: ".." far past the root (a string under 4096), a relative symlink climbing past the
 *            root, an absolute symlink, a symlink loop (ELOOP), a 256-byte component (ENAMETOOLONG; 255:
 *            ENOENT), strings of 4095, 4096 and 4097 bytes (with the NUL: 4096 is the most), then cleanup.
 *            It reads "marker" where the climbs end: run with --root DIR, it must be DIR's. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define LEVELS 30
#define NAMELEN 200

static char name[NAMELEN + 1];

static const char *en(long r)
{
	static const struct { int e; const char *n; } t[] = {
		{ EPERM, "EPERM" }, { ENOENT, "ENOENT" }, { EBADF, "EBADF" }, { EACCES, "EACCES" }, { EFAULT, "EFAULT" },
		{ EEXIST, "EEXIST" }, { ENOTDIR, "ENOTDIR" }, { EINVAL, "EINVAL" }, { ELOOP, "ELOOP" }, { EISDIR, "EISDIR" },
		{ ENAMETOOLONG, "ENAMETOOLONG" }, { ERANGE, "ERANGE" }, { ENOTEMPTY, "ENOTEMPTY" }, { EXDEV, "EXDEV" },
	};
	if (r >= 0)
		return "ok";
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (t[i].e == errno)
			return t[i].n;
	return "E?";
}

#define SHOW(what, call) do { long _r = (long)(call); printf("%s: %s\n", what, en(_r)); } while (0)

static int go_down(void)
{
	memset(name, 'a', NAMELEN);
	if (mkdir("deep", 0755) || chdir("deep"))
		return -1;
	for (int i = 0; i < LEVELS; i++)
		if (mkdir(name, 0755) || chdir(name)) {
			printf("level %d: %s\n", i, en(-1));
			return -1;
		}
	return 0;
}

/* Back to the top (the directory holding "deep"), removing every level. */
static void go_up_remove(void)
{
	for (int i = 0; i < LEVELS; i++)
		if (chdir("..") || rmdir(name))
			printf("remove level %d: %s\n", i, en(-1));
	if (chdir("..") || rmdir("deep"))
		printf("remove deep: %s\n", en(-1));
	else
		printf("removed all\n");
}

static void read_file(const char *what, const char *path)
{
	char buf[64] = "";
	int fd = open(path, O_RDONLY);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
	if (n > 0 && buf[n - 1] == '\n')
		n--;
	buf[n > 0 ? n : 0] = 0;
	printf("%s: %s %s\n", what, en(fd), buf);
	if (fd >= 0)
		close(fd);
}

static int ops(void)
{
	char buf[8192];
	struct stat st;

	if (go_down())
		return 1;
	/* the system call: glibc's getcwd() walks ".." itself when the kernel says ENAMETOOLONG */
	SHOW("getcwd(8192)", syscall(SYS_getcwd, buf, sizeof(buf)));
	SHOW("getcwd(10)", syscall(SYS_getcwd, buf, 10));
	int fd = open("f", O_CREAT | O_WRONLY | O_EXCL, 0644);
	SHOW("create f", fd);
	SHOW("write", write(fd, "hello\n", 6) == 6 ? 0 : -1);
	close(fd);
	SHOW("stat f", stat("f", &st));
	printf("size %ld, mode 0%o\n", (long)st.st_size, st.st_mode & 0777);
	read_file("read f", "f");
	SHOW("O_CREAT|O_EXCL again", open("f", O_CREAT | O_EXCL | O_WRONLY, 0644));
	SHOW("rename f g", rename("f", "g"));
	SHOW("stat f", stat("f", &st));
	SHOW("link g h", link("g", "h"));
	SHOW("stat h nlink", stat("h", &st) == 0 && st.st_nlink == 2 ? 0 : -1);
	SHOW("symlink g s", symlink("g", "s"));
	ssize_t n = readlink("s", buf, sizeof(buf));
	printf("readlink s: %.*s\n", (int)(n > 0 ? n : 0), buf);
	read_file("read through s", "s");
	SHOW("lstat s is a link", lstat("s", &st) == 0 && S_ISLNK(st.st_mode) ? 0 : -1);
	SHOW("open s O_NOFOLLOW", open("s", O_RDONLY | O_NOFOLLOW));
	SHOW("open g/ (trailing slash)", open("g/", O_RDONLY));
	SHOW("open g O_DIRECTORY", open("g", O_RDONLY | O_DIRECTORY));
	SHOW("mkdir x", mkdir("x", 0755));
	SHOW("mkdir x again", mkdir("x", 0755));
	int dfd = open("x", O_RDONLY | O_DIRECTORY);
	SHOW("open x dir", dfd);
	int f2 = openat(dfd, "in", O_CREAT | O_RDWR, 0600);
	SHOW("openat(x, in, O_CREAT)", f2);
	close(f2);
	SHOW("fstatat(x, in)", fstatat(dfd, "in", &st, 0));
	SHOW("fstatat(x, ../g)", fstatat(dfd, "../g", &st, 0));
	SHOW("rmdir x (not empty)", rmdir("x"));
	SHOW("unlinkat(x, in)", unlinkat(dfd, "in", 0));
	close(dfd);
	SHOW("chdir x", chdir("x"));
	SHOW("stat ../g", stat("../g", &st));
	SHOW("chdir ..", chdir(".."));
	SHOW("rmdir x", rmdir("x"));
	SHOW("rmdir x again", rmdir("x"));
	SHOW("unlink s", unlink("s"));
	SHOW("unlink h", unlink("h"));
	SHOW("unlink g", unlink("g"));
	SHOW("unlink g again", unlink("g"));
	SHOW("stat .", stat(".", &st));
	SHOW("stat ..", stat("..", &st));
	/* up until getcwd names the cwd again */
	int up = 0;
	while (syscall(SYS_getcwd, buf, sizeof(buf)) < 0 && errno == ENAMETOOLONG && up < LEVELS) {
		if (chdir(".."))
			break;
		up++;
	}
	long n2 = syscall(SYS_getcwd, buf, sizeof(buf));
	printf("getcwd again after %d levels up: %s, %s\n", up, n2 > 0 ? "yes" : en(-1),
	       n2 > 0 && (size_t)n2 == strlen(buf) + 1 && n2 <= 4096 ? "length ok" : "bad length");
	for (int i = 0; i < up; i++)
		if (chdir(name))
			printf("down again: %s\n", en(-1));
	go_up_remove();
	return 0;
}

static int hostile(void)
{
	static char p[8192];
	char buf[300];
	struct stat st;

	static char back[8192];
	if (!getcwd(back, sizeof(back)))
		return 1;
	if (go_down())
		return 1;
	/* climb: 1300 ".." (3900 bytes) is far above the top, and the string is under 4096 */
	p[0] = 0;
	for (int i = 0; i < 1300; i++)
		strcat(p, "../");
	strcat(p, "marker");
	read_file("1300 .. then marker", p);
	/* a symlink climbing past the root, and an absolute one */
	p[0] = 0;
	for (int i = 0; i < 1300; i++)
		strcat(p, "../");
	SHOW("symlink up", symlink(p, "up"));
	read_file("up/marker", "up/marker");
	SHOW("symlink /marker", symlink("/marker", "abs"));
	read_file("abs", "abs");
	SHOW("symlink loop", symlink("l2", "l1") | symlink("l1", "l2"));
	SHOW("open l1", open("l1", O_RDONLY));
	SHOW("stat l1/x", stat("l1/x", &st));
	SHOW("open l1 O_CREAT", open("l1", O_CREAT | O_WRONLY, 0600));
	SHOW("lstat l1", lstat("l1", &st));
	memset(buf, 'b', 256);
	buf[256] = 0;
	SHOW("open 256-byte name", open(buf, O_RDONLY));
	SHOW("mkdir 256-byte name", mkdir(buf, 0755));
	buf[255] = 0;
	SHOW("open 255-byte name", open(buf, O_RDONLY));
	SHOW("create 255-byte name", open(buf, O_CREAT | O_WRONLY, 0600));
	SHOW("unlink 255-byte name", unlink(buf));
	/* strings of 4095, 4096, 4097 bytes: "./" repeated, then a name */
	SHOW("create t", open("t", O_CREAT | O_WRONLY, 0600));
	for (int len = 4095; len <= 4097; len++) {
		memset(p, 0, sizeof(p));
		int k = 0;
		while (k < len - 1) {
			p[k++] = '.';
			p[k++] = '/';
		}
		p[len - 1] = 't';
		p[len] = 0;
		if ((int)strlen(p) != len || (len % 2 == 0 && p[len - 2] != '/')) {
			/* an even length: "./" pairs leave one byte: "/" doubled before the name */
			p[len - 2] = '/';
		}
		char what[64];
		snprintf(what, sizeof(what), "open of a %zu-byte string", strlen(p));
		SHOW(what, open(p, O_RDONLY));
	}
	SHOW("unlink t", unlink("t"));
	/* from the root, a string whose join with "/" is over 4096 bytes: into /proc all the same */
	SHOW("chdir /", chdir("/"));
	memset(p, 0, sizeof(p));
	for (int k = 0; k < 4078; k += 2)
		p[k] = '.', p[k + 1] = '/';
	strcat(p, "proc/self//status");	/* 4095 bytes: with the cwd "/" joined, 4096 */
	snprintf(buf, sizeof(buf), "open of a %zu-byte ./././proc/self//status from /", strlen(p));
	SHOW(buf, open(p, O_RDONLY));
	SHOW("open ./proc/self/status from /", open("./proc/self/status", O_RDONLY));
	SHOW("open /./proc/self/status", open("/./proc/self/status", O_RDONLY));
	SHOW("open //proc/self/status", open("//proc/self/status", O_RDONLY));
	SHOW("open /../proc/self/status", open("/../proc/self/status", O_RDONLY));
	SHOW("rmdir /.", rmdir("/."));
	SHOW("rmdir /..", rmdir("/.."));
	SHOW("mkdir /./", mkdir("/./", 0755));
	/* the same from /proc/self: a 4095-byte "./" run to status is the generated file, not a staged one */
	SHOW("chdir /proc/self", chdir("/proc/self"));
	memset(p, 0, sizeof(p));
	for (int k = 0; k < 4088; k += 2)
		p[k] = '.', p[k + 1] = '/';
	strcat(p, "status");
	char st_buf[16] = "";
	int sfd = open(p, O_RDONLY);
	ssize_t sn = sfd < 0 ? -1 : read(sfd, st_buf, 5);
	printf("open of a %zu-byte ./././status from /proc/self: %s, reads \"%.*s\"\n", strlen(p), en(sfd),
	       (int)(sn > 0 ? sn : 0), st_buf);
	SHOW("chdir back", chdir(back));
	SHOW("chdir deep", chdir("deep"));
	for (int i = 0; i < LEVELS; i++)
		if (chdir(name))
			return 1;
	unlink("up"), unlink("abs"), unlink("l1"), unlink("l2");
	go_up_remove();
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 2)
		return 2;
	if (!strcmp(argv[1], "ops"))
		return ops();
	if (!strcmp(argv[1], "hostile"))
		return hostile();
	return 2;
}

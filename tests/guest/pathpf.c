/* pathpf: path arguments at the edges of guest memory (issue 16's path prefetch: on seccomp the stub copies
 * a path call's path in the guest's own context before the sentry sees the call; a fault there must end in
 * the same errno as natively, never in a path the guest did not have). Each line is a call and its result,
 * compared with a native run:
 * - NULL, (char *)1 and a kernel address;
 * - a path whose NUL is the last byte of a page followed by an unmapped page, and one that runs into it;
 * - a path in a PROT_NONE page and in an unmapped page (not in a write-only one: x86 reads it natively and
 *   in the stub, but the sentry's process_vm_readv, without VM_READ, does not);
 * - a path split across two pages, one longer than the stub's copy (2032) and one longer than PATH_MAX;
 * - calls with two strings (the stub copies the second after the first's NUL): an xattr name and a second
 *   path that are NULL, end at a page's end, run into an unmapped page, or do not fit after a long first
 *   path (the sentry reads those itself);
 * - the same pointer for both paths of rename, link and symlink, and a path written by another thread
 *   between two calls (each call sees the path of its own time), in the directory argv[1]. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>

#define PG 4096

static void show(const char *what, long r)
{
	printf("%s: %s\n", what, r < 0 ? strerror(errno) : "ok");
}

static long st(const char *p)
{
	struct stat s;
	return syscall(SYS_newfstatat, AT_FDCWD, p, &s, 0);
}

static long calls(const char *what, const char *p)
{
	struct stat s;
	char b[64];
	char name[128];

	snprintf(name, sizeof(name), "%s stat", what);
	show(name, syscall(SYS_stat, p, &s));
	snprintf(name, sizeof(name), "%s lstat", what);
	show(name, syscall(SYS_lstat, p, &s));
	snprintf(name, sizeof(name), "%s newfstatat", what);
	show(name, st(p));
	snprintf(name, sizeof(name), "%s access", what);
	show(name, syscall(SYS_access, p, R_OK));
	snprintf(name, sizeof(name), "%s faccessat", what);
	show(name, syscall(SYS_faccessat, AT_FDCWD, p, R_OK));
	snprintf(name, sizeof(name), "%s readlink", what);
	show(name, syscall(SYS_readlink, p, b, sizeof(b)));
	snprintf(name, sizeof(name), "%s statx", what);
	char sx[256];
	show(name, syscall(SYS_statx, AT_FDCWD, p, 0, 0x7ff, sx));
	snprintf(name, sizeof(name), "%s openat", what);
	long fd = syscall(SYS_openat, AT_FDCWD, p, O_RDONLY);
	show(name, fd);
	if (fd >= 0)
		close((int)fd);
	return 0;
}

/* The calls with a second string: an xattr name, a second path (link's new name, in the cwd: argv[1]). */
static void seconds(const char *what, const char *path, const char *second, int paths)
{
	char b[64], name[128];

	snprintf(name, sizeof(name), "%s getxattr", what);
	show(name, getxattr(path, second, b, sizeof(b)));
	snprintf(name, sizeof(name), "%s lgetxattr", what);
	show(name, lgetxattr(path, second, b, sizeof(b)));
	snprintf(name, sizeof(name), "%s lremovexattr", what);
	show(name, lremovexattr(path, second));
	if (!paths)
		return;
	snprintf(name, sizeof(name), "%s link", what);
	long r = syscall(SYS_link, path, second);
	show(name, r);
	if (!r)
		unlink(second);
	snprintf(name, sizeof(name), "%s renameat", what);
	show(name, syscall(SYS_renameat, AT_FDCWD, path, AT_FDCWD, second));
	if (!r || !access(second, F_OK))
		(void)(syscall(SYS_rename, second, path) == 0);
}

static char *shared;

static void *writer(void *arg)
{
	(void)arg;
	strcpy(shared, "/nonexistent/b");
	return NULL;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	calls("NULL", NULL);
	calls("one", (const char *)1);
	calls("kernel", (const char *)0xffffffffff600000UL);

	/* three pages: [0] readable, [1] the edge, [2] unmapped */
	char *m = mmap(NULL, 3 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return 1;
	munmap(m + 2 * PG, PG);
	const char *etc = "/etc/passwd";
	size_t n = strlen(etc);
	char *edge = m + 2 * PG - (n + 1);
	memcpy(edge, etc, n + 1);
	calls("nul at page end", edge);
	char *over = m + 2 * PG - n;
	memcpy(over, etc, n);	/* no NUL before the unmapped page */
	calls("runs into unmapped", over);
	char *split = m + PG - 5;
	memcpy(split, etc, n + 1);
	calls("split across pages", split);

	char *p = mmap(NULL, PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	strcpy(p, etc);
	mprotect(p, PG, PROT_NONE);
	calls("prot none", p);
	munmap(p, PG);
	calls("unmapped", p);

	/* 3000 bytes of slashes then etc/passwd (longer than the stub copies), then one beyond PATH_MAX */
	char *longp = malloc(8192);
	memset(longp, '/', 3000);
	strcpy(longp + 3000, "etc/passwd");
	calls("3010 bytes", longp);
	memset(longp, '/', 5000);
	strcpy(longp + 5000, "etc/passwd");
	calls("5010 bytes", longp);
	memset(longp, '/', 2021);
	strcpy(longp + 2021, "etc/passwd");	/* 2031 + NUL: the stub's buffer's last bytes */
	calls("2031 bytes", longp);
	memset(longp, '/', 2022);
	strcpy(longp + 2022, "etc/passwd");	/* 2032 + NUL: one past */
	calls("2032 bytes", longp);

	/* second strings, in argv[1]: a file "a" to name first */
	if (argc < 2 || chdir(argv[1]))
		return 1;
	close(open("a", O_CREAT | O_WRONLY, 0600));
	seconds("second NULL", "a", NULL, 1);
	seconds("second one", "a", (const char *)1, 1);
	const char *nm = "user.none";
	char *nedge = m + 2 * PG - (strlen(nm) + 1);
	memcpy(nedge, nm, strlen(nm) + 1);
	seconds("second at page end", "a", nedge, 1);
	char *nover = m + 2 * PG - strlen(nm);
	memcpy(nover, nm, strlen(nm));
	seconds("second runs into unmapped", "a", nover, 1);
	seconds("second split across pages", "a", split, 0);	/* "/etc/passwd" as an xattr name: EOPNOTSUPP */
	/* first paths ("./" ... "a") that leave the second ("user.none" + NUL) room in the stub's buffer, just
	 * enough (2021 + NUL + 10 = 2032), and one byte short */
	static const int firsts[] = { 2007, 2021, 2022 };
	for (int i = 0; i < 3; i++) {
		char what[64];
		for (int j = 0; j < firsts[i] - 1; j++)
			longp[j] = j % 2 ? '/' : '.';
		longp[firsts[i] - 2] = '/';	/* "././" ... "/a" or ... ".//a" */
		strcpy(longp + firsts[i] - 1, "a");
		snprintf(what, sizeof(what), "first %zu bytes", strlen(longp));
		seconds(what, longp, nm, 1);
	}
	unlink("a");

	/* the same pointer twice; then each call sees the path of its own time */
	char same[] = "a";
	close(open(same, O_CREAT | O_WRONLY, 0600));
	show("rename same", syscall(SYS_rename, same, same));
	show("link same", syscall(SYS_link, same, same));
	show("symlink same", syscall(SYS_symlink, same, same));
	show("renameat2 same", syscall(SYS_renameat2, AT_FDCWD, same, AT_FDCWD, same, 0));
	shared = malloc(64);
	strcpy(shared, "a");
	show("before the write", st(shared));
	pthread_t t;
	pthread_create(&t, NULL, writer, NULL);
	pthread_join(t, NULL);
	show("after the write", st(shared));
	return unlink("a") ? 1 : 0;
}

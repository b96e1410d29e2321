/*
 * openat2(2) (tests/openat2.bats), natively and under pvx with the same output. It works in ./t,
 * made anew: t/a is the dirfd, t/f holds "OUT" (outside a), t/a/f holds "A".
 *   openat2 how       struct open_how's size rules and flag checks (hostile: bad, short, huge, unaligned)
 *   openat2 resolve   every RESOLVE_ bit against "..", absolute and relative symlinks, /proc magic links
 *   openat2 create    O_CREAT and O_TMPFILE under the scopes, a dangling symlink followed to create
 *   openat2 race      (hostile) a thread moves a directory while we walk ".." through it, BENEATH/IN_ROOT
 *   openat2 rofs      O_CREAT in a read-only root (sandbox only): EROFS
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "guest.h"

/* linux/openat2.h (musl has no kernel headers) */
struct open_how {
	uint64_t flags, mode, resolve;
};
#define RESOLVE_NO_XDEV 0x01
#define RESOLVE_NO_MAGICLINKS 0x02
#define RESOLVE_NO_SYMLINKS 0x04
#define RESOLVE_BENEATH 0x08
#define RESOLVE_IN_ROOT 0x10
#define RESOLVE_CACHED 0x20
#ifndef SYS_openat2
#define SYS_openat2 437
#endif

#ifndef __O_TMPFILE
#define __O_TMPFILE 020000000
#endif

static int adir = -1;

static long o2(int dirfd, const char *path, const void *how, size_t size)
{
	return syscall(SYS_openat2, dirfd, path, how, size);
}

static const char *res(long r)
{
	static char b[64];
	if (r >= 0) {
		char c[8] = { 0 };
		ssize_t n = pread((int)r, c, sizeof(c) - 1, 0);
		struct stat st;
		fstat((int)r, &st);
		if (n > 0) {
			c[strcspn(c, "\n")] = 0;
			snprintf(b, sizeof(b), "ok \"%s\"", c);
		} else {
			snprintf(b, sizeof(b), "ok (%s)", S_ISDIR(st.st_mode) ? "dir" : S_ISLNK(st.st_mode) ? "link" : "file");
		}
		close((int)r);
		return b;
	}
	switch (errno) {
	case EXDEV: return "EXDEV";
	case ELOOP: return "ELOOP";
	case E2BIG: return "E2BIG";
	case ENOTDIR: return "ENOTDIR";
	case EROFS: return "EROFS";
	case EISDIR: return "EISDIR";
	default: return errname(errno);
	}
}

static void t_open(const char *name, int dirfd, const char *path, uint64_t flags, uint64_t mode, uint64_t resolve)
{
	struct open_how how = { .flags = flags, .mode = mode, .resolve = resolve };
	say("%s: %s\n", name, res(o2(dirfd, path, &how, sizeof(how))));
}

static void rmtree(int dfd, const char *name)
{
	int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
	if (fd >= 0) {
		DIR *d = fdopendir(fd);
		struct dirent *e;
		while ((e = readdir(d)))
			if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
				rmtree(fd, e->d_name);
		closedir(d);
		unlinkat(dfd, name, AT_REMOVEDIR);
	} else {
		unlinkat(dfd, name, 0);
	}
}

static void put(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || write(fd, text, strlen(text)) < 0)
		_exit(3);
	close(fd);
}

static void setup(void)
{
	umask(022);
	rmtree(AT_FDCWD, "t");
	if (mkdir("t", 0755) || mkdir("t/a", 0755) || mkdir("t/a/sub", 0755) || mkdir("t/a/sub/deep", 0755))
		_exit(3);
	put("t/f", "OUT\n");
	put("t/a/f", "A\n");
	if (symlink("../..", "t/a/sub/up") || symlink("..", "t/a/up") || symlink("/f", "t/a/abs") ||
	    symlink("f", "t/a/self") || symlink("newfile", "t/a/dang") || symlink("loop", "t/a/loop") ||
	    symlink("/etc/../../../f", "t/a/absdots"))
		_exit(3);
	adir = open("t/a", O_PATH | O_DIRECTORY);
}

static void do_how(void)
{
	struct open_how how = { .flags = O_RDONLY };
	char *page = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	static char big[8192];

	say("size 0: %s\n", res(o2(adir, "f", &how, 0)));
	say("size 23: %s\n", res(o2(adir, "f", &how, 23)));
	say("size 24: %s\n", res(o2(adir, "f", &how, 24)));
	memcpy(big, &how, sizeof(how));
	say("size 32, zero tail: %s\n", res(o2(adir, "f", big, 32)));
	say("size 4096, zero tail: %s\n", res(o2(adir, "f", big, 4096)));
	say("size 4097: %s\n", res(o2(adir, "f", big, 4097)));
	say("size SIZE_MAX: %s\n", res(o2(adir, "f", big, SIZE_MAX)));
	big[31] = 1;
	say("size 32, nonzero byte 31: %s\n", res(o2(adir, "f", big, 32)));
	say("size 24 of it (the nonzero byte unread): %s\n", res(o2(adir, "f", big, 24)));
	big[31] = 0;
	big[4095] = 1;
	say("size 4096, nonzero last byte: %s\n", res(o2(adir, "f", big, 4096)));
	big[4095] = 0;
	memcpy(big + 1, &how, sizeof(how));
	say("unaligned how: %s\n", res(o2(adir, "f", big + 1, 24)));
	say("how NULL: %s\n", res(o2(adir, "f", NULL, 24)));
	say("how 0x1: %s\n", res(o2(adir, "f", (void *)1, 24)));
	say("how kernel address: %s\n", res(o2(adir, "f", (void *)0xffffffff81000000UL, 24)));
	munmap(page + 4096, 4096);
	memcpy(page + 4096 - 24, &how, sizeof(how));
	say("how ends at an unmapped page: %s\n", res(o2(adir, "f", page + 4096 - 24, 24)));
	say("how's tail in an unmapped page: %s\n", res(o2(adir, "f", page + 4096 - 24, 32)));
	say("path NULL: %s\n", res(o2(adir, NULL, &how, 24)));
	t_open("flags bit 40", adir, "f", 1ULL << 40, 0, 0);
	t_open("flags bit 31", adir, "f", 1ULL << 31, 0, 0);
	t_open("flags O_ACCMODE 3", adir, "f", 3, 0, 0);
	t_open("resolve bit 0x40", adir, "f", O_RDONLY, 0, 0x40);
	t_open("resolve bit 63", adir, "f", O_RDONLY, 0, 1ULL << 63);
	t_open("BENEATH|IN_ROOT", adir, "f", O_RDONLY, 0, RESOLVE_BENEATH | RESOLVE_IN_ROOT);
	t_open("mode without O_CREAT", adir, "f", O_RDONLY, 0644, 0);
	t_open("mode 010000 with O_CREAT", adir, "n", O_RDWR | O_CREAT, 010000, 0);
	t_open("O_PATH|O_RDWR", adir, "f", O_PATH | O_RDWR, 0, 0);
	t_open("O_PATH|O_NOFOLLOW|O_DIRECTORY|O_CLOEXEC", adir, ".", O_PATH | O_NOFOLLOW | O_DIRECTORY | O_CLOEXEC, 0, 0);
	t_open("__O_TMPFILE without O_DIRECTORY", adir, ".", __O_TMPFILE | O_RDWR, 0600, 0);
	t_open("O_TMPFILE read-only", adir, ".", O_TMPFILE | O_RDONLY, 0600, 0);
	t_open("O_CREAT|O_DIRECTORY", adir, "n", O_CREAT | O_DIRECTORY | O_RDWR, 0600, 0);
	t_open("CACHED|O_CREAT", adir, "n", O_CREAT | O_RDWR, 0600, RESOLVE_CACHED);
	t_open("CACHED|O_TRUNC", adir, "f", O_TRUNC | O_RDWR, 0, RESOLVE_CACHED);
	t_open("empty path", adir, "", O_RDONLY, 0, 0);
	t_open("dirfd a file", open("t/a/f", O_RDONLY), "f", O_RDONLY, 0, RESOLVE_BENEATH);
	t_open("dirfd 999", 999, "f", O_RDONLY, 0, RESOLVE_IN_ROOT);
}

static void do_resolve(void)
{
	static const struct { const char *n; uint64_t r; } modes[] = {
		{ "plain", 0 }, { "BENEATH", RESOLVE_BENEATH }, { "IN_ROOT", RESOLVE_IN_ROOT },
		{ "NO_SYMLINKS", RESOLVE_NO_SYMLINKS }, { "NO_MAGICLINKS", RESOLVE_NO_MAGICLINKS },
		{ "NO_XDEV", RESOLVE_NO_XDEV },
	};
	static const char *paths[] = { "f", "../f", "up/f", "sub/up/f", "/f", "abs", "absdots", "self", "loop",
				       "sub/../../f", "sub/deep/../../f", "./sub/./../f", "." };
	char name[128];

	for (unsigned p = 0; p < sizeof(paths) / sizeof(paths[0]); p++)
		for (unsigned m = 0; m < sizeof(modes) / sizeof(modes[0]); m++) {
			snprintf(name, sizeof(name), "%s %s", modes[m].n, paths[p]);
			t_open(name, adir, paths[p], O_RDONLY, 0, modes[m].r);
		}
	t_open("NO_SYMLINKS O_PATH|O_NOFOLLOW self", adir, "self", O_PATH | O_NOFOLLOW, 0, RESOLVE_NO_SYMLINKS);
	t_open("IN_ROOT|NO_SYMLINKS abs", adir, "abs", O_RDONLY, 0, RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS);
	t_open("IN_ROOT .. at the top", adir, "../../../..", O_RDONLY | O_DIRECTORY, 0, RESOLVE_IN_ROOT);
	t_open("CACHED . (ok or EAGAIN)", adir, ".", O_RDONLY | O_DIRECTORY, 0, RESOLVE_CACHED);
	/* the guest's /proc: symlinks and magic links */
	int fd = open("t/a/f", O_RDONLY);
	char fdpath[64];
	snprintf(fdpath, sizeof(fdpath), "/proc/self/fd/%d", fd);
	t_open("plain /proc/self/fd/N", AT_FDCWD, fdpath, O_RDONLY, 0, 0);
	t_open("NO_MAGICLINKS /proc/self/fd/N", AT_FDCWD, fdpath, O_RDONLY, 0, RESOLVE_NO_MAGICLINKS);
	t_open("NO_SYMLINKS /proc/self/fd/N", AT_FDCWD, fdpath, O_RDONLY, 0, RESOLVE_NO_SYMLINKS);
	t_open("NO_MAGICLINKS /proc/self/root/etc", AT_FDCWD, "/proc/self/root/etc", O_RDONLY | O_DIRECTORY, 0,
	       RESOLVE_NO_MAGICLINKS);
	t_open("NO_MAGICLINKS /proc/self/cwd", AT_FDCWD, "/proc/self/cwd", O_RDONLY | O_DIRECTORY, 0,
	       RESOLVE_NO_MAGICLINKS);
	t_open("NO_MAGICLINKS /proc/self/status", AT_FDCWD, "/proc/self/status", O_RDONLY, 0, RESOLVE_NO_MAGICLINKS);
	t_open("NO_SYMLINKS /proc/self/status", AT_FDCWD, "/proc/self/status", O_RDONLY, 0, RESOLVE_NO_SYMLINKS);
	t_open("NO_XDEV /proc/self/status", AT_FDCWD, "/proc/self/status", O_RDONLY, 0, RESOLVE_NO_XDEV);
	t_open("BENEATH /proc/self/status", AT_FDCWD, "/proc/self/status", O_RDONLY, 0, RESOLVE_BENEATH);
	t_open("IN_ROOT (cwd) /proc/self/root", AT_FDCWD, "/proc/self/root", O_RDONLY, 0, RESOLVE_IN_ROOT);
	/* a symlink to a magic link in the tree: scoped walks refuse the jump */
	unlink("t/a/magic");
	if (symlink(fdpath, "t/a/magic") == 0) {
		t_open("BENEATH abs->magic", adir, "magic", O_RDONLY, 0, RESOLVE_BENEATH);
		t_open("NO_MAGICLINKS magic", adir, "magic", O_RDONLY, 0, RESOLVE_NO_MAGICLINKS);
	}
	close(fd);
}

static void do_create(void)
{
	struct stat st;
	long r;
	struct open_how how = { .flags = O_RDWR | O_CREAT, .mode = 0666, .resolve = RESOLVE_BENEATH };

	r = o2(adir, "new1", &how, sizeof(how));
	say("BENEATH O_CREAT new1: %s\n", r >= 0 ? "made" : res(r));
	if (r >= 0 && fstat((int)r, &st) == 0)
		say("new1 mode %o\n", st.st_mode & 07777);
	if (r >= 0)
		close((int)r);
	t_open("BENEATH O_CREAT|O_EXCL new1 again", adir, "new1", O_RDWR | O_CREAT | O_EXCL, 0600, RESOLVE_BENEATH);
	t_open("BENEATH O_CREAT ../escape", adir, "../escape", O_RDWR | O_CREAT, 0600, RESOLVE_BENEATH);
	t_open("IN_ROOT O_CREAT ../inroot", adir, "../inroot", O_RDWR | O_CREAT, 0600, RESOLVE_IN_ROOT);
	say("inroot made in a: %s; escape made: %s\n", yesno(access("t/a/inroot", F_OK) == 0),
	    yesno(access("t/escape", F_OK) == 0));
	t_open("NO_SYMLINKS O_CREAT dang", adir, "dang", O_RDWR | O_CREAT, 0600, RESOLVE_NO_SYMLINKS);
	t_open("BENEATH O_CREAT dang", adir, "dang", O_RDWR | O_CREAT, 0600, RESOLVE_BENEATH);
	say("newfile made through dang: %s\n", yesno(access("t/a/newfile", F_OK) == 0));
	unlink("t/a/dang");
	if (symlink("/dangabs", "t/a/dang") < 0)
		_exit(3);
	t_open("BENEATH O_CREAT dang->/dangabs", adir, "dang", O_RDWR | O_CREAT, 0600, RESOLVE_BENEATH);
	t_open("IN_ROOT O_CREAT dang->/dangabs", adir, "dang", O_RDWR | O_CREAT, 0600, RESOLVE_IN_ROOT);
	say("dangabs made in a: %s\n", yesno(access("t/a/dangabs", F_OK) == 0));
	t_open("BENEATH O_CREAT sub/", adir, "sub/", O_RDWR | O_CREAT, 0600, RESOLVE_BENEATH);
	t_open("BENEATH O_CREAT nodir/x", adir, "nodir/x", O_RDWR | O_CREAT, 0600, RESOLVE_BENEATH);
	t_open("BENEATH O_TMPFILE .", adir, ".", O_TMPFILE | O_RDWR, 0600, RESOLVE_BENEATH);
	t_open("BENEATH O_TMPFILE ..", adir, "..", O_TMPFILE | O_RDWR, 0600, RESOLVE_BENEATH);
	r = open("t/a/f", O_RDONLY);
	struct open_how tr = { .flags = O_WRONLY | O_TRUNC, .resolve = RESOLVE_BENEATH };
	long w = o2(adir, "f", &tr, sizeof(tr));
	say("BENEATH O_TRUNC f: %s; size now %ld\n", w >= 0 ? "ok" : res(w),
	    fstat((int)r, &st) == 0 ? (long)st.st_size : -1L);
	if (w >= 0)
		close((int)w);
	close((int)r);
}

static volatile int stop;
static void *mover(void *arg)
{
	(void)arg;
	while (!stop) {
		rename("t/a/sub", "t/sub");
		rename("t/sub", "t/a/sub");
	}
	return NULL;
}

static void do_race(void)
{
	static const struct { const char *n; uint64_t r; } modes[] = {
		{ "BENEATH", RESOLVE_BENEATH }, { "IN_ROOT", RESOLVE_IN_ROOT },
	};
	pthread_t th;
	pthread_create(&th, NULL, mover, NULL);
	for (unsigned m = 0; m < 2; m++) {
		int escapes = 0, odd = 0;
		for (int i = 0; i < 1000; i++) {
			struct open_how how = { .flags = O_RDONLY, .resolve = modes[m].r };
			long fd = o2(adir, "sub/deep/../../f", &how, sizeof(how));
			if (fd < 0) {	/* sub moved away, or the kernel saw the rename (retry, or ".." out of dirfd) */
				odd += errno != ENOENT && errno != EAGAIN && errno != EXDEV;
				continue;
			}
			char c[4] = { 0 };
			if (pread((int)fd, c, 3, 0) > 0 && !strcmp(c, "OUT"))
				escapes++;
			else if (strcmp(c, "A\n"))
				odd++;
			close((int)fd);
		}
		say("race %s: escapes %d, other results %d\n", modes[m].n, escapes, odd);
	}
	stop = 1;
	pthread_join(th, NULL);
	rename("t/sub", "t/a/sub");
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	if (!strcmp(argv[1], "rofs")) {
		adir = open(".", O_PATH | O_DIRECTORY);
		t_open("BENEATH O_CREAT in a read-only root", adir, "new2", O_RDWR | O_CREAT, 0600, RESOLVE_BENEATH);
		t_open("IN_ROOT O_TMPFILE in a read-only root", adir, ".", O_TMPFILE | O_RDWR, 0600, RESOLVE_IN_ROOT);
		return 0;
	}
	if (!strcmp(argv[1], "fd0")) {	/* fd 0 is a directory outside the root, handed by whoever ran pvx */
		t_open("BENEATH f from fd 0", 0, "f", O_RDONLY, 0, RESOLVE_BENEATH);
		t_open("IN_ROOT f from fd 0", 0, "f", O_RDONLY, 0, RESOLVE_IN_ROOT);
		t_open("NO_XDEV f from fd 0", 0, "f", O_RDONLY, 0, RESOLVE_NO_XDEV);
		t_open("plain f from fd 0", 0, "f", O_RDONLY, 0, 0);
		say("openat f from fd 0: %s\n", res(openat(0, "f", O_RDONLY)));
		return 0;
	}
	if (!strcmp(argv[1], "root")) {	/* under pvx --root R: nothing outside R is reached, whatever the walk */
		static const struct { const char *n; uint64_t r; } modes[] = {
			{ "plain", 0 }, { "BENEATH", RESOLVE_BENEATH }, { "IN_ROOT", RESOLVE_IN_ROOT },
			{ "NO_SYMLINKS", RESOLVE_NO_SYMLINKS }, { "NO_XDEV", RESOLVE_NO_XDEV },
			{ "NO_MAGICLINKS", RESOLVE_NO_MAGICLINKS },
		};
		static const char *paths[] = { "../f", "../../../../f", "/../f", "link", "abslink", "d/../../f",
					       "/proc/self/root/../f", "/proc/1/cwd/../f", "/proc/self/fd/3/../f" };
		int d = open("/d", O_PATH | O_DIRECTORY);	/* fd 3 */
		char name[128];
		for (unsigned p = 0; p < sizeof(paths) / sizeof(paths[0]); p++)
			for (unsigned m = 0; m < sizeof(modes) / sizeof(modes[0]); m++) {
				snprintf(name, sizeof(name), "%s %s from /", modes[m].n, paths[p]);
				t_open(name, AT_FDCWD, paths[p], O_RDONLY, 0, modes[m].r);
				snprintf(name, sizeof(name), "%s %s from /d", modes[m].n, paths[p]);
				t_open(name, d, paths[p], O_RDONLY, 0, modes[m].r);
			}
		return 0;
	}
	setup();
	if (!strcmp(argv[1], "how"))
		do_how();
	else if (!strcmp(argv[1], "resolve"))
		do_resolve();
	else if (!strcmp(argv[1], "create"))
		do_create();
	else if (!strcmp(argv[1], "race"))
		do_race();
	else
		return 2;
	rmtree(AT_FDCWD, "t");
	return 0;
}

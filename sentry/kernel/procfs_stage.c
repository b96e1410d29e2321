// SPDX-License-Identifier: GPL-2.0
/*
 * /proc's directories for getdents: each listing is a directory of empty
 * files staged in a private host directory (procfs_dir_fd), removed when
 * no fd of the sentry is open on it any more (stage_gc).
 */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pvx/hostcred.h"
#include "pvx/path.h"
#include "pvx/sandbox.h"
#include "sentry/kernel/procfs.h"

/*
 * Where directory listings are staged: a private directory made by
 * mkdtemp(3) (mode 0700, a random name: nothing to predict or plant) at the
 * first listing, and everything in it made relative to its fd, never
 * following a symlink. Made with the sentry's own file access (root's when
 * the guest's is nobody's), so a guest cannot reach it by its host name.
 */
static char stage[64];
static int stage_fd = -1;

/* Empty the directory dirfd (made here: no symlinks followed, depth small). */
static void rm_tree(int dirfd)
{
	bool removed = true;

	fchmod(dirfd, 0700);
	while (removed) {
		int dup_fd = fcntl(dirfd, F_DUPFD_CLOEXEC, 3);
		DIR *d = dup_fd < 0 ? NULL : fdopendir(dup_fd);
		struct dirent *e;
		if (!d)
			return;
		rewinddir(d);
		removed = false;
		while ((e = readdir(d))) {
			if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
				continue;
			if (unlinkat(dirfd, e->d_name, 0) == 0) {
				removed = true;
				continue;
			}
			if (errno != EISDIR)
				continue;
			int sub = openat(dirfd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (sub >= 0) {
				rm_tree(sub);
				close(sub);
			}
			if (unlinkat(dirfd, e->d_name, AT_REMOVEDIR) == 0)
				removed = true;
		}
		closedir(d);
	}
}

/*
 * Listings nothing refers to any more are removed, else a guest listing
 * /proc in a loop would fill the host's /tmp with directories (its inodes,
 * or its memory where /tmp is a tmpfs), past anything --memory bounds. A
 * listing is referred to while a host fd of the sentry is open on it: the
 * guest's open directory, a cwd, a dirfd (the stubs hold none). So every
 * STAGE_GC_EVERY listings, the sentry's own fds are read (/proc/self/fd)
 * and the listings none of them names go. Under the sentry lock, like every
 * listing: no fd can be in flight between its making and this scan.
 */
#define STAGE_GC_EVERY 256

static unsigned made;

static int cmp_uint(const void *a, const void *b)
{
	unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;

	return x < y ? -1 : x > y;
}

/* The listing (SEQ of stage/SEQ/...) host fd fd is open on, or -1. */
static long listing_of_fd(int fd)
{
	char proc[64], host[PATH_MAX], *end;
	size_t n = strlen(stage);

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	ssize_t len = readlink(proc, host, sizeof(host) - 1);
	if (len <= (ssize_t)n || strncmp(host, stage, n) || host[n] != '/')
		return -1;
	host[len] = 0;
	unsigned long seq = strtoul(host + n + 1, &end, 10);
	return end == host + n + 1 || seq > UINT_MAX ? -1 : (long)seq;
}

static void stage_gc(void)
{
	size_t n = 0, cap = 64;
	cleanup_free unsigned *used = malloc(cap * sizeof(*used));
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;

	if (!used || !d)
		goto out;
	while ((e = readdir(d))) {
		long seq = listing_of_fd(atoi(e->d_name));
		if (seq < 0)
			continue;
		if (n == cap) {
			unsigned *more = realloc(used, 2 * cap * sizeof(*used));
			if (!more)
				goto out;	/* keep everything rather than remove what may be in use */
			used = more;
			cap *= 2;
		}
		used[n++] = (unsigned)seq;
	}
	closedir(d);
	d = NULL;
	qsort(used, n, sizeof(*used), cmp_uint);
	hostcred_raise();
	int dup_fd = fcntl(stage_fd, F_DUPFD_CLOEXEC, 3);
	DIR *s = dup_fd < 0 ? NULL : fdopendir(dup_fd);
	if (s)
		rewinddir(s);	/* the dup shares stage_fd's offset: the last scan left it at the end */
	while (s && (e = readdir(s))) {
		char *end;
		unsigned long seq = strtoul(e->d_name, &end, 10);
		if (end == e->d_name || *end || seq > UINT_MAX)
			continue;
		unsigned key = (unsigned)seq;
		if (bsearch(&key, used, n, sizeof(*used), cmp_uint))
			continue;
		int sub = openat(stage_fd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sub >= 0) {
			rm_tree(sub);
			close(sub);
		}
		(void)unlinkat(stage_fd, e->d_name, AT_REMOVEDIR);
	}
	if (s)
		closedir(s);
	hostcred_lower();
out:
	if (d)
		closedir(d);
}

static void stage_cleanup(void)
{
	hostcred_raise();
	rm_tree(stage_fd);
	close(stage_fd);
	rmdir(stage);
	hostcred_lower();
}

/*
 * /dev/shm or /tmp, the first that is on a file system other than the
 * guest root's, so that /proc's directories have a device of their own as
 * Linux's proc does (find / -xdev stops at /proc); /tmp when neither is.
 */
static const char *stage_parent(void)
{
	static const char *const where[] = { "/dev/shm", "/tmp" };
	struct stat dir, root;

	for (size_t i = 0; i < ARRAY_SIZE(where); i++)
		if (stat(where[i], &dir) == 0 && S_ISDIR(dir.st_mode) && fstat(sandbox.rootfd, &root) == 0 &&
		    dir.st_dev != root.st_dev && access(where[i], W_OK | X_OK) == 0)
			return where[i];
	return "/tmp";
}

static long stage_init(void)
{
	snprintf(stage, sizeof(stage), "%s/pvx-XXXXXX", stage_parent());
	if (!mkdtemp(stage))
		return neg_errno();
	stage_fd = open(stage, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (stage_fd < 0) {
		long err = neg_errno();
		rmdir(stage);
		stage[0] = 0;
		return err;
	}
	atexit(stage_cleanup);
	return 0;
}

/* Make directory name in dirfd and open it. */
static long subdir(int dirfd, const char *name)
{
	if (mkdirat(dirfd, name, 0755) < 0)
		return neg_errno();
	int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	return fd < 0 ? neg_errno() : fd;
}

/* A fresh stage/SEQ/proc/... standing for guest_dir ("/proc/5/fd"): its leaf opened, or -errno. */
static long stage_dirs(const char *guest_dir)
{
	static unsigned seq;
	char comp[PVX_PATH_MAX];
	long r;

	if (stage_fd < 0 && (r = stage_init()) < 0)
		return r;
	if (++made % STAGE_GC_EVERY == 0)
		stage_gc();
	snprintf(comp, sizeof(comp), "%u", seq++);
	r = subdir(stage_fd, comp);
	/* one level per component: /proc, /proc/5, ... */
	for (const char *c = guest_dir; r >= 0 && *c;) {
		const char *next = strchr(c + 1, '/');
		size_t clen = next ? (size_t)(next - c) : strlen(c);
		snprintf(comp, sizeof(comp), "%.*s", (int)clen - 1, c + 1);
		long fd = subdir((int)r, comp);
		close((int)r);
		r = fd;
		c += clen;
	}
	return r;
}

static long make_listing(const char *guest_dir, const char *const names[], size_t n,
			 unsigned char (*type_of)(const char *))
{
	long r = stage_dirs(guest_dir);

	if (r < 0)
		return r;
	for (size_t i = 0; i < n; i++) {
		unsigned char type = type_of ? type_of(names[i]) : DT_REG;
		if (type == DT_LNK) {
			(void)symlinkat("?", (int)r, names[i]);	/* for getdents' d_type: lookups never go through it */
			continue;
		}
		if (type == DT_DIR) {
			(void)mkdirat((int)r, names[i], 0555);
			continue;
		}
		int e = openat((int)r, names[i], O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0444);
		if (e >= 0)
			close(e);
	}
	fchmod((int)r, 0555);
	return r;
}

/*
 * A directory of /proc (/proc, /proc/PID, /proc/PID/fd): a fresh staging
 * directory holding one empty file per name (a symlink or a directory
 * where type_of says DT_LNK or DT_DIR, for getdents' d_type), so getdents
 * lists them; every lookup in it
 * comes back here by path, never through this directory. Its host path
 * ends in the guest path it stands for (stage/SEQ/proc/5/fd), so that
 * path_of_fd can name it: a cwd or dirfd there works like Linux's.
 */
long procfs_dir_fd_typed(const char *guest_dir, const char *const names[], size_t n,
			 unsigned char (*type_of)(const char *))
{
	hostcred_raise();
	long r = make_listing(guest_dir, names, n, type_of);
	hostcred_lower();
	return r;
}

long procfs_dir_fd(const char *guest_dir, const char *const names[], size_t n)
{
	return procfs_dir_fd_typed(guest_dir, names, n, NULL);
}

/*
 * A /proc link itself (lstat, O_PATH|O_NOFOLLOW): an O_PATH fd on a
 * symlink to target staged as stage/SEQ/proc/.../name, so that fstat says
 * S_IFLNK with target's length, readlinkat(fd, "") reads target, and
 * path_of_fd names it by its guest path, as Linux's O_PATH fds on them do.
 */
long procfs_link_fd(const char *guest_path, const char *target)
{
	char dir[PVX_PATH_MAX];
	const char *name = strrchr(guest_path, '/');

	if (!name || (size_t)(name - guest_path) >= sizeof(dir))
		return -ENAMETOOLONG;
	snprintf(dir, sizeof(dir), "%.*s", (int)(name - guest_path), guest_path);
	hostcred_raise();
	long r = stage_dirs(dir);
	if (r >= 0) {
		long fd = symlinkat(target, (int)r, name + 1) < 0 ? neg_errno() :
			  openat((int)r, name + 1, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (fd == -1)
			fd = neg_errno();
		fchmod((int)r, 0555);
		close((int)r);
		r = fd;
	}
	hostcred_lower();
	return r;
}

long procfs_dir_path(const char *host, char *buf, size_t size)
{
	size_t n = strlen(stage);
	char *end;

	if (!n || strncmp(host, stage, n) || host[n] != '/')
		return -EXDEV;
	strtoul(host + n + 1, &end, 10);	/* the sequence number */
	if (strncmp(end, "/proc", 5))
		return -EXDEV;
	if (strlen(end) >= size)
		return -ERANGE;
	strcpy(buf, end);
	return (long)strlen(end);
}

// SPDX-License-Identifier: GPL-2.0
/*
 * Paths deeper than PATH_MAX. path.c resolves every guest path as one
 * absolute path from the root with openat2(RESOLVE_IN_ROOT); when the
 * directory a relative path starts from is itself deeper than the host can
 * name (a cwd made by mkdir and chdir, 100 bytes at a time, past 4096: Go's
 * os.RemoveAll test), that join cannot be made. Linux limits only the
 * string a call is given (getname: ENAMETOOLONG at 4096 with the NUL), so
 * such a path is walked here from the directory's fd, one component at a
 * time, as the kernel's link_path_walk does:
 *  - a component is opened with O_PATH|O_NOFOLLOW beneath the directory
 *    reached so far: the host never follows a symlink (nor a /proc magic
 *    link) for the guest;
 *  - a symlink's target replaces it (40 at most, ELOOP); an absolute one
 *    starts again at the sandbox root;
 *  - ".." of the sandbox root is the root itself;
 *  - each directory on the way meets the policy (policy_check_dir).
 * Whenever the walk stands in a directory whose guest path the host can
 * name again (the root, or after a ".." or an absolute symlink) and the
 * rest fits, the rest goes back to path.c as one absolute path (handoff),
 * so /proc, /dev/fd and every other rule of path.c keep applying.
 * The starting directory is first proven to be inside the root (its ".."
 * chain meets the root before the host's /) when the root is not the
 * host's /.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "pvx/path.h"
#include "pvx/policy.h"
#include "sentry/fs/path_long.h"

#define WALK_LINKS 40			/* MAXSYMLINKS */
#define WALK_MAX (2 * PVX_PATH_MAX)	/* a symlink's target and what follows it */
#define WALK_UP_MAX 65536		/* ".." steps in the proof that a directory is inside the root */

static bool same_obj(int a, int b)
{
	struct stat sa, sb;

	return fstat(a, &sa) == 0 && fstat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

static bool is_root(int fd)
{
	return same_obj(fd, sandbox.rootfd);
}

/* Is the directory base inside the root? Its ".." chain meets the root before the host's / (whose ".." is itself). */
static long inside_root(int base)
{
	if (path_root_is_host())
		return 0;
	int cur = fcntl(base, F_DUPFD_CLOEXEC, 3);
	for (int i = 0; cur >= 0 && i < WALK_UP_MAX; i++) {
		if (is_root(cur)) {
			close(cur);
			return 0;
		}
		int up = openat(cur, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
		bool top = up >= 0 && same_obj(up, cur);
		close(cur);
		if (top) {
			close(up);
			return -EXDEV;
		}
		cur = up;
	}
	if (cur >= 0)
		close(cur);
	return cur < 0 ? neg_errno() : -EXDEV;
}

/*
 * Can the rest rem be resolved from the root as one path? Then w->abs is
 * that path (1). 0: cur has a name but the whole is too long; -1: cur has
 * no name the host can give.
 */
static int handoff(int cur, const char *rem, struct long_walk *w)
{
	char name[PVX_PATH_MAX];
	long n = is_root(cur) ? (long)snprintf(name, sizeof(name), "/") : path_of_dir(cur, name, sizeof(name));

	if (n < 0)
		return -1;
	while (*rem == '/' || (rem[0] == '.' && (rem[1] == '/' || !rem[1])))
		rem++;	/* "./" too: path.c knows /proc by its leading name */
	n = snprintf(w->abs, sizeof(w->abs), "%s/%s", strcmp(name, "/") ? name : "", rem);
	w->handoff = n >= 0 && (size_t)n < sizeof(w->abs);
	return w->handoff;
}

/* A symlink's target (readlinkat of its O_PATH fd) into buf; -errno. */
static long link_target(int fd, char *buf, size_t size)
{
	ssize_t n = readlinkat(fd, "", buf, size - 1);

	if (n < 0)
		return neg_errno();
	if (n == 0)
		return -ENOENT;	/* an empty symlink names nothing */
	buf[n] = 0;
	return n;
}

/*
 * rem := target + "/" + rest (rest may lie inside rem; NULL: the target
 * alone). The new walk starts at the root for an absolute target (*cur
 * replaced): 1 then, else 0.
 */
static long splice_link(char *rem, const char *rest, const char *target, int *cur)
{
	char tmp[WALK_MAX];

	if ((size_t)snprintf(tmp, sizeof(tmp), "%s%s%s", target, rest ? "/" : "", rest ? rest : "") >= sizeof(tmp))
		return -ENAMETOOLONG;
	strcpy(rem, tmp);
	if (target[0] != '/')
		return 0;
	int root = fcntl(sandbox.rootfd, F_DUPFD_CLOEXEC, 3);
	if (root < 0)
		return neg_errno();
	close(*cur);
	*cur = root;
	return 1;	/* at the root: a handoff may follow */
}

/*
 * The walk of rem's directories from *cur (owned, replaced as it goes).
 * named: cur may have a name (the start, after "..", at the root): a
 * handoff is tried before each component until it has none or the walk
 * goes down (a /proc directory's staging dir is named this way, and
 * handed back before any of its files is reached). On success *cur is the
 * last component's directory and w->last/w->slash are set, or w->handoff.
 */
static long walk_dirs(int *cur, char *rem, bool named, int *links, struct long_walk *w)
{
	char comp[NAME_MAX + 1], target[PVX_PATH_MAX];
	char *p = rem;
	struct stat st;

	for (;;) {
		if (named) {
			int h = handoff(*cur, p, w);
			if (h > 0)
				return 0;
			named = h == 0;	/* "." keeps the name: the rest shrinks */
		}
		while (*p == '/')
			p++;
		size_t n = strcspn(p, "/");
		if (n > NAME_MAX)
			return -ENAMETOOLONG;
		char *q = p + n;
		while (*q == '/')
			q++;
		memcpy(comp, p, n);
		comp[n] = 0;
		if (!*q) {
			memcpy(w->last, comp, n + 1);
			w->slash = p[n] == '/';
			return 0;
		}
		p = q;
		if (!strcmp(comp, "."))
			continue;
		if (!strcmp(comp, "..") && is_root(*cur)) {
			named = true;
			continue;	/* ".." of the root is the root */
		}
		int next = openat(*cur, comp, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (next < 0)
			return neg_errno();
		if (fstat(next, &st) < 0) {
			long err = neg_errno();
			close(next);
			return err;
		}
		if (S_ISLNK(st.st_mode)) {
			long r = ++*links > WALK_LINKS ? -ELOOP : link_target(next, target, sizeof(target));
			close(next);
			if (r >= 0)
				r = splice_link(rem, p, target, cur);
			if (r < 0)
				return r;
			named = true;	/* a new rest: perhaps it fits now */
			p = rem;
			continue;
		}
		long r = S_ISDIR(st.st_mode) ? policy_check_dir(next) : -ENOTDIR;
		if (r < 0) {
			close(next);
			return r;
		}
		close(*cur);
		*cur = next;
		named = !strcmp(comp, "..");	/* up: perhaps short enough to name again */
	}
}

/* See sentry/fs/path_long.h. */
long path_long_parent(int base, const char *path, struct long_walk *w)
{
	cleanup_free char *rem = malloc(WALK_MAX);
	int links = 0;

	w->handoff = false;
	w->dir = w->fd = -1;
	if (!rem)
		return -ENOMEM;
	if (strlen(path) >= PVX_PATH_MAX)
		return -ENAMETOOLONG;
	strcpy(rem, path);
	long r = inside_root(base);
	int cur = r < 0 ? -1 : fcntl(base, F_DUPFD_CLOEXEC, 3);
	if (r < 0 || cur < 0)
		return r < 0 ? r : neg_errno();
	r = walk_dirs(&cur, rem, true, &links, w);
	if (r < 0 || w->handoff) {
		close(cur);
		return r;
	}
	w->dir = cur;
	return 0;
}

/* The last component of a walk (w->dir, w->last): its O_PATH fd, unfollowed; -errno. */
static long open_last(struct long_walk *w)
{
	if (!w->last[0] || !strcmp(w->last, ".") || (!strcmp(w->last, "..") && is_root(w->dir))) {
		int fd = fcntl(w->dir, F_DUPFD_CLOEXEC, 3);
		return fd < 0 ? neg_errno() : fd;
	}
	int fd = openat(w->dir, w->last, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	return fd < 0 ? neg_errno() : fd;
}

/* See sentry/fs/path_long.h. */
long path_long_lookup(int base, const char *path, bool follow, struct long_walk *w)
{
	cleanup_free char *rem = malloc(WALK_MAX);
	char target[PVX_PATH_MAX];
	int links = 0;
	struct stat st;

	long r = path_long_parent(base, path, w);
	if (r < 0 || w->handoff)
		return r;
	if (!rem) {
		close(w->dir);
		return -ENOMEM;
	}
	for (;;) {
		long fd = open_last(w);
		if (fd < 0 || fstat((int)fd, &st) < 0 || !S_ISLNK(st.st_mode) || !(follow || w->slash)) {
			if (fd >= 0 && w->slash && !S_ISDIR(st.st_mode)) {
				close((int)fd);
				fd = -ENOTDIR;
			}
			w->fd = (int)fd;
			return 0;
		}
		/* a symlink to follow: its target (and the slash) is walked from its directory */
		r = ++links > WALK_LINKS ? -ELOOP : link_target((int)fd, target, sizeof(target));
		close((int)fd);
		if (r >= 0)
			r = splice_link(rem, w->slash ? "" : NULL, target, &w->dir);
		if (r >= 0) {
			if ((r = walk_dirs(&w->dir, rem, true, &links, w)) >= 0 && w->handoff)
				r = 0;
		}
		if (r < 0 || w->handoff) {
			close(w->dir);
			w->dir = -1;
			return r;
		}
	}
}

/* The name of the directory child in the directory parent (its own dev and ino in *st); -ENOENT. */
static long name_in(int parent, const struct stat *st, char *name)
{
	int fd = openat(parent, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd < 0 ? NULL : fdopendir(fd);
	struct stat cs;
	long r = -ENOENT;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return -ENOENT;
	}
	/* d_ino first, checked by fstatat; then every name (a mount point's d_ino is the covered inode) */
	for (int pass = 0; pass < 2 && r < 0; pass++) {
		rewinddir(d);
		for (struct dirent *e; r < 0 && (e = readdir(d));) {
			if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") || (!pass && e->d_ino != st->st_ino))
				continue;
			if (fstatat(parent, e->d_name, &cs, AT_SYMLINK_NOFOLLOW) == 0 && cs.st_dev == st->st_dev &&
			    cs.st_ino == st->st_ino) {
				snprintf(name, NAME_MAX + 1, "%s", e->d_name);
				r = 0;
			}
		}
	}
	closedir(d);
	return r;
}

/* See sentry/fs/path_long.h. */
long path_long_name(int dir, char *buf, size_t size)
{
	char name[NAME_MAX + 1];
	size_t len = 0;
	struct stat st;
	long r = 0;

	if (size < 2)
		return -ERANGE;
	buf[0] = 0;
	int cur = fcntl(dir, F_DUPFD_CLOEXEC, 3);
	while (cur >= 0 && r == 0 && !is_root(cur)) {
		int up = openat(cur, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (up < 0 || fstat(cur, &st) < 0 || same_obj(up, cur))
			r = up < 0 ? neg_errno() : -EXDEV;	/* the host's /: outside the root */
		else if ((r = name_in(up, &st, name)) == 0) {
			size_t n = strlen(name);
			if (len + n + 1 >= size)
				r = -ENAMETOOLONG;
			else {
				memmove(buf + n + 1, buf, len + 1);
				buf[0] = '/';
				memcpy(buf + 1, name, n);
				len += n + 1;
			}
		}
		close(cur);
		cur = up;
	}
	if (cur >= 0)
		close(cur);
	else if (r == 0)
		r = -ENOENT;
	if (r < 0)
		return r;
	if (!len)
		strcpy(buf, "/");
	return (long)strlen(buf);
}

// SPDX-License-Identifier: GPL-2.0
/*
 * Guest path resolution, confined to the sandbox root.
 *
 * Relative paths are made absolute from the guest path of the directory fd
 * (read back from /proc/self/fd, so renames and symlinks give the kernel's
 * answer) and the whole path is then resolved by openat2(2) from the root
 * with RESOLVE_IN_ROOT: ".." at the root stays at the root and absolute
 * symlinks are resolved against it. RESOLVE_NO_MAGICLINKS refuses
 * /proc/self/root, /proc/self/fd/N and friends, which would jump out.
 * What a lookup finds is an O_PATH fd; the policy (sentry/fs/policy.c)
 * decides on that object, which is then opened itself, never looked up again.
 */
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "pvx/path.h"
#include "pvx/policy.h"
#include "sentry/fs/dcache.h"
#include "sentry/fs/fs_kind.h"
#include "sentry/fs/path_long.h"

static char root_host[PATH_MAX];
static size_t root_len;	/* 0 when the root is the host's / */
const struct fs_kernel_ops *fs_kernel;	/* set once at start, before any path is resolved */

/* See pvx/path.h. */
void path_set_kernel(const struct fs_kernel_ops *ops)
{
	fs_kernel = ops;
}

long path_set_root(const char *host_root)
{
	if (!realpath(host_root, root_host))
		return neg_errno();
	root_len = strcmp(root_host, "/") ? strlen(root_host) : 0;
	int fd = open(root_host, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return neg_errno();
	sandbox.rootfd = fd;
	return 0;
}

bool path_root_is_host(void)
{
	return !root_len;
}

long path_of_fd(int host_fd, char *buf, size_t size)
{
	char proc[64], host[PATH_MAX + 1];	/* the host names at most 4095 bytes (d_path's page): never cut */
	const char *guest;

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", host_fd);
	ssize_t n = readlink(proc, host, sizeof(host) - 1);
	if (n < 0 && errno == ENAMETOOLONG && root_len) {
		struct stat st;	/* under --root a guest path may fit where the host's does not */
		return fstat(host_fd, &st) == 0 && S_ISDIR(st.st_mode) ? path_long_name(host_fd, buf, size) : -ENAMETOOLONG;
	}
	if (n < 0)
		return neg_errno();
	host[n] = 0;
	if (host[0] != '/')
		return -ENOENT;	/* pipe:[...], anon_inode:..., socket:... */
	long r = fs_kernel->proc_dir_path(host, buf, size);	/* a directory of the guest's /proc */
	if (r != -EXDEV)
		return r;
	if (!root_len)
		guest = host;
	else if (!strncmp(host, root_host, root_len) && (host[root_len] == '/' || !host[root_len]))
		guest = host[root_len] ? host + root_len : "/";
	else
		return -EXDEV;
	if (strlen(guest) >= size)
		return -ERANGE;
	strcpy(buf, guest);
	return (long)strlen(guest);
}

/*
 * "/", "./" and "../" before the first name of an absolute path all stand
 * for the root (its ".." is itself): dropped, so that "/./proc", "//proc"
 * and a cwd of "/" joined to "./proc" are known as /proc. A last "." or
 * ".." stays (rmdir and mkdir tell "/." from "/").
 */
static void skip_root_prefix(char *abs)
{
	char *p = abs;

	for (;;) {
		while (*p == '/')
			p++;
		size_t n = p[0] == '.' ? (p[1] == '.' ? 2 : 1) : 0;
		char *q = p + n;
		if (!n || *q != '/')
			break;
		while (*q == '/')
			q++;
		if (!*q)
			break;
		p = q;
	}
	if (p > abs + 1)
		memmove(abs + 1, p, strlen(p) + 1);
}

/*
 * /dev/fd, /dev/stdin, /dev/stdout and /dev/stderr are symlinks into /proc
 * on the host; they name the guest's own fds here (bash's <(...) uses them).
 */
static long dev_fd_alias(char *abs, size_t size)
{
	skip_root_prefix(abs);
	static const struct { const char *dev, *proc; } alias[] = {
		{ "/dev/fd", "/proc/self/fd" }, { "/dev/stdin", "/proc/self/fd/0" },
		{ "/dev/stdout", "/proc/self/fd/1" }, { "/dev/stderr", "/proc/self/fd/2" },
	};
	char tmp[PVX_PATH_MAX];

	for (size_t i = 0; i < ARRAY_SIZE(alias); i++) {
		size_t n = strlen(alias[i].dev);
		if (strncmp(abs, alias[i].dev, n) || (abs[n] && abs[n] != '/'))
			continue;
		if ((size_t)snprintf(tmp, sizeof(tmp), "%s%s", alias[i].proc, abs + n) >= size)
			return -ENAMETOOLONG;
		strcpy(abs, tmp);
		break;
	}
	return 0;
}

bool path_in_proc(const char *abs)
{
	return !strncmp(abs, "/proc", 5) && (abs[5] == '/' || !abs[5]);
}

/* See pvx/path.h. */
long path_dir_fd(struct task *t, int fd)
{
	struct file *f = fd_lookup(t->files, fd);
	struct stat st;

	if (!f)
		return -EBADF;
	long hfd = file_object(f, FILE_DIR);
	if (hfd < 0)
		return hfd;
	/* A directory's kind is given by its stat when opened, and an inode's type never changes: no fstat. */
	if (f->ops == &dir_file_ops && hfd == f->host_fd)
		return hfd;
	if (fstat((int)hfd, &st) < 0)
		return neg_errno();
	return S_ISDIR(st.st_mode) ? hfd : -ENOTDIR;
}

/* Is the directory base_fd removed (rmdir'd, its name gone: d_unlinked)? */
static bool dir_unlinked(int base_fd)
{
	struct stat st;

	return fstat(base_fd, &st) == 0 && S_ISDIR(st.st_mode) && st.st_nlink == 0;
}

/* See pvx/path.h. The host names a removed directory "NAME (deleted)": only then is the fstat made. */
long path_of_dir(int host_fd, char *buf, size_t size)
{
	static const char deleted[] = " (deleted)";
	long n = path_of_fd(host_fd, buf, size);

	if (n >= (long)sizeof(deleted) - 1 && !strcmp(buf + n - (sizeof(deleted) - 1), deleted) && dir_unlinked(host_fd))
		return -ENOENT;
	return n;
}

/*
 * A relative path from a removed directory has no name to be joined to:
 * its leading ".." components are walked by the host from the directory
 * itself (Linux keeps a removed directory's parent), never above the
 * guest's root; *up is then the directory reached and *path what is left.
 * A removed directory is empty: a path that stays in it is ENOENT, and so,
 * unlike Linux, is "." (absolute paths have no name for it).
 */
static long unlinked_base(int base_fd, const char **path, int *up)
{
	struct stat st, root;
	const char *p = *path;

	int cur = fcntl(base_fd, F_DUPFD_CLOEXEC, 3);
	if (cur < 0)
		return neg_errno();
	while (cur >= 0 && dir_unlinked(cur)) {
		while (*p == '/' || (p[0] == '.' && (p[1] == '/' || !p[1])))
			p++;
		if (!(p[0] == '.' && p[1] == '.' && (p[2] == '/' || !p[2]))) {
			close(cur);
			return -ENOENT;
		}
		p += 2;
		if (fstat(cur, &st) == 0 && fstat(sandbox.rootfd, &root) == 0 && st.st_dev == root.st_dev &&
		    st.st_ino == root.st_ino)
			continue;	/* ".." of the root is the root */
		int parent = openat(cur, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
		close(cur);
		cur = parent;
	}
	if (cur < 0)
		return neg_errno();
	while (*p == '/')
		p++;
	*path = *p ? p : ".";
	*up = cur;
	return 0;
}

/* Guest dirfd + path -> absolute guest path in out. */
long path_absolute(struct task *t, int dirfd, const char *path, char *out, size_t size)
{
	char base[PVX_PATH_MAX];
	long base_fd = t->fs->cwd_fd;
	long r;

	if (path[0] == '/') {
		if (strlen(path) >= size)
			return -ENAMETOOLONG;
		strcpy(out, path);
		return dev_fd_alias(out, size);
	}
	if (dirfd != AT_FDCWD && (base_fd = path_dir_fd(t, dirfd)) < 0)
		return base_fd;
	cleanup_close int up = -1;
	r = path_of_dir((int)base_fd, base, sizeof(base));
	if (r == -ENOENT && dir_unlinked((int)base_fd)) {	/* removed: walk its ".."s from the directory itself */
		if ((r = unlinked_base((int)base_fd, &path, &up)) < 0)
			return r;
		r = path_of_fd(up, base, sizeof(base));
	}
	if (r < 0)
		return r == -ERANGE ? -ENAMETOOLONG : r;
	if ((size_t)snprintf(out, size, "%s/%s", strcmp(base, "/") ? base : "", path) >= size)
		return -ENAMETOOLONG;
	return dev_fd_alias(out, size);
}

#define OPENAT2_TRIES 64	/* EAGAIN: another rename or mount of the host's raced a ".." */

/*
 * openat2(2) from the root with how: "EAGAIN ... resolution of \"..\"
 * raced against a rename or mount elsewhere on the system; the caller
 * should retry" (openat2(2)). A guest's open knows no such error: retried.
 */
static long openat2_root(const char *abs, struct open_how *how)
{
	long fd = -1;

	for (int i = 0; i < OPENAT2_TRIES; i++)
		if ((fd = syscall(SYS_openat2, sandbox.rootfd, abs, how, sizeof(*how))) >= 0 || errno != EAGAIN)
			break;
	return fd < 0 ? neg_errno() : fd;
}

/*
 * openat2(2) inside the root, with the guest's own openat2 resolve bits
 * (RESOLVE_NO_SYMLINKS, RESOLVE_NO_XDEV, RESOLVE_CACHED) added when it
 * gave some (sentry/fs/openat2.c); no policy here: callers check what they get.
 */
static long open_in_root_r(const char *abs, int flags, int mode, uint64_t resolve)
{
	struct open_how how = {
		.flags = (uint64_t)(flags | O_CLOEXEC),
		.mode = flags & (O_CREAT | PVX_O_TMPFILE_BIT) ? (uint64_t)(mode & 07777) : 0,
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS | resolve,
	};
	return openat2_root(abs, &how);
}

static long open_in_root(const char *abs, int flags, int mode)
{
	return open_in_root_r(abs, flags, mode, 0);
}

/*
 * Would a walk of abs without symlinks reach an object whose guest path is
 * outside /sys? Yes when no component is ".." and the first one that is
 * not "." is not "sys": the path walked is then the object's own.
 */
static bool walk_outside_sys(const char *abs)
{
	bool first = true;

	for (const char *p = abs; *p;) {
		while (*p == '/')
			p++;
		size_t n = strcspn(p, "/");
		if (n == 2 && p[0] == '.' && p[1] == '.')
			return false;
		if (n && !(n == 1 && p[0] == '.')) {
			if (first && n == 3 && !strncmp(p, "sys", 3))
				return false;
			first = false;
		}
		p += n;
	}
	return true;
}

/*
 * The O_PATH lookup of abs (open_in_root), first without following any
 * symlink when walk_outside_sys(abs): if that finds the object, *not_sys
 * says its path is outside /sys and the policy need not ask the host for
 * it. A path through a symlink (ELOOP) is looked up again, following it.
 */
static long lookup_in_root(const char *abs, int flags, bool *not_sys, uint64_t resolve)
{
	*not_sys = false;
	if (walk_outside_sys(abs)) {
		struct open_how how = {
			.flags = (uint64_t)(flags | O_CLOEXEC),
			.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_SYMLINKS | resolve,
		};
		long fd = openat2_root(abs, &how);
		if (fd != -ELOOP) {
			*not_sys = fd >= 0;
			return fd;
		}
	}
	return open_in_root_r(abs, flags, 0, resolve);
}

/*
 * open(2)'s own checks of flags, made before any lookup: "EINVAL O_TMPFILE
 * was specified in flags, but neither O_WRONLY nor O_RDWR was specified",
 * O_CREAT with O_DIRECTORY (Linux 6.4 and later). O_PATH drops every flag
 * but O_DIRECTORY and O_NOFOLLOW, as open(2) does.
 */
static long open_flags(int *flags)
{
	int f = *flags & ~O_CLOEXEC;

	if (f & O_PATH)
		f &= O_PATH | O_DIRECTORY | O_NOFOLLOW;
	else if (f & PVX_O_TMPFILE_BIT) {
		if ((f & (PVX_O_TMPFILE_BIT | O_DIRECTORY | O_CREAT)) != (PVX_O_TMPFILE_BIT | O_DIRECTORY) ||
		    (f & O_ACCMODE) == O_RDONLY)
			return -EINVAL;
	} else if ((f & (O_CREAT | O_DIRECTORY)) == (O_CREAT | O_DIRECTORY))
		return -EINVAL;
	*flags = f;
	return 0;
}

/*
 * An O_PATH fd found by the lookup (o: its policy_stat): the guest gets it
 * as it is, if the policy allows; o is copied to *found when found is given.
 */
static long keep_opath(int fd, const struct policy_obj *o, int flags, struct policy_obj *found)
{
	long r = policy_check_obj(fd, o, flags, -1);

	if (r < 0) {
		close(fd);
		return r;
	}
	if (found)
		*found = *o;
	return fd;
}

/* keep_opath of an fd not yet described. */
static long keep_opath_fd(int fd, int flags)
{
	struct policy_obj o = { .x = NULL };
	long r = policy_stat(fd, &o);

	if (r < 0) {
		close(fd);
		return r;
	}
	return keep_opath(fd, &o, flags, NULL);
}

/*
 * abs names nothing; is it a dangling symlink? O_CREAT follows it and
 * creates its target, so abs becomes the target (resolved against the
 * link's directory, or the root for an absolute one): 1. 0 when abs is not
 * a symlink (then it is created itself).
 */
static long dangling_target(char *abs, size_t size)
{
	char target[PVX_PATH_MAX];
	struct stat st;
	size_t n = strlen(abs);
	ssize_t len;

	if (!n || abs[n - 1] == '/')
		return 0;
	long fd = open_in_root(abs, O_PATH | O_NOFOLLOW, 0);
	if (fd < 0)
		return fd == -ENOENT ? 0 : fd;
	if (fstat((int)fd, &st) < 0 || !S_ISLNK(st.st_mode)) {
		close((int)fd);
		return 1;	/* it is there now: look again */
	}
	len = readlinkat((int)fd, "", target, sizeof(target) - 1);
	long err = len < 0 ? neg_errno() : 0;
	close((int)fd);
	if (len <= 0)
		return err ? err : -ENOENT;
	target[len] = 0;
	if (target[0] != '/') {
		*strrchr(abs, '/') = 0;	/* abs is absolute: there is a '/' */
		n = strlen(abs);
		if (n + 1 + (size_t)len >= size)
			return -ENAMETOOLONG;
		abs[n] = '/';
		memcpy(abs + n + 1, target, (size_t)len + 1);
	} else {
		if ((size_t)len >= size)
			return -ENAMETOOLONG;
		strcpy(abs, target);
	}
	return 1;
}

/* A directory on the way to a name, as an O_PATH fd: hidden ones (/sys...) are ENOENT. */
static long open_dir_checked(const char *abs, uint64_t resolve)
{
	long fd = open_in_root_r(abs, O_PATH | O_DIRECTORY, 0, resolve);
	long r = fd < 0 ? fd : policy_check_dir((int)fd);

	if (r < 0 && fd >= 0)
		close((int)fd);
	return r < 0 ? r : fd;
}

/* path_parent for an absolute guest path (abs is cut to its directory part). */
static long parent_of(char *abs, char *last, size_t size, enum path_last *type, uint64_t resolve)
{
	size_t start, end;

	for (end = strlen(abs); end > 0 && abs[end - 1] == '/'; end--)
		;
	if (!end) {
		/* "/", "//": the root has no parent; "." names it for the host call. */
		*type = PATH_LAST_ROOT;
		if (size < 2)
			return -ENAMETOOLONG;
		strcpy(last, ".");
		return open_dir_checked("/", resolve);
	}
	for (start = end; abs[start - 1] != '/'; start--)
		;	/* abs is absolute: a '/' precedes every component */
	if (strlen(abs + start) >= size)
		return -ENAMETOOLONG;
	strcpy(last, abs + start);
	if (end - start == 1 && abs[start] == '.')
		*type = PATH_LAST_DOT;
	else if (end - start == 2 && abs[start] == '.' && abs[start + 1] == '.')
		*type = PATH_LAST_DOTDOT;
	else
		*type = PATH_LAST_NORM;
	abs[start] = 0;	/* the directory part, ending in '/' */
	return open_dir_checked(abs, resolve);
}

/*
 * Create last in the directory dir (checked), O_EXCL; the new file is
 * checked too. EISDIR: last is no plain name ("pathname refers to a
 * directory", a trailing slash).
 */
static long create_at(int dir, const char *last, int flags, int mode)
{
	struct stat st;
	long r = 0;

	if (!sandbox.rw)
		return -EROFS;
	int fd = openat(dir, last, flags | O_CREAT | O_EXCL | O_NOCTTY | O_CLOEXEC, PVX_MODE_NOSUID(mode) & 07777);
	if (fd < 0)
		return neg_errno();
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || (r = policy_check(fd, &st, flags & ~O_TRUNC, -1)) < 0) {
		close(fd);
		return r < 0 ? r : -EIO;
	}
	return fd;
}

/*
 * Create abs (nothing is there): in its directory, checked like any other,
 * with O_EXCL, so whatever appeared there meanwhile is not opened (EEXIST
 * for the caller to look again). The new file is checked too.
 */
static long create_file(const char *abs, int flags, int mode, uint64_t resolve)
{
	char dirpart[PVX_PATH_MAX], last[PVX_PATH_MAX];
	enum path_last type;

	snprintf(dirpart, sizeof(dirpart), "%s", abs);
	long dir = parent_of(dirpart, last, sizeof(last), &type, resolve);

	if (dir < 0)
		return dir;
	long fd = type != PATH_LAST_NORM || strchr(last, '/') ? -EISDIR : create_at((int)dir, last, flags, mode);
	close((int)dir);
	return fd;
}

/*
 * May the lookup open the object itself, with the guest's flags, instead of
 * an O_PATH lookup and a reopen of what it found (two host calls fewer)?
 * Only when opening has no side effect on any object the lookup can find:
 * O_DIRECTORY makes the host refuse anything but a directory (ENOTDIR),
 * and opening a directory read-only runs no driver, waits for no writer,
 * takes no terminal; the policy then judges the open directory and closes
 * it if refused. Flags past these few (O_NOATIME, O_DIRECT, ...) keep the
 * O_PATH lookup, and openat2 would refuse bits that open(2) ignores.
 */
static bool open_direct(int flags)
{
	return (flags & O_DIRECTORY) && (flags & O_ACCMODE) == O_RDONLY &&
	       !(flags & ~(O_DIRECTORY | O_NONBLOCK | O_NOFOLLOW | 0100000 /* O_LARGEFILE, 0 to the sentry */ | O_NOCTTY | O_CLOEXEC));
}

/*
 * The object a lookup found (fd, O_PATH, or the directory itself when
 * open_direct(flags); o: its policy_obj to fill) opened
 * with flags: policy_stat, then the O_PATH fd itself (keep_opath) or the
 * object reopened (policy_reopen_obj). fd is consumed.
 */
static long open_found(struct task *t, int fd, struct policy_obj *o, bool not_sys, int flags, int mode,
		       const struct file_ops **kind, struct policy_obj *found)
{
	bool excl = (flags & (O_CREAT | O_EXCL)) == (O_CREAT | O_EXCL);
	long r = excl ? -EEXIST : policy_stat(fd, o);

	if (r < 0) {
		close(fd);
		return r;
	}
	o->not_sys = not_sys;
	if (!(flags & PVX_O_TMPFILE_BIT))
		*kind = file_kind_of_mode(o->st.st_mode);
	if (flags & O_PATH)
		return keep_opath(fd, o, flags, found);
	if (open_direct(flags)) {	/* the lookup opened the directory itself: checked, kept or closed */
		if ((r = policy_check_obj(fd, o, flags, -1)) < 0)
			close(fd);
		return r < 0 ? r : fd;
	}
	r = policy_reopen_obj(t, fd, o, flags, mode, -1);
	close(fd);
	return r;
}

#define CREATE_TRIES 16	/* a name that keeps appearing and vanishing under an O_CREAT */

/*
 * Open guest path abs (not under /proc) with checked flags: look it up with
 * O_PATH inside the root, check that object (policy_check), open that
 * object (policy_reopen). O_CREAT of a missing name creates it (with
 * O_EXCL: nothing that appears meanwhile is opened unchecked). When O_CREAT
 * meets a dangling symlink, abs becomes its target and *again is set.
 * A FIFO's open waits for t with the sentry lock dropped (policy_reopen).
 * What was opened is the object looked up (but for O_TMPFILE): its kind is
 * left in *kind, and for O_PATH its policy_obj in *found (when found is
 * given: its x, x_mask and x_sync ask for a guest's statx on the way).
 */
static long open_checked(struct task *t, char *abs, size_t size, int flags, int mode, bool *again,
			 const struct file_ops **kind, struct policy_obj *found, uint64_t resolve)
{
	bool excl = (flags & (O_CREAT | O_EXCL)) == (O_CREAT | O_EXCL);
	int look = O_PATH | (flags & O_DIRECTORY) | (excl || (flags & O_NOFOLLOW) ? O_NOFOLLOW : 0);

	if (open_direct(flags))
		look = flags | O_NOCTTY;

	for (int tries = 0; tries < CREATE_TRIES; tries++) {
		struct policy_obj o = { .x = found ? found->x : NULL, .x_mask = found ? found->x_mask : 0,
					.x_sync = found ? found->x_sync : 0 };
		bool not_sys;
		long fd = lookup_in_root(abs, look, &not_sys, resolve);
		if (fd >= 0)
			return open_found(t, (int)fd, &o, not_sys, flags, mode, kind, found);
		if (fd != -ENOENT || !(flags & O_CREAT))
			return fd;
		if (!excl && !(flags & O_NOFOLLOW)) {
			long r = dangling_target(abs, size);
			if (r > 0 && (resolve & RESOLVE_NO_SYMLINKS))
				return -ELOOP;	/* openat2's RESOLVE_NO_SYMLINKS: the link is not followed to create */
			if (r)
				return (*again = r > 0) ? 0 : r;
		}
		fd = create_file(abs, flags, mode, resolve);
		if (fd != -EEXIST || excl)
			return fd;
	}
	return -EAGAIN;
}

/*
 * Devices every Linux system has. A root without its own (a bare --root
 * directory) gets the host's, as a container runtime mounts a /dev: busybox
 * sh opens /dev/null for background jobs. Returns -ENOENT when abs is not
 * one of them or the root has its own. The host's node meets the policy too.
 */
static long open_std_device(const char *abs, int flags)
{
	static const char *const devices[] = { "/dev/null", "/dev/zero", "/dev/full", "/dev/random",
					       "/dev/urandom", "/dev/tty" };

	for (size_t i = 0; i < ARRAY_SIZE(devices); i++) {
		if (strcmp(abs, devices[i]))
			continue;
		long own = open_in_root(abs, O_PATH, 0);
		if (own != -ENOENT) {
			if (own >= 0)
				close((int)own);
			return -ENOENT;
		}
		int fd = open(abs, O_PATH | O_CLOEXEC);
		if (fd < 0)
			return neg_errno();
		if (flags & O_PATH)
			return keep_opath_fd(fd, flags);
		long r = policy_reopen(NULL, fd, flags & ~(O_CREAT | O_EXCL | O_TRUNC), 0, -1);
		close(fd);
		return r;
	}
	return -ENOENT;
}

#define MAX_CREATE_LINKS 40	/* MAXSYMLINKS */

static long path_open_kind(struct task *t, int dirfd, const char *path, int flags, int mode,
			   const struct file_ops **kind, struct policy_obj *found, uint64_t resolve);

/* The kind of last component a name is (parent_of's). */
static enum path_last last_type(const char *last)
{
	return !strcmp(last, ".") ? PATH_LAST_DOT : !strcmp(last, "..") ? PATH_LAST_DOTDOT : PATH_LAST_NORM;
}

/*
 * path_open_kind of a relative path from a directory deeper than PATH_MAX:
 * walked from it (sentry/fs/path_long.c), then opened as open_checked opens
 * what it finds; O_CREAT creates a missing last name in its directory.
 */
static long long_open(struct task *t, int dirfd, const char *path, int flags, int mode,
		      const struct file_ops **kind, struct policy_obj *found)
{
	cleanup_free struct long_walk *w = malloc(sizeof(*w));
	long base = dirfd == AT_FDCWD ? t->fs->cwd_fd : path_dir_fd(t, dirfd);
	bool excl = (flags & (O_CREAT | O_EXCL)) == (O_CREAT | O_EXCL);
	struct policy_obj o = { .x = found ? found->x : NULL, .x_mask = found ? found->x_mask : 0,
				.x_sync = found ? found->x_sync : 0 };
	struct stat st;

	if (!w)
		return -ENOMEM;
	if (base < 0)
		return base;
	long r = path_long_lookup((int)base, path, !excl && !(flags & O_NOFOLLOW), w);
	if (r < 0)
		return r;
	if (w->handoff)
		return path_open_kind(t, AT_FDCWD, w->abs, flags, mode, kind, found, 0);
	cleanup_close int dir = w->dir;
	if (w->fd >= 0 && (flags & O_DIRECTORY) && (fstat(w->fd, &st) < 0 || !S_ISDIR(st.st_mode))) {
		close(w->fd);
		return -ENOTDIR;
	}
	if (w->fd >= 0)
		return open_found(t, w->fd, &o, false, flags, mode, kind, found);
	if (w->fd != -ENOENT || !(flags & O_CREAT))
		return w->fd;
	if (w->slash || last_type(w->last) != PATH_LAST_NORM)
		return -EISDIR;
	if ((r = policy_check_dir(dir)) < 0)
		return r;
	return create_at(dir, w->last, flags, mode);
}

/*
 * path_open, and the kind of the file it opened: /proc's own or the host
 * object's when known, else NULL (file_kind_of's to find). found, when
 * given, gets an O_PATH lookup's policy_obj of what it found, or st_mode 0
 * and no x_done when there is none (the caller asks the host).
 */
static long path_open_kind(struct task *t, int dirfd, const char *path, int flags, int mode,
			   const struct file_ops **kind, struct policy_obj *found, uint64_t resolve)
{
	char abs[PVX_PATH_MAX];
	bool again = false;
	long r = open_flags(&flags);

	if (r < 0)
		return r;
	if (!path[0])
		return -ENOENT;
	if (found) {
		found->st.st_mode = 0;
		found->x_done = false;
	}
	r = path_absolute(t, dirfd, path, abs, sizeof(abs));
	/* From a directory deeper than the host can name (not with openat2's resolve bits: the walk knows none). */
	if (r == -ENAMETOOLONG && path[0] != '/' && !resolve)
		return long_open(t, dirfd, path, flags, mode, kind, found);
	for (int links = 0; r >= 0 && links <= MAX_CREATE_LINKS; links++) {
		/* The guest's /proc is the sentry's own (sentry/kernel/procfs.c), never the host's. */
		if (path_in_proc(abs))
			return fs_kernel->proc_open_kind(t, abs + 5, flags, kind);
		again = false;
		r = open_checked(t, abs, sizeof(abs), flags, mode, &again, kind, found, resolve);
		if (!again)
			break;
		r = dev_fd_alias(abs, sizeof(abs));
	}
	if (again && r >= 0)
		return -ELOOP;
	if (r == -ENOENT || r == -EROFS) {	/* EROFS: the O_CREAT of a /dev/null the root lacks */
		long dev = open_std_device(abs, flags);
		if (dev != -ENOENT) {
			*kind = NULL;
			if (found) {
				found->st.st_mode = 0;
				found->x_done = false;
			}
			return dev;
		}
	}
	return r;
}

long path_open(struct task *t, int dirfd, const char *path, int flags, int mode)
{
	const struct file_ops *kind = NULL;

	return path_open_kind(t, dirfd, path, flags, mode, &kind, NULL, 0);
}

long path_open_user(struct task *t, int dirfd, uint64_t upath, int flags, int mode)
{
	const struct file_ops *kind;

	return path_open_user_kind(t, dirfd, upath, flags, mode, &kind);
}

long path_open_user_kind(struct task *t, int dirfd, uint64_t upath, int flags, int mode,
			 const struct file_ops **kind)
{
	char path[PVX_PATH_MAX];
	long n = strncpy_from_guest(t->mm, path, upath, sizeof(path));

	*kind = NULL;
	if (n < 0)
		return n;
	return path_open_str_kind(t, dirfd, path, flags, mode, kind);
}

long path_open_str_kind(struct task *t, int dirfd, const char *path, int flags, int mode,
			const struct file_ops **kind)
{
	*kind = NULL;
	long fd = path_open_kind(t, dirfd, path, flags, mode, kind, NULL, 0);
	if (fd >= 0 && !*kind)
		*kind = file_kind_of((int)fd);
	return fd;
}

/* See pvx/path.h. */
long path_open_resolve(struct task *t, int dirfd, const char *path, int flags, int mode, uint64_t resolve,
		       const struct file_ops **kind)
{
	*kind = NULL;
	long fd = path_open_kind(t, dirfd, path, flags, mode, kind, NULL, resolve);
	if (fd >= 0 && !*kind)
		*kind = file_kind_of((int)fd);
	return fd;
}

static long long_parent(struct task *t, int dirfd, const char *path, char *last, size_t size, enum path_last *type);

long path_parent(struct task *t, int dirfd, const char *path, char *last, size_t size, enum path_last *type)
{
	char abs[PVX_PATH_MAX];

	if (!path[0])
		return -ENOENT;
	long r = path_absolute(t, dirfd, path, abs, sizeof(abs));
	if (r == -ENAMETOOLONG && path[0] != '/')
		return long_parent(t, dirfd, path, last, size, type);
	return r < 0 ? r : parent_of(abs, last, size, type, 0);
}

/* path_parent of a relative path from a directory deeper than PATH_MAX (sentry/fs/path_long.c). */
static long long_parent(struct task *t, int dirfd, const char *path, char *last, size_t size, enum path_last *type)
{
	cleanup_free struct long_walk *w = malloc(sizeof(*w));
	long base = dirfd == AT_FDCWD ? t->fs->cwd_fd : path_dir_fd(t, dirfd);

	if (!w)
		return -ENOMEM;
	if (base < 0)
		return base;
	long r = path_long_parent((int)base, path, w);
	if (r < 0)
		return r;
	if (w->handoff)
		return parent_of(w->abs, last, size, type, 0);
	if ((r = policy_check_dir(w->dir)) < 0 || strlen(w->last) + 2 > size) {
		close(w->dir);
		return r < 0 ? r : -ENAMETOOLONG;
	}
	snprintf(last, size, "%s%s", w->last, w->slash ? "/" : "");
	*type = last_type(w->last);
	return w->dir;
}

long path_lookup(struct task *t, int dirfd, const char *path, int at_flags)
{
	struct stat st;

	return path_lookup_stat(t, dirfd, path, at_flags, &st);
}

/* See pvx/path.h. */
long path_lookup_stat(struct task *t, int dirfd, const char *path, int at_flags, struct stat *st)
{
	struct policy_obj o = { .x = NULL };
	long fd = path_lookup_obj(t, dirfd, path, at_flags, &o);

	*st = o.st;
	return fd;
}

/*
 * Is path one plain name (not "", ".", "..", no '/') that the lookup from a
 * directory whose guest path is dir needs no more than: not /sys, not the
 * guest's /proc, not /dev (its /dev/fd aliases and the standard devices a
 * bare root lacks are the full lookup's)?
 */
static bool plain_name_in(const char *dir, const char *name)
{
	if (!name[0] || strchr(name, '/') || !strcmp(name, ".") || !strcmp(name, ".."))
		return false;
	if (!strcmp(dir, "/"))
		return strcmp(name, "sys") && strcmp(name, "proc") && strcmp(name, "dev");
	return !path_in_proc(dir) && !(!strncmp(dir, "/sys", 4) && (dir[4] == '/' || !dir[4])) &&
	       !(!strncmp(dir, "/dev", 4) && (dir[4] == '/' || !dir[4]));
}

/*
 * The stat of name (one plain name that plain_name_in allowed) in the
 * directory base: one statx there, judged as an O_PATH lookup of it is (no
 * fd: the type of its mount is cached). 1: the full lookup's to answer (an
 * error, a symlink to follow, a mount not judged yet).
 */
static long stat_in(int base, const char *name, int at_flags, struct policy_obj *o)
{
	struct statx x;
	bool asked = o->x;	/* a guest's statx: its mask and sync flags */

	if (name_statx(base, name, asked ? o->x_mask : STATX_BASIC_STATS, asked ? o->x_sync : 0, asked ? o->x : &x,
		       &o->st, &o->mnt) < 0)
		return 1;	/* errors are the full lookup's to give */
	if ((S_ISLNK(o->st.st_mode) && !(at_flags & AT_SYMLINK_NOFOLLOW)) || !fs_type_known(o->mnt))
		return 1;	/* a symlink to follow; a mount not judged yet (the full lookup asks its type) */
	/* The object the statx found, judged as an O_PATH lookup of it is (no fd: the type is cached). */
	o->not_sys = true;
	long r = policy_check_obj(-1, o, O_PATH, -1);
	if (r < 0)
		return r;
	o->x_done = asked;
	return asked ? policy_statx_answer(-1, o, o->x_mask) : 0;	/* 1: the old mount id is not cached */
}

/* Is dir an absolute path of plain names: "/", or "/a/b" with no "", "." or ".." name (dcache_get's)? */
static bool clean_dir(const char *dir)
{
	if (dir[0] != '/')
		return false;
	if (!dir[1])
		return true;
	for (const char *p = dir + 1;; p++) {
		size_t n = strcspn(p, "/");
		if (!n || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
			return false;
		p += n;
		if (!*p)
			return true;
	}
}

/*
 * A stat of path with '/' in it, through the directory cache
 * (sentry/fs/dcache.c): the directory part is a cached fd, the last name
 * one statx in it. 1: the full lookup's.
 */
static long cached_stat(struct task *t, int dirfd, const char *path, int at_flags, struct policy_obj *o)
{
	char abs[PVX_PATH_MAX];

	/* Not yet (or never) on: no path_absolute, a readlink for a relative path, that the full lookup makes again. */
	if (!dcache_on() || path_absolute(t, dirfd, path, abs, sizeof(abs)) < 0)
		return 1;
	char *slash = strrchr(abs, '/'), *name = slash + 1;
	*slash = 0;
	const char *dir = slash == abs ? "/" : abs;
	if (!clean_dir(dir) || !plain_name_in(dir, name))
		return 1;
	int base = dcache_get(dir);
	if (base < 0)
		return 1;
	long r = stat_in(base, name, at_flags, o);
	return dcache_put() ? r : 1;
}

/* See pvx/path.h. */
long path_stat_name(struct task *t, int dirfd, const char *path, int at_flags, struct policy_obj *o)
{
	char dir[PVX_PATH_MAX];
	long base = t->fs->cwd_fd;

	if (!path[0])
		return 1;
	if (strchr(path, '/'))
		return cached_stat(t, dirfd, path, at_flags, o);
	if (dirfd != AT_FDCWD) {
		struct file *f = fd_lookup(t->files, dirfd);
		if (!f || f->ops != &dir_file_ops || file_object(f, FILE_DIR) != f->host_fd)
			return 1;
		base = f->host_fd;
	}
	/* The directory's guest path, read now: it is inside the root (else EXDEV) and tells /sys and /proc. */
	if (path_of_dir((int)base, dir, sizeof(dir)) < 0 || !plain_name_in(dir, path))
		return 1;
	return stat_in((int)base, path, at_flags, o);
}

/* See pvx/path.h: the policy's statx of the object is its stat, when the lookup made one; else an fstat. */
long path_lookup_obj(struct task *t, int dirfd, const char *path, int at_flags, struct policy_obj *found)
{
	const struct file_ops *kind = NULL;
	struct stat *st = &found->st;
	long fd;

	if (!path[0] && (at_flags & AT_EMPTY_PATH)) {
		int hfd = t->fs->cwd_fd;
		if (dirfd != AT_FDCWD) {
			struct file *f = fd_lookup(t->files, dirfd);
			if (!f)
				return -EBADF;
			long obj = file_object(f, FILE_PATH);
			if (obj < 0)
				return obj == FILE_CALL_DONE ? -EPERM : obj;
			hfd = (int)obj;
		}
		fd = fcntl(hfd, F_DUPFD_CLOEXEC, 3);
		if (fd < 0)
			return neg_errno();
		st->st_mode = 0;
		found->x_done = false;
	} else {
		fd = path_open_kind(t, dirfd, path, O_PATH | (at_flags & AT_SYMLINK_NOFOLLOW ? O_NOFOLLOW : 0), 0,
				    &kind, found, 0);
		if (fd < 0)
			return fd;
	}
	if (!st->st_mode && fstat((int)fd, st) < 0) {
		long err = neg_errno();
		close((int)fd);
		return err;
	}
	return fd;
}

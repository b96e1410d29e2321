// SPDX-License-Identifier: GPL-2.0
/*
 * openat2(2) for the guest (fs/open.c build_open_flags, fs/namei.c): the
 * struct open_how's checks, then the walk its resolve bits ask for, always
 * inside the sandbox root and always ending on the policy's check of the
 * object looked up, which is then the object opened (never a second walk).
 *
 * RESOLVE_BENEATH and RESOLVE_IN_ROOT walk from the directory itself: the
 * host's openat2 is given the host fd of the guest's dirfd (or cwd) with
 * the guest's resolve bits, so the host kernel keeps the walk beneath that
 * directory, which lies inside the root, and refuses magic links in scoped
 * walks as Linux does for the guest (EXDEV, or ELOOP with
 * RESOLVE_NO_MAGICLINKS). RESOLVE_NO_XDEV without a scope walks the same
 * way when the root is the host's / (".." cannot leave it, magic links are
 * refused); the other walks are path.c's, from the root with
 * RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS plus the guest's bits, and the
 * guest's /proc (pvx's own, path.c hands it to the kernel's procfs) is
 * checked here for its symlinks and magic links.
 */
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "pvx/path.h"
#include "pvx/policy.h"

/* VALID_OPEN_FLAGS of include/linux/fcntl.h, in x86-64's values (O_LARGEFILE is 0100000 to the kernel). */
#define VALID_OPEN_FLAGS_ (03 | 0100 | 0200 | 0400 | 01000 | 02000 | 04000 | 010000 | 020000 | 040000 | \
			   0100000 | 0200000 | 0400000 | 01000000 | 02000000 | 04000000 | 010000000 | 020000000)
#define O_PATH_FLAGS_ (O_DIRECTORY | O_NOFOLLOW | O_PATH | O_CLOEXEC)
#define VALID_RESOLVE_ (RESOLVE_NO_XDEV | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_SYMLINKS | RESOLVE_BENEATH | \
			RESOLVE_IN_ROOT | RESOLVE_CACHED)
#define SCOPED (RESOLVE_BENEATH | RESOLVE_IN_ROOT)
#define MAXSYMLINKS 40

/* See pvx/path.h: build_open_flags()'s checks, in its order, and do_sys_openat2's RESOLVE_CACHED rule. */
long openat2_check(const struct open_how *how)
{
	uint64_t flags = how->flags & ~(uint64_t)O_CLOEXEC;

	if (flags & ~(uint64_t)VALID_OPEN_FLAGS_)
		return -EINVAL;
	if (how->resolve & ~(uint64_t)VALID_RESOLVE_)
		return -EINVAL;
	if ((how->resolve & RESOLVE_BENEATH) && (how->resolve & RESOLVE_IN_ROOT))
		return -EINVAL;
	if (flags & (O_CREAT | PVX_O_TMPFILE_BIT)) {
		if (how->mode & ~(uint64_t)07777)
			return -EINVAL;
	} else if (how->mode) {
		return -EINVAL;
	}
	if ((flags & (O_DIRECTORY | O_CREAT)) == (O_DIRECTORY | O_CREAT))
		return -EINVAL;
	if ((flags & PVX_O_TMPFILE_BIT) && (!(flags & O_DIRECTORY) || !(flags & O_ACCMODE)))
		return -EINVAL;
	if ((flags & O_PATH) && (flags & ~(uint64_t)O_PATH_FLAGS_))
		return -EINVAL;
	if ((how->resolve & RESOLVE_CACHED) && (flags & (O_TRUNC | O_CREAT | PVX_O_TMPFILE_BIT)))
		return -EAGAIN;
	return 0;
}

/* The host's openat2 from host directory fd base with the guest's resolve bits. */
static long host_openat2(int base, const char *path, int flags, uint64_t resolve)
{
	struct open_how how = { .flags = (uint64_t)(flags | O_CLOEXEC), .resolve = resolve };
	long fd = syscall(SYS_openat2, base, path, &how, sizeof(how));

	return fd < 0 ? neg_errno() : fd;
}

/*
 * Split path into its directory part (in dir, "." when none) and its last
 * component; 1 when that is not a plain name (".", "..", trailing slashes,
 * or "/" alone), which O_CREAT cannot create (EISDIR).
 */
static int split_last(const char *path, char *dir, size_t size, const char **last)
{
	size_t n = strlen(path);

	if (!n || path[n - 1] == '/')
		return 1;
	const char *slash = strrchr(path, '/');
	*last = slash ? slash + 1 : path;
	if (!strcmp(*last, ".") || !strcmp(*last, ".."))
		return 1;
	size_t dn = slash ? (size_t)(slash - path) + 1 : 0;
	if (dn + 2 > size)
		return -ENAMETOOLONG;
	if (dn)
		memcpy(dir, path, dn);
	else
		dir[dn++] = '.';
	dir[dn] = 0;
	return 0;
}

/*
 * O_CREAT of a name the walk did not find: its directory is walked with
 * the same resolve bits and checked, the name made there with O_EXCL and
 * O_NOFOLLOW (nothing that appears meanwhile is opened unchecked) and the
 * new file checked. -EEXIST: something is there now (for the caller's
 * next look); *link is set when that is a symlink, its target in link_to.
 */
static long direct_create(int base, const char *path, int flags, int mode, uint64_t resolve, bool *link,
			  char *link_to, size_t size)
{
	char dir[PVX_PATH_MAX];
	const char *last;
	struct stat st;

	int s = split_last(path, dir, sizeof(dir), &last);
	if (s)
		return s < 0 ? s : -EISDIR;
	cleanup_close int dfd = (int)host_openat2(base, dir, O_PATH | O_DIRECTORY, resolve);
	if (dfd < 0)
		return dfd;
	long r = policy_check_dir(dfd);
	if (r < 0)
		return r;
	if (!sandbox.rw)
		return -EROFS;
	int fd = openat(dfd, last, (flags & ~O_PATH) | O_CREAT | O_EXCL | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC,
			PVX_MODE_NOSUID((mode_t)mode) & 07777);
	if (fd < 0) {
		r = neg_errno();
		ssize_t n;
		if (r == -EEXIST && !(flags & O_EXCL) && (n = readlinkat(dfd, last, link_to, size - 1)) > 0) {
			link_to[n] = 0;
			*link = true;
		}
		return r;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || (r = policy_check(fd, &st, flags & ~O_TRUNC, -1)) < 0) {
		close(fd);
		return r < 0 ? r : -EIO;
	}
	return fd;
}

/*
 * O_CREAT met a dangling symlink (target link_to) at the end of path: the
 * walk goes on to its target, as Linux's open follows it to create. An
 * absolute target is EXDEV under RESOLVE_BENEATH and from base itself
 * under RESOLVE_IN_ROOT; RESOLVE_NO_SYMLINKS refuses it (ELOOP).
 */
static long follow_dangling(char *path, size_t size, const char *link_to, uint64_t resolve)
{
	char buf[PVX_PATH_MAX];

	if (resolve & RESOLVE_NO_SYMLINKS)
		return -ELOOP;
	if (link_to[0] == '/') {
		if (resolve & RESOLVE_BENEATH)
			return -EXDEV;
		if (resolve & RESOLVE_IN_ROOT)	/* from base; unscoped walks here have the host's / as the root */
			while (*link_to == '/')
				link_to++;
		snprintf(buf, sizeof(buf), "%s", *link_to ? link_to : ".");
	} else {
		const char *slash = strrchr(path, '/');
		int dn = slash ? (int)(slash - path) + 1 : 0;
		if ((size_t)snprintf(buf, sizeof(buf), "%.*s%s", dn, path, link_to) >= sizeof(buf))
			return -ENAMETOOLONG;
	}
	if (strlen(buf) >= size)
		return -ENAMETOOLONG;
	strcpy(path, buf);
	return 0;
}

/*
 * The walk from host directory base (see the top of the file): the object
 * found is looked up with O_PATH, checked by the policy and opened itself
 * (policy_reopen_obj); trunc, when given, is asked first for an O_TRUNC.
 */
static long direct_open(struct task *t, int base, const char *guest_path, int flags, int mode, uint64_t resolve,
			openat2_trunc_fn trunc, bool *created, const struct file_ops **kind)
{
	char path[PVX_PATH_MAX], link_to[PVX_PATH_MAX];
	bool excl = (flags & (O_CREAT | O_EXCL)) == (O_CREAT | O_EXCL);
	int look = O_PATH | (flags & O_DIRECTORY) | (excl || (flags & O_NOFOLLOW) ? O_NOFOLLOW : 0);

	if (flags & PVX_O_TMPFILE_BIT)
		look = O_PATH | O_DIRECTORY;
	snprintf(path, sizeof(path), "%s", guest_path);
	for (int links = 0; links <= MAXSYMLINKS; links++) {
		long fd = host_openat2(base, path, look, resolve);
		if (fd >= 0) {
			struct policy_obj o = { .x = NULL };
			long r = excl ? -EEXIST : policy_stat((int)fd, &o);
			if (r == 0 && !(flags & PVX_O_TMPFILE_BIT))
				*kind = file_kind_of_mode(o.st.st_mode);
			if (r == 0 && (flags & O_PATH)) {
				if ((r = policy_check_obj((int)fd, &o, flags, -1)) == 0)
					return fd;
			}
			if (r == 0 && (flags & O_TRUNC) && trunc)
				r = trunc(t, (int)fd, flags);
			if (r == 0)
				r = policy_reopen_obj(t, (int)fd, &o, flags, mode, -1);
			close((int)fd);
			return r;
		}
		if (fd != -ENOENT || !(flags & O_CREAT))
			return fd;
		bool link = false;
		fd = direct_create(base, path, flags, mode, resolve, &link, link_to, sizeof(link_to));
		if (fd >= 0)
			*created = true;
		if (fd != -EEXIST || excl)
			return fd;
		if (link) {
			long r = follow_dangling(path, sizeof(path), link_to, resolve);
			if (r < 0)
				return r;
		}
	}
	return -ELOOP;
}

/*
 * A walk of path.c's that reaches the guest's /proc (abs): the checks the
 * host's walk cannot make there, since pvx's /proc is not the host's.
 * RESOLVE_NO_XDEV: /proc is a mount of its own (EXDEV from outside it).
 * RESOLVE_NO_SYMLINKS: /proc/self and /proc/thread-self are symlinks.
 * Either that or RESOLVE_NO_MAGICLINKS: a task's fd/N, cwd, root, exe,
 * map_files/X and ns/X are magic links (ELOOP), but for a last one not
 * followed (O_NOFOLLOW).
 */
static long proc_walk_check(const char *abs, bool from_proc, int flags, uint64_t resolve)
{
	char comp[8][32];
	int n = 0;

	if ((resolve & RESOLVE_NO_XDEV) && !from_proc)
		return -EXDEV;
	if (!(resolve & (RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS)))
		return 0;
	for (const char *p = abs + 5; *p && n < 8;) {
		while (*p == '/')
			p++;
		size_t len = strcspn(p, "/");
		if (!len)
			break;
		snprintf(comp[n++], sizeof(comp[0]), "%.*s", (int)MIN(len, 31), p);
		p += len;
	}
	if (!n)
		return 0;
	bool self = !strcmp(comp[0], "self") || !strcmp(comp[0], "thread-self");
	if (self && (resolve & RESOLVE_NO_SYMLINKS) && (n > 1 || !(flags & O_NOFOLLOW)))
		return -ELOOP;
	if (!self && strspn(comp[0], "0123456789") != strlen(comp[0]))
		return 0;
	int i = 1;
	if (!strcmp(comp[0], "thread-self"))
		i = 1;	/* thread-self is the task directory itself */
	else if (n > 2 && !strcmp(comp[1], "task"))
		i = 3;
	if (i >= n)
		return 0;
	bool magic = !strcmp(comp[i], "cwd") || !strcmp(comp[i], "root") || !strcmp(comp[i], "exe") ||
		     (i + 1 < n && (!strcmp(comp[i], "fd") || !strcmp(comp[i], "map_files") || !strcmp(comp[i], "ns")));
	int link_at = !strcmp(comp[i], "cwd") || !strcmp(comp[i], "root") || !strcmp(comp[i], "exe") ? i : i + 1;
	if (magic && (link_at < n - 1 || !(flags & O_NOFOLLOW)))
		return -ELOOP;
	return 0;
}

/* See pvx/path.h. */
long path_openat2(struct task *t, int dirfd, const char *path, const struct open_how *how, openat2_trunc_fn trunc,
		  bool *created, const struct file_ops **kind)
{
	char abs[PVX_PATH_MAX], base_path[PVX_PATH_MAX];
	int flags = (int)how->flags & ~O_CLOEXEC, mode = (int)how->mode;
	uint64_t resolve = how->resolve;
	long base = t->fs->cwd_fd;

	*kind = NULL;
	*created = false;
	if (!path[0])
		return -ENOENT;
	if (dirfd != AT_FDCWD && path[0] != '/' && (base = path_dir_fd(t, dirfd)) < 0)
		return base;
	if (dirfd != AT_FDCWD && path[0] == '/' && (resolve & SCOPED) && (base = path_dir_fd(t, dirfd)) < 0)
		return base;	/* a scoped walk starts at dirfd even for an absolute path */
	/* A directory outside the root (one pvx was handed on fd 0-2) is no place to walk from, as for openat. */
	long bn = path_of_fd((int)base, base_path, sizeof(base_path));
	if (bn == -EXDEV)
		return -EXDEV;
	bool from_proc = bn >= 0 && path_in_proc(base_path) && path[0] != '/';
	/* RESOLVE_NO_XDEV alone from the host's /: path.c's walk for an absolute path into /proc (EXDEV below) */
	bool direct = (resolve & SCOPED) ||
		      ((resolve & RESOLVE_NO_XDEV) && path_root_is_host() && !(path[0] == '/' && path_in_proc(path)));
	if (direct && !from_proc) {
		long fd = direct_open(t, (int)base, path, flags, mode, resolve | (resolve & SCOPED ? 0 : RESOLVE_NO_MAGICLINKS),
				      trunc, created, kind);
		if (fd >= 0 && !*kind)
			*kind = file_kind_of((int)fd);
		return fd;
	}
	/* path.c's walk from the root: a scoped one only inside the guest's /proc, lexically beneath dirfd. */
	if (from_proc && (resolve & SCOPED) && (path[0] == '/' || strstr(path, "..")))
		return -EXDEV;
	long r = path_absolute(t, dirfd, path, abs, sizeof(abs));
	if (r < 0)
		return r;
	if (path_in_proc(abs) && (r = proc_walk_check(abs, from_proc, flags, resolve)) < 0)
		return r;
	return path_open_resolve(t, dirfd, path, flags, mode, resolve & (RESOLVE_NO_SYMLINKS | RESOLVE_NO_XDEV |
									   RESOLVE_CACHED), kind);
}

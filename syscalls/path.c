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
 */
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>

#include "pvx/open_block.h"
#include "pvx/path.h"
#include "syscalls/procfs.h"

static char root_host[PATH_MAX];
static size_t root_len;	/* 0 when the root is the host's / */

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

long path_of_fd(int host_fd, char *buf, size_t size)
{
	char proc[64], host[PATH_MAX];
	const char *guest;

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", host_fd);
	ssize_t n = readlink(proc, host, sizeof(host) - 1);
	if (n < 0)
		return neg_errno();
	host[n] = 0;
	if (host[0] != '/')
		return -ENOENT;	/* pipe:[...], anon_inode:..., socket:... */
	long r = procfs_dir_path(host, buf, size);	/* a directory of the guest's /proc */
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
 * /dev/fd, /dev/stdin, /dev/stdout and /dev/stderr are symlinks into /proc
 * on the host; they name the guest's own fds here (bash's <(...) uses them).
 */
static long dev_fd_alias(char *abs, size_t size)
{
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

/* Guest dirfd + path -> absolute guest path in out. */
long path_absolute(struct task *t, int dirfd, const char *path, char *out, size_t size)
{
	char base[PVX_PATH_MAX];
	int base_fd = t->proc->cwd_fd;
	struct stat st;
	long r;

	if (path[0] == '/') {
		if (strlen(path) >= size)
			return -ENAMETOOLONG;
		strcpy(out, path);
		return dev_fd_alias(out, size);
	}
	if (dirfd != AT_FDCWD) {
		struct file *f = fd_lookup(t->files, dirfd);
		if (!f)
			return -EBADF;
		if (fstat(f->host_fd, &st) < 0)
			return neg_errno();
		if (!S_ISDIR(st.st_mode))
			return -ENOTDIR;
		base_fd = f->host_fd;
	}
	r = path_of_fd(base_fd, base, sizeof(base));
	if (r < 0)
		return r == -ERANGE ? -ENAMETOOLONG : r;
	if ((size_t)snprintf(out, size, "%s/%s", strcmp(base, "/") ? base : "", path) >= size)
		return -ENAMETOOLONG;
	return dev_fd_alias(out, size);
}

/* O_TMPFILE without O_DIRECTORY (glibc's __O_TMPFILE includes O_DIRECTORY). */
#define TMPFILE_BIT 020000000

/* t: the guest's own open, whose wait (a FIFO's) drops the lock (syscalls/open_block.c); NULL: a lookup. */
static long open_in_root_as(struct task *t, const char *abs, int flags, int mode)
{
	struct open_how how = {
		.flags = (uint64_t)(flags | O_CLOEXEC),
		.mode = flags & (O_CREAT | TMPFILE_BIT) ? (uint64_t)(mode & 07777) : 0,
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
	};
	long fd = t ? open_at_block(t, sandbox.rootfd, abs, &how)
		    : syscall(SYS_openat2, sandbox.rootfd, abs, &how, sizeof(how));
	struct statfs sfs;

	if (fd < 0)
		return t ? fd : neg_errno();
	/*
	 * The host's /proc is never the guest's, whichever way the walk got
	 * there (/dev/fd -> /proc/self/fd, "..", a symlink): it shows the
	 * sentry and every host process.
	 */
	if (fstatfs((int)fd, &sfs) == 0 && sfs.f_type == PROC_SUPER_MAGIC) {
		close((int)fd);
		return -ENOENT;
	}
	return fd;
}

static long open_in_root(const char *abs, int flags, int mode)
{
	return open_in_root_as(NULL, abs, flags, mode);
}

/*
 * Device nodes the guest may open: null, zero, full, random, urandom, tty,
 * console and pseudo-terminals. Everything else (disks, /dev/mem...) is EACCES.
 */
static bool device_allowed(dev_t rdev)
{
	unsigned ma = major(rdev), mi = minor(rdev);

	if (ma == 1)
		return mi == 3 || mi == 5 || mi == 7 || mi == 8 || mi == 9;
	if (ma == 5)
		return mi == 0 || mi == 1;
	return ma >= 136 && ma <= 143;
}

/* Read-only root and device policy, checked on what the path names now. */
static long check_policy(const char *abs, int flags)
{
	bool tmpfile = flags & TMPFILE_BIT;
	bool creates = (flags & O_CREAT) || tmpfile;
	bool writes = (flags & O_ACCMODE) != O_RDONLY || (flags & O_TRUNC) || tmpfile;
	struct stat st;

	if (!writes && !creates && (flags & O_PATH))
		return 0;
	long fd = open_in_root(abs, O_PATH | (flags & O_NOFOLLOW), 0);
	if (fd == -ENOENT && creates && !tmpfile)
		return sandbox.rw ? 0 : -EROFS;
	if (fd == -ELOOP && (flags & O_NOFOLLOW))
		return 0;	/* let the real open say ELOOP */
	if (fd < 0)
		return fd;
	int err = fstat((int)fd, &st) < 0 ? -errno : 0;
	close((int)fd);
	if (err)
		return err;
	if ((S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)) && !(S_ISCHR(st.st_mode) && device_allowed(st.st_rdev)))
		return -EACCES;
	if (sandbox.rw || S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode) || S_ISDIR(st.st_mode))
		return 0;
	if ((flags & (O_CREAT | O_EXCL)) == (O_CREAT | O_EXCL))
		return -EEXIST;
	return writes ? -EROFS : 0;
}

/*
 * Devices every Linux system has. A root without its own (a bare --root
 * directory) gets the host's, as a container runtime mounts a /dev: busybox
 * sh opens /dev/null for background jobs. Returns -ENOENT when abs is not
 * one of them or the root has its own.
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
		long fd = open(abs, flags | O_CLOEXEC | O_NOCTTY, 0);
		return fd < 0 ? neg_errno() : fd;
	}
	return -ENOENT;
}

long path_open(struct task *t, int dirfd, const char *path, int flags, int mode)
{
	char abs[PVX_PATH_MAX];
	long r;

	if (!path[0])
		return -ENOENT;
	r = path_absolute(t, dirfd, path, abs, sizeof(abs));
	if (r < 0)
		return r;
	/* The guest's /proc is the sentry's own (syscalls/procfs.c), never the host's. */
	if (path_in_proc(abs))
		return procfs_open(t, abs + 5, flags & ~(O_NOFOLLOW | O_DIRECTORY | O_CLOEXEC | O_LARGEFILE));
	flags &= ~O_CLOEXEC;
	if (flags & O_PATH)	/* open(2) ignores other flags with O_PATH; openat2(2) refuses them */
		flags &= O_PATH | O_DIRECTORY | O_NOFOLLOW;
	else
		flags |= O_NOCTTY;	/* the guest never gets a host controlling tty */
	r = check_policy(abs, flags);
	if (r >= 0)
		r = open_in_root_as(t, abs, flags, mode);
	if (r == -ENOENT || r == -EROFS) {	/* EROFS: the O_CREAT of a /dev/null the root lacks */
		long dev = open_std_device(abs, flags);
		if (dev != -ENOENT)
			return dev;
	}
	return r;
}

long path_open_user(struct task *t, int dirfd, uint64_t upath, int flags, int mode)
{
	char path[PVX_PATH_MAX];
	long n = strncpy_from_guest(t->mm, path, upath, sizeof(path));

	if (n < 0)
		return n;
	return path_open(t, dirfd, path, flags, mode);
}

long path_parent(struct task *t, int dirfd, const char *path, char *last, size_t size, enum path_last *type)
{
	char abs[PVX_PATH_MAX];
	size_t start, end;
	long r;

	if (!path[0])
		return -ENOENT;
	r = path_absolute(t, dirfd, path, abs, sizeof(abs));
	if (r < 0)
		return r;
	for (end = strlen(abs); end > 0 && abs[end - 1] == '/'; end--)
		;
	if (!end) {
		/* "/", "//": the root has no parent; "." names it for the host call. */
		*type = PATH_LAST_ROOT;
		if (size < 2)
			return -ENAMETOOLONG;
		strcpy(last, ".");
		return open_in_root("/", O_PATH | O_DIRECTORY, 0);
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
	return open_in_root(abs, O_PATH | O_DIRECTORY, 0);
}

long path_lookup(struct task *t, int dirfd, const char *path, int at_flags)
{
	if (!path[0] && (at_flags & AT_EMPTY_PATH)) {
		int hfd = t->proc->cwd_fd;
		if (dirfd != AT_FDCWD) {
			struct file *f = fd_lookup(t->files, dirfd);
			if (!f)
				return -EBADF;
			hfd = f->host_fd;
		}
		int dup = fcntl(hfd, F_DUPFD_CLOEXEC, 3);
		return dup < 0 ? neg_errno() : dup;
	}
	return path_open(t, dirfd, path, O_PATH | (at_flags & AT_SYMLINK_NOFOLLOW ? O_NOFOLLOW : 0), 0);
}

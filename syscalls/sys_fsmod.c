// SPDX-License-Identifier: GPL-2.0
/*
 * Syscalls that change the file system: mkdir, mknod, unlink, rmdir, rename,
 * link, symlink, chmod, chown, truncate, utimensat, and umask (statx, statfs
 * and fsync are in sys_fsinfo.c).
 *
 * Calls that act on a name in a directory resolve the directory inside the
 * root to an O_PATH host fd (path_parent) and hand the last component as it
 * is to the host *at() call, which never follows a symlink there for these
 * calls: nothing outside the root can be named. Calls that act on an existing
 * object resolve it to an O_PATH fd (path_lookup) and work on that fd, by
 * AT_EMPTY_PATH or through /proc/self/fd/N, so it is not looked up again.
 *
 * Without --rw the root behaves like a read-only mount: every change fails
 * with EROFS, after the errors Linux reports before it (a missing parent,
 * an existing name for calls that create one, "." and ".." ...).
 *
 * Setuid and setgid bits never reach a host file: chmod, fchmod, mkdir and
 * mknod (as open and creat, sentry/fs/path.c) succeed without them, as Linux
 * itself drops S_ISGID for a caller outside the file's group. chown cannot
 * make them either: the kernel clears both on every chown of a non-directory.
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/xattr.h>
#include <unistd.h>
#include <utime.h>

#include "pvx/exec.h"
#include "pvx/path.h"
#include "pvx/policy.h"
#include "pvx/cred.h"
#include "syscalls/syscalls.h"

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#define RENAME_EXCHANGE (1 << 1)
#endif
#ifndef AT_STATX_SYNC_TYPE
#define AT_STATX_SYNC_TYPE 0x6000
#endif
#ifndef STATX__RESERVED
#define STATX__RESERVED 0x80000000U
#endif

/* The parent of a guest path: host dir fd, last component, its kind. */
struct parent {
	int fd;
	enum path_last type;
	char last[PVX_PATH_MAX];
};

static void parent_close(struct parent *p)
{
	if (p->fd >= 0)
		close(p->fd);
}

#define cleanup_parent __attribute__((cleanup(parent_close)))

/* Copy the guest path at upath and resolve its parent into p. */
static long get_parent(struct task *t, int dirfd, uint64_t upath, struct parent *p)
{
	char path[PVX_PATH_MAX];
	long r = strncpy_from_guest(t->mm, path, upath, sizeof(path));

	p->fd = -1;
	if (r < 0)
		return r;
	r = path_parent(t, dirfd, path, p->last, sizeof(p->last), &p->type);
	if (r < 0)
		return r;
	p->fd = (int)r;
	return 0;
}

/*
 * Copy the guest path at upath and look it up (path_lookup) as an O_PATH
 * host fd. What the guest's /proc holds cannot be changed: a change gets
 * proc_err (EPERM, as procfs says; EXDEV for a link out of it).
 */
static long get_object(struct task *t, int dirfd, uint64_t upath, int at_flags, long proc_err)
{
	char path[PVX_PATH_MAX], abs[PVX_PATH_MAX];
	long r = strncpy_from_guest(t->mm, path, upath, sizeof(path));

	if (r < 0)
		return r;
	if (proc_err && path[0] && path_absolute(t, dirfd, path, abs, sizeof(abs)) == 0 && path_in_proc(abs)) {
		r = path_lookup(t, dirfd, path, at_flags);	/* ENOENT first, as Linux */
		if (r < 0)
			return r;
		close((int)r);
		return proc_err;
	}
	return path_lookup(t, dirfd, path, at_flags);
}

static void proc_fd_path(char *buf, size_t size, int hfd)
{
	snprintf(buf, size, "/proc/self/fd/%d", hfd);
}

/*
 * The order of errors when a name is to be created (mkdir, mknod, link and
 * symlink targets): "EEXIST pathname already exists", then ENOENT for a
 * trailing slash on what is not a directory, then EROFS on a read-only root.
 */
static long create_check(const struct parent *p, bool dir)
{
	char name[PVX_PATH_MAX];
	struct stat st;
	size_t n = strlen(p->last);
	bool slash = false;

	if (p->type != PATH_LAST_NORM)
		return -EEXIST;
	strcpy(name, p->last);
	while (n > 1 && name[n - 1] == '/') {
		name[--n] = 0;
		slash = true;
	}
	if (fstatat(p->fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0)
		return -EEXIST;
	if (errno != ENOENT)
		return neg_errno();
	if (slash && !dir)
		return -ENOENT;
	return sandbox.rw ? 0 : -EROFS;
}

/*
 * Changing the attributes of what host fd hfd refers to on a read-only
 * root: EROFS for anything with a path (files, directories, device nodes);
 * pipes and sockets have none and keep working as on Linux, where they
 * live on internal mounts. When in doubt, EROFS.
 */
static long ro_check(int hfd)
{
	char proc[64], target[8];

	if (sandbox.rw)
		return 0;
	proc_fd_path(proc, sizeof(proc), hfd);
	ssize_t n = readlink(proc, target, sizeof(target));
	return n > 0 && target[0] != '/' ? 0 : -EROFS;
}

/*
 * mkdirat(2): "EEXIST pathname already exists (not necessarily as a
 * directory). This includes the case where pathname is a symbolic link,
 * dangling or not." The mode is "modified by the process's umask".
 */
long sys_mkdirat(struct task *t, const long a[6])
{
	cleanup_parent struct parent p = { .fd = -1 };
	long r = get_parent(t, (int)a[0], (uint64_t)a[1], &p);

	if (r < 0)
		return r;
	if (!sandbox.rw)
		return create_check(&p, true);
	mode_t mode = PVX_MODE_NOSUID((mode_t)(a[2] & 07777 & ~(long)t->fs->umask));
	return mkdirat(p.fd, p.last, mode) < 0 ? neg_errno() : 0;
}

long sys_mkdir(struct task *t, const long a[6])
{
	const long b[6] = { AT_FDCWD, a[0], a[1] };

	return sys_mkdirat(t, b);
}

/*
 * mknodat(2), for FIFOs and regular files only: "EPERM mode requested
 * creation of something other than a regular file, FIFO (named pipe), or
 * UNIX domain socket, and the caller is not privileged" -- here devices and
 * sockets are always refused. "EINVAL mode requested creation of something
 * other than a regular file, device special file, FIFO or socket."
 */
long sys_mknodat(struct task *t, const long a[6])
{
	cleanup_parent struct parent p = { .fd = -1 };
	mode_t mode = (mode_t)a[2], type = mode & S_IFMT;

	switch (type) {
	case 0:
		type = S_IFREG;
		break;
	case S_IFREG: case S_IFIFO: case S_IFCHR: case S_IFBLK: case S_IFSOCK:
		break;
	case S_IFDIR:
		return -EPERM;
	default:
		return -EINVAL;
	}
	long r = get_parent(t, (int)a[0], (uint64_t)a[1], &p);
	if (r < 0)
		return r;
	r = create_check(&p, false);
	if (r < 0)
		return r;
	if (type != S_IFREG && type != S_IFIFO)
		return -EPERM;
	mode = type | PVX_MODE_NOSUID(mode & 07777 & ~t->fs->umask);
	return mknodat(p.fd, p.last, mode, 0) < 0 ? neg_errno() : 0;
}

long sys_mknod(struct task *t, const long a[6])
{
	const long b[6] = { AT_FDCWD, a[0], a[1], a[2] };

	return sys_mknodat(t, b);
}

/* creat(2): "equivalent to open() with flags equal to O_CREAT|O_WRONLY|O_TRUNC". */
long sys_creat(struct task *t, const long a[6])
{
	const long b[6] = { AT_FDCWD, a[0], O_CREAT | O_WRONLY | O_TRUNC, a[1] };

	return sys_openat(t, b);
}

/*
 * rmdir(2): "EINVAL pathname has . as last component", "ENOTEMPTY pathname
 * contains entries other than . and .. ; or, pathname has .. as its final
 * component", "EBUSY pathname is ... the root directory"; the read-only
 * check comes before the name is looked up, so a missing name is EROFS too.
 */
static long do_rmdir(struct task *t, int dirfd, uint64_t upath)
{
	cleanup_parent struct parent p = { .fd = -1 };
	long r = get_parent(t, dirfd, upath, &p);

	if (r < 0)
		return r;
	switch (p.type) {
	case PATH_LAST_ROOT: return -EBUSY;
	case PATH_LAST_DOT: return -EINVAL;
	case PATH_LAST_DOTDOT: return -ENOTEMPTY;
	case PATH_LAST_NORM: break;
	}
	if (!sandbox.rw)
		return -EROFS;
	return unlinkat(p.fd, p.last, AT_REMOVEDIR) < 0 ? neg_errno() : 0;
}

/*
 * unlinkat(2): "EISDIR pathname refers to a directory" (also "." and "..");
 * with AT_REMOVEDIR "performs the equivalent of rmdir(2)". As for rmdir, a
 * read-only root answers EROFS before the name is looked up.
 */
long sys_unlinkat(struct task *t, const long a[6])
{
	cleanup_parent struct parent p = { .fd = -1 };
	int flags = (int)a[2];

	if (flags & ~AT_REMOVEDIR)
		return -EINVAL;
	if (flags & AT_REMOVEDIR)
		return do_rmdir(t, (int)a[0], (uint64_t)a[1]);
	long r = get_parent(t, (int)a[0], (uint64_t)a[1], &p);
	if (r < 0)
		return r;
	if (p.type != PATH_LAST_NORM)
		return -EISDIR;
	if (!sandbox.rw)
		return -EROFS;
	return unlinkat(p.fd, p.last, 0) < 0 ? neg_errno() : 0;
}

long sys_unlink(struct task *t, const long a[6])
{
	const long b[6] = { AT_FDCWD, a[0], 0 };

	return sys_unlinkat(t, b);
}

long sys_rmdir(struct task *t, const long a[6])
{
	return do_rmdir(t, AT_FDCWD, (uint64_t)a[0]);
}

/*
 * renameat2(2) with flags 0, RENAME_NOREPLACE ("EEXIST flags contains
 * RENAME_NOREPLACE and newpath already exists") or RENAME_EXCHANGE
 * ("atomically exchange oldpath and newpath"); "EINVAL ... both
 * RENAME_NOREPLACE and RENAME_EXCHANGE were specified". "." or ".." as
 * either last component is EBUSY; RENAME_WHITEOUT is refused (EINVAL).
 */
long sys_renameat2(struct task *t, const long a[6])
{
	cleanup_parent struct parent from = { .fd = -1 };
	cleanup_parent struct parent to = { .fd = -1 };
	unsigned flags = (unsigned)a[4];
	long r;

	if (flags & ~(RENAME_NOREPLACE | RENAME_EXCHANGE))
		return -EINVAL;
	if ((flags & RENAME_NOREPLACE) && (flags & RENAME_EXCHANGE))
		return -EINVAL;
	if ((r = get_parent(t, (int)a[0], (uint64_t)a[1], &from)) < 0)
		return r;
	if ((r = get_parent(t, (int)a[2], (uint64_t)a[3], &to)) < 0)
		return r;
	if (from.type != PATH_LAST_NORM)
		return -EBUSY;
	if (to.type != PATH_LAST_NORM)
		return flags & RENAME_NOREPLACE ? -EEXIST : -EBUSY;
	if (!sandbox.rw)
		return -EROFS;
	r = syscall(SYS_renameat2, from.fd, from.last, to.fd, to.last, flags);
	return r < 0 ? neg_errno() : 0;
}

long sys_renameat(struct task *t, const long a[6])
{
	const long b[6] = { a[0], a[1], a[2], a[3], 0 };

	return sys_renameat2(t, b);
}

long sys_rename(struct task *t, const long a[6])
{
	const long b[6] = { AT_FDCWD, a[0], AT_FDCWD, a[1], 0 };

	return sys_renameat2(t, b);
}

/*
 * linkat(2): "By default, linkat() does not dereference oldpath if it is a
 * symbolic link"; AT_SYMLINK_FOLLOW does, AT_EMPTY_PATH links olddirfd
 * itself. The old file is resolved inside the root first, then the new
 * name is created through /proc/self/fd of the O_PATH fd, so the host
 * links exactly what was resolved. "EPERM oldpath is a directory."
 */
long sys_linkat(struct task *t, const long a[6])
{
	cleanup_close int old = -1;
	cleanup_parent struct parent p = { .fd = -1 };
	char proc[64];
	int flags = (int)a[4];

	if (flags & ~(AT_SYMLINK_FOLLOW | AT_EMPTY_PATH))
		return -EINVAL;
	long r = get_object(t, (int)a[0], (uint64_t)a[1],
			    (flags & AT_EMPTY_PATH) | (flags & AT_SYMLINK_FOLLOW ? 0 : AT_SYMLINK_NOFOLLOW), -EXDEV);
	if (r < 0)
		return r;
	old = (int)r;
	if ((r = get_parent(t, (int)a[2], (uint64_t)a[3], &p)) < 0)
		return r;
	if ((r = create_check(&p, false)) < 0)
		return r;
	proc_fd_path(proc, sizeof(proc), old);
	return linkat(AT_FDCWD, proc, p.fd, p.last, AT_SYMLINK_FOLLOW) < 0 ? neg_errno() : 0;
}

long sys_link(struct task *t, const long a[6])
{
	const long b[6] = { AT_FDCWD, a[0], AT_FDCWD, a[1], 0 };

	return sys_linkat(t, b);
}

/*
 * symlinkat(2): "Symbolic links are interpreted at run time as if the
 * contents of the link had been substituted into the path"; the target is
 * stored as given (an absolute target means the guest's root when the guest
 * follows it). "ENOENT ... target is an empty string."
 */
long sys_symlinkat(struct task *t, const long a[6])
{
	cleanup_parent struct parent p = { .fd = -1 };
	char target[PVX_PATH_MAX];
	long r = strncpy_from_guest(t->mm, target, (uint64_t)a[0], sizeof(target));

	if (r < 0)
		return r;
	if (!target[0])
		return -ENOENT;
	if ((r = get_parent(t, (int)a[1], (uint64_t)a[2], &p)) < 0)
		return r;
	if ((r = create_check(&p, false)) < 0)
		return r;
	return symlinkat(target, p.fd, p.last) < 0 ? neg_errno() : 0;
}

long sys_symlink(struct task *t, const long a[6])
{
	const long b[6] = { a[0], AT_FDCWD, a[1] };

	return sys_symlinkat(t, b);
}

/*
 * fchmodat2(2)/fchmodat(2): flags AT_SYMLINK_NOFOLLOW and AT_EMPTY_PATH;
 * "EOPNOTSUPP ... AT_SYMLINK_NOFOLLOW was specified in flags, and pathname
 * refers to a symbolic link" (after the read-only check, as Linux).
 */
long sys_fchmodat2(struct task *t, const long a[6])
{
	cleanup_close int hfd = -1;
	char proc[64];
	struct stat st;
	int flags = (int)a[3];

	if (flags & ~(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH))
		return -EINVAL;
	long r = get_object(t, (int)a[0], (uint64_t)a[1], flags, -EPERM);
	if (r < 0)
		return r;
	hfd = (int)r;
	if ((r = ro_check(hfd)) < 0)
		return r;
	if (fstat(hfd, &st) < 0)
		return neg_errno();
	if (S_ISLNK(st.st_mode))
		return -EOPNOTSUPP;
	proc_fd_path(proc, sizeof(proc), hfd);
	return chmod(proc, PVX_MODE_NOSUID((mode_t)a[2] & 07777)) < 0 ? neg_errno() : 0;
}

long sys_fchmodat(struct task *t, const long a[6])
{
	const long b[6] = { a[0], a[1], a[2], 0 };

	return sys_fchmodat2(t, b);
}

long sys_chmod(struct task *t, const long a[6])
{
	const long b[6] = { AT_FDCWD, a[0], a[1], 0 };

	return sys_fchmodat2(t, b);
}

/* fchmod(2): "changes the mode of the file referred to by the open file descriptor fd". */
long sys_fchmod(struct task *t, const long a[6])
{
	long hfd = fd_object(t, (int)a[0], FILE_CHMOD);

	if (hfd < 0)
		return hfd == FILE_CALL_DONE ? 0 : hfd;
	long r = ro_check((int)hfd);
	if (r < 0)
		return r;
	return fchmod((int)hfd, PVX_MODE_NOSUID((mode_t)a[1] & 07777)) < 0 ? neg_errno() : 0;
}

/*
 * fchownat(2): "If the owner or group is specified as -1, then that ID is
 * not changed"; AT_SYMLINK_NOFOLLOW acts on a symlink itself (lchown).
 * Passed through to the host with the sentry's credentials, which are the
 * ones the guest is told it has.
 */
long sys_fchownat(struct task *t, const long a[6])
{
	cleanup_close int hfd = -1;
	int flags = (int)a[4];

	if (flags & ~(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH))
		return -EINVAL;
	long r = get_object(t, (int)a[0], (uint64_t)a[1], flags, -EPERM);
	if (r < 0)
		return r;
	hfd = (int)r;
	if ((r = ro_check(hfd)) < 0)
		return r;
	r = fchownat(hfd, "", (uid_t)a[2], (gid_t)a[3], AT_EMPTY_PATH);
	return r < 0 ? neg_errno() : 0;
}

long sys_chown(struct task *t, const long a[6])
{
	const long b[6] = { AT_FDCWD, a[0], a[1], a[2], 0 };

	return sys_fchownat(t, b);
}

long sys_lchown(struct task *t, const long a[6])
{
	const long b[6] = { AT_FDCWD, a[0], a[1], a[2], AT_SYMLINK_NOFOLLOW };

	return sys_fchownat(t, b);
}

/* fchown(2): "changes the ownership of the file referred to by the open file descriptor fd". */
long sys_fchown(struct task *t, const long a[6])
{
	long hfd = fd_object(t, (int)a[0], FILE_CHOWN);

	if (hfd < 0)
		return hfd == FILE_CALL_DONE ? 0 : hfd;
	long r = ro_check((int)hfd);
	if (r < 0)
		return r;
	return fchown((int)hfd, (uid_t)a[1], (gid_t)a[2]) < 0 ? neg_errno() : 0;
}

/*
 * truncate(2): "EINVAL The argument length is negative", "EISDIR The named
 * file is a directory", EINVAL for what is not a regular file; all before
 * EROFS. The file is truncated through /proc/self/fd of its O_PATH fd.
 */
long sys_truncate(struct task *t, const long a[6])
{
	cleanup_close int hfd = -1;
	char proc[64];
	struct stat st;

	if (a[1] < 0)
		return -EINVAL;
	long r = get_object(t, AT_FDCWD, (uint64_t)a[0], 0, -EACCES);
	if (r < 0)
		return r;
	hfd = (int)r;
	if (fstat(hfd, &st) < 0)
		return neg_errno();
	if (S_ISDIR(st.st_mode))
		return -EISDIR;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	if (!sandbox.rw)
		return -EROFS;
	if (a[1] > st.st_size && (r = cred_fsize_check(t, (uint64_t)a[1] - 1, NULL)) < 0)
		return r;	/* inode_newsize_ok(): growing past RLIMIT_FSIZE */
	if (exec_running(hfd))
		return -ETXTBSY;	/* vfs_truncate's get_write_access */
	if ((r = lease_break(t, hfd, O_WRONLY)) < 0)
		return r;	/* vfs_truncate: break_lease(inode, O_WRONLY) */
	proc_fd_path(proc, sizeof(proc), hfd);
	return truncate(proc, (off_t)a[1]) < 0 ? neg_errno() : 0;
}

/*
 * ftruncate(2): "EBADF or EINVAL fd is not open for writing". A read-only
 * root never hands out a writable fd to a file, so the host's answer holds.
 */
long sys_ftruncate(struct task *t, const long a[6])
{
	long hfd = fd_object(t, (int)a[0], FILE_TRUNCATE);

	if (hfd < 0)
		return hfd == FILE_CALL_DONE ? 0 : hfd;
	if (a[1] < 0)
		return -EINVAL;
	struct stat st;
	long r = fstat((int)hfd, &st) < 0 ? neg_errno() : 0;
	if (!r && a[1] > st.st_size)
		r = cred_fsize_check(t, (uint64_t)a[1] - 1, NULL);	/* inode_newsize_ok(): growing past RLIMIT_FSIZE */
	if (r < 0)
		return r;
	return ftruncate((int)hfd, (off_t)a[1]) < 0 ? neg_errno() : 0;
}

static bool nsec_valid(long nsec)
{
	return nsec == UTIME_NOW || nsec == UTIME_OMIT || (nsec >= 0 && nsec <= 999999999);
}

/* Set the times of (dirfd, upath) (upath 0: of fd dirfd, as futimens) to ts (NULL: now). */
static long set_times(struct task *t, int dirfd, uint64_t upath, const struct timespec *ts, int flags)
{
	cleanup_close int hfd = -1;
	long r;

	if (ts && (!nsec_valid(ts[0].tv_nsec) || !nsec_valid(ts[1].tv_nsec)))
		return -EINVAL;
	if (!upath && dirfd != AT_FDCWD) {
		if (flags)
			return -EINVAL;
		long fd = fd_object(t, dirfd, FILE_UTIMES);
		if (fd < 0)
			return fd == FILE_CALL_DONE ? 0 : fd;
		if ((r = ro_check((int)fd)) < 0)
			return r;
		return utimensat((int)fd, "", ts, AT_EMPTY_PATH) < 0 ? neg_errno() : 0;
	}
	if (flags & ~(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH))
		return -EINVAL;
	if ((r = get_object(t, dirfd, upath, flags, -EPERM)) < 0)
		return r;
	hfd = (int)r;
	if ((r = ro_check(hfd)) < 0)
		return r;
	return utimensat(hfd, "", ts, AT_EMPTY_PATH) < 0 ? neg_errno() : 0;
}

/*
 * utimensat(2): "If times is NULL, then both timestamps are set to the
 * current time"; "If both tv_nsec fields are specified as UTIME_OMIT, then
 * the Linux implementation of utimensat() succeeds even if the file
 * referred to by dirfd and pathname does not exist"; "If pathname is NULL
 * ... the Linux utimensat() system call implements a nonstandard feature:
 * ... the call modifies the timestamps of the file referred to by dirfd".
 */
long sys_utimensat(struct task *t, const long a[6])
{
	struct timespec ts[2];

	if (a[2]) {
		long r = copy_from_guest(t->mm, ts, (uint64_t)a[2], sizeof(ts));
		if (r < 0)
			return r;
		if (ts[0].tv_nsec == UTIME_OMIT && ts[1].tv_nsec == UTIME_OMIT)
			return 0;
	}
	return set_times(t, (int)a[0], (uint64_t)a[1], a[2] ? ts : NULL, (int)a[3]);
}

/*
 * futimesat(2)/utimes(2): microsecond times; "EINVAL ... one of the
 * tv_usec fields was outside the range 0 to 999999". NULL means now.
 */
long sys_futimesat(struct task *t, const long a[6])
{
	struct timeval tv[2];
	struct timespec ts[2];

	if (a[2]) {
		long r = copy_from_guest(t->mm, tv, (uint64_t)a[2], sizeof(tv));
		if (r < 0)
			return r;
		for (int i = 0; i < 2; i++) {
			if (tv[i].tv_usec < 0 || tv[i].tv_usec >= 1000000)
				return -EINVAL;
			ts[i].tv_sec = tv[i].tv_sec;
			ts[i].tv_nsec = tv[i].tv_usec * 1000;
		}
	}
	return set_times(t, (int)a[0], (uint64_t)a[1], a[2] ? ts : NULL, 0);
}

long sys_utimes(struct task *t, const long a[6])
{
	const long b[6] = { AT_FDCWD, a[0], a[1] };

	return sys_futimesat(t, b);
}

/* utime(2): "If times is NULL, then the access and modification times of the file are set to the current time." */
long sys_utime(struct task *t, const long a[6])
{
	struct utimbuf ub;
	struct timespec ts[2] = { 0 };

	if (a[1]) {
		long r = copy_from_guest(t->mm, &ub, (uint64_t)a[1], sizeof(ub));
		if (r < 0)
			return r;
		ts[0].tv_sec = ub.actime;
		ts[1].tv_sec = ub.modtime;
	}
	return set_times(t, AT_FDCWD, (uint64_t)a[0], a[1] ? ts : NULL, 0);
}

/*
 * umask(2): "sets the calling process's file mode creation mask (umask) to
 * mask & 0777 ... and returns the previous value of the mask." It applies
 * to open(O_CREAT), mkdir and mknod; the sentry's own host umask is 0.
 */
long sys_umask(struct task *t, const long a[6])
{
	unsigned old = t->fs->umask;

	t->fs->umask = (unsigned)a[0] & 0777;
	return old;
}

/*
 * Extended attributes (xattr(7)), on the object the path or fd names, by
 * the host with the guest's file access. The guest writes only "user."
 * and POSIX ACL names: "security." (file capabilities: a host privilege)
 * and "trusted." are EPERM as for an unprivileged Linux user, and
 * "trusted." names are neither read nor listed (ENODATA, left out), as
 * Linux hides them from the unprivileged, though the sentry could.
 */
#define PVX_XATTR_NAME_MAX 255		/* XATTR_NAME_MAX */
#define PVX_XATTR_SIZE_MAX 65536	/* XATTR_SIZE_MAX, XATTR_LIST_MAX */

/* The name, as setxattr_copy(): ERANGE when empty or too long; then the namespace's rule for writing or reading. */
static long xattr_name(struct task *t, uint64_t uname, char *name, bool write)
{
	static const char *const acl[] = { "system.posix_acl_access", "system.posix_acl_default" };
	long r = strncpy_from_guest(t->mm, name, uname, PVX_XATTR_NAME_MAX + 1);

	if (r == -ENAMETOOLONG || r == 0)
		return -ERANGE;
	if (r < 0)
		return r;
	if (!strncmp(name, "user.", 5))
		return name[5] ? 0 : -EINVAL;
	if (!strncmp(name, "trusted.", 8))
		return write ? -EPERM : -ENODATA;
	if (!strncmp(name, "security.", 9))
		return write ? -EPERM : 0;
	if (!strcmp(name, acl[0]) || !strcmp(name, acl[1]))
		return 0;
	return !strncmp(name, "system.", 7) && !write ? 0 : -EOPNOTSUPP;
}

/*
 * An owned host fd of the object: by path (the last symlink followed
 * unless how is 'l'), or the guest fd a[0] (how 'f'; EBADF for O_PATH, as
 * fgetxattr's fdget). A path into /proc gives proc_err.
 */
static long xattr_object(struct task *t, const long a[6], int how, long proc_err)
{
	if (how != 'f')
		return get_object(t, AT_FDCWD, (uint64_t)a[0], how == 'l' ? AT_SYMLINK_NOFOLLOW : 0, proc_err);
	struct file *f = fd_lookup(t->files, (int)a[0]);
	if (!f || (f->flags & O_PATH))
		return -EBADF;
	long hfd = file_object(f, FILE_XATTR);
	if (hfd < 0)
		return hfd == FILE_CALL_DONE ? -EOPNOTSUPP : hfd;
	long d = fcntl((int)hfd, F_DUPFD_CLOEXEC, 0);
	return d < 0 ? neg_errno() : d;
}

/* The f* calls look the fd up (fdget: EBADF, O_PATH too) before the name is read. */
static bool xattr_bad_fd(struct task *t, const long a[6], int how)
{
	struct file *f = how == 'f' ? fd_lookup(t->files, (int)a[0]) : NULL;

	return how == 'f' && (!f || (f->flags & O_PATH));
}

/* getxattr(2) family: a[1] name, a[2] value, a[3] size (0: how big it is). */
static long xattr_get(struct task *t, const long a[6], int how)
{
	char name[PVX_XATTR_NAME_MAX + 1], proc[64];
	cleanup_close int hfd = -1;
	size_t size = MIN((uint64_t)a[3], PVX_XATTR_SIZE_MAX);

	if (xattr_bad_fd(t, a, how))
		return -EBADF;
	long r = xattr_name(t, (uint64_t)a[1], name, false);
	if (r < 0 && r != -ENODATA)
		return r;
	long o = xattr_object(t, a, how, -EOPNOTSUPP);
	if (o < 0)
		return o;
	hfd = (int)o;
	if (r < 0)
		return r;
	cleanup_free char *buf = malloc(size ? size : 1);
	if (!buf)
		return -ENOMEM;
	proc_fd_path(proc, sizeof(proc), hfd);
	ssize_t n = getxattr(proc, name, size ? buf : NULL, size);
	if (n < 0)
		return neg_errno();
	if (size && n > 0 && (r = copy_to_guest(t->mm, (uint64_t)a[2], buf, (size_t)n)) < 0)
		return r;
	return n;
}

/* listxattr(2) family: a[1] list, a[2] size (0: how big it is); "trusted." names left out. */
static long xattr_list(struct task *t, const long a[6], int how)
{
	char proc[64];
	cleanup_close int hfd = -1;
	long r = xattr_object(t, a, how, -EOPNOTSUPP);

	if (r == -EOPNOTSUPP)
		return 0;	/* pvx's /proc files have none */
	if (r < 0)
		return r;
	hfd = (int)r;
	cleanup_free char *buf = malloc(PVX_XATTR_SIZE_MAX);
	if (!buf)
		return -ENOMEM;
	proc_fd_path(proc, sizeof(proc), hfd);
	ssize_t n = listxattr(proc, buf, PVX_XATTR_SIZE_MAX);
	if (n < 0)
		return neg_errno();
	size_t out = 0;
	for (size_t at = 0; at < (size_t)n;) {
		size_t len = strnlen(buf + at, (size_t)n - at) + 1;
		if (strncmp(buf + at, "trusted.", 8))
			memmove(buf + out, buf + at, len), out += len;
		at += len;
	}
	if (!a[2])
		return (long)out;
	if (out > (uint64_t)a[2])
		return -ERANGE;
	r = copy_to_guest(t->mm, (uint64_t)a[1], buf, out);
	return r < 0 ? r : (long)out;
}

/* setxattr(2) family (a[1] name, a[2] value, a[3] size, a[4] flags), or removexattr(2)'s (a[1] name) when remove. */
static long xattr_set(struct task *t, const long a[6], int how, bool remove)
{
	char name[PVX_XATTR_NAME_MAX + 1], proc[64];
	cleanup_close int hfd = -1;
	cleanup_free char *val = NULL;
	size_t size = remove ? 0 : (uint64_t)a[3];
	long r;

	if (!remove && (a[4] & ~(long)(XATTR_CREATE | XATTR_REPLACE)))
		return -EINVAL;
	if (xattr_bad_fd(t, a, how))
		return -EBADF;
	long nr = xattr_name(t, (uint64_t)a[1], name, true);
	if (nr == -ERANGE || nr == -EFAULT)
		return nr;
	if (size > PVX_XATTR_SIZE_MAX)
		return -E2BIG;
	if (size && (!(val = malloc(size)) || (r = copy_from_guest(t->mm, val, (uint64_t)a[2], size)) < 0))
		return val ? r : -ENOMEM;
	r = xattr_object(t, a, how, -EOPNOTSUPP);
	if (r < 0)
		return r;
	hfd = (int)r;
	if (how != 'f' && (r = ro_check(hfd)) < 0)	/* mnt_want_write() before the permission */
		return r;
	if (nr < 0)
		return nr;
	proc_fd_path(proc, sizeof(proc), hfd);
	r = remove ? removexattr(proc, name) : setxattr(proc, name, val ? val : "", size, (int)a[4]);
	return r < 0 ? neg_errno() : 0;
}

long sys_getxattr(struct task *t, const long a[6])
{
	return xattr_get(t, a, 'p');
}

long sys_lgetxattr(struct task *t, const long a[6])
{
	return xattr_get(t, a, 'l');
}

long sys_fgetxattr(struct task *t, const long a[6])
{
	return xattr_get(t, a, 'f');
}

long sys_listxattr(struct task *t, const long a[6])
{
	return xattr_list(t, a, 'p');
}

long sys_llistxattr(struct task *t, const long a[6])
{
	return xattr_list(t, a, 'l');
}

long sys_flistxattr(struct task *t, const long a[6])
{
	return xattr_list(t, a, 'f');
}

long sys_setxattr(struct task *t, const long a[6])
{
	return xattr_set(t, a, 'p', false);
}

long sys_lsetxattr(struct task *t, const long a[6])
{
	return xattr_set(t, a, 'l', false);
}

long sys_fsetxattr(struct task *t, const long a[6])
{
	return xattr_set(t, a, 'f', false);
}

long sys_removexattr(struct task *t, const long a[6])
{
	return xattr_set(t, a, 'p', true);
}

long sys_lremovexattr(struct task *t, const long a[6])
{
	return xattr_set(t, a, 'l', true);
}

long sys_fremovexattr(struct task *t, const long a[6])
{
	return xattr_set(t, a, 'f', true);
}

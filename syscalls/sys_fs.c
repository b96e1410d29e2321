// SPDX-License-Identifier: GPL-2.0
/*
 * Filesystem syscalls: open, stat, access, readlink, getdents64, cwd.
 * Paths resolve inside the sandbox root (sentry/fs/path.c); the work is done
 * by host calls on host fds the sentry owns.
 */
#include <fcntl.h>
#include <linux/openat2.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "pvx/exec.h"
#include "pvx/path.h"
#include "sentry/kernel/procfs.h"
#include "syscalls/syscalls.h"

#ifndef OPEN_HOW_SIZE_VER0
#define OPEN_HOW_SIZE_VER0 24	/* the first struct open_how: flags, mode, resolve */
#endif

/*
 * An O_CREAT open looks its name up first, to know whether it creates the
 * file (FMODE_CREATED). An O_TRUNC open is checked on the object before
 * the host's open truncates it: ETXTBSY for a program a guest runs, and the leases on it
 * broken first (handle_truncate comes after do_dentry_open's break_lease).
 * A name that does not resolve yet is left to the open itself.
 */
static long open_trunc_check(struct task *t, int dirfd, const char *path, int flags, bool *created)
{
	cleanup_close int hfd = -1;

	/* F_CREATED_QUERY's answer: O_EXCL always creates; O_CREAT alone when the name does not resolve yet */
	*created = (flags & O_CREAT) && (flags & O_EXCL);
	if (!(flags & (O_TRUNC | O_CREAT)) || (flags & (O_PATH | O_EXCL)) || !path[0])
		return 0;
	long r = path_lookup(t, dirfd, path, flags & O_NOFOLLOW ? AT_SYMLINK_NOFOLLOW : 0);
	if (r < 0) {
		*created = r == -ENOENT && (flags & O_CREAT);
		return 0;
	}
	hfd = (int)r;
	if (!(flags & O_TRUNC))
		return 0;
	if (exec_running(hfd))
		return -ETXTBSY;
	return lease_break(t, hfd, flags | O_WRONLY);
}

static long open_install(struct task *t, long hfd, int flags, const struct file_ops *kind, bool created);

/* open(2)/openat(2): the new fd is the lowest free guest fd. */
long sys_openat(struct task *t, const long a[6])
{
	int flags = (int)a[2];
	char path[PVX_PATH_MAX];
	bool created;
	/* The path is read once: the check and the open name the same thing, whatever another thread writes. */
	long r = strncpy_from_guest(t->mm, path, (uint64_t)a[1], sizeof(path));

	if (r < 0)
		return r;
	if ((r = open_trunc_check(t, (int)a[0], path, flags, &created)) < 0)
		return r;
	/* open(2): "the mode of the created file is (mode & ~umask)" */
	const struct file_ops *kind;
	long hfd = path_open_str_kind(t, (int)a[0], path, flags, (int)(a[3] & ~(long)t->fs->umask), &kind);

	return open_install(t, hfd, flags, kind, created);
}

/* What every open does once the host fd is there: ETXTBSY, the lease break, the file and its guest fd. */
static long open_install(struct task *t, long hfd, int flags, const struct file_ops *kind, bool created)
{
	long r;

	if (hfd < 0)
		return hfd;
	/* get_write_access: ETXTBSY; then do_dentry_open's break_lease: the lease holders are told, it waits */
	r = (flags & O_ACCMODE) != O_RDONLY && !(flags & O_PATH) && exec_running((int)hfd) ? -ETXTBSY : 0;
	if (r == 0)
		r = lease_break(t, (int)hfd, flags);
	if (r < 0) {
		close((int)hfd);
		return r;
	}
	struct file *f = file_new((int)hfd, flags & ~O_CLOEXEC, kind);
	if (!f) {
		close((int)hfd);
		return -ENOMEM;
	}
	f->created = created;
	long fd = fd_install(t->files, f, flags & O_CLOEXEC, 0);
	file_put(f);
	return fd;
}

/* openat2's O_TRUNC of an object: not a running program's (ETXTBSY), its leases broken first. */
static long openat2_trunc(struct task *t, int fd, int flags)
{
	return exec_running(fd) ? -ETXTBSY : lease_break(t, fd, flags | O_WRONLY);
}

/*
 * openat2(2): "EINVAL size is smaller than any known version of struct
 * open_how", "E2BIG An extension that this kernel does not support was
 * specified in how" (nonzero bytes past the struct this kernel knows, or
 * size over a page), EFAULT for how or path unreadable, then
 * build_open_flags()'s EINVAL rules (openat2_check) and the walk the
 * resolve bits ask for (sentry/fs/openat2.c). Without RESOLVE_BENEATH,
 * RESOLVE_IN_ROOT or RESOLVE_NO_XDEV it is openat's walk, with its checks.
 */
long sys_openat2(struct task *t, const long a[6])
{
	struct open_how how = { 0 };
	uint64_t uhow = (uint64_t)a[2];
	size_t usize = (size_t)a[3];
	char path[PVX_PATH_MAX];
	bool created = false;
	long r;

	if (usize < OPEN_HOW_SIZE_VER0)
		return -EINVAL;
	if (usize > PAGE_SIZE)
		return -E2BIG;
	if ((r = copy_from_guest(t->mm, &how, uhow, MIN(usize, sizeof(how)))))
		return r;
	for (size_t off = sizeof(how); off < usize;) {	/* copy_struct_from_user's check_zeroed_user */
		uint64_t chunk[64] = { 0 };
		size_t n = MIN(usize - off, sizeof(chunk));
		if ((r = copy_from_guest(t->mm, chunk, uhow + off, n)))
			return r;
		for (size_t i = 0; i < n; i++)
			if (((const char *)chunk)[i])
				return -E2BIG;
		off += n;
	}
	if ((r = openat2_check(&how)) < 0)
		return r;
	if ((r = strncpy_from_guest(t->mm, path, (uint64_t)a[1], sizeof(path))) < 0)
		return r;
	int flags = (int)how.flags;
	int dirfd = (int)a[0];
	struct open_how eff = how;
	eff.mode = how.mode & ~(uint64_t)t->fs->umask;
	const struct file_ops *kind;
	if (!(how.resolve & (RESOLVE_BENEATH | RESOLVE_IN_ROOT | RESOLVE_NO_XDEV)) &&
	    (r = open_trunc_check(t, dirfd, path, flags, &created)) < 0)
		return r;
	bool made = false;
	long hfd = path_openat2(t, dirfd, path, &eff, openat2_trunc, &made, &kind);
	return open_install(t, hfd, flags, kind, created || made);
}

long sys_open(struct task *t, const long a[6])
{
	const long b[6] = { AT_FDCWD, a[0], a[1], a[2] };

	return sys_openat(t, b);
}

long sys_close(struct task *t, const long a[6])
{
	return fd_close(t->files, (int)a[0]);
}

/*
 * Open what (dirfd, path, at_flags) names as an O_PATH host fd, honouring
 * AT_EMPTY_PATH and AT_SYMLINK_NOFOLLOW; its stat (the one the file policy
 * checked) in *st. The caller closes it. With no_fd (a stat's), one plain
 * name may be answered with no fd at all (path_stat_name): *no_fd, 0.
 */
static long open_at_path(struct task *t, int dirfd, uint64_t upath, int at_flags, struct stat *st, bool *no_fd)
{
	char path[PVX_PATH_MAX];
	long n;

	if (at_flags & ~(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH | AT_NO_AUTOMOUNT | AT_EACCESS))
		return -EINVAL;
	n = strncpy_from_guest(t->mm, path, upath, sizeof(path));
	if (n < 0)
		return n;
	if (no_fd) {	/* a stat: one plain name from a directory may be answered with no fd (*no_fd, 0) */
		struct policy_obj o = { .x = NULL };
		long r = path_stat_name(t, dirfd, path, at_flags & AT_SYMLINK_NOFOLLOW, &o);
		*st = o.st;
		if (r <= 0)
			return (*no_fd = r == 0) ? 0 : r;
	}
	return path_lookup_stat(t, dirfd, path, at_flags & (AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH), st);
}

/*
 * newfstatat(2): "If pathname is an empty string (or NULL since Linux
 * 6.11) and the AT_EMPTY_PATH flag is specified in flags ... the call
 * operates on the file referred to by dirfd": the kind's fstat, as
 * vfs_fstatat does.
 */
long sys_newfstatat(struct task *t, const long a[6])
{
	cleanup_close int hfd = -1;
	int flags = (int)a[3] & ~AT_EACCESS;
	struct stat st;
	char c;

	if ((flags & AT_EMPTY_PATH) && (int)a[0] != AT_FDCWD &&
	    !(flags & ~(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH | AT_NO_AUTOMOUNT)) &&
	    strncpy_from_guest(t->mm, &c, (uint64_t)a[1], 1) == 0) {	/* "": the stub's prefetch when it has it */
		const long b[6] = { a[0], a[2] };
		return sys_fstat(t, b);
	}
	bool no_fd = false;
	long r = open_at_path(t, (int)a[0], (uint64_t)a[1], (int)a[3] & ~AT_EACCESS, &st, &no_fd);

	if (r < 0)
		return r;
	hfd = no_fd ? -1 : (int)r;
	return copy_to_guest_ret(t->mm, (uint64_t)a[2], &st, sizeof(st), 0);
}

long sys_stat(struct task *t, const long a[6])
{
	const long b[6] = { AT_FDCWD, a[0], a[1], 0 };

	return sys_newfstatat(t, b);
}

long sys_lstat(struct task *t, const long a[6])
{
	const long b[6] = { AT_FDCWD, a[0], a[1], AT_SYMLINK_NOFOLLOW };

	return sys_newfstatat(t, b);
}

long sys_fstat(struct task *t, const long a[6])
{
	struct file *f = fd_lookup(t->files, (int)a[0]);
	struct stat st;
	long r;

	if (!f)
		return -EBADF;
	if ((r = f->ops->stat(f, &st)))
		return r;
	return copy_to_guest_ret(t->mm, (uint64_t)a[1], &st, sizeof(st), 0);
}

long sys_lseek(struct task *t, const long a[6])
{
	struct file *f = fd_lookup(t->files, (int)a[0]);

	if (!f)
		return -EBADF;
	return file_seek(f, (off_t)a[1], (int)a[2]);
}

/* faccessat2(2): "EROFS Write permission was requested for a file on a read-only filesystem." */
long sys_faccessat2(struct task *t, const long a[6])
{
	cleanup_close int hfd = -1;
	int mode = (int)a[2], flags = (int)a[3];
	struct stat st;

	if (mode & ~(R_OK | W_OK | X_OK))
		return -EINVAL;
	long r = open_at_path(t, (int)a[0], (uint64_t)a[1], flags, &st, NULL);
	if (r < 0)
		return r;
	hfd = (int)r;
	/*
	 * The host checks the sandbox's file identity (its fsuid, nobody's when pvx runs as root), which is
	 * the guest's real and effective one alike: AT_EACCESS, or the host would check pvx's real uid (root).
	 */
	if (syscall(SYS_faccessat2, hfd, "", mode, AT_EMPTY_PATH | AT_EACCESS) < 0)
		return neg_errno();
	if ((mode & W_OK) && !sandbox.rw &&
	    (S_ISREG(st.st_mode) || S_ISDIR(st.st_mode) || S_ISLNK(st.st_mode)))
		return -EROFS;
	return 0;
}

long sys_faccessat(struct task *t, const long a[6])
{
	const long b[6] = { a[0], a[1], a[2], 0 };

	return sys_faccessat2(t, b);
}

long sys_access(struct task *t, const long a[6])
{
	const long b[6] = { AT_FDCWD, a[0], a[1], 0 };

	return sys_faccessat2(t, b);
}

/* readlinkat(2): "EINVAL ... pathname is not a symbolic link"; no NUL is added. */
long sys_readlinkat(struct task *t, const long a[6])
{
	cleanup_close int hfd = -1;
	char target[PVX_PATH_MAX];
	struct stat st;

	if ((long)a[3] <= 0)
		return -EINVAL;
	/* The links of the guest's /proc are the sentry's to answer (sentry/kernel/procfs.c). */
	char path[PVX_PATH_MAX], abs[PVX_PATH_MAX];
	long r = strncpy_from_guest(t->mm, path, (uint64_t)a[1], sizeof(path));
	if (r > 0 && path_absolute(t, (int)a[0], path, abs, sizeof(abs)) == 0 && path_in_proc(abs)) {
		r = procfs_readlink(t, abs + 5, target, sizeof(target));
		if (r < 0)
			return r;
		r = MIN(r, (long)(size_t)a[3]);
		return copy_to_guest_ret(t->mm, (uint64_t)a[2], target, (size_t)r, r);
	}
	/* An empty path reads dirfd itself when it is a symlink (O_PATH|O_NOFOLLOW), else ENOENT, as Linux. */
	bool empty = r == 0;
	if (r < 0)
		return r;
	r = path_lookup_stat(t, (int)a[0], path, AT_SYMLINK_NOFOLLOW | (empty ? AT_EMPTY_PATH : 0), &st);
	if (r < 0)
		return empty && r != -EBADF ? -ENOENT : r;
	hfd = (int)r;
	if (!S_ISLNK(st.st_mode))
		return empty ? -ENOENT : -EINVAL;
	ssize_t n = readlinkat(hfd, "", target, sizeof(target));
	if (n < 0)
		return neg_errno();
	n = MIN(n, (ssize_t)(size_t)a[3]);
	return copy_to_guest_ret(t->mm, (uint64_t)a[2], target, (size_t)n, n);
}

long sys_readlink(struct task *t, const long a[6])
{
	const long b[6] = { AT_FDCWD, a[0], a[1], a[2] };

	return sys_readlinkat(t, b);
}

long sys_getdents64(struct task *t, const long a[6])
{
	struct file *f = fd_lookup(t->files, (int)a[0]);
	size_t count = MIN((size_t)(unsigned)a[2], 1UL << 20);

	if (!f)
		return -EBADF;
	cleanup_free char *buf = malloc(count ? count : 1);
	if (!buf)
		return -ENOMEM;
	long n = file_getdents(t, f, buf, count);
	if (n < 0)
		return n;
	return copy_to_guest_ret(t->mm, (uint64_t)a[1], buf, (size_t)n, n);
}

/* getcwd(2): returns the length including the NUL; ERANGE when it does not fit. */
long sys_getcwd(struct task *t, const long a[6])
{
	char path[PVX_PATH_MAX];
	long n = path_of_dir(t->fs->cwd_fd, path, sizeof(path));

	if (n < 0)
		return n == -EXDEV ? -ENOENT : n;
	if ((size_t)n + 1 > (size_t)a[1])
		return -ERANGE;
	return copy_to_guest_ret(t->mm, (uint64_t)a[0], path, (size_t)n + 1, n + 1);
}

static long set_cwd(struct task *t, int hfd)
{
	if (syscall(SYS_faccessat2, hfd, "", X_OK, AT_EMPTY_PATH) < 0) {
		long err = neg_errno();
		close(hfd);
		return err;
	}
	close(t->fs->cwd_fd);
	t->fs->cwd_fd = hfd;
	return 0;
}

long sys_chdir(struct task *t, const long a[6])
{
	long hfd = path_open_user(t, AT_FDCWD, (uint64_t)a[0], O_PATH | O_DIRECTORY, 0);

	return hfd < 0 ? hfd : set_cwd(t, (int)hfd);
}

/*
 * chroot(2): the path is looked up and must be a directory the caller may
 * search (ENAMETOOLONG, EFAULT, ENOENT, ENOTDIR, ELOOP, EACCES as Linux's
 * order), then "EPERM The caller has insufficient privilege": the sandbox
 * holds no CAP_SYS_CHROOT, so the root never changes.
 */
long sys_chroot(struct task *t, const long a[6])
{
	long hfd = path_open_user(t, AT_FDCWD, (uint64_t)a[0], O_PATH | O_DIRECTORY, 0);

	if (hfd < 0)
		return hfd;
	long r = faccessat((int)hfd, "", X_OK, AT_EMPTY_PATH | AT_EACCESS) < 0 ? neg_errno() : -EPERM;
	close((int)hfd);
	return r;
}

long sys_fchdir(struct task *t, const long a[6])
{
	long dir = path_dir_fd(t, (int)a[0]);

	if (dir < 0)
		return dir;
	int hfd = fcntl((int)dir, F_DUPFD_CLOEXEC, 3);
	return hfd < 0 ? neg_errno() : set_cwd(t, hfd);
}

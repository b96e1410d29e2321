/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Guest path resolution. Every guest path is resolved beneath the sandbox
 * root with openat2(RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS), so "..",
 * absolute and relative symlinks and /proc/self/root stay inside it.
 */
#ifndef PVX_PATH_H
#define PVX_PATH_H

#include "pvx/policy.h"
#include "pvx/task.h"

#define PVX_PATH_MAX 4096

struct addr_space;

/*
 * What the file side needs of the kernel above it, given at start (main.c:
 * the kernel's kernel_fs_ops) so that sentry/fs/ never names sentry/kernel/:
 * the guest's /proc, which renders the kernel's tasks, and the blocking host
 * call that drops the sentry lock (a FIFO's open waits in it).
 */
struct fs_kernel_ops {
	/* rel is the guest path after "/proc"; a host fd or -errno. */
	long (*proc_open)(struct task *t, const char *rel, int flags);
	/* The guest path of a host path inside a /proc directory's staging dir; -EXDEV for others. */
	long (*proc_dir_path)(const char *host, char *buf, size_t size);
	/* task_block of pvx/kernel.h. */
	long (*block)(struct task *t, struct addr_space *as, long nr, const long a[6], bool ready);
	/* io_block of pvx/kernel.h: the same for I/O on files in and out (either may be NULL). */
	long (*block_io)(struct task *t, struct addr_space *as, struct file *in, struct file *out, long nr,
			 const long a[6]);
	/*
	 * send_sigio(): f's F_SETSIG signal (0: SIGIO) to its F_SETOWN owner,
	 * with si_fd fd, si_code code (POLL_*) and si_band band.
	 */
	void (*sigio)(struct file *f, int fd, int code, long band);
	/* proc_open that also says the file kind of the fd it made (NULL: a host object, file_kind_of's). */
	long (*proc_open_kind)(struct task *t, const char *rel, int flags, const struct file_ops **kind);
	/* The guest task nr's tid, or with tgid its process's pid; -ESRCH: none (nsfs's pid ioctls). */
	long (*ns_pid)(int nr, bool tgid);
	/* pt_pause_all of pvx/kernel.h: O_ASYNC was set (pipe writes must reach pipe_wrote's SIGIO). */
	void (*pt_pause_all)(void);
};
extern const struct fs_kernel_ops *fs_kernel;
void path_set_kernel(const struct fs_kernel_ops *ops);

/* Set the root (an O_PATH directory fd) and remember its host path. */
long path_set_root(const char *host_root) __must_check;
/* Is the guest's root the host's / ? */
bool path_root_is_host(void);

/*
 * Open guest path `path` relative to guest dirfd (AT_FDCWD = cwd) with host
 * open flags; returns a host fd or -errno. What the name leads to is opened
 * with O_PATH, checked by the file policy (include/pvx/policy.h: read-only
 * root, devices, hidden /sys) and opened itself, never looked up twice.
 */
long path_open(struct task *t, int dirfd, const char *path, int flags, int mode) __must_check;

/* Read a guest path string (EFAULT, ENAMETOOLONG, ENOENT for "") and open it. */
long path_open_user(struct task *t, int dirfd, uint64_t upath, int flags, int mode) __must_check;
/* The same, and the file kind (pvx/file.h) of what it opened in *kind. */
long path_open_user_kind(struct task *t, int dirfd, uint64_t upath, int flags, int mode,
			 const struct file_ops **kind) __must_check;
/* path_open, and the file kind of what it opened in *kind (a path the caller read from the guest once). */
long path_open_str_kind(struct task *t, int dirfd, const char *path, int flags, int mode,
			const struct file_ops **kind) __must_check;

/*
 * path_open_str_kind for openat2(2) without RESOLVE_BENEATH or
 * RESOLVE_IN_ROOT: resolve's RESOLVE_NO_SYMLINKS, RESOLVE_NO_XDEV and
 * RESOLVE_CACHED bits are added to every host lookup of the walk (the
 * sandbox's RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS always are).
 */
long path_open_resolve(struct task *t, int dirfd, const char *path, int flags, int mode, uint64_t resolve,
		       const struct file_ops **kind) __must_check;

/*
 * openat2(2) (sentry/fs/openat2.c). openat2_check: the struct open_how's
 * flags, mode and resolve as build_open_flags() checks them (EINVAL), and
 * RESOLVE_CACHED with O_TRUNC, O_CREAT or O_TMPFILE (EAGAIN). path_openat2:
 * open guest path (dirfd, path) as how says, confined to the root and
 * checked by the policy on the object opened; a host fd or -errno, the
 * kind in *kind, *created when O_CREAT made it. trunc (may be NULL) is
 * asked about an O_TRUNC open's object (its O_PATH host fd) before the
 * open truncates it: 0, or the -errno the open fails with (ETXTBSY).
 */
struct open_how;
typedef long (*openat2_trunc_fn)(struct task *t, int fd, int flags);
long openat2_check(const struct open_how *how) __must_check;
long path_openat2(struct task *t, int dirfd, const char *path, const struct open_how *how, openat2_trunc_fn trunc,
		  bool *created, const struct file_ops **kind) __must_check;

/*
 * What path_parent found as the last component, as the kernel's LAST_* types:
 * a name, "/" (the whole path was slashes), "." or "..".
 */
enum path_last { PATH_LAST_NORM, PATH_LAST_ROOT, PATH_LAST_DOT, PATH_LAST_DOTDOT };

/*
 * For calls that act on a name in a directory (mkdir, unlink, rename, link,
 * symlink, mknod): resolve the directory part of guest path `path` inside
 * the root and return it as an O_PATH host fd. The last component, with its
 * trailing slashes, is copied to last (PATH_LAST_ROOT gives "."); it is never
 * resolved here, so the caller's host *at() call decides whether a symlink
 * there is followed (none of those calls follows it). ENOENT for "".
 */
long path_parent(struct task *t, int dirfd, const char *path, char *last, size_t size,
		 enum path_last *type) __must_check;

/*
 * What (dirfd, path, at_flags) names, as an O_PATH host fd, the way stat(2)
 * and friends look it up: AT_SYMLINK_NOFOLLOW leaves a final symlink
 * unfollowed, AT_EMPTY_PATH with "" names dirfd itself (AT_FDCWD: the cwd).
 * Other flags are the caller's to check.
 */
long path_lookup(struct task *t, int dirfd, const char *path, int at_flags) __must_check;
/* path_lookup, and the fd's stat in *st (the one the policy checked: no second host call). */
long path_lookup_stat(struct task *t, int dirfd, const char *path, int at_flags, struct stat *st) __must_check;
/*
 * stat(2)'s lookup of one plain name from dirfd (AT_FDCWD: the cwd) at one
 * statx of the name in the directory's host fd, when that is the same
 * lookup: the directory is inside the root and not /sys, /proc or /dev, the
 * name is no symlink to follow, its mount's type is known to the policy.
 * 0 and found->st (and, with found->x, the guest's statx answered in it as
 * path_lookup_obj's: x_done); a policy's errno; 1 when the full lookup
 * (path_lookup_obj) must answer, errors included.
 */
long path_stat_name(struct task *t, int dirfd, const char *path, int at_flags, struct policy_obj *found) __must_check;
/*
 * path_lookup that fills found (pvx/policy.h: set its x, x_mask and x_sync,
 * or x NULL): found->st always, found->x_done when the policy's own statx
 * answered the guest's.
 */
long path_lookup_obj(struct task *t, int dirfd, const char *path, int at_flags, struct policy_obj *found) __must_check;

/* The host fd of guest fd if it is a directory (EBADF, ENOTDIR): a dirfd, fchdir. */
long path_dir_fd(struct task *t, int fd) __must_check;
/* Guest dirfd + path -> the absolute guest path (not resolved: symlinks stay). */
long path_absolute(struct task *t, int dirfd, const char *path, char *out, size_t size) __must_check;
/* Is this absolute guest path /proc or below it? */
bool path_in_proc(const char *abs);

/* The guest path of a host fd that refers to something inside the root. */
long path_of_fd(int host_fd, char *buf, size_t size) __must_check;
/* path_of_fd of a directory, but -ENOENT when it was removed (getcwd(2): "has been unlinked"). */
long path_of_dir(int host_fd, char *buf, size_t size) __must_check;

#endif

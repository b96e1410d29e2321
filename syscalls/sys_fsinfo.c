// SPDX-License-Identifier: GPL-2.0
/*
 * What the file system says about a file, and syncing it: statx, statfs,
 * fstatfs, fsync, fdatasync, sync. An fd's answers come from its host
 * object (file_object); a kind without one answers from its own stat.
 */
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "pvx/path.h"
#include "syscalls/syscalls.h"

/* Copy the guest path at upath and look it up (path_lookup) as an O_PATH host fd. */
static long lookup_user(struct task *t, int dirfd, uint64_t upath, int at_flags)
{
	char path[PVX_PATH_MAX];
	long r = strncpy_from_guest(t->mm, path, upath, sizeof(path));

	return r < 0 ? r : path_lookup(t, dirfd, path, at_flags);
}

/*
 * The host fd statx looks at: "If pathname is an empty string (or NULL
 * since Linux 6.11) and the AT_EMPTY_PATH flag is specified", the file of
 * dirfd (its host object, borrowed; FILE_CALL_DONE for a kind without
 * one); else what the path names, an O_PATH fd left in *owned, whose
 * lookup may have answered the statx already (o->x_done).
 */
static long statx_target(struct task *t, int dirfd, uint64_t upath, int flags, int *owned, struct policy_obj *o,
			 bool *answered)
{
	char path[PVX_PATH_MAX] = "";
	char c = 0;
	long r;

	if ((flags & AT_EMPTY_PATH) && dirfd != AT_FDCWD && (!upath || (!copy_from_guest(t->mm, &c, upath, 1) && !c)))
		return fd_object(t, dirfd, FILE_STATX);
	if (upath || !(flags & AT_EMPTY_PATH)) {
		r = strncpy_from_guest(t->mm, path, upath, sizeof(path));
		if (r < 0)
			return r;
	}
	/* One plain name from a directory: one statx of it there answers (*answered), no fd. */
	if ((r = path_stat_name(t, dirfd, path, flags & AT_SYMLINK_NOFOLLOW, o)) <= 0)
		return (*answered = r == 0) ? 0 : r;
	o->x_done = false;
	r = path_lookup_obj(t, dirfd, path, flags & (AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH), o);
	if (r >= 0)
		*owned = (int)r;
	return r;
}

/* The statx of a file whose kind has no host object: its own stat, the basic fields. */
static long statx_of_kind(struct task *t, struct file *f, uint64_t ubuf)
{
	struct statx stx;
	struct stat st;
	long r = f->ops->stat(f, &st);

	if (r < 0)
		return r;
	memset(&stx, 0, sizeof(stx));
	stx.stx_mask = STATX_BASIC_STATS;
	stx.stx_blksize = (uint32_t)st.st_blksize;
	stx.stx_nlink = (uint32_t)st.st_nlink;
	stx.stx_uid = st.st_uid;
	stx.stx_gid = st.st_gid;
	stx.stx_mode = (uint16_t)st.st_mode;
	stx.stx_ino = st.st_ino;
	stx.stx_size = (uint64_t)st.st_size;
	stx.stx_blocks = (uint64_t)st.st_blocks;
	stx.stx_atime = (struct statx_timestamp){ st.st_atim.tv_sec, (uint32_t)st.st_atim.tv_nsec };
	stx.stx_ctime = (struct statx_timestamp){ st.st_ctim.tv_sec, (uint32_t)st.st_ctim.tv_nsec };
	stx.stx_mtime = (struct statx_timestamp){ st.st_mtim.tv_sec, (uint32_t)st.st_mtim.tv_nsec };
	stx.stx_rdev_major = major(st.st_rdev);
	stx.stx_rdev_minor = minor(st.st_rdev);
	stx.stx_dev_major = major(st.st_dev);
	stx.stx_dev_minor = minor(st.st_dev);
	return copy_to_guest(t->mm, ubuf, &stx, sizeof(stx));
}

/*
 * statx(2): AT_EMPTY_PATH, AT_SYMLINK_NOFOLLOW, AT_NO_AUTOMOUNT and the
 * AT_STATX_SYNC_* flags; "EINVAL Reserved flag specified in flags" or mask.
 * Since Linux 6.11 pathname may be NULL with AT_EMPTY_PATH.
 */
long sys_statx(struct task *t, const long a[6])
{
	cleanup_close int owned = -1;
	struct statx stx;
	int flags = (int)a[2];
	unsigned mask = (unsigned)a[3];
	struct policy_obj o = { .x = &stx, .x_mask = mask, .x_sync = flags & AT_STATX_SYNC_TYPE };

	if (flags & ~(AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT | AT_EMPTY_PATH | AT_STATX_SYNC_TYPE))
		return -EINVAL;
	if ((flags & AT_STATX_SYNC_TYPE) == AT_STATX_SYNC_TYPE || (mask & STATX__RESERVED))
		return -EINVAL;
	memset(&stx, 0, sizeof(stx));
	bool answered = false;
	long hfd = statx_target(t, (int)a[0], (uint64_t)a[1], flags, &owned, &o, &answered);
	if (hfd == FILE_CALL_DONE)
		return statx_of_kind(t, fd_lookup(t->files, (int)a[0]), (uint64_t)a[4]);
	if (hfd < 0)
		return hfd;
	if (answered)
		;	/* path_stat_name's statx, as the guest asked */
	else if (o.x_done) {
		long r = policy_statx_answer((int)hfd, &o, mask);
		if (r < 0)
			return r;
	} else {
		memset(&stx, 0, sizeof(stx));
		if (syscall(SYS_statx, (int)hfd, "", AT_EMPTY_PATH | (flags & AT_STATX_SYNC_TYPE), mask, &stx) < 0)
			return neg_errno();
	}
	return copy_to_guest_ret(t->mm, (uint64_t)a[4], &stx, sizeof(stx), 0);
}

/* statfs(2) results, with ST_RDONLY in f_flags for the root when it is read-only. */
static long put_statfs(struct task *t, uint64_t ubuf, int hfd, bool in_root)
{
	struct statfs sf;

	if (fstatfs(hfd, &sf) < 0)
		return neg_errno();
	if (in_root && !sandbox.rw)
		sf.f_flags |= ST_RDONLY;
	return copy_to_guest(t->mm, ubuf, &sf, sizeof(sf));
}

/* statfs(2): "returns information about a mounted filesystem. path is the pathname of any file within the mounted filesystem." */
long sys_statfs(struct task *t, const long a[6])
{
	cleanup_close int hfd = -1;
	long r = lookup_user(t, AT_FDCWD, (uint64_t)a[0], 0);

	if (r < 0)
		return r;
	hfd = (int)r;
	return put_statfs(t, (uint64_t)a[1], hfd, true);
}

/* fstatfs(2): "returns the same information about an open file referenced by descriptor fd". */
long sys_fstatfs(struct task *t, const long a[6])
{
	char path[PVX_PATH_MAX];
	long hfd = fd_object(t, (int)a[0], FILE_STATFS);

	if (hfd < 0)
		return hfd == FILE_CALL_DONE ? 0 : hfd;
	return put_statfs(t, (uint64_t)a[1], (int)hfd, path_of_fd((int)hfd, path, sizeof(path)) >= 0);
}

/* fsync(2): "EROFS, EINVAL fd is bound to a special file ... which does not support synchronization" -- the host's answer. */
long sys_fsync(struct task *t, const long a[6])
{
	long hfd = fd_object(t, (int)a[0], FILE_SYNC);

	if (hfd < 0)
		return hfd == FILE_CALL_DONE ? 0 : hfd;
	return fsync((int)hfd) < 0 ? neg_errno() : 0;
}

/* fdatasync(2): "similar to fsync(), but does not flush modified metadata unless that metadata is needed". */
long sys_fdatasync(struct task *t, const long a[6])
{
	long hfd = fd_object(t, (int)a[0], FILE_SYNC);

	if (hfd < 0)
		return hfd == FILE_CALL_DONE ? 0 : hfd;
	return fdatasync((int)hfd) < 0 ? neg_errno() : 0;
}

/*
 * sync(2): "causes all pending modifications to filesystem metadata and
 * cached file data to be written to the underlying filesystems". A no-op:
 * the guest's writes are the host's, and syncing every host file system
 * on a guest's whim could stall the sentry; fsync works per file.
 */
long sys_sync(struct task *t __unused, const long a[6] __unused)
{
	return 0;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * What the file policy (sentry/fs/policy.c) asks of a host object: its
 * stat and the type of the file system it is on, at the fewest host calls.
 *
 * The stat is a statx(2) that also names the object's mount by its unique
 * id (STATX_MNT_ID_UNIQUE, Linux 6.8): an id the kernel never gives to
 * another mount until reboot, unlike the old mount ids and st_dev (both
 * are reused as soon as a mount or an anonymous superblock goes away). A
 * mount has one superblock for its whole life, so its file system type is
 * that mount's forever: it is asked with fstatfs(2) once per mount and
 * cached by that id. A mount the host unmounts and replaces (a procfs
 * mounted where a tmpfs was) has a new id and is asked anew; nothing is
 * ever invalidated, so nothing can be stale. Kernels without unique ids
 * (Debian 12's 6.1) get no id and ask fstatfs every time, as before.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/vfs.h>

#include "pvx/path.h"
#include "sentry/fs/fs_kind.h"

#ifndef STATX_MNT_ID_UNIQUE
#define STATX_MNT_ID_UNIQUE 0x00004000U
#endif

#define MNT_CACHE 128	/* slots, direct-mapped by id: a sandbox sees a few dozen mounts */

static struct {
	uint64_t mnt;	/* 0: empty */
	unsigned long type;
	uint64_t old_id;	/* its STATX_MNT_ID, when asked (statx of a guest that did not ask for the unique id) */
	bool have_type, have_old;
} mnt_cache[MNT_CACHE];
static pthread_mutex_t mnt_lock = PTHREAD_MUTEX_INITIALIZER;	/* path calls may run outside the sentry lock */

/*
 * The struct stat fstat(2) would give, from a statx with STATX_BASIC_STATS
 * (the kernel fills both alike). A statx with a guest's smaller mask still
 * has the type and device numbers the policy reads: an inode's own.
 */
static void stat_of_statx(const struct statx *x, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_dev = makedev(x->stx_dev_major, x->stx_dev_minor);
	st->st_ino = x->stx_ino;
	st->st_mode = x->stx_mode;
	st->st_nlink = x->stx_nlink;
	st->st_uid = x->stx_uid;
	st->st_gid = x->stx_gid;
	st->st_rdev = makedev(x->stx_rdev_major, x->stx_rdev_minor);
	st->st_size = (off_t)x->stx_size;
	st->st_blksize = (blksize_t)x->stx_blksize;
	st->st_blocks = (blkcnt_t)x->stx_blocks;
	st->st_atim = (struct timespec){ x->stx_atime.tv_sec, x->stx_atime.tv_nsec };
	st->st_mtim = (struct timespec){ x->stx_mtime.tv_sec, x->stx_mtime.tv_nsec };
	st->st_ctim = (struct timespec){ x->stx_ctime.tv_sec, x->stx_ctime.tv_nsec };
}

/* See sentry/fs/fs_kind.h. */
long obj_statx(int fd, unsigned mask, int sync, struct statx *x, struct stat *st, uint64_t *mnt)
{
	if (statx(fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW | sync, mask | STATX_MNT_ID_UNIQUE, x) < 0)
		return neg_errno();
	stat_of_statx(x, st);
	*mnt = x->stx_mask & STATX_MNT_ID_UNIQUE ? x->stx_mnt_id : 0;
	return 0;
}

/* See sentry/fs/fs_kind.h. */
long name_statx(int dir, const char *name, unsigned mask, int sync, struct statx *x, struct stat *st, uint64_t *mnt)
{
	if (statx(dir, name, AT_SYMLINK_NOFOLLOW | sync, mask | STATX_MNT_ID_UNIQUE, x) < 0)
		return neg_errno();
	stat_of_statx(x, st);
	*mnt = x->stx_mask & STATX_MNT_ID_UNIQUE ? x->stx_mnt_id : 0;
	return 0;
}

/* See sentry/fs/fs_kind.h. */
bool fs_type_known(uint64_t mnt)
{
	size_t slot = (size_t)(mnt % MNT_CACHE);
	bool hit;

	if (!mnt)
		return false;
	pthread_mutex_lock(&mnt_lock);
	hit = mnt_cache[slot].mnt == mnt && mnt_cache[slot].have_type;
	pthread_mutex_unlock(&mnt_lock);
	return hit;
}

/* See sentry/fs/fs_kind.h. */
long obj_stat(int fd, struct stat *st, uint64_t *mnt)
{
	struct statx x;

	return obj_statx(fd, STATX_BASIC_STATS, 0, &x, st, mnt);
}

/* See sentry/fs/fs_kind.h. */
long statx_as_asked(int fd, uint64_t mnt, unsigned mask, struct statx *x)
{
	size_t slot = (size_t)(mnt % MNT_CACHE);
	struct statx old;
	bool hit = false;

	if (!mnt || (mask & STATX_MNT_ID_UNIQUE))
		return 0;	/* what the guest asked for, or a kernel without unique ids: the answer is as it is */
	pthread_mutex_lock(&mnt_lock);
	if (mnt_cache[slot].mnt == mnt && mnt_cache[slot].have_old) {
		x->stx_mnt_id = mnt_cache[slot].old_id;
		hit = true;
	}
	pthread_mutex_unlock(&mnt_lock);
	if (!hit && fd < 0)
		return 1;	/* no object to ask */
	if (!hit) {
		if (statx(fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, STATX_MNT_ID, &old) < 0)
			return neg_errno();
		if (!(old.stx_mask & STATX_MNT_ID))
			return -EIO;
		x->stx_mnt_id = old.stx_mnt_id;
		pthread_mutex_lock(&mnt_lock);
		if (mnt_cache[slot].mnt != mnt)
			mnt_cache[slot] = (typeof(mnt_cache[0])){ .mnt = mnt };
		mnt_cache[slot].old_id = old.stx_mnt_id;
		mnt_cache[slot].have_old = true;
		pthread_mutex_unlock(&mnt_lock);
	}
	x->stx_mask = (x->stx_mask & ~STATX_MNT_ID_UNIQUE) | STATX_MNT_ID;
	return 0;
}

/*
 * The type of the file system fd's object is on. fstatfs of an O_PATH fd of
 * a symlink fails on 9p (the test VM's root: QEMU's server resolves the link
 * and finds nothing, or the wrong thing), yet a symlink lives on its
 * directory's file system: take the directory's, if it is on the link's
 * device (a rename meanwhile cannot lend the link another file system).
 */
static long fs_type_asked(int fd, unsigned long *type)
{
	char proc[64], dir[PVX_PATH_MAX];
	struct stat st, dst;
	struct statfs sfs;

	if (fstatfs(fd, &sfs) == 0) {
		*type = (unsigned long)sfs.f_type;
		return 0;
	}
	long err = neg_errno();
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	ssize_t n = readlink(proc, dir, sizeof(dir) - 1);
	if (fstat(fd, &st) < 0 || !S_ISLNK(st.st_mode) || n <= 0 || dir[0] != '/')
		return err;
	dir[n] = 0;
	*strrchr(dir, '/') = 0;
	int dfd cleanup_close = open(dir[0] ? dir : "/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0 || fstat(dfd, &dst) < 0 || dst.st_dev != st.st_dev || fstatfs(dfd, &sfs) < 0)
		return err;
	*type = (unsigned long)sfs.f_type;
	return 0;
}

/* See sentry/fs/fs_kind.h. */
long fs_type_of(int fd, uint64_t mnt, unsigned long *type)
{
	size_t slot = (size_t)(mnt % MNT_CACHE);
	bool hit = false;

	if (mnt) {
		pthread_mutex_lock(&mnt_lock);
		if (mnt_cache[slot].mnt == mnt && mnt_cache[slot].have_type) {
			*type = mnt_cache[slot].type;
			hit = true;
		}
		pthread_mutex_unlock(&mnt_lock);
	}
	if (hit)
		return 0;
	long r = fs_type_asked(fd, type);
	if (r < 0 || !mnt)
		return r;
	pthread_mutex_lock(&mnt_lock);
	if (mnt_cache[slot].mnt != mnt)
		mnt_cache[slot] = (typeof(mnt_cache[0])){ .mnt = mnt };
	mnt_cache[slot].type = *type;
	mnt_cache[slot].have_type = true;
	pthread_mutex_unlock(&mnt_lock);
	return 0;
}

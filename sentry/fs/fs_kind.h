/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A host object's stat and its file system's type for the file policy
 * (sentry/fs/fs_kind.c): one statx per object, one fstatfs per mount.
 */
#ifndef PVX_FS_FS_KIND_H
#define PVX_FS_FS_KIND_H

#include <stdint.h>
#include <fcntl.h>
#include <sys/stat.h>

#include "pvx/common.h"

/*
 * fstat of fd (a symlink's own, for an O_PATH|O_NOFOLLOW fd) in *st, and in
 * *mnt the unique id of the mount fd was opened through (0 on kernels
 * without STATX_MNT_ID_UNIQUE): one host call.
 */
long obj_stat(int fd, struct stat *st, uint64_t *mnt) __must_check;

/*
 * obj_statx of name (one component, not followed) in the directory dir:
 * one host call.
 */
long name_statx(int dir, const char *name, unsigned mask, int sync, struct statx *x, struct stat *st,
		uint64_t *mnt) __must_check;

/* Is the file system type of mount mnt (a unique id, 0: none) cached, so fs_type_of needs no fd? */
bool fs_type_known(uint64_t mnt);

/*
 * obj_stat that also answers a guest's statx: the one statx asks for mask
 * (and the unique mount id) with the guest's
 * AT_STATX_SYNC_* flags sync, into *x; statx_as_asked then makes *x what
 * the guest's own call would have given.
 */
long obj_statx(int fd, unsigned mask, int sync, struct statx *x, struct stat *st, uint64_t *mnt) __must_check;

/*
 * A guest that did not ask for STATX_MNT_ID_UNIQUE gets STATX_MNT_ID, the
 * old id of the mount (mnt, obj_statx's), as Linux answers: from the cache,
 * else one statx of fd asking for it (fd -1: none to ask, 1 is returned).
 */
long statx_as_asked(int fd, uint64_t mnt, unsigned mask, struct statx *x) __must_check;

/*
 * f_type of the file system of fd's object. With mnt (obj_stat's id for
 * this very fd) a cached answer for that mount, else fstatfs.
 */
long fs_type_of(int fd, uint64_t mnt, unsigned long *type) __must_check;

#endif

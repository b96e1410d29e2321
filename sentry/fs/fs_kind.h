/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A host object's stat and its file system's type for the file policy
 * (sentry/fs/fs_kind.c): one statx per object, one fstatfs per mount.
 */
#ifndef PVX_FS_FS_KIND_H
#define PVX_FS_FS_KIND_H

#include <stdint.h>
#include <sys/stat.h>

#include "pvx/common.h"

/*
 * fstat of fd (a symlink's own, for an O_PATH|O_NOFOLLOW fd) in *st, and in
 * *mnt the unique id of the mount fd was opened through (0 on kernels
 * without STATX_MNT_ID_UNIQUE): one host call.
 */
long obj_stat(int fd, struct stat *st, uint64_t *mnt) __must_check;

/*
 * f_type of the file system of fd's object. With mnt (obj_stat's id for
 * this very fd) a cached answer for that mount, else fstatfs.
 */
long fs_type_of(int fd, uint64_t mnt, unsigned long *type) __must_check;

#endif

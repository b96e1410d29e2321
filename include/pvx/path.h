/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Guest path resolution. Every guest path is resolved beneath the sandbox
 * root with openat2(RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS), so "..",
 * absolute and relative symlinks and /proc/self/root stay inside it.
 */
#ifndef PVX_PATH_H
#define PVX_PATH_H

#include "pvx/task.h"

#define PVX_PATH_MAX 4096

/* Set the root (an O_PATH directory fd) and remember its host path. */
long path_set_root(const char *host_root) __must_check;

/*
 * Open guest path `path` relative to guest dirfd (AT_FDCWD = cwd) with host
 * open flags; returns a host fd or -errno. Writes are refused with EROFS on a
 * read-only root, device nodes outside a small allow-list with EACCES.
 */
long path_open(struct task *t, int dirfd, const char *path, int flags, int mode) __must_check;

/* Read a guest path string (EFAULT, ENAMETOOLONG, ENOENT for "") and open it. */
long path_open_user(struct task *t, int dirfd, uint64_t upath, int flags, int mode) __must_check;

/* The guest path of a host fd that refers to something inside the root. */
long path_of_fd(int host_fd, char *buf, size_t size) __must_check;

#endif

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Namespace files (sentry/fs/nsfs.c): what opening /proc/PID/ns/NAME gives.
 * The sandbox has one namespace of each type, shared by every guest
 * process, so a type is the whole identity of a namespace here: its inode
 * number is the sandbox's id for that type, the same in every process and
 * distinct per type. The host fd underneath is the sentry's own nsfs file
 * of that type (opened once), so fstat's st_dev and fstatfs are nsfs's;
 * pvx never acts on it (no host ioctl, no setns).
 */
#ifndef PVX_NSFS_H
#define PVX_NSFS_H

#include <stddef.h>
#include "pvx/file.h"

extern const struct file_ops nsfs_file_ops;

/*
 * The /proc/PID/ns entry name (its n-th in readdir order; NULL past the
 * last). Types the host kernel lacks are skipped, as Linux has no entry
 * for a namespace type configured out.
 */
const char *nsfs_entry(size_t n);
/* A host fd for the namespace /proc/PID/ns/name opens; -ENOENT for no such entry. */
long nsfs_open(const char *name) __must_check;
/* readlink of /proc/PID/ns/name: "TYPE:[INODE]" (pid_for_children reads "pid:[...]"), its length or -ENOENT. */
long nsfs_link(const char *name, char *buf, size_t size);
/* The d_path of an open namespace file (/proc/PID/fd/N), as nsfs_link; -EINVAL when f is not one. */
long nsfs_fd_name(struct file *f, char *buf, size_t size);
/* The CLONE_NEW* type of namespace file f, -EINVAL when f is not one. */
long nsfs_type(struct file *f);

#endif

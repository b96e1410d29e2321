/* SPDX-License-Identifier: GPL-2.0 */
#ifndef PVX_PROCFS_H
#define PVX_PROCFS_H

#include <stdio.h>

#include "pvx/task.h"

/* rel is the guest path after "/proc" ("" or "/..."). Returns a host fd or -errno. */
long procfs_open(struct task *t, const char *rel, int flags) __must_check;
/* readlink of a /proc link; returns the length (no NUL) or -errno (EINVAL: not a link). */
long procfs_readlink(struct task *t, const char *rel, char *buf, size_t size) __must_check;

/*
 * A /proc directory (guest_dir) listing names for getdents: a host fd on a
 * staged directory of empty files (sentry/kernel/procfs_stage.c).
 */
long procfs_dir_fd(const char *guest_dir, const char *const names[], size_t n) __must_check;
/* The same with each name of the d_type type_of gives it (DT_LNK, DT_DIR or DT_REG), for getdents. */
long procfs_dir_fd_typed(const char *guest_dir, const char *const names[], size_t n,
			 unsigned char (*type_of)(const char *)) __must_check;
/* An O_PATH fd on the /proc link guest_path itself, whose target is target. */
long procfs_link_fd(const char *guest_path, const char *target) __must_check;

/* The guest path of a host path inside a /proc directory's staging dir; -EXDEV for others. */
long procfs_dir_path(const char *host, char *buf, size_t size);

/* A read-only host fd holding len bytes of text (r--r--r--, as /proc's files). */
long procfs_text_fd(const char *text, size_t len) __must_check;
/* A directory guest_dir ("/proc/...") listing names, each an empty file (see procfs.c). */
long procfs_dir_fd(const char *guest_dir, const char *const names[], size_t n) __must_check;

/* /proc/sys (rest: what follows "/proc/sys") and /proc/config.gz (procfs_sys.c); *kind as procfs_open's. */
struct file_ops;
long procfs_sys_open(const char *rest, const struct file_ops **kind) __must_check;
long procfs_config_open(const struct file_ops **kind) __must_check;

/* /proc/PID/maps's line for v (procfs.c); /proc/PID/smaps or smaps_rollup, and pagemap (procfs_smaps.c). */
#include <stdio.h>
struct vma;
void procfs_maps_line(FILE *f, const struct task *p, const struct vma *v);
long procfs_smaps(struct task *p, bool rollup, char **out, size_t *len) __must_check;
long procfs_pagemap_open(struct task *t, struct task *p, const struct file_ops **kind) __must_check;
/* /proc/PID/ns (procfs_ns.c): is rest (after "/proc/PID") in it; open it (*kind as procfs_open's); readlink. */
struct file_ops;
bool procfs_ns_rest(const char *rest);
long procfs_ns_open(struct task *p, const char *rest, int flags, const struct file_ops **kind) __must_check;
long procfs_ns_readlink(const char *rest, char *buf, size_t size);
/* fs_kernel_ops.ns_pid (pvx/path.h). */
long procfs_ns_pid(int nr, bool tgid);

#endif

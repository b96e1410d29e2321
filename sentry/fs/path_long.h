/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Paths deeper than PATH_MAX (sentry/fs/path_long.c): Linux limits only the
 * string a call is given, so a relative path from a directory whose own
 * path is longer than 4096 bytes must resolve. The host cannot take such a
 * path from the root in one openat2; these walk it from the directory fd,
 * a component at a time, with the root's confinement.
 */
#ifndef PVX_PATH_LONG_H
#define PVX_PATH_LONG_H

#include <limits.h>
#include <stdbool.h>

/*
 * What a walk found. With handoff the walk reached a directory whose guest
 * path is short enough (the root, or one named after a ".." or an absolute
 * symlink): abs is the whole guest path left to resolve, for the ordinary
 * resolution from the root (it knows /proc and the /dev/fd aliases). Else
 * dir is an O_PATH fd of the directory the last component is in (the
 * caller closes it), last that component ("" when the path ended in a
 * directory itself, "." or ".."), slash whether slashes followed it, and
 * fd (path_long_lookup) the O_PATH fd of the object or -errno.
 */
struct long_walk {
	bool handoff;
	int dir, fd;
	bool slash;
	char last[NAME_MAX + 1];
	char abs[4096];
};

/*
 * Walk the directories of relative path from the host directory base
 * (a guest's cwd or dirfd): *w gets the directory and the last component
 * (the caller decides about it), or the handoff. -errno: ENOENT, ENOTDIR,
 * ELOOP (40 symlinks), ENAMETOOLONG (a component over NAME_MAX, or what is
 * left over 4095 bytes at the root), EXDEV (base is not inside the root).
 */
long path_long_parent(int base, const char *path, struct long_walk *w) __attribute__((warn_unused_result));
/*
 * path_long_parent, then the last component itself, followed when it is a
 * symlink and follow (or a slash ends the path): w->fd is its O_PATH fd,
 * or -ENOENT with w->dir and w->last where O_CREAT would make it.
 */
long path_long_lookup(int base, const char *path, bool follow, struct long_walk *w)
	__attribute__((warn_unused_result));
/*
 * The guest path of directory dir when the host cannot name it (its host
 * path, with the root's prefix, is over 4095 bytes) but it may fit in size:
 * each name found in its parent, up to the root. ENAMETOOLONG when it does
 * not fit, EXDEV when dir is not inside the root.
 */
long path_long_name(int dir, char *buf, size_t size) __attribute__((warn_unused_result));

#endif

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The directory cache (sentry/fs/dcache.c): guest directory path -> an
 * fd of that directory, so that a stat of "/a/b/name" is one statx of
 * "name" in "/a/b"'s fd instead of a walk of the whole path and a close.
 * Every answer made through it is checked afterwards (dcache_put): a
 * cached directory or any directory above it that was moved, removed,
 * chmod'ed or mounted over, by the guest or by anyone on the host, makes
 * the answer void and the cache empty.
 */
#ifndef PVX_FS_DCACHE_H
#define PVX_FS_DCACHE_H

#include <stdbool.h>

/*
 * Is the cache there to be asked (dcache_get)? Each call counts as a lookup
 * it could serve: it is made after PVX_DCACHE_AFTER of them (dcache.c). Asked
 * before the caller does any work of its own for the cache.
 */
bool dcache_on(void);

/*
 * A read-only fd of guest directory dir, with the cache locked: an absolute
 * path of plain names ("/" or "/a/b", no ".", "..", "//", trailing '/'),
 * none of them a symlink, the caller having excluded /proc, /sys and /dev.
 * Opened and cached on a miss, a name at a time from the deepest cached
 * directory above it. -1 (not locked): not cached and could not be (a
 * symlink on the way, a name missing, the cache off); the caller takes its
 * full lookup.
 */
int dcache_get(const char *dir);

/*
 * Unlock after dcache_get's fd was used. true: nothing that could change
 * which directory dir names (a rename, rmdir, attribute change of a cached
 * directory, a mount) happened before now, so a lookup made in the fd
 * stands as a lookup of dir's path made now. false: the cache was emptied,
 * the answer must not be given (the caller takes its full lookup).
 */
bool dcache_put(void);

#endif

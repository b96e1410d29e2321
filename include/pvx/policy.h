/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The file policy: the one check between a guest and a host file. It is made
 * on the object actually opened (an fstat of a host fd, usually an O_PATH fd
 * from the lookup), never on a name, and that very object is then opened
 * through the sentry's /proc/self/fd/N: nothing is looked up twice.
 */
#ifndef PVX_POLICY_H
#define PVX_POLICY_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

#include "pvx/common.h"

struct task;

/* O_TMPFILE without O_DIRECTORY (glibc's O_TMPFILE includes O_DIRECTORY). */
#define PVX_O_TMPFILE_BIT 020000000

/* Setuid and setgid bits never reach a host file (chmod, open, mkdir, mknod strip them). */
#define PVX_MODE_NOSUID(mode) ((mode) & ~(mode_t)(S_ISUID | S_ISGID))

/* Remember the terminals pvx was given on fd 0-2: the only ones a guest may open by name. */
void policy_init(void);

/*
 * May the guest have the object behind host fd fd (st: its fstat) open with
 * open flags flags? held is the guest's open flags on the fd being reopened
 * (/proc/PID/fd/N, /dev/stdin, execveat), -1 for an open by path.
 *
 *  - the host's /proc, /sys and kernel pseudo file systems: ENOENT, except
 *    /sys/devices/system/cpu/{online,possible,present} (read-only) and the
 *    directories above them (for lookups only: listing them is EACCES);
 *  - devices: null, zero, full, random, urandom and /dev/tty (pvx's own
 *    controlling terminal) may be opened; the pseudo-terminal pvx was given
 *    on its stdin/stdout/stderr too. Other terminals (/dev/console, ptmx,
 *    every other pty, virtual consoles, serial lines) do not exist (ENOENT);
 *    other devices are EACCES. An O_PATH open of a device is allowed (it
 *    gives no access), every later open of it meets this check again;
 *  - writing a regular file, O_TRUNC and O_TMPFILE: EROFS on a read-only
 *    root, unless a reopen is of an fd the guest already holds for writing;
 *    a file outside the root the guest holds read-only stays read-only.
 */
long policy_check(int fd, const struct stat *st, int flags, int held) __must_check;

/*
 * The object behind a host fd as the policy sees it: its stat, its mount
 * (the unique id: its file system type is asked once per mount,
 * sentry/fs/fs_kind.c) and what the lookup that found it proved.
 */
struct policy_obj {
	struct stat st;
	uint64_t mnt;	/* STATX_MNT_ID_UNIQUE of the fd, 0 unknown */
	/*
	 * Its guest path is not under /sys: set by a lookup of a path whose
	 * first component is not "sys", with no ".." and no symlink followed
	 * (RESOLVE_NO_SYMLINKS), so the path walked is the object's. Else the
	 * host is asked for the path (a readlink of /proc/self/fd/N).
	 */
	bool not_sys;
	/* A guest's statx answered by policy_stat's own host call (path_lookup_statx): asked with x_mask, x_sync. */
	struct statx *x;
	unsigned x_mask;
	int x_sync;
	bool x_done;	/* *x holds that answer */
};

/*
 * Fill o for host fd fd (one statx; not_sys false). With o->x, the guest's
 * statx is answered by the same call (o->x_done); o->x, x_mask and x_sync
 * are the caller's, the rest is filled here.
 */
long policy_stat(int fd, struct policy_obj *o) __must_check;

/*
 * After a lookup whose policy_stat answered a guest's statx (o->x_done, fd
 * the object's): make *o->x what the guest's own statx with mask gives
 * (the old mount id unless it asked for the unique one).
 */
long policy_statx_answer(int fd, const struct policy_obj *o, unsigned mask) __must_check;

/* policy_check of an object policy_stat (and perhaps its lookup) described. */
long policy_check_obj(int fd, const struct policy_obj *o, int flags, int held) __must_check;

/* The check for a directory on the way to a name (mkdir, unlink... in it): ENOENT when hidden. */
long policy_check_dir(int fd) __must_check;

/* policy_check_dir of a directory policy_stat (and perhaps its lookup: not_sys) described: no host call when its mount's type is known. */
long policy_check_dir_obj(int fd, const struct policy_obj *o) __must_check;

/*
 * Open the object behind host fd fd anew with the guest's open flags (mode
 * for O_TMPFILE) after policy_check; held as there. Returns a new host fd.
 * t: the guest task whose open this is, for a FIFO's wait with the sentry
 * lock dropped (pvx/open_block.h); NULL only where the object cannot wait
 * (the caller checked it is not a FIFO).
 */
long policy_reopen(struct task *t, int fd, int flags, int mode, int held) __must_check;
/* policy_reopen of an object already described by policy_stat (o is fd's, made just before). */
long policy_reopen_obj(struct task *t, int fd, const struct policy_obj *o, int flags, int mode,
		       int held) __must_check;

/* File systems that show the host (f_type): its processes, cgroups (every host pid), kernel internals. */
bool policy_hidden_fs(long type);

#endif

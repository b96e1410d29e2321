// SPDX-License-Identifier: GPL-2.0
/*
 * The file policy (include/pvx/policy.h): which host objects a guest may
 * open, and how. Every way a guest reaches a file ends here with a host fd
 * of the object itself: a path open (sentry/fs/path.c) looks the name up
 * with O_PATH (no side effects: no FIFO wait, no controlling tty, no tape
 * rewind), a reopen (/proc/PID/fd/N, /dev/fd/N, execveat) starts from the
 * fd the guest holds. The decision is made on fstat of that fd, and the
 * same object is then opened through /proc/self/fd/N, so a name swapped
 * between check and open (a rename race, another sandbox sharing a --rw
 * root) changes nothing.
 */
#include <fcntl.h>
#include <linux/magic.h>
#include <stdio.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <sys/vfs.h>

#include "pvx/hostcred.h"
#include "pvx/open_block.h"
#include "pvx/path.h"
#include "pvx/policy.h"
#include "sentry/fs/fs_kind.h"

#ifndef CONFIGFS_MAGIC
#define CONFIGFS_MAGIC 0x62656570
#endif
#ifndef FUSECTL_SUPER_MAGIC
#define FUSECTL_SUPER_MAGIC 0x65735543
#endif

/* The terminals (st_rdev) pvx was given on fd 0, 1 and 2. */
static dev_t given_tty[3];
static int nr_given_tty;

/* Terminal devices: virtual consoles and serial lines, tty/console/ptmx, Unix98 ptys. */
static bool is_terminal(dev_t rdev)
{
	unsigned ma = major(rdev);

	return ma == 4 || ma == 5 || (ma >= 136 && ma <= 143);
}

void policy_init(void)
{
	struct stat st;

	for (int fd = 0; fd < 3; fd++)
		if (fstat(fd, &st) == 0 && S_ISCHR(st.st_mode) && is_terminal(st.st_rdev) && major(st.st_rdev) != 5)
			given_tty[nr_given_tty++] = st.st_rdev;
}

/* Is rdev one of the terminals pvx was given (policy_init)? */
static bool given(dev_t rdev)
{
	for (int i = 0; i < nr_given_tty; i++)
		if (given_tty[i] == rdev)
			return true;
	return false;
}

enum dev_verdict { DEV_ALLOW, DEV_HIDE, DEV_DENY };

/*
 * null, zero, full, random, urandom; /dev/tty (5,0), which opens pvx's own
 * controlling terminal; the terminals pvx was given. Other terminals are
 * hidden (another user's pty, the console: reading them reads what is typed
 * there), every other device (disks, /dev/mem, /dev/kmsg...) is refused.
 */
static enum dev_verdict device_verdict(const struct stat *st)
{
	unsigned ma = major(st->st_rdev), mi = minor(st->st_rdev);

	if (S_ISBLK(st->st_mode))
		return DEV_DENY;
	if (ma == 1 && (mi == 3 || mi == 5 || mi == 7 || mi == 8 || mi == 9))
		return DEV_ALLOW;
	if (ma == 5 && mi == 0)
		return DEV_ALLOW;
	if (!is_terminal(st->st_rdev))
		return DEV_DENY;
	return given(st->st_rdev) ? DEV_ALLOW : DEV_HIDE;
}

/* See pvx/policy.h. */
bool policy_hidden_fs(long type)
{
	switch ((unsigned long)type) {
	case PROC_SUPER_MAGIC: case SYSFS_MAGIC: case CGROUP_SUPER_MAGIC: case CGROUP2_SUPER_MAGIC:
	case DEBUGFS_MAGIC: case TRACEFS_MAGIC: case SECURITYFS_MAGIC: case BPF_FS_MAGIC:
	case PSTOREFS_MAGIC: case EFIVARFS_MAGIC: case CONFIGFS_MAGIC: case FUSECTL_SUPER_MAGIC:
	case BINFMTFS_MAGIC: case NSFS_MAGIC:
		return true;
	}
	return false;
}

/* Is s one of the n strings of list? */
static bool in_list(const char *s, const char *const list[], size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(s, list[i]))
			return true;
	return false;
}

enum { SHOWN, SYS_FILE, SYS_DIR, HOST_PROC };

/*
 * Hidden objects: ENOENT; SYS_FILE for the /sys files programs read (the
 * number of CPUs); SYS_DIR for the directories above them; HOST_PROC for
 * a file of the host's /proc (procfs.c hands out a few, read-only);
 * SHOWN for everything else. Whatever lies under the guest's /sys or on a
 * pseudo file system of the host is hidden, whichever name led there (a
 * symlink, "..", a bind mount). The guest path is read back from the
 * host (path_of_fd) unless the lookup proved it is not under /sys (o).
 */
static long hidden(int fd, const struct policy_obj *o)
{
	static const char *const files[] = { "/sys/devices/system/cpu/online", "/sys/devices/system/cpu/possible",
					     "/sys/devices/system/cpu/present" };
	static const char *const dirs[] = { "/sys", "/sys/devices", "/sys/devices/system", "/sys/devices/system/cpu" };
	char path[PVX_PATH_MAX];
	unsigned long type = 0;
	bool sys = false;
	long r = fs_type_of(fd, o->mnt, &type);

	if (r < 0)
		return r;
	if (!o->not_sys && path_of_fd(fd, path, sizeof(path)) >= 0)
		sys = !strncmp(path, "/sys", 4) && (path[4] == '/' || !path[4]);
	if (!sys && !policy_hidden_fs((long)type))
		return SHOWN;
	if (sys && type == SYSFS_MAGIC && in_list(path, files, ARRAY_SIZE(files)))
		return SYS_FILE;
	if (sys && in_list(path, dirs, ARRAY_SIZE(dirs)))
		return SYS_DIR;
	return type == PROC_SUPER_MAGIC ? HOST_PROC : -ENOENT;
}

long policy_check_dir(int fd)
{
	struct policy_obj o = { .x = NULL };

	return policy_check_dir_obj(fd, &o);
}

long policy_check_dir_obj(int fd, const struct policy_obj *o)
{
	long r = hidden(fd, o);

	return r < 0 || r == HOST_PROC ? -ENOENT : 0;
}

/* Is the host file behind fd part of the guest's root (not a file pvx was handed from outside it)? */
static bool in_root(int fd)
{
	char path[PVX_PATH_MAX];

	return path_of_fd(fd, path, sizeof(path)) >= 0;
}

long policy_check(int fd, const struct stat *st, int flags, int held)
{
	struct policy_obj o = { .st = *st };

	return policy_check_obj(fd, &o, flags, held);
}

long policy_stat(int fd, struct policy_obj *o)
{
	o->not_sys = false;
	o->x_done = false;
	if (!o->x)
		return obj_stat(fd, &o->st, &o->mnt);
	long r = obj_statx(fd, o->x_mask, o->x_sync, o->x, &o->st, &o->mnt);
	o->x_done = r == 0;
	return r;
}

long policy_statx_answer(int fd, const struct policy_obj *o, unsigned mask)
{
	return statx_as_asked(fd, o->mnt, mask, o->x);
}

long policy_check_obj(int fd, const struct policy_obj *o, int flags, int held)
{
	const struct stat *st = &o->st;
	bool opath = flags & O_PATH, tmpfile = !opath && (flags & PVX_O_TMPFILE_BIT);
	bool writes = !opath && ((flags & O_ACCMODE) != O_RDONLY || (flags & O_TRUNC) || tmpfile);
	bool held_writable = held >= 0 && !(held & O_PATH) && (held & O_ACCMODE) != O_RDONLY;
	long h = hidden(fd, o);

	if (h < 0 || (h == HOST_PROC && (held < 0 || writes)))
		return -ENOENT;	/* a guest can only hold what procfs.c gave it, and reread it */
	if (h == SYS_DIR && !opath)
		return -EACCES;	/* the way to /sys/devices/system/cpu/online, not a listing of /sys */
	if (h == SYS_FILE && writes)
		return -EACCES;
	if (S_ISCHR(st->st_mode) || S_ISBLK(st->st_mode)) {
		enum dev_verdict v = device_verdict(st);
		if (v == DEV_HIDE)
			return -ENOENT;
		return v == DEV_DENY && !opath ? -EACCES : 0;
	}
	if (opath)
		return 0;
	if (S_ISLNK(st->st_mode))
		return -ELOOP;	/* O_NOFOLLOW: "the trailing component ... is a symbolic link" */
	if (tmpfile) {
		if (!S_ISDIR(st->st_mode))
			return -ENOTDIR;
		return sandbox.rw && (held < 0 || in_root(fd)) ? 0 : -EROFS;
	}
	if (S_ISDIR(st->st_mode))
		return writes || (flags & O_CREAT) ? -EISDIR : 0;
	if (!writes || S_ISFIFO(st->st_mode) || S_ISSOCK(st->st_mode) || held_writable)
		return 0;
	if (!sandbox.rw)
		return -EROFS;
	return held < 0 || in_root(fd) ? 0 : -EROFS;
}

long policy_reopen(struct task *t, int fd, int flags, int mode, int held)
{
	struct policy_obj o = { .x = NULL };
	long r = policy_stat(fd, &o);

	return r < 0 ? r : policy_reopen_obj(t, fd, &o, flags, mode, held);
}

long policy_reopen_obj(struct task *t, int fd, const struct policy_obj *o, int flags, int mode, int held)
{
	const struct stat st = o->st;
	char proc[64];

	if (flags & O_PATH)	/* open(2) ignores other flags with O_PATH */
		flags &= O_PATH | O_DIRECTORY | O_NOFOLLOW;
	long r = policy_check_obj(fd, o, flags & ~O_NOFOLLOW, held);
	if (r < 0)
		return r;
	if ((flags & O_DIRECTORY) && !S_ISDIR(st.st_mode))
		return -ENOTDIR;
	if (flags & PVX_O_TMPFILE_BIT)
		mode = PVX_MODE_NOSUID(mode) & 07777;
	else
		mode = 0;
	/* O_CREAT and O_EXCL were the lookup's business; the magic link itself must be followed. */
	flags &= ~(O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC);
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	flags |= O_CLOEXEC | (flags & O_PATH ? 0 : O_NOCTTY);
	/*
	 * The terminal pvx was given is the guest's already (it holds it as
	 * stdin...): reopening it is not nobody's to refuse (a pts is 0620,
	 * its user's) when the guest's file access is nobody's.
	 */
	/* A FIFO's open waits for its other end: for the guest task, with the sentry lock dropped. */
	if (t && S_ISFIFO(st.st_mode))
		return open_reopen(t, fd, flags);
	int nfd = S_ISCHR(st.st_mode) && given(st.st_rdev) ? open_privileged(proc, flags) : open(proc, flags, mode);
	return nfd < 0 ? neg_errno() : nfd;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * The directory cache (issue 16: "path calls at one host call"). A stat of
 * "/usr/include/linux/if.h" was an openat2 of the whole path inside the
 * root, a statx of what it found and a close: 2.9 us of host calls on the
 * development VM, against 1.1 us for a statx of "if.h" in an fd of
 * "/usr/include/linux". find(1) stats every name of a directory in turn,
 * so the directory's fd is worth keeping.
 *
 * Keeping a directory fd for a guest path is only right while that path
 * still names that directory. What can make it name another (or none):
 *  - a rename of the directory or of any directory above it;
 *  - its removal (a removed directory is empty and stays so: a lookup in it
 *    finds nothing, and the caller takes the full lookup on any error);
 *  - a mount on it or above it;
 *  - a change of a directory's mode above it (search permission: a walk of
 *    the whole path checks every directory, a lookup in the fd only the last).
 * By the guest (through the sentry) or by anyone on the host, sharing the
 * root or not. So every cached directory has a fanotify inode mark for
 * FAN_MOVE_SELF | FAN_DELETE_SELF | FAN_ATTRIB (no FAN_EVENT_ON_CHILD: only
 * the directory's own), and a directory is only cached when its parent is,
 * so every directory above a cached one is marked too. The kernel queues
 * those events in the renaming, removing or chmod-ing call itself, before
 * it returns; mount changes make /proc/self/mountinfo poll with POLLPRI.
 * After a lookup in a cached fd, dcache_put asks an epoll of both (one host
 * call, 0.17 us: a look at its ready list, no file is polled when nothing
 * happened). Nothing pending means no such change completed before the
 * lookup, so its answer is the one a walk of the path at that moment gives.
 * Anything pending empties the cache and the caller walks the path as before.
 * (On a VM where a getppid costs 1.0 us that call costs 1.1 us, 1.3 us of an
 * lstat's 8.2 in pvx, measured 2026-12-07. No cheaper check keeps the
 * guarantee: an io_uring poll's completion is posted by task work of the
 * thread that armed it, and a watcher thread's flag lags the event by a
 * wake-up; either could answer a lookup after a rename had returned.)
 * (fanotify rather than inotify: an inotify watch is added by path, here
 * /proc/self/fd/N, 10 us a directory on the development VM against 3 us for
 * a mark on the fd; and inotify's IN_ATTRIB also reports every child's.)
 *
 * A directory enters the cache by a one-name openat2 from its cached parent
 * (RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS: a symlink on
 * the way is ELOOP, the caller's full lookup follows it), the policy's check
 * of a directory on the way to a name, a mark, and a statx of the name in
 * the parent after the mark: if it no longer gives the same directory, it
 * moved before the mark could see it, and it is not cached. The fd is a
 * read-only open of the directory (a mark needs one; reading a directory
 * runs no driver), so a directory the sentry may not read is not cached.
 * Only directories on the root's own mount are: an fd keeps its mount busy,
 * and the host's umount of a file system under the root must not fail
 * because a sandbox once looked into it (the root's mount is held anyway).
 *
 * Limits: CACHE_MAX directories (fds) and MARK_MAX marks. Past CACHE_MAX
 * every fd is closed at once but the marks stay, so the directories above
 * any directory cached later are still marked; past MARK_MAX the marks go
 * too (FAN_MARK_FLUSH). No fanotify (a kernel without it, max_user_groups
 * reached) or no /proc/self/mountinfo: no cache, every lookup is a full
 * one; a directory that cannot be marked (max_user_marks, a file system
 * without file handles) is not cached.
 */
#include <fcntl.h>
#include <linux/openat2.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/fanotify.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "pvx/policy.h"
#include "pvx/sandbox.h"
#include "sentry/fs/dcache.h"
#include "sentry/fs/fs_kind.h"

#define CACHE_MAX 128	/* directories with an fd (the sentry's fds are the guests' too) */
#define SLOTS 256	/* open addressing, at most half full */
#define MARK_MAX 4096	/* marks added since the last flush (max_user_marks is per user, 8192 at least) */
#define MARK_MASK (FAN_MOVE_SELF | FAN_DELETE_SELF | FAN_ATTRIB | FAN_ONDIR)

struct entry {
	char *path;	/* NULL: free slot */
	int fd;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct entry table[SLOTS];
static int entries, marks;
static int notify_fd = -1, mounts_fd = -1, epoll_fd = -1;	/* epoll_fd: both, to be asked in one cheap call */
static enum { UNINIT, ON, OFF } state;
static unsigned long asked;	/* lookups asked for before the cache was made (start_after) */
static uint64_t root_mnt;	/* the unique id of the root's mount: only directories on it are cached */

static size_t slot_of(const char *path, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ull;	/* FNV-1a */

	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)path[i]) * 0x100000001b3ull;
	return (size_t)(h % SLOTS);
}

/* The cached fd of the first len bytes of path, or -1. */
static int find(const char *path, size_t len)
{
	for (size_t s = slot_of(path, len);; s = (s + 1) % SLOTS) {
		if (!table[s].path)
			return -1;
		if (!strncmp(table[s].path, path, len) && !table[s].path[len])
			return table[s].fd;
	}
}

static bool insert(const char *path, size_t len, int fd)
{
	char *copy = strndup(path, len);
	size_t s;

	if (!copy)
		return false;
	for (s = slot_of(path, len); table[s].path; s = (s + 1) % SLOTS)
		;
	table[s] = (struct entry){ .path = copy, .fd = fd };
	entries++;
	return true;
}

/* Close every cached fd. The marks stay: the directories above any cached later are still marked. */
static void drop_entries(void)
{
	for (size_t s = 0; s < SLOTS; s++)
		if (table[s].path) {
			close(table[s].fd);
			free(table[s].path);
			table[s].path = NULL;
		}
	entries = 0;
}

/* Drop every entry and every mark, and the events queued so far. */
static void flush(void)
{
	char buf[4096] __attribute__((aligned(8)));

	drop_entries();
	marks = 0;
	if (fanotify_mark(notify_fd, FAN_MARK_FLUSH, 0, AT_FDCWD, NULL) < 0)
		state = OFF;
	while (read(notify_fd, buf, sizeof(buf)) > 0)
		;
}

static void init(void)
{
	struct epoll_event in = { .events = EPOLLIN }, pri = { .events = EPOLLPRI };
	struct stat st;

	if (obj_stat(sandbox.rootfd, &st, &root_mnt) < 0 || !root_mnt) {
		state = OFF;	/* no STATX_MNT_ID_UNIQUE (Linux 6.8): no mount to tell, and stat_in never answers anyway */
		return;
	}
	/* FAN_REPORT_FID: what a user without CAP_SYS_ADMIN may have (Linux 5.13), and all that is needed. */
	notify_fd = fanotify_init(FAN_CLASS_NOTIF | FAN_REPORT_FID | FAN_NONBLOCK | FAN_CLOEXEC, O_RDONLY);
	mounts_fd = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);
	epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	in.data.fd = notify_fd;
	pri.data.fd = mounts_fd;
	state = notify_fd >= 0 && mounts_fd >= 0 && epoll_fd >= 0 && !epoll_ctl(epoll_fd, EPOLL_CTL_ADD, notify_fd, &in) &&
			!epoll_ctl(epoll_fd, EPOLL_CTL_ADD, mounts_fd, &pri) ? ON : OFF;
	if (state == OFF)
		for (int *fd = (int[]){ notify_fd, mounts_fd, epoll_fd }, i = 0; i < 3; i++)
			if (fd[i] >= 0)
				close(fd[i]);
}

/*
 * Did a cached directory (or one above it) change, or a mount, since the
 * last look? Every event counts: the marks report only their directory's
 * own (moved, removed, attributes), and a lost queue is FAN_Q_OVERFLOW. A
 * change empties the cache.
 */
static bool changed(void)
{
	struct epoll_event ev[2];

	if (epoll_wait(epoll_fd, ev, 2, 0) == 0)	/* a look at the ready list: no file is polled when nothing happened */
		return false;
	flush();
	return true;
}

/*
 * Open name (len bytes, one plain name) in the cached directory parent
 * and cache it as path[0..plen): see the top of this file. Its fd or -1.
 */
static int add(int parent, const char *name, size_t len, const char *path, size_t plen)
{
	char one[256];
	struct open_how how = {
		.flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC,
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	struct policy_obj o = { .x = NULL, .not_sys = true };	/* the caller excluded /sys; no symlink, no ".." */
	struct statx x;
	struct stat again;
	uint64_t mnt;

	if (len >= sizeof(one))
		return -1;
	memcpy(one, name, len);
	one[len] = 0;
	int fd = (int)syscall(SYS_openat2, parent, one, &how, sizeof(how));
	if (fd < 0)
		return -1;
	if (obj_stat(fd, &o.st, &o.mnt) < 0 || o.mnt != root_mnt || policy_check_dir_obj(fd, &o) < 0 ||
	    fanotify_mark(notify_fd, FAN_MARK_ADD, MARK_MASK, fd, NULL) < 0)
		goto fail;
	marks++;
	/* Still that directory under that name, now that it is marked? */
	if (name_statx(parent, one, STATX_BASIC_STATS, 0, &x, &again, &mnt) < 0 || again.st_dev != o.st.st_dev ||
	    again.st_ino != o.st.st_ino)
		goto fail;
	if (!insert(path, plen, fd))
		goto fail;
	return fd;
fail:
	close(fd);
	return -1;
}

/*
 * The fanotify group is made only after this many lookups it could have
 * served (PVX_DCACHE_AFTER, default START_AFTER): when it goes, at exit,
 * the kernel waits for an SRCU grace period for its marks
 * (fsnotify_destroy_group -> fsnotify_wait_marks_destroyed), 3 to 15 ms
 * here; "pvx run busybox true", whose one stat made it, went from 3.2 ms
 * to 17 ms. A stat through the cache saves ~1.7 us, so a run pays that
 * back after a few thousand of them, and short runs never pay it.
 */
#define START_AFTER 4096

static unsigned long start_after(void)
{
	static long n = -1;

	if (n < 0) {
		const char *env = getenv("PVX_DCACHE_AFTER");
		char *end;
		n = env && *env ? strtol(env, &end, 10) : START_AFTER;
		if (n < 0 || (env && *env && *end))
			n = START_AFTER;
	}
	return (unsigned long)n;
}

/* See sentry/fs/dcache.h. */
bool dcache_on(void)
{
	bool on;

	pthread_mutex_lock(&lock);
	if (state == UNINIT && ++asked > start_after())
		init();
	on = state == ON;
	pthread_mutex_unlock(&lock);
	return on;
}

/* See sentry/fs/dcache.h. */
int dcache_get(const char *dir)
{
	size_t len = strlen(dir), have, depth = 0;
	int fd;

	pthread_mutex_lock(&lock);
	if (state != ON)
		goto none;
	if (len == 1)
		return sandbox.rootfd;	/* "/" */
	if ((fd = find(dir, len)) >= 0)
		return fd;
	/* The deepest cached directory above dir ("/" at worst), and how many names are left below it. */
	for (have = len; have > 0;) {
		depth++;
		while (dir[--have] != '/')
			;
		if (!have || (fd = find(dir, have)) >= 0)
			break;
	}
	if (!have)
		fd = sandbox.rootfd;
	if (entries + depth > CACHE_MAX || marks + depth > MARK_MAX) {
		if (marks + depth > MARK_MAX)
			flush();
		else
			drop_entries();	/* every directory above goes too: from the root again */
		for (have = depth = 0; have < len; have++)
			depth += dir[have] == '/';
		if (state == OFF || depth > CACHE_MAX)
			goto none;
		have = 0;
		fd = sandbox.rootfd;
	}
	while (have < len) {
		size_t start = have + 1, end = start;
		while (end < len && dir[end] != '/')
			end++;
		if ((fd = add(fd, dir + start, end - start, dir, end)) < 0)
			goto none;
		have = end;
	}
	return fd;
none:
	pthread_mutex_unlock(&lock);
	return -1;
}

/* See sentry/fs/dcache.h. */
bool dcache_put(void)
{
	bool ok = !changed();

	pthread_mutex_unlock(&lock);
	return ok;
}

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
 * lstat's 8.2 in pvx, measured 2026-12-07.) So a sentry thread that looks
 * up often asks a ring of its own first, in memory, with no host call: see
 * "The per-thread ring" below.
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
#include <linux/io_uring.h>
#include <linux/openat2.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/fanotify.h>
#include <sys/mman.h>
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

/*
 * The per-thread ring. The epoll_wait of changed() is a host call per
 * lookup; a thread that made RING_AFTER lookups (PVX_DCACHE_RING_AFTER)
 * gets an io_uring of its own instead, with two multishot polls: the
 * fanotify group's queue (POLLIN) and the ring's own open of
 * /proc/self/mountinfo (POLLPRI, each open file keeps its own "seen" mark).
 * Why an empty completion queue, read from memory after the lookup, says
 * what the epoll_wait said (Linux 6.12, io_uring/poll.c, kernel/task_work.c):
 *  - the renaming, removing, chmod-ing or mounting call queues its event
 *    and wakes the file's wait queue before it returns; io_poll_wake then
 *    queues task work on the thread that armed the poll, this one, and sets
 *    its TIF_NOTIFY_SIGNAL (IORING_SETUP_COOP_TASKRUN: without an IPI);
 *  - the lookup is a host call (statx) of this thread, and its return to
 *    user space runs pending task work first: the poll's vfs_poll, and a
 *    completion posted to the ring.
 * So a change that completed before the lookup began has its completion
 * in the ring when the lookup returns. The ring is trusted only while both
 * polls are armed: a completion without IORING_CQE_F_MORE (the poll ended)
 * or a completion queue that overflowed sends the thread to the epoll_wait,
 * after the ring is emptied and the poll armed again; the check then covers
 * what the ring missed. Another thread's flush can take an event before this
 * one's task work polls (nothing is posted then): that flush came first,
 * under the lock, and the lookup was made after it.
 * Not for every thread: a ring costs two fds (the sentry's fds are the
 * guests' too) and ~4 host calls to make, so at most RING_MAX live at once,
 * each freed when its thread ends; without one, or if io_uring is not
 * there (kernel.io_uring_disabled, a kernel before 5.19), the epoll_wait.
 * A side effect to know: the task work of a posting wakes this thread from
 * a blocked host call (restarted by the kernel, or EINTR that task_block
 * takes as a kick with nothing to deliver); only changes to cached
 * directories and mounts post.
 */
#define RING_AFTER 256
#define RING_MAX 16
#define RING_CQ 16
enum { POLL_NOTIFY, POLL_MOUNTS, POLLS };

struct ring {
	int fd, mounts;
	unsigned armed;	/* bit per poll */
	unsigned *sq_tail, *sq_flags, *sq_array, sq_mask, *cq_head, *cq_tail, cq_mask;
	struct io_uring_sqe *sqes;
	struct io_uring_cqe *cqes;
	void *rings_map, *sqes_map;
	size_t rings_len, sqes_len;
};

static pthread_key_t ring_key;
static bool ring_key_made;
static int rings_live;	/* atomic */
static __thread struct ring *my_ring;
static __thread unsigned long my_lookups;
static __thread bool my_ring_failed;

/* The count in environment variable name, or dflt when unset, empty or not a count. */
static unsigned long env_count(const char *name, long dflt)
{
	const char *env = getenv(name);
	char *end;
	long n = env && *env ? strtol(env, &end, 10) : dflt;

	return (unsigned long)(n < 0 || (env && *env && *end) ? dflt : n);
}

static unsigned long ring_after(void)
{
	static long n = -1;

	if (n < 0)
		n = (long)env_count("PVX_DCACHE_RING_AFTER", RING_AFTER);
	return (unsigned long)n;
}

static int ring_enter(int fd, unsigned submit, unsigned flags)
{
	return (int)syscall(SYS_io_uring_enter, fd, submit, 0, flags, NULL, 0);
}

/* Arm the polls that are not: true if both are. */
static bool ring_arm(struct ring *r)
{
	unsigned tail = *r->sq_tail, n = 0;

	for (unsigned which = 0; which < POLLS; which++) {
		if (r->armed & (1u << which))
			continue;
		unsigned i = tail & r->sq_mask;
		struct io_uring_sqe *e = &r->sqes[i];
		memset(e, 0, sizeof(*e));
		e->opcode = IORING_OP_POLL_ADD;
		e->fd = which == POLL_NOTIFY ? notify_fd : r->mounts;
		e->poll32_events = which == POLL_NOTIFY ? POLLIN : POLLPRI | POLLERR;
		e->len = IORING_POLL_ADD_MULTI;
		e->user_data = which;
		r->sq_array[i] = i;
		tail++, n++;
	}
	if (!n)
		return true;
	__atomic_store_n(r->sq_tail, tail, __ATOMIC_RELEASE);
	if (ring_enter(r->fd, n, 0) != (int)n)
		return false;
	r->armed = (1u << POLLS) - 1;
	return true;
}

static void ring_free(void *p)
{
	struct ring *r = p;

	if (!r)
		return;
	if (r->rings_map)
		munmap(r->rings_map, r->rings_len);
	if (r->sqes_map)
		munmap(r->sqes_map, r->sqes_len);
	if (r->fd >= 0)
		close(r->fd);
	if (r->mounts >= 0)
		close(r->mounts);
	free(r);
	__atomic_fetch_sub(&rings_live, 1, __ATOMIC_RELAXED);
}

/* A ring for this thread, armed; NULL: none. */
static struct ring *ring_make(void)
{
	struct io_uring_params p = { .flags = IORING_SETUP_COOP_TASKRUN | IORING_SETUP_CQSIZE, .cq_entries = RING_CQ };
	struct ring *r = calloc(1, sizeof(*r));

	if (!r || !ring_key_made)
		goto none;
	if (__atomic_fetch_add(&rings_live, 1, __ATOMIC_RELAXED) >= RING_MAX) {
		__atomic_fetch_sub(&rings_live, 1, __ATOMIC_RELAXED);
		goto none;
	}
	r->fd = (int)syscall(SYS_io_uring_setup, POLLS, &p);
	r->mounts = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);
	if (r->fd < 0 || r->mounts < 0 || !(p.features & IORING_FEAT_SINGLE_MMAP) || !(p.features & IORING_FEAT_NODROP))
		goto fail;
	size_t sq_len = p.sq_off.array + p.sq_entries * sizeof(unsigned);
	size_t cq_len = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
	r->rings_len = sq_len > cq_len ? sq_len : cq_len;
	r->sqes_len = p.sq_entries * sizeof(struct io_uring_sqe);
	r->rings_map = mmap(NULL, r->rings_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, r->fd, IORING_OFF_SQ_RING);
	r->sqes_map = mmap(NULL, r->sqes_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, r->fd, IORING_OFF_SQES);
	if (r->rings_map == MAP_FAILED || r->sqes_map == MAP_FAILED) {
		r->rings_map = r->rings_map == MAP_FAILED ? NULL : r->rings_map;
		r->sqes_map = r->sqes_map == MAP_FAILED ? NULL : r->sqes_map;
		goto fail;
	}
	char *m = r->rings_map;
	r->sq_tail = (unsigned *)(m + p.sq_off.tail);
	r->sq_flags = (unsigned *)(m + p.sq_off.flags);
	r->sq_array = (unsigned *)(m + p.sq_off.array);
	r->sq_mask = *(unsigned *)(m + p.sq_off.ring_mask);
	r->cq_head = (unsigned *)(m + p.cq_off.head);
	r->cq_tail = (unsigned *)(m + p.cq_off.tail);
	r->cq_mask = *(unsigned *)(m + p.cq_off.ring_mask);
	r->cqes = (struct io_uring_cqe *)(m + p.cq_off.cqes);
	r->sqes = r->sqes_map;
	if (!ring_arm(r) || pthread_setspecific(ring_key, r))	/* freed when the thread ends */
		goto fail;
	return r;
fail:
	ring_free(r);
	return NULL;
none:
	free(r);
	return NULL;
}

/*
 * Nothing posted, both polls armed, no overflow: no change before this
 * thread's last host call. Else the ring is emptied and armed again, and
 * false: the caller asks the epoll.
 */
static bool ring_quiet(struct ring *r)
{
	unsigned head = *r->cq_head;

	if (r->armed == (1u << POLLS) - 1 && __atomic_load_n(r->cq_tail, __ATOMIC_ACQUIRE) == head &&
	    !(__atomic_load_n(r->sq_flags, __ATOMIC_ACQUIRE) & IORING_SQ_CQ_OVERFLOW))
		return true;
	for (int round = 0; round < 2; round++) {
		for (unsigned tail = __atomic_load_n(r->cq_tail, __ATOMIC_ACQUIRE); head != tail; head++) {
			const struct io_uring_cqe *c = &r->cqes[head & r->cq_mask];
			if (c->user_data < POLLS && !(c->flags & IORING_CQE_F_MORE))
				r->armed &= ~(1u << c->user_data);
		}
		__atomic_store_n(r->cq_head, head, __ATOMIC_RELEASE);
		if (!(__atomic_load_n(r->sq_flags, __ATOMIC_ACQUIRE) & IORING_SQ_CQ_OVERFLOW))
			break;
		ring_enter(r->fd, 0, IORING_ENTER_GETEVENTS);	/* moves the overflowed completions into the ring */
	}
	if (!ring_arm(r))
		r->armed = 0;	/* changed() gives it up */
	return false;
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
	ring_key_made = state == ON && !pthread_key_create(&ring_key, ring_free);
	if (state == OFF)
		for (int *fd = (int[]){ notify_fd, mounts_fd, epoll_fd }, i = 0; i < 3; i++)
			if (fd[i] >= 0)
				close(fd[i]);
}

/*
 * Did a cached directory (or one above it) change, or a mount, before now
 * (this thread's lookup)? Every event counts: the marks report only their
 * directory's own (moved, removed, attributes), and a lost queue is
 * FAN_Q_OVERFLOW. A change empties the cache. This thread's ring answers
 * when it can; one made now cannot vouch for the lookup made before it.
 */
static bool changed(void)
{
	struct epoll_event ev[2];

	if (my_ring && ring_quiet(my_ring))
		return false;
	if (my_ring && !my_ring->armed) {
		pthread_setspecific(ring_key, NULL);
		ring_free(my_ring);
		my_ring = NULL;
		my_ring_failed = true;
	}
	if (!my_ring && !my_ring_failed && ++my_lookups > ring_after())
		my_ring_failed = !(my_ring = ring_make());
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

	if (n < 0)
		n = (long)env_count("PVX_DCACHE_AFTER", START_AFTER);
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

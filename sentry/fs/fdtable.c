// SPDX-License-Identifier: GPL-2.0
/*
 * The guest's fd table: guest fd numbers index struct file pointers; a
 * struct file owns one host fd and is shared by dup()ed guest fds, like an
 * open file description. Guest fd numbers are never host fd numbers.
 */
#include <fcntl.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>

#include "pvx/events.h"
#include "pvx/file.h"
#include "pvx/log.h"
#include "pvx/mm.h"
#include "pvx/policy.h"
#include "pvx/sandbox.h"
#include "pvx/task.h"
#include "pvx/stub_layout.h"
#include "sentry/platform/platform.h"

/* See pvx/file.h. */
/* Every open file of the sandbox (under the sentry lock): leases count the opens of an object. */
static struct file *all_files;

struct file *file_new(int host_fd, int flags, const struct file_ops *ops)
{
	struct file *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	f->refs = 1;
	f->host_fd = host_fd;
	f->flags = flags;
	f->ops = ops;
	f->all_next = all_files;
	if (all_files)
		all_files->all_prev = f;
	all_files = f;
	return f;
}

struct file *file_next(struct file *prev)
{
	return prev ? prev->all_next : all_files;
}

struct file *file_get(struct file *f)
{
	f->refs++;
	return f;
}

void file_put(struct file *f)
{
	if (!f || --f->refs > 0)
		return;
	if (f->epoll_regs)
		epoll_file_gone(f);	/* Linux's eventpoll_release: out of every epoll, before its host fd closes */
	if (f->leased)
		lease_file_gone(f);	/* locks_remove_file: its lease goes with it, its breakers go on */
	if (f->async_counted)
		file_async_files--;	/* pipe writes stop looking for O_ASYNC readers once none is left */
	if (f->all_prev)
		f->all_prev->all_next = f->all_next;
	else
		all_files = f->all_next;
	if (f->all_next)
		f->all_next->all_prev = f->all_prev;
	f->ops->release(f);
	free(f);
}

struct file *fd_lookup(struct fdtable *t, int fd)
{
	if (fd < 0 || (unsigned)fd >= t->size)
		return NULL;
	return t->fds[fd].file;
}

/* Room for fd numbers up to need - 1: the array doubles (64 at least), charged to the sandbox's memory bound. */
static long fd_expand(struct fdtable *t, unsigned need)
{
	unsigned size = t->size ? t->size : 64;

	while (size < need)
		size *= 2;
	size = MIN(size, PVX_NR_OPEN);
	if (size <= t->size)
		return 0;
	uint64_t more = (uint64_t)(size - t->size) * sizeof(*t->fds);
	if (mm_charge(more) < 0)
		return -ENOMEM;
	struct fd_entry *fds = realloc(t->fds, (size_t)size * sizeof(*fds));
	if (!fds) {
		mm_uncharge(more);
		return -ENOMEM;
	}
	memset(fds + t->size, 0, (size_t)(size - t->size) * sizeof(*fds));
	t->fds = fds;
	t->size = size;
	return 0;
}

/*
 * Passthrough: see struct fdtable. Slot fd changes: the stub stops serving
 * it and its dup is closed before the guest call that changed it returns,
 * by the calling thread's context (a task of pt_as's mm: the table is that
 * mm's alone while any bit is set).
 */
#define PT_BIT(fd) (1UL << ((unsigned)(fd) % 64))

bool fd_pt_is_on(const struct fdtable *t, int fd)
{
	return fd >= 0 && fd < STUB_PT_MAX && (t->pt_on[fd / 64] & PT_BIT(fd));
}

static void pt_drop(struct fdtable *t, int fd)
{
	if (fd < 0 || fd >= STUB_PT_MAX || !(t->pt_dup[fd / 64] & PT_BIT(fd)))
		return;
	t->pt_on[fd / 64] &= ~PT_BIT(fd);
	t->pt_dup[fd / 64] &= ~PT_BIT(fd);
	struct addr_space *as = t->pt_as;
	if (as && as->ops->as_pt_drop)
		as->ops->as_pt_drop(as, fd, ctx_self(as) != NULL);
}

/* A pipe's write end (not O_RDWR): the stub serves its small writes. */
static bool pt_pipe_write_end(const struct file *f)
{
	return f->ops == &pipe_file_ops && (f->flags & O_ACCMODE) == O_WRONLY;
}

/*
 * A pipe's stub dup is not a dup: it is a second open of the same pipe,
 * O_NONBLOCK, read-only (or write-only for a write end), so that a call
 * the stub makes never waits (EAGAIN sends it to the sentry, which waits
 * as the guest's flags say) and a guest that jumps to the passthrough site
 * with it cannot make its thread sleep where no signal reaches it. Opening
 * /proc/self/fd/N of a pipe is fifo_open() on its inode: one more reader
 * (writer) while the guest holds that end anyway, gone with the slot
 * (pt_drop closes it before the guest's close returns, so writers see
 * EPIPE, and readers EOF, when Linux's would). A write end with no reader
 * left cannot be opened (ENXIO): no passthrough then.
 */
static int pipe_reopen_nonblock(struct file *f)
{
	char path[40];
	struct stat a, b;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", f->host_fd);
	int fd = open(path, (pt_pipe_write_end(f) ? O_WRONLY : O_RDONLY) | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return neg_errno();
	if (fstat(fd, &a) < 0 || fstat(f->host_fd, &b) < 0 || !S_ISFIFO(a.st_mode) || a.st_ino != b.st_ino ||
	    a.st_dev != b.st_dev) {
		close(fd);
		return -EIO;
	}
	return fd;
}

long fd_pt_install(struct fdtable *t, struct addr_space *as, int fd, struct file *f)
{
	if (fd < 0 || fd >= STUB_PT_MAX || !as->ops->as_pt_install || fd_lookup(t, fd) != f)
		return -EINVAL;
	if (t->pt_as != as)
		fd_pt_off(t, as);	/* (nothing is on: an exec or unshare ended the last) */
	t->pt_as = as;
	int hfd = f->host_fd;
	if (f->ops == &pipe_file_ops && (hfd = pipe_reopen_nonblock(f)) < 0)
		return hfd;
	long r = as->ops->as_pt_install(as, fd, hfd, pt_pipe_write_end(f));
	if (hfd != f->host_fd)
		close(hfd);
	if (r < 0) {
		t->pt_on[fd / 64] &= ~PT_BIT(fd);	/* as_pt_install left nothing of fd's */
		t->pt_dup[fd / 64] &= ~PT_BIT(fd);
		return r;
	}
	t->pt_on[fd / 64] |= PT_BIT(fd);
	t->pt_dup[fd / 64] |= PT_BIT(fd);
	return 0;
}

/*
 * Every fd of t off and its dup closed, before the table stops being its
 * mm's only one (clone, unshare, exec); as is the caller's address space.
 * A table last used in another address space only forgets its bits: that
 * stub is no longer this table's (its mm is gone or was left).
 */
void fd_pt_off(struct fdtable *t, struct addr_space *as)
{
	if (t->pt_as == as)
		for (int fd = 0; fd < STUB_PT_MAX; fd++)
			pt_drop(t, fd);
	memset(t->pt_on, 0, sizeof(t->pt_on));
	memset(t->pt_dup, 0, sizeof(t->pt_dup));
	t->pt_as = NULL;
}

/*
 * The stub stops serving t's fds (a tracer attached: every syscall must
 * reach the sentry); the dups stay, still closed with their slots. Run by
 * any thread: no stub command.
 */
void fd_pt_pause(struct fdtable *t)
{
	for (int fd = 0; fd < STUB_PT_MAX; fd++)
		if (fd_pt_is_on(t, fd)) {
			t->pt_on[fd / 64] &= ~PT_BIT(fd);
			if (t->pt_as && t->pt_as->ops->as_pt_drop)
				t->pt_as->ops->as_pt_drop(t->pt_as, fd, false);
		}
}

/* Install f at fd (dup2's newfd): below PVX_NR_OPEN; the caller holds it to RLIMIT_NOFILE where Linux does. */
long fd_install_at(struct fdtable *t, int fd, struct file *f, bool cloexec)
{
	if (fd < 0 || (unsigned)fd >= PVX_NR_OPEN)
		return -EBADF;
	if ((unsigned)fd >= t->size) {
		long r = fd_expand(t, (unsigned)fd + 1);
		if (r < 0)
			return r;
	}
	struct file *old = t->fds[fd].file;
	if (old)
		pt_drop(t, fd);
	t->fds[fd].file = file_get(f);
	t->fds[fd].cloexec = cloexec;
	if (old)
		plock_closed(t, old);
	if (old && dnotify_records)
		dnotify_closed(t, old);
	file_put(old);
	return fd;
}

/*
 * The lowest free fd >= min_fd below RLIMIT_NOFILE, as open(2) and F_DUPFD
 * promise. The search starts at next_fd, as Linux's alloc_fd does, so a
 * process with many fds open does not rescan them all on every open.
 */
long fd_install(struct fdtable *t, struct file *f, bool cloexec, int min_fd)
{
	unsigned limit = MIN(t->nofile, PVX_NR_OPEN);

	if (min_fd < 0)
		return -EINVAL;
	if ((unsigned)min_fd >= limit)
		return -EINVAL;
	unsigned fd = MAX((unsigned)min_fd, t->next_fd);
	while (fd < t->size && fd < limit && t->fds[fd].file)
		fd++;
	if (fd >= limit)
		return -EMFILE;
	long r = fd_install_at(t, (int)fd, f, cloexec);
	if (r >= 0 && (unsigned)min_fd <= t->next_fd)
		t->next_fd = fd + 1;
	return r;
}

long fd_close(struct fdtable *t, int fd)
{
	struct file *f = fd_lookup(t, fd);

	if (!f)
		return -EBADF;
	pt_drop(t, fd);
	t->fds[fd].file = NULL;
	t->fds[fd].cloexec = false;
	t->next_fd = MIN(t->next_fd, (unsigned)fd);
	plock_closed(t, f);
	if (dnotify_records)
		dnotify_closed(t, f);
	file_put(f);
	return 0;
}

/* A process's first fd table, one user's: empty, new fds below nofile (its RLIMIT_NOFILE). */
struct fdtable *fdtable_new(unsigned nofile)
{
	struct fdtable *t = calloc(1, sizeof(*t));

	if (t) {
		t->nofile = nofile;
		t->users = 1;
	}
	return t;
}

/* fork without CLONE_FILES: the same files at the same numbers (NULL when out of memory). */
struct fdtable *fdtable_dup(const struct fdtable *src)
{
	struct fdtable *t = fdtable_new(src->nofile);
	unsigned used = src->size;

	while (used && !src->fds[used - 1].file)
		used--;
	if (!t || (used && fd_expand(t, used) < 0)) {
		free(t);
		return NULL;
	}
	for (unsigned fd = 0; fd < used; fd++)
		if (src->fds[fd].file)
			t->fds[fd] = (struct fd_entry){ file_get(src->fds[fd].file), src->fds[fd].cloexec };
	t->next_fd = src->next_fd;
	return t;
}

/* The process is done with its fds: every file closed (its record locks first), the table freed. */
void fdtable_release(struct fdtable *t)
{
	/* Its stub, if any, goes with the last task of its mm (the table was that mm's alone). */
	memset(t->pt_on, 0, sizeof(t->pt_on));
	memset(t->pt_dup, 0, sizeof(t->pt_dup));
	t->pt_as = NULL;
	plock_release_all(t);
	for (unsigned fd = 0; fd < t->size; fd++) {
		if (dnotify_records && t->fds[fd].file)
			dnotify_closed(t, t->fds[fd].file);
		file_put(t->fds[fd].file);
		t->fds[fd].file = NULL;
	}
	mm_uncharge((uint64_t)t->size * sizeof(*t->fds));
	free(t->fds);
	t->fds = NULL;
	t->size = t->next_fd = 0;
}
/*
 * Passthrough (sentry/platform/seccomp_passthrough.md): from the PT_AFTERth
 * read(2) or pread64(2) of an open file on, the stub reads it itself, when
 * the file is a regular host file open for reading, outside the kernel's
 * synthetic file systems, or a pipe's read end (pipe_reopen_nonblock);
 * from the PT_AFTERth write(2) on, the small writes of a pipe's write end
 * while no file has O_ASYNC; without O_DIRECT in every case, and the caller's table and mm
 * are each other's only ones (one_table(t), asked last: every holder of the table is a
 * thread of t's process and every thread of it holds this table; and one
 * process in the mm), nobody traces its calls
 * (ptrace, --strace) and no dnotify watch wants to see reads.
 * PVX_PASSTHROUGH=0 turns it off.
 */
#define PT_AFTER 4

static bool pt_enabled(void)
{
	static int on = -1;

	if (on < 0) {
		const char *e = getenv("PVX_PASSTHROUGH");
		on = !(e && !strcmp(e, "0"));
	}
	return on;
}

/* Is f's host file a pipe, or a regular file outside the file systems that show the host and devpts? (asked once per open file) */
static bool pt_file_ok(struct file *f)
{
	struct stat st;
	struct statfs sfs;

	if (f->flags & (O_PATH | O_DIRECT))
		return false;
	if (f->ops == &pipe_file_ops)
		return fstat(f->host_fd, &st) == 0 && S_ISFIFO(st.st_mode);
	if ((f->flags & O_ACCMODE) == O_WRONLY)
		return false;
	return f->ops->passthrough && fstat(f->host_fd, &st) == 0 && S_ISREG(st.st_mode) &&
	       fstatfs(f->host_fd, &sfs) == 0 && !policy_hidden_fs((long)sfs.f_type) &&
	       sfs.f_type != DEVPTS_SUPER_MAGIC;
}

void fd_pt_consider(struct task *t, int fd, struct file *f, bool (*one_table)(struct task *t), bool write)
{
	struct addr_space *as = t->proc->as;

	if (!f || f->pt_no || fd >= STUB_PT_MAX || fd_pt_is_on(t->files, fd) || !as->ops->as_pt_install ||
	    write != pt_pipe_write_end(f))
		return;
	if (write && file_async_files)
		return;	/* an O_ASYNC reader somewhere: pipe writes reach pipe_wrote */
	if (f->pt_reads < PT_AFTER && ++f->pt_reads < PT_AFTER)
		return;
	if (!pt_enabled() || !pt_file_ok(f)) {
		f->pt_no = true;
		return;
	}
	if (t->mm->users != 1 || t->tracer || sandbox.strace ||
	    dnotify_records || (f->flags & O_DIRECT))
		return;
	if (!one_table(t))
		return;
	long r = fd_pt_install(t->files, as, fd, f);
	if (r < 0) {
		pr_debug("passthrough of fd %d: %s", fd, strerror((int)-r));
		f->pt_no = true;	/* not at every read */
	}
}


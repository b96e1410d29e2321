// SPDX-License-Identifier: GPL-2.0
/*
 * Leases, fcntl(2) F_SETLEASE: "a mechanism whereby the process holding
 * the lease (the lease holder) is notified (via delivery of a signal) when
 * a process (the lease breaker) tries to open(2) or truncate(2) the file
 * referred to by that file descriptor." pvx keeps them itself, as
 * fs/locks.c does, over the sandbox's own files: the host's leases would
 * be the sentry's (one host process holding every guest's fds, a write
 * lease never granted while any other guest has the file open, and the
 * host's break signal sent to the sentry). So a lease sees the opens made
 * inside the sandbox only: a host process that opens the file neither
 * counts against a new lease nor breaks one.
 *
 * A breaker waits on the lease's eventfd with the sentry lock dropped
 * (task_block: interruptible, ended by exit_group and kill); every change
 * of the lease (unlock, downgrade, the file closed) writes it and takes a
 * fresh one, so waiters wake and look again, never spin on a stale one.
 */
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>

#include "pvx/file.h"
#include "pvx/path.h"
#include "pvx/sandbox.h"
#include "pvx/task.h"

struct lease {
	struct file *file;	/* its holder (no reference: lease_file_gone drops it) */
	dev_t dev;
	ino_t ino;
	int type;		/* F_RDLCK or F_WRLCK */
	int fd;			/* the guest fd it was set through: the break signal's si_fd */
	int breaking_to;	/* -1; or F_UNLCK, F_RDLCK: a breaker waits for that (Linux's *_PENDING) */
	uint64_t deadline_ns;	/* CLOCK_MONOTONIC: a break not answered by then is done by force */
	int efd;		/* written at every change of the lease */
	struct lease *next;
};

/* Every lease of the sandbox (under the sentry lock). */
static struct lease *all_leases;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* fs.lease-break-time, the host's (seconds; Linux's default 45 when unreadable). */
static uint64_t break_time_ns(void)
{
	FILE *fp = fopen("/proc/sys/fs/lease-break-time", "re");
	long s = 45;

	if (fp) {
		if (fscanf(fp, "%ld", &s) != 1 || s < 0)
			s = 45;
		fclose(fp);
	}
	return (uint64_t)s * 1000000000ULL;
}

static struct lease *lease_of(const struct file *f)
{
	for (struct lease *l = all_leases; l; l = l->next)
		if (l->file == f)
			return l;
	return NULL;
}

/* The lease changed: its waiters wake and look again; later ones wait on a fresh eventfd. */
static void lease_changed(struct lease *l)
{
	uint64_t one = 1;

	if (l->efd >= 0) {
		(void)!write(l->efd, &one, sizeof(one));
		close(l->efd);
	}
	l->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
}

static void lease_free(struct lease *l)
{
	for (struct lease **pp = &all_leases; *pp; pp = &(*pp)->next) {
		if (*pp == l) {
			*pp = l->next;
			break;
		}
	}
	lease_changed(l);
	if (l->efd >= 0)
		close(l->efd);
	l->file->leased = false;
	free(l);
}

/*
 * check_conflicting_open(): a read lease while nobody has the file open for
 * writing; a write lease while nobody else has it open at all (O_PATH
 * files are no opens). Every open file of the sandbox is looked at.
 */
static long conflicting_open(const struct file *mine, const struct stat *st, int arg)
{
	unsigned writers = 0, readers = 0, self_w = 0, self_r = 0;
	int acc = mine->flags & O_ACCMODE;

	for (struct file *f = file_next(NULL); f; f = file_next(f)) {
		struct stat fst;
		if ((f->flags & O_PATH) || f->ops->stat(f, &fst) < 0 || fst.st_dev != st->st_dev ||
		    fst.st_ino != st->st_ino || !S_ISREG(fst.st_mode))
			continue;
		if ((f->flags & O_ACCMODE) == O_RDONLY)
			readers++;
		else
			writers++;
	}
	if (arg == F_RDLCK)
		return writers ? -EAGAIN : 0;
	if (acc == O_RDONLY)
		self_r = 1;
	else
		self_w = 1;
	return writers != self_w || readers != self_r ? -EAGAIN : 0;
}

long lease_set(struct task *t, struct file *f, int fd, int arg)
{
	struct lease *l = lease_of(f);
	struct stat st;
	long r;

	if (f->flags & O_PATH)
		return -EBADF;
	if (arg != F_RDLCK && arg != F_WRLCK && arg != F_UNLCK)
		return -EINVAL;
	if ((r = f->ops->stat(f, &st)) < 0)
		return r;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;	/* generic_setlease: regular files only */
	/* "may take a lease only on a file whose UID matches the filesystem UID of the process" (or CAP_LEASE) */
	if (sandbox.uid != 0 && st.st_uid != sandbox.uid)
		return -EACCES;
	if (arg == F_UNLCK) {
		if (!l)
			return -EAGAIN;	/* generic_delete_lease found none */
		/* lease_modify: f_delown, and the signal back to SIGIO */
		f->owner_id = 0;
		f->owner_type = F_OWNER_TID;
		f->signum = 0;
		lease_free(l);
		return 0;
	}
	if ((r = conflicting_open(f, &st, arg)) < 0)
		return r;
	/* generic_add_lease: no write lease beside another's lease, no new one while a writer breaks them */
	for (struct lease *o = all_leases; o; o = o->next) {
		if (o == l || o->dev != st.st_dev || o->ino != st.st_ino)
			continue;
		if (arg == F_WRLCK || o->breaking_to == F_UNLCK)
			return -EAGAIN;
	}
	if (!l) {
		if (!(l = calloc(1, sizeof(*l))))
			return -ENOMEM;
		*l = (struct lease){ f, st.st_dev, st.st_ino, arg, fd, -1, 0, -1, all_leases };
		lease_changed(l);
		if (l->efd < 0) {
			free(l);
			return neg_errno();
		}
		all_leases = l;
		f->leased = true;
	} else {
		/* lease_modify: the new type; a downgrade answers a breaker who wanted only that */
		l->type = arg;
		if (arg == F_RDLCK && l->breaking_to == F_RDLCK)
			l->breaking_to = -1;
		l->fd = fd;
		lease_changed(l);
	}
	/* lease_setup: the setter's process is the file's owner, whom the break signal goes to */
	f->owner_type = F_OWNER_PID;
	f->owner_id = t->proc->pid;
	return 0;
}

/* F_GETLEASE: the type, or what it is being broken to (target_leasetype). */
long lease_get(struct file *f)
{
	const struct lease *l = lease_of(f);

	if (f->flags & O_PATH)
		return -EBADF;
	if (!l)
		return F_UNLCK;
	return l->breaking_to >= 0 ? l->breaking_to : l->type;
}

void lease_file_gone(struct file *f)
{
	struct lease *l = lease_of(f);

	if (l)
		lease_free(l);
}

/* The first lease on (dev, ino) an open that wants write (or any, for a write lease) conflicts with. */
static struct lease *conflicting_lease(dev_t dev, ino_t ino, bool want_write)
{
	for (struct lease *l = all_leases; l; l = l->next)
		if (l->dev == dev && l->ino == ino && (want_write || l->type == F_WRLCK))
			return l;
	return NULL;
}

/*
 * __break_lease(): mark each conflicting lease as breaking and signal its
 * holder (once: a lease already breaking as far is not signalled again).
 */
static void start_breaks(dev_t dev, ino_t ino, bool want_write)
{
	uint64_t deadline = now_ns() + break_time_ns();

	for (struct lease *l = all_leases; l; l = l->next) {
		if (l->dev != dev || l->ino != ino || !(want_write || l->type == F_WRLCK))
			continue;
		int to = want_write ? F_UNLCK : F_RDLCK;
		if (l->breaking_to == F_UNLCK || l->breaking_to == to)
			continue;
		l->breaking_to = to;
		l->deadline_ns = deadline;
		/* lease_break_callback: kill_fasync(SIGIO, POLL_MSG) to the file's owner */
		fs_kernel->sigio(l->file, l->fd, POLL_MSG, POLLIN | POLLRDNORM | POLLMSG);
	}
}

/* The holder did not answer in time: the break is done for it (time_out_leases). */
static void force_break(struct lease *l)
{
	if (l->breaking_to == F_UNLCK) {
		lease_free(l);
		return;
	}
	l->type = F_RDLCK;
	l->breaking_to = -1;
	lease_changed(l);
}

long lease_break(struct task *t, int host_fd, int flags)
{
	bool want_write = (flags & O_ACCMODE) != O_RDONLY;
	struct stat st;

	if (!all_leases || (flags & O_PATH) || fstat(host_fd, &st) < 0 || !S_ISREG(st.st_mode))
		return 0;
	if (!conflicting_lease(st.st_dev, st.st_ino, want_write))
		return 0;
	start_breaks(st.st_dev, st.st_ino, want_write);
	for (;;) {
		struct lease *l = conflicting_lease(st.st_dev, st.st_ino, want_write);
		if (!l)
			return 0;
		if (flags & O_NONBLOCK)
			return -EWOULDBLOCK;
		if (l->breaking_to < 0)	/* a new lease since (it conflicts too): break it as well */
			start_breaks(st.st_dev, st.st_ino, want_write);
		uint64_t now = now_ns();
		if (now >= l->deadline_ns) {
			force_break(l);
			continue;
		}
		uint64_t left = l->deadline_ns - now;
		struct timespec ts = { (time_t)(left / 1000000000ULL), (long)(left % 1000000000ULL) };
		struct pollfd p = { fcntl(l->efd, F_DUPFD_CLOEXEC, 3), POLLIN, 0 };
		if (p.fd < 0)
			return neg_errno();
		const long a[6] = { (long)&p, 1, (long)&ts, 0, 8 };
		long r = fs_kernel->block(t, NULL, SYS_ppoll, a, false);
		close(p.fd);
		if (r == -EINTR)
			return -ERESTARTSYS;	/* wait_event_interruptible_timeout */
		if (r < 0)
			return r;
	}
}

// SPDX-License-Identifier: GPL-2.0
/*
 * fcntl(2) record locks. A POSIX lock belongs to its process's fd table
 * (Linux's fl_owner is current->files) and goes when the process closes
 * any fd of the file; but every host fd of the guest is the sentry's, one
 * host process, whose own POSIX locks would never conflict among guest
 * processes. So each fd table that locks a file gets a host open file
 * description of its own for it (a "holder", reopened from the guest's
 * file through /proc/self/fd, never by a second lookup) and its POSIX
 * locks are the host's OFD locks on that holder: they conflict with every
 * other holder's, with the guest's own OFD locks (F_OFD_*, on the guest
 * file's host fd, as Linux's), and with other host processes' locks, as
 * the kernel decides. Closing any fd of the file closes the holder, which
 * drops them all. What OFD locks cannot say is found here: which guest
 * process holds a lock (F_GETLK's l_pid) and deadlocks (EDEADLK).
 */
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "pvx/file.h"
#include "pvx/hostcred.h"
#include "pvx/path.h"
#include "pvx/task.h"

struct plock_holder {
	struct fdtable *owner;
	int pid;		/* the guest pid of the owner's process (F_GETLK's l_pid) */
	dev_t dev;
	ino_t ino;
	int hfd;		/* the holder: an open file description of the owner's own */
	struct plock_holder *next;	/* in all_holders */
};

/* Every holder of every fd table (under the sentry lock). */
static struct plock_holder *all_holders;

static struct plock_holder *holder_find(const struct fdtable *owner, dev_t dev, ino_t ino)
{
	for (struct plock_holder *h = all_holders; h; h = h->next)
		if (h->owner == owner && h->dev == dev && h->ino == ino)
			return h;
	return NULL;
}

static void holder_drop(struct plock_holder *h)
{
	for (struct plock_holder **pp = &all_holders; *pp; pp = &(*pp)->next) {
		if (*pp == h) {
			*pp = h->next;
			break;
		}
	}
	h->owner->plocks--;
	close(h->hfd);	/* the host drops every lock of this open file description */
	free(h);
}

/* The holder of t's fd table for the file open as hfd; made when create. */
static long holder_of(struct task *t, int hfd, const struct stat *st, bool create, struct plock_holder **out)
{
	struct plock_holder *h = holder_find(t->files, st->st_dev, st->st_ino);
	char proc[64];

	*out = h;
	if (h || !create)
		return 0;
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", hfd);
	/*
	 * Read-write, so it can take either kind of lock (the guest's own fd's
	 * mode was checked), with the sentry's own file access: the object is
	 * one the guest holds open. A directory or a busy executable: read only.
	 */
	hostcred_raise();
	int fd = open(proc, O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		fd = open(proc, O_RDONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
	hostcred_lower();
	if (fd < 0)
		return neg_errno();
	if (!(h = calloc(1, sizeof(*h)))) {
		close(fd);
		return -ENOMEM;
	}
	*h = (struct plock_holder){ t->files, t->pid, st->st_dev, st->st_ino, fd, all_holders };
	all_holders = h;
	t->files->plocks++;
	*out = h;
	return 0;
}

/*
 * Whose lock conflicts with fl (what F_OFD_GETLK from mine found): the
 * holder of another fd table on the file from which the same request no
 * longer conflicts there (a lock never conflicts with its own owner's).
 */
static struct plock_holder *conflict_owner(const struct plock_holder *mine, dev_t dev, ino_t ino,
					   const struct flock *want, const struct flock *found)
{
	for (struct plock_holder *h = all_holders; h; h = h->next) {
		if (h == mine || h->dev != dev || h->ino != ino)
			continue;
		struct flock q = *want;
		q.l_pid = 0;
		if (fcntl(h->hfd, F_OFD_GETLK, &q) < 0)
			continue;
		if (q.l_type == F_UNLCK || q.l_start != found->l_start || q.l_len != found->l_len)
			return h;
	}
	return NULL;
}

/* The fd table of the process with guest pid pid among the lock holders; NULL if it holds none (or is gone). */
static const struct fdtable *owner_by_pid(int pid)
{
	for (struct plock_holder *h = all_holders; h; h = h->next)
		if (h->pid == pid)
			return h->owner;
	return NULL;
}

/*
 * POSIX's deadlock: the lock's owner waits, through a chain of waiters,
 * for one of mine. The chain goes by pid, looked up among the holders, so
 * a process that ended meanwhile only ends the chain.
 */
static bool would_deadlock(const struct fdtable *me, const struct plock_holder *owner)
{
	const struct fdtable *x = owner ? owner->owner : NULL;

	for (int depth = 0; x && depth < 64; depth++) {	/* MAX_DEADLK_ITERATIONS is 10 in Linux */
		if (x == me)
			return true;
		x = x->plock_waits_for ? owner_by_pid(x->plock_waits_for) : NULL;
	}
	return false;
}

/* F_GETLK, F_SETLK, F_SETLKW and their F_OFD_ forms; arg is the guest's struct flock. */
long plock_fcntl(struct task *t, struct file *f, int cmd, uint64_t arg)
{
	bool ofd = cmd == F_OFD_GETLK || cmd == F_OFD_SETLK || cmd == F_OFD_SETLKW;
	bool get = cmd == F_GETLK || cmd == F_OFD_GETLK, wait = cmd == F_SETLKW || cmd == F_OFD_SETLKW;
	struct flock fl;
	struct stat st;
	long r;

	if (f->flags & O_PATH)
		return -EBADF;
	if ((r = copy_from_guest(t->mm, &fl, arg, sizeof(fl))) < 0)
		return r;
	struct flock asked = fl;
	if (fl.l_type != F_RDLCK && fl.l_type != F_WRLCK && fl.l_type != F_UNLCK)
		return -EINVAL;
	if (fl.l_whence != SEEK_SET && fl.l_whence != SEEK_CUR && fl.l_whence != SEEK_END)
		return -EINVAL;
	if (ofd && fl.l_pid)
		return -EINVAL;	/* "l_pid ... must be set to zero" */
	if (get && fl.l_type == F_UNLCK)
		return -EINVAL;
	int acc = f->flags & O_ACCMODE;
	if (!get && ((fl.l_type == F_RDLCK && acc == O_WRONLY) || (fl.l_type == F_WRLCK && acc == O_RDONLY)))
		return -EBADF;
	long hfd = file_object(f, FILE_LOCK);
	if (hfd < 0)
		return hfd;
	if (fstat((int)hfd, &st) < 0)
		return neg_errno();
	if (fl.l_whence == SEEK_CUR && !ofd) {	/* the guest file's position, not the holder's */
		off_t pos = lseek((int)hfd, 0, SEEK_CUR);
		if (pos < 0)
			return neg_errno();
		if (__builtin_add_overflow(fl.l_start, pos, &fl.l_start))
			return -EOVERFLOW;
		fl.l_whence = SEEK_SET;
	}

	struct plock_holder *h = NULL;
	int lfd = (int)hfd;
	if (!ofd) {
		r = holder_of(t, (int)hfd, &st, fl.l_type != F_UNLCK || get, &h);
		if (r < 0)
			return r;
		if (!h)
			return 0;	/* nothing of ours to unlock */
		lfd = h->hfd;
		fl.l_pid = 0;
	}
	struct flock req = fl;
	if (get) {
		if (fcntl(lfd, F_OFD_GETLK, &fl) < 0)
			return neg_errno();
		if (fl.l_type == F_UNLCK) {
			/* fcntl_getlk: only l_type is written back when nothing conflicts ("leaves the other fields") */
			asked.l_type = F_UNLCK;
			return copy_to_guest(t->mm, arg, &asked, sizeof(asked));
		}
		if (fl.l_type != F_UNLCK) {
			const struct plock_holder *o = conflict_owner(h, st.st_dev, st.st_ino, &req, &fl);
			/* a guest process's, an OFD lock (-1), or a host process's (its pid is no guest's: 0) */
			fl.l_pid = o ? o->pid : fl.l_pid < 0 ? -1 : 0;
		}
		return copy_to_guest(t->mm, arg, &fl, sizeof(fl));
	}
	if (fcntl(lfd, F_OFD_SETLK, &fl) == 0)
		return 0;
	if ((errno != EAGAIN && errno != EACCES) || !wait)
		return neg_errno();
	struct flock found = req;
	const struct plock_holder *o = NULL;
	if (!ofd && fcntl(lfd, F_OFD_GETLK, &found) == 0 && found.l_type != F_UNLCK)
		o = conflict_owner(h, st.st_dev, st.st_ino, &req, &found);
	if (o && would_deadlock(t->files, o))
		return -EDEADLK;
	/* Wait with the sentry lock dropped, on a holder of our own (a close may drop h meanwhile). */
	int wfd = fcntl(lfd, F_DUPFD_CLOEXEC, 3);
	if (wfd < 0)
		return neg_errno();
	const long a[6] = { wfd, F_OFD_SETLKW, (long)&fl };
	struct fdtable *me = t->files;
	me->plock_waits_for = o ? o->pid : 0;
	file_get(f);
	r = fs_kernel->block(t, NULL, SYS_fcntl, a, false);
	file_put(f);
	me->plock_waits_for = 0;
	close(wfd);
	return r == -EINTR ? -ERESTARTSYS : r;
}

/* POSIX: "all of the process's locks on that file are released" when it closes any fd of it. */
void plock_closed(struct fdtable *owner, struct file *f)
{
	struct stat st;

	if (!owner->plocks || !f || f->host_fd < 0 || fstat(f->host_fd, &st) < 0)
		return;
	struct plock_holder *h = holder_find(owner, st.st_dev, st.st_ino);
	if (h)
		holder_drop(h);
}

/* The fd table is gone (its process exited): every holder of it goes. */
void plock_release_all(struct fdtable *owner)
{
	struct plock_holder *h = all_holders, *next;

	for (; h && owner->plocks; h = next) {
		next = h->next;
		if (h->owner == owner)
			holder_drop(h);
	}
}

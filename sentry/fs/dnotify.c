// SPDX-License-Identifier: GPL-2.0
/*
 * dnotify: fcntl(F_NOTIFY) on a directory (fs/notify/dnotify/dnotify.c of
 * Linux 6.12). Each F_NOTIFY of one open directory by one fd table is one
 * record (a second one adds to its mask and takes its fd, as attach_dn);
 * an event of a kind it asked for sends the file's F_SETSIG signal (SIGIO
 * without one) with si_fd its fd and POLL_MSG to its owner, which F_NOTIFY
 * made the calling process; without DN_MULTISHOT the record goes with its
 * first signal. A close of any fd of that open directory in that table
 * removes it (dnotify_flush from filp_close), as does F_NOTIFY with 0.
 *
 * The events are the host's: one host inotify fd of the sentry watches each
 * directory with a record (the object the guest holds, through
 * /proc/self/fd), so a change made by anyone counts, as on Linux. The
 * host queues an event within the call that made it; the sentry reads the
 * queue when a guest syscall returns (dnotify_poll), so the guest that
 * made a change has its signal before its own call returns, as natively.
 * A change made outside the sandbox signals at the next guest syscall.
 *
 * The host counts inotify watches per user, shared with the host's own
 * programs: the directories watched at once are bounded (ENOMEM past it).
 */
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pvx/file.h"
#include "pvx/path.h"

#ifndef DN_ACCESS
#define DN_ACCESS 0x00000001
#define DN_MODIFY 0x00000002
#define DN_CREATE 0x00000004
#define DN_DELETE 0x00000008
#define DN_RENAME 0x00000010
#define DN_ATTRIB 0x00000020
#define DN_MULTISHOT 0x80000000
#endif

#define DNOTIFY_DIRS 1024	/* host watches at once */
/*
 * FS_RENAME, which inotify does not report: dnotify takes it as "renamed
 * within the same directory" (fsnotify_handle_event), which inotify shows
 * as IN_MOVED_FROM and IN_MOVED_TO of one cookie on one watch, queued one
 * after the other. A bit no inotify event carries stands for it.
 */
#define EV_RENAME IN_ONLYDIR
#define HOST_EVENTS (IN_ACCESS | IN_MODIFY | IN_ATTRIB | IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO)

struct dn {
	struct dn *next;
	const struct fdtable *owner;	/* dn_owner: the fd table of the F_NOTIFY */
	struct file *file;		/* dn_filp: not a reference; the record goes before the file can */
	int fd;				/* dn_fd: si_fd */
	unsigned mask;			/* DN_* */
	int wd;				/* the host watch of its directory; -1: gone (IN_IGNORED) */
};

static struct dn *dns;		/* under the sentry lock */
static int ino_fd = -1;
static unsigned n_dirs;		/* distinct host watches held */
int dnotify_records;		/* the hooks do nothing while 0 */

/* convert_arg(): the host's inotify events a record's DN_* mask stands for. */
static uint32_t host_mask(unsigned dn)
{
	uint32_t m = 0;

	if (dn & DN_DELETE)
		m |= IN_DELETE | IN_MOVED_FROM;
	if (dn & DN_MODIFY)
		m |= IN_MODIFY;
	if (dn & DN_ACCESS)
		m |= IN_ACCESS;
	if (dn & DN_ATTRIB)
		m |= IN_ATTRIB;
	if (dn & DN_RENAME)
		m |= EV_RENAME;
	if (dn & DN_CREATE)
		m |= IN_CREATE | IN_MOVED_TO;
	return m;
}

static bool wd_used(int wd)
{
	for (struct dn *d = dns; d; d = d->next)
		if (d->wd == wd)
			return true;
	return false;
}

/* Unlink *pp; its host watch goes with the last record on it. */
static void dn_free(struct dn **pp)
{
	struct dn *d = *pp;
	int wd = d->wd;

	*pp = d->next;
	free(d);
	dnotify_records--;
	if (wd >= 0 && !wd_used(wd)) {
		inotify_rm_watch(ino_fd, wd);
		n_dirs--;
	}
}

/* dnotify_flush(): the record of (table, f), if any. */
void dnotify_closed(const struct fdtable *table, struct file *f)
{
	for (struct dn **pp = &dns; *pp; pp = &(*pp)->next)
		if ((*pp)->owner == table && (*pp)->file == f) {
			dn_free(pp);
			return;
		}
}

/* fcntl_dirnotify(). */
long dnotify_fcntl(struct task *t, const struct fdtable *table, struct file *f, int fd, unsigned arg, int owner_pid)
{
	char path[64];
	struct stat st;

	(void)t;
	if (!(arg & ~DN_MULTISHOT)) {
		dnotify_closed(table, f);	/* "a 0 mask means we are explicitly removing the watch" */
		return 0;
	}
	if (f->host_fd < 0 || fstat(f->host_fd, &st) || !S_ISDIR(st.st_mode))
		return -ENOTDIR;
	if (ino_fd < 0 && (ino_fd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK)) < 0) {
		ino_fd = -1;
		return -ENOMEM;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", f->host_fd);
	f->owner_type = F_OWNER_PID;	/* __f_setown(filp, task_pid(current), PIDTYPE_TGID, 0) */
	f->owner_id = owner_pid;
	for (struct dn *d = dns; d; d = d->next)
		if (d->owner == table && d->file == f) {	/* attach_dn: more events for the same record */
			d->fd = fd;
			d->mask |= arg;
			return 0;
		}
	struct dn *d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	/* the same directory gives the same wd: a new one only when it is not watched yet */
	int wd = inotify_add_watch(ino_fd, path, HOST_EVENTS | IN_ONLYDIR | IN_MASK_ADD);
	if (wd < 0 || (!wd_used(wd) && n_dirs >= DNOTIFY_DIRS)) {
		if (wd >= 0 && !wd_used(wd))
			inotify_rm_watch(ino_fd, wd);
		free(d);
		return -ENOMEM;
	}
	if (!wd_used(wd))
		n_dirs++;
	*d = (struct dn){ dns, table, f, fd, arg, wd };
	dns = d;
	dnotify_records++;
	return 0;
}

#define ANY_WD (-2)

/* dnotify_handle_event() for one host event on watch wd (ANY_WD: every watch). */
static void event(int wd, uint32_t mask)
{
	if (mask & IN_IGNORED) {	/* the directory is gone: its records never fire again */
		bool had = false;
		for (struct dn *d = dns; d; d = d->next)
			if (d->wd == wd) {
				d->wd = -1;
				had = true;
			}
		n_dirs -= had;
		return;
	}
	for (struct dn **pp = &dns; *pp;) {
		struct dn *d = *pp;
		if (d->wd < 0 || (wd != ANY_WD && d->wd != wd) || !(host_mask(d->mask) & mask)) {
			pp = &d->next;
			continue;
		}
		fs_kernel->sigio(d->file, d->fd, POLL_MSG, POLLIN | POLLRDNORM | POLLMSG);
		if (d->mask & DN_MULTISHOT)
			pp = &d->next;
		else
			dn_free(pp);
	}
}

/* See pvx/file.h: the host's queued events, each to the records of its directory. */
void dnotify_poll(void)
{
	static char buf[65536] __attribute__((aligned(__alignof__(struct inotify_event))));
	ssize_t n;

	if (ino_fd < 0)
		return;
	while ((n = read(ino_fd, buf, sizeof(buf))) > 0) {
		for (char *p = buf; p < buf + n;) {
			const struct inotify_event *e = (const struct inotify_event *)p;
			p += sizeof(*e) + e->len;
			const struct inotify_event *to = (const struct inotify_event *)p;
			if ((e->mask & IN_MOVED_FROM) && p < buf + n && (to->mask & IN_MOVED_TO) && to->cookie == e->cookie &&
			    to->wd == e->wd)
				event(e->wd, EV_RENAME);	/* fsnotify_move sends FS_RENAME first */
			/* events lost: every record is told, as one of each kind might have come */
			event(e->mask & IN_Q_OVERFLOW ? ANY_WD : e->wd, e->mask & IN_Q_OVERFLOW ? HOST_EVENTS | EV_RENAME : e->mask);
		}
	}
}

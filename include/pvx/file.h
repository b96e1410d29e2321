/* SPDX-License-Identifier: GPL-2.0 */
/* Open files and the fd table (sentry/fs/fdtable.c). */
#ifndef PVX_FILE_H
#define PVX_FILE_H

#include <stdbool.h>
#include <sys/types.h>
#include "pvx/common.h"

struct file;
struct stat;
struct task;

/*
 * The calls the host kernel makes on the object a file is (file_object):
 * for a kind without one (a kind pvx answers itself), file_object answers
 * what Linux answers for a file that cannot do the call.
 */
enum file_call {
	FILE_SENDFILE,		/* sendfile(2), either end: EINVAL */
	FILE_COPY_RANGE,	/* copy_file_range(2): EINVAL (not a regular file) */
	FILE_FLOCK,		/* flock(2): succeeds (nobody else can open the file to contend) */
	FILE_FADVISE,		/* fadvise64(2): succeeds, as generic_fadvise for a non-FIFO without pages */
	FILE_READAHEAD,		/* readahead(2): EINVAL */
	FILE_CHMOD,		/* fchmod(2): succeeds (an anonymous inode's mode is no file's) */
	FILE_CHOWN,		/* fchown(2): succeeds, the same */
	FILE_UTIMES,		/* futimens(3): succeeds, the same */
	FILE_TRUNCATE,		/* ftruncate(2): EINVAL (not a regular file) */
	FILE_STATFS,		/* fstatfs(2): the readiness fd's (an anonymous inode's, as Linux's) */
	FILE_SYNC,		/* fsync(2), fdatasync(2): EINVAL (no fsync) */
	FILE_DIR,		/* the dirfd of *at(2) calls, fchdir(2): ENOTDIR */
	FILE_PATH,		/* the object of an AT_EMPTY_PATH call (fchownat, linkat, ...): EPERM */
	FILE_EXEC,		/* execveat(2) of the fd: EACCES */
	FILE_REOPEN,		/* open of /proc/PID/fd/N: ENXIO, as for an anonymous inode */
	FILE_STATX,		/* statx(2) of the fd (AT_EMPTY_PATH): FILE_CALL_DONE, from the kind's stat */
	FILE_SPLICE,		/* splice(2), tee(2), vmsplice(2): EINVAL (no splice_read/splice_write) */
	FILE_FALLOCATE,		/* fallocate(2): ENODEV (no fallocate) */
	FILE_PASS,		/* SCM_RIGHTS: the host fd sent for it; an error: a token goes in its place (fd_pass.c) */
	FILE_XATTR,		/* fgetxattr(2) family: the readiness fd's (an anonymous inode's, as Linux's) */
	FILE_LOCK,		/* fcntl(2) record locks: the readiness fd's (an anonymous inode's, as Linux's) */
	FILE_NR_CALLS
};

/* file_object's answer for a call that succeeds with nothing for the host to do. */
#define FILE_CALL_DONE (-4096L)

/*
 * What a kind of file does, chosen when the file is made (file_new):
 * handlers call these (the optional ones through the file_* helpers
 * below, which give a NULL op Linux's answer for a file that cannot do
 * it), never switch on a kind. The kinds of sentry/fs/: host_file_ops
 * (files, devices, terminals), dir_file_ops, pipe_file_ops (pipes and
 * FIFOs), anon_file_ops (host eventfds and timerfds), memfd_file_ops, procfs_file_ops (the text
 * /proc makes): all host fds the sentry owns underneath, sharing the host
 * helpers of sentry/fs/host_file.h. A kind whose answers pvx makes itself
 * (signalfd, epoll, sockets of the sandbox's network, message queues)
 * brings its own table: it must set read, write, release and stat; every
 * other op may be NULL.
 */
struct file_ops {
	/*
	 * read(2), pread64(2) (positional: at off, the offset unmoved) into the
	 * sentry's buf; write(2), pwrite64(2) from it. They may wait with the
	 * sentry lock dropped: -EINTR when a signal cut the wait short.
	 */
	long (*read)(struct task *t, struct file *f, void *buf, size_t count, off_t off, bool positional);
	long (*write)(struct task *t, struct file *f, const void *buf, size_t count, off_t off, bool positional);
	/* The same straight between the file and guest memory at ubuf (vmexec's zero-copy I/O); NULL: cannot. */
	long (*rw_in_guest_mm)(struct task *t, struct file *f, bool write, uint64_t ubuf, size_t count, off_t off,
			       bool positional);
	/* The last reference went: free what the file holds (not f itself). */
	void (*release)(struct file *f);
	/* fstat(2). */
	long (*stat)(struct file *f, struct stat *st);
	/* lseek(2): the new offset or -errno (ESPIPE where there is none). */
	long (*seek)(struct file *f, off_t off, int whence);
	/* Of events (POLLIN, POLLOUT, ...), those ready now, without waiting. */
	short (*poll)(struct file *f, short events);
	/* ioctl(2) beyond the fd table's FIOCLEX/FIONCLEX; arg is a guest address or value. */
	long (*ioctl)(struct task *t, struct file *f, unsigned long cmd, uint64_t arg);
	/* mmap(2): the host fd mm/ maps for it, or -errno (ENODEV: cannot be mapped). NULL: ENODEV. */
	long (*mmap)(struct file *f);

	/*
	 * readv(2) family on the guest's iovecs gathered into buf: off -1 is
	 * the file position, rwf the RWF_* flags of preadv2/pwritev2. NULL:
	 * through read and write (RWF_* flags: EOPNOTSUPP, as Linux for a
	 * file without FMODE_NOWAIT and the like).
	 */
	long (*rw_vec)(struct task *t, struct file *f, bool write, void *buf, size_t count, off_t off, int rwf);
	/* getdents64(2) into the sentry's buf. NULL: ENOTDIR. */
	long (*getdents)(struct task *t, struct file *f, void *buf, size_t count);
	/*
	 * fcntl(2) commands a kind may have (F_SETPIPE_SZ, F_GETPIPE_SZ,
	 * F_ADD_SEALS, F_GET_SEALS); for those it does not, it returns
	 * file_fcntl_none(cmd). NULL: file_fcntl_none for all.
	 */
	long (*fcntl)(struct task *t, struct file *f, int cmd, unsigned long arg);
	/* F_GETFL. NULL: the guest flags pvx keeps in f->flags. */
	long (*getfl)(struct file *f);
	/* F_SETFL, FIONBIO: apply the status flags (O_APPEND, O_NONBLOCK, ...). NULL: nothing more to do. */
	long (*setfl)(struct file *f, int flags);
	/*
	 * The host fd the host kernel makes call (enum file_call) on, or
	 * -errno; -ENOENT: the kind has no host object for it (file_object
	 * answers). NULL: none for any call.
	 */
	long (*object)(struct file *f, enum file_call call);
	/* The host fd whose readiness poll and select wait on for the file's. NULL: f->host_fd. */
	int (*ready_fd)(struct file *f);
	/*
	 * A read takes what it returns before copying it out (signalfd_read,
	 * eventfd_read, timerfd_read): a bad buffer loses it with EFAULT, so
	 * read(2) does not check the buffer first as it does for the kinds
	 * whose data stays (pipes, sockets: pipe_read consumes only what it copied).
	 */
	bool read_consumes;
	/*
	 * /proc/PID/fdinfo shows the host's own lines for this kind after
	 * pos/flags/mnt_id/ino (inotify's watches, an eventfd's count, a
	 * timerfd's settings): its state is the host file's, in no host fd
	 * numbers. Otherwise only those four lines.
	 */
	bool host_fdinfo;
	/*
	 * Its host fd may be read by the seccomp stub itself (passthrough,
	 * sentry/platform/seccomp_passthrough.md) when it is a regular file:
	 * its read is the host's read(2) on host_fd and nothing more.
	 */
	bool passthrough;
};

/*
 * An open file description (shared by dup'ed fds). host_fd is the host fd
 * that stands for the file: the object itself for host kinds, and for a
 * kind pvx answers itself the host fd whose readiness is the file's (an
 * eventfd the kind keeps in step), so poll, select and epoll wait on host
 * fds for every kind. priv is the kind's own state, freed by its release.
 */
struct file {
	int refs;
	int host_fd;
	int flags;		/* guest open flags (O_ACCMODE, O_APPEND, ...) */
	const struct file_ops *ops;
	void *priv;
	unsigned epoll_regs;	/* registrations in epolls (sentry/fs/epoll.c), dropped when the file goes */
	/* F_SETOWN_EX: whom SIGIO (or signum) goes to: F_OWNER_TID/PID/PGRP and a guest id (0: nobody) */
	int owner_type, owner_id;
	int signum;		/* F_SETSIG: 0 is SIGIO without siginfo */
	bool leased;		/* holds a lease (sentry/fs/lease.c), dropped when the file goes */
	bool created;		/* its open created the file (F_CREATED_QUERY) */
	int async_fd;		/* O_ASYNC: the guest fd F_SETFL set it through (si_fd of its SIGIO) */
	bool async_counted;	/* counted in file_async_files (F_SETFL set O_ASYNC and it is still set) */
	struct file *all_prev, *all_next;	/* every open file of the sandbox (file_next) */
	unsigned pt_reads;	/* read(2)s of it, up to the passthrough's threshold */
	bool pt_no;		/* never for passthrough (not a regular file, /proc, /sys...) */
};

/* The kinds of sentry/fs/ (see struct file_ops). */
extern const struct file_ops host_file_ops, dir_file_ops, pipe_file_ops, anon_file_ops, memfd_file_ops,
	procfs_file_ops;

/* The kind of a host fd opened by path or inherited (a pipe, a directory or a host file), by its fstat. */
const struct file_ops *file_kind_of(int host_fd);
/* The same, from the host object's st_mode when the caller has it. */
const struct file_ops *file_kind_of_mode(mode_t mode);

/* The optional ops with Linux's answer where a kind has none (sentry/fs/file_ops.c). */
long file_rw_vec(struct task *t, struct file *f, bool write, void *buf, size_t count, off_t off, int rwf)
	__must_check;
long file_seek(struct file *f, off_t off, int whence) __must_check;
short file_poll(struct file *f, short events);
long file_ioctl(struct task *t, struct file *f, unsigned long cmd, uint64_t arg) __must_check;
long file_mmap(struct file *f) __must_check;
long file_getdents(struct task *t, struct file *f, void *buf, size_t count) __must_check;
long file_fcntl(struct task *t, struct file *f, int cmd, unsigned long arg) __must_check;
long file_fcntl_none(int cmd) __must_check;
long file_getfl(struct file *f) __must_check;
long file_setfl(struct file *f, int flags) __must_check;
long file_object(struct file *f, enum file_call call) __must_check;
int file_ready_fd(struct file *f);

struct fd_entry {
	struct file *file;
	bool cloexec;
};

/* Open files F_SETFL gave O_ASYNC: while there are any, writes to pipes look for readers to signal (pipe.c). */
extern long file_async_files;

/* The most an unprivileged F_SETPIPE_SZ may ask for: the host's fs.pipe-max-size (/proc/sys/fs). */
unsigned long pipe_max_size(void);

/* The sandbox's fs.nr_open, Linux's default: no fd number or RLIMIT_NOFILE reaches it. */
#define PVX_NR_OPEN (1U << 20)

/*
 * A process's fds. The array grows as fd numbers are used, as Linux's
 * expand_files does, and its memory is charged to the sandbox's bound
 * (mm_charge): dup2(0, 1000000) costs 16 MiB, here as in Linux.
 */
struct fdtable {
	int users;		/* tasks that hold it (CLONE_FILES); the last one releases it */
	struct fd_entry *fds;	/* size entries */
	unsigned size;		/* fd numbers below it may be in use: loops over fds stop there */
	unsigned next_fd;	/* no free fd below it (Linux's next_fd) */
	unsigned nofile;	/* RLIMIT_NOFILE of its process: new fds stay below */
	unsigned plocks;	/* files it holds POSIX record locks on (sentry/fs/plock.c) */
	int plock_waits_for;	/* F_SETLKW: the guest pid owning the lock it waits for, or 0 */
	/*
	 * Passthrough (seccomp_passthrough.md): fd g < 128 with bit g of
	 * pt_dup has a dup of its host file in the stub of pt_as, and the stub
	 * serves its reads while bit g of pt_on is set too. Only while this
	 * table is the one table of pt_as's mm, and that mm its only one: every
	 * clone, unshare and exec that would break it calls fd_pt_off first;
	 * every change of slot g drops bit g (fd_install_at, fd_close).
	 */
	uint64_t pt_on[2], pt_dup[2];
	struct addr_space *pt_as;
};

/* A file of kind ops owning host_fd (the new file holds one reference). */
struct file *file_new(int host_fd, int flags, const struct file_ops *ops);
struct file *file_get(struct file *f);
void file_put(struct file *f);

/* Iterate over every open file of the sandbox: the next after prev (NULL: the first). */
struct file *file_next(struct file *prev);

struct file *fd_lookup(struct fdtable *t, int fd);
long fd_install(struct fdtable *t, struct file *f, bool cloexec, int min_fd) __must_check;
long fd_install_at(struct fdtable *t, int fd, struct file *f, bool cloexec) __must_check;
long fd_close(struct fdtable *t, int fd) __must_check;
struct fdtable *fdtable_new(unsigned nofile);
struct fdtable *fdtable_dup(const struct fdtable *src);
void fdtable_release(struct fdtable *t);
/* Passthrough (sentry/fs/fdtable.c): see struct fdtable. as: the caller's address space. */
long fd_pt_install(struct fdtable *t, struct addr_space *as, int fd, struct file *f) __must_check;
bool fd_pt_is_on(const struct fdtable *t, int fd);
void fd_pt_off(struct fdtable *t, struct addr_space *as);
void fd_pt_pause(struct fdtable *t);
/*
 * After t's read(2) or pread64(2) of fd (now f): the stub may take its next
 * reads over; one_table: t's fd table is held by t's process's threads only,
 * and all of them, none traced (the caller walks the tasks; asked only
 * when all else says yes).
 */
/* write: after a write(2) (only a pipe's write end counts), else after a read(2) or pread64(2). */
void fd_pt_consider(struct task *t, int fd, struct file *f, bool (*one_table)(struct task *t), bool write);

/*
 * fcntl(2) record locks (sentry/fs/plock.c): F_GETLK, F_SETLK, F_SETLKW and
 * the F_OFD_ ones, arg the guest's struct flock. POSIX locks belong to the
 * fd table and go when it closes any fd of the file (plock_closed, called
 * by the fd table) or goes itself.
 */
long plock_fcntl(struct task *t, struct file *f, int cmd, uint64_t arg) __must_check;
void plock_closed(struct fdtable *owner, struct file *f);

/*
 * dnotify (sentry/fs/dnotify.c): fcntl(F_NOTIFY, arg) on f, guest fd fd of
 * table, by process owner_pid; dnotify_closed when table closes an fd of f;
 * dnotify_poll when a guest syscall returns, while dnotify_records is not 0.
 */
long dnotify_fcntl(struct task *t, const struct fdtable *table, struct file *f, int fd, unsigned arg,
		   int owner_pid) __must_check;
void dnotify_closed(const struct fdtable *table, struct file *f);
void dnotify_poll(void);
extern int dnotify_records;
void plock_release_all(struct fdtable *owner);

/*
 * Leases, fcntl(2) F_SETLEASE and F_GETLEASE (sentry/fs/lease.c): arg an
 * F_RDLCK, F_WRLCK or F_UNLCK; fd the guest fd it was set through (the
 * si_fd of the break signal). lease_break: an open of the object host_fd
 * with flags (truncate(2): O_WRONLY) breaks the leases it conflicts with,
 * waiting for their holders (the lock dropped, interruptible) up to
 * fs.lease-break-time; -EWOULDBLOCK with O_NONBLOCK.
 */
long lease_set(struct task *t, struct file *f, int fd, int arg) __must_check;
long lease_get(struct file *f) __must_check;
long lease_break(struct task *t, int host_fd, int flags) __must_check;
void lease_file_gone(struct file *f);

/*
 * SCM_RIGHTS for files the host cannot carry (sentry/fs/fd_pass.c).
 * pass_token: a host fd to send in f's place (the caller closes it once
 * sent); f is held while the token is in flight; -ETOOMANYREFS past
 * PVX_PASS_INFLIGHT. pass_received: the file a received host fd (st its
 * fstat) is the token of, held; NULL when it is no token.
 */
#define PVX_PASS_INFLIGHT 1024
long pass_token(struct file *f) __must_check;
struct stat;
struct file *pass_received(const struct stat *st);

#endif

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The syscall table: one line per x86-64 syscall in syscalls/table.def
 * generates dispatch, strace names and `pvx syscalls`.
 */
#ifndef PVX_SYSCALLS_H
#define PVX_SYSCALLS_H

#include "pvx/kernel.h"

typedef long (*syscall_fn)(struct task *t, const long a[6]);

enum support {
	SUP_NONE,	/* returns -ENOSYS */
	SUP_PARTIAL,	/* common cases; the note in table.def says what is missing */
	SUP_FULL,
};

struct syscall_desc {
	const char *name;
	syscall_fn fn;
	/*
	 * One char per argument for strace: d int, u unsigned, x hex, f fd,
	 * s string, p pointer, o octal mode.
	 */
	const char *args;
	enum support support;
	const char *note;
};

#define PVX_NR_SYSCALLS 463

/* The kernel's sigset_t: every *sigsetsize argument must be this. */
#define GUEST_SIGSET_SIZE 8

extern const struct syscall_desc syscall_table[PVX_NR_SYSCALLS];

/* Shared by the I/O handlers (syscalls/sys_io.c, sys_fdextra.c). */
struct addr_space;
/* The file of fd if it may be read (need O_RDONLY) or written (O_WRONLY); NULL: EBADF. */
struct file *io_file(struct task *t, int fd, int need);
/* The guest's answer for a failed blocking read or write: ERESTARTSYS for EINTR, SIGPIPE for EPIPE. */
long io_error(struct task *t, long r);
/* The host object of fd for call (pvx/file.h file_object), -EBADF for no fd (syscalls/sys_fdextra.c). */
long fd_object(struct task *t, int fd, enum file_call call);
/* Copy in an iovec array (sys_io.c, also vmsplice's): the total length or -errno (readv(2) EINVAL rules). */
struct iovec;
long get_iov(struct task *t, uint64_t uiov, long cnt, struct iovec **out) __must_check;
/*
 * The readv/writev family's I/O on f once the iovecs are in (sys_io.c, also
 * AIO's): total bytes at off (-1: the file position), RWF_* flags rwf.
 */
long io_rw_iov(struct task *t, struct file *f, bool write, const struct iovec *iov, size_t cnt, size_t total,
	       off_t off, int rwf) __must_check;
/* Copy len bytes between buf and the n guest iovecs from byte pos of them on; what it copied before a bad page. */
size_t iov_move(struct task *t, const struct iovec *iov, size_t n, size_t pos, char *buf, size_t len, bool to_guest);
/* ppoll's sigmask (sys_poll.c), also epoll_pwait's: set for the wait, kept past it only for a handler on EINTR. */
long poll_mask_set(struct task *t, uint64_t umask, long size) __must_check;
long poll_mask_done(struct task *t, long r);
/* rt_sigqueueinfo's copy of the guest's siginfo (sys_signal.c), also pidfd_send_signal's. */
struct sig_info;
long copy_guest_siginfo(struct task *t, int sig, uint64_t uinfo, struct sig_info *info) __must_check;
/* waitid(P_PIDFD) (sys_pidfd.c): the pid to wait for; *nonblock for an O_NONBLOCK pidfd (WNOHANG, then EAGAIN). */
long pidfd_wait_pid(struct task *t, int fd, bool *nonblock) __must_check;
/* CLONE_PIDFD (sys_pidfd.c): a pidfd for the new child pid installed in t's table, stored at upidfd. */
long pidfd_for_child(struct task *t, int pid, uint64_t upidfd) __must_check;

/* Run the emulation of syscall nr for t; returns the value for rax. */
long syscall_dispatch(struct task *t, long nr, const long a[6]);
const char *syscall_name(long nr);
/* Strace-style line for a trapped syscall (syscalls/strace.c). */
void strace_enter(struct task *t, long nr, const long a[6]);
void strace_exit(struct task *t, long nr, const long a[6], long ret);
/* All three, for the kernel's task loop (given to it by main.c). */
extern const struct syscall_ops syscall_ops;

#define SYSCALL(nr, name, args, sup, note) long sys_##name(struct task *t, const long a[6]);
#define NOSYS(nr, name)
#include "syscalls/table.def"
#undef SYSCALL
#undef NOSYS

#endif

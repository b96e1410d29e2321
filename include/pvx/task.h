/* SPDX-License-Identifier: GPL-2.0 */
/* A guest task, its files and the sandbox-wide configuration. */
#ifndef PVX_TASK_H
#define PVX_TASK_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include "pvx/common.h"
#include "pvx/mm.h"
#include "pvx/regs.h"

struct platform_ops;

/* Fixed for the whole run (set by main.c from the command line). */
struct sandbox {
	const struct platform_ops *platform;
	int rootfd;		/* O_PATH fd of --root: every guest path resolves beneath it */
	bool rw;		/* --rw: the root is writable */
	bool strace;		/* --strace: print each guest syscall */
	unsigned uid, gid;	/* what the guest is told */
};

extern struct sandbox sandbox;

/* An open file description (shared by dup'ed fds). */
struct file {
	int refs;
	int host_fd;
	int flags;		/* guest open flags (O_ACCMODE, O_APPEND, ...) */
};

struct fd_entry {
	struct file *file;
	bool cloexec;
};

#define PVX_NR_OPEN 1024	/* RLIMIT_NOFILE soft limit the guest sees */

struct fdtable {
	struct fd_entry fds[PVX_NR_OPEN];
};

struct file *file_new(int host_fd, int flags);
struct file *file_get(struct file *f);
void file_put(struct file *f);

/* fd table (syscalls/fdtable.c) */
struct file *fd_lookup(struct fdtable *t, int fd);
long fd_install(struct fdtable *t, struct file *f, bool cloexec, int min_fd) __must_check;
long fd_install_at(struct fdtable *t, int fd, struct file *f, bool cloexec) __must_check;
long fd_close(struct fdtable *t, int fd) __must_check;
void fdtable_release(struct fdtable *t);

struct task {
	int pid, tid, ppid;	/* guest pid space: the first process is 1 */
	struct addr_space *as;
	struct mm mm;
	struct fdtable *files;
	char *exe;		/* guest path of the running program (/proc/self/exe) */
	int cwd_fd;		/* host O_PATH fd of the working directory (inside the root) */
	struct pvx_regs regs;
	uint64_t clear_child_tid;
	uint64_t robust_list;
	struct sigaction_rec {
		uint64_t handler, flags, restorer, mask;
	} sigactions[64];
	uint64_t sigmask;
	uint64_t sigpending;	/* sent while blocked (syscalls/sys_signal.c) */
	bool exiting;
	int exit_status;	/* wait status: (code << 8) or signal number */
};

/* Act on pending signals the mask no longer blocks (syscalls/sys_signal.c). */
void signal_unblocked(struct task *t);

/* Strace-style line for a trapped syscall (sentry/strace.c). */
void strace_enter(struct task *t, long nr, const long a[6]);
void strace_exit(struct task *t, long nr, const long a[6], long ret);

#endif

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What clone(2) lets tasks share beyond a thread group: the fd table
 * (CLONE_FILES), the working directory and umask (CLONE_FS) and the signal
 * dispositions (CLONE_SIGHAND), each counted by its users, and their
 * unsharing by unshare(2), close_range(CLOSE_RANGE_UNSHARE) and execve
 * (sentry/kernel/fs_share.c). All under the sentry lock.
 */
#ifndef PVX_FS_SHARE_H
#define PVX_FS_SHARE_H

#include "pvx/task.h"

/* A new fs_struct owning host fd cwd_fd; NULL when out of memory (cwd_fd is then not closed). */
struct fs_struct *fs_alloc(int cwd_fd, unsigned umask);
/* A new signal-disposition table, all SIG_DFL; NULL when out of memory. */
struct sighand *sighand_alloc(void);
/* p's dispositions become sh (a reference the caller hands over); p's old ones are let go. */
void sighand_set(struct process *p, struct sighand *sh);
/* The process is freed: its dispositions lose a user. */
void sighand_put(struct sighand *sh);

/*
 * copy_files, copy_fs and copy_sighand of copy_process(): new task c (a
 * thread of t's process or the leader of a new one) shares t's fd table,
 * fs and, for a new process with CLONE_SIGHAND, dispositions where flags
 * say, else gets copies. 0 or -ENOMEM (c then holds what it got so far,
 * which task_drop_shared lets go).
 */
long task_clone_shared(struct task *c, struct task *t, unsigned long flags) __must_check;
/* The task is done with its fd table and fs (exit_files, exit_fs): the last user closes them. */
void task_drop_shared(struct task *t);
/*
 * unshare_fd and unshare_fs: t gets a copy of what it shares for each of
 * CLONE_FILES and CLONE_FS in flags (nothing is copied when it is the only
 * user). 0 or -ENOMEM, and then nothing changed.
 */
long task_unshare(struct task *t, unsigned long flags) __must_check;
/* execve's unshare_files (begin_new_exec) and unshare_sighand (de_thread): 0 or -ENOMEM. */
long exec_unshare(struct task *t) __must_check;

#endif

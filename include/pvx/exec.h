/* SPDX-License-Identifier: GPL-2.0 */
#ifndef PVX_EXEC_H
#define PVX_EXEC_H

#include "pvx/task.h"

/*
 * execve(2) for t: resolve path in the guest root, follow "#!" lines, load
 * the static ELF into a new address space and switch t to it. On failure t
 * is unchanged and *why (when not NULL) says why in words.
 */
long task_exec(struct task *t, const char *path, char *const argv[], char *const envp[],
	       const char **why) __must_check;

/*
 * execveat(2): path relative to guest fd dirfd; with AT_EMPTY_PATH and ""
 * the file dirfd refers to (fexecve), reopened through the file policy;
 * AT_SYMLINK_NOFOLLOW refuses a final symlink (ELOOP).
 */
long task_execveat(struct task *t, int dirfd, const char *path, int at_flags, char *const argv[],
		   char *const envp[], const char **why) __must_check;

/*
 * ETXTBSY, both ways (deny_write_access): a file some guest process runs
 * cannot be opened for writing or truncated (exec_running: is host_fd's
 * object such a file), and one a guest has open for writing cannot be run.
 */
bool exec_running(int host_fd);

#endif

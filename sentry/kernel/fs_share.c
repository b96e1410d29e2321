// SPDX-License-Identifier: GPL-2.0
/*
 * The fd table, fs_struct and signal dispositions that clone(2) shares
 * between tasks (CLONE_FILES, CLONE_FS, CLONE_SIGHAND), each counted by its
 * users as Linux's files_struct, fs_struct and sighand_struct are: a task
 * that exits, execs or unshares lets go of its reference, and the last
 * user frees the object (kernel/fork.c, fs/file.c, fs/fs_struct.c).
 */
#include <fcntl.h>
#include <linux/sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pvx/fs_share.h"

/* See pvx/fs_share.h. */
struct fs_struct *fs_alloc(int cwd_fd, unsigned umask)
{
	struct fs_struct *fs = calloc(1, sizeof(*fs));

	if (fs)
		*fs = (struct fs_struct){ 1, cwd_fd, umask };
	return fs;
}

/* copy_fs_struct(): the same directory (a host fd of its own) and umask, one user. */
static struct fs_struct *fs_copy(const struct fs_struct *old)
{
	int fd = fcntl(old->cwd_fd, F_DUPFD_CLOEXEC, 3);

	if (fd < 0)
		return NULL;
	struct fs_struct *fs = fs_alloc(fd, old->umask);
	if (!fs)
		close(fd);
	return fs;
}

static void fs_put(struct fs_struct *fs)
{
	if (!fs || --fs->users > 0)
		return;
	if (fs->cwd_fd >= 0)
		close(fs->cwd_fd);
	free(fs);
}

/* put_files_struct(): the last user closes every file (its record locks first). */
static void files_put(struct fdtable *files)
{
	if (!files || --files->users > 0)
		return;
	fdtable_release(files);
	free(files);
}

struct sighand *sighand_alloc(void)
{
	struct sighand *sh = calloc(1, sizeof(*sh));

	if (sh)
		sh->users = 1;
	return sh;
}

void sighand_put(struct sighand *sh)
{
	if (sh && --sh->users == 0)
		free(sh);
}

void sighand_set(struct process *p, struct sighand *sh)
{
	sighand_put(p->sighand);
	p->sighand = sh;
	p->sigactions = sh->action;
}

long task_clone_shared(struct task *c, struct task *t, unsigned long flags)
{
	if (flags & CLONE_FILES)
		(c->files = t->files)->users++;
	else if (!(c->files = fdtable_dup(t->files)))
		return -ENOMEM;
	if (flags & CLONE_FS)
		(c->fs = t->fs)->users++;
	else if (!(c->fs = fs_copy(t->fs)))
		return -ENOMEM;
	if (c->proc == t->proc)
		return 0;	/* a thread: its process's dispositions */
	if (flags & CLONE_SIGHAND) {
		t->proc->sighand->users++;
		sighand_set(c->proc, t->proc->sighand);
		return 0;
	}
	memcpy(c->proc->sigactions, t->proc->sigactions, sizeof(c->proc->sighand->action));
	return 0;
}

void task_drop_shared(struct task *t)
{
	files_put(t->files);
	t->files = NULL;
	fs_put(t->fs);
	t->fs = NULL;
}

long task_unshare(struct task *t, unsigned long flags)
{
	struct fdtable *files = NULL;
	struct fs_struct *fs = NULL;

	if (flags & CLONE_FILES)
		fd_pt_off(t->files, t->proc->as);	/* its mm would have two tables (seccomp_passthrough.md) */
	if ((flags & CLONE_FILES) && t->files->users > 1 && !(files = fdtable_dup(t->files)))
		return -ENOMEM;
	if ((flags & CLONE_FS) && t->fs->users > 1 && !(fs = fs_copy(t->fs))) {
		files_put(files);
		return -ENOMEM;
	}
	if (files) {
		files_put(t->files);
		t->files = files;
	}
	if (fs) {
		fs_put(t->fs);
		t->fs = fs;
	}
	return 0;
}

long exec_unshare(struct task *t)
{
	struct sighand *sh = NULL;

	if (t->proc->sighand->users > 1) {
		if (!(sh = sighand_alloc()))
			return -ENOMEM;
		memcpy(sh->action, t->proc->sigactions, sizeof(sh->action));
	}
	long r = task_unshare(t, CLONE_FILES);
	if (r < 0) {
		sighand_put(sh);
		return r;
	}
	if (sh)
		sighand_set(t->proc, sh);
	return 0;
}

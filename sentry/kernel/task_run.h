/* SPDX-License-Identifier: GPL-2.0 */
#ifndef PVX_TASK_RUN_H
#define PVX_TASK_RUN_H

#include "pvx/task.h"

/* Run t until it exits (sentry lock held); returns its wait status (code << 8, or a signal number). */
int task_run(struct task *t);
void task_fatal(struct task *t, const char *why);

/* What the first task execs (set up by main). */
struct task_start {
	const char *path;
	char **argv, **envp;
};

/* pthread entry of every task: fork setup or first exec, then task_run. */
void *task_thread(void *arg);

#endif

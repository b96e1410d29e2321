/* SPDX-License-Identifier: GPL-2.0 */
#ifndef PVX_TASK_RUN_H
#define PVX_TASK_RUN_H

#include "pvx/task.h"

/* Run t until it exits; returns its wait status (code << 8, or a signal number). */
int task_run(struct task *t);
void task_fatal(struct task *t, const char *why);

#endif

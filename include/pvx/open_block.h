/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Opens that may wait for something the guest controls (a FIFO's other
 * end), made with the sentry lock dropped and cut short by a signal
 * (-ERESTARTSYS), as Linux's fifo_open(); see sentry/fs/open_block.c. The
 * caller holds the sentry lock and has checked its policy on the object:
 * these functions open what they are given, nothing else.
 */
#ifndef PVX_OPEN_BLOCK_H
#define PVX_OPEN_BLOCK_H

#include "pvx/task.h"

/*
 * Open the object of host fd (an O_PATH fd, or any) anew with the guest's
 * open flags, through /proc/self/fd/N; a host fd or -errno. fd must stay
 * open while the lock is dropped (a local fd, or hold a file reference).
 */
long open_reopen(struct task *t, int fd, int flags) __must_check;

#endif

/* SPDX-License-Identifier: GPL-2.0 */
#ifndef PVX_INTERRUPT_H
#define PVX_INTERRUPT_H

/*
 * Host calls that a kick (PVX_SIG_INTERRUPT to the sentry thread) cannot
 * miss; see sentry/host/interrupt.c. Between intr_arm() and intr_disarm(), a
 * kick that arrived after intr_arm() makes intr_syscall() return -EINTR,
 * whether it came before the call or during it.
 */
void intr_init(int sig);		/* install the handler, once */
void intr_arm(void);			/* under the sentry lock, after looking for pending signals */
void intr_disarm(void);
long intr_syscall(long nr, const long a[6]);	/* the result, or -errno */

#endif

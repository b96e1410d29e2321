/* SPDX-License-Identifier: GPL-2.0 */
#ifndef PVX_TIMER_H
#define PVX_TIMER_H

#include <stdint.h>
#include "pvx/common.h"

uint64_t timer_now_ns(void);
/* A task's itimer_deadline changed: (re)arm the timer thread (sentry lock held). */
long timer_kick(void) __must_check;

#endif

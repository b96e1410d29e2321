/* SPDX-License-Identifier: GPL-2.0 */
/* The sandbox's network (sentry/host/netns.c). */
#ifndef PVX_NETNS_H
#define PVX_NETNS_H

#include <stdbool.h>

#include "pvx/common.h"

/*
 * --network=none (host false): move pvx into a network namespace of its own
 * with only loopback, up, before any thread or stub exists (they inherit it):
 * as root a new network namespace; otherwise a user namespace mapping only
 * pvx's own uid and gid, with a network namespace in it, and every capability
 * the user namespace gave dropped again. When that cannot be done, say why on
 * stderr and set sandbox.net_blocked: the guest then gets no AF_INET sockets
 * (EACCES), never the host's network. --network=host: nothing to do.
 */
void netns_setup(bool host);

#endif

/* SPDX-License-Identifier: GPL-2.0 */
/* The sandbox's UTS names: its host and domain name (sentry/kernel/uts.c). */
#ifndef PVX_UTS_H
#define PVX_UTS_H

#include <stddef.h>

#define PVX_UTS_LEN 64	/* __NEW_UTS_LEN */

/* The names as uname(2) and /proc/sys/kernel/{hostname,domainname} give them. */
const char *uts_nodename(void);
const char *uts_domainname(void);
enum { UTS_NODENAME, UTS_DOMAINNAME };

#endif

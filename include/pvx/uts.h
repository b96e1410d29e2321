/* SPDX-License-Identifier: GPL-2.0 */
/* The sandbox's UTS names: its host and domain name (sentry/kernel/uts.c). */
#ifndef PVX_UTS_H
#define PVX_UTS_H

#include <stddef.h>

#define PVX_UTS_LEN 64	/* __NEW_UTS_LEN */

/* The names as uname(2) and /proc/sys/kernel/{hostname,domainname} give them. */
const char *uts_nodename(void);
const char *uts_domainname(void);
/* sethostname/setdomainname: len bytes of name (no NUL needed); -EINVAL past PVX_UTS_LEN. */
long uts_set(int which, const char *name, size_t len) __attribute__((warn_unused_result));
enum { UTS_NODENAME, UTS_DOMAINNAME };

#endif

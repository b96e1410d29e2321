// SPDX-License-Identifier: GPL-2.0
/*
 * The sandbox's one UTS namespace: "pvx" and "(none)" at start, as a fresh
 * UTS namespace of runsc's. Every guest process shares it, so a change by
 * sethostname(2) is seen by all of them and by nobody on the host.
 */
#include <errno.h>
#include <string.h>

#include "pvx/uts.h"

static char names[2][PVX_UTS_LEN + 1] = { "pvx", "(none)" };

const char *uts_nodename(void)
{
	return names[UTS_NODENAME];
}

const char *uts_domainname(void)
{
	return names[UTS_DOMAINNAME];
}

/* See pvx/uts.h: the name is copied with its length, as the kernel's memcpy + NUL. */
long uts_set(int which, const char *name, size_t len)
{
	if ((which != UTS_NODENAME && which != UTS_DOMAINNAME) || len > PVX_UTS_LEN)
		return -EINVAL;
	memcpy(names[which], name, len);
	names[which][len] = 0;
	return 0;
}

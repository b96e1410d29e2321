// SPDX-License-Identifier: GPL-2.0
/*
 * The sandbox's one UTS namespace: "pvx" and "(none)" at start, as a fresh
 * UTS namespace of runsc's, shared by every guest process. No guest holds
 * CAP_SYS_ADMIN (capget), so sethostname(2) is EPERM and the names stay.
 */
#include "pvx/uts.h"

static const char names[2][PVX_UTS_LEN + 1] = { "pvx", "(none)" };

const char *uts_nodename(void)
{
	return names[UTS_NODENAME];
}

const char *uts_domainname(void)
{
	return names[UTS_DOMAINNAME];
}

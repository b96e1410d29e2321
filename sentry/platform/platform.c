// SPDX-License-Identifier: GPL-2.0
/* Choosing a platform: by name, or "auto" = the first usable in preference order. */
#include <stdio.h>
#include <string.h>

#include "pvx/log.h"
#include "platform.h"

/* Preference order for "auto": fastest first. */
static const struct platform_ops *const platforms[] = {
	&platform_vmexec,
	&platform_seccomp,
	&platform_ptrace,
};

/* `pvx platforms`: which platforms this kernel can run, in "auto" order. */
int platform_list(void)
{
	for (size_t i = 0; i < ARRAY_SIZE(platforms); i++) {
		long r = platforms[i]->probe();
		printf("%-8s %s%s\n", platforms[i]->name, r ? "unavailable: " : "available",
		       r ? strerror((int)-r) : "");
	}
	return 0;
}

const struct platform_ops *platform_select(const char *name)
{
	bool any = !strcmp(name, "auto");

	for (size_t i = 0; i < ARRAY_SIZE(platforms); i++) {
		const struct platform_ops *p = platforms[i];
		if (!any && strcmp(name, p->name))
			continue;
		long r = p->probe();
		if (!r)
			return p;
		if (!any) {
			pr_err("platform %s is not usable on this kernel: %s", name, strerror((int)-r));
			return NULL;
		}
	}
	if (any)
		pr_err("no usable platform");
	else
		pr_err("unknown platform '%s' (known: auto, vmexec, seccomp, ptrace)", name);
	return NULL;
}

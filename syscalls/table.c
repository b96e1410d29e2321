// SPDX-License-Identifier: GPL-2.0
/* The syscall table, generated from table.def, and the dispatcher. */
#include <stdio.h>

#include "pvx/log.h"
#include "syscalls/syscalls.h"

const struct syscall_desc syscall_table[PVX_NR_SYSCALLS] = {
#define SYSCALL(nr, name, args, sup, note) [nr] = { #name, sys_##name, args, sup, note },
#define NOSYS(nr, name) [nr] = { #name, NULL, "", SUP_NONE, "" },
#include "syscalls/table.def"
#undef SYSCALL
#undef NOSYS
};

/* Is nr one the table emulates? */
static bool syscall_implemented(long nr)
{
	return nr >= 0 && nr < PVX_NR_SYSCALLS && syscall_table[nr].fn;
}

const struct syscall_ops syscall_ops = { syscall_dispatch, strace_enter, strace_exit, syscall_implemented };

/* The table's name for nr, or syscall_NR for a number it lacks. */
const char *syscall_name(long nr)
{
	static char buf[32];

	if (nr >= 0 && nr < PVX_NR_SYSCALLS && syscall_table[nr].name)
		return syscall_table[nr].name;
	snprintf(buf, sizeof(buf), "syscall_%ld", nr);
	return buf;
}

/* Dispatch through the table; ENOSYS, named once under --debug/--strace, for the rest. */
long syscall_dispatch(struct task *t, long nr, const long a[6])
{
	static unsigned char warned[PVX_NR_SYSCALLS];

	if (nr >= 0 && nr < PVX_NR_SYSCALLS && syscall_table[nr].fn)
		return syscall_table[nr].fn(t, a);
	/* Named once under --debug/--strace, as DESIGN.md asks. */
	if ((sandbox.strace || pvx_log_level >= LOG_DEBUG) &&
	    (nr < 0 || nr >= PVX_NR_SYSCALLS || !warned[nr])) {
		if (nr >= 0 && nr < PVX_NR_SYSCALLS)
			warned[nr] = 1;
		pr_warn("unsupported syscall %s (%ld): returning ENOSYS", syscall_name(nr), nr);
	}
	return -ENOSYS;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * --strace: one line per guest syscall on stderr, "[pid N] name(args) = ret",
 * with argument kinds from the syscall table (syscalls/table.def).
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>

#include "pvx/task.h"
#include "syscalls/syscalls.h"

static void print_arg(FILE *f, struct task *t, char kind, long v)
{
	char s[64];
	long n;

	switch (kind) {
	case 'd':
		fprintf(f, "%ld", v);
		break;
	case 'u':
		fprintf(f, "%lu", (unsigned long)v);
		break;
	case 'o':
		fprintf(f, "0%lo", (unsigned long)v);
		break;
	case 'f':
		if ((int)v == AT_FDCWD)
			fputs("AT_FDCWD", f);
		else
			fprintf(f, "%d", (int)v);
		break;
	case 's':
		n = strncpy_from_guest(t->mm, s, (uint64_t)v, sizeof(s));
		if (n >= 0)
			fprintf(f, "\"%s\"", s);
		else if (n == -ENAMETOOLONG)
			fprintf(f, "\"%.*s\"...", (int)sizeof(s), s);
		else
			fprintf(f, "%#lx", (unsigned long)v);
		break;
	default:
		fprintf(f, v ? "%#lx" : "NULL", (unsigned long)v);
		break;
	}
}

void strace_enter(struct task *t, long nr, const long a[6])
{
	const char *kinds = nr >= 0 && nr < PVX_NR_SYSCALLS ? syscall_table[nr].args : NULL;

	fprintf(stderr, "[pid %d] %s(", t->tid, syscall_name(nr));
	if (!kinds || !syscall_table[nr].fn) {
		/* Unsupported: show the raw registers. */
		for (int i = 0; i < 6; i++)
			fprintf(stderr, "%s%#lx", i ? ", " : "", (unsigned long)a[i]);
	} else {
		for (int i = 0; kinds[i] && i < 6; i++) {
			if (i)
				fputs(", ", stderr);
			print_arg(stderr, t, kinds[i], a[i]);
		}
	}
	fputs(")", stderr);
}

void strace_exit(struct task *t, long nr, const long a[6], long ret)
{
	(void)t, (void)nr, (void)a;
	if (ret < 0 && ret >= -4095)
		fprintf(stderr, " = -1 %s (%s)\n", strerrorname_np((int)-ret) ?: "E?", strerror((int)-ret));
	else if (ret > 0xffff)
		fprintf(stderr, " = %#lx\n", (unsigned long)ret);
	else
		fprintf(stderr, " = %ld\n", ret);
}

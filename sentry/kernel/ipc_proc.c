// SPDX-License-Identifier: GPL-2.0
/*
 * /proc's view of the IPC namespace: /proc/sysvipc/{shm,sem,msg} (what
 * ipcs(1) and LTP's libnewipc read to count the ids in use) and the limits
 * of /proc/sys/kernel, which are Linux's defaults and read-only here.
 */
#include <string.h>

#include "pvx/ipc.h"

const char *const ipc_proc_kernel_names[] = { "msgmax", "msgmnb", "msgmni", "sem", "shmall", "shmmax", "shmmni",
					      NULL };

static void print_limit(FILE *out, const char *name)
{
	if (!strcmp(name, "msgmax"))
		fprintf(out, "%d\n", PVX_MSGMAX);
	else if (!strcmp(name, "msgmnb"))
		fprintf(out, "%d\n", PVX_MSGMNB);
	else if (!strcmp(name, "msgmni"))
		fprintf(out, "%d\n", PVX_MSGMNI);
	else if (!strcmp(name, "sem"))
		fprintf(out, "%d\t%d\t%d\t%d\n", PVX_SEMMSL, PVX_SEMMNS, PVX_SEMOPM, PVX_SEMMNI);
	else if (!strcmp(name, "shmall"))
		fprintf(out, "%lu\n", PVX_SHMALL);
	else if (!strcmp(name, "shmmax"))
		fprintf(out, "%lu\n", PVX_SHMMAX);
	else
		fprintf(out, "%d\n", PVX_SHMMNI);
}

long ipc_proc_text(const char *rel, char **text, size_t *len)
{
	long r = -ENOENT;
	FILE *out = open_memstream(text, len);

	if (!out)
		return -ENOMEM;
	if (!strncmp(rel, "/sys/kernel/", 12)) {
		for (const char *const *n = ipc_proc_kernel_names; *n; n++)
			if (!strcmp(rel + 12, *n)) {
				print_limit(out, *n);
				r = 0;
			}
	} else if (!strcmp(rel, "/sysvipc/shm")) {
		r = shm_proc_text(out);
	} else if (!strcmp(rel, "/sysvipc/sem")) {
		r = sem_proc_text(out);
	} else if (!strcmp(rel, "/sysvipc/msg")) {
		r = msg_proc_text(out);
	}
	if (fclose(out))
		r = r ? r : -ENOMEM;
	if (r) {
		free(*text);
		*text = NULL;
	}
	return r;
}

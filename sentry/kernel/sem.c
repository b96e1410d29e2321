// SPDX-License-Identifier: GPL-2.0
/* System V semaphores (Linux's ipc/sem.c): not yet; the syscalls are ENOSYS and the table empty. */
#include "pvx/ipc.h"

long sem_proc_text(FILE *out)
{
	fprintf(out, "       key      semid perms      nsems   uid   gid  cuid  cgid      otime      ctime\n");
	return 0;
}

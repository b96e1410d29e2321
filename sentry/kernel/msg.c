// SPDX-License-Identifier: GPL-2.0
/* System V message queues (Linux's ipc/msg.c): not yet; the syscalls are ENOSYS and the table empty. */
#include "pvx/ipc.h"

long msg_proc_text(FILE *out)
{
	fprintf(out, "       key      msqid perms      cbytes       qnum lspid lrpid   uid   gid  cuid  cgid"
		     "      stime      rtime      ctime\n");
	return 0;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * System V IPC syscalls: argument decoding and the copies of the structs
 * the guest passes; the namespace and its objects are sentry/kernel/ipc.c,
 * shm.c, sem.c and msg.c.
 */
#include "pvx/ipc.h"
#include "syscalls/syscalls.h"

long sys_shmget(struct task *t, const long a[6])
{
	return shm_get(t, (int)a[0], (uint64_t)a[1], (int)a[2]);
}

/* shmat(2): the address, or -errno. */
long sys_shmat(struct task *t, const long a[6])
{
	uint64_t addr = 0;
	long r = shm_attach(t, (int)a[0], (uint64_t)a[1], (int)a[2], &addr);

	return r ? r : (long)addr;
}

long sys_shmdt(struct task *t, const long a[6])
{
	return shm_detach(t, (uint64_t)a[0]);
}

/* The size shmctl's cmd reads or writes at buf (0: none). */
static size_t shmctl_size(int cmd)
{
	switch (cmd) {
	case IPC_STAT: case IPC_SET: case SHM_STAT: case SHM_STAT_ANY: return sizeof(struct shmid64_ds);
	case IPC_INFO: return sizeof(struct shminfo64);
	case SHM_INFO: return sizeof(struct shm_info);
	default: return 0;
	}
}

/* shmctl(2): IPC_SET's struct is read first ("EFAULT ... buf is not accessible"), the others written after. */
long sys_shmctl(struct task *t, const long a[6])
{
	int id = (int)a[0], cmd = (int)a[1];
	uint64_t buf = (uint64_t)a[2];
	union { struct shmid64_ds ds; struct shminfo64 info; struct shm_info sinfo; } u = { 0 };
	size_t size = shmctl_size(cmd);
	long r;

	if (cmd == IPC_SET && id >= 0 && (r = copy_from_guest(t->mm, &u.ds, buf, sizeof(u.ds))))
		return r;
	r = shm_ctl(t, id, cmd, &u);
	if (r >= 0 && cmd != IPC_SET && size && copy_to_guest(t->mm, buf, &u, size))
		return -EFAULT;
	return r;
}

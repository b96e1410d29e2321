// SPDX-License-Identifier: GPL-2.0
/*
 * System V IPC syscalls: argument decoding and the copies of the structs
 * the guest passes; the namespace and its objects are sentry/kernel/ipc.c,
 * shm.c, sem.c and msg.c.
 */
#include "pvx/ipc.h"
#include "pvx/timer.h"
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

long sys_semget(struct task *t, const long a[6])
{
	return sem_get(t, (int)a[0], (int)a[1], (int)a[2]);
}

/*
 * semtimedop(2), as ksys_semtimedop(): the timeout is read first (EFAULT),
 * then "EINVAL nsops ... or semid less than zero", "E2BIG ... nsops is
 * greater than SEMOPM", the operations (EFAULT), the timeout's validity.
 */
long sys_semtimedop(struct task *t, const long a[6])
{
	struct sembuf ops[PVX_SEMOPM];
	struct timespec ts;
	uint64_t n = (unsigned)a[2], until = 0;	/* "unsigned int nsops" */
	int id = (int)a[0];
	long r;

	if (a[3] && (r = copy_from_guest(t->mm, &ts, (uint64_t)a[3], sizeof(ts))))
		return r;
	if (n < 1 || id < 0)
		return -EINVAL;
	if (n > PVX_SEMOPM)
		return -E2BIG;
	if ((r = copy_from_guest(t->mm, ops, (uint64_t)a[1], n * sizeof(ops[0]))))
		return r;
	if (a[3]) {
		if (ts.tv_sec < 0 || ts.tv_nsec < 0 || ts.tv_nsec >= 1000000000L)
			return -EINVAL;
		uint64_t now = timer_now_ns(), rel = (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
		until = (uint64_t)ts.tv_sec > UINT64_MAX / 2000000000ULL || rel > UINT64_MAX - now ? 0 : now + rel;
	}
	return sem_op(t, id, ops, (unsigned)n, until);
}

long sys_semop(struct task *t, const long a[6])
{
	const long b[6] = { a[0], a[1], a[2], 0 };

	return sys_semtimedop(t, b);
}

long sys_semctl(struct task *t, const long a[6])
{
	return sem_ctl(t, (int)a[0], (int)a[1], (int)a[2], (uint64_t)a[3]);
}

long sys_msgget(struct task *t, const long a[6])
{
	return msg_get(t, (int)a[0], (int)a[1]);
}

long sys_msgsnd(struct task *t, const long a[6])
{
	return msg_snd(t, (int)a[0], (uint64_t)a[1], (uint64_t)a[2], (int)a[3]);
}

long sys_msgrcv(struct task *t, const long a[6])
{
	return msg_rcv(t, (int)a[0], (uint64_t)a[1], (uint64_t)a[2], a[3], (int)a[4]);
}

long sys_msgctl(struct task *t, const long a[6])
{
	return msg_ctl(t, (int)a[0], (int)a[1], (uint64_t)a[2]);
}

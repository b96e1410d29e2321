/* SPDX-License-Identifier: GPL-2.0 */
/*
 * System V IPC: the sandbox's one IPC namespace (sentry/kernel/ipc.c) and
 * its shared memory, semaphores and message queues (shm.c, sem.c, msg.c),
 * as Linux's ipc/ has them. All under the sentry lock. The structs the
 * guest reads and writes are the kernel's (linux/shm.h, sem.h, msg.h);
 * syscalls/sys_ipc.c copies them in and out.
 */
#ifndef PVX_IPC_H
#define PVX_IPC_H

#include <stdio.h>
#include <linux/ipc.h>
#include <linux/msg.h>
#include <linux/sem.h>
#include <linux/shm.h>
#include "pvx/task.h"

/* Linux's defaults (include/uapi/linux/{shm,sem,msg}.h), which /proc/sys/kernel shows. */
#define PVX_SHMMAX (~0UL - (1UL << 24))
#define PVX_SHMALL (~0UL - (1UL << 24))
#define PVX_SHMMNI 4096
#define PVX_SEMMSL 32000
#define PVX_SEMMNS (PVX_SEMMSL * PVX_SEMMNI)
#define PVX_SEMOPM 500
#define PVX_SEMMNI 32000
#define PVX_SEMVMX 32767
#define PVX_SEMAEM PVX_SEMVMX
#define PVX_MSGMAX 8192
#define PVX_MSGMNB 16384
#define PVX_MSGMNI 32000
#define PVX_IPCMNI 32768	/* ids are index + seq * IPCMNI */

/* The kernel's own (linux/shm.h keeps them for the kernel): in shm_perm.mode. */
#define SHM_DEST 01000
#define SHM_LOCKED 02000
#define S_IRUGO 0444
#define S_IWUGO 0222
#define S_IXUGO 0111

/* What every IPC object starts with (Linux's kern_ipc_perm). */
struct ipc_obj {
	int key, id, seq;
	unsigned uid, gid, cuid, cgid, mode;
};

/* One kind's table of objects (Linux's struct ipc_ids). */
struct ipc_ids {
	struct ipc_obj **slot;	/* by index, PVX_IPCMNI of them once used */
	int in_use, max_idx, last_idx, seq;
	int limit;		/* SHMMNI, SEMMNI, MSGMNI */
};

/* ipcget(): key and flags to an existing object (>= 0 index... see ipc.c), -ENOENT, -EEXIST, -EACCES. */
struct ipc_obj *ipc_find_key(struct ipc_ids *ids, int key);
/* Linux's ipcperms(): may the caller access o for the rwx bits of flag (S_IRUGO...)? 0 or -EACCES. */
long ipc_perms(const struct ipc_obj *o, int flag) __must_check;
/* IPC_SET/IPC_RMID: the caller is the owner or creator (no CAP_SYS_ADMIN in the sandbox but for uid 0). */
long ipc_owner(const struct ipc_obj *o) __must_check;
/* Enter o (its key and mode set) in ids: its id; -ENOSPC when the table is full. */
long ipc_add(struct ipc_ids *ids, struct ipc_obj *o, int key, int mode) __must_check;
void ipc_del(struct ipc_ids *ids, struct ipc_obj *o);
/* The object of id, or NULL (EINVAL) for a removed, forged or out-of-range one. */
struct ipc_obj *ipc_lookup(struct ipc_ids *ids, int id);
/* The object at index idx (the *_STAT commands), or NULL. */
struct ipc_obj *ipc_at(struct ipc_ids *ids, int idx);
/* The guest's struct ipc64_perm of o; IPC_SET's change of uid, gid and mode from in. */
void ipc_fill_perm(const struct ipc_obj *o, struct ipc64_perm *out);
void ipc_set_perm(struct ipc_obj *o, const struct ipc64_perm *in);
/* The highest index in use, -1 when none (IPC_INFO's return). */
int ipc_max_idx(const struct ipc_ids *ids);
/* Wall-clock seconds, for the objects' times. */
long ipc_now(void);

/* Shared memory (sentry/kernel/shm.c). */
long shm_get(struct task *t, int key, uint64_t size, int flags) __must_check;
long shm_attach(struct task *t, int id, uint64_t addr, int flags, uint64_t *out) __must_check;
long shm_detach(struct task *t, uint64_t addr) __must_check;
/* shmctl: cmd's struct (shmid64_ds, shminfo64 or shm_info) in and out through buf. */
long shm_ctl(struct task *t, int id, int cmd, void *buf) __must_check;

/* Semaphores (sentry/kernel/sem.c). */
long sem_get(struct task *t, int key, int nsems, int flags) __must_check;
/* semtimedop: ops copied in, until CLOCK_MONOTONIC ns (0: no timeout). */
long sem_op(struct task *t, int id, struct sembuf *ops, unsigned nsops, uint64_t until) __must_check;
/* semctl: arg is the union semun's value; GETALL/SETALL/IPC_* copy through the guest pointer in it. */
long sem_ctl(struct task *t, int id, int num, int cmd, uint64_t arg) __must_check;
/* A process ends: its SEM_UNDO adjustments are applied (Linux's exit_sem). */
void sem_exit(struct process *p);

/* Message queues (sentry/kernel/msg.c). */
long msg_get(struct task *t, int key, int flags) __must_check;
long msg_snd(struct task *t, int id, uint64_t msgp, uint64_t size, int flags) __must_check;
long msg_rcv(struct task *t, int id, uint64_t msgp, uint64_t size, long type, int flags) __must_check;
long msg_ctl(struct task *t, int id, int cmd, uint64_t buf) __must_check;

/* Each kind's lines of /proc/sysvipc (sentry/kernel/ipc_proc.c prints them). */
long shm_proc_text(FILE *out);
long sem_proc_text(FILE *out);
long msg_proc_text(FILE *out);

/* /proc/sysvipc/{shm,sem,msg} and /proc/sys/kernel's IPC limits: the text of rel (after /proc), or -ENOENT. */
long ipc_proc_text(const char *rel, char **out, size_t *len) __must_check;
extern const char *const ipc_proc_kernel_names[];	/* the /proc/sys/kernel entries, NULL-ended */

#endif

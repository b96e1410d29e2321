// SPDX-License-Identifier: GPL-2.0
/*
 * The sandbox's System V IPC namespace: for each kind (shm, sem, msg) a
 * table of objects by index, ids formed as Linux forms them (index + seq *
 * 32768, the index picked cyclically as idr_alloc_cyclic() does in
 * ipc_idr_alloc(), so that a removed object's id is not soon reused), keys,
 * and the permission checks of ipc/util.c against the guest's one identity
 * (sandbox.uid/gid; uid 0 has CAP_IPC_OWNER, as root's file access has
 * its capabilities).
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pvx/ipc.h"

#define IPC_MIN_CYCLE 64	/* RADIX_TREE_MAP_SIZE: ipc_min_cycle */
#define IPC_SEQ_MAX (0x7fffffff / PVX_IPCMNI)

long ipc_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec;
}

static bool capable(void)
{
	return sandbox.uid == 0;
}

struct ipc_obj *ipc_find_key(struct ipc_ids *ids, int key)
{
	for (int i = 0; i <= ipc_max_idx(ids); i++)
		if (ids->slot[i] && ids->slot[i]->key == key)
			return ids->slot[i];
	return NULL;
}

/* ipcperms(): "is there some bit set in requested_mode but not in granted_mode?" */
long ipc_perms(const struct ipc_obj *o, int flag)
{
	int requested = (flag >> 6) | (flag >> 3) | flag;
	unsigned granted = o->mode;

	if (sandbox.uid == o->cuid || sandbox.uid == o->uid)
		granted >>= 6;
	else if (sandbox.gid == o->cgid || sandbox.gid == o->gid)
		granted >>= 3;
	return (requested & ~granted & 0007) && !capable() ? -EACCES : 0;
}

/* ipcctl_obtain_check(): "the caller is the creator or owner, or privileged". */
long ipc_owner(const struct ipc_obj *o)
{
	return sandbox.uid == o->cuid || sandbox.uid == o->uid || capable() ? 0 : -EPERM;
}

long ipc_add(struct ipc_ids *ids, struct ipc_obj *o, int key, int mode)
{
	if (!ids->slot) {
		ids->slot = calloc(PVX_IPCMNI, sizeof(*ids->slot));
		if (!ids->slot)
			return -ENOMEM;
		ids->max_idx = ids->last_idx = -1;
	}
	if (ids->in_use >= ids->limit)
		return -ENOSPC;
	int max = MIN(MAX(ids->in_use * 3 / 2, IPC_MIN_CYCLE), ids->limit);
	int idx = -1;
	/* idr_alloc_cyclic(): the first free index after the last one given, wrapping at max. */
	for (int n = 0; n < max; n++) {
		int i = (ids->last_idx + 1 + n) % max;
		if (!ids->slot[i]) {
			idx = i;
			break;
		}
	}
	if (idx < 0)
		return -ENOSPC;
	if (idx <= ids->last_idx && ++ids->seq >= IPC_SEQ_MAX)
		ids->seq = 0;
	ids->last_idx = idx;
	o->key = key;
	o->mode = (unsigned)mode & 0777;
	o->uid = o->cuid = sandbox.uid;
	o->gid = o->cgid = sandbox.gid;
	o->seq = ids->seq;
	o->id = o->seq * PVX_IPCMNI + idx;
	ids->slot[idx] = o;
	ids->in_use++;
	ids->max_idx = MAX(ids->max_idx, idx);
	return o->id;
}

void ipc_del(struct ipc_ids *ids, struct ipc_obj *o)
{
	int idx = o->id % PVX_IPCMNI;

	ids->slot[idx] = NULL;
	ids->in_use--;
	while (ids->max_idx >= 0 && !ids->slot[ids->max_idx])
		ids->max_idx--;
}

struct ipc_obj *ipc_at(struct ipc_ids *ids, int idx)
{
	return ids->slot && idx >= 0 && idx < PVX_IPCMNI ? ids->slot[idx] : NULL;
}

/* ipc_obtain_object_check(): the index's object, if its sequence number is the id's. */
struct ipc_obj *ipc_lookup(struct ipc_ids *ids, int id)
{
	if (id < 0)
		return NULL;
	struct ipc_obj *o = ipc_at(ids, id % PVX_IPCMNI);

	return o && o->id == id ? o : NULL;
}

int ipc_max_idx(const struct ipc_ids *ids)
{
	return ids->slot ? ids->max_idx : -1;
}

void ipc_fill_perm(const struct ipc_obj *o, struct ipc64_perm *out)
{
	*out = (struct ipc64_perm){ .key = o->key, .uid = o->uid, .gid = o->gid, .cuid = o->cuid,
				    .cgid = o->cgid, .mode = o->mode, .seq = (unsigned short)o->seq };
}

/* ipc_update_perm(): "out->mode = (out->mode & ~S_IRWXUGO) | (in->mode & S_IRWXUGO)". */
void ipc_set_perm(struct ipc_obj *o, const struct ipc64_perm *in)
{
	o->uid = in->uid;
	o->gid = in->gid;
	o->mode = (o->mode & ~0777u) | (in->mode & 0777);
}

// SPDX-License-Identifier: GPL-2.0
/*
 * NUMA policies (pvx/numa.h) as mm/mempolicy.c of Linux 6.12 makes them on
 * a machine whose only node is node 0: node_states[N_MEMORY] and
 * cpuset_current_mems_allowed are {0}, so a policy's nodes are {0} or
 * nothing, and no page ever has another node to move to. What a program
 * can observe is kept: the mode and flags, the nodemask it gave with
 * MPOL_F_STATIC_NODES/RELATIVE_NODES, the VMAs mbind split.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "pvx/numa.h"

/*
 * The interned policies. A guest could ask for as many distinct ones as
 * there are nodemasks (2^1024 with static nodes): the table is bounded,
 * and past it a new policy is ENOMEM, as an allocation failure of Linux.
 */
#define MPOL_INTERN_MAX 4096
static const struct mpol **interned;
static size_t n_interned;
static pthread_mutex_t intern_lock = PTHREAD_MUTEX_INITIALIZER;

static long intern(const struct mpol *want, const struct mpol **out)
{
	long r = 0;

	pthread_mutex_lock(&intern_lock);
	for (size_t i = 0; i < n_interned; i++)
		if (!memcmp(interned[i], want, sizeof(*want))) {
			*out = interned[i];
			goto out;
		}
	r = -ENOMEM;
	if (n_interned == MPOL_INTERN_MAX)
		goto out;
	if (!interned && !(interned = calloc(MPOL_INTERN_MAX, sizeof(*interned))))
		goto out;
	struct mpol *p = malloc(sizeof(*p));
	if (!p)
		goto out;
	*p = *want;
	interned[n_interned++] = p;
	*out = p;
	r = 0;
out:
	pthread_mutex_unlock(&intern_lock);
	return r;
}

static bool empty(const uint64_t nodes[PVX_NODE_WORDS])
{
	for (int i = 0; i < PVX_NODE_WORDS; i++)
		if (nodes[i])
			return false;
	return true;
}

/* See pvx/numa.h: mpol_new(), then mpol_set_nodemask() with mems_allowed {0} and mpol_ops[].create. */
long mpol_make(int mode, unsigned flags, const uint64_t nodes[PVX_NODE_WORDS], const struct mpol **out)
{
	struct mpol p;
	bool none = empty(nodes);

	*out = NULL;
	if (mode == PVX_MPOL_DEFAULT)
		return none ? 0 : -EINVAL;
	if (mode == PVX_MPOL_PREFERRED && none) {
		if (flags & (PVX_MPOL_F_STATIC_NODES | PVX_MPOL_F_RELATIVE_NODES))
			return -EINVAL;
		mode = PVX_MPOL_LOCAL;	/* "local allocation" */
	} else if (mode == PVX_MPOL_LOCAL) {
		if (!none || (flags & (PVX_MPOL_F_STATIC_NODES | PVX_MPOL_F_RELATIVE_NODES)))
			return -EINVAL;
	} else if (none)
		return -EINVAL;
	memset(&p, 0, sizeof(p));
	p.mode = (unsigned short)mode;
	p.flags = (unsigned short)(flags & PVX_MPOL_MODE_FLAGS);
	p.home_node = -1;
	if (mode != PVX_MPOL_LOCAL) {
		/* mask2: RELATIVE folds any node onto node 0; otherwise nodes & {0}; create() wants it non-empty */
		bool node0 = flags & PVX_MPOL_F_RELATIVE_NODES ? true : (nodes[0] & 1);
		if (!node0)
			return -EINVAL;
		if (p.flags)	/* mpol_store_user_nodemask() */
			memcpy(p.user, nodes, sizeof(p.user));
	}
	return intern(&p, out);
}

long mpol_with_home(const struct mpol *p, int home, const struct mpol **out)
{
	struct mpol q = *p;

	q.home_node = home;
	return intern(&q, out);
}

uint64_t mpol_nodes(const struct mpol *p)
{
	if (!p)
		return 0;
	if (p->flags & PVX_MPOL_MODE_FLAGS)
		return p->user[0];
	return p->mode == PVX_MPOL_LOCAL ? 0 : 1;	/* pol->nodes: node 0 */
}

int mpol_mode(const struct mpol *p)
{
	return p ? p->mode | (p->flags & PVX_MPOL_MODE_FLAGS) : PVX_MPOL_DEFAULT;
}

/* queue_pages_test_walk()'s range checks, then mbind_range() on each VMA. */
long mm_mbind(struct mm *mm, uint64_t start, uint64_t end, const struct mpol *pol, bool discontig_ok)
{
	const struct vma *v = vma_first_above(&mm->vmas, start);

	if (!v || v->start >= end)
		return -EFAULT;	/* "whole range in hole" */
	if (!discontig_ok && !vma_range_mapped(&mm->vmas, start, end))
		return -EFAULT;
	return vma_set_policy(&mm->vmas, start, end, pol);
}

/* SYSCALL_DEFINE4(set_mempolicy_home_node)'s loop: VMAs without a policy are left alone. */
long mm_set_home_node(struct mm *mm, uint64_t start, uint64_t end, int node)
{
	long err = -ENOENT;

	for (const struct vma *v = vma_first_above(&mm->vmas, start); v && v->start < end;) {
		uint64_t stop = MIN(v->end, end), from = MAX(v->start, start);
		const struct mpol *old = v->pol, *new;
		if (old) {
			if (old->mode != PVX_MPOL_BIND && old->mode != PVX_MPOL_PREFERRED_MANY)
				return -EOPNOTSUPP;
			if ((err = mpol_with_home(old, node, &new)) || (err = vma_set_policy(&mm->vmas, from, stop, new)))
				return err;
		}
		v = stop < end ? vma_first_above(&mm->vmas, stop) : NULL;	/* v may be merged away */
	}
	return err;
}

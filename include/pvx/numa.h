/* SPDX-License-Identifier: GPL-2.0 */
/*
 * NUMA memory policies (mm/numa.c) of a sandbox that is Linux with
 * CONFIG_NUMA on a machine of one node, node 0: what set_mempolicy(2) and
 * mbind(2) set and get_mempolicy(2) reads back. Policies are interned: one
 * immutable object per distinct value, never freed, so that a task and its
 * VMAs hold plain pointers (copied by fork and by VMA splits) and two VMAs
 * of one policy merge as Linux's mpol_equal() lets them.
 */
#ifndef PVX_NUMA_H
#define PVX_NUMA_H

#include <stdint.h>

#include "pvx/mm.h"

/* MAX_NUMNODES of Debian's x86-64 kernels (CONFIG_NODES_SHIFT=10): the bits a nodemask argument may carry. */
#define PVX_MAX_NUMNODES 1024
#define PVX_NODE_WORDS (PVX_MAX_NUMNODES / 64)

enum { PVX_MPOL_DEFAULT, PVX_MPOL_PREFERRED, PVX_MPOL_BIND, PVX_MPOL_INTERLEAVE, PVX_MPOL_LOCAL,
       PVX_MPOL_PREFERRED_MANY, PVX_MPOL_WEIGHTED_INTERLEAVE, PVX_MPOL_MAX };
#define PVX_MPOL_F_STATIC_NODES (1 << 15)
#define PVX_MPOL_F_RELATIVE_NODES (1 << 14)
#define PVX_MPOL_F_NUMA_BALANCING (1 << 13)
#define PVX_MPOL_MODE_FLAGS (PVX_MPOL_F_STATIC_NODES | PVX_MPOL_F_RELATIVE_NODES | PVX_MPOL_F_NUMA_BALANCING)

/* Linux's struct mempolicy as get_mempolicy shows it: mode, mode flags, the nodemask given (user) when flags keep it. */
struct mpol {
	unsigned short mode, flags;
	int home_node;		/* set_mempolicy_home_node(2); -1: none */
	uint64_t user[PVX_NODE_WORDS];	/* w.user_nodemask when flags & PVX_MPOL_MODE_FLAGS, else 0 */
};

/*
 * mpol_new() + mpol_set_nodemask() for node 0 alone: the policy for mode
 * (without flags), flags and the nodemask read by get_nodes; *out is NULL
 * for MPOL_DEFAULT. -EINVAL as Linux (an empty nodemask once masked by the
 * nodes that exist, MPOL_LOCAL with nodes...), -ENOMEM past the intern
 * table's bound.
 */
long mpol_make(int mode, unsigned flags, const uint64_t nodes[PVX_NODE_WORDS], const struct mpol **out) __must_check;
/* The same policy with another home node. */
long mpol_with_home(const struct mpol *p, int home, const struct mpol **out) __must_check;
/* get_policy_nodemask(), or the user's nodemask when the flags keep it: word 0 is all a 1-node kernel copies out. */
uint64_t mpol_nodes(const struct mpol *p);
/* Does p report a mode of Linux's: the mode and its flags (MPOL_DEFAULT for NULL)? */
int mpol_mode(const struct mpol *p);

/*
 * do_mbind()'s range walk and mbind_range(): holes in [start, end) are
 * -EFAULT unless discontig_ok (MPOL_DEFAULT), and so is a range without
 * any VMA; then every mapped part of it gets pol.
 */
long mm_mbind(struct mm *mm, uint64_t start, uint64_t end, const struct mpol *pol, bool discontig_ok) __must_check;
/* set_mempolicy_home_node(2)'s walk: -ENOENT when no VMA in the range has a policy, -EOPNOTSUPP for one not BIND/PREFERRED_MANY. */
long mm_set_home_node(struct mm *mm, uint64_t start, uint64_t end, int node) __must_check;

#endif

// SPDX-License-Identifier: GPL-2.0
/*
 * The NUMA calls of Linux 6.12 with CONFIG_NUMA on a machine of one node,
 * node 0 (mm/mempolicy.c, mm/migrate.c): set_mempolicy(2), get_mempolicy(2),
 * mbind(2), set_mempolicy_home_node(2), migrate_pages(2), move_pages(2).
 * The argument checks and errnos are Linux's; the policies are kept
 * (mm/numa.c) per task and per VMA; with one node no page ever moves.
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include "pvx/cred.h"
#include "pvx/numa.h"
#include "syscalls/syscalls.h"

#define MPOL_F_NODE 1
#define MPOL_F_ADDR 2
#define MPOL_F_MEMS_ALLOWED 4
#define MPOL_MF_STRICT 1
#define MPOL_MF_MOVE 2
#define MPOL_MF_MOVE_ALL 4
#define CAP_SYS_NICE_ 23
#define NR_NODE_IDS 1	/* the highest possible node + 1 */
#define BITS 64

/* sanitize_mpol_flags(): the mode's flags apart, STATIC and RELATIVE exclusive, NUMA_BALANCING only for BIND and PREFERRED_MANY. */
static long sanitize(long arg, int *mode, unsigned *flags)
{
	int m = (int)arg;	/* an int on Linux's side, for mbind's unsigned long too */

	*flags = (unsigned)m & PVX_MPOL_MODE_FLAGS;
	m &= ~PVX_MPOL_MODE_FLAGS;
	if ((unsigned)m >= PVX_MPOL_MAX)
		return -EINVAL;
	if ((*flags & PVX_MPOL_F_STATIC_NODES) && (*flags & PVX_MPOL_F_RELATIVE_NODES))
		return -EINVAL;
	if ((*flags & PVX_MPOL_F_NUMA_BALANCING) && m != PVX_MPOL_BIND && m != PVX_MPOL_PREFERRED_MANY)
		return -EINVAL;
	*mode = m;
	return 0;
}

/* get_bitmap(): whole words from the guest, the last one masked to maxnode bits. */
static long get_bitmap(struct task *t, uint64_t *mask, uint64_t umask, uint64_t maxnode)
{
	size_t words = (maxnode + BITS - 1) / BITS;

	if (copy_from_guest(t->mm, mask, umask, words * sizeof(uint64_t)))
		return -EFAULT;
	if (maxnode % BITS)
		mask[words - 1] &= (1UL << (maxnode % BITS)) - 1;
	return 0;
}

/*
 * get_nodes(): maxnode - 1 bits from umask; at most a page's bits
 * (EINVAL); the words past MAX_NUMNODES must be zero (EINVAL), read one
 * at a time from the last as Linux reads them.
 */
static long get_nodes(struct task *t, uint64_t nodes[PVX_NODE_WORDS], uint64_t umask, uint64_t maxnode)
{
	memset(nodes, 0, PVX_NODE_WORDS * sizeof(uint64_t));
	maxnode--;
	if (maxnode == 0 || !umask)
		return 0;
	if (maxnode > PAGE_SIZE * 8)
		return -EINVAL;
	while (maxnode > PVX_MAX_NUMNODES) {
		uint64_t bits = MIN(maxnode, (uint64_t)BITS), w;
		if (get_bitmap(t, &w, umask + (maxnode - 1) / BITS * sizeof(uint64_t), bits))
			return -EFAULT;
		if (maxnode - bits >= PVX_MAX_NUMNODES)
			maxnode -= bits;
		else
			maxnode = PVX_MAX_NUMNODES;	/* MAX_NUMNODES % 64 == 0: the word is checked whole */
		if (w)
			return -EINVAL;
	}
	return get_bitmap(t, nodes, umask, maxnode);
}

/* copy_nodes_to_user() with nr_node_ids 1: one word, the rest of what maxnode asks cleared (at most a page). */
static long put_nodes(struct task *t, uint64_t umask, uint64_t maxnode, uint64_t nodes)
{
	uint64_t copy = ((maxnode - 1 + BITS - 1) & ~(uint64_t)(BITS - 1)) / 8, nbytes = sizeof(uint64_t);

	if (copy > nbytes) {
		if (copy > PAGE_SIZE)
			return -EINVAL;
		if (clear_guest(t->mm, umask + nbytes, copy - nbytes))
			return -EFAULT;
		copy = nbytes;
	}
	return copy && copy_to_guest(t->mm, umask, &nodes, copy) ? -EFAULT : 0;
}

/* len = PAGE_ALIGN(len), then "end < start" is EINVAL; 1 for an empty range (nothing to do), else 0 and *end. */
static long range_of(uint64_t start, uint64_t len, uint64_t *end)
{
	len = PAGE_ALIGN_UP(len);
	*end = start + len;
	return *end < start ? -EINVAL : len == 0;
}

/*
 * set_mempolicy(2): "EINVAL mode is invalid. Or, mode is MPOL_DEFAULT and
 * nodemask is nonempty, or mode is MPOL_BIND or MPOL_INTERLEAVE and nodemask
 * is empty. Or, maxnode specifies more than a page worth of bits. Or,
 * nodemask specifies one or more node IDs that are greater than the maximum
 * supported node ID. Or, none of the node IDs specified by nodemask are
 * on-line and allowed by the process's current cpuset context..."
 */
long sys_set_mempolicy(struct task *t, const long a[6])
{
	uint64_t nodes[PVX_NODE_WORDS];
	const struct mpol *p;
	unsigned flags;
	int mode;
	long r;

	if ((r = sanitize(a[0], &mode, &flags)) || (r = get_nodes(t, nodes, (uint64_t)a[1], (uint64_t)a[2])) ||
	    (r = mpol_make(mode, flags, nodes, &p)))
		return r;
	t->mempolicy = p;
	return 0;
}

/*
 * get_mempolicy(2) (kernel_get_mempolicy, do_get_mempolicy): the task's
 * policy, a VMA's with MPOL_F_ADDR (MPOL_DEFAULT when it has none, not the
 * task's), the node of the page at addr with MPOL_F_NODE|MPOL_F_ADDR, the
 * next interleave node with MPOL_F_NODE alone, node 0 being the only one.
 */
long sys_get_mempolicy(struct task *t, const long a[6])
{
	uint64_t upol = (uint64_t)a[0], umask = (uint64_t)a[1], maxnode = (uint64_t)a[2], addr = (uint64_t)a[3];
	unsigned long flags = (unsigned long)a[4];
	const struct mpol *p = t->mempolicy;
	int pval;

	if (umask && maxnode < NR_NODE_IDS)
		return -EINVAL;
	if (flags & ~(unsigned long)(MPOL_F_NODE | MPOL_F_ADDR | MPOL_F_MEMS_ALLOWED))
		return -EINVAL;
	if (flags & MPOL_F_MEMS_ALLOWED) {
		if (flags & (MPOL_F_NODE | MPOL_F_ADDR))
			return -EINVAL;
		pval = 0;
		if (upol && copy_to_guest(t->mm, upol, &pval, sizeof(pval)))
			return -EFAULT;
		return umask ? put_nodes(t, umask, maxnode, 1) : 0;	/* cpuset_current_mems_allowed */
	}
	if (flags & MPOL_F_ADDR) {
		const struct vma *v = vma_lookup(&t->mm->vmas, addr);
		if (!v)
			return -EFAULT;
		p = v->pol;
		if (flags & MPOL_F_NODE) {
			/* lookup_node(): get_user_pages_fast of a page that must be readable */
			if (!(v->prot & PROT_READ))
				return -EFAULT;
		}
	} else if (addr)
		return -EINVAL;
	if (flags & MPOL_F_NODE) {
		/* the page's node, or next_node_in() of the task's interleave: node 0 either way */
		if (!(flags & MPOL_F_ADDR) &&
		    !(p && (p->mode == PVX_MPOL_INTERLEAVE || p->mode == PVX_MPOL_WEIGHTED_INTERLEAVE)))
			return -EINVAL;
		pval = 0;
	} else
		pval = mpol_mode(p);
	if (upol && copy_to_guest(t->mm, upol, &pval, sizeof(pval)))
		return -EFAULT;
	return umask ? put_nodes(t, umask, maxnode, mpol_nodes(p)) : 0;
}

/*
 * mbind(2) (kernel_mbind, do_mbind): "EFAULT Part or all of the memory
 * range specified by nodemask and maxnode points outside your accessible
 * address space. Or, there was an unmapped hole in the specified memory
 * range specified by addr and len." "EINVAL An invalid value was specified
 * for flags or mode; or addr + len was less than addr; or addr is not a
 * multiple of the system page size..." "EPERM The flags argument included
 * the MPOL_MF_MOVE_ALL flag and the caller does not have the CAP_SYS_NICE
 * privilege." With one node every page is on the policy's node already:
 * MPOL_MF_STRICT finds none misplaced and MPOL_MF_MOVE none to move.
 */
long sys_mbind(struct task *t, const long a[6])
{
	uint64_t start = (uint64_t)a[0], len = (uint64_t)a[1], nodes[PVX_NODE_WORDS], end;
	unsigned int mflags = (unsigned int)a[5];
	const struct mpol *p;
	unsigned flags;
	int mode;
	long r;

	if ((r = sanitize(a[2], &mode, &flags)) || (r = get_nodes(t, nodes, (uint64_t)a[3], (uint64_t)a[4])))
		return r;
	if (mflags & ~(unsigned)(MPOL_MF_STRICT | MPOL_MF_MOVE | MPOL_MF_MOVE_ALL))
		return -EINVAL;
	if ((mflags & MPOL_MF_MOVE_ALL) && !cred_host_cap(CAP_SYS_NICE_))
		return -EPERM;
	if (start & ~PAGE_MASK)
		return -EINVAL;
	if ((r = range_of(start, len, &end)))
		return r < 0 ? r : 0;
	if ((r = mpol_make(mode, flags, nodes, &p)))
		return r;
	return mm_mbind(t->mm, start, end, p, !p);
}

/* set_mempolicy_home_node(2): the home node of the BIND and PREFERRED_MANY policies of the range's VMAs. */
long sys_set_mempolicy_home_node(struct task *t, const long a[6])
{
	uint64_t start = (uint64_t)a[0], len = (uint64_t)a[1], home = (uint64_t)a[2], end;

	if (start & ~PAGE_MASK)
		return -EINVAL;
	if (a[3])
		return -EINVAL;
	if (home >= PVX_MAX_NUMNODES || home != 0)	/* !node_online(home_node) */
		return -EINVAL;
	long r = range_of(start, len, &end);
	return r ? (r < 0 ? r : 0) : mm_set_home_node(t->mm, start, end, (int)home);
}

/* find_task_by_vpid(); ptrace_may_access passes between guests of one uid. */
static struct task *target(struct task *t, long pid)
{
	struct task *p = pid ? task_find((int)pid) : t;

	return p && p->proc ? p : NULL;
}

/*
 * migrate_pages(2): "EINVAL ... new_nodes ... contains no node that is
 * allowed ... ESRCH No process matching pid could be found. EPERM ...
 * Or, insufficient privilege (CAP_SYS_NICE) to move pages to ... nodes not
 * in the target's cpuset". Every page is on node 0 already: 0 pages left
 * unmoved.
 */
long sys_migrate_pages(struct task *t, const long a[6])
{
	uint64_t old[PVX_NODE_WORDS], new[PVX_NODE_WORDS];
	long r;

	if ((r = get_nodes(t, old, (uint64_t)a[2], (uint64_t)a[1])) ||
	    (r = get_nodes(t, new, (uint64_t)a[3], (uint64_t)a[1])))
		return r;
	struct task *p = target(t, a[0]);
	if (!p)
		return -ESRCH;
	bool outside = new[0] & ~1UL;
	for (int i = 1; i < PVX_NODE_WORDS; i++)
		outside |= new[i] != 0;
	if (outside && !cred_host_cap(CAP_SYS_NICE_))
		return -EPERM;
	if (!(new[0] & 1))
		return -EINVAL;	/* new & mems_allowed is empty */
	if (p->state == TASK_ZOMBIE || p->exited || !p->mm)
		return -EINVAL;	/* get_task_mm(): none */
	return 0;
}

/*
 * A page's status for move_pages(2): -EFAULT outside every VMA, else its
 * node (0) when present, -ENOENT when not, as folio_walk_start finds it
 * (the stub's pagemap: mm_resident). The zero page, which Linux counts as
 * -EFAULT, pvx cannot tell from another present page.
 */
static int page_status(struct mm *mm, uint64_t page)
{
	uint64_t in = 0;

	if (!vma_lookup(&mm->vmas, page))
		return -EFAULT;
	return mm_resident(mm, page & PAGE_MASK, (page & PAGE_MASK) + PAGE_SIZE, &in) || !in ? -ENOENT : 0;
}

/*
 * move_pages(2) (kernel_move_pages): "EINVAL Flags other than
 * MPOL_MF_MOVE and MPOL_MF_MOVE_ALL was specified", "EPERM ...
 * MPOL_MF_MOVE_ALL ... without sufficient privileges", "ESRCH Process does
 * not exist", "ENODEV One of the target nodes is not online"; with nodes
 * NULL the status of each page (do_pages_stat), else each page to its node
 * (do_pages_move): already there, node 0 being the only one with memory.
 */
long sys_move_pages(struct task *t, const long a[6])
{
	uint64_t count = (uint64_t)a[1], upages = (uint64_t)a[2], unodes = (uint64_t)a[3], ustatus = (uint64_t)a[4];
	int flags = (int)a[5];

	if (flags & ~(MPOL_MF_MOVE | MPOL_MF_MOVE_ALL))
		return -EINVAL;
	if ((flags & MPOL_MF_MOVE_ALL) && !cred_host_cap(CAP_SYS_NICE_))
		return -EPERM;
	struct task *p = target(t, a[0]);
	if (!p)
		return -ESRCH;
	if (p->state == TASK_ZOMBIE || p->exited || !p->mm)
		return -EINVAL;
	for (uint64_t i = 0; i < count; i++) {
		uint64_t page, slot = ustatus + i * sizeof(int);
		int node, st;
		if (copy_from_guest(t->mm, &page, upages + i * sizeof(page), sizeof(page)))
			return -EFAULT;
		if (unodes) {
			if (copy_from_guest(t->mm, &node, unodes + i * sizeof(node), sizeof(node)))
				return -EFAULT;
			if (node < 0 || node >= PVX_MAX_NUMNODES || node != 0)
				return -ENODEV;	/* !node_state(node, N_MEMORY) */
		}
		st = page_status(p->mm, page);
		if (copy_to_guest(t->mm, slot, &st, sizeof(st)))
			return -EFAULT;
	}
	return 0;
}

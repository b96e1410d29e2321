/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The VMA set's index (mm/vma_tree.c): an AVL tree of VMAs keyed by start,
 * each node carrying aggregates of its subtree (lowest start, highest end,
 * largest hole between two of its VMAs) so that lookups, the free-gap search
 * and every change are O(log n), like Linux's maple tree with its gaps.
 * Private to mm/vma.c and its unit test.
 */
#ifndef PVX_MM_VMA_TREE_H
#define PVX_MM_VMA_TREE_H

#include "pvx/mm.h"

struct vma_node {
	struct vma v;			/* first: a const struct vma * handed out is its node */
	struct vma_node *kid[2];	/* lower, higher */
	int height;
	uint64_t min_start, max_end;	/* of the subtree */
	uint64_t max_gap;		/* largest hole between two neighbouring VMAs of the subtree */
};

static inline struct vma_node *vt_node(const struct vma *v)
{
	return (struct vma_node *)v;
}

/* Add n (its start not yet in the tree); remove n; both keep every other node where it is. */
void vt_insert(struct vma_node **root, struct vma_node *n);
void vt_delete(struct vma_node **root, struct vma_node *n);
/* Recompute the aggregates above n after its end changed in place. */
void vt_refresh(struct vma_node *root, const struct vma_node *n);
/* The first node whose end is above addr; the last node whose start is below addr; NULL if none. */
struct vma_node *vt_first_above(struct vma_node *root, uint64_t addr);
struct vma_node *vt_last_below(struct vma_node *root, uint64_t addr);
struct vma_node *vt_leftmost(struct vma_node *root);
/* The highest node starting at or below key with a hole of at least len right before it. */
struct vma_node *vt_gap_search(struct vma_node *root, uint64_t key, uint64_t len);

#endif

// SPDX-License-Identifier: GPL-2.0
/*
 * An AVL tree of VMAs with gap aggregates (see vma_tree.h). Nodes are never
 * copied or moved between places in memory: a deletion relinks the in-order
 * successor into the deleted node's place, so a struct vma pointer stays
 * valid until its own VMA goes. Recursion depth is the tree's height
 * (< 1.45 log2 n: about 30 for a million VMAs).
 */
#include "mm/vma_tree.h"

static int height(const struct vma_node *t)
{
	return t ? t->height : 0;
}

/* Height and aggregates of t from its own VMA and its children's aggregates. */
static void update(struct vma_node *t)
{
	struct vma_node *l = t->kid[0], *r = t->kid[1];
	uint64_t gap = 0;

	t->height = 1 + MAX(height(l), height(r));
	t->min_start = l ? l->min_start : t->v.start;
	t->max_end = r ? r->max_end : t->v.end;
	if (l)
		gap = MAX(l->max_gap, t->v.start - l->max_end);
	if (r)
		gap = MAX(gap, MAX(r->max_gap, r->min_start - t->v.end));
	t->max_gap = gap;
}

/* Rotate t's child on side d up into t's place; returns the new subtree root. */
static struct vma_node *rotate(struct vma_node *t, int d)
{
	struct vma_node *c = t->kid[d];

	t->kid[d] = c->kid[!d];
	c->kid[!d] = t;
	update(t);
	update(c);
	return c;
}

/* Restore the AVL balance at t (children already balanced); returns the subtree root. */
static struct vma_node *balance(struct vma_node *t)
{
	int bf = height(t->kid[0]) - height(t->kid[1]);

	if (bf > 1 || bf < -1) {
		int d = bf < 0;	/* the heavy side */
		struct vma_node *c = t->kid[d];
		if (height(c->kid[!d]) > height(c->kid[d]))
			t->kid[d] = rotate(c, !d);
		return rotate(t, d);
	}
	update(t);
	return t;
}

static struct vma_node *insert(struct vma_node *t, struct vma_node *n)
{
	if (!t) {
		n->kid[0] = n->kid[1] = NULL;
		update(n);
		return n;
	}
	int d = n->v.start > t->v.start;
	t->kid[d] = insert(t->kid[d], n);
	return balance(t);
}

void vt_insert(struct vma_node **root, struct vma_node *n)
{
	*root = insert(*root, n);
}

/* Detach the lowest node of t into *min; returns what is left of t. */
static struct vma_node *delete_min(struct vma_node *t, struct vma_node **min)
{
	if (!t->kid[0]) {
		*min = t;
		return t->kid[1];
	}
	t->kid[0] = delete_min(t->kid[0], min);
	return balance(t);
}

static struct vma_node *delete(struct vma_node *t, uint64_t key)
{
	struct vma_node *m;

	if (!t)
		return NULL;
	if (key != t->v.start) {
		int d = key > t->v.start;
		t->kid[d] = delete(t->kid[d], key);
		return balance(t);
	}
	if (!t->kid[0] || !t->kid[1])
		return t->kid[0] ? t->kid[0] : t->kid[1];
	t->kid[1] = delete_min(t->kid[1], &m);	/* the successor takes t's place */
	m->kid[0] = t->kid[0];
	m->kid[1] = t->kid[1];
	return balance(m);
}

void vt_delete(struct vma_node **root, struct vma_node *n)
{
	*root = delete(*root, n->v.start);
	n->kid[0] = n->kid[1] = NULL;
}

void vt_refresh(struct vma_node *t, const struct vma_node *n)
{
	if (!t)
		return;
	if (t != n)
		vt_refresh(t->kid[n->v.start > t->v.start], n);
	update(t);
}

struct vma_node *vt_first_above(struct vma_node *t, uint64_t addr)
{
	struct vma_node *best = NULL;

	/* VMAs do not overlap: ordered by start, they are ordered by end too. */
	while (t) {
		if (t->v.end > addr) {
			best = t;
			t = t->kid[0];
		} else {
			t = t->kid[1];
		}
	}
	return best;
}

struct vma_node *vt_last_below(struct vma_node *t, uint64_t addr)
{
	struct vma_node *best = NULL;

	while (t) {
		if (t->v.start < addr) {
			best = t;
			t = t->kid[1];
		} else {
			t = t->kid[0];
		}
	}
	return best;
}

struct vma_node *vt_leftmost(struct vma_node *t)
{
	while (t && t->kid[0])
		t = t->kid[0];
	return t;
}

/*
 * Every hole between two neighbours is counted once, at their lowest common
 * ancestor: before t (its predecessor is l's highest) or after t (its
 * successor is r's lowest). A subtree whose max_gap is too small is skipped
 * whole, so the search walks the path to key plus one path down to the hole.
 */
struct vma_node *vt_gap_search(struct vma_node *t, uint64_t key, uint64_t len)
{
	struct vma_node *b;

	if (!t || t->max_gap < len)
		return NULL;
	struct vma_node *l = t->kid[0], *r = t->kid[1];
	if (t->v.start > key)
		return vt_gap_search(l, key, len);
	if ((b = vt_gap_search(r, key, len)))
		return b;
	if (r && r->min_start <= key && r->min_start - t->v.end >= len)
		return vt_leftmost(r);
	if (l && t->v.start - l->max_end >= len)
		return t;
	return vt_gap_search(l, key, len);
}

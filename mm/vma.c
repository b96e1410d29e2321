// SPDX-License-Identifier: GPL-2.0
/*
 * VMA bookkeeping: non-overlapping [start, end) ranges in a balanced tree
 * (mm/vma_tree.c), so that every call the guest makes costs O(log n) under
 * the sentry lock however many VMAs it made (plus O(1) per VMA it removes or
 * changes, as in Linux). Pure data structure, no host calls
 * (tests/unit/test_vma.c).
 *
 * Neighbours that Linux would merge (same protection and flags, anonymous or
 * the same file at contiguous offsets) are merged, as vma_merge() does: the
 * guest's /proc/self/maps and mremap see what they would see on Linux, and
 * the set stays as small as the host's own view of the stub, which the
 * host's vm.max_map_count bounds.
 */
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "mm/vma_tree.h"

struct vma_file *vma_file_new(int fd)
{
	struct vma_file *f = malloc(sizeof(*f));

	if (!f) {
		close(fd);
		return NULL;
	}
	*f = (struct vma_file){ .refs = 1, .fd = fd };
	return f;
}

static struct vma_file *file_get(struct vma_file *f)
{
	if (f)
		f->refs++;
	return f;
}

void vma_file_put(struct vma_file *f)
{
	if (f && --f->refs == 0) {
		mm_uncharge(f->charge);
		close(f->fd);
		free(f);
	} else if (f && f->unref) {
		f->unref(f);	/* may drop the owner's reference: f is not touched after */
	}
}

static void free_tree(struct vma_node *t)
{
	if (!t)
		return;
	free_tree(t->kid[0]);
	free_tree(t->kid[1]);
	vma_file_put(t->v.file);
	free(t);
}

void vma_set_free(struct vma_set *s)
{
	free_tree(s->root);
	memset(s, 0, sizeof(*s));
}

size_t vma_count(const struct vma_set *s)
{
	return s->n;
}

const struct vma *vma_first(const struct vma_set *s)
{
	struct vma_node *n = vt_leftmost(s->root);

	return n ? &n->v : NULL;
}

const struct vma *vma_next(const struct vma_set *s, const struct vma *v)
{
	struct vma_node *n = vt_first_above(s->root, v->end);

	return n ? &n->v : NULL;
}

const struct vma *vma_first_above(const struct vma_set *s, uint64_t addr)
{
	struct vma_node *n = vt_first_above(s->root, addr);

	return n ? &n->v : NULL;
}

const struct vma *vma_prev(const struct vma_set *s, const struct vma *v)
{
	struct vma_node *n = vt_last_below(s->root, v->start);

	return n ? &n->v : NULL;
}

const struct vma *vma_lookup(const struct vma_set *s, uint64_t addr)
{
	const struct vma *v = vma_first_above(s, addr);

	return v && v->start <= addr ? v : NULL;
}

bool vma_range_free(const struct vma_set *s, uint64_t start, uint64_t end)
{
	const struct vma *v = vma_first_above(s, start);

	return !v || v->start >= end;
}

bool vma_range_mapped(const struct vma_set *s, uint64_t start, uint64_t end)
{
	uint64_t at = start;

	for (const struct vma *v = vma_first_above(s, start); v && at < end; v = vma_next(s, v)) {
		if (v->start > at)
			return false;
		at = v->end;
	}
	return at >= end;
}

int vma_splits(const struct vma_set *s, uint64_t start, uint64_t end)
{
	const struct vma *a = vma_lookup(s, start), *b = vma_lookup(s, end);

	return (a && a->start < start) + (b && b->start < end);
}

/*
 * The highest fitting hole is either the one that top falls in (or that
 * ends at the VMA top falls in), clipped to top, or the highest hole of at
 * least len entirely below it, found through the tree's gap aggregates.
 * Holes further down are lower: if the highest one fails only because of
 * bottom, so do they all.
 */
uint64_t vma_find_free(const struct vma_set *s, uint64_t len, uint64_t bottom, uint64_t top)
{
	if (len == 0 || top < bottom || len > top - bottom)
		return 0;
	struct vma_node *above = vt_first_above(s->root, top);
	struct vma_node *below = above ? vt_last_below(s->root, above->v.start) : vt_last_below(s->root, top);
	uint64_t hi = above && above->v.start < top ? above->v.start : top;
	uint64_t lo = MAX(below ? below->v.end : 0, bottom);

	if (hi >= lo && hi - lo >= len)
		return hi - len;
	if (!below || below->v.end <= bottom)
		return 0;
	struct vma_node *b = vt_gap_search(s->root, below->v.start, len);
	if (!b)
		b = vt_leftmost(s->root);	/* the hole below every VMA */
	return b->v.start >= bottom + len ? b->v.start - len : 0;
}

/*
 * Linux's accountable_mapping() under overcommit_memory=2: private writable
 * memory (MAP_NORESERVE too). Private anonymous memory that can only be
 * read is charged as well: reading it maps the zero page, and the page
 * tables that costs would otherwise be unbounded. A shared mapping of a
 * file whose pages are memory (tmpfs, a guest's memfd) is charged for what
 * it can make the kernel allocate, as Linux's shmem accounting charges
 * them; pvx's own memfd behind shared anonymous memory is charged once
 * for its size instead (vma_file.charge). Other shared files are a disk's.
 */
uint64_t vma_charge(int prot, int flags, const struct vma_file *file, uint64_t len)
{
	if ((flags & MAP_TYPE) != MAP_PRIVATE)
		return file && file->in_ram && !file->charge && prot ? len : 0;
	return (prot & PROT_WRITE) || (!file && prot) ? len : 0;
}

uint64_t vma_range_charge(const struct vma_set *s, uint64_t start, uint64_t end, int prot)
{
	uint64_t sum = 0;

	for (const struct vma *v = vma_first_above(s, start); v && v->start < end; v = vma_next(s, v))
		sum += vma_charge(prot >= 0 ? prot : v->prot, v->flags, v->file, MIN(v->end, end) - MAX(v->start, start));
	return sum;
}

bool vma_is_data(int prot, int flags)
{
	return (prot & PROT_WRITE) && (flags & MAP_TYPE) == MAP_PRIVATE && !(flags & MAP_GROWSDOWN);
}

uint64_t vma_range_bytes(const struct vma_set *s, uint64_t start, uint64_t end, uint64_t *data)
{
	uint64_t sum = 0, d = 0;

	for (const struct vma *v = vma_first_above(s, start); v && v->start < end; v = vma_next(s, v)) {
		uint64_t n = MIN(v->end, end) - MAX(v->start, start);
		sum += n;
		d += vma_is_data(v->prot, v->flags) ? n : 0;
	}
	if (data)
		*data = d;
	return sum;
}

/* Count v's bytes in (sign 1) or out of (-1) the set's totals. */
static void account(struct vma_set *s, const struct vma *v, int sign)
{
	uint64_t n = v->end - v->start;

	s->total_vm += sign > 0 ? n : -n;
	if (vma_is_data(v->prot, v->flags))
		s->data_vm += sign > 0 ? n : -n;
}

/* Would Linux merge b into a, its lower neighbour (vma_merge's can_vma_merge_after)? */
static bool mergeable(const struct vma *a, const struct vma *b)
{
	return a->end == b->start && a->prot == b->prot && a->flags == b->flags && a->file == b->file && a->pol == b->pol &&
	       (!a->file || a->off + (a->end - a->start) == b->off);
}

/* Merge b into its lower neighbour a when they are mergeable; true if it did. */
static bool merge(struct vma_set *s, struct vma_node *a, struct vma_node *b)
{
	if (!a || !b || !mergeable(&a->v, &b->v))
		return false;
	vt_delete(&s->root, b);
	a->v.end = b->v.end;
	vt_refresh(s->root, a);
	vma_file_put(b->v.file);
	free(b);
	s->n--;
	return true;
}

/* Merge what can be merged among the VMAs from the one before start to the first at or after end. */
static void merge_range(struct vma_set *s, uint64_t start, uint64_t end)
{
	struct vma_node *a = vt_last_below(s->root, start);

	if (!a)
		a = vt_first_above(s->root, start);
	while (a && a->v.start < end) {
		struct vma_node *b = vt_first_above(s->root, a->v.end);
		if (!merge(s, a, b))
			a = b;
	}
}

long vma_insert(struct vma_set *s, uint64_t start, uint64_t end, int prot, int flags, struct vma_file *file,
		uint64_t off)
{
	if (start >= end || !vma_range_free(s, start, end))
		return -EINVAL;
	struct vma_node *n = calloc(1, sizeof(*n));
	if (!n)
		return -ENOMEM;
	n->v = (struct vma){ start, end, prot, flags, file_get(file), off };
	vt_insert(&s->root, n);
	s->n++;
	account(s, &n->v, 1);
	merge_range(s, start, end);
	return 0;
}

/* Split so that no VMA straddles addr. */
static long split_at(struct vma_set *s, uint64_t addr)
{
	struct vma_node *a = vt_first_above(s->root, addr);

	if (!a || a->v.start >= addr)
		return 0;
	struct vma_node *b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	b->v = a->v;
	b->v.start = addr;
	b->v.off += addr - a->v.start;
	file_get(b->v.file);
	a->v.end = addr;
	vt_refresh(s->root, a);
	vt_insert(&s->root, b);
	s->n++;
	return 0;
}

long vma_remove(struct vma_set *s, uint64_t start, uint64_t end)
{
	struct vma_node *a;
	long err;

	if (start >= end)
		return -EINVAL;
	if ((err = split_at(s, start)) || (err = split_at(s, end)))
		return err;
	while ((a = vt_first_above(s->root, start)) && a->v.start < end) {
		vt_delete(&s->root, a);
		account(s, &a->v, -1);
		vma_file_put(a->v.file);
		free(a);
		s->n--;
	}
	return 0;
}

/* What a change makes of every VMA of a range: its prot and policy if asked, its flags cleared then set. */
struct vma_change {
	bool set_prot, set_pol;
	int prot, clear, set;
	const struct mpol *pol;
};

/* Split [start, end) out of its neighbours, change every VMA in it (holes are skipped), merge back what can be. */
static long change_range(struct vma_set *s, uint64_t start, uint64_t end, const struct vma_change *c)
{
	long err;

	if (start >= end)
		return -EINVAL;
	if ((err = split_at(s, start)) || (err = split_at(s, end)))
		return err;
	for (struct vma_node *a = vt_first_above(s->root, start); a && a->v.start < end;
	     a = vt_first_above(s->root, a->v.end)) {
		account(s, &a->v, -1);
		if (c->set_prot)
			a->v.prot = c->prot;
		if (c->set_pol)
			a->v.pol = c->pol;
		a->v.flags = (a->v.flags & ~c->clear) | c->set;
		account(s, &a->v, 1);
	}
	merge_range(s, start, end);
	return 0;
}

long vma_protect(struct vma_set *s, uint64_t start, uint64_t end, int prot)
{
	if (start >= end)
		return -EINVAL;
	if (!vma_range_mapped(s, start, end))
		return -ENOMEM;
	return change_range(s, start, end, &(struct vma_change){ .set_prot = true, .prot = prot });
}

/* Like vma_protect, for flag bits: clear then set them on every VMA of [start, end), split at its edges. */
static long change_flags(struct vma_set *s, uint64_t start, uint64_t end, int clear, int set)
{
	return change_range(s, start, end, &(struct vma_change){ .clear = clear, .set = set });
}

/* See pvx/mm.h. */
long vma_change_flags(struct vma_set *s, uint64_t start, uint64_t end, int clear, int set)
{
	return change_flags(s, start, end, clear, set);
}

/* See pvx/mm.h. */
long vma_seal(struct vma_set *s, uint64_t start, uint64_t end)
{
	return change_flags(s, start, end, 0, VMA_SEALED);
}

bool vma_range_sealed(const struct vma_set *s, uint64_t start, uint64_t end)
{
	for (const struct vma *v = vma_first_above(s, start); v && v->start < end; v = vma_next(s, v))
		if (v->flags & VMA_SEALED)
			return true;
	return false;
}

/* See pvx/mm.h: holes are skipped (mbind with MPOL_DEFAULT may span them). */
long vma_set_policy(struct vma_set *s, uint64_t start, uint64_t end, const struct mpol *pol)
{
	return change_range(s, start, end, &(struct vma_change){ .set_pol = true, .pol = pol });
}

long vma_set_lock(struct vma_set *s, uint64_t start, uint64_t end, int lock)
{
	return change_flags(s, start, end, VMA_LOCKED | VMA_LOCKONFAULT | MAP_LOCKED, lock);
}

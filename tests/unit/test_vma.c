// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the VMA bookkeeping (mm/vma.c, mm/vma_tree.c): fixed cases,
 * then random operations checked against a page-by-page reference model
 * and the tree's own invariants (order, AVL balance, gap aggregates).
 */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "mm/vma_tree.h"
#include "tap.h"

#define P(n) ((uint64_t)(n) * PAGE_SIZE)

static int count(const struct vma_set *s)
{
	return (int)vma_count(s);
}

static uint64_t rnd_state = 88172645463325252ULL;

static uint64_t rnd(uint64_t n)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state % n;
}

/* The reference model: one entry per page of [0, P(NPG)). */
#define NPG 300
struct page {
	bool mapped;
	int prot, flags;
	struct vma_file *file;
	uint64_t off;	/* file offset of this page */
};
static struct page model[NPG];

/* Would page i+1 continue page i's VMA (Linux would merge them)? */
static bool continues(int i)
{
	const struct page *a = &model[i], *b = &model[i + 1];

	return a->mapped && b->mapped && a->prot == b->prot && a->flags == b->flags && a->file == b->file &&
	       (!a->file || a->off + PAGE_SIZE == b->off);
}

/* Check a subtree: order within (lo, hi), heights, balance and aggregates; returns its node count or -1. */
static long check_tree(const struct vma_node *t, uint64_t lo, uint64_t hi)
{
	if (!t)
		return 0;
	const struct vma_node *l = t->kid[0], *r = t->kid[1];
	long nl = check_tree(l, lo, t->v.start), nr = check_tree(r, t->v.end, hi);
	int hl = l ? l->height : 0, hr = r ? r->height : 0;
	uint64_t gap = 0;
	if (nl < 0 || nr < 0 || t->v.start >= t->v.end || t->v.start < lo || t->v.end > hi)
		return -1;
	if (t->height != 1 + MAX(hl, hr) || hl - hr > 1 || hr - hl > 1)
		return -1;
	if (t->min_start != (l ? l->min_start : t->v.start) || t->max_end != (r ? r->max_end : t->v.end))
		return -1;
	if (l)
		gap = MAX(l->max_gap, t->v.start - l->max_end);
	if (r)
		gap = MAX(gap, MAX(r->max_gap, r->min_start - t->v.end));
	return t->max_gap == gap ? 1 + nl + nr : -1;
}

/* Does the set hold exactly the model's maximal runs, with a consistent tree? */
static bool matches_model(const struct vma_set *s)
{
	const struct vma *v = vma_first(s);
	size_t runs = 0;

	if (check_tree(s->root, 0, UINT64_MAX) != (long)vma_count(s))
		return false;
	for (int i = 0; i < NPG; i++) {
		if (!model[i].mapped) {
			if (vma_lookup(s, P(i)))
				return false;
			continue;
		}
		int j = i;
		while (j + 1 < NPG && continues(j))
			j++;
		runs++;
		const struct page *m = &model[i];
		if (!v || v->start != P(i) || v->end != P(j + 1) || v->prot != m->prot || v->flags != m->flags ||
		    v->file != m->file || (m->file && v->off != m->off) || vma_lookup(s, P(j) + 100) != v)
			return false;
		v = vma_next(s, v);
		i = j;
	}
	return !v && runs == vma_count(s);
}

/* The model's answer to vma_find_free: the highest fitting run of free pages. */
static uint64_t model_find_free(int len, int bottom, int top)
{
	for (int a = top - len; a >= bottom; a--) {
		int k = 0;
		while (k < len && !model[a + k].mapped)
			k++;
		if (k == len)
			return P(a);
	}
	return 0;
}

static bool model_range(int a, int b, bool mapped)
{
	for (int i = a; i < b; i++)
		if (model[i].mapped != mapped)
			return false;
	return true;
}

static int model_splits(int a, int b)
{
	return (a > 0 && continues(a - 1)) + (b < NPG && continues(b - 1));
}

static int model_refs(const struct vma_set *s, const struct vma_file *f)
{
	int n = 1;

	vma_for_each(v, s)
		n += v->file == f;
	return n;
}

/* n random operations on a model-sized space; true when every result and state matched. */
static bool random_ops(int n, struct vma_file *files[2], int *counts)
{
	struct vma_set s = { 0 };
	bool good = true;

	memset(model, 0, sizeof(model));
	for (int step = 0; step < n && good; step++) {
		int op = (int)rnd(6), a = 1 + (int)rnd(NPG - 2), len = 1 + (int)rnd(rnd(2) ? 4 : 40);
		int b = MIN(a + len, NPG - 1), prot = (int)rnd(3), fi = (int)rnd(3);
		long r;
		switch (op) {
		case 0: case 1: {	/* insert: anonymous or one of two files at a chosen offset */
			struct vma_file *f = fi < 2 ? files[fi] : NULL;
			uint64_t off = f ? P(rnd(4) ? a : rnd(NPG)) : 0;
			int flags = MAP_PRIVATE | (f ? 0 : MAP_ANONYMOUS);
			bool fits = model_range(a, b, false);
			r = vma_insert(&s, P(a), P(b), prot, flags, f, off);
			good &= fits ? r == 0 : r == -EINVAL;
			for (int i = a; fits && i < b; i++)
				model[i] = (struct page){ true, prot, flags, f, off + P(i - a) };
			break;
		}
		case 2:
			good &= vma_splits(&s, P(a), P(b)) == model_splits(a, b);
			good &= vma_remove(&s, P(a), P(b)) == 0;
			for (int i = a; i < b; i++)
				model[i].mapped = false;
			break;
		case 3: {
			bool mapped = model_range(a, b, true);
			good &= vma_splits(&s, P(a), P(b)) == model_splits(a, b);
			r = vma_protect(&s, P(a), P(b), prot);
			good &= mapped ? r == 0 : r == -ENOMEM;
			for (int i = a; mapped && i < b; i++)
				model[i].prot = prot;
			break;
		}
		case 4: {
			int bottom = (int)rnd(NPG / 2), top = bottom + (int)rnd(NPG - bottom);
			good &= vma_find_free(&s, P(len), P(bottom), P(top)) == model_find_free(len, bottom, top);
			break;
		}
		case 5:
			good &= vma_range_free(&s, P(a), P(b)) == model_range(a, b, false);
			good &= vma_range_mapped(&s, P(a), P(b)) == model_range(a, b, true);
			break;
		}
		counts[op]++;
		good &= matches_model(&s);
		uint64_t total = 0, data = 0;	/* total_vm and data_vm (may_expand_vm's) follow every change */
		for (int i = 0; i < NPG; i++) {
			total += model[i].mapped ? P(1) : 0;
			data += model[i].mapped && vma_is_data(model[i].prot, model[i].flags) ? P(1) : 0;
		}
		good &= s.total_vm == total && s.data_vm == data && vma_range_bytes(&s, 0, P(NPG), NULL) == total;
		good &= files[0]->refs == model_refs(&s, files[0]) && files[1]->refs == model_refs(&s, files[1]);
		if (!good)
			printf("# step %d op %d [%d,%d) prot %d file %d\n", step, op, a, b, prot, fi);
	}
	vma_set_free(&s);
	return good && files[0]->refs == 1 && files[1]->refs == 1;
}

/* Many VMAs: each kind of call stays cheap (the whole loop would take minutes if it were O(n)). */
static void many_vmas(void)
{
	struct vma_set s = { 0 };
	const int n = 200000;
	int good = 1;
	clock_t t0 = clock();

	/* Top-down, like mmap: every new VMA is the lowest, with alternating protections. */
	for (int i = 0; i < n; i++) {
		uint64_t at = vma_find_free(&s, P(1), P(1), P(2 * n));
		good &= at == P(2 * n - 1 - i) && vma_insert(&s, at, at + P(1), i & 1, MAP_PRIVATE, NULL, 0) == 0;
	}
	ok(good && count(&s) == n && check_tree(s.root, 0, UINT64_MAX) == n, "%d top-down inserts", n);
	for (int i = 0; i < n; i += 2)
		good &= vma_remove(&s, P(n + i), P(n + i + 1)) == 0;
	ok(good && count(&s) == n / 2, "every other one removed");
	ok(vma_find_free(&s, P(2), P(0), P(2 * n)) == P(n - 1) && vma_find_free(&s, P(1), P(n), P(2 * n)) ==
	   P(2 * n - 2), "find_free among one-page holes");
	for (int i = 0; i < n; i += 2)
		good &= vma_insert(&s, P(n + i), P(n + i + 1), 0, MAP_PRIVATE, NULL, 0) == 0;
	ok(good && count(&s) == 1 && vma_lookup(&s, P(n))->end == P(2 * n), "refilled alike: one VMA");
	ok(vma_protect(&s, P(n + 10), P(n + 11), 1) == 0 && count(&s) == 3 &&
	   vma_protect(&s, P(n + 10), P(n + 11), 0) == 0 && count(&s) == 1, "mprotect splits and merges back");
	vma_set_free(&s);
	printf("# %d-VMA tests: %.2f s of CPU\n", n, (double)(clock() - t0) / CLOCKS_PER_SEC);
}

int main(void)
{
	struct vma_set s = { 0 };

	ok(vma_insert(&s, P(10), P(20), PROT_READ, MAP_PRIVATE, NULL, 0) == 0, "insert [10,20)");
	ok(vma_insert(&s, P(15), P(25), PROT_READ, MAP_PRIVATE, NULL, 0) == -EINVAL, "overlapping insert refused");
	ok(vma_insert(&s, P(30), P(40), PROT_WRITE, MAP_PRIVATE, NULL, 0) == 0, "insert [30,40)");
	ok(vma_lookup(&s, P(10)) && !vma_lookup(&s, P(20)) && vma_lookup(&s, P(39) + 5), "lookup bounds");
	ok(vma_range_free(&s, P(20), P(30)) && !vma_range_free(&s, P(19), P(21)), "range_free");
	ok(vma_range_mapped(&s, P(10), P(20)) && !vma_range_mapped(&s, P(10), P(31)), "range_mapped");

	ok(vma_find_free(&s, P(10), P(0), P(50)) == P(40), "find_free takes the top gap");
	ok(vma_find_free(&s, P(11), P(0), P(50)) == 0,
	   "find_free skips gaps that are too small");
	ok(vma_find_free(&s, P(10), P(0), P(40)) == P(20), "find_free fits the middle gap exactly");
	ok(vma_find_free(&s, P(5), P(0), P(35)) == P(25), "find_free below a straddling VMA");
	ok(vma_find_free(&s, P(10), P(5), P(10)) == 0, "find_free respects bottom");

	ok(vma_remove(&s, P(12), P(14)) == 0 && count(&s) == 3, "remove the middle splits in two");
	ok(vma_range_free(&s, P(12), P(14)) && vma_range_mapped(&s, P(10), P(12)) &&
	   vma_range_mapped(&s, P(14), P(20)), "hole punched");
	ok(vma_protect(&s, P(15), P(35), PROT_EXEC) == -ENOMEM, "protect across a hole is ENOMEM");
	ok(vma_protect(&s, P(16), P(18), PROT_EXEC) == 0 && count(&s) == 5, "protect splits");
	ok(vma_lookup(&s, P(16))->prot == PROT_EXEC && vma_lookup(&s, P(15))->prot == PROT_READ &&
	   vma_lookup(&s, P(18))->prot == PROT_READ, "protections after split");
	ok(vma_remove(&s, P(0), P(100)) == 0 && count(&s) == 0, "remove everything");
	ok(vma_remove(&s, P(1), P(1)) == -EINVAL, "empty remove is EINVAL");

	/* Many VMAs: growth and ordering. */
	int good = 1;
	for (int i = 0; i < 1000; i++)
		good &= vma_insert(&s, P(2 * i + 1), P(2 * i + 2), PROT_READ, MAP_PRIVATE, NULL, 0) == 0;
	for (const struct vma *v = vma_first(&s), *w; v && (w = vma_next(&s, v)); v = w)
		good &= v->end < w->start;
	ok(good && count(&s) == 1000, "1000 inserts stay sorted");
	ok(vma_find_free(&s, P(2), P(0), P(2001)) == 0, "no 2-page gap among 1-page holes");
	vma_set_free(&s);

	/* File references follow splits and removals; offsets follow splits. */
	struct vma_file *f = vma_file_new(dup(0));
	ok(vma_insert(&s, P(10), P(20), PROT_READ, MAP_PRIVATE, f, P(3)) == 0 && f->refs == 2, "insert takes a ref");
	ok(vma_protect(&s, P(12), P(14), PROT_EXEC) == 0 && f->refs == 4, "split refs");
	ok(vma_lookup(&s, P(12))->off == P(5) && vma_lookup(&s, P(15))->off == P(7), "split offsets");
	ok(vma_remove(&s, P(12), P(14)) == 0 && f->refs == 3, "remove drops the middle's ref");
	vma_set_free(&s);
	ok(f->refs == 1, "free drops all");

	/* Merging, as vma_merge(): same protection, flags and file at contiguous offsets. */
	ok(vma_insert(&s, P(10), P(20), PROT_READ, MAP_PRIVATE, f, P(0)) == 0 &&
	   vma_insert(&s, P(20), P(30), PROT_READ, MAP_PRIVATE, f, P(10)) == 0 && count(&s) == 1 && f->refs == 2,
	   "contiguous file pages merge");
	ok(vma_insert(&s, P(30), P(40), PROT_READ, MAP_PRIVATE, f, P(30)) == 0 && count(&s) == 2,
	   "a jump in the offset does not merge");
	ok(vma_insert(&s, P(5), P(10), PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, NULL, 0) == 0 && count(&s) == 3,
	   "anonymous next to a file does not merge");
	ok(vma_insert(&s, P(0), P(5), PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, NULL, P(77)) == 0 && count(&s) == 3,
	   "anonymous neighbours merge whatever their offset");
	ok(vma_splits(&s, P(12), P(14)) == 2 && vma_splits(&s, P(10), P(14)) == 1 && vma_splits(&s, P(10), P(30)) == 0 && vma_splits(&s, P(5), P(30)) == 1,
	   "vma_splits counts straddled VMAs");
	vma_set_free(&s);
	ok(f->refs == 1, "merges drop their references");

	/* Random operations against the model, for two seeds. */
	struct vma_file *files[2] = { f, vma_file_new(dup(0)) };
	int counts[6] = { 0 };
	ok(random_ops(20000, files, counts), "20000 random operations match the model (%d inserts, %d removes, "
	   "%d protects, %d find_free)", counts[0] + counts[1], counts[2], counts[3], counts[4]);
	rnd_state = (uint64_t)time(NULL) | 1;
	uint64_t seed = rnd_state;
	ok(random_ops(20000, files, counts), "20000 more with seed %llu", (unsigned long long)seed);
	vma_file_put(files[1]);
	vma_file_put(f);

	many_vmas();
	return tap_done();
}

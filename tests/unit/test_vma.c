// SPDX-License-Identifier: GPL-2.0
/* Unit tests of the VMA bookkeeping (mm/vma.c). */
#include <sys/mman.h>

#include "pvx/mm.h"
#include "tap.h"

#define P(n) ((uint64_t)(n) * PAGE_SIZE)

static int count(const struct vma_set *s)
{
	return (int)s->n;
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
	for (size_t i = 1; i < s.n; i++)
		good &= s.v[i - 1].end <= s.v[i].start;
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
	vma_file_put(f);
	return tap_done();
}

// SPDX-License-Identifier: GPL-2.0
/*
 * VMA bookkeeping: a sorted array of non-overlapping [start, end) ranges.
 * Pure data structure, no host calls (tests/unit/test_vma.c). Neighbours
 * are not merged: the guest never sees the difference until /proc/self/maps,
 * and keeping ranges as mapped makes the stub's view easy to reason about.
 */
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "pvx/mm.h"

struct vma_file *vma_file_new(int fd)
{
	struct vma_file *f = malloc(sizeof(*f));

	if (!f) {
		close(fd);
		return NULL;
	}
	f->refs = 1;
	f->fd = fd;
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
		close(f->fd);
		free(f);
	}
}

void vma_set_free(struct vma_set *s)
{
	for (size_t i = 0; i < s->n; i++)
		vma_file_put(s->v[i].file);
	free(s->v);
	memset(s, 0, sizeof(*s));
}

/* Index of the first VMA whose end is above addr (s->n if none). */
static size_t first_above(const struct vma_set *s, uint64_t addr)
{
	size_t lo = 0, hi = s->n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (s->v[mid].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

const struct vma *vma_lookup(const struct vma_set *s, uint64_t addr)
{
	size_t i = first_above(s, addr);

	return i < s->n && s->v[i].start <= addr ? &s->v[i] : NULL;
}

bool vma_range_free(const struct vma_set *s, uint64_t start, uint64_t end)
{
	size_t i = first_above(s, start);

	return i == s->n || s->v[i].start >= end;
}

bool vma_range_mapped(const struct vma_set *s, uint64_t start, uint64_t end)
{
	size_t i = first_above(s, start);
	uint64_t at = start;

	for (; i < s->n && at < end; i++) {
		if (s->v[i].start > at)
			return false;
		at = s->v[i].end;
	}
	return at >= end;
}

uint64_t vma_find_free(const struct vma_set *s, uint64_t len, uint64_t bottom, uint64_t top)
{
	uint64_t hi = top;
	size_t i = first_above(s, top);

	if (len == 0 || len > top - bottom)
		return 0;
	/* Walk gaps downwards from top: [end of VMA i-1, min(start of VMA i, top)). */
	while (true) {
		uint64_t lo = i > 0 ? s->v[i - 1].end : bottom;
		if (i < s->n && s->v[i].start < hi)
			hi = s->v[i].start;
		if (lo < bottom)
			lo = bottom;
		if (hi >= lo && hi - lo >= len)
			return hi - len;
		if (i == 0)
			return 0;
		i--;
		hi = s->v[i].start;
		if (hi <= bottom)
			return 0;
	}
}

static long reserve(struct vma_set *s, size_t extra)
{
	if (s->n + extra <= s->cap)
		return 0;
	size_t cap = MAX(s->cap * 2, s->n + extra + 16);
	struct vma *v = realloc(s->v, cap * sizeof(*v));
	if (!v)
		return -ENOMEM;
	s->v = v;
	s->cap = cap;
	return 0;
}

long vma_insert(struct vma_set *s, uint64_t start, uint64_t end, int prot, int flags, struct vma_file *file,
		uint64_t off)
{
	if (start >= end || !vma_range_free(s, start, end))
		return -EINVAL;
	long err = reserve(s, 1);
	if (err)
		return err;
	size_t i = first_above(s, start);
	memmove(&s->v[i + 1], &s->v[i], (s->n - i) * sizeof(*s->v));
	s->v[i] = (struct vma){ start, end, prot, flags, file_get(file), off };
	s->n++;
	return 0;
}

/* Split so that no VMA straddles addr. */
static long split_at(struct vma_set *s, uint64_t addr)
{
	size_t i = first_above(s, addr);

	if (i == s->n || s->v[i].start >= addr)
		return 0;
	long err = reserve(s, 1);
	if (err)
		return err;
	memmove(&s->v[i + 1], &s->v[i], (s->n - i) * sizeof(*s->v));
	s->v[i].end = addr;
	s->v[i + 1].start = addr;
	s->v[i + 1].off += addr - s->v[i].start;
	file_get(s->v[i + 1].file);
	s->n++;
	return 0;
}

long vma_remove(struct vma_set *s, uint64_t start, uint64_t end)
{
	long err;

	if (start >= end)
		return -EINVAL;
	if ((err = split_at(s, start)) || (err = split_at(s, end)))
		return err;
	size_t i = first_above(s, start), j = i;
	while (j < s->n && s->v[j].end <= end)
		vma_file_put(s->v[j++].file);
	memmove(&s->v[i], &s->v[j], (s->n - j) * sizeof(*s->v));
	s->n -= j - i;
	return 0;
}

long vma_protect(struct vma_set *s, uint64_t start, uint64_t end, int prot)
{
	long err;

	if (start >= end)
		return -EINVAL;
	if (!vma_range_mapped(s, start, end))
		return -ENOMEM;
	if ((err = split_at(s, start)) || (err = split_at(s, end)))
		return err;
	for (size_t i = first_above(s, start); i < s->n && s->v[i].start < end; i++)
		s->v[i].prot = prot;
	return 0;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * mlock(2), mlock2(2), munlock(2), mlockall(2), munlockall(2) as Linux's
 * mm/mlock.c checks them: RLIMIT_MEMLOCK against the pages already locked,
 * ENOMEM for a range with unmapped holes, the flags' EINVALs. What is
 * locked is kept in the VMAs (VMA_LOCKED, VMA_LOCKONFAULT: VmLck in
 * /proc/PID/status, not inherited by fork); the host's pages are not
 * pinned: the stub would need the host's own RLIMIT_MEMLOCK, and locked
 * guest memory would escape the host's reclaim, so the sandbox only keeps
 * the account a program can observe. remap_file_pages(2), Linux's
 * emulation of it by mmap, is here too: it keeps a range's lock.
 */
#include <errno.h>
#include <sys/mman.h>

#include "pvx/mm.h"

#define STACK_START (128 * 1024 + PAGE_SIZE)	/* a new stack's VMA on Linux (setup_arg_pages) */

#ifndef MLOCK_ONFAULT
#define MLOCK_ONFAULT 0x01
#endif
#ifndef MCL_ONFAULT
#define MCL_ONFAULT 4
#endif

static bool locked(const struct vma *v)
{
	return v->flags & (VMA_LOCKED | MAP_LOCKED);
}

uint64_t mm_locked_bytes(const struct mm *mm)
{
	uint64_t n = 0;

	vma_for_each(v, &mm->vmas)
		if (locked(v))
			n += v->end - v->start;
	return n;
}

/* count_mm_mlocked_page_nr(): locked bytes inside [start, end). */
static uint64_t locked_in(const struct mm *mm, uint64_t start, uint64_t end)
{
	uint64_t n = 0;

	vma_for_each(v, &mm->vmas)
		if (locked(v) && v->end > start && v->start < end)
			n += MIN(v->end, end) - MAX(v->start, start);
	return n;
}

/*
 * apply_vma_lock_flags(): each VMA from start up to the first hole gets
 * lock; a hole (or nothing at start) is ENOMEM, after the VMAs before it
 * were changed, as Linux's loop does.
 */
static long apply_lock(struct mm *mm, uint64_t start, uint64_t len, int lock)
{
	uint64_t end = start + len, at = start;

	if (end < start)
		return -EINVAL;
	if (end == start)
		return 0;
	const struct vma *v = vma_lookup(&mm->vmas, start);
	if (!v)
		return -ENOMEM;
	while (v && v->start < end) {
		if (v->start > at)
			return -ENOMEM;	/* a hole */
		uint64_t stop = MIN(v->end, end);
		long r = vma_set_lock(&mm->vmas, at, stop, lock);
		if (r < 0)
			return r;
		at = stop;
		v = at < end ? vma_first_above(&mm->vmas, at) : NULL;
	}
	return at < end ? -ENOMEM : 0;
}

/* do_mlock(): EPERM with a limit of 0, ENOMEM past it (pages already locked in the range count once). */
long mm_mlock(struct mm *mm, uint64_t addr, uint64_t len, unsigned flags, uint64_t lock_limit)
{
	if (flags & ~MLOCK_ONFAULT)
		return -EINVAL;
	if (!lock_limit)
		return -EPERM;
	len = PAGE_ALIGN_UP(len + (addr & ~PAGE_MASK));
	addr &= PAGE_MASK;
	/* in pages, as Linux counts: a len that wrapped is a huge count, ENOMEM before apply_lock's EINVAL */
	uint64_t limit = lock_limit / PAGE_SIZE, want = len / PAGE_SIZE + mm_locked_bytes(mm) / PAGE_SIZE;
	if (want > limit)
		want -= locked_in(mm, addr, addr + len < addr ? UINT64_MAX : addr + len) / PAGE_SIZE;
	if (want > limit)
		return -ENOMEM;
	long r = apply_lock(mm, addr, len, VMA_LOCKED | (flags & MLOCK_ONFAULT ? VMA_LOCKONFAULT : 0));
	if (!r && !(flags & MLOCK_ONFAULT))
		mm_populate(mm, addr, addr + len);	/* "guaranteed to be resident in RAM" (mincore sees them) */
	return r;
}

long mm_munlock(struct mm *mm, uint64_t addr, uint64_t len)
{
	len = PAGE_ALIGN_UP(len + (addr & ~PAGE_MASK));
	addr &= PAGE_MASK;
	return apply_lock(mm, addr, len, 0);
}

/* apply_mlockall_flags(): MCL_FUTURE for later mappings, MCL_CURRENT for every VMA now. */
static long apply_all(struct mm *mm, int flags)
{
	int lock = VMA_LOCKED | (flags & MCL_ONFAULT ? VMA_LOCKONFAULT : 0);

	mm->def_lock = flags & MCL_FUTURE ? lock : 0;
	if (!(flags & MCL_CURRENT) && flags)
		return 0;
	for (const struct vma *v = vma_first(&mm->vmas); v; v = vma_first_above(&mm->vmas, v->end)) {
		uint64_t end = v->end;	/* v may be merged away */
		long r = vma_set_lock(&mm->vmas, v->start, end, flags & MCL_CURRENT ? lock : 0);
		if (r < 0)
			return r;
		v = vma_lookup(&mm->vmas, end - 1);
	}
	return 0;
}

/* mlockall(2): "EINVAL Unknown flags were specified or MCL_ONFAULT was specified without either MCL_FUTURE or MCL_CURRENT". */
long mm_mlockall(struct mm *mm, int flags, uint64_t lock_limit)
{
	uint64_t total = 0;

	if (!flags || (flags & ~(MCL_CURRENT | MCL_FUTURE | MCL_ONFAULT)) || flags == MCL_ONFAULT)
		return -EINVAL;
	if (!lock_limit)
		return -EPERM;
	/* total_vm: the stack counts as Linux's grown so far, its first 128 KiB + a page, not pvx's whole 8 MiB VMA */
	vma_for_each(v, &mm->vmas)
		total += v->end == mm->stack_top ? MIN(v->end - v->start, (uint64_t)STACK_START) : v->end - v->start;
	if ((flags & MCL_CURRENT) && total > lock_limit)
		return -ENOMEM;
	long r = apply_all(mm, flags);
	if (r || !(flags & MCL_CURRENT) || (flags & MCL_ONFAULT))
		return r;
	for (const struct vma *v = vma_first(&mm->vmas); v; v = vma_first_above(&mm->vmas, v->end)) {
		uint64_t start = v->end == mm->stack_top ? MAX(v->start, v->end - STACK_START) : v->start, end = v->end;
		mm_populate(mm, start, end);	/* the stack: what Linux's would have grown to */
		v = vma_lookup(&mm->vmas, end - 1);
	}
	return 0;
}

long mm_munlockall(struct mm *mm)
{
	return apply_all(mm, 0);
}

/*
 * remap_file_pages of a file whose owner counts its mappings (a System V
 * segment, sentry/kernel/shm.c). As Linux (vms_clean_up_area closes the old
 * mapping before call_mmap opens the file again), the old mapping goes
 * first: a removed segment goes with its last attachment, and shm_mmap then
 * fails (EINVAL, the range left unmapped: LTP's shmctl05 loops until it
 * does). Otherwise the segment's own file is mapped again, so its attach
 * count stays right. f is pinned across the unmap (a reference that is not
 * a mapping), so it is still there to look at.
 */
static long remap_owned(struct mm *mm, struct vma_file *f, uint64_t start, uint64_t size, int prot, int fl,
			uint64_t off)
{
	f->refs++;
	f->pins++;
	long r = mm_munmap(mm, start, size);
	f->pins--;
	if (r >= 0 && !f->owner)
		r = -EINVAL;	/* shm_lock(): the id is gone */
	if (r >= 0)
		r = mm_mmap_vfile(mm, start, size, prot, fl, f, off);
	vma_file_put(f);
	return r < 0 ? r : 0;
}

/*
 * remap_file_pages(2), which Linux 4.0 on emulates with mmap: "EINVAL prot
 * is not 0", a range that wraps or is not one shared file mapping (VMAs
 * that follow must continue it: same file, same flags, no hole); then the
 * range is mapped again from pgoff with the first VMA's protection.
 */
long mm_remap_file_pages(struct mm *mm, uint64_t start, uint64_t size, uint64_t prot, uint64_t pgoff, uint64_t flags)
{
	if (prot)
		return -EINVAL;
	start &= PAGE_MASK;
	size &= PAGE_MASK;
	if (start + size <= start || pgoff + size / PAGE_SIZE < pgoff || pgoff > (UINT64_MAX >> 12))
		return -EINVAL;
	const struct vma *v = vma_lookup(&mm->vmas, start);
	if (!v || !v->file || (v->flags & MAP_TYPE) == MAP_PRIVATE)
		return -EINVAL;
	const struct vma *prev = v;
	while (start + size > prev->end) {
		const struct vma *next = vma_next(&mm->vmas, prev);
		if (!next || next->start != prev->end || next->file != v->file || next->flags != v->flags)
			return -EINVAL;
		prev = next;
	}
	int fl = (int)(flags & MAP_NONBLOCK) | MAP_SHARED | MAP_FIXED | MAP_POPULATE;
	if (locked(v))
		fl |= MAP_LOCKED;
	if (v->file->unref)
		return remap_owned(mm, v->file, start, size, v->prot, fl | (v->flags & PVX_MAP_NOWRITE), pgoff * PAGE_SIZE);
	long r = mm_mmap(mm, start, size, v->prot, fl, v->file->fd, pgoff * PAGE_SIZE);
	return r < 0 ? r : 0;
}

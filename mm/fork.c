// SPDX-License-Identifier: GPL-2.0
/*
 * fork(2) for address spaces, two ways. Where the platform can (as_fork),
 * the parent's stub forks itself and the host shares every private page
 * copy-on-write, as Linux's dup_mmap() does; the child's mm only records
 * the VMAs (mm_inherit). Otherwise (PVX_FORK=copy, or the host fork
 * failed) the copy below: the child's stub gets every VMA of the
 * parent, and the pages the parent has touched are copied into it. Shared
 * mappings (files and shared anonymous memory, which is a memfd) are mapped
 * again, so they stay shared; private memory becomes a copy, which is what
 * copy-on-write looks like to both processes. Pages the parent never
 * touched are skipped (from /proc/PID/pagemap): they are zero, or the
 * file's content, in the child too.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>

#include "pvx/hostcred.h"
#include "pvx/log.h"
#include "pvx/mm.h"
#include "sentry/platform/platform.h"

#define PM_PRESENT (1ULL << 63)
#define PM_SWAPPED (1ULL << 62)
#define COPY_CHUNK (1UL << 20)

static long as_call3(struct mm *mm, long nr, long a0, long a1, long a2)
{
	long a[6] = { a0, a1, a2 };

	return mm->as->ops->as_syscall(mm->as, nr, a);
}

/* Copy [start, end) from parent to child, touched pages only. */
static long copy_touched(struct mm *child, struct mm *parent, int pagemap, uint64_t start, uint64_t end)
{
	static uint64_t pm[512];
	cleanup_free char *buf = malloc(COPY_CHUNK);

	if (!buf)
		return -ENOMEM;
	for (uint64_t at = start; at < end;) {
		size_t pages = MIN((end - at) / PAGE_SIZE, ARRAY_SIZE(pm));
		ssize_t n = pread(pagemap, pm, pages * 8, (off_t)(at / PAGE_SIZE * 8));
		if (n != (ssize_t)(pages * 8)) {	/* no pagemap: copy everything */
			for (size_t i = 0; i < pages; i++)
				pm[i] = PM_PRESENT;
		}
		for (size_t i = 0; i < pages;) {
			if (!(pm[i] & (PM_PRESENT | PM_SWAPPED))) {
				i++;
				continue;
			}
			size_t j = i;
			while (j < pages && (pm[j] & (PM_PRESENT | PM_SWAPPED)) && (j - i) * PAGE_SIZE < COPY_CHUNK)
				j++;
			uint64_t addr = at + i * PAGE_SIZE;
			size_t len = (j - i) * PAGE_SIZE;
			struct iovec l = { buf, len }, r = { (void *)addr, len };
			if (process_vm_readv(parent->as->pid, &l, 1, &r, 1, 0) != (ssize_t)len ||
			    process_vm_writev(child->as->pid, &l, 1, &r, 1, 0) != (ssize_t)len) {
				pr_err("fork: copying %#lx+%#zx failed: %m", addr, len);
				return -EFAULT;
			}
			i = j;
		}
		at += pages * PAGE_SIZE;
	}
	return 0;
}

static long copy_vma(struct mm *child, struct mm *parent, int pagemap, const struct vma *v)
{
	bool shared = (v->flags & MAP_TYPE) != MAP_PRIVATE;
	int map_prot = shared ? v->prot : v->prot | PROT_READ | PROT_WRITE;
	int flags = (v->flags & ~(MAP_TYPE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE | MAP_POPULATE)) | MAP_FIXED |
		    (shared ? MAP_SHARED : MAP_PRIVATE) | (v->file ? 0 : MAP_ANONYMOUS);
	uint64_t charge = vma_charge(v->prot, v->flags, v->file, v->end - v->start);
	long r;

	if (v->flags & VMA_DONTFORK)
		return 0;	/* MADV_DONTFORK: not in the child (dup_mmap) */
	r = mm_charge(charge);	/* the child's copy commits memory of its own, as dup_mmap() charges */
	if (r)
		return r;
	r = mm_map_vma(child, v->start, v->end - v->start, map_prot, flags, v->file, v->off);
	if (r < 0) {
		mm_uncharge(charge);
		return r;
	}
	/* MADV_WIPEONFORK: fresh zero pages (copy_page_range() skips the VMA), and the stub's mapping says so again */
	if (v->flags & VMA_WIPEONFORK)
		r = as_call3(child, SYS_madvise, (long)v->start, (long)(v->end - v->start), MADV_WIPEONFORK);
	else
		r = shared ? 0 : copy_touched(child, parent, pagemap, v->start, v->end);
	if (!r && map_prot != v->prot)
		r = as_call3(child, SYS_mprotect, (long)v->start, (long)(v->end - v->start), v->prot);
	/* Record what the guest asked for (its flags), not how we mapped it. */
	if (r >= 0)
		r = vma_insert(&child->vmas, v->start, v->end, v->prot, v->flags & ~(VMA_LOCKED | VMA_LOCKONFAULT),
			       v->file, v->off);	/* "Memory locks are not inherited by a child" */
	if (r < 0)
		mm_uncharge(charge);	/* not recorded: mm_release will not give it back */
	return r < 0 ? r : 0;
}

/* vma_dup_policy(): the child's VMAs get the parent's mbind policies, once all are inserted. */
static long copy_policies(struct mm *child, const struct mm *parent)
{
	long r = 0;

	for (const struct vma *v = vma_first(&parent->vmas); v && !r; v = vma_next(&parent->vmas, v))
		if (v->pol)
			r = vma_set_policy(&child->vmas, v->start, v->end, v->pol);
	return r;
}

/* The brk, stack and environment bounds the child has as the parent does. */
static void copy_bounds(struct mm *child, const struct mm *parent)
{
	child->brk_start = parent->brk_start;
	child->brk_cur = parent->brk_cur;
	child->mmap_base = parent->mmap_base;
	child->stack_top = parent->stack_top;
	child->env_start = parent->env_start;
	child->env_end = parent->env_end;
}

bool mm_fork_by_host(void)
{
	static int mode = -1;

	if (mode < 0) {
		const char *env = getenv("PVX_FORK");
		mode = !(env && !strcmp(env, "copy"));
	}
	return mode;
}

long mm_inherit(struct mm *child, struct mm *parent)
{
	copy_bounds(child, parent);
	vma_for_each(v, &parent->vmas) {
		if (v->flags & VMA_DONTFORK)
			continue;	/* dup_mmap(): "if (mpnt->vm_flags & VM_DONTCOPY) ... continue"; the host's fork too */
		uint64_t charge = vma_charge(v->prot, v->flags, v->file, v->end - v->start);
		long r = mm_charge(charge);	/* the child's pages are its own commitment, as dup_mmap() charges */
		if (r)
			return r;
		/* "Memory locks are not inherited by a child" */
		r = vma_insert(&child->vmas, v->start, v->end, v->prot, v->flags & ~(VMA_LOCKED | VMA_LOCKONFAULT),
			       v->file, v->off);
		if (r < 0) {
			mm_uncharge(charge);
			return r;
		}
	}
	return copy_policies(child, parent);
}

long mm_fork(struct mm *child, struct mm *parent, struct addr_space **out)
{
	struct addr_space *as = NULL;
	const struct platform_ops *ops = parent->as->ops;

	*out = NULL;
	if (!ops->as_fork || !mm_fork_by_host())
		return 1;
	long r = ops->as_fork(parent->as, &as);
	if (r == -ESRCH)
		return r;	/* the parent's stub is gone (killed): nothing to copy from either */
	if (r < 0) {
		pr_debug("fork: the host fork of stub %d failed (%s): copying", parent->as->pid, strerror((int)-r));
		return 1;
	}
	/* A host fork copies the process's oom_score_adj (copy_signal()): mm_init need not write it again. */
	as->oom_first = parent->as->oom_first;
	r = mm_init(child, as);
	if (!r)
		r = mm_inherit(child, parent);
	child->keeper = parent->keeper;	/* the host's fork kept that page too */
	if (!r)
		r = mm_ut_copy(child, parent, true);	/* the host's fork kept the patched sites and the table */
	if (r < 0) {
		mm_release(child);
		ops->as_release(as, NULL);
		return r;
	}
	*out = as;
	return 0;
}

long mm_copy(struct mm *child, struct mm *parent)
{
	char path[64];
	long r = 0;

	/* libc keeps pointers into the vDSO: the child's stub must have it where the parent's has. */
	if (child->as->vdso != parent->as->vdso) {
		pr_warn("fork: the new stub's vDSO is at %#lx, the parent's at %#lx", child->as->vdso, parent->as->vdso);
		return -ENOMEM;
	}
	copy_bounds(child, parent);
	snprintf(path, sizeof(path), "/proc/%d/pagemap", parent->as->pid);
	int pagemap = open_privileged(path, O_RDONLY | O_CLOEXEC);	/* 0400 root: not nobody's */
	for (const struct vma *v = vma_first(&parent->vmas); v && !r; v = vma_next(&parent->vmas, v))
		r = copy_vma(child, parent, pagemap, v);
	if (pagemap >= 0)
		close(pagemap);
	if (!r)
		mm_keep_tables(child);	/* the parent's, in the new stub */
	return r ?: copy_policies(child, parent) ?: mm_ut_copy(child, parent, false);
}

/*
 * The parent's pages must be readable while the child copies them; the
 * ptrace platform only lets the parent's own thread change its stub, so the
 * parent opens up its unreadable private VMAs before and closes them after.
 */
long mm_fork_prepare(struct mm *parent, bool undo)
{
	vma_for_each(v, &parent->vmas) {
		if ((v->prot & PROT_READ) || (v->flags & MAP_TYPE) != MAP_PRIVATE)
			continue;
		long r = as_call3(parent, SYS_mprotect, (long)v->start, (long)(v->end - v->start),
				  undo ? v->prot : v->prot | PROT_READ);
		if (r < 0)
			return r;
	}
	return 0;
}

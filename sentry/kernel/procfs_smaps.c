// SPDX-License-Identifier: GPL-2.0
/*
 * /proc/PID/smaps: each VMA's maps line and its memory (show_smap()). Rss
 * is the stub's pages in memory (mm_resident); a process of the sandbox
 * maps its pages alone (no sharing the sentry can see), so Pss is Rss and
 * the pages are private: dirty for anonymous memory, clean for a file's.
 * Locked is Pss for an mlock'ed VMA, as Linux. What Linux counts and pvx
 * cannot see is 0: swap, KSM, huge pages, lazily freed pages.
 */
#include <stdio.h>
#include <sys/mman.h>

#include "pvx/mm.h"
#include "sentry/kernel/procfs.h"

/* show_smap_vma_flags(): the VM_* flags pvx keeps. */
static void vm_flags(FILE *f, const struct vma *v)
{
	bool shared = (v->flags & MAP_TYPE) != MAP_PRIVATE;

	fputs("VmFlags:", f);
	if (v->prot & PROT_READ)
		fputs(" rd", f);
	if (v->prot & PROT_WRITE)
		fputs(" wr", f);
	if (v->prot & PROT_EXEC)
		fputs(" ex", f);
	if (shared)
		fputs(" sh", f);
	fputs(" mr mw me", f);
	if (shared)
		fputs(" ms", f);
	if (v->flags & MAP_GROWSDOWN)
		fputs(" gd", f);
	if (v->flags & (VMA_LOCKED | MAP_LOCKED))
		fputs(" lo", f);
	if (!shared && (v->prot & PROT_WRITE))
		fputs(" ac", f);
	if (v->flags & VMA_SEALED)
		fputs(" sl", f);
	fputs(" \n", f);
}

long procfs_gen_smaps(struct task *p, char **out, size_t *len)
{
	FILE *f = open_memstream(out, len);

	if (!f)
		return -ENOMEM;
	vma_for_each(v, &p->mm->vmas) {
		uint64_t pages = 0;
		if (mm_resident(p->mm, v->start, v->end, &pages))
			pages = 0;
		unsigned long kb = (unsigned long)(v->end - v->start) >> 10, rss = (unsigned long)pages * (PAGE_SIZE >> 10);
		bool anon = !v->file || (v->flags & MAP_ANONYMOUS), locked = v->flags & (VMA_LOCKED | MAP_LOCKED);
		bool anon_private = anon && (v->flags & MAP_TYPE) == MAP_PRIVATE;
		procfs_map_line(f, p, v);
		fprintf(f, "Size:           %8lu kB\nKernelPageSize: %8lu kB\nMMUPageSize:    %8lu kB\n", kb,
			PAGE_SIZE >> 10, PAGE_SIZE >> 10);
		fprintf(f, "Rss:            %8lu kB\nPss:            %8lu kB\nPss_Dirty:      %8lu kB\n", rss, rss,
			anon ? rss : 0);
		fprintf(f, "Shared_Clean:   %8lu kB\nShared_Dirty:   %8lu kB\nPrivate_Clean:  %8lu kB\n"
			   "Private_Dirty:  %8lu kB\nReferenced:     %8lu kB\nAnonymous:      %8lu kB\n",
			0UL, 0UL, anon ? 0 : rss, anon ? rss : 0, rss, anon_private ? rss : 0);
		fputs("KSM:                   0 kB\nLazyFree:              0 kB\nAnonHugePages:         0 kB\n"
		      "ShmemPmdMapped:        0 kB\nFilePmdMapped:         0 kB\nShared_Hugetlb:        0 kB\n"
		      "Private_Hugetlb:       0 kB\nSwap:                  0 kB\nSwapPss:               0 kB\n", f);
		fprintf(f, "Locked:         %8lu kB\nTHPeligible:    %8d\n", locked ? rss : 0, 0);
		vm_flags(f, v);
	}
	return fclose(f) ? -ENOMEM : 0;
}

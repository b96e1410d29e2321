// SPDX-License-Identifier: GPL-2.0
/*
 * Which guest pages are in memory: the host's pagemap of the stub that
 * holds the address space (root's to read: open_privileged), as Linux's
 * page walks see their own page tables. /proc/PID/smaps counts them
 * (Rss), move_pages(2) asks page by page.
 */
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include "pvx/hostcred.h"
#include "pvx/mm.h"
#include "sentry/platform/platform.h"

#define PM_PRESENT (1ULL << 63)

/* See pvx/mm.h. */
long mm_resident(struct mm *mm, uint64_t start, uint64_t end, uint64_t *pages)
{
	static uint64_t pm[512];	/* under the sentry lock */
	char path[64];

	*pages = 0;
	if (!mm->as)
		return -ESRCH;
	snprintf(path, sizeof(path), "/proc/%d/pagemap", mm->as->pid);
	cleanup_close int fd = open_privileged(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -EIO;
	for (uint64_t at = start & PAGE_MASK; at < end;) {
		size_t n = MIN((PAGE_ALIGN_UP(end) - at) / PAGE_SIZE, ARRAY_SIZE(pm));
		if (pread(fd, pm, n * 8, (off_t)(at / PAGE_SIZE * 8)) != (ssize_t)(n * 8))
			return -EIO;
		for (size_t i = 0; i < n; i++)
			*pages += !!(pm[i] & PM_PRESENT);
		at += n * PAGE_SIZE;
	}
	return 0;
}

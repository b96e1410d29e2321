// SPDX-License-Identifier: GPL-2.0
/*
 * The sandbox's memory bound (pvx run --memory=SIZE): commit accounting as
 * Linux does it under vm.overcommit_memory=2, for all the sandbox's address
 * spaces together. What a guest maps is charged when it is mapped, and a
 * mapping, brk, mprotect, mremap, fork or exec that would go past the
 * limit gets ENOMEM: the guest sees what it would see on a Linux with
 * strict overcommit. Charged (see vma_charge): private writable memory,
 * MAP_NORESERVE included (Linux's mode 2 charges it too; otherwise it
 * would be the way around the bound), private readable anonymous memory
 * (its zero pages cost page tables), shared mappings of files whose pages
 * are memory (tmpfs, memfds), and pvx's memfd behind shared anonymous
 * memory once for its size. Not charged, as in Linux: PROT_NONE
 * reservations and shared mappings of files on disk.
 *
 * Not seen here: what a guest writes into a tmpfs or memfd with write()
 * or fallocate() rather than through a mapping, and page tables of sparse
 * file mappings. For those the stubs are the host OOM killer's first
 * choice (mm_init), so a guest process dies, not pvx or a host process.
 *
 * The default, 3/4 of RAM plus swap, follows Linux's own CommitLimit
 * (overcommit_ratio percent of RAM plus swap, 50% by default, but for
 * every process of the host together): one sandbox can take most of the
 * machine but leaves a quarter for the host, and two sandboxes that want
 * more must be given --memory.
 *
 * The counter is updated with atomics: address spaces change under the
 * sentry lock, but the bound must not depend on that.
 */
#include <stdio.h>
#include <string.h>
#include <sys/sysinfo.h>

#include "pvx/mm.h"

static uint64_t limit;		/* 0 until set: the default then */
static uint64_t committed;
static bool reported;

uint64_t mm_memory_default(void)
{
	struct sysinfo si;

	if (sysinfo(&si) < 0)
		return UINT64_MAX;
	return (uint64_t)si.totalram * si.mem_unit / 4 * 3 + (uint64_t)si.totalswap * si.mem_unit;
}

uint64_t mm_memory_limit(void)
{
	uint64_t l = __atomic_load_n(&limit, __ATOMIC_RELAXED);

	if (!l) {
		l = mm_memory_default();
		__atomic_store_n(&limit, l, __ATOMIC_RELAXED);
	}
	return l;
}

/* --memory=SIZE: bytes, or with a K, M, G or T suffix (powers of 1024); at least one page. */
long mm_set_memory_limit(const char *arg)
{
	char *end;
	unsigned long long v = strtoull(arg, &end, 10);
	int shift = 0;

	if (end == arg || arg[0] == '-')
		return -EINVAL;
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	case 't': case 'T': shift = 40; end++; break;
	}
	if (*end == 'i' && shift)	/* 64MiB reads as 64M */
		end++;
	if (*end == 'B' || *end == 'b')
		end++;
	if (*end || v == 0 || v > (UINT64_MAX >> shift) || (v << shift) < PAGE_SIZE)
		return -EINVAL;
	__atomic_store_n(&limit, (uint64_t)v << shift, __ATOMIC_RELAXED);
	return 0;
}

uint64_t mm_committed(void)
{
	return __atomic_load_n(&committed, __ATOMIC_RELAXED);
}

long mm_charge(uint64_t bytes)
{
	uint64_t l = mm_memory_limit(), cur = __atomic_load_n(&committed, __ATOMIC_RELAXED);

	do {
		if (bytes > l || cur > l - bytes) {
			/* Once per sandbox: the guest sees ENOMEM, the user sees why. */
			if (!__atomic_exchange_n(&reported, true, __ATOMIC_RELAXED))
				fprintf(stderr, "pvx: the sandbox's memory limit (%llu MiB, --memory) is reached: "
					"the guest gets ENOMEM\n", (unsigned long long)(l >> 20));
			return -ENOMEM;
		}
	} while (!__atomic_compare_exchange_n(&committed, &cur, cur + bytes, false, __ATOMIC_RELAXED,
					      __ATOMIC_RELAXED));
	return 0;
}

void mm_uncharge(uint64_t bytes)
{
	__atomic_fetch_sub(&committed, bytes, __ATOMIC_RELAXED);
}

// SPDX-License-Identifier: GPL-2.0
/*
 * kcmp(2)'s ordering of kernel objects (kernel/kcmp.c kptr_obfuscate):
 * each type has two random cookies drawn once per run, and an object's
 * address x orders as (x ^ c0) * c1 (c1 odd, so the map is one-to-one).
 * The guest learns which objects are the same and a consistent order, and
 * nothing of where the sentry keeps them.
 */
#include <sys/random.h>

#include "pvx/kernel.h"
#include "pvx/timer.h"

#define KCMP_TYPES 8

static uint64_t cookies[KCMP_TYPES][2];
static bool cookies_set;

static uint64_t obfuscate(const void *p, int type)
{
	if (!cookies_set) {
		if (getrandom(cookies, sizeof(cookies), 0) != sizeof(cookies))
			for (int i = 0; i < KCMP_TYPES; i++)	/* never: getrandom of 128 bytes does not fail */
				cookies[i][0] = (uint64_t)timer_now_ns() * 0x9e3779b97f4a7c15ULL, cookies[i][1] = ~0ULL;
		for (int i = 0; i < KCMP_TYPES; i++)
			cookies[i][1] |= 1;
		cookies_set = true;
	}
	return ((uint64_t)(uintptr_t)p ^ cookies[type][0]) * cookies[type][1];
}

/* See pvx/kernel.h. */
int kcmp_order(const void *a, const void *b, int type)
{
	uint64_t x = obfuscate(a, type), y = obfuscate(b, type);

	return (x < y) | ((x > y) << 1);
}

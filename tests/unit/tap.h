/* SPDX-License-Identifier: GPL-2.0 */
/* A minimal TAP producer for the C unit tests (run by automake's tap-driver). */
#ifndef PVX_TAP_H
#define PVX_TAP_H

#include <stdio.h>

static int tap_n, tap_failed;

#define ok(cond, ...)                                                            \
	do {                                                                     \
		int _ok = !!(cond);                                              \
		tap_failed += !_ok;                                              \
		printf("%sok %d - ", _ok ? "" : "not ", ++tap_n);                \
		printf(__VA_ARGS__);                                             \
		printf("\n");                                                    \
		if (!_ok)                                                        \
			printf("# failed at %s:%d: %s\n", __FILE__, __LINE__, #cond); \
	} while (0)

static inline int tap_done(void)
{
	printf("1..%d\n", tap_n);
	return tap_failed ? 1 : 0;
}

#endif

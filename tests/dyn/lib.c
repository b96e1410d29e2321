// SPDX-License-Identifier: GPL-2.0
/* A shared library for tests/dynamic.bats: found by $ORIGIN, LD_LIBRARY_PATH, or replaced by LD_PRELOAD. */
#ifndef VALUE
#define VALUE 42
#endif
int pvxt_value(void)
{
	return VALUE;
}

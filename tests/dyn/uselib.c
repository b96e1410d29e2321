// SPDX-License-Identifier: GPL-2.0
/* Prints what libpvxt's pvxt_value() says (tests/dynamic.bats). */
#include <stdio.h>

int pvxt_value(void);

int main(void)
{
	printf("pvxt_value %d\n", pvxt_value());
	return 0;
}

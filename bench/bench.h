/* What the benchmark guests of bench/ share. */
#ifndef PVX_BENCH_H
#define PVX_BENCH_H
#include <time.h>

/* CLOCK_MONOTONIC in ns: the vDSO's, so no trap to the sentry in pvx. */
static inline double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}
#endif

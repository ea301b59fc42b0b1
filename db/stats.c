/* stats.c - group statistics (stats.h). */
#include "db/stats.h"

#include <math.h>

static double at(const int64_t *d, size_t stride, size_t i)
{
	return (double)*(const int64_t *)(const void *)((const char *)d + i * stride);
}

void xp_stats__of_sorted(const int64_t *d, size_t n, size_t stride, int64_t total,
			 struct xp_stats *st)
{
	double sum2 = 0;

	st->avg = (double)total / (double)n;
	st->med = n % 2 ? at(d, stride, n / 2) : (at(d, stride, n / 2 - 1) + at(d, stride, n / 2)) / 2;
	for (size_t i = 0; i < n; i++)
		sum2 += (at(d, stride, i) - st->avg) * (at(d, stride, i) - st->avg);
	st->sd = n > 1 ? sqrt(sum2 / (double)(n - 1)) : 0;
}

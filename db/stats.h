/* stats.h - the one routine behind a group's statistics (avg, median,
 * sample stddev), used by correlate when it precomputes the report groups
 * and by report when it computes them from the rows: one code path, so the
 * two sources give the same bytes.
 *
 *   struct xp_stats st;
 *   xp_stats__of_sorted(&rows[0].dur, n, sizeof(rows[0]), total, &st);
 */
#ifndef XP_DB_STATS_H
#define XP_DB_STATS_H

#include <stddef.h>
#include <stdint.h>

struct xp_stats {
	double avg;                 /* total / n */
	double med;                 /* middle value, or mean of the two middle ones */
	double sd;                  /* sample standard deviation (n - 1); 0 for n = 1 */
};

/* d: n >= 1 durations sorted ascending, stride bytes apart (a column of an
 * array of structs); total: their sum as the caller keeps it. Sums in index
 * order. */
void xp_stats__of_sorted(const int64_t *d, size_t n, size_t stride, int64_t total,
			 struct xp_stats *st);

#endif

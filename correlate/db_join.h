/* db_join.h - runs the correlation join (join.h) on the database: reads
 * xp_launches, CUPTI_ACTIVITY_KIND_RUNTIME and xp_samples, writes
 * xp_attribution, xp_sample_api, xp_correlation_counts, xp_launch_rejects,
 * the clock skew rows of META_DATA_EXPORT and the report's precomputed groups
 * (xp_report_groups, xp_report_kernel_stacks, xp_report_coverage).
 *
 *   struct xc_summary sum;
 *   if (xc_correlate_db(db, &sum) < 0) fprintf(stderr, "%s\n", sqlite3_errmsg(db));
 *
 * Runs in a savepoint of its own (inside or outside a transaction) and
 * replaces the results of an earlier run, so it can be run again.
 */
#ifndef XC_DB_JOIN_H
#define XC_DB_JOIN_H

#include <stdint.h>
#include <sqlite3.h>

#include "correlate/join.h"

#define XC_WINDOW_NS 10000000ull    /* fallback: a sample up to 10 ms before the call */
#define XC_SLACK_NS 0ull            /* both stamps are CLOCK_MONOTONIC on one host */

struct xc_summary {
	uint64_t gpu_rows;          /* kernel + memcpy + memset rows */
	uint64_t rows_exact, rows_inferred, rows_none;
	int64_t gpu_ns;             /* sum of end - start over those rows */
	int64_t ns_exact, ns_inferred, ns_none;
	uint64_t no_api;            /* GPU rows without an API call (pid, correlationId) */
	uint64_t reasons[XC_REASON_COUNT];  /* from xc_join: launches and API calls */
	uint64_t samples_in_api;
	uint64_t samples_out_of_order;
	uint64_t skew_n;            /* kernels with a timed API call */
	uint64_t skew_negative;     /* of those, kernel start before the call's start */
	int64_t skew_min_ns;        /* min of kernel start - API start */
	int64_t skew_median_ns;
};

int xc_correlate_db(sqlite3 *db, struct xc_summary *out);

#endif

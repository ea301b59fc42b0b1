/* report_groups.h - per-group statistics that `xpcorr report` reads instead
 * of sorting every GPU row again at each report: the correlation already
 * walks every kernel, memcpy, memset and API row once, so it collects
 * (group, duration) pairs on the way and writes one row per group.
 *
 *   struct xc_groups g = { 0 };
 *   xc_groups_gpu_row(&g, &row);            // per GPU row, by db_join.c
 *   xc_groups_api_row(&g, name_id, dur);     // per API call
 *   xc_groups_write(db, &g);                 // xp_report_groups, ..._kernel_stacks,
 *   xc_groups_free(&g);                      // ..._coverage (xpcorr-gpu-db(5))
 *
 * Statistics come from db/stats.h, as report.c's from the rows do, so a
 * report from either source is identical.
 */
#ifndef XC_REPORT_GROUPS_H
#define XC_REPORT_GROUPS_H

#include <stddef.h>
#include <stdint.h>
#include <sqlite3.h>

#include "correlate/join.h"

#define XC_NO_API_REASON XC_REASON_COUNT   /* reason code of "no API record" */

struct xc_keydur {
	int64_t key;
	int64_t dur;
};

struct xc_kstack {
	int64_t key;                /* kernel name id */
	int64_t stack_id;           /* -1: none */
	int64_t dur;
	uint8_t how;                /* enum xc_how */
	uint8_t reason;             /* enum xc_reason or XC_NO_API_REASON */
};

struct xc_vec {
	void *v;
	size_t n, cap;
};

struct xc_groups {
	struct xc_vec kernel, mangled;      /* xc_keydur: name id, duration */
	struct xc_vec kstack, mstack;       /* xc_kstack: by demangled / mangled name */
	struct xc_vec stack;                /* xc_keydur: launching stack, every GPU row */
	struct xc_vec api;                  /* xc_keydur: API name id, call duration */
	int64_t cov_n[3][XC_NO_API_REASON + 1];    /* coverage by how, reason */
	int64_t cov_ns[3][XC_NO_API_REASON + 1];
};

/* One attributed GPU row. */
struct xc_gpu_row {
	int is_kernel;
	int64_t name_id;            /* kernels: demangledName */
	int64_t mangled_id;         /* kernels: mangledName, -1 if NULL */
	int64_t stack_id;           /* XC_NO_STACK if none */
	uint8_t how, reason;
	int64_t dur;
};

/* 0 or -ENOMEM. */
int xc_groups_gpu_row(struct xc_groups *g, const struct xc_gpu_row *r);
int xc_groups_api_row(struct xc_groups *g, int64_t name_id, int64_t dur);
/* Sorts what was collected and writes the three tables. 0, -EIO or -ENOMEM. */
int xc_groups_write(sqlite3 *db, struct xc_groups *g);
void xc_groups_free(struct xc_groups *g);
/* Names of how and reason codes as xp_attribution spells them. */
const char *xc_how_name(uint8_t how);
const char *xc_attr_reason_name(uint8_t reason);

#endif

/* join.h - the correlation join: which CPU stack launched each GPU record.
 *
 * Pure in-memory sort-merge joins over plain arrays, independent of SQLite,
 * so every race of the old per-CPU design can be tested with synthetic
 * input. The database glue (correlate/db_join.c) fills the arrays and
 * writes the results back.
 *
 *   struct xc_input in = { .launches = l, .n_launches = nl, .apis = a, ... };
 *   struct xc_result res;
 *   if (xc_join(&in, &res) == 0) { ... res.api_attr[i] ... } xc_result_free(&res);
 *
 * Trust nothing about which CPU a record came from: a launch record is
 * accepted for an API call only if pid, correlation id, tid and time all
 * agree. Every rejected or unmatched record is counted by reason.
 */
#ifndef XC_JOIN_H
#define XC_JOIN_H

#include <stddef.h>
#include <stdint.h>

#define XC_NO_STACK (-1)

/* A uprobe record at the correlation marker. */
struct xc_launch {
	uint64_t ts;                /* ns */
	uint64_t corr;              /* correlation id the marker was called with */
	uint32_t pid;
	uint32_t tid;
	int64_t stack_id;           /* the recorded CPU stack */
	int64_t id;                 /* the caller's row id, echoed in results */
};

/* A CUDA API call recorded by the injection library (outermost calls). */
struct xc_api {
	uint64_t start;             /* ns, enter */
	uint64_t end;               /* ns, exit */
	uint64_t corr;              /* correlation id */
	uint32_t pid;
	uint32_t tid;
	int64_t id;                 /* the caller's row id, echoed in results */
};

/* A CPU sample, delivered in (pid, tid, ts) order by an iterator. */
struct xc_sample {
	uint64_t ts;
	uint32_t pid;
	uint32_t tid;
	int64_t stack_id;
	int64_t id;                 /* the caller's row id */
};

enum xc_how {
	XC_UNATTRIBUTED = 0,
	XC_EXACT = 1,               /* the uprobe record of this very call */
	XC_INFERRED = 2,            /* a nearby sample of the same thread */
};

/* Why a launch record was rejected or an API call left without one. */
enum xc_reason {
	XC_OK = 0,
	XC_LAUNCH_NO_API,           /* launch record whose (pid, corr) has no API call */
	XC_LAUNCH_WRONG_TID,        /* (pid, corr) matches but another thread made the call */
	XC_LAUNCH_OUTSIDE_CALL,     /* right thread, but ts outside the call */
	XC_LAUNCH_DUPLICATE,        /* a second record for an already matched call */
	XC_API_NO_LAUNCH,           /* API call without a launch record: fallback used */
	XC_API_NO_EVIDENCE,         /* ... and no sample of its thread nearby either */
	XC_REASON_COUNT,
};

struct xc_attr {
	int64_t stack_id;           /* XC_NO_STACK when unattributed */
	uint8_t how;                /* enum xc_how */
	uint8_t reason;             /* enum xc_reason (for the API call) */
	int64_t distance_ns;        /* inferred: |sample ts - call start|; 0 if inside or exact */
};

/* Returns the next sample in (pid, tid, ts) order: 1, 0 at the end, <0 error. */
typedef int (*xc_next_sample_fn)(void *ctx, struct xc_sample *out);
/* Called for each sample that lies inside an API call (same pid and tid). */
typedef int (*xc_sample_in_api_fn)(void *ctx, const struct xc_sample *s,
				   const struct xc_api *api);

struct xc_input {
	struct xc_launch *launches;  /* sorted in place */
	size_t n_launches;
	struct xc_api *apis;         /* sorted in place; results follow this order */
	size_t n_apis;
	xc_next_sample_fn next_sample;   /* may be NULL: no samples */
	void *sample_ctx;
	xc_sample_in_api_fn on_sample_in_api;  /* may be NULL */
	void *in_api_ctx;
	uint64_t window_ns;          /* fallback: how far before a call a sample may be */
	uint64_t slack_ns;           /* tolerance for launch ts outside [start, end] */
};

struct xc_result {
	struct xc_attr *api_attr;    /* one per input API call, in sorted order */
	uint8_t *launch_reason;      /* one per launch record, in sorted order: XC_OK or
	                                the XC_LAUNCH_* reason it was rejected for */
	uint64_t reasons[XC_REASON_COUNT];   /* counts by reason */
	uint64_t samples_in_api;     /* samples tagged with a call */
	uint64_t samples_out_of_order;   /* iterator broke (pid, tid, ts) order */
};

/* Sorts apis by (pid, corr) and launches likewise, then joins. 0 or -errno. */
int xc_join(struct xc_input *in, struct xc_result *res);
/* The API call for (pid, corr) in the sorted array, or NULL. */
const struct xc_api *xc_find_api(const struct xc_input *in, uint32_t pid,
				 uint64_t corr, size_t *index);
void xc_result_free(struct xc_result *res);
const char *xc_reason_name(enum xc_reason r);

#endif

/* convert.h - CUPTI activity records -> GPU stream records (runfmt_gpu.h).
 *
 * Pure functions: they read a CUPTI struct, intern its names and hand the
 * resulting records to an emit function, nothing else. That keeps CUPTI
 * layouts and CUPTI-owned name pointers off the disk, and lets CI (no GPU)
 * test the conversion with hand-made CUpti_ActivityKernel10 & co:
 *
 *   struct xp_conv c;
 *   xp_conv_init(&c, strings, my_emit, my_ctx);
 *   for each CUpti_Activity *rec in a completed buffer:
 *       xp_convert_activity(&c, rec);
 *   xp_conv_emit_losses(&c, now_ns, dropped_by_cupti);
 *
 * Not thread-safe: one conversion at a time (the caller's lock). */
#ifndef XPCUPTI_CONVERT_H
#define XPCUPTI_CONVERT_H

#include <stddef.h>
#include <stdint.h>

#include <cupti.h>

#include "src/runfmt_gpu.h"
#include "cupti/strintern.h"

/* Appends one record; returns 0 or a negative errno. */
typedef int (*xp_emit_fn)(void *ctx, uint32_t type, const void *fixed,
			  size_t fixed_len, const void *tail, size_t tail_len);

#define XP_CONV_TYPES 96            /* counters indexed by GPU record type */

struct xp_conv {
	struct xpc_strintern *strings;      /* borrowed */
	xp_emit_fn emit;
	void *emit_ctx;
	uint64_t no_timestamp[XP_CONV_TYPES]; /* start = end = 0, not yet reported */
	uint64_t converted;             /* records emitted from CUPTI records */
	uint64_t ignored;               /* CUPTI kinds we do not convert */
	int last_error;                 /* first emit/intern error, negative errno */
};

void xp_conv_init(struct xp_conv *c, struct xpc_strintern *strings,
		  xp_emit_fn emit, void *emit_ctx);

/* Interns s and emits its string record the first time; *id is 0 for NULL
 * or "". Returns 0 or a negative errno. */
int xp_conv_string(struct xp_conv *c, const char *s, uint32_t *id);

/* One CUPTI record: 1 converted, 0 kind not converted, negative errno. */
int xp_convert_activity(struct xp_conv *c, const CUpti_Activity *rec);

/* The field mappings, exposed for the tests. */
void xp_kernel_from_cupti(const CUpti_ActivityKernel10 *k, uint32_t name,
			  struct xp_gpu_kernel *out);
void xp_memcpy_from_cupti(const CUpti_ActivityMemcpy6 *m, struct xp_gpu_memcpy *out);
void xp_memcpy_peer_from_cupti(const CUpti_ActivityMemcpyPtoP4 *m,
			       struct xp_gpu_memcpy_peer *out);
void xp_memset_from_cupti(const CUpti_ActivityMemset4 *m, struct xp_gpu_memset *out);
void xp_sync_from_cupti(const CUpti_ActivitySynchronization2 *s, struct xp_gpu_sync *out);
void xp_api_from_cupti(const CUpti_ActivityAPI *a, struct xp_gpu_api *out);

/* Writes XP_REC_LOST for records without timestamps seen since the last
 * call, and for `dropped` records CUPTI reported dropped. */
int xp_conv_emit_losses(struct xp_conv *c, uint64_t ts, uint64_t dropped);

#endif

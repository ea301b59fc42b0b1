/* runnames.h - the one table of names for the run format's codes: record
 * kinds (runfmt.h, runfmt_py.h, runfmt_gpu.h) and loss reasons, as capture
 * writes them into meta.json ("records.sample.lost.stack"), ingest stores
 * them (xp_losses, xp_record_counts) and dump prints them.
 *
 *   printf("%s", xp_rec_kind_name(h->type));          // "sample", NULL if unknown
 *   xp_loss_reason_name(XP_LOST_STACK);               // "stack_unreadable" (database)
 *   xp_loss_reason_meta_key(XP_LOST_STACK);           // "stack" (meta.json, kept for old runs)
 *   xp_loss_reason_of_meta_key("stack");              // XP_LOST_STACK
 */
#ifndef XP_RUNNAMES_H
#define XP_RUNNAMES_H

#include <stdint.h>

#include "src/runfmt.h"

/* streams as bits of enum xp_stream_kind (runfmt.h) */
#define XP_STREAM_ANY (XP_STREAM_CPU | XP_STREAM_GPU)

struct xp_rec_kind {
	uint32_t type;              /* XP_REC_* */
	const char *name;           /* "sample", "gpu_kernel" */
	unsigned streams;           /* XP_STREAM_CPU | XP_STREAM_GPU bits */
	int in_meta;                /* counted per kind in meta.json "records" */
};

struct xp_loss_reason {
	uint32_t code;              /* XP_LOST_* */
	const char *name;           /* xp_losses.reason, xpcorr info */
	const char *meta_key;       /* meta.json records.KIND.lost.KEY (capture's spelling) */
};

extern const struct xp_rec_kind xp_rec_kinds[];
extern const unsigned xp_rec_nkinds;
extern const struct xp_loss_reason xp_loss_reasons[];
extern const unsigned xp_loss_nreasons;

/* The name of a record type, or NULL for a type the table does not know. */
const char *xp_rec_kind_name(uint32_t type);
/* The same for a type a stream may hold (streams: XP_STREAM_* bits). */
const char *xp_rec_kind_name_in(uint32_t type, unsigned streams);
/* XP_REC_* of a name, or 0. */
uint32_t xp_rec_kind_of_name(const char *name);
/* Database spelling of a loss reason, "unknown" for codes not in the table. */
const char *xp_loss_reason_name(uint32_t code);
/* meta.json spelling, or NULL. */
const char *xp_loss_reason_meta_key(uint32_t code);
/* XP_LOST_* of a meta.json key or database name, or 0. */
uint32_t xp_loss_reason_of_meta_key(const char *key);

#endif

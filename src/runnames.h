/* runnames.h - the one table of the run format's codes: record kinds
 * (runfmt.h, runfmt_py.h, runfmt_gpu.h) with their stream, fixed size, the
 * time fields ingest checks and the fields dump prints; and loss reasons, as
 * capture writes them into meta.json ("records.sample.lost.stack"), ingest
 * stores them (xp_losses, xp_record_counts) and dump prints them. A new
 * record kind is one row here (tests/test-reckinds.c walks the table).
 *
 *   const struct xp_rec_kind *k = xp_rec_kind_of(h->type); // NULL if unknown
 *   if (xp_record_payload_len(h) < k->fixed) ...           // malformed
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
	uint32_t fixed;             /* bytes of its fixed struct; a shorter record is malformed */
	uint8_t span;               /* times[0], times[1]: an activity's start and end */
	uint8_t ntimes;             /* u64 ns fields the GPU loader keeps below 2^63 */
	uint8_t times[3];           /* their offsets in the fixed struct */
	const char *dump;           /* the fields `xpcorr dump` prints after the name, in
				     * order; [key]: only when the record has it; NULL:
				     * never dumped (readers expand XP_REC_ZBLOCK) */
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

/* The row of a record type, or NULL for a type the table does not know. */
const struct xp_rec_kind *xp_rec_kind_of(uint32_t type);
/* Whether the time fields of a record of kind k (payload p, at least
 * k->fixed bytes) are below 2^63 ns, as the database's signed columns need. */
int xp_rec_kind_times_fit(const struct xp_rec_kind *k, const void *p);
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

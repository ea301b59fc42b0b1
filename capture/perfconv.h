/* perfconv.h - one perf side-band record (PERF_RECORD_MMAP2, FORK, EXIT,
 * COMM, LOST, read with sample_id_all and sample_type TID|TIME) to one
 * run-format record. Pure: tests/test-perfconv.c feeds it hand-built records.
 *   struct perfconv_rec r;
 *   if (perfconv_convert(buf, len, &r) == 0 && r.type)
 *       xp_writer_append(w, r.type, &r.u, r.fixed_len, r.path, r.path_len);
 */
#ifndef XP_CAPTURE_PERFCONV_H
#define XP_CAPTURE_PERFCONV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "src/runfmt.h"

struct perfconv_rec {
	uint32_t type;              /* XP_REC_*, or 0: nothing to write */
	size_t fixed_len;           /* bytes of u used */
	union {
		struct xp_mmap mmap;
		struct xp_task task;
		struct xp_comm comm;
		struct xp_lost lost;
	} u;
	const char *path;           /* mmap: points into the input record */
	size_t path_len;            /* without NUL */
	bool needs_build_id;        /* mmap of a file the kernel gave no build id for */
	uint32_t maj, min;          /* then the mapped inode's device */
	uint64_t ino;               /* and number */
};

/* 0 (out->type may be 0 for records not kept, e.g. data mmaps), or
 * -EBADMSG when the record is shorter than its kind requires. */
int perfconv_convert(const void *rec, size_t len, struct perfconv_rec *out);

#endif

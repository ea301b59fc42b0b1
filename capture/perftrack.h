/* perftrack.h - what the unprivileged (perf) sampler's records leave out
 * and the BPF sampler writes: each thread's name at a sample (perf samples
 * carry none; the names come from COMM records and are inherited at
 * FORK), and the exec records (perf has only the exec's COMM; the path is
 * that of the first executable mapping the new image makes). Pure, fixed
 * size: tests/test-perftrack.c drives it with converted records.
 *   struct perftrack *t = perftrack_new();
 *   struct xp_exec x;
 *   if (perftrack_before(t, &rec, &x))        // before writing rec
 *       write XP_REC_EXEC x (path: rec.path when rec is an mmap, else "")
 *   perftrack_comm(t, tid, sample.comm);
 *   while (perftrack_flush(t, &x)) write x;   // at the end: execs never mapped
 */
#ifndef XP_CAPTURE_PERFTRACK_H
#define XP_CAPTURE_PERFTRACK_H

#include <stdbool.h>
#include <stdint.h>

#include "capture/perfconv.h"
#include "src/runfmt.h"

struct perftrack;

struct perftrack *perftrack_new(void);
void perftrack_free(struct perftrack *t);
/* Notes r (a side-band record about to be written). True when an exec
 * record is to be written first: x->path_len is r's path length when r is
 * the exec's first executable mapping (the program), else 0. */
bool perftrack_before(struct perftrack *t, const struct perfconv_rec *r, struct xp_exec *x);
/* tid's name from elsewhere (an attached process's thread: /proc). */
void perftrack_set_comm(struct perftrack *t, uint32_t tid, const char comm[XP_COMM_LEN]);
/* tid's name as last known, NUL padded ("" when never seen). */
void perftrack_comm(const struct perftrack *t, uint32_t tid, char out[XP_COMM_LEN]);
/* One exec still waiting for its mapping (x->path_len 0), or false. */
bool perftrack_flush(struct perftrack *t, struct xp_exec *x);

#endif

/* perfswitch.h - waits without root: perf's context-switch records
 * (attr.context_switch on the side-band events, sideband.h) of the
 * user's own processes, paired into off-CPU intervals, the same
 * XP_REC_SWITCH records the BPF sched_switch program writes. A switch-out
 * and its switch-in are on the rings of two CPUs, read one after the
 * other: the records of a pass are sorted by thread and time before they
 * are paired, and a half whose other half is not read yet waits for the
 * next pass. perf_event_paranoid 2 gives a normal user no sample in the
 * kernel, so the intervals carry no stack (user_depth 0, XP_STACK_USER_ERR):
 * xpcorr names such a wait by the thread's last CPU sample before it.
 * Pure: tests/test-perfswitch.c feeds it built records.
 *   struct perfswitch *ps = perfswitch_new(50000);
 *   ... for each record read from CPU cpu's ring:
 *   if (perfswitch_take(ps, rec, len, cpu) > 0) continue;   // a switch record
 *   ... after each pass over the rings:
 *   perfswitch_flush(ps, false, on_interval, ctx);
 *   perfswitch_flush(ps, true, on_interval, ctx);            // at the end
 *   perfswitch_free(ps);
 */
#ifndef XP_CAPTURE_PERFSWITCH_H
#define XP_CAPTURE_PERFSWITCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "src/runfmt.h"

struct perfswitch;

/* min_ns: shorter intervals are not handed on (--off-cpu-min-us). NULL: no memory. */
struct perfswitch *perfswitch_new(uint64_t min_ns);
/* A record of a side-band event with sample_id_all TID|TIME: 1 if it was
 * a PERF_RECORD_SWITCH (kept for the pass), 0 if another record, -EBADMSG
 * if a switch record shorter than its fields, -ENOMEM. */
int perfswitch_take(struct perfswitch *ps, const void *rec, size_t len, uint32_t cpu);

typedef void (*perfswitch_fn)(void *ctx, const struct xp_switch *w);
/* Hands fn each interval whose two halves have been taken, in thread and
 * time order; a switch-out without its switch-in yet waits for the next
 * pass (at the end, final, it is dropped: the thread never came back
 * while recorded). Returns the intervals handed on. */
size_t perfswitch_flush(struct perfswitch *ps, bool final, perfswitch_fn fn, void *ctx);
/* Halves dropped so far: a switch-in whose switch-out was never seen
 * (the thread was off CPU when recording began) or a second switch-out. */
uint64_t perfswitch_unpaired(const struct perfswitch *ps);
void perfswitch_free(struct perfswitch *ps);

#endif

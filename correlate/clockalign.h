/* clockalign.h - runs recorded on different hosts put onto one clock.
 * Each host's CLOCK_MONOTONIC is its own. First, each run's start pair
 * (a CLOCK_REALTIME and a CLOCK_MONOTONIC reading, meta.json) maps it
 * onto the reference run's clock: as good as the hosts' NTP, often off by
 * milliseconds. Then collectives refine it: the same collective ends at
 * nearly the same instant on every rank (an NCCL kernel's end; for gloo,
 * the copy back to the GPU that follows the all-reduce on the CPU), so the
 * median difference of the matched ends is what the wall clocks were off
 * by, and the spread of the differences around it is what is left.
 *
 *   struct xc_clock_run ref, run;
 *   xc_clock_run_load(ref_db, &ref);  xc_clock_run_load(run_db, &run);
 *   struct xc_clock_shift s;
 *   xc_clock_align(&ref, &run, &s);   // run's ts + s.shift_ns = the job's ts
 */
#ifndef XC_CLOCKALIGN_H
#define XC_CLOCKALIGN_H

#include <stddef.h>
#include <stdint.h>
#include <sqlite3.h>

/* One collective's end in a run: the n-th of its name in its process. */
struct xc_marker {
	uint64_t name;              /* hash of the collective's name */
	uint32_t nth;               /* 0, 1, ... in that process */
	int64_t ts;                 /* its end on the run's clock */
};

struct xc_clock_run {
	int has_pair;               /* the run's meta had both start readings */
	int64_t mono_ns, real_ns;   /* CLOCK_MONOTONIC and CLOCK_REALTIME at the start */
	struct xc_marker *markers;  /* of the process with the most, by name then nth */
	size_t nmarkers;
	const char *kind;           /* "nccl", "gloo" or NULL: what the markers are */
};

struct xc_clock_shift {
	int64_t shift_ns;           /* run's ts + shift = the job's ts */
	int64_t wall_ns;            /* the shift by the wall clocks alone */
	int64_t refine_ns;          /* what the collectives moved it by */
	int64_t spread_ns;          /* median |difference - refine|, -1 when not refined */
	uint32_t matched;           /* collectives matched with the reference */
	const char *method;         /* "collectives", "wall clock" or "none" */
};

/* 0, -EIO (with the message of db) or -ENOMEM. */
int xc_clock_run_load(sqlite3 *db, struct xc_clock_run *r);
void xc_clock_run_free(struct xc_clock_run *r);
/* The shift of run onto ref's clock (ref itself: 0, "reference"). 0 or -ENOMEM. */
int xc_clock_align(const struct xc_clock_run *ref, const struct xc_clock_run *run,
		   struct xc_clock_shift *out);

#endif

/* chrome.h - the database as a Chrome trace (JSON) that Perfetto, chrome://tracing
 * and torch.profiler (Kineto) tooling read: CPU threads with CUDA API slices,
 * NVTX ranges and CPU samples; GPU devices with a track per stream; flow
 * arrows from each launch to its GPU work. Streamed: memory does not grow with
 * the number of events, but for one byte per CPU sample row (their CPUs,
 * read in one pass: 10 MB at 10M samples).
 *
 *   struct xp_chrome_opts o = { .pid = -1 };
 *   struct xp_chrome_stats st;
 *   if (xp_chrome_write(db, &o, stdout, &st) == -EIO) ... sqlite3_errmsg(db) ...
 */
#ifndef XP_CHROME_H
#define XP_CHROME_H

#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>

struct xp_chrome_opts {
	int64_t pid;                /* only this process (CPU and GPU rows); -1 = all */
	int64_t since, until;       /* ns, CLOCK_MONOTONIC, on event start; until 0 = no end */
	int64_t base;               /* ns, CLOCK_MONOTONIC: "ts" counts from here (the run's
				     * start, as Kineto counts from its own); 0: absolute */
	int queue_depth;            /* counter tracks of each stream's queue (launched, not done) */
};

struct xp_chrome_stats {
	uint64_t events;            /* trace events written, metadata included */
	uint64_t metadata;          /* of them, "M" events (names, sort order) */
	uint64_t flows;             /* launch -> GPU arrows (each is 2 events) */
	uint64_t bytes;             /* bytes of JSON written */
};

/* Perfetto's UI loads traces up to about this size in a browser tab. */
#define XP_CHROME_BROWSER_LIMIT (1000ull * 1000 * 1000)

/* 0, -EIO (a database error: see sqlite3_errmsg), -ENOMEM, or -errno of a
 * write. stats may be NULL. */
int xp_chrome_write(sqlite3 *db, const struct xp_chrome_opts *o, FILE *out,
		    struct xp_chrome_stats *stats);

#endif

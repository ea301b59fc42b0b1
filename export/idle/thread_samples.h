/* thread_samples.h - the CPU samples of the threads that launched GPU work,
 * (ts, stack) by time, each thread's read once: what --by idle shares out
 * over the gaps a thread owns. Those of the threads that made CUDA calls
 * are read ahead (a task, dbtask.h) while the view loads the timeline (at
 * 10M samples each read takes about half a second); another thread's,
 * when first asked.
 *
 *   struct xp_sample_reader *r;
 *   if (xp_sample_reader_start(db, pid, &r) == 0) {      // pid: --pid, 0 all
 *           ... load the timeline ...
 *           const struct xp_thread_samples *t = xp_sample_reader_get(r, gtid, &err);
 *           xp_sample_reader_free(r);
 *   }
 */
#ifndef XP_THREAD_SAMPLES_H
#define XP_THREAD_SAMPLES_H

#include <stddef.h>
#include <stdint.h>
#include <sqlite3.h>

struct xp_thread_samples {
	int64_t gtid;
	int64_t (*s)[2];            /* (ts, stack id), by ts */
	size_t n;
};

struct xp_sample_reader;

/* Starts reading ahead the samples of the threads of the processes pid
 * selects that made CUDA calls. 0 or -ENOMEM; xp_sample_reader_free(*out)
 * either way. */
int xp_sample_reader_start(sqlite3 *db, uint32_t pid, struct xp_sample_reader **out);
/* Thread gtid's samples (none is an empty list); NULL with *err set
 * (-ENOMEM, -EIO) when they cannot be read. */
const struct xp_thread_samples *xp_sample_reader_get(struct xp_sample_reader *r, int64_t gtid,
						     int *err);
/* Waits for the read-ahead, then frees everything. */
void xp_sample_reader_free(struct xp_sample_reader *r);

#endif

/* thread_samples.h - the CPU samples of the threads that launched GPU work,
 * (ts, stack) by time, each thread's read once: what --by idle shares out
 * over the gaps a thread owns. They are read ahead on a thread of their
 * own, over a second connection to the database, while the view loads the
 * timeline over its own (at 10M samples each read takes about a second's
 * half); a thread the read-ahead lacks, or all of them where no second
 * connection opens, is read over the caller's connection when first asked.
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
 * selects that made CUDA calls. 0 or -ENOMEM. */
int xp_sample_reader_start(sqlite3 *db, uint32_t pid, struct xp_sample_reader **out);
/* Thread gtid's samples (none is an empty list); NULL with *err set
 * (-ENOMEM, -EIO) when they cannot be read. */
const struct xp_thread_samples *xp_sample_reader_get(struct xp_sample_reader *r, int64_t gtid,
						     int *err);
/* How many threads the read-ahead read, once it is done (0: no second
 * connection opened, or the read-ahead failed and was dropped). */
int xp_sample_reader_ahead(struct xp_sample_reader *r);
/* Waits for the read-ahead, then frees everything. */
void xp_sample_reader_free(struct xp_sample_reader *r);

#endif

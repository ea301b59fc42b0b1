/* gpu_ingest.h - loads the GPU side of a run (gpu-<pid>.xpr streams and the
 * XP_REC_LAUNCH records of cpu.xpr) into the SQLite database, in tables
 * named and shaped like Nsight Systems' export (man xpcorr-gpu-db(5)).
 *
 * The main loader owns the database, the transaction, StringIds and the
 * stack tables; it lends them through struct xp_gpu_sink_ops:
 *
 *   xp_gpu_schema_create(db);                        // after its own tables
 *   BEGIN;
 *   for each run/gpu-*.xpr: xp_gpu_load_stream(db, path, &ops, ctx, &st, err, sizeof(err));
 *   COMMIT;                 // the launches are load.c's (pass 2); cmd then correlates
 *
 * Every function returns 0 or a negative errno (-EIO for SQLite errors,
 * -EBADMSG for corrupt input) and never prints.
 */
#ifndef XP_GPU_INGEST_H
#define XP_GPU_INGEST_H

#include <stddef.h>
#include <stdint.h>
#include <sqlite3.h>

#include "src/runfile.h"
#include "src/runfmt.h"

struct xp_gpu_sink_ops {          /* provided by the main loader */
	/* -> StringIds.id, or a negative errno (-EIO: sqlite3_errmsg) */
	int64_t (*intern_string)(void *ctx, const char *s);
	/* symbolize + insert; -> leaf stack id (xp_stacks.id), or a negative errno */
	int64_t (*intern_stack)(void *ctx, uint32_t pid, uint64_t ts,
				const uint64_t *kernel_ips, unsigned nk,
				const uint64_t *user_ips, unsigned nu);
	/* the run's read budget (runfile.h), or NULL: the reader's default */
	struct xp_read_budget *(*budget)(void *ctx);
};

/* The longest GPU activity or API call a record may span: 2^53 ns, 104
 * days (longer ones are skipped, counted in bad_times). */
#define XP_GPU_SPAN_MAX_NS (1ull << 53)

struct xp_gpu_load_stats {
	uint64_t records;           /* records read, all types */
	uint64_t strings;
	uint64_t apis;
	uint64_t kernels;
	uint64_t memcpys;
	uint64_t memsets;
	uint64_t syncs;
	uint64_t nvtx;
	uint64_t skipped;           /* unknown types and overhead records */
	uint64_t unknown_strings;   /* ids used but never defined: named "[unknown]" */
	uint64_t lost;              /* sum of xp_lost.count in the stream */
	uint64_t bad_times;         /* records skipped: start and end too far apart */
	int64_t bad_start, bad_end; /* the first of them, for the warning */
	uint32_t pid;               /* pid the stream's rows got (pid space of cpu.xpr) */
	uint32_t own_pid;           /* pid in the process's own namespace */
};

/* Loads one gpu-<pid>.xpr inside the caller's transaction. On a corrupt or
 * truncated record it stops, writes "PATH at offset N: why" to err and
 * returns -EBADMSG/-ENODATA/-EPROTO; rows loaded before stay. */
int xp_gpu_load_stream(sqlite3 *db, const char *path, const struct xp_gpu_sink_ops *ops,
		       void *ctx, struct xp_gpu_load_stats *st, char *err, size_t errlen);

/* XP_REC_LAUNCH records into xp_launches (each validated first), the rows
 * bound as ingest binds them (db/launch.h xp_launch_bind): stacks through
 * ops->intern_stack. */
struct xp_launch_writer;
int xp_launch_writer_open(struct xp_launch_writer **out, sqlite3 *db,
			  const struct xp_gpu_sink_ops *ops, void *ctx);
int xp_launch_writer_add(struct xp_launch_writer *w, const struct xp_record_header *h);
void xp_launch_writer_close(struct xp_launch_writer *w);   /* accepts NULL */

/* The function name alone: "void ns::k<int>(float*)" -> "k". Writes into
 * out (always terminated). */
void xp_short_name(const char *demangled, char *out, size_t outlen);

#endif

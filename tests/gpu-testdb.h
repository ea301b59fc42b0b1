/* gpu-testdb.h - what the GPU tests share: the main loader's base tables, a
 * small xp_gpu_sink_ops (strings into StringIds, one xp_frames row per IP
 * in a trivial xp_stacks prefix tree) and the synthetic ground-truth run.
 *
 *   sqlite3 *db = testdb_open(":memory:"); struct testdb_sink k; testdb_sink_init(&k, db);
 *   truth_build(db, &k, tmpdir);   // writes gpu-100.xpr + cpu.xpr, loads them
 */
#ifndef XP_GPU_TESTDB_H
#define XP_GPU_TESTDB_H

#include <sqlite3.h>
#include <stdint.h>

#include "ingest/gpu_ingest.h"

struct testdb_sink {
	sqlite3 *db;
	sqlite3_stmt *str_get, *str_put, *frame_get, *frame_put, *node_get, *node_put;
};

extern const struct xp_gpu_sink_ops testdb_ops;

sqlite3 *testdb_open(const char *path);          /* base tables + GPU schema */
int testdb_sink_init(struct testdb_sink *k, sqlite3 *db);
void testdb_sink_fini(struct testdb_sink *k);
int64_t testdb_stack(struct testdb_sink *k, const uint64_t *user_ips, unsigned nu);

/* The ground truth (see gpu-testdb.c for the story): writes dir/gpu-100.xpr
 * and dir/cpu.xpr, loads them and inserts the samples. 0 or -errno. */
int truth_build(sqlite3 *db, struct testdb_sink *k, const char *dir);

#endif

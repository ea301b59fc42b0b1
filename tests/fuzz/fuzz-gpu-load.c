/* fuzz-gpu-load.c - libFuzzer target for the GPU stream loader: any byte
 * string, read as a gpu-<pid>.xpr, must load or fail with a one-line error,
 * never crash, read out of bounds or hang; the correlation then runs on
 * whatever was loaded.
 *   scripts/fuzz gpu-load 60
 */
// fuzz-sources: ingest/gpu_load.c ingest/gpu_strings.c ingest/gpu_rows.c ingest/gpu_clock.c ingest/launch_writer.c db/db_schema.c db/gpu_schema.c src/u64map.c db/launch.c src/jobrank.c ingest/demangle.c correlate/join.c correlate/db_join.c correlate/report_groups.c correlate/row_batch.c db/groups.c db/stats.c tests/gpu-testdb.c
// fuzz-libs: -Icorrelate -Itests -lsqlite3 -lstdc++
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "correlate/db_join.h"
#include "gpu-testdb.h"
#include "fuzz-file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -1;
	static char path[64];
	struct xp_gpu_load_stats st;
	struct testdb_sink sink;
	struct xc_summary sum;
	char err[512];
	sqlite3 *db;

	if (fd < 0) {
		/* a real file: readers refuse links, /proc/self/fd/N included */
		fd = fuzz_file("gpu-load", path, sizeof(path));
	}
	if (ftruncate(fd, 0) || pwrite(fd, data, size, 0) != (ssize_t)size)
		return 0;
	db = testdb_open(":memory:");
	if (!db)
		return 0;
	if (testdb_sink_init(&sink, db) == 0) {
		if (xp_gpu_load_stream(db, path, &testdb_ops, &sink, &st, err, sizeof(err)) < 0 &&
		    (!err[0] || strchr(err, '\n')))
			__builtin_trap();       /* an error must say what, on one line */
		xc_correlate_db(db, &sum);
	}
	testdb_sink_fini(&sink);
	sqlite3_close(db);
	return 0;
}

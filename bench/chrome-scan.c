/* chrome-scan.c - the baseline of bench/chrome-bench: reads the rows a
 * Chrome trace export reads, in the same time order, every column, without
 * joins or output: what SQLite alone costs.
 *   chrome-scan DB      -> prints "rows N seconds S"
 */
#include <sqlite3.h>
#include <stdio.h>
#include <time.h>

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	static const char *const scans[] = {
		"SELECT * FROM CUPTI_ACTIVITY_KIND_RUNTIME ORDER BY start",
		"SELECT * FROM NVTX_EVENTS ORDER BY globalTid, start",
		"SELECT * FROM xp_samples ORDER BY pid, tid, ts",
		"SELECT * FROM CUPTI_ACTIVITY_KIND_KERNEL ORDER BY start",
		"SELECT * FROM CUPTI_ACTIVITY_KIND_MEMCPY ORDER BY start",
		"SELECT * FROM CUPTI_ACTIVITY_KIND_MEMSET ORDER BY start",
	};
	sqlite3 *db;
	long long rows = 0, sum = 0;
	double t0;

	if (argc != 2 || sqlite3_open_v2(argv[1], &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
		fprintf(stderr, "usage: chrome-scan DB\n");
		return 2;
	}
	t0 = now();
	for (size_t i = 0; i < sizeof(scans) / sizeof(scans[0]); i++) {
		sqlite3_stmt *st;

		if (sqlite3_prepare_v2(db, scans[i], -1, &st, NULL) != SQLITE_OK) {
			fprintf(stderr, "chrome-scan: %s\n", sqlite3_errmsg(db));
			return 1;
		}
		while (sqlite3_step(st) == SQLITE_ROW) {
			for (int c = 0; c < sqlite3_column_count(st); c++)
				sum += sqlite3_column_int64(st, c);
			rows++;
		}
		sqlite3_finalize(st);
	}
	printf("rows %lld seconds %.3f (checksum %lld)\n", rows, now() - t0, sum);
	sqlite3_close(db);
	return 0;
}

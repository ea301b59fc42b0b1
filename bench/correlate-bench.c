/* correlate-bench.c - builds a database of a big synthetic run and times
 * xc_correlate_db on it; run through bench/correlate-bench.
 *   correlate-bench-run /tmp/bench.db 10000000 1000000
 * 16 threads of one process; API calls 5 us long every 16 us per thread,
 * one kernel each; 95% have their launch record, 1% of those from a wrong
 * thread; samples spread evenly over the same time.
 *   correlate-bench-run run/xpcorr.db     # correlate an ingested run again */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

#include "correlate/db_join.h"
#include "db/db_schema.h"
#include "ingest/gpu_ingest.h"

#define THREADS 16

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void die(sqlite3 *db, const char *what)
{
	fprintf(stderr, "correlate-bench: %s: %s\n", what, sqlite3_errmsg(db));
	exit(1);
}

/* Times xc_correlate_db in one transaction, as ingest runs it. */
static int correlate(sqlite3 *db)
{
	struct xc_summary s;
	struct rusage ru;
	double t0, t1;

	t0 = now();
	sqlite3_exec(db, "BEGIN", NULL, NULL, NULL);
	if (xc_correlate_db(db, &s) < 0)
		die(db, "xc_correlate_db");
	sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
	t1 = now();
	getrusage(RUSAGE_SELF, &ru);
	printf("xc_correlate_db: %.2f s\n", t1 - t0);
	printf("peak RSS: %ld MiB\n", ru.ru_maxrss / 1024);
	printf("gpu rows %llu: exact %llu, inferred %llu, none %llu; samples in calls %llu;"
	       " rejected wrong thread %llu; skew min %lld median %lld ns\n",
	       (unsigned long long)s.gpu_rows, (unsigned long long)s.rows_exact,
	       (unsigned long long)s.rows_inferred, (unsigned long long)s.rows_none,
	       (unsigned long long)s.samples_in_api,
	       (unsigned long long)s.reasons[XC_LAUNCH_WRONG_TID], (long long)s.skew_min_ns,
	       (long long)s.skew_median_ns);
	sqlite3_close(db);
	return 0;
}

int main(int argc, char **argv)
{
	sqlite3 *db;
	sqlite3_stmt *api, *kern, *launch, *samp;
	long long n_samples, n_calls;
	struct rusage ru;
	double t0, t1;
	uint64_t period, span;

	if (argc != 4 && argc != 2) {
		fprintf(stderr, "usage: correlate-bench-run DB SAMPLES CALLS | correlate-bench-run DB\n");
		return 2;
	}
	if (argc == 2) {        /* correlate an existing (ingested) database again */
		/* one thread per connection: no SQLite mutex per call (7% of the join) */
		if (sqlite3_open_v2(argv[1], &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL)
		    != SQLITE_OK ||
		    sqlite3_exec(db, "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;"
				 " PRAGMA cache_size=-65536;", NULL, NULL, NULL) != SQLITE_OK ||
		    xp_gpu_schema_create(db) < 0)     /* tables a newer build adds */
			die(db, "open");
		return correlate(db);
	}
	n_samples = atoll(argv[2]);
	n_calls = atoll(argv[3]);
	remove(argv[1]);
	if (sqlite3_open(argv[1], &db) != SQLITE_OK)
		die(db, "open");
	if (sqlite3_exec(db, "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;"
			 " PRAGMA cache_size=-65536;", NULL, NULL, NULL) != SQLITE_OK ||
	    xp_db_create_schema(db) != SQLITE_OK || xp_gpu_schema_create(db) < 0 ||
	    sqlite3_exec(db, "INSERT INTO StringIds VALUES (1, 'cudaLaunchKernel'), (2, 'k');",
			 NULL, NULL, NULL) != SQLITE_OK)
		die(db, "schema");
	t0 = now();
	sqlite3_exec(db, "BEGIN", NULL, NULL, NULL);
	if (sqlite3_prepare_v2(db, "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME(start, end, eventClass,"
			       " globalTid, correlationId, nameId, returnValue) VALUES(?,?,0,?,?,1,0)",
			       -1, &api, NULL) ||
	    sqlite3_prepare_v2(db, "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL(start, end, deviceId,"
			       " contextId, streamId, correlationId, globalPid, demangledName, shortName,"
			       " gridX, gridY, gridZ, blockX, blockY, blockZ, registersPerThread,"
			       " staticSharedMemory, dynamicSharedMemory) VALUES(?,?,0,1,7,?,?,2,2,"
			       "1,1,1,1,1,1,32,0,0)", -1, &kern, NULL) ||
	    sqlite3_prepare_v2(db, "INSERT INTO xp_launches(ts, pid, tid, cpu, correlation_id, cbid,"
			       " stack_id) VALUES(?,?,?,0,?,211,?)", -1, &launch, NULL) ||
	    sqlite3_prepare_v2(db, "INSERT INTO xp_samples(ts, pid, tid, cpu, stack_id, period)"
			       " VALUES(?,?,?,0,?,1000000)", -1, &samp, NULL))
		die(db, "prepare");
	period = 16000;
	span = (uint64_t)(n_calls / THREADS + 1) * period;
	for (long long i = 0; i < n_calls; i++) {
		uint32_t tid = 1000 + (uint32_t)(i % THREADS);
		uint64_t start = 1000000000ull + (uint64_t)(i / THREADS) * period + (i % THREADS) * 7;
		int64_t gt = (int64_t)1000 << 24 | tid;

		sqlite3_bind_int64(api, 1, (int64_t)start);
		sqlite3_bind_int64(api, 2, (int64_t)start + 5000);
		sqlite3_bind_int64(api, 3, gt);
		sqlite3_bind_int64(api, 4, i + 1);
		sqlite3_bind_int64(kern, 1, (int64_t)start + 8000);
		sqlite3_bind_int64(kern, 2, (int64_t)start + 8000 + 1000 + i % 5000);
		sqlite3_bind_int64(kern, 3, i + 1);
		sqlite3_bind_int64(kern, 4, (int64_t)1000 << 24);
		if (sqlite3_step(api) != SQLITE_DONE || sqlite3_step(kern) != SQLITE_DONE)
			die(db, "insert");
		sqlite3_reset(api);
		sqlite3_reset(kern);
		if (i % 20 != 0) {      /* 5% lost */
			sqlite3_bind_int64(launch, 1, (int64_t)start + 1000);
			sqlite3_bind_int64(launch, 2, 1000);
			sqlite3_bind_int64(launch, 3, i % 100 == 1 ? tid + 1 : tid);
			sqlite3_bind_int64(launch, 4, i + 1);
			sqlite3_bind_int64(launch, 5, 1 + i % 1000);
			if (sqlite3_step(launch) != SQLITE_DONE)
				die(db, "insert");
			sqlite3_reset(launch);
		}
	}
	/* samples in global time order, as the loader writes them */
	for (long long j = 0; j < n_samples; j++) {
		uint64_t ts = 1000000000ull + (uint64_t)((double)j / (double)n_samples * (double)span);

		sqlite3_bind_int64(samp, 1, (int64_t)ts);
		sqlite3_bind_int64(samp, 2, 1000);
		sqlite3_bind_int64(samp, 3, 1000 + j % THREADS);
		sqlite3_bind_int64(samp, 4, 1 + j % 1000);
		if (sqlite3_step(samp) != SQLITE_DONE)
			die(db, "insert");
		sqlite3_reset(samp);
	}
	sqlite3_finalize(api);
	sqlite3_finalize(kern);
	sqlite3_finalize(launch);
	sqlite3_finalize(samp);
	t1 = now();
	/* the indexes ingest builds after its bulk load, as ingest does */
	if (xp_db_create_indexes(db) != SQLITE_OK)
		die(db, "indexes");
	printf("indexes (part of ingest): %.1f s\n", now() - t1);
	sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
	printf("generate: %.1f s (%lld samples, %lld calls/kernels)\n", t1 - t0, n_samples, n_calls);
	getrusage(RUSAGE_SELF, &ru);
	printf("peak RSS after generation: %ld MiB\n", ru.ru_maxrss / 1024);

	return correlate(db);
}

/* baseline-insert.c - the benchmark's baseline: the same sample rows that
 * ingest writes to xp_samples, read from the same cpu.xpr and inserted with
 * one prepared statement in one transaction (same pragmas, the product's own
 * schema, its indexes built afterwards; the other tables stay empty), but
 * with no symbolization and no de-duplication:
 * the cost of just putting the rows into SQLite.
 *   baseline-insert run/cpu.xpr /tmp/baseline.db
 */
#include <stdio.h>
#include <stdlib.h>
#include <sqlite3.h>
#include <unistd.h>

#include "db/db_schema.h"
#include "src/runfile.h"

/* A stand-in for ingest's stack id with a similar spread of values (one
 * per distinct IP list), so that the stack_id index costs the same. */
static int64_t stand_in_stack_id(const struct xp_record_header *h, const struct xp_sample *s)
{
	const uint64_t *ips = xp_record_stack_ips(h, sizeof(*s), &s->stack);
	uint64_t x = 0xcbf29ce484222325ull;

	for (unsigned i = 0; ips && i < (unsigned)s->stack.user_depth + s->stack.kernel_depth; i++)
		x = (x ^ ips[i]) * 0x100000001b3ull;
	return (int64_t)(x >> 44);  /* 20 bits */
}

int main(int argc, char **argv)
{
	struct xp_reader *r = NULL;
	const struct xp_record_header *h;
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	uint64_t rows = 0;
	int err;

	if (argc != 3) {
		fprintf(stderr, "usage: baseline-insert RUN/cpu.xpr OUT.db\n");
		return 2;
	}
	unlink(argv[2]);
	if (sqlite3_open(argv[2], &db) != SQLITE_OK ||
	    sqlite3_exec(db, "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;"
			 " PRAGMA cache_size=-65536; BEGIN;",
			 NULL, NULL, NULL) != SQLITE_OK ||
	    xp_db_create_schema(db) != SQLITE_OK ||    /* the product's tables, empty but one */
	    sqlite3_prepare_v2(db, "INSERT INTO xp_samples(ts, pid, tid, cpu, stack_id, period)"
			       " VALUES (?, ?, ?, ?, ?, ?)", -1, &st, NULL) != SQLITE_OK) {
		fprintf(stderr, "baseline-insert: %s\n", sqlite3_errmsg(db));
		return 1;
	}
	err = xp_reader_open(&r, argv[1]);
	while (!err && (err = xp_reader_next(r, &h)) > 0) {
		const struct xp_sample *s = xp_record_payload(h);

		err = 0;
		if (h->type != XP_REC_SAMPLE)
			continue;
		sqlite3_bind_int64(st, 1, (int64_t)s->ts);
		sqlite3_bind_int64(st, 2, s->pid);
		sqlite3_bind_int64(st, 3, s->tid);
		sqlite3_bind_int64(st, 4, s->cpu);
		sqlite3_bind_int64(st, 5, stand_in_stack_id(h, s));
		sqlite3_bind_int64(st, 6, s->period_ns);
		if (sqlite3_step(st) != SQLITE_DONE) {
			fprintf(stderr, "baseline-insert: %s\n", sqlite3_errmsg(db));
			return 1;
		}
		sqlite3_reset(st);
		rows++;
	}
	xp_reader_close(r);
	sqlite3_finalize(st);
	if (err < 0 || xp_db_create_indexes(db) != SQLITE_OK ||
	    sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
		fprintf(stderr, "baseline-insert: failed (%d): %s\n", err, sqlite3_errmsg(db));
		return 1;
	}
	sqlite3_close(db);
	printf("%llu\n", (unsigned long long)rows);
	return 0;
}

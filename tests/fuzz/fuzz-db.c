/* fuzz-db.c - libFuzzer target for the readers of a received database: the
 * input is a list of mutations (a value set to an integer, a text, NULL,
 * rows deleted, an index dropped, a table turned into a view) applied to a
 * real run's database (fixtures/h100-workload/device.db, in memory); the
 * database must then be refused by the schema check (db/dbcheck.h) or be
 * read by every report view, the folded exports and the Chrome trace
 * without a crash, undefined behaviour or unbounded work.
 *   scripts/fuzz db 60
 * The first byte picks the reader; then each mutation is 12 bytes: op,
 * table, column, row selector, 8 value bytes.
 */
// fuzz-sources: db/*.c export/*/*.c src/fsident.c src/jobrank.c src/readline.c src/strtab.c src/textesc.c src/u64map.c src/utf8.c
// fuzz-cflags: -DXP_VERSION="fuzz"
// fuzz-libs: -lsqlite3 -lm -ljansson
// fuzz-seeds: tests/fuzz/corpus/db/*
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export/chrome/chrome.h"
#include "db/dbcheck.h"
#include "export/render/folded.h"
#include "export/report/report.h"
#include "fuzz-sql.h"

#define MAX_TABLES 64
#define WORK_LIMIT 20000000         /* VM steps per input: what the readers may take */

static unsigned char *seed;         /* the pristine database, serialized */
static sqlite3_int64 seed_len;
static char *tables[MAX_TABLES];
static int ntables;
static FILE *sink;

static int progress(void *ctx)
{
	return ++*(long *)ctx > WORK_LIMIT / 1000;
}

static void init(void)
{
	const char *top = getenv("XP_FUZZ_TOP");
	char path[4096];
	sqlite3 *db;

	snprintf(path, sizeof(path), "%s/fixtures/h100-workload/device.db", top ? top : "..");
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
		fprintf(stderr, "fuzz-db: cannot open %s (XP_FUZZ_TOP: the source tree)\n", path);
		abort();
	}
	seed = sqlite3_serialize(db, "main", &seed_len, 0);
	ntables = fuzz_sql_tables(db, tables, MAX_TABLES);
	sqlite3_close(db);
	sink = fopen("/dev/null", "w");
	if (!seed || !ntables || !sink)
		abort();
}

/* The name of column c of table t (NULL: none). */
static void mutate(sqlite3 *db, const uint8_t *m)
{
	const char *t = tables[m[1] % ntables];
	char *col = fuzz_sql_column(db, t, m[2]), *sql = NULL, text[9];
	int64_t v;
	unsigned every = 1u + m[3] % 8, rest = (unsigned)(m[3] >> 3) % every;

	memcpy(&v, m + 4, 8);
	memcpy(text, m + 4, 8);
	text[8] = '\0';
	switch (m[0] % 8) {
	case 0: case 1: case 2:     /* the common case: numbers, at and near the limits */
		sql = sqlite3_mprintf("UPDATE \"%w\" SET \"%w\" = %lld WHERE rowid %% %u = %u", t,
				      col ? col : "", (long long)(m[0] % 8 == 1 ? (v < 0 ? INT64_MIN + (v & 7) :
				      INT64_MAX - (v & 7)) : v), every, rest);
		break;
	case 3:
		sql = sqlite3_mprintf("UPDATE \"%w\" SET \"%w\" = %Q WHERE rowid %% %u = %u", t,
				      col ? col : "", text, every, rest);
		break;
	case 4:
		sql = sqlite3_mprintf("UPDATE \"%w\" SET \"%w\" = NULL WHERE rowid %% %u = %u", t,
				      col ? col : "", every, rest);
		break;
	case 5:
		sql = sqlite3_mprintf("DELETE FROM \"%w\" WHERE rowid %% %u = %u", t, every, rest);
		break;
	case 6: {                   /* an index of the table dropped */
		char *index = fuzz_sql_one_name(db, sqlite3_mprintf(
			"SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = %Q"
			" AND sql IS NOT NULL", t));

		sql = index ? sqlite3_mprintf("DROP INDEX \"%w\"", index) : NULL;
		sqlite3_free(index);
		break;
	}
	default:                    /* the table turned into a view of itself */
		sql = sqlite3_mprintf("ALTER TABLE \"%w\" RENAME TO \"%w_x\"; CREATE VIEW \"%w\" AS"
				      " SELECT * FROM \"%w_x\"", t, t, t, t);
		break;
	}
	if (sql)
		sqlite3_exec(db, sql, NULL, NULL, NULL);   /* a mutation may fail: the next one runs */
	sqlite3_free(sql);
	sqlite3_free(col);
}

/* One reader, picked by the input's first byte: a report view in a format,
 * a folded export of a weight, or the Chrome trace (all of them for each
 * input would take seconds). */
static void read_one(sqlite3 *db, uint8_t pick)
{
	static const enum xp_weight weights[] = { XP_WEIGHT_CPU, XP_WEIGHT_GPU, XP_WEIGHT_API,
						  XP_WEIGHT_OFFCPU };
	unsigned k = pick % (XP_BY_COUNT + 5);

	if (k < XP_BY_COUNT) {
		struct xp_report_opts o = XP_REPORT_DEFAULTS;
		size_t groups;

		o.by = (enum xp_report_by)k;
		o.width = 120;
		o.format = (enum xp_report_format)(pick / (XP_BY_COUNT + 5) % 3);
		xp_report(db, &o, sink, &groups);
	} else if (k < XP_BY_COUNT + 4) {
		struct xp_folded_opts f = { .root = XP_ROOT_COMM, .pid = -1, .tid = -1,
					    .weight = weights[k - XP_BY_COUNT] };

		xp_folded_write(db, &f, sink);
	} else {
		xp_chrome_write(db, &(struct xp_chrome_opts){ .pid = -1 }, sink, NULL);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[512];
	long steps = 0;
	sqlite3 *db;

	if (!seed)
		init();
	if (!size)
		return 0;
	db = fuzz_sql_copy(seed, seed_len);
	for (size_t i = 1; i + 12 <= size && i < 12 * 64; i += 12)
		mutate(db, data + i);
	/* what a reader does first: a schema not ours is refused, with a reason */
	if (xp_db_check_schema(db, err, sizeof(err)) == 0) {
		sqlite3_progress_handler(db, 1000, progress, &steps);
		read_one(db, data[0]);
	} else if (!err[0] || strchr(err, '\n')) {
		__builtin_trap();
	}
	sqlite3_close(db);
	return 0;
}

/* fuzz-jobsum.c - libFuzzer target for `xpcorr job`'s reader of the ranks'
 * summaries (RUN/xpsum.db, export/jobsum.h): the input is a list of
 * mutations (a value set to an integer, a limit, a text, NULL or a long
 * string; rows deleted or repeated; a table dropped or turned into a view)
 * applied to a two-rank job's summaries (tests/fuzz/jobsum/rank*.sql, from
 * tests/gen-run job), written to files and read as xpcorr job reads them:
 * opened (fd, schema check, limits), clocks aligned, one view in one
 * format. Each must be refused with a one-line reason or read without a
 * crash, undefined behaviour or unbounded work.
 *   scripts/fuzz jobsum 60
 * The first byte picks the view and format; then each mutation is 12
 * bytes: op, rank and table, column, row selector, 8 value bytes.
 */
// fuzz-sources: db/*.c export/*/*.c correlate/clockalign.c correlate/clocksum.c src/fsident.c src/jobrank.c src/readline.c src/strtab.c src/textesc.c src/u64map.c src/utf8.c
// fuzz-cflags: -DXP_VERSION="fuzz"
// fuzz-libs: -lsqlite3 -lm -ljansson
// fuzz-seeds: tests/fuzz/corpus/jobsum/*
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "correlate/clocksum.h"
#include "db/dbcheck.h"
#include "export/job/jobsum.h"
#include "fuzz-sql.h"

#define RANKS 2
#define MAX_TABLES 16
#define WORK_LIMIT "200000000"      /* VM steps per input (XPCORR_MAX_DB_WORK) */

static unsigned char *seed[RANKS];  /* the pristine summaries, serialized */
static sqlite3_int64 seed_len[RANKS];
static char *tables[MAX_TABLES];
static int ntables;
static char path[RANKS][256];
static FILE *sink;

static void remove_files(void)
{
	for (int r = 0; r < RANKS; r++)
		unlink(path[r]);
}

/* tests/fuzz/jobsum/rankN.sql into a database, serialized. */
static void load_seed(const char *top, int r)
{
	char file[4096];
	sqlite3 *db;
	char *sql;
	long n;
	FILE *f;

	snprintf(file, sizeof(file), "%s/tests/fuzz/jobsum/rank%d.sql", top, r);
	if (!(f = fopen(file, "r")) || fseek(f, 0, SEEK_END) || (n = ftell(f)) <= 0 ||
	    fseek(f, 0, SEEK_SET) || !(sql = calloc(1, (size_t)n + 1)) ||
	    fread(sql, 1, (size_t)n, f) != (size_t)n) {
		fprintf(stderr, "fuzz-jobsum: cannot read %s (XP_FUZZ_TOP: the source tree)\n", file);
		abort();
	}
	fclose(f);
	if (sqlite3_open(":memory:", &db) != SQLITE_OK ||
	    sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK)
		abort();
	free(sql);
	seed[r] = sqlite3_serialize(db, "main", &seed_len[r], 0);
	if (!r)
		ntables = fuzz_sql_tables(db, tables, MAX_TABLES);
	sqlite3_close(db);
	if (!seed[r])
		abort();
}

static void init(void)
{
	const char *top = getenv("XP_FUZZ_TOP");
	const char *dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";

	for (int r = 0; r < RANKS; r++) {
		load_seed(top ? top : "..", r);
		snprintf(path[r], sizeof(path[r]), "%s/xp-fuzz-jobsum-%d-%d.db", dir, (int)getpid(), r);
	}
	atexit(remove_files);
	setenv("XPCORR_MAX_DB_WORK", WORK_LIMIT, 1);
	sink = fopen("/dev/null", "w");
	if (!ntables || !sink)
		abort();
}

static void mutate(sqlite3 *db, const uint8_t *m)
{
	const char *t = tables[(m[1] >> 1) % ntables];
	char *col = fuzz_sql_column(db, t, m[2]), *sql = NULL, text[9];
	unsigned every = 1u + m[3] % 8, rest = (unsigned)(m[3] >> 3) % every;
	int64_t v;

	memcpy(&v, m + 4, 8);
	memcpy(text, m + 4, 8);
	text[8] = '\0';
	switch (m[0] % 10) {
	case 0: case 1: case 2:     /* numbers, at and near the limits */
		sql = sqlite3_mprintf("UPDATE \"%w\" SET \"%w\" = %lld WHERE rowid %% %u = %u", t,
				      col ? col : "", (long long)(m[0] % 10 == 1 ? (v < 0 ? INT64_MIN + (v & 7) :
				      INT64_MAX - (v & 7)) : m[0] % 10 == 2 ? v % 64 : v), every, rest);
		break;
	case 3:                     /* text: control characters, quotes, commas */
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
	case 6:                     /* rows repeated: a table twice (up to 2^12) as long */
		sql = sqlite3_mprintf("INSERT INTO \"%w\" SELECT * FROM \"%w\" WHERE"
				      " (SELECT count(*) FROM \"%w\") < 4096", t, t, t);
		break;
	case 7:                     /* a long string: up to 64 KiB */
		sql = sqlite3_mprintf("UPDATE \"%w\" SET \"%w\" = printf('%%.*c', %u, 'x') WHERE rowid"
				      " %% %u = %u", t, col ? col : "", (unsigned)(v & 0xffff), every, rest);
		break;
	case 8:                     /* a real: NaN (stored as NULL), inf, a fraction */
		sql = sqlite3_mprintf("UPDATE \"%w\" SET \"%w\" = %s WHERE rowid %% %u = %u", t,
				      col ? col : "", (const char *[]){ "1e999", "-1e999", "0.5", "1e300" }[v & 3],
				      every, rest);
		break;
	default:                    /* the table dropped, or turned into a view of itself */
		sql = v & 1 ? sqlite3_mprintf("DROP TABLE \"%w\"", t) :
		      sqlite3_mprintf("ALTER TABLE \"%w\" RENAME TO \"%w_x\"; CREATE VIEW \"%w\" AS"
				      " SELECT * FROM \"%w_x\"", t, t, t, t);
		break;
	}
	if (sql)
		sqlite3_exec(db, sql, NULL, NULL, NULL);   /* a mutation may fail: the next one runs */
	sqlite3_free(sql);
	sqlite3_free(col);
}

static void write_file(sqlite3 *db, const char *to)
{
	sqlite3_int64 n;
	unsigned char *bytes = sqlite3_serialize(db, "main", &n, 0);
	int fd = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	if (!bytes || fd < 0 || write(fd, bytes, (size_t)n) != (ssize_t)n)
		abort();
	close(fd);
	sqlite3_free(bytes);
}

/* What cmd_job.c does with the summaries: each clock read and aligned on
 * the first's, then the view. A failure has its line; a crash, UB or a
 * line with a newline in it is a finding. */
static void read_job(uint8_t pick)
{
	struct xp_jobrun runs[RANKS] = { { 0 } };
	struct xp_jobview_opts o = { .by = (enum xp_jobview_by)(pick % 5),
				     .format = (enum xp_jobview_fmt)(pick / 5 % 3), .top = pick / 15 % 4 };
	struct xc_clock_run c[RANKS];
	struct xc_clock_shift s;
	char err[1024] = "";
	int e = 0;

	o.csv = o.format == XP_JOB_CSV;
	for (int r = 0; r < RANKS; r++) {
		sqlite3 *db = NULL;

		runs[r].path = path[r];
		memset(&c[r], 0, sizeof(c[r]));
		if (!e && !(e = xp_jobsum_open(path[r], &db, err, sizeof(err))))
			e = xc_clock_run_read(db, &c[r]);
		sqlite3_close(db);
	}
	for (int r = 0; !e && r < RANKS; r++) {
		if (xc_clock_align(&c[0], &c[r], &s))
			abort();
		runs[r].shift_ns = s.shift_ns;
		runs[r].spread_ns = s.spread_ns;
		runs[r].method = s.method;
	}
	for (int r = 0; r < RANKS; r++)
		xc_clock_run_free(&c[r]);
	if (!e && xp_jobview(runs, RANKS, &o, sink, err, sizeof(err)) && (!err[0] || strchr(err, '\n')))
		__builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	sqlite3 *db[RANKS];

	if (!seed[0])
		init();
	if (!size)
		return 0;
	for (int r = 0; r < RANKS; r++)
		db[r] = fuzz_sql_copy(seed[r], seed_len[r]);
	for (size_t i = 1; i + 12 <= size && i < 12 * 64; i += 12)
		mutate(db[data[i + 1] & 1], data + i);
	for (int r = 0; r < RANKS; r++) {
		write_file(db[r], path[r]);
		sqlite3_close(db[r]);
	}
	xp_db_work_reset();
	read_job(data[0]);
	return 0;
}

/* jobsum.c - a run's job summary (jobsum.h): the few tables the job's
 * views read, written from the run's correlated database. Each is small:
 * rows per rank, per (launch site, kernel), per idle cause, and one per
 * collective instance (a step has a few). Read back as received input:
 * a regular file, our tables and columns, a version we know. */
#include "export/job/jobsum.h"
#include "export/job/jobsum_host.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "db/db_schema.h"
#include "db/dbcheck.h"
#include "db/dbmerge.h"
#include "db/fddb.h"
#include "db/rundb.h"
#include "export/names/launchsite.h"
#include "export/report/report.h"
#include "export/analysis/timeline.h"
#include "src/gtid.h"
#include "src/safeopen.h"

static const char schema[] =
	"CREATE TABLE xs_meta(key TEXT PRIMARY KEY, value);"
	/* one row per process with a rank: what `report --by rank` shows of it */
	"CREATE TABLE xs_rank(pid INTEGER, rank INTEGER, world INTEGER, host TEXT, gpu_ns INTEGER,"
	" kernels INTEGER, coll_ns INTEGER, sync_ns INTEGER);"
	"CREATE TABLE xs_name(id INTEGER PRIMARY KEY, value TEXT);"
	/* GPU time of each kernel (xs_name) per launch site (launchsite.h) */
	"CREATE TABLE xs_kernel(pid INTEGER, site TEXT, name INTEGER, coll INTEGER, ns INTEGER,"
	" n INTEGER, UNIQUE(pid, site, name));"
	/* every collective kernel: the nth of its name in its process */
	"CREATE TABLE xs_coll(pid INTEGER, name INTEGER, nth INTEGER, launch INTEGER, start INTEGER,"
	" end INTEGER);"
	/* report --by idle of the run alone, per device (its steps together) */
	"CREATE TABLE xs_device(rank INTEGER, device INTEGER, pid INTEGER, steps INTEGER,"
	" window_ns INTEGER, compute_ns INTEGER, comm_ns INTEGER, mem_ns INTEGER, idle_ns INTEGER);"
	"CREATE TABLE xs_idle(rank INTEGER, device INTEGER, cause TEXT, site TEXT, ns INTEGER,"
	" gaps INTEGER);"
	/* per collective op (xs_coll's pid, name, nth): what the rank did from
	 * the end of its latest earlier collective to its entry, by cause
	 * (kind: wait_blame.h's, where: a line, call or launch site), from
	 * the end of its collective (from_name, from_nth), -1: its first work */
	"CREATE TABLE xs_span(pid INTEGER, name INTEGER, nth INTEGER, kind INTEGER, site TEXT,"
	" ns INTEGER, from_name INTEGER, from_nth INTEGER);"
	/* the rank's time cut at its collectives' starts and ends, [a, b) by cause */
	"CREATE TABLE xs_piece(pid INTEGER, a INTEGER, b INTEGER, kind INTEGER, site TEXT,"
	" ns INTEGER);"
	/* time in host-side collectives (jobsum_host.h) per (process, where it
	 * waited, name), as xs_kernel has kernels' */
	"CREATE TABLE xs_host(pid INTEGER, site TEXT, name INTEGER, ns INTEGER, n INTEGER,"
	" UNIQUE(pid, site, name));"
	/* xs_piece's pieces as what the thread that waits in them did */
	"CREATE TABLE xs_hpiece(pid INTEGER, a INTEGER, b INTEGER, kind INTEGER, site TEXT,"
	" ns INTEGER);";

static int exec2(sqlite3 *db, const char *sql)
{
	return sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK ? 0 : -EIO;
}

/* Rows of sel (on db) into ins (on sum), column for column. */
static int copy_rows(sqlite3 *db, const char *sel_sql, sqlite3 *sum, const char *ins_sql)
{
	sqlite3_stmt *sel = NULL, *ins = NULL;
	int rc = SQLITE_DONE, step;

	if (sqlite3_prepare_v2(db, sel_sql, -1, &sel, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(sum, ins_sql, -1, &ins, NULL) != SQLITE_OK) {
		sqlite3_finalize(sel);
		return -EIO;
	}
	while (rc == SQLITE_DONE && (step = sqlite3_step(sel)) == SQLITE_ROW) {
		for (int c = 0; c < sqlite3_column_count(sel); c++)
			sqlite3_bind_value(ins, c + 1, sqlite3_column_value(sel, c));
		rc = sqlite3_step(ins);
		sqlite3_reset(ins);
	}
	sqlite3_finalize(sel);
	sqlite3_finalize(ins);
	return rc == SQLITE_DONE && step == SQLITE_DONE ? 0 : -EIO;
}

static int put_meta(sqlite3 *db, sqlite3 *sum)
{
	int err = copy_rows(db, "SELECT 'host', value FROM META_DATA_EXPORT WHERE name = 'meta.hostname'"
			    " UNION ALL SELECT 'run_id', (" XP_RUN_ID_SQL ")",
			    sum, "INSERT INTO xs_meta VALUES(?, ?)");

	if (!err) {
		char sql[96];

		snprintf(sql, sizeof(sql), "INSERT INTO xs_meta VALUES('version', %d)", XP_JOBSUM_VERSION);
		err = exec2(sum, sql);
	}
	return err;
}

/* As report_rank.c's ranks table, unfiltered. */
static int put_ranks(sqlite3 *db, sqlite3 *sum)
{
	return copy_rows(db, "SELECT r.pid, r.rank, ifnull(r.world_size, -1), ifnull(r.host, '?'),"
		" ifnull(sum(k.end - k.start), 0), count(k.rowid),"
		" ifnull(sum(CASE WHEN " XP_SQL_IS_COLLECTIVE("n.value") " THEN k.end - k.start END), 0),"
		" ifnull(max(w.ns), 0)"
		" FROM xp_ranks r LEFT JOIN CUPTI_ACTIVITY_KIND_KERNEL k"
		" ON " XP_SQL_GTID_PID("k.globalPid") " = r.pid"
		" LEFT JOIN StringIds n ON n.id = k.demangledName"
		" LEFT JOIN (SELECT " XP_SQL_GTID_PID("a.globalTid") " AS pid, sum(a.end - a.start) AS ns"
		"  FROM CUPTI_ACTIVITY_KIND_RUNTIME a JOIN StringIds an ON an.id = a.nameId"
		"  WHERE an.value LIKE '%Synchronize%' GROUP BY 1) w ON w.pid = r.pid"
		" WHERE r.rank IS NOT NULL GROUP BY r.pid ORDER BY r.rank, r.pid",
		sum, "INSERT INTO xs_rank VALUES(?,?,?,?,?,?,?,?)");
}

/* GPU time per (process, launch stack, kernel), each stack named by its site. */
static int put_kernels(sqlite3 *db, sqlite3 *sum)
{
	struct xp_sites *sites = NULL;
	sqlite3_stmt *sel = NULL, *ins = NULL;
	int rc = SQLITE_DONE, step = SQLITE_DONE, err;

	if ((err = xp_sites_new(db, &sites)))
		return err;
	xp_sites_prefer_own(sites);
	if (sqlite3_prepare_v2(db, "SELECT " XP_SQL_GTID_PID("k.globalPid") ", ifnull(a.stack_id, -1),"
			       " k.demangledName, " XP_SQL_IS_COLLECTIVE("n.value") ","
			       " sum(k.end - k.start), count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k"
			       " JOIN StringIds n ON n.id = k.demangledName"
			       " LEFT JOIN xp_attribution a ON a.gpu_table = 'KERNEL' AND a.gpu_rowid = k.rowid"
			       " GROUP BY 1, 2, 3", -1, &sel, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(sum, "INSERT INTO xs_kernel VALUES(?1, ?2, ?3, ?4, ?5, ?6)"
			       " ON CONFLICT(pid, site, name) DO UPDATE SET ns = ns + excluded.ns,"
			       " n = n + excluded.n", -1, &ins, NULL) != SQLITE_OK)
		err = -EIO;
	while (!err && rc == SQLITE_DONE && (step = sqlite3_step(sel)) == SQLITE_ROW) {
		int64_t stack = sqlite3_column_int64(sel, 1);
		const char *site = stack > 0 ? xp_sites_get(sites, stack) : "(no launch stack)";

		if (!site) {
			err = -EIO;
			break;
		}
		sqlite3_bind_int64(ins, 1, sqlite3_column_int64(sel, 0));
		sqlite3_bind_text(ins, 2, site, -1, SQLITE_TRANSIENT);
		for (int c = 2; c <= 5; c++)
			sqlite3_bind_value(ins, c + 1, sqlite3_column_value(sel, c));
		rc = sqlite3_step(ins);
		sqlite3_reset(ins);
	}
	sqlite3_finalize(sel);
	sqlite3_finalize(ins);
	xp_sites_free(sites);
	if (!err && (rc != SQLITE_DONE || step != SQLITE_DONE))
		err = -EIO;
	return err;
}

/* Every collective kernel, its launching call's start (-1 without one). */
static int put_collectives(sqlite3 *db, sqlite3 *sum)
{
	return copy_rows(db, "SELECT " XP_SQL_GTID_PID("c.gp") ", c.nm, c.i - 1, ifnull(r.start, -1),"
		" c.start, k.end FROM (" XP_SQL_COLL_KERNELS ") c"
		" JOIN CUPTI_ACTIVITY_KIND_KERNEL k ON k.rowid = c.id"
		" LEFT JOIN xp_attribution a ON a.gpu_table = 'KERNEL' AND a.gpu_rowid = c.id"
		" LEFT JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON r.rowid = a.api_rowid"
		" ORDER BY c.nm, c.i, 1", sum, "INSERT INTO xs_coll VALUES(?,?,?,?,?,?)");
}

/* The names xs_kernel and xs_coll use. */
static int put_names(sqlite3 *db, sqlite3 *sum)
{
	sqlite3_stmt *sel, *ins;
	int rc = SQLITE_DONE;

	if (sqlite3_prepare_v2(sum, "SELECT name FROM xs_kernel UNION SELECT name FROM xs_coll", -1,
			       &sel, NULL) != SQLITE_OK)
		return -EIO;
	if (sqlite3_prepare_v2(db, "SELECT value FROM StringIds WHERE id = ?", -1, &ins, NULL)
	    != SQLITE_OK) {
		sqlite3_finalize(sel);
		return -EIO;
	}
	/* names are few: one lookup each */
	while (rc == SQLITE_DONE && sqlite3_step(sel) == SQLITE_ROW) {
		int64_t id = sqlite3_column_int64(sel, 0);
		sqlite3_stmt *put;

		sqlite3_bind_int64(ins, 1, id);
		if (sqlite3_step(ins) != SQLITE_ROW) {
			sqlite3_reset(ins);
			continue;
		}
		if (sqlite3_prepare_v2(sum, "INSERT INTO xs_name VALUES(?, ?)", -1, &put, NULL) != SQLITE_OK) {
			rc = SQLITE_ERROR;
			break;
		}
		sqlite3_bind_int64(put, 1, id);
		sqlite3_bind_value(put, 2, sqlite3_column_value(ins, 0));
		rc = sqlite3_step(put);
		sqlite3_finalize(put);
		sqlite3_reset(ins);
	}
	sqlite3_finalize(sel);
	sqlite3_finalize(ins);
	return rc == SQLITE_DONE ? 0 : -EIO;
}

enum { C_SECTION, C_RANK, C_DEVICE, C_PID, C_STEPS, C_WINDOW, C_COMPUTE, C_COMM, C_MEM, C_IDLE,
       C_CAUSE, C_WHERE, C_CAUSE_NS, C_GAPS, C_NCOLS };

/* --by idle's csv columns this summary keeps, by their heads */
static const char *const idle_heads[C_NCOLS] = {
	"Section", "Rank", "Device", "PID", "Steps", "Window (ns)", "Compute (ns)",
	"Communication (ns)", "Memory (ns)", "Idle (ns)", "Cause", "Where", "Cause (ns)", "Gaps",
};

/* The fields of one csv line into f[0..max) (unquoted in place); their count. */
static int csv_fields(char *line, char **f, int max)
{
	int n = 0;
	char *p = line;

	while (n < max) {
		char *w = p;

		f[n++] = p;
		if (*p == '"') {
			for (p++; *p && !(*p == '"' && p[1] != '"'); p++)
				*w++ = *p == '"' ? *++p : *p;
			if (*p == '"')
				p++;
		} else {
			while (*p && *p != ',' && *p != '\n')
				w = ++p;
		}
		if (*p != ',') {
			*w = '\0';
			break;
		}
		*w = '\0';
		p++;
	}
	return n;
}

/* Which field holds each column of idle_heads, -1 when missing. */
static void map_heads(char *line, int *col)
{
	char *f[64];
	int n = csv_fields(line, f, 64);

	for (int c = 0; c < C_NCOLS; c++) {
		col[c] = -1;
		for (int i = 0; i < n; i++)
			if (!strcmp(f[i], idle_heads[c]))
				col[c] = i;
	}
}

static int bind_field(sqlite3_stmt *st, int at, char **f, int nf, int i, int text)
{
	if (i < 0 || i >= nf || !*f[i])
		return sqlite3_bind_null(st, at);
	return text ? sqlite3_bind_text(st, at, f[i], -1, SQLITE_TRANSIENT) :
		sqlite3_bind_int64(st, at, strtoll(f[i], NULL, 10));
}

/* One csv row: a device's row into xs_device, a cause's into xs_idle. */
static int put_idle_row(char *line, const int *col, sqlite3_stmt *dev, sqlite3_stmt *cause)
{
	static const int dev_cols[] = { C_RANK, C_DEVICE, C_PID, C_STEPS, C_WINDOW, C_COMPUTE,
					C_COMM, C_MEM, C_IDLE };
	static const int cause_cols[] = { C_RANK, C_DEVICE, C_CAUSE, C_WHERE, C_CAUSE_NS, C_GAPS };
	char *f[64];
	int nf = csv_fields(line, f, 64), rc;
	const char *sec = col[C_SECTION] >= 0 && col[C_SECTION] < nf ? f[col[C_SECTION]] : "";
	sqlite3_stmt *st = !strcmp(sec, "device") ? dev : !strcmp(sec, "cause") ? cause : NULL;

	if (!st)
		return 0;
	if (st == dev)
		for (int i = 0; i < 9; i++)
			bind_field(st, i + 1, f, nf, col[dev_cols[i]], 0);
	else
		for (int i = 0; i < 6; i++)
			bind_field(st, i + 1, f, nf, col[cause_cols[i]], i == 2 || i == 3);
	rc = sqlite3_step(st);
	sqlite3_reset(st);
	return rc == SQLITE_DONE ? 0 : -EIO;
}

/* `report --by idle` of the run, read back from its csv: the one place
 * that decides the idle causes stays view_idle.c. */
static int put_idle(sqlite3 *db, sqlite3 *sum)
{
	struct xp_report_opts o = XP_REPORT_DEFAULTS;
	sqlite3_stmt *dev = NULL, *cause = NULL;
	char *text = NULL, *line, *next;
	size_t len = 0;
	int col[C_NCOLS], err;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		return -ENOMEM;
	o.by = XP_BY_IDLE;
	o.format = XP_FMT_CSV;
	o.top = 0;
	err = xp_report(db, &o, f, NULL);
	if (fclose(f) && !err)
		err = -ENOMEM;
	if (!err && (sqlite3_prepare_v2(sum, "INSERT INTO xs_device VALUES(?,?,?,?,?,?,?,?,?)", -1,
					&dev, NULL) != SQLITE_OK ||
		     sqlite3_prepare_v2(sum, "INSERT INTO xs_idle VALUES(?,?,?,?,?,?)", -1, &cause,
					NULL) != SQLITE_OK))
		err = -EIO;
	for (line = text; !err && line && *line; line = next) {
		if ((next = strchr(line, '\n')))
			*next++ = '\0';
		if (line == text)
			map_heads(line, col);
		else
			err = put_idle_row(line, col, dev, cause);
	}
	sqlite3_finalize(dev);
	sqlite3_finalize(cause);
	free(text);
	return err;
}

/* The ranks' collectives: kernels, then waits on their hosts (host_coll.h)
 * named after the database's own names; then each one's stretch. */
static int put_rank_colls(sqlite3 *db, sqlite3 *sum)
{
	struct xp_host_colls H;
	int64_t base;
	int err = put_collectives(db, sum);

	if (!err)
		err = xp_jobsum_host_base(db, &base);
	if (!err && !(err = xp_host_colls_load(db, &H))) {
		err = xp_jobsum_put_host(db, sum, &H, base);
		if (!err)
			err = xp_jobsum_put_spans(db, sum, &H, base);
		xp_host_colls_free(&H);
	}
	return err;
}

int xp_jobsum_write(sqlite3 *db, sqlite3 *sum)
{
	int err = exec2(sum, "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; BEGIN;");

	if (!err)
		err = exec2(sum, schema);
	if (!err)
		err = put_meta(db, sum);
	if (!err && xp_db_has_table(db, "xp_ranks"))
		err = put_ranks(db, sum);
	if (!err)
		err = put_kernels(db, sum);
	if (!err && xp_db_has_table(db, "xp_ranks"))
		err = put_rank_colls(db, sum);
	if (!err)
		err = exec2(sum, "CREATE INDEX xs_span_at ON xs_span(pid, name, nth);"
			    "CREATE INDEX xs_piece_at ON xs_piece(pid, a);"
			    "CREATE INDEX xs_hpiece_at ON xs_hpiece(pid, a);");
	if (!err)
		err = put_names(db, sum);
	if (!err)
		err = put_idle(db, sum);
	if (!err)
		err = exec2(sum, "COMMIT;");
	return err;
}

/* The tables a summary is read through, with the columns read: since
 * version 1, but xs_span and xs_piece (version 2's, missing from an older
 * one: job --by wait says so) and xs_host, xs_hpiece (version 3's). */
static const struct {
	const char *name, *cols;
	int optional;
} sum_tables[] = {
	{ "xs_meta", "key value", 0 },
	{ "xs_rank", "pid rank world host gpu_ns kernels coll_ns sync_ns", 0 },
	{ "xs_name", "id value", 0 },
	{ "xs_kernel", "pid site name coll ns n", 0 },
	{ "xs_coll", "pid name nth launch start end", 0 },
	{ "xs_device", "rank device pid steps window_ns compute_ns comm_ns mem_ns idle_ns", 0 },
	{ "xs_idle", "rank device cause site ns gaps", 0 },
	{ "xs_span", "pid name nth kind site ns from_name from_nth", 1 },
	{ "xs_piece", "pid a b kind site ns", 1 },
	{ "xs_host", "pid site name ns n", 1 },
	{ "xs_hpiece", "pid a b kind site ns", 1 },
	{ "xs_clock", "has_pair mono_ns real_ns kind", 0 },
	{ "xs_marker", "name nth ts", 0 },
};

/* Each column of cols (space-separated) in the table, none generated or
 * hidden (a generated one computes what it likes on every read). */
static int check_columns(sqlite3 *db, const char *table, const char *cols, char *err, size_t len)
{
	sqlite3_stmt *st;
	char want[128];
	int rc, e = 0;

	if (sqlite3_prepare_v2(db, "SELECT name, hidden FROM pragma_table_xinfo(?)", -1, &st, NULL)
	    != SQLITE_OK) {
		snprintf(err, len, "%s", sqlite3_errmsg(db));
		return -EIO;
	}
	sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
	while (!e && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(st, 0);

		if (sqlite3_column_int(st, 1) && name) {
			snprintf(err, len, "column %s.%s is %s", table, name,
				 sqlite3_column_int(st, 1) == 1 ? "hidden" : "generated");
			e = -EBADMSG;
		}
	}
	if (!e && rc != SQLITE_DONE) {
		snprintf(err, len, "%s", sqlite3_errmsg(db));
		e = -EIO;
	}
	for (const char *c = cols; !e && *c;) {
		size_t n = strcspn(c, " ");
		int found = 0;

		snprintf(want, sizeof(want), "%.*s", (int)n, c);
		sqlite3_reset(st);
		while (!found && sqlite3_step(st) == SQLITE_ROW)
			found = sqlite3_column_text(st, 0) &&
				!sqlite3_stricmp((const char *)sqlite3_column_text(st, 0), want);
		if (!found) {
			snprintf(err, len, "table %s has no column %s", table, want);
			e = -EBADMSG;
		}
		c += n + (c[n] == ' ');
	}
	sqlite3_finalize(st);
	return e;
}

/* What the schema holds under name: 0 a table (*present set), else
 * -EBADMSG with err (a view, trigger, index or virtual table) or -EIO. */
static int check_table(sqlite3 *db, const char *name, int *present, char *err, size_t len)
{
	sqlite3_stmt *st;
	int rc, e = 0;

	*present = 0;
	/* names are case-blind in SQL: XS_RANK would be read as xs_rank */
	if (sqlite3_prepare_v2(db, "SELECT type, sql LIKE 'CREATE VIRTUAL%' FROM sqlite_schema"
			       " WHERE name = ?1 COLLATE NOCASE ORDER BY type <> 'table'", -1, &st,
			       NULL) != SQLITE_OK) {
		snprintf(err, len, "%s", sqlite3_errmsg(db));
		return -EIO;
	}
	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	if ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *type = (const char *)sqlite3_column_text(st, 0);

		*present = 1;
		if (!type || strcmp(type, "table") || sqlite3_column_int(st, 1)) {
			snprintf(err, len, "%s is a %s, not a table", name,
				 type && strcmp(type, "table") ? type : "virtual table");
			e = -EBADMSG;
		}
	} else if (rc != SQLITE_DONE) {
		snprintf(err, len, "%s", sqlite3_errmsg(db));
		e = -EIO;
	}
	sqlite3_finalize(st);
	return e;
}

/* xs_meta's version: one this xpcorr reads. */
static int check_version(sqlite3 *db, char *err, size_t len)
{
	sqlite3_stmt *st;
	int rc, e = 0;

	if (sqlite3_prepare_v2(db, "SELECT value FROM xs_meta WHERE key = 'version'", -1, &st, NULL)
	    != SQLITE_OK) {
		snprintf(err, len, "%s", sqlite3_errmsg(db));
		return -EIO;
	}
	if ((rc = sqlite3_step(st)) == SQLITE_ROW && sqlite3_column_type(st, 0) == SQLITE_INTEGER &&
	    sqlite3_column_int64(st, 0) >= 1 && sqlite3_column_int64(st, 0) <= XP_JOBSUM_VERSION) {
		e = 0;
	} else if (rc == SQLITE_ROW) {
		const char *v = (const char *)sqlite3_column_text(st, 0);

		snprintf(err, len, "summary version %.20s, where this xpcorr reads 1 to %d",
			 v ? v : "NULL", XP_JOBSUM_VERSION);
		e = -EPROTO;
	} else if (rc == SQLITE_DONE) {
		snprintf(err, len, "no version in its xs_meta");
		e = -EBADMSG;
	} else {
		snprintf(err, len, "%s", sqlite3_errmsg(db));
		e = -EIO;
	}
	sqlite3_finalize(st);
	return e;
}

int xp_jobsum_check(sqlite3 *db, char *err, size_t len)
{
	int e = 0, present;

	for (size_t i = 0; !e && i < sizeof(sum_tables) / sizeof(sum_tables[0]); i++) {
		e = check_table(db, sum_tables[i].name, &present, err, len);
		if (!e && !present && !sum_tables[i].optional) {
			snprintf(err, len, "no table %s", sum_tables[i].name);
			e = -EBADMSG;
		}
		if (!e && present)
			e = check_columns(db, sum_tables[i].name, sum_tables[i].cols, err, len);
	}
	return e ? e : check_version(db, err, len);
}

/* "PATH is a FIFO, not a job summary" and the like: what is at path. */
static int not_regular(const char *path, int e, char *err, size_t len)
{
	struct stat st;

	if (e == -ELOOP || e == -ENXIO) {
		if (!lstat(path, &st) && !S_ISREG(st.st_mode)) {
			snprintf(err, len, "%s is %s, not a job summary", path, xp_file_kind(st.st_mode));
			return -ENXIO;
		}
		snprintf(err, len, "cannot open %s: it was replaced while being opened", path);
		return -ENXIO;
	}
	snprintf(err, len, "cannot open %s: %s", path, strerror(-e));
	return e;
}

int xp_jobsum_open(const char *path, sqlite3 **db, char *err, size_t len)
{
	char why[256];
	struct stat st;
	int fd, e;

	*db = NULL;
	/* a regular file, opened without following a link or blocking (a
	 * FIFO), and SQLite on that descriptor: never on the name again */
	if ((fd = xp_open_regular(AT_FDCWD, path, 0, &st)) < 0)
		return not_regular(path, fd, err, len);
	if (!st.st_size) {
		close(fd);
		snprintf(err, len, "%s is empty, not a job summary", path);
		return -EBADMSG;
	}
	e = xp_db_open_fd(fd, path, db);
	close(fd);
	if (e != SQLITE_OK) {
		snprintf(err, len, "cannot open %s: %s", path, *db ? sqlite3_errmsg(*db) : "out of memory");
		return -EIO;
	}
	xp_db_limit_received(*db);
	xp_db_limit_work(*db, (uint64_t)st.st_size);
	if ((e = xp_jobsum_check(*db, why, sizeof(why))) == -EIO)
		snprintf(err, len, "cannot read %s: %s", path, why);
	else if (e)
		snprintf(err, len, "%s is not a job summary of this xpcorr: %s%s", path, why,
			 e == -EPROTO ? " (run xpcorr ingest on its run again)" : "");
	return e;
}

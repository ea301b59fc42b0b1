/* rangecut.c - --capture-range where xpcap could not bound the CPU records
 * (rangecut.h): a normal user's run, or root's without the uprobe, writes
 * samples and off-CPU intervals outside the program's windows (meta.json
 * capture_window.cpu_in_range false). They are cut here by the windows'
 * open and close times, from the injection library's status records
 * (XP_GPU_ST_WINDOW; its clean end closes a process's window too), with
 * the rule the drain applies with the uprobe: a record is kept where some
 * process's window is open at its ts. */
#include "ingest/rangecut.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/runfmt_gpu.h"

struct span {
	int64_t lo, hi;
};

struct spans {
	struct span *v;
	size_t n, cap;
	uint32_t *open;             /* pids whose window is open now */
	size_t nopen, capopen;
	int64_t lo;                 /* where the current span began */
	uint64_t opened;            /* windows opened */
};

static int grow(void **p, size_t *cap, size_t need, size_t size)
{
	size_t n = *cap ? *cap : 8;
	void *q;

	if (need <= *cap)
		return 0;
	while (n < need)
		n *= 2;
	q = realloc(*p, n * size);
	if (!q)
		return -ENOMEM;
	*p = q;
	*cap = n;
	return 0;
}

/* The span [lo, hi] after the others (they come in time order); touching
 * spans become one. */
static int add_span(struct spans *s, int64_t lo, int64_t hi)
{
	if (s->n && lo <= s->v[s->n - 1].hi) {
		if (hi > s->v[s->n - 1].hi)
			s->v[s->n - 1].hi = hi;
		return 0;
	}
	if (grow((void **)&s->v, &s->cap, s->n + 1, sizeof(*s->v)))
		return -ENOMEM;
	s->v[s->n++] = (struct span){ lo, hi };
	return 0;
}

/* pid's window opened or closed at ts. */
static int mark(struct spans *s, uint32_t pid, int open, int64_t ts)
{
	size_t i;

	for (i = 0; i < s->nopen && s->open[i] != pid; i++)
		;
	if (open && i == s->nopen) {
		if (grow((void **)&s->open, &s->capopen, s->nopen + 1, sizeof(*s->open)))
			return -ENOMEM;
		if (!s->nopen)
			s->lo = ts;
		s->open[s->nopen++] = pid;
		s->opened++;
	} else if (!open && i < s->nopen) {
		s->open[i] = s->open[--s->nopen];
		if (!s->nopen)
			return add_span(s, s->lo, ts);
	}
	return 0;
}

/* The spans where some window was open, from the status records. */
static int read_spans(sqlite3 *db, struct spans *s)
{
	sqlite3_stmt *st;
	int rc, err = 0;

	if (sqlite3_prepare_v2(db, "SELECT ts, pid, code, detail FROM xp_gpu_status"
			       " WHERE code IN (?, ?) ORDER BY ts, rowid", -1, &st, NULL) != SQLITE_OK)
		return -EIO;
	sqlite3_bind_int(st, 1, XP_GPU_ST_WINDOW);
	sqlite3_bind_int(st, 2, XP_GPU_ST_STOPPED);
	while (!err && (rc = sqlite3_step(st)) == SQLITE_ROW)
		err = mark(s, (uint32_t)sqlite3_column_int64(st, 1),
			   sqlite3_column_int(st, 2) == XP_GPU_ST_WINDOW &&
			   sqlite3_column_int(st, 3) == 1, sqlite3_column_int64(st, 0));
	if (!err && rc != SQLITE_DONE)
		err = -EIO;
	sqlite3_finalize(st);
	/* a window never closed (the process killed): open to the end */
	if (!err && s->nopen)
		err = add_span(s, s->lo, INT64_MAX);
	return err;
}

/* Whether meta.json asked for a range that xpcap did not bound. */
static int range_unbounded(sqlite3 *db)
{
	sqlite3_stmt *st;
	int yes = 0;

	if (sqlite3_prepare_v2(db, "SELECT (SELECT value FROM META_DATA_EXPORT"
			       " WHERE name = 'meta.capture_window.range'), (SELECT value FROM"
			       " META_DATA_EXPORT WHERE name = 'meta.capture_window.cpu_in_range')",
			       -1, &st, NULL) != SQLITE_OK)
		return -EIO;
	if (sqlite3_step(st) == SQLITE_ROW) {
		const char *range = (const char *)sqlite3_column_text(st, 0);
		const char *bounded = (const char *)sqlite3_column_text(st, 1);

		yes = range && *range && !(bounded && !strcmp(bounded, "1"));
	}
	sqlite3_finalize(st);
	return yes;
}

static int exec(sqlite3 *db, const char *sql)
{
	return sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK ? 0 : -EIO;
}

/* The spans into a temporary table keyed by their start: the span that
 * may hold a ts is the one starting last at or before it. */
static int save_spans(sqlite3 *db, const struct spans *s)
{
	sqlite3_stmt *st;
	int err = exec(db, "CREATE TEMP TABLE xp_range_spans(lo INTEGER PRIMARY KEY,"
		       " hi INTEGER NOT NULL)");

	if (err)
		return err;
	if (sqlite3_prepare_v2(db, "INSERT INTO temp.xp_range_spans VALUES (?, ?)", -1, &st,
			       NULL) != SQLITE_OK)
		return -EIO;
	for (size_t i = 0; i < s->n && !err; i++) {
		sqlite3_bind_int64(st, 1, s->v[i].lo);
		sqlite3_bind_int64(st, 2, s->v[i].hi);
		err = sqlite3_step(st) == SQLITE_DONE ? 0 : -EIO;
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
	return err;
}

static int cut_table(sqlite3 *db, const char *sql, uint64_t *n)
{
	if (exec(db, sql))
		return -EIO;
	*n = (uint64_t)sqlite3_changes64(db);
	return 0;
}

static int save_counts(sqlite3 *db, const struct xp_range_cut *c)
{
	const struct { const char *k; uint64_t v; } facts[] = {
		{ "xp.range_windows", c->windows },
		{ "xp.range_samples_cut", c->samples },
		{ "xp.range_switches_cut", c->switches },
	};
	sqlite3_stmt *st;
	char val[32];
	int err = 0;

	if (sqlite3_prepare_v2(db, "INSERT INTO META_DATA_EXPORT(name, value) VALUES (?, ?)", -1,
			       &st, NULL) != SQLITE_OK)
		return -EIO;
	for (size_t i = 0; i < sizeof(facts) / sizeof(facts[0]) && !err; i++) {
		snprintf(val, sizeof(val), "%" PRIu64, facts[i].v);
		sqlite3_bind_text(st, 1, facts[i].k, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 2, val, -1, SQLITE_TRANSIENT);
		err = sqlite3_step(st) == SQLITE_DONE ? 0 : -EIO;
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
	return err;
}

#define OUTSIDE(t) "DELETE FROM " t " WHERE ts > coalesce((SELECT hi FROM temp.xp_range_spans" \
	" WHERE lo <= " t ".ts ORDER BY lo DESC LIMIT 1), -1)"

int xp_range_cut(sqlite3 *db, struct xp_range_cut *out)
{
	struct spans s = { 0 };
	int err = range_unbounded(db);

	memset(out, 0, sizeof(*out));
	if (err <= 0)
		return err;
	out->done = 1;
	if (!(err = read_spans(db, &s)) && !(err = save_spans(db, &s)) &&
	    !(err = cut_table(db, OUTSIDE("xp_samples"), &out->samples)) &&
	    !(err = cut_table(db, OUTSIDE("xp_switches"), &out->switches))) {
		out->windows = s.opened;
		err = save_counts(db, out);
	}
	if (!err)
		err = exec(db, "DROP TABLE temp.xp_range_spans");
	free(s.v);
	free(s.open);
	return err;
}

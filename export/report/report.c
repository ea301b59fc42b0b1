/* report.c - GPU time summaries with their launching CPU stacks.
 *
 *   struct xp_report_opts o = XP_REPORT_DEFAULTS;      // --by kernel --top 30
 *   xp_report(db, &o, stdout, NULL);
 *
 * One SQL query per view yields (name, key, duration) in (key, duration)
 * order; one pass makes the per-group statistics (median from the sorted
 * durations of one group at a time), the same columns as nsys'
 * cuda_gpu_kern_sum: StdDev is the sample standard deviation, Med the
 * middle value (mean of the two middle ones for an even count).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "src/array.h"
#include "src/gtid.h"
#include "db/dbtask.h"
#include "export/render/jsonw.h"
#include "db/groups.h"
#include "export/report/report.h"
#include "export/report/report_priv.h"
#include "export/report/decl.h"
#include "export/report/table.h"
#include "db/stats.h"
#include "src/utf8.h"
#include "src/textesc.h"
#include "export/report/views.h"
#include "src/satmath.h"

void xp_rep_filter(const struct xp_report_opts *o, const char *gp, const char *start, char *buf,
		   size_t len)
{
	int n = snprintf(buf, len, "1");

	/* in a merged job, --pid 4242 is that pid on every host (their run is
	 * in the high bits), --rank the one process */
	if (o->pid)
		n += snprintf(buf + n, len - (size_t)n, " AND (" XP_SQL_GTID_PID("%s") " = :pid OR "
			      XP_SQL_PID_LOCAL(XP_SQL_GTID_PID("%s")) " = :pid)", gp, gp);
	if (o->since)
		n += snprintf(buf + n, len - (size_t)n, " AND %s >= :since", start);
	if (o->until)
		snprintf(buf + n, len - (size_t)n, " AND %s < :until", start);
}

int xp_rep_prepare(struct rep *R, const char *sql, sqlite3_stmt **s)
{
	int i;

	if (sqlite3_prepare_v2(R->db, sql, -1, s, NULL) != SQLITE_OK)
		return -EIO;
	if ((i = sqlite3_bind_parameter_index(*s, ":pid")))
		sqlite3_bind_int64(*s, i, R->o->pid);
	if ((i = sqlite3_bind_parameter_index(*s, ":since")))
		sqlite3_bind_int64(*s, i, R->o->since);
	if ((i = sqlite3_bind_parameter_index(*s, ":until")))
		sqlite3_bind_int64(*s, i, R->o->until);
	return 0;
}

/* The correlation's per-group statistics (xp_report_groups and friends)
 * describe the whole run: usable when nothing is filtered out and they
 * were computed from the rows the database holds now (databases of older
 * builds have none; rows deleted by hand make them stale). */
int xp_rep_filtered(const struct xp_report_opts *o)
{
	return o->pid || o->since || o->until;
}

static int use_groups(struct rep *R)
{
	return !xp_rep_filtered(R->o) && xp_groups_fresh(R->db);
}

/* xp_groups_fresh as a task (dbtask.h): a view needs the answer only for
 * its footers, and finding it counts every kernel and call (~0.1 s at 1M). */
static int groups_fresh_task(sqlite3 *db, void *arg)
{
	struct rep *R = arg;

	R->groups = xp_groups_fresh(db);
	return 0;
}

static int add_group(struct rep *R, struct group **g)
{
	if (xp_array__reserve((void **)&R->g, &R->cap, R->n + 1, sizeof(*R->g), 64))
		return -ENOMEM;
	*g = &R->g[R->n++];
	**g = (struct group){ 0 };
	return 0;
}

/* Reads the precomputed groups of one view, in key order as collect() makes them. */
static int collect_groups(struct rep *R, const char *view)
{
	sqlite3_stmt *s;
	int rc;

	if (sqlite3_prepare_v2(R->db, strcmp(view, "stack") ?
			       "SELECT s.value, g.key, instances, total_ns, min_ns, max_ns, avg_ns,"
			       " med_ns, stddev_ns FROM xp_report_groups g JOIN StringIds s"
			       " ON s.id = g.key WHERE g.view = ?1 ORDER BY g.key" :
			       "SELECT NULL, key, instances, total_ns, min_ns, max_ns, avg_ns,"
			       " med_ns, stddev_ns FROM xp_report_groups WHERE view = ?1 ORDER BY key",
			       -1, &s, NULL) != SQLITE_OK)
		return -EIO;
	sqlite3_bind_text(s, 1, view, -1, SQLITE_STATIC);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(s, 0);
		struct group *g;

		if (add_group(R, &g) < 0 || !(g->name = strdup(name ? name : ""))) {
			sqlite3_finalize(s);
			return -ENOMEM;
		}
		g->key = sqlite3_column_int64(s, 1);
		g->n = (uint64_t)sqlite3_column_int64(s, 2);
		g->total = sqlite3_column_int64(s, 3);
		g->min = sqlite3_column_int64(s, 4);
		g->max = sqlite3_column_int64(s, 5);
		g->avg = sqlite3_column_double(s, 6);
		g->med = sqlite3_column_double(s, 7);
		g->sd = sqlite3_column_double(s, 8);
		R->all_total = xp_sat_add(R->all_total, g->total);
	}
	sqlite3_finalize(s);
	return rc == SQLITE_DONE ? 0 : -EIO;
}

static void group_finish(struct group *g, int64_t *d)
{
	struct xp_stats st;

	xp_stats__of_sorted(d, g->n, sizeof(*d), g->total, &st);
	g->avg = st.avg;
	g->med = st.med;
	g->sd = st.sd;
}

/* Runs a (name, key, duration) query ordered by key, duration. */
static int collect(struct rep *R, const char *sql)
{
	sqlite3_stmt *s;
	int64_t *d = NULL;
	size_t dcap = 0;
	struct group *cur = NULL;
	int rc;

	if (xp_rep_prepare(R, sql, &s) < 0)
		return -EIO;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		int64_t key = sqlite3_column_int64(s, 1), dur = sqlite3_column_int64(s, 2);
		const char *name = (const char *)sqlite3_column_text(s, 0);

		if (!cur || cur->key != key) {
			if (cur)
				group_finish(cur, d);
			if (add_group(R, &cur) < 0)
				goto oom;
			*cur = (struct group){ .key = key, .min = dur, .max = dur,
					       .name = strdup(name ? name : "") };
			if (!cur->name)
				goto oom;
		}
		if (xp_array__reserve((void **)&d, &dcap, cur->n + 1, sizeof(*d), 1024))
			goto oom;
		d[cur->n++] = dur;
		cur->total = xp_sat_add(cur->total, dur);
		cur->min = dur < cur->min ? dur : cur->min;
		cur->max = dur > cur->max ? dur : cur->max;
		R->all_total = xp_sat_add(R->all_total, dur);
	}
	if (cur)
		group_finish(cur, d);
	free(d);
	sqlite3_finalize(s);
	return rc == SQLITE_DONE ? 0 : -EIO;
oom:
	free(d);
	sqlite3_finalize(s);
	return -ENOMEM;
}

static enum xp_report_sort sort_by;

static int cmp_group(const void *pa, const void *pb)
{
	const struct group *a = pa, *b = pb;
	int c = 0;

	switch (sort_by) {
	case XP_SORT_TOTAL: c = (b->total > a->total) - (b->total < a->total); break;
	case XP_SORT_AVG: c = (b->avg > a->avg) - (b->avg < a->avg); break;
	case XP_SORT_INSTANCES: c = (b->n > a->n) - (b->n < a->n); break;
	case XP_SORT_NAME: break;
	}
	if (!c)
		c = strcmp(a->name, b->name);
	return c ? c : (a->key > b->key) - (a->key < b->key);
}

/* Text reports name C++ functions and kernels short (elidename.h);
 * csv and json keep the names whole for scripts. */
int xp_rep_short_names(const struct xp_report_opts *o)
{
	return o->format == XP_FMT_TEXT && !o->full_names;
}

/* Bytes of line that fit in width columns (UTF-8: a character is a column). */
size_t xp_rep_fit_bytes(const char *line, unsigned width, int *cut)
{
	unsigned cols = 0;
	size_t i = 0;

	*cut = 0;
	while (line[i]) {
		size_t next = i + 1;

		while (((unsigned char)line[next] & 0xc0) == 0x80)
			next++;
		if (++cols > width) {
			*cut = 1;
			return i;
		}
		i = next;
	}
	return i;
}

void xp_rep_put_line(FILE *out, const char *line, unsigned width)
{
	int cut = 0;
	size_t n;

	line = xp_esc(line);        /* a run's names: no control character reaches the terminal */
	n = strlen(line);

	if (width > 1 && (xp_rep_fit_bytes(line, width, &cut), cut)) {
		char fit[4096];

		if (xp_rep_fit_last_field(line, width, fit, sizeof(fit))) {
			fprintf(out, "%s\n", fit);
			return;
		}
		n = xp_rep_fit_bytes(line, width - 1, &cut);
	}
	fwrite(line, 1, n, out);
	fputs(cut ? "\u2026\n" : "\n", out);
}

/* One text line, cut to o->width columns with an ellipsis (0: whole): a
 * table row or a stack must not wrap into the next in a terminal. */
void xp_rep_put_row(struct rep *R, const char *line)
{
	xp_rep_put_line(R->out, line, R->o->width);
}

void xp_rep_put_title(struct rep *R)
{
	char head[256];

	snprintf(head, sizeof(head), "** %s:", xp_rep_title(R->o->by));
	xp_rep_put_row(R, head);
}

int xp_rep_frame_stmt(struct rep *R)
{
	return R->walk ? 0 : xp_stackwalk_open(R->db, &R->walk);
}



const char *xp_rep_title(enum xp_report_by by)
{
	return by < XP_BY_COUNT ? xp_views[by].title : "?";
}

void xp_rep_csv_str(FILE *out, const char *s)
{
	fputc('"', out);
	for (; *s; s++) {
		if ((unsigned char)*s >= 0x80) {
			/* as JSON and SVG: invalid UTF-8 is U+FFFD */
			s = xp_utf8_fput(out, s) - 1;
			continue;
		}
		if (*s == '"')
			fputc('"', out);
		fputc(*s, out);
	}
	fputc('"', out);
}

/* A view of CPU samples (--by cpu, --by source on them): no GPU footer. */
static int cpu_samples(const struct xp_report_opts *o)
{
	return o->by == XP_BY_CPU || (o->cpu && o->by == XP_BY_SOURCE);
}

/* The document's first keys: the view, its title, its groups (the
 * per-group views'). */
static const struct xp_col doc_cols[] = {
	{ .json = "report", .kind = XP_COL_TEXT, .json_only = 1 },
	{ .json = "title", .kind = XP_COL_TEXT, .json_only = 1 },
	{ .json = "groups", .kind = XP_COL_UINT, .json_only = 1 },
};

const struct xp_decl xp_decl_report[] = {
	XP_DECL(NULL, "", doc_cols),
	{ 0 },
};

int xp_report(sqlite3 *db, const struct xp_report_opts *o, FILE *out, size_t *groups)
{
	struct rep R = { .db = db, .o = o, .out = out };
	struct xp_table doc = { .cols = doc_cols, .n = 3, .fmt = o->format, .out = out,
				.json = &R.json };
	struct xp_db_task *fresh = NULL;
	char sql[2048];
	size_t shown, rows = 0;
	int rc = 0;

	xp_rep_group_query(&R, sql, sizeof(sql));
	/* the stack tables are the main loader's: fail before any output if absent */
	if ((o->by == XP_BY_KERNEL || o->by == XP_BY_STACK) && xp_rep_frame_stmt(&R) < 0) {
		rc = -EIO;
		goto out;
	}
	if (xp_views[o->by].run && !xp_rep_filtered(o) && !cpu_samples(o))
		rc = xp_db_task_start(db, groups_fresh_task, &R, &fresh);
	else
		R.groups = use_groups(&R);
	if (rc < 0)
		goto out;
	if (!xp_views[o->by].run &&
	    (rc = R.groups && xp_rep_groups_view(o) ? collect_groups(&R, xp_rep_groups_view(o)) :
	     collect(&R, sql)) < 0)
		goto out;
	sort_by = o->sort;
	if (R.n)     /* qsort wants a non-NULL base even for 0 items (UBSan) */
		qsort(R.g, R.n, sizeof(*R.g), cmp_group);
	shown = o->top && o->top < R.n ? o->top : R.n;
	rows = R.n;
	/* the views of their own count rows after: no "groups" */
	xp_table_doc_begin(&doc, (struct xp_cell[]){ { .s = xp_views[o->by].name },
		{ .s = o->cpu && o->by == XP_BY_SOURCE ? xp_source_cpu_title : xp_rep_title(o->by) },
		{ .u = R.n, .absent = xp_views[o->by].run != NULL } });
	if ((rc = xp_views[o->by].run ? xp_views[o->by].run(&R, &rows) :
		   xp_rep_group_table(&R, shown)) < 0 ||
	    (rc = xp_db_task_join(fresh)) < 0)
		goto out;
	fresh = NULL;
	if ((rc = xp_rep_footer(&R, cpu_samples(o))) < 0)
		goto out;
	rc = xp_table_doc_end(&doc);
out:
	xp_db_task_drop(fresh);
	if (groups)
		*groups = rows;
	for (size_t i = 0; i < R.n; i++)
		free(R.g[i].name);
	free(R.g);
	xp_stackwalk_close(R.walk);
	return rc;
}


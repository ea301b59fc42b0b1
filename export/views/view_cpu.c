/* view_cpu.c - `xpcorr report --by cpu`: the CPU samples by function and by
 * Python line, self and total, as `perf report --no-children` and
 * `--children` and `py-spy top` show them (cpuprof.h counts them). The
 * report a run without GPU work gets by default (cmd_report.c).
 *
 *   xpcorr report --by cpu --top 10 run/
 *    Self (%)  Self (samples)  Total (%)  Total (samples)  Function
 *        74.3             715       74.6              718  hot_a (hotspots)
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "export/analysis/cpuprof.h"
#include "export/report/report_priv.h"
#include "export/report/decl.h"
#include "export/report/table.h"
#include "src/gtid.h"

void xp_rep_cpu_filter(const struct xp_report_opts *o, char *buf, size_t len)
{
	int n = snprintf(buf, len, "1");

	/* in a merged job, --pid 4242 is that pid on every host, as elsewhere */
	if (o->pid)
		n += snprintf(buf + n, len - (size_t)n, " AND (x.pid = :pid OR "
			      XP_SQL_PID_LOCAL("x.pid") " = :pid)");
	if (o->since)
		n += snprintf(buf + n, len - (size_t)n, " AND x.ts >= :since");
	if (o->until)
		snprintf(buf + n, len - (size_t)n, " AND x.ts < :until");
}

int xp_rep_cpu_collect(struct rep *R, enum xp_cpu_self self, struct xp_cpuprof *p)
{
	char where[256];
	struct xp_cpuprof_opts co = { .self = self, .where = where, .bind = xp_rep_bind_filter,
				      .ctx = R };
	int rc;

	xp_rep_cpu_filter(R->o, where, sizeof(where));
	if ((rc = xp_rep_frame_stmt(R)) < 0)
		return rc;
	co.walk = R->walk;
	return xp_cpuprof_collect(R->db, &co, p);
}

static double pct(const struct xp_cpuprof *p, uint64_t k)
{
	return p->samples ? 100.0 * (double)k / (double)p->samples : 0;
}

/* Samples, processes, threads and frequency under the table (json: keys). */
static const struct xp_col foot_cols[] = {
	{ .json = "samples", .kind = XP_COL_UINT, .json_only = 1 },
	{ .json = "python_samples", .kind = XP_COL_UINT, .json_only = 1 },
	{ .json = "no_frame_samples", .kind = XP_COL_UINT, .json_only = 1 },
	{ .json = "processes", .kind = XP_COL_INT, .json_only = 1 },
	{ .json = "threads", .kind = XP_COL_INT, .json_only = 1 },
	{ .json = "frequency_hz", .kind = XP_COL_INT, .json_only = 1 },
};

int xp_rep_cpu_footer(struct rep *R, const struct xp_cpuprof *p)
{
	char where[256], sql[512];
	int64_t procs = 0, threads = 0, hz = 0;
	sqlite3_stmt *s;

	xp_rep_cpu_filter(R->o, where, sizeof(where));
	snprintf(sql, sizeof(sql), "SELECT count(DISTINCT x.pid), count(DISTINCT x.pid * 4294967296"
		 " + x.tid), (SELECT CAST(value AS INTEGER) FROM META_DATA_EXPORT WHERE name ="
		 " 'meta.sample_frequency_hz') FROM xp_samples x WHERE %s", where);
	if (xp_rep_prepare(R, sql, &s) < 0)
		return -EIO;
	if (sqlite3_step(s) == SQLITE_ROW) {
		procs = sqlite3_column_int64(s, 0);
		threads = sqlite3_column_int64(s, 1);
		hz = sqlite3_column_int64(s, 2);
	}
	sqlite3_finalize(s);
	{
		struct xp_table t = { .cols = foot_cols, .n = 6, .fmt = R->o->format, .out = R->out,
				      .json = &R->json };

		xp_table_row_key(&t, "cpu", (struct xp_cell[]){ { .u = p->samples }, { .u = p->python },
			{ .u = p->no_frame }, { .i = procs }, { .i = threads }, { .i = hz } });
	}
	xp_rep_foot_line(R, "%s", "");
	xp_rep_foot_line(R, "CPU samples: %llu in %lld process%s, %lld thread%s, at %lld Hz",
			 (unsigned long long)p->samples, (long long)procs, procs == 1 ? "" : "es",
			 (long long)threads, threads == 1 ? "" : "s", (long long)hz);
	if (p->python)
		xp_rep_foot_line(R, "  with a Python frame: %llu (%.1f%%)",
				 (unsigned long long)p->python, pct(p, p->python));
	if (p->no_frame)
		xp_rep_foot_line(R, "  with no stack: %llu (%.1f%%)", (unsigned long long)p->no_frame,
				 pct(p, p->no_frame));
	return 0;
}

/* Functions or Python lines, one table each under one csv header. */
enum { P_LEVEL, P_SELF, P_SELF_PCT, P_TOTAL, P_TOTAL_PCT, P_NAME, P_FUNC, P_FILE, P_LINE, P_KIND,
       P_NAME_F, P_NAME_L, P_N };
static const struct xp_col cols[P_N] = {
	[P_LEVEL] = { .head = "Level", .kind = XP_COL_TEXT },
	[P_SELF] = { .head = "Self (samples)", .json = "self_samples", .kind = XP_COL_UINT,
		     .width = 14, .rule = 14 },
	[P_SELF_PCT] = { .head = "Self (%)", .json = "self_pct", .kind = XP_COL_FIXED, .prec = 1,
			 .width = 8, .rule = 8 },
	[P_TOTAL] = { .head = "Total (samples)", .json = "total_samples", .kind = XP_COL_UINT,
		      .width = 15, .rule = 15 },
	[P_TOTAL_PCT] = { .head = "Total (%)", .json = "total_pct", .kind = XP_COL_FIXED, .prec = 1,
			  .width = 9, .rule = 9 },
	[P_NAME] = { .head = "Name", .json = "name", .kind = XP_COL_TEXT },
	[P_FUNC] = { .head = "Function", .json = "function", .kind = XP_COL_TEXT },
	[P_FILE] = { .head = "File", .json = "file", .kind = XP_COL_TEXT },
	[P_LINE] = { .head = "Line", .json = "line", .kind = XP_COL_INT },
	[P_KIND] = { .json = "kind", .kind = XP_COL_TEXT },
	[P_NAME_F] = { .head = "Function", .kind = XP_COL_TEXT, .rule = 8 },
	[P_NAME_L] = { .head = "Line", .kind = XP_COL_TEXT, .rule = 4 },
};
static const unsigned char text_cols[2][5] = {
	{ P_SELF_PCT, P_SELF, P_TOTAL_PCT, P_TOTAL, P_NAME_F },
	{ P_SELF_PCT, P_SELF, P_TOTAL_PCT, P_TOTAL, P_NAME_L },
};
static const unsigned char csv_cols[] = { P_LEVEL, P_SELF, P_SELF_PCT, P_TOTAL, P_TOTAL_PCT,
	P_NAME, P_FUNC, P_FILE, P_LINE };
static const unsigned char json_cols[] = { P_NAME, P_FUNC, P_FILE, P_LINE, P_KIND, P_SELF,
	P_SELF_PCT, P_TOTAL, P_TOTAL_PCT };

static void row_out(struct xp_table *t, const struct xp_cpuprof *p, const struct xp_cpu_row *r)
{
	static const char *const kinds[] = { "python", "native", "kernel", "other" };
	const struct rep *R = t->ctx;
	char name[2048];

	xp_cpu_row_name(r, xp_rep_short_names(R->o) ? XP_CPU_NAME_SHORT : 0, name, sizeof(name));
	xp_table_row(t, (struct xp_cell[P_N]){
		[P_LEVEL] = { .s = r->is_line ? "line" : "function" }, [P_SELF] = { .u = r->self },
		[P_SELF_PCT] = { .d = pct(p, r->self) }, [P_TOTAL] = { .u = r->total },
		[P_TOTAL_PCT] = { .d = pct(p, r->total) }, [P_NAME] = { .s = name },
		[P_FUNC] = { .s = r->name }, [P_FILE] = { .s = r->file },
		[P_LINE] = { .i = r->line, .absent = !r->is_line, .null = r->line < 0 },
		[P_KIND] = { .s = kinds[r->kind] }, [P_NAME_F] = { .s = name },
		[P_NAME_L] = { .s = name } });
}

/* The functions' (lines 0) or Python lines' (1) table; *rows: rows found
 * (the first table of the report, with csv's header, when *rows is 0). */
static int table(struct rep *R, const struct xp_cpuprof *p, int lines, int first, size_t *rows)
{
	const struct xp_report_opts *o = R->o;
	struct xp_table t = { .cols = cols, .n = P_N, .fmt = o->format, .out = R->out,
			      .json = &R->json, .width = o->width, .ctx = R, .no_split = 1,
			      .text_max = 2200, .key = lines ? "cpu_lines" : "cpu_functions",
			      .more = lines ? "lines" : "functions", .csv_continues = !first,
			      .text_order = text_cols[lines], .text_n = 5,
			      .csv_order = csv_cols, .csv_n = sizeof(csv_cols),
			      .json_order = json_cols, .json_n = sizeof(json_cols) };
	size_t *order, n, shown;
	char title[320];

	if (xp_cpuprof_order(p, lines, &order, &n) < 0)
		return -ENOMEM;
	shown = o->top && o->top < n ? o->top : n;
	snprintf(title, sizeof(title), "%s** %s:", *rows ? "\n" : "",
		 lines ? "CPU Samples by Python Line" : xp_rep_title(o->by));
	xp_table_begin(&t, title);
	for (size_t i = 0; i < shown; i++)
		row_out(&t, p, &p->rows[order[i]]);
	xp_table_end(&t, shown, n);
	*rows += n;
	free(order);
	return 0;
}

static const struct xp_col total_cols[] = {
	{ .json = "total_samples", .kind = XP_COL_UINT, .json_only = 1 } };

int xp_view_cpu(struct rep *R, size_t *rows)
{
	struct xp_table tt = { .cols = total_cols, .n = 1, .fmt = R->o->format, .json = &R->json };
	struct xp_cpuprof p = { 0 };
	int rc;

	*rows = 0;
	if ((rc = xp_rep_cpu_collect(R, XP_CPU_SELF_LEAF, &p)) < 0)
		goto out;
	xp_table_fields(&tt, (struct xp_cell[]){ { .u = p.samples } });
	/* a program that is mostly Python: its lines first (py-spy top's
	 * view), the native functions under them after */
	if (p.lines && p.python * 2 > p.samples)
		rc = table(R, &p, 1, 1, rows) < 0 || table(R, &p, 0, 0, rows) < 0 ? -ENOMEM : 0;
	else
		rc = table(R, &p, 0, 1, rows) < 0 || (p.lines && table(R, &p, 1, 0, rows) < 0) ?
		     -ENOMEM : 0;
	if (rc < 0)
		goto out;
	rc = xp_rep_cpu_footer(R, &p);
out:
	xp_cpuprof_free(&p);
	return rc;
}

/* Where the view's tables land in json (report/decl.h). */
const struct xp_decl xp_decl_cpu[] = {
	XP_DECL("cpu", "", total_cols),
	XP_DECL_ORDER("cpu", "cpu_functions[]", cols, json_cols),
	XP_DECL_ORDER("cpu", "cpu_lines[]", cols, json_cols),
	XP_DECL("cpu", "cpu", foot_cols),
	{ 0 },
};

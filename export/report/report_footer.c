/* report_footer.c - what every report ends with: how much GPU time has its
 * launch stack (and a Python one), the evidence the join refused, what was
 * lost while recording, the clock skew, why a run has no GPU work, and
 * (report_cost.c) what recording cost. Text and csv's notes as lines, json
 * as keys of the report's object: json-only tables beside the prose.
 *
 *   xp_rep_footer(R, 0);        // a GPU view's footer
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "src/array.h"
#include "db/db_schema.h"
#include "db/launch.h"
#include "export/names/launcher.h"
#include "export/names/pyreach.h"
#include "export/report/report_priv.h"
#include "export/report/decl.h"
#include "export/report/table.h"
#include "src/gtid.h"
#include "src/satmath.h"

/* The GPU rows of every kind, each with its attribution (or NULLs). */
#define GPU_ROWS XP_GPU_ROWS        /* launch.h: shared with export --weight gpu */

/* The footer's prose: its lines (xp_table_note), the notes of a table
 * of R's format. */
void xp_rep_foot_line(struct rep *R, const char *fmt, ...)
{
	struct xp_table t = { .fmt = R->o->format, .out = R->out, .notes = R->o->notes,
			      .width = R->o->width };
	va_list ap;

	va_start(ap, fmt);
	xp_table_vnote(&t, fmt, ap);
	va_end(ap);
}

struct xp_table xp_rep_json_table(struct rep *R, const struct xp_col *c, size_t n, const char *key)
{
	return (struct xp_table){ .cols = c, .n = n, .fmt = R->o->format, .out = R->out,
				  .json = &R->json, .key = key };
}

/* A loss's reason as a person reads it: the GPU loader stores CUPTI's
 * numbers, the CPU loader the names of src/runnames.c. */
static const char *loss_reason(const char *r)
{
	static const struct { const char *key, *text; } names[] = {
		{ "1", "BPF ring buffer full" },
		{ "2", "perf side-band buffer overflowed" },
		{ "3", "stacks unreadable, or left out for a full ring (records kept)" },
		{ "4", "disk write failed" },
		{ "16", "CUPTI dropped records (no host buffer)" },
		{ "17", "GPU records without timestamps (device buffer full)" },
		{ "ringbuf_full", "BPF ring buffer full" },
		{ "perf_lost", "perf side-band buffer overflowed" },
		{ "stack_unreadable", "stacks unreadable, or left out for a full ring (records kept)" },
		{ "write_failed", "disk write failed" },
		{ "no_memory", "no memory or per-thread slot (BPF task storage full or busy)" },
		{ "privileged", "setuid/setgid or non-dumpable tasks, not recorded (counted only)" },
		{ "python_unsupported", "Python lines: interpreter version not supported" },
		{ "python_unreadable", "Python lines: frames unreadable" },
	};

	for (size_t i = 0; r && i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(r, names[i].key))
			return names[i].text;
	return r && *r ? r : "other";
}

/* The coverage's totals and its rows by how each record was attributed. */
static const struct xp_col cov_cols[] = {
	{ .json = "gpu_ns", .kind = XP_COL_INT, .json_only = 1 },
	{ .json = "records", .kind = XP_COL_INT, .json_only = 1 },
};

static const struct xp_col how_cols[] = {
	{ .json = "how", .kind = XP_COL_TEXT, .json_only = 1 },
	{ .json = "reason", .kind = XP_COL_TEXT, .json_only = 1 },
	{ .json = "records", .kind = XP_COL_INT, .json_only = 1 },
	{ .json = "gpu_ns", .kind = XP_COL_INT, .json_only = 1 },
	{ .json = "pct", .kind = XP_COL_FIXED, .prec = 1, .json_only = 1 },
};

struct cov {
	char how[16];
	char why[160];
	int64_t n, t;
};

/* One pass over the GPU rows (the query costs seconds on big runs); the
 * (how, reason) groups are few. */
static int footer_coverage(struct rep *R)
{
	char sql[1400], f[256];
	sqlite3_stmt *s;
	struct cov *c = NULL;
	size_t nc = 0, cap = 0;
	int64_t total = 0, rows = 0;
	int rc;
	struct xp_table t = xp_rep_json_table(R, cov_cols, 2, NULL);
	struct xp_table by = xp_rep_json_table(R, how_cols, 5, "by_how");

	xp_rep_filter(R->o, "g.gp", "g.start", f, sizeof(f));
	if (R->groups)
		snprintf(sql, sizeof(sql), "SELECT how, reason, records, gpu_ns FROM xp_report_coverage"
			 " ORDER BY CASE 1 WHEN 'exact' THEN 0 WHEN 'inferred' THEN 1 ELSE 2 END, 4 DESC, 2");
	else
		snprintf(sql, sizeof(sql), "SELECT ifnull(a.how, 'none'), ifnull(a.reason, 'not"
			 " correlated yet (run the correlation)'), count(*), sum(g.end - g.start) FROM "
			 GPU_ROWS " WHERE %s GROUP BY 1, 2 ORDER BY CASE 1 WHEN 'exact' THEN 0"
			 " WHEN 'inferred' THEN 1 ELSE 2 END, 4 DESC, 2", f);
	if (xp_rep_prepare(R, sql, &s) < 0)
		return -EIO;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		const char *how = (const char *)sqlite3_column_text(s, 0);
		const char *why = (const char *)sqlite3_column_text(s, 1);

		if (xp_array__reserve((void **)&c, &cap, nc + 1, sizeof(*c), 8)) {
			free(c);
			sqlite3_finalize(s);
			return -ENOMEM;
		}
		snprintf(c[nc].how, sizeof(c[nc].how), "%s", how ? how : "none");
		snprintf(c[nc].why, sizeof(c[nc].why), "%s", why ? why : "?");
		c[nc].n = sqlite3_column_int64(s, 2);
		c[nc].t = sqlite3_column_int64(s, 3);
		total = xp_sat_add(total, c[nc].t);
		rows += c[nc].n;
		nc++;
	}
	sqlite3_finalize(s);
	if (rc != SQLITE_DONE) {
		free(c);
		return -EIO;
	}
	xp_rep_foot_line(R, "%s", "");
	xp_rep_foot_line(R, "GPU time attribution: %lld ns in %lld records (kernels, memcpy, memset)",
		  (long long)total, (long long)rows);
	xp_table_row_key_open(&t, "coverage", (struct xp_cell[]){ { .i = total }, { .i = rows } });
	xp_table_begin(&by, NULL);
	for (size_t i = 0; i < nc; i++) {
		double pct = total ? 100.0 * (double)c[i].t / (double)total : 0;

		xp_table_row(&by, (struct xp_cell[]){ { .s = c[i].how }, { .s = c[i].why },
						      { .i = c[i].n }, { .i = c[i].t }, { .d = pct } });
		xp_rep_foot_line(R, "  %-13s %5.1f%%  %12lld ns  %6lld records  %s",
				 !strcmp(c[i].how, "none") ? "unattributed" : c[i].how, pct,
				 (long long)c[i].t, (long long)c[i].n,
				 strcmp(c[i].how, "exact") ? c[i].why : "launch record of the call");
	}
	free(c);
	xp_table_end(&by, 0, 0);
	xp_table_row_close(&t);
	return 0;
}

static const struct xp_col not_python_cols[] = {
	{ .json = "reason", .kind = XP_COL_TEXT, .json_only = 1 },
	{ .json = "gpu_ns", .kind = XP_COL_INT, .json_only = 1 },
	{ .json = "pct", .kind = XP_COL_FIXED, .prec = 1, .json_only = 1 },
	{ .json = "why", .kind = XP_COL_TEXT, .json_only = 1 },
};

/* For Python programs: how much of the exactly attributed GPU time has a
 * launch stack that reaches the Python code, and what to do when some stops
 * short (the C++ frames below it outgrew the stack copy). */
/* Why the rest of the GPU time has no Python frame, by who launched it
 * (launcher.h), each with what to do about it. */
static int footer_not_python(struct rep *R, const char *sql, int64_t exact_ns)
{
	struct xp_table t = xp_rep_json_table(R, not_python_cols, 4, "not_python");
	int64_t ns[XP_LAUNCHER_KINDS];
	int inproc = xp_launcher_inproc(R->db), rc;
	sqlite3_stmt *s;

	if (xp_rep_prepare(R, sql, &s) < 0)
		return -EIO;
	rc = xp_launcher_shares(R->db, s, ns);
	sqlite3_finalize(s);
	if (rc)
		return rc;
	xp_table_begin(&t, NULL);
	for (int w = XP_LAUNCHER_AUTOGRAD; w < XP_LAUNCHER_KINDS; w++) {
		double pct = exact_ns ? 100.0 * (double)ns[w] / (double)exact_ns : 0;
		char why[400];

		/* a waiting line is Python's: said with the Python lines above */
		if (!ns[w] || w == XP_LAUNCHER_WAITED)
			continue;
		xp_launcher_why(w, inproc, why, sizeof(why));
		xp_table_row(&t, (struct xp_cell[]){ { .s = xp_launcher_key(w) }, { .i = ns[w] },
						     { .d = pct }, { .s = why } });
		xp_rep_foot_line(R, "  %.1f%%: %s", pct, why);
	}
	xp_table_end(&t, 0, 0);
	return 0;
}

static const struct xp_col python_cols[] = {
	{ .json = "exact_gpu_ns", .kind = XP_COL_INT, .json_only = 1 },
	{ .json = "python_gpu_ns", .kind = XP_COL_INT, .json_only = 1 },
	{ .json = "pct", .kind = XP_COL_FIXED, .prec = 1, .json_only = 1 },
	{ .json = "python_line_gpu_ns", .kind = XP_COL_INT, .json_only = 1 },
	{ .json = "line_pct", .kind = XP_COL_FIXED, .prec = 1, .json_only = 1 },
	/* ingest's waiting lines (waitlines.h), when there are any */
	{ .json = "waited_gpu_ns", .kind = XP_COL_INT, .json_only = 1 },
	{ .json = "waited_pct", .kind = XP_COL_FIXED, .prec = 1, .json_only = 1 },
};

static double waited_pct(const struct xp_python_reach *r)
{
	return r->gpu_ns ? 100.0 * (double)r->waited_ns / (double)r->gpu_ns : 0;
}

/* GPU time ingest placed at the line a Python thread waited in, said apart
 * from stacks taken in Python: no Python frame was on its launch stack. */
static void footer_waited(struct rep *R, const struct xp_python_reach *r)
{
	if (r->waited_ns)
		xp_rep_foot_line(R, "  %.1f%% at the line its Python thread waited in (launched by a"
				 " runtime thread)", waited_pct(r));
}

static int footer_python(struct rep *R)
{
	struct xp_table t;
	char sql[1400], f[256];
	struct xp_python_reach r;
	sqlite3_stmt *s;
	double pct, line_pct;
	int rc;

	xp_rep_filter(R->o, "g.gp", "g.start", f, sizeof(f));
	snprintf(sql, sizeof(sql), "SELECT a.stack_id, sum(g.end - g.start) FROM " GPU_ROWS
		 " WHERE a.how = 'exact' AND %s GROUP BY a.stack_id", f);
	if (xp_rep_prepare(R, sql, &s) < 0)
		return -EIO;
	rc = xp_python_reach(R->db, s, &r);
	sqlite3_finalize(s);
	if (rc)
		return rc > 0 ? 0 : rc;
	pct = r.gpu_ns ? 100.0 * (double)r.python_ns / (double)r.gpu_ns : 0;
	line_pct = r.gpu_ns ? 100.0 * (double)r.line_ns / (double)r.gpu_ns : 0;
	t = xp_rep_json_table(R, python_cols, 7, NULL);
	xp_table_row_key(&t, "python", (struct xp_cell[]){ { .i = r.gpu_ns }, { .i = r.python_ns },
		{ .d = pct }, { .i = r.line_ns, .absent = !r.has_lines },
		{ .d = line_pct, .absent = !r.has_lines },
		{ .i = r.waited_ns, .absent = !r.waited_ns }, { .d = waited_pct(&r), .absent = !r.waited_ns } });
	if (r.gpu_ns) {
		xp_rep_foot_line(R, "Python: %.1f%% of the exactly attributed GPU time was launched from a"
			  " Python function", pct);
		if (r.has_lines)
			xp_rep_foot_line(R, "  %.1f%% with its Python line (Python stacks taken at the launch)",
				  line_pct);
		footer_waited(R, &r);
	}
	if (r.python_ns < r.gpu_ns)
		return footer_not_python(R, sql, r.gpu_ns);
	return 0;
}

static const struct xp_col rejected_cols[] = {
	{ .json = "reason", .kind = XP_COL_TEXT, .json_only = 1 },
	{ .json = "count", .kind = XP_COL_INT, .json_only = 1 },
	{ .json = "whole_run", .kind = XP_COL_BOOL, .json_only = 1 },
};

/* Evidence the join threw away. Filtered: the refused launch records of the
 * view's processes and times (xp_launch_rejects); samples out of order are
 * only counted, so that line stays about the whole run and says so. */
static int footer_rejected(struct rep *R)
{
	const struct xp_report_opts *o = R->o;
	struct xp_table t = xp_rep_json_table(R, rejected_cols, 3, "rejected");
	int per_view = xp_rep_filtered(o) && xp_db_has_table(R->db, "xp_launch_rejects");
	char sql[700], f[256];
	sqlite3_stmt *s;

	xp_rep_filter(o, XP_SQL_GPID("l.pid"), "l.ts", f, sizeof(f));
	if (per_view)
		snprintf(sql, sizeof(sql), "SELECT j.reason, count(*), 0 FROM xp_launch_rejects j"
			 " JOIN xp_launches l ON l.rowid = j.launch_rowid WHERE %s GROUP BY 1"
			 " UNION ALL SELECT reason, count, 1 FROM xp_correlation_counts WHERE count > 0"
			 " AND reason LIKE 'samples out%%' ORDER BY 1", f);
	else
		snprintf(sql, sizeof(sql), "SELECT reason, count, %d FROM xp_correlation_counts"
			 " WHERE count > 0 AND (reason LIKE 'launch%%' OR reason LIKE 'second%%'"
			 " OR reason LIKE 'samples out%%') ORDER BY reason", xp_rep_filtered(o));
	if (xp_rep_prepare(R, sql, &s) < 0)
		return -EIO;
	xp_table_begin(&t, NULL);
	while (sqlite3_step(s) == SQLITE_ROW) {
		const char *why = (const char *)sqlite3_column_text(s, 0);
		int64_t n = sqlite3_column_int64(s, 1);
		int whole = sqlite3_column_int(s, 2);

		xp_table_row(&t, (struct xp_cell[]){ { .s = why }, { .i = n },
						     { .i = 1, .absent = !whole } });
		xp_rep_foot_line(R, "Rejected evidence: %s: %lld%s", why, (long long)n,
				 whole ? " (whole run, not filtered)" : "");
	}
	sqlite3_finalize(s);
	xp_table_end(&t, 0, 0);
	return 0;
}

static const struct xp_col loss_cols[] = {
	{ .json = "reason", .kind = XP_COL_TEXT, .json_only = 1 },
	{ .json = "record_type", .kind = XP_COL_TEXT, .json_only = 1 },
	{ .json = "count", .kind = XP_COL_INT, .json_only = 1 },
	{ .json = "source", .kind = XP_COL_TEXT, .json_only = 1 },
	{ .json = "whole_run", .kind = XP_COL_BOOL, .json_only = 1 },
};

/* Losses carry a time (when known) but no process: a time filter applies to
 * those with a time; under --pid every line is about the whole run. */
static int footer_losses(struct rep *R)
{
	const struct xp_report_opts *o = R->o;
	struct xp_table t = xp_rep_json_table(R, loss_cols, 5, "losses");
	int any = 0;
	char sql[600], f[256];
	sqlite3_stmt *s;

	/* the scope column: 0 in the view, 1 untimed (whole run), 2 not per process */
	xp_rep_filter(&(struct xp_report_opts){ .since = o->since, .until = o->until }, "0", "ts", f,
	       sizeof(f));
	if (o->pid)
		snprintf(sql, sizeof(sql), "SELECT reason, kind, sum(count), ifnull(source, ''), 2"
			 " FROM xp_losses GROUP BY 1, 2, 4 ORDER BY 4, 1, 2");
	else
		snprintf(sql, sizeof(sql), "SELECT reason, kind, sum(count), ifnull(source, ''),"
			 " %s FROM xp_losses WHERE ts IS NULL OR (%s) GROUP BY 1, 2, 4, 5"
			 " ORDER BY 4, 1, 2, 5", o->since || o->until ? "ts IS NULL" : "0", f);
	if (xp_rep_prepare(R, sql, &s) < 0)
		return -EIO;
	xp_table_begin(&t, NULL);
	while (sqlite3_step(s) == SQLITE_ROW) {
		const char *reason = (const char *)sqlite3_column_text(s, 0);
		const char *kind = (const char *)sqlite3_column_text(s, 1);
		int64_t n = sqlite3_column_int64(s, 2);
		const char *src = (const char *)sqlite3_column_text(s, 3);
		int whole = sqlite3_column_int(s, 4);   /* 1 untimed, 2 not per process */
		int known = kind && *kind && strcmp(kind, "0");

		/* a launch from a thread with no Python lost nothing: there was none
		 * (the Python footer gives who launched it) */
		if (reason && !strcmp(reason, "python_no_thread"))
			continue;
		any = 1;
		xp_table_row(&t, (struct xp_cell[]){ { .s = loss_reason(reason) }, { .s = kind },
						     { .i = n }, { .s = src }, { .i = 1, .absent = !whole } });
		xp_rep_foot_line(R, "Losses: %s: %lld %s%s%s%s%s", loss_reason(reason), (long long)n,
				 known ? kind : "", known ? " records" : "records", *src ? " in " : "", src,
				 whole == 2 ? " (whole run: losses are not recorded per process)" :
				 whole ? " (whole run: no time recorded)" : "");
	}
	sqlite3_finalize(s);
	xp_table_end(&t, 0, 0);
	if (!any)
		xp_rep_foot_line(R, xp_rep_filtered(o) ? "Losses: none recorded in this time range" :
				 "Losses: none recorded");
	return 0;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* Kernel start - API call start over the kernels of the filtered view, as
 * the correlation measures it over the whole run. */
static int skew_of_view(struct rep *R, int64_t v[4])
{
	char sql[800], f[256];
	sqlite3_stmt *s;
	int64_t *d = NULL;
	size_t n = 0, cap = 0;
	int rc;

	xp_rep_filter(R->o, "k.globalPid", "k.start", f, sizeof(f));
	snprintf(sql, sizeof(sql), "SELECT k.start - r.start FROM CUPTI_ACTIVITY_KIND_KERNEL k"
		 " JOIN xp_attribution a ON a.gpu_table = 'KERNEL' AND a.gpu_rowid = k.rowid"
		 " JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON r.rowid = a.api_rowid"
		 " WHERE k.start > 0 AND %s", f);
	if (xp_rep_prepare(R, sql, &s) < 0)
		return -EIO;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		if (xp_array__reserve((void **)&d, &cap, n + 1, sizeof(*d), 1024)) {
			free(d);
			sqlite3_finalize(s);
			return -ENOMEM;
		}
		d[n++] = sqlite3_column_int64(s, 0);
	}
	sqlite3_finalize(s);
	if (rc != SQLITE_DONE) {
		free(d);
		return -EIO;
	}
	memset(v, 0, 4 * sizeof(*v));
	if (n) {
		qsort(d, n, sizeof(*d), cmp_i64);
		v[0] = (int64_t)n;
		v[1] = d[0];
		v[2] = n % 2 ? d[n / 2] : (d[n / 2 - 1] + d[n / 2]) / 2;
		for (size_t i = 0; i < n && d[i] < 0; i++)
			v[3]++;
	}
	free(d);
	return 0;
}

static const struct xp_col skew_cols[] = {
	{ .json = "kernels", .kind = XP_COL_INT, .json_only = 1 },
	{ .json = "min_ns", .kind = XP_COL_INT, .json_only = 1 },
	{ .json = "median_ns", .kind = XP_COL_INT, .json_only = 1 },
	{ .json = "negative", .kind = XP_COL_INT, .json_only = 1 },
};

static int footer_skew(struct rep *R)
{
	struct xp_table t = xp_rep_json_table(R, skew_cols, 4, NULL);
	int rc;
	int64_t v[4] = { 0 };          /* kernels, min, median, negative */
	sqlite3_stmt *s;

	if (xp_rep_filtered(R->o)) {
		if ((rc = skew_of_view(R, v)) < 0)
			return rc;
	} else {
		if (xp_rep_prepare(R, "SELECT (SELECT value FROM META_DATA_EXPORT WHERE name = 'xp_clock_skew_kernels'),"
			    " (SELECT value FROM META_DATA_EXPORT WHERE name = 'xp_clock_skew_min_ns'),"
			    " (SELECT value FROM META_DATA_EXPORT WHERE name = 'xp_clock_skew_median_ns'),"
			    " (SELECT value FROM META_DATA_EXPORT WHERE name = 'xp_clock_skew_negative')",
			    &s) < 0)
			return -EIO;
		if (sqlite3_step(s) == SQLITE_ROW)
			for (int i = 0; i < 4; i++)
				v[i] = sqlite3_column_int64(s, i);
		sqlite3_finalize(s);
	}
	xp_table_row_key(&t, "clock_skew", (struct xp_cell[]){ { .i = v[0] }, { .i = v[1] },
							       { .i = v[2] }, { .i = v[3] } });
	if (v[0] == 0) {
		xp_rep_foot_line(R, "Clock skew: not measured (no kernel with its API call%s)",
			  xp_rep_filtered(R->o) ? " in this view" : "");
	} else {
		xp_rep_foot_line(R, "Clock skew (kernel start - API call start, >= 0 when clocks agree):"
			  " min %lld ns, median %lld ns over %lld kernels%s", (long long)v[1],
			  (long long)v[2], (long long)v[0], v[3] ? "; NEGATIVE: clocks disagree" : "");
	}
	return 0;
}

static int footer_rest(struct rep *R)
{
	int rc;

	if ((rc = footer_rejected(R)) < 0 || (rc = footer_losses(R)) < 0 ||
	    (rc = footer_skew(R)) < 0)
		return rc;
	return xp_rep_recording_cost(R);
}

/* What xpcap wrote in meta.json about why GPU capture was off or failed
 * (gpu_problem, gpu_not_armed, cuda_library), with the remedy. */
static void why_from_meta(struct rep *R, char *why, size_t len)
{
	sqlite3_stmt *s;

	if (xp_rep_prepare(R, "SELECT (SELECT value FROM META_DATA_EXPORT WHERE name ="
		    " 'meta.gpu_problem.text'), (SELECT value FROM META_DATA_EXPORT WHERE name ="
		    " 'meta.gpu_not_armed'), (SELECT value FROM META_DATA_EXPORT WHERE name ="
		    " 'meta.cuda_library.path'), (SELECT value FROM META_DATA_EXPORT WHERE name ="
		    " 'meta.capture_window.range')", &s) < 0)
		return;
	if (sqlite3_step(s) == SQLITE_ROW) {
		const char *problem = (const char *)sqlite3_column_text(s, 0);
		const char *not_armed = (const char *)sqlite3_column_text(s, 1);
		const char *cuda = (const char *)sqlite3_column_text(s, 2);
		const char *range = (const char *)sqlite3_column_text(s, 3);

		if (problem)
			snprintf(why, len, "the injection library could not trace: %s", problem);
		else if (not_armed && cuda)
			snprintf(why, len, "the program loaded %s, but GPU capture was not armed: %s",
				 cuda, not_armed);
		else if (not_armed)
			snprintf(why, len, "GPU capture was not armed: %s", not_armed);
		else if (range)
			snprintf(why, len, "--capture-range %s: no GPU work inside the range (did the"
				 " program reach it? %s)", range, strncmp(range, "nvtx:", 5) ?
				 "cudaProfilerStart, torch.cuda.profiler.start()" :
				 "an NVTX range of exactly that name, pushed or started");
	}
	sqlite3_finalize(s);
}

/* A fatal status of the injection library (runs of an older xpcap say
 * it only there). */
static int status_why(struct rep *R, char *why, size_t len)
{
	sqlite3_stmt *s;

	if (xp_rep_prepare(R, "SELECT code, severity, ifnull(text, '') FROM xp_gpu_status"
		    " WHERE code = 2 OR severity = 2 ORDER BY code = 2 DESC, ts LIMIT 1", &s) < 0)
		return -EIO;
	if (sqlite3_step(s) == SQLITE_ROW) {
		const char *t = (const char *)sqlite3_column_text(s, 2);

		if (sqlite3_column_int64(s, 0) == 2)
			snprintf(why, len, "another CUPTI subscriber held the subscription"
				 " (%s): close torch.profiler/nsys/other tools and run again", t);
		else
			snprintf(why, len, "GPU tracing stopped: %s", t);
	}
	sqlite3_finalize(s);
	return 0;
}

static const struct xp_col warning_cols[] = {
	{ .json = "warning", .kind = XP_COL_TEXT, .json_only = 1 },
};

/* Why a run has no GPU rows at all, from what xpcap and the injection
 * library said, after lead ("WARNING: no GPU activity in this run"). */
static int no_activity_note(struct rep *R, const char *lead)
{
	struct xp_table t = xp_rep_json_table(R, warning_cols, 1, NULL);
	sqlite3_stmt *s;
	char why[1024] = "";
	int64_t gpu = 0, procs = 0;

	/* whether there are rows, not how many: count(*) reads every row */
	if (xp_rep_prepare(R, "SELECT EXISTS (SELECT 1 FROM CUPTI_ACTIVITY_KIND_KERNEL) OR"
		    " EXISTS (SELECT 1 FROM CUPTI_ACTIVITY_KIND_MEMCPY) OR"
		    " EXISTS (SELECT 1 FROM CUPTI_ACTIVITY_KIND_MEMSET),"
		    " EXISTS (SELECT 1 FROM xp_gpu_processes)", &s) < 0)
		return -EIO;
	if (sqlite3_step(s) == SQLITE_ROW) {
		gpu = sqlite3_column_int64(s, 0);
		procs = sqlite3_column_int64(s, 1);
	}
	sqlite3_finalize(s);
	if (gpu)
		return 0;
	why_from_meta(R, why, sizeof(why));
	if (!why[0] && status_why(R, why, sizeof(why)) < 0)
		return -EIO;
	if (!why[0])
		snprintf(why, sizeof(why), procs ?
			 "the traced processes loaded CUDA but ran no GPU work while traced" :
			 "no GPU stream in the run: not a CUDA program, or the injection library"
			 " was blocked (setuid program, CUDA_INJECTION64_PATH overridden, static"
			 " CUDA without injection support)");
	xp_table_fields(&t, (struct xp_cell[]){ { .s = why } });
	xp_rep_foot_line(R, "%s: %s", lead, why);
	return 0;
}

static int no_activity_warning(struct rep *R)
{
	return no_activity_note(R, "WARNING: no GPU activity in this run");
}

/* The CPU views' footer after their own: the losses (samples lost too);
 * json keeps the keys every report has (report-schema.json). */
static int footer_cpu(struct rep *R)
{
	int rc = 0;

	/* json's schema wants them; text and csv say nothing of GPU time here
	 * (nor read it: a CPU view of a big GPU run stays quick) */
	if (R->o->format == XP_FMT_JSON && ((rc = footer_coverage(R)) < 0 ||
					     (rc = footer_rejected(R)) < 0))
		return rc;
	if ((rc = footer_losses(R)) < 0)
		return rc;
	/* why a run has no GPU side, as the GPU views say it; not a warning here */
	return no_activity_note(R, "No GPU work in this run");
}


int xp_rep_footer(struct rep *R, int cpu)
{
	int rc;

	if (cpu)
		return footer_cpu(R);
	if ((rc = footer_coverage(R)) >= 0 && (rc = footer_python(R)) >= 0 &&
	    (rc = footer_rest(R)) >= 0)
		rc = no_activity_warning(R);
	return rc;
}

/* Where the footer's tables land in json (decl.h). */
const struct xp_decl xp_decl_footer[] = {
	XP_DECL(NULL, "coverage", cov_cols),
	XP_DECL(NULL, "coverage.by_how[]", how_cols),
	XP_DECL(NULL, "not_python[]", not_python_cols),
	XP_DECL(NULL, "python", python_cols),
	XP_DECL(NULL, "rejected[]", rejected_cols),
	XP_DECL(NULL, "losses[]", loss_cols),
	XP_DECL(NULL, "clock_skew", skew_cols),
	XP_DECL(NULL, "", warning_cols),
	{ 0 },
};

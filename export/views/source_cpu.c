/* source_cpu.c - `xpcorr report --by source` on CPU samples (a run without
 * GPU work, or --weight cpu): samples per Python function and its lines, as
 * py-spy counts them (self: the innermost Python line of the sample's
 * stack; total: every line of the stack once), and per native function for
 * the samples with no Python frame (self: the leaf). Rows as the GPU source
 * view's, in samples (cpuprof.h counts them).
 *
 *   xpcorr report --by source run/       # a CPU-only run
 *       61.0             610       61.0              610  spin  (prog.py)
 *       60.0             600       60.0              600      prog.py:12
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "export/analysis/cpuprof.h"
#include "export/report/report_priv.h"
#include "export/report/decl.h"
#include "export/report/table.h"

const char xp_source_cpu_title[] = "CPU Samples by Source (self: at the innermost Python line,"
	" else the leaf function; total: also in what it calls)";

static double pct(const struct xp_cpuprof *p, uint64_t k)
{
	return p->samples ? 100.0 * (double)k / (double)p->samples : 0;
}

/* Functions and their lines (json: a function's lines nested; csv: a
 * Level column); kind: a function's, Python or native. */
enum { C_LEVEL, C_FILE, C_FUNC, C_LINE, C_KIND, C_SELF_PCT, C_SELF, C_TOTAL_PCT, C_TOTAL,
       C_SOURCE, C_N };

static const struct xp_col cols[C_N] = {
	[C_LEVEL] = { .head = "Level", .kind = XP_COL_TEXT },
	[C_FILE] = { .head = "File", .json = "file", .kind = XP_COL_TEXT },
	[C_FUNC] = { .head = "Function", .json = "function", .kind = XP_COL_TEXT },
	[C_LINE] = { .head = "Line", .json = "line", .kind = XP_COL_INT },
	[C_KIND] = { .json = "kind", .kind = XP_COL_TEXT },
	[C_SELF_PCT] = { .head = "Self (%)", .kind = XP_COL_FIXED, .width = 8, .rule = 8, .prec = 1 },
	[C_SELF] = { .head = "Self (samples)", .json = "self_samples", .kind = XP_COL_UINT,
		     .width = 14, .rule = 14 },
	[C_TOTAL_PCT] = { .head = "Total (%)", .kind = XP_COL_FIXED, .width = 9, .rule = 9,
			  .prec = 1 },
	[C_TOTAL] = { .head = "Total (samples)", .json = "total_samples", .kind = XP_COL_UINT,
		      .width = 15, .rule = 15 },
	[C_SOURCE] = { .head = "Source", .kind = XP_COL_TEXT, .rule = 6 },
};
static const unsigned char text_cols[] = { C_SELF_PCT, C_SELF, C_TOTAL_PCT, C_TOTAL, C_SOURCE };
static const unsigned char csv_cols[] = { C_LEVEL, C_FILE, C_FUNC, C_LINE, C_SELF, C_TOTAL };
static const unsigned char json_func[] = { C_FILE, C_FUNC, C_KIND, C_SELF, C_TOTAL };
static const unsigned char json_line[] = { C_LINE, C_SELF, C_TOTAL };
static const struct xp_col total_cols[] = {
	{ .json = "total_samples", .kind = XP_COL_UINT, .json_only = 1 },
};

static void fill(const struct xp_cpuprof *p, struct xp_cell *c, const struct xp_cpu_row *r,
		 const char *source)
{
	c[C_LEVEL] = (struct xp_cell){ .s = r->is_line ? "line" : "function" };
	c[C_FILE] = (struct xp_cell){ .s = r->file };
	c[C_FUNC] = (struct xp_cell){ .s = r->name };
	c[C_LINE] = (struct xp_cell){ .i = r->line, .null = !r->is_line || r->line < 0 };
	c[C_KIND] = (struct xp_cell){ .s = r->kind == XP_CPU_PYTHON ? "python" : "native" };
	c[C_SELF_PCT] = (struct xp_cell){ .d = pct(p, r->self) };
	c[C_SELF] = (struct xp_cell){ .u = r->self };
	c[C_TOTAL_PCT] = (struct xp_cell){ .d = pct(p, r->total) };
	c[C_TOTAL] = (struct xp_cell){ .u = r->total };
	c[C_SOURCE] = (struct xp_cell){ .s = source };
}

static int cmp_line(const void *pa, const void *pb, void *ctx)
{
	const struct xp_cpuprof *p = ctx;
	const struct xp_cpu_row *a = &p->rows[*(const size_t *)pa], *b = &p->rows[*(const size_t *)pb];

	return (a->line > b->line) - (a->line < b->line);
}

/* Function fi, then its lines in line order (json: its "lines"). */
static void print_func(struct xp_table *ft, const struct xp_cpuprof *p, size_t fi, size_t *lines,
		       size_t nlines)
{
	const struct xp_cpu_row *f = &p->rows[fi];
	struct xp_table lt = *ft;
	struct xp_cell c[C_N];
	char what[2200];
	size_t n = 0;

	for (size_t i = 0; i < nlines; i++)
		if (p->rows[lines[i]].func == fi)
			lines[n++] = lines[i];      /* this function's, first: sorted apart */
	if (f->kind == XP_CPU_PYTHON)
		snprintf(what, sizeof(what), "%s  (%s)", f->name, f->file);
	else
		xp_cpu_row_name(f, ((const struct rep *)ft->ctx)->o->full_names ? 0 :
				XP_CPU_NAME_SHORT, what, sizeof(what));
	fill(p, c, f, what);
	xp_table_row_open(ft, c);
	lt.key = "lines";
	lt.json_order = json_line;
	lt.json_n = sizeof(json_line);
	lt.no_heads = 1;
	lt.csv_continues = 1;
	xp_table_begin(&lt, NULL);
	for (size_t i = 0; i < n; i++) {
		const struct xp_cpu_row *l = &p->rows[lines[i]];

		snprintf(what, sizeof(what), l->line >= 0 ? "    %s:%d" : "    %s:?", l->file, l->line);
		fill(p, c, l, what);
		xp_table_row(&lt, c);
	}
	xp_table_end(&lt, 0, 0);
	xp_table_row_close(ft);
}

static int print_all(struct rep *R, const struct xp_cpuprof *p, size_t *rows)
{
	const struct xp_report_opts *o = R->o;
	size_t *fo = NULL, *lo = NULL, *scratch = NULL, nf, nl, shown;
	struct xp_table t = { .cols = cols, .n = C_N, .fmt = o->format, .out = R->out,
			      .json = &R->json, .width = o->width, .ctx = R, .key = "cpu_source",
			      .no_split = 1, .more = "functions", .text_max = 2200,
			      .text_order = text_cols, .text_n = sizeof(text_cols),
			      .csv_order = csv_cols, .csv_n = sizeof(csv_cols),
			      .json_order = json_func, .json_n = sizeof(json_func) };
	struct xp_table tt = t;
	char head[512];
	int rc;

	if ((rc = xp_cpuprof_order(p, 0, &fo, &nf)) < 0 || (rc = xp_cpuprof_order(p, 1, &lo, &nl)) < 0 ||
	    !(scratch = malloc((nl + 1) * sizeof(*scratch)))) {
		rc = -ENOMEM;
		goto out;
	}
	qsort_r(lo, nl, sizeof(*lo), cmp_line, (void *)p);
	shown = o->top && o->top < nf ? o->top : nf;
	tt.cols = total_cols;
	tt.n = 1;
	tt.json_order = NULL;
	xp_table_fields(&tt, (struct xp_cell[]){ { .u = p->samples } });
	snprintf(head, sizeof(head), "** %s:", xp_source_cpu_title);
	xp_table_begin(&t, head);
	for (size_t i = 0; i < shown; i++) {
		memcpy(scratch, lo, nl * sizeof(*lo));
		print_func(&t, p, fo[i], scratch, nl);
	}
	xp_table_end(&t, shown, nf);
	*rows = nf;
out:
	free(fo);
	free(lo);
	free(scratch);
	return rc;
}

int xp_report_source_cpu(struct rep *R, size_t *rows)
{
	struct xp_cpuprof p = { 0 };
	int rc;

	*rows = 0;
	if ((rc = xp_rep_cpu_collect(R, XP_CPU_SELF_PYTHON, &p)) < 0 ||
	    (rc = print_all(R, &p, rows)) < 0)
		goto out;
	rc = xp_rep_cpu_footer(R, &p);
out:
	xp_cpuprof_free(&p);
	return rc;
}

/* Where the view's tables land in json (report/decl.h). */
const struct xp_decl xp_decl_source_cpu[] = {
	XP_DECL("source", "", total_cols),
	XP_DECL_ORDER("source", "cpu_source[]", cols, json_func),
	XP_DECL_ORDER("source", "cpu_source[].lines[]", cols, json_line),
	{ 0 },
};

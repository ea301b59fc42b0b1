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

const char xp_source_cpu_title[] = "CPU Samples by Source (self: at the innermost Python line,"
	" else the leaf function; total: also in what it calls)";

static double pct(const struct xp_cpuprof *p, uint64_t k)
{
	return p->samples ? 100.0 * (double)k / (double)p->samples : 0;
}

static void text_row(struct rep *R, const struct xp_cpuprof *p, uint64_t self, uint64_t total,
		     const char *what)
{
	char line[2200];

	snprintf(line, sizeof(line), " %8.1f  %14llu  %9.1f  %15llu  %s", pct(p, self),
		 (unsigned long long)self, pct(p, total), (unsigned long long)total, what);
	xp_rep_put_row(R, line);
}

static void csv_row(struct rep *R, const char *level, const struct xp_cpu_row *r)
{
	fprintf(R->out, "\"%s\",", level);
	xp_rep_csv_str(R->out, r->file);
	fputc(',', R->out);
	xp_rep_csv_str(R->out, r->name);
	if (r->is_line && r->line >= 0)
		fprintf(R->out, ",%d", r->line);
	else
		fputc(',', R->out);
	fprintf(R->out, ",%llu,%llu\n", (unsigned long long)r->self, (unsigned long long)r->total);
}

static void json_row(struct rep *R, const struct xp_cpu_row *r)
{
	struct jsonw *w = &R->json;

	if (r->is_line) {
		jsonw_key(w, "line");
		if (r->line >= 0)
			jsonw_int(w, r->line);
		else
			jsonw_null(w);
	} else {
		jsonw_key(w, "file"); jsonw_str(w, r->file);
		jsonw_key(w, "function"); jsonw_str(w, r->name);
		jsonw_key(w, "kind"); jsonw_str(w, r->kind == XP_CPU_PYTHON ? "python" : "native");
	}
	jsonw_key(w, "self_samples"); jsonw_uint(w, r->self);
	jsonw_key(w, "total_samples"); jsonw_uint(w, r->total);
}

static int cmp_line(const void *pa, const void *pb, void *ctx)
{
	const struct xp_cpuprof *p = ctx;
	const struct xp_cpu_row *a = &p->rows[*(const size_t *)pa], *b = &p->rows[*(const size_t *)pb];

	return (a->line > b->line) - (a->line < b->line);
}

/* Function fi, then its lines in line order. */
static void print_func(struct rep *R, const struct xp_cpuprof *p, size_t fi, size_t *lines,
		       size_t nlines)
{
	const struct xp_cpu_row *f = &p->rows[fi];
	char what[2200];
	size_t n = 0;

	for (size_t i = 0; i < nlines; i++)
		if (p->rows[lines[i]].func == fi)
			lines[n++] = lines[i];      /* this function's, first: sorted apart */
	if (R->o->format == XP_FMT_TEXT) {
		if (f->kind == XP_CPU_PYTHON)
			snprintf(what, sizeof(what), "%s  (%s)", f->name, f->file);
		else
			xp_cpu_row_name(f, R->o->full_names ? 0 : XP_CPU_NAME_SHORT, what, sizeof(what));
		text_row(R, p, f->self, f->total, what);
	} else if (R->o->format == XP_FMT_CSV) {
		csv_row(R, "function", f);
	} else {
		jsonw_obj_begin(&R->json);
		json_row(R, f);
		jsonw_key(&R->json, "lines");
		jsonw_arr_begin(&R->json);
	}
	for (size_t i = 0; i < n; i++) {
		const struct xp_cpu_row *l = &p->rows[lines[i]];

		if (R->o->format == XP_FMT_TEXT) {
			snprintf(what, sizeof(what), l->line >= 0 ? "    %s:%d" : "    %s:?", l->file,
				 l->line);
			text_row(R, p, l->self, l->total, what);
		} else if (R->o->format == XP_FMT_CSV) {
			csv_row(R, "line", l);
		} else {
			jsonw_obj_begin(&R->json);
			json_row(R, l);
			jsonw_obj_end(&R->json);
		}
	}
	if (R->o->format == XP_FMT_JSON) {
		jsonw_arr_end(&R->json);
		jsonw_obj_end(&R->json);
	}
}

static int print_all(struct rep *R, const struct xp_cpuprof *p, size_t *rows)
{
	const struct xp_report_opts *o = R->o;
	size_t *fo = NULL, *lo = NULL, *scratch = NULL, nf, nl, shown;
	char head[512];
	int rc;

	if ((rc = xp_cpuprof_order(p, 0, &fo, &nf)) < 0 || (rc = xp_cpuprof_order(p, 1, &lo, &nl)) < 0 ||
	    !(scratch = malloc((nl + 1) * sizeof(*scratch)))) {
		rc = -ENOMEM;
		goto out;
	}
	qsort_r(lo, nl, sizeof(*lo), cmp_line, (void *)p);
	shown = o->top && o->top < nf ? o->top : nf;
	if (o->format == XP_FMT_TEXT) {
		snprintf(head, sizeof(head), "** %s:", xp_source_cpu_title);
		xp_rep_put_row(R, head);
		xp_rep_put_row(R, "");
		xp_rep_put_row(R, " Self (%)  Self (samples)  Total (%)  Total (samples)  Source");
		xp_rep_put_row(R, " --------  --------------  ---------  ---------------  ------");
	} else if (o->format == XP_FMT_CSV) {
		fputs("\"Level\",\"File\",\"Function\",\"Line\",\"Self (samples)\",\"Total (samples)\"\n",
		      R->out);
	} else {
		jsonw_key(&R->json, "total_samples");
		jsonw_uint(&R->json, p->samples);
		jsonw_key(&R->json, "cpu_source");
		jsonw_arr_begin(&R->json);
	}
	for (size_t i = 0; i < shown; i++) {
		memcpy(scratch, lo, nl * sizeof(*lo));
		print_func(R, p, fo[i], scratch, nl);
	}
	if (o->format == XP_FMT_JSON)
		jsonw_arr_end(&R->json);
	else if (o->format == XP_FMT_TEXT && shown < nf)
		fprintf(R->out, " (%zu more functions; --top 0 shows all)\n", nf - shown);
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

/* diff.c - two runs side by side; see diff.h.
 * Each side is aggregated in SQL (or by xp_folded_collect for stacks) into
 * one xp_wtab keyed by text, base as side 0 and new as side 1, so memory
 * grows with distinct kernels, stacks and APIs, never with rows. The new
 * side's totals are multiplied by the normalisation factor; instance
 * counts stay as recorded. */
#include "export/diff/diff.h"
#include "export/report/report.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "db/archive.h"
#include "export/diff/diffname.h"
#include "export/render/jsonw.h"
#include "db/launch.h"
#include "export/report/report_priv.h"
#include "export/render/svg.h"
#include "export/render/wtab.h"
#include "src/textesc.h"

/* GPU work by item: kernels by demangled name, copies by kind, sets. */
static const char gpu_items_sql[] =
	"SELECT s.value, sum(k.end - k.start), count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k"
	" JOIN StringIds s ON s.id = k.demangledName GROUP BY k.demangledName"
	" UNION ALL SELECT " XP_MEMCPY_LABEL("copyKind") ", sum(end - start), count(*)"
	" FROM CUPTI_ACTIVITY_KIND_MEMCPY GROUP BY copyKind"
	" UNION ALL SELECT '[memset]', sum(end - start), count(*) FROM CUPTI_ACTIVITY_KIND_MEMSET"
	" HAVING count(*) > 0";

static const char api_items_sql[] =
	"SELECT s.value, sum(r.end - r.start), count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME r"
	" JOIN StringIds s ON s.id = r.nameId GROUP BY r.nameId";

struct ctx {
	const struct xp_diff_side *side[2];
	const struct xp_diff_opts *o;
	FILE *out;
	char *err;
	size_t errlen;
	double scale;               /* applied to the new side's totals */
	struct xp_archive info[2];
	struct jsonw json;          /* XP_DIFF_JSON */
	char warn[4][320];          /* why the runs may not compare */
	int warns;
	int no_sum;                 /* the table's rows overlap (totals): no (total) row */
};

static int fail(struct ctx *C, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int fail(struct ctx *C, int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(C->err, C->errlen, fmt, ap);
	va_end(ap);
	return code;
}

static int db_fail(struct ctx *C, int s)
{
	return fail(C, -EIO, "%s: %s", C->side[s]->name, sqlite3_errmsg(C->side[s]->db));
}

static int items(struct ctx *C, int s, const char *sql, struct xp_wtab *t)
{
	sqlite3_stmt *st;
	int rc;

	if (sqlite3_prepare_v2(C->side[s]->db, sql, -1, &st, NULL) != SQLITE_OK)
		return db_fail(C, s);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *k = (const char *)sqlite3_column_text(st, 0);
		int64_t w = sqlite3_column_int64(st, 1), n = sqlite3_column_int64(st, 2);

		if (!k)
			k = "?";
		if ((rc = xp_wtab_add(t, s, k, strlen(k), w > 0 ? (uint64_t)w : 0,
				      n > 0 ? (uint64_t)n : 0))) {
			sqlite3_finalize(st);
			return fail(C, rc, "%s", strerror(-rc));
		}
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : db_fail(C, s);
}

struct graph_add {
	struct xp_wtab *t;
	int side;
};

static int graph_add(void *ctx, const char *key, int64_t ns, uint64_t replays)
{
	struct graph_add *g = ctx;

	return xp_wtab_add(g->t, g->side, key, strlen(key), ns > 0 ? (uint64_t)ns : 0, replays);
}

/* CUDA graphs matched by where they were captured, not by id (ids follow the
 * order of creation, which another run need not keep). */
static int graphs(struct ctx *C, int s, struct xp_wtab *t)
{
	struct graph_add g = { t, s };
	int rc = xp_graph_sites(C->side[s]->db, graph_add, &g);

	if (rc == -EIO)
		return db_fail(C, s);
	return rc ? fail(C, rc, "%s: %s", C->side[s]->name, strerror(-rc)) : 0;
}

static int folded(struct ctx *C, int s, const struct xp_folded_opts *fo, struct xp_wtab *t)
{
	int rc = xp_folded_collect(C->side[s]->db, fo, t, s);

	if (rc == -EIO)
		return db_fail(C, s);
	return rc ? fail(C, rc, "%s: %s", C->side[s]->name, strerror(-rc)) : 0;
}

/* --normalize kernel=NAME: the factor that makes its instances equal. */
static int kernel_scale(struct ctx *C, const struct xp_wtab *gpu)
{
	struct xp_wrow *rows, *hit = NULL;
	size_t n, hits = 0;
	int rc = xp_wtab_rows(gpu, &rows, &n);

	if (rc)
		return fail(C, rc, "%s", strerror(-rc));
	for (size_t i = 0; i < n && !(hit && !strcmp(hit->key, C->o->norm_kernel)); i++) {
		if (!strcmp(rows[i].key, C->o->norm_kernel)) {
			hit = &rows[i];
			hits = 1;
		} else if (strstr(rows[i].key, C->o->norm_kernel)) {
			hits += !hit || strcmp(hit->key, rows[i].key);
			hit = hits == 1 ? &rows[i] : hit;
		}
	}
	if (!hit)
		rc = fail(C, -ENOENT, "--normalize: no kernel named '%s' in either run",
			  C->o->norm_kernel);
	else if (hits > 1)
		rc = fail(C, -EINVAL, "--normalize: '%s' matches %zu kernels; give the whole name",
			  C->o->norm_kernel, hits);
	else if (!hit->n[0] || !hit->n[1])
		rc = fail(C, -ENOENT, "--normalize: kernel '%s' did not run in %s", hit->key,
			  C->side[hit->n[0] ? 1 : 0]->name);
	else
		C->scale = (double)hit->n[0] / (double)hit->n[1];
	free(rows);
	return rc;
}

static void when(int64_t realtime_ns, char *buf, size_t len)
{
	time_t t = (time_t)(realtime_ns / 1000000000);
	struct tm tm;

	if (realtime_ns <= 0 || !gmtime_r(&t, &tm) || !strftime(buf, len, "%Y-%m-%d %H:%M:%S UTC", &tm))
		snprintf(buf, len, "date unknown");
}

static void warn(struct ctx *C, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void warn(struct ctx *C, const char *fmt, ...)
{
	va_list ap;

	if (C->warns >= (int)(sizeof(C->warn) / sizeof(C->warn[0])))
		return;
	va_start(ap, fmt);
	vsnprintf(C->warn[C->warns++], sizeof(C->warn[0]), fmt, ap);
	va_end(ap);
}

/* Why the runs may not compare, and how they were scaled. */
static void collect_warnings(struct ctx *C)
{
	const struct xp_archive *a = &C->info[0], *b = &C->info[1];

	if (strcmp(a->gpu, b->gpu))
		warn(C, "WARNING: GPU models differ (%s vs %s): kernel times are not comparable",
		     a->gpu[0] ? a->gpu : "none", b->gpu[0] ? b->gpu : "none");
	if (strcmp(a->driver, b->driver))
		warn(C, "WARNING: CUDA drivers differ (%s vs %s)", a->driver[0] ? a->driver : "?",
		     b->driver[0] ? b->driver : "?");
	if (a->sample_hz != b->sample_hz)
		warn(C, "WARNING: sampling frequencies differ (%" PRId64 " vs %" PRId64 " Hz): CPU"
		     " sample counts are not comparable", a->sample_hz, b->sample_hz);
	if (C->o->normalize == XP_NORM_DURATION)
		warn(C, "normalized: new totals x %.4f (base duration / new duration)", C->scale);
	else if (C->o->normalize == XP_NORM_KERNEL)
		warn(C, "normalized: new totals x %.4f (instances of %s, base / new)", C->scale,
		     C->o->norm_kernel);
}

/* One line of text output, cut to width columns with an ellipsis (0:
 * whole): a row must not wrap into the next in a terminal. */
static void put_line_in(struct ctx *C, const char *line, unsigned width)
{
	xp_rep_put_line(C->out, line, width);
}

static void put_line(struct ctx *C, const char *line)
{
	put_line_in(C, line, C->o->width);
}

/* A run's facts, "a, b, c", wrapped after a comma at o->width columns, the
 * following lines indented as the first. */
static void put_facts(struct ctx *C, const char *facts)
{
	const char *p = xp_esc(facts);
	unsigned room = C->o->width, indent = 0;
	int cut;

	while (room > 12 && (xp_rep_fit_bytes(p, room, &cut), cut)) {
		size_t fit = xp_rep_fit_bytes(p, room, &cut), at = 0;

		for (size_t i = 6; i + 1 < fit; i++)
			if (p[i] == ',' && p[i + 1] == ' ')
				at = i + 1;
		if (!at)
			break;
		fprintf(C->out, "%*s%.*s\n", (int)indent, "", (int)at, p);
		p += at;        /* the rest starts with the space after the comma */
		indent = 5;
		room = C->o->width - indent;
	}
	fprintf(C->out, "%*s", (int)indent, "");
	put_line_in(C, p, indent ? room : C->o->width);
}

/* The runs, then why they may not compare: on the output of a text diff,
 * else on o->warnings (a CSV, folded, SVG or JSON file stays clean). */
static void header(struct ctx *C)
{
	const char *pre = C->o->format == XP_DIFF_TEXT ? "" : "xpcorr: diff: ";
	FILE *out = C->o->format == XP_DIFF_TEXT ? C->out : C->o->warnings;

	collect_warnings(C);
	if (!out)
		return;
	for (int s = 0; s < 2 && out == C->out; s++) {
		const struct xp_archive *i = &C->info[s];
		char date[64], line[2048];

		when(i->start_realtime_ns, date, sizeof(date));
		snprintf(line, sizeof(line), "%-5s %s: %s", s ? "new" : "base", C->side[s]->name,
			 i->command[0] ? i->command : "(command unknown)");
		put_line(C, line);
		snprintf(line, sizeof(line), "      %s, %.3f s, GPU time %" PRId64 " ns, host %s,"
			 " GPU %s, CUDA driver %s, %" PRId64 " Hz sampling, xpcap %s%s%s", date,
			 (double)i->duration_ns / 1e9, i->gpu_ns, i->host[0] ? i->host : "?",
			 i->gpu[0] ? i->gpu : "none", i->driver[0] ? i->driver : "?", i->sample_hz,
			 i->xpcap_version[0] ? i->xpcap_version : "?", i->git[0] ? ", git " : "", i->git);
		put_facts(C, line);
	}
	for (int w = 0; w < C->warns; w++)
		if (out == C->out)
			put_facts(C, C->warn[w]);
		else
			fprintf(out, "%s%s\n", pre, xp_esc(C->warn[w]));
	if (out == C->out)
		fputc('\n', out);
}

struct drow {
	const char *key;
	double a, b, d;             /* base, new (scaled), new - base */
	uint64_t an, bn;
};

static int cmp_drow(const void *pa, const void *pb)
{
	const struct drow *x = pa, *y = pb;
	double dx = fabs(x->d), dy = fabs(y->d);

	if (dx != dy)
		return dx < dy ? 1 : -1;
	return strcmp(x->key, y->key);
}

static void csv_str(FILE *out, const char *s)
{
	fputc('"', out);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', out);
		fputc(*s, out);
	}
	fputc('"', out);
}

/* One row as JSON: the change and its name (a stack also whole, folded). */
static void json_row(struct ctx *C, const struct drow *d, const char *name, int stack)
{
	struct jsonw *w = &C->json;

	jsonw_newline(w);
	jsonw_obj_begin(w);
	jsonw_key(w, "name"); jsonw_str(w, name);
	if (stack) {
		jsonw_key(w, "folded"); jsonw_str(w, d->key);
	}
	jsonw_key(w, "base_ns"); jsonw_fixed(w, d->a, 0);
	jsonw_key(w, "new_ns"); jsonw_fixed(w, d->b, 0);
	jsonw_key(w, "diff_ns"); jsonw_fixed(w, d->d, 0);
	/* "new" and "gone" have no percentage */
	jsonw_key(w, "diff_pct");
	if (d->a == 0 || d->b == 0)
		jsonw_null(w);
	else
		jsonw_fixed(w, 100.0 * d->d / d->a, 1);
	jsonw_key(w, "change");
	jsonw_str(w, d->a == 0 ? "new" : d->b == 0 ? "gone" : d->d > 0 ? "slower" :
		  d->d < 0 ? "faster" : "same");
	jsonw_key(w, "base_instances"); jsonw_uint(w, d->an);
	jsonw_key(w, "new_instances"); jsonw_uint(w, d->bn);
	jsonw_obj_end(w);
}

static void row_out(struct ctx *C, const struct drow *d, const char *section, int stacks)
{
	char name[1024], pct[32], line[1400];

	if (stacks)
		xp_diff_stack_name(d->key, C->o->frames, C->o->format == XP_DIFF_TEXT, name,
				   sizeof(name));
	else
		snprintf(name, sizeof(name), "%s", d->key);
	if (C->o->format == XP_DIFF_JSON) {
		json_row(C, d, name, stacks);
		return;
	}
	if (d->a == 0)
		snprintf(pct, sizeof(pct), "new");
	else if (d->b == 0)
		snprintf(pct, sizeof(pct), "gone");
	else
		snprintf(pct, sizeof(pct), "%+.1f", 100.0 * d->d / d->a);
	if (C->o->format == XP_DIFF_TEXT) {
		int n = snprintf(line, sizeof(line), " %15.0f  %15.0f  %+15.0f  %8s  %9" PRIu64
				 "  %9" PRIu64, d->a, d->b, d->d, pct, d->an, d->bn), cut = 0;

		/* a name too long for the rest of the row goes on a line of its own
		 * under it, as the report's kernels do */
		if (C->o->width && (xp_rep_fit_bytes(name, C->o->width > (unsigned)n + 2 ?
			C->o->width - (unsigned)n - 2 : 0, &cut), cut)) {
			put_line(C, line);
			snprintf(line, sizeof(line), "    %s", name);
		} else {
			snprintf(line + n, sizeof(line) - (size_t)n, "  %s", name);
		}
		put_line(C, line);
		return;
	}
	fprintf(C->out, "%s,%.0f,%.0f,%.0f,%s,%" PRIu64 ",%" PRIu64 ",", section, d->a, d->b, d->d,
		pct, d->an, d->bn);
	csv_str(C->out, name);
	fputc('\n', C->out);
}

/* Text columns' unit: ns, or samples in the CPU tables. */
static const char *unit(const struct ctx *C)
{
	return C->o->weight == XP_WEIGHT_CPU ? "smp" : "ns";
}

static void table_begin(struct ctx *C, const char *title, const char *section)
{
	char line[256], a[24], b[24], d[24];

	if (C->o->format == XP_DIFF_JSON) {
		jsonw_newline(&C->json);
		jsonw_obj_begin(&C->json);
		jsonw_key(&C->json, "section"); jsonw_str(&C->json, section);
		jsonw_key(&C->json, "title"); jsonw_str(&C->json, title);
		if (C->o->weight == XP_WEIGHT_CPU) {     /* the *_ns keys count samples */
			jsonw_key(&C->json, "unit"); jsonw_str(&C->json, "samples");
		}
		jsonw_key(&C->json, "rows"); jsonw_arr_begin(&C->json);
	} else if (C->o->format == XP_DIFF_TEXT) {
		snprintf(line, sizeof(line), "** %s:", title);
		put_line(C, line);
		fputc('\n', C->out);
		snprintf(a, sizeof(a), "Base (%s)", unit(C));
		snprintf(b, sizeof(b), "New (%s)", unit(C));
		snprintf(d, sizeof(d), "Diff (%s)", unit(C));
		snprintf(line, sizeof(line), " %15s  %15s  %15s  %8s  %9s  %9s  %s", a, b, d,
			 "Diff (%)", "Base Inst", "New Inst", "Name");
		put_line(C, line);
		snprintf(line, sizeof(line), " %15s  %15s  %15s  %8s  %9s  %9s  %s", "---------",
			 "--------", "---------", "--------", "---------", "--------", "----");
		put_line(C, line);
	}
}

static void table_end(struct ctx *C, size_t more, double ta, double tb)
{
	char line[256];

	if (C->o->format == XP_DIFF_JSON) {
		jsonw_arr_end(&C->json);
		jsonw_key(&C->json, "more_rows"); jsonw_uint(&C->json, more);
		jsonw_key(&C->json, "base_ns"); jsonw_fixed(&C->json, ta, 0);
		jsonw_key(&C->json, "new_ns"); jsonw_fixed(&C->json, tb, 0);
		jsonw_key(&C->json, "diff_ns"); jsonw_fixed(&C->json, tb - ta, 0);
		jsonw_obj_end(&C->json);
	} else if (C->o->format == XP_DIFF_TEXT) {
		if (more)
			fprintf(C->out, " (%zu more rows; --top 0 shows all)\n", more);
		if (C->no_sum) {
			fputc('\n', C->out);
			return;
		}
		snprintf(line, sizeof(line), " %15.0f  %15.0f  %+15.0f  %8s  %9s  %9s  %s", ta, tb,
			 tb - ta, "", "", "", "(total)");
		put_line(C, line);
		fputc('\n', C->out);
	}
}

static int table(struct ctx *C, const char *title, const char *section, const struct xp_wtab *t,
		 int stacks)
{
	struct xp_wrow *rows;
	struct drow *d;
	size_t n, shown;
	double ta = 0, tb = 0;
	int rc = xp_wtab_rows(t, &rows, &n);

	if (rc)
		return fail(C, rc, "%s", strerror(-rc));
	d = calloc(n ? n : 1, sizeof(*d));
	if (!d) {
		free(rows);
		return fail(C, -ENOMEM, "%s", strerror(ENOMEM));
	}
	for (size_t i = 0; i < n; i++) {
		d[i] = (struct drow){ .key = rows[i].key, .a = (double)rows[i].w[0],
				      .b = (double)rows[i].w[1] * C->scale, .an = rows[i].n[0],
				      .bn = rows[i].n[1] };
		d[i].d = d[i].b - d[i].a;
		ta += d[i].a;
		tb += d[i].b;
	}
	if (n)
		qsort(d, n, sizeof(*d), cmp_drow);
	shown = C->o->top && C->o->top < n ? C->o->top : n;
	table_begin(C, title, section);
	for (size_t i = 0; i < shown; i++)
		row_out(C, &d[i], section, stacks);
	table_end(C, n - shown, ta, tb);
	free(d);
	free(rows);
	return 0;
}

static int print_folded(struct ctx *C, const struct xp_wtab *t, FILE *out)
{
	struct xp_wrow *rows;
	size_t n;
	int rc = xp_wtab_rows(t, &rows, &n);

	if (rc)
		return fail(C, rc, "%s", strerror(-rc));
	for (size_t i = 0; i < n; i++) {
		uint64_t b = (uint64_t)llround((double)rows[i].w[1] * C->scale);

		if ((rows[i].w[0] || b) &&
		    fprintf(out, "%s %" PRIu64 " %" PRIu64 "\n", xp_esc(rows[i].key), rows[i].w[0], b) < 0) {
			rc = fail(C, -EIO, "write: %s", strerror(errno));
			break;
		}
	}
	free(rows);
	return rc;
}

static int stacks_out(struct ctx *C)
{
	/* samples' stacks matched by their frames, not by the program's name
	 * (`prog` against its copy `prog2`); GPU and API stacks as before */
	struct xp_folded_opts fo = { .root = C->o->weight == XP_WEIGHT_CPU ||
				     C->o->weight == XP_WEIGHT_OFFCPU ? XP_ROOT_NONE : XP_ROOT_COMM,
				     .pid = -1, .tid = -1,
				     .weight = C->o->weight, .exact_only = C->o->exact_only };
	struct xp_svg_opts so = { .title = C->o->title, .unit = xp_weight_unit(C->o->weight),
				  .differential = 1 };
	struct xp_wtab *t = xp_wtab_new();
	char *mem = NULL;
	size_t memlen = 0;
	uint64_t bad;
	FILE *m = NULL;
	int rc;

	if (!t)
		return fail(C, -ENOMEM, "%s", strerror(ENOMEM));
	if ((rc = folded(C, 0, &fo, t)) || (rc = folded(C, 1, &fo, t)))
		goto out;
	if (C->o->format == XP_DIFF_FOLDED) {
		rc = print_folded(C, t, C->out);
		goto out;
	}
	/* collapse, then render the differential folded text, as export does */
	if (!(m = open_memstream(&mem, &memlen))) {
		rc = fail(C, -ENOMEM, "%s", strerror(ENOMEM));
		goto out;
	}
	rc = print_folded(C, t, m);
	fclose(m);
	m = NULL;
	if (rc)
		goto out;
	if (!so.title)
		so.title = C->o->weight == XP_WEIGHT_GPU ? "GPU time by launching CPU stack: new vs base" :
			   "Differential flame graph: new vs base";
	if (!(m = fmemopen(mem, memlen ? memlen : 1, "r"))) {
		rc = fail(C, -ENOMEM, "%s", strerror(ENOMEM));
		goto out;
	}
	if (!memlen)
		fgetc(m);   /* an empty diff: nothing to read */
	rc = xp_svg_render(m, &so, C->out, &bad);
	if (rc)
		rc = fail(C, rc, "svg: %s", strerror(-rc));
out:
	if (m)
		fclose(m);
	free(mem);
	xp_wtab_free(t);
	return rc;
}

static void json_begin(struct ctx *C);
static int finish(struct ctx *C);

/* The tables of CPU samples: by function (self, total), by Python line
 * when the stacks have them, and by stack. */
static int cpu_tables(struct ctx *C)
{
	struct xp_folded_opts fo = { .root = XP_ROOT_NONE, .pid = -1, .tid = -1,
				     .weight = XP_WEIGHT_CPU };
	struct xp_wtab *self = xp_wtab_new(), *total = xp_wtab_new(), *stk = xp_wtab_new();
	struct xp_wtab *lines = xp_wtab_new();
	int rc = 0;

	if (!self || !total || !stk || !lines) {
		rc = fail(C, -ENOMEM, "%s", strerror(ENOMEM));
		goto out;
	}
	for (int s = 0; s < 2 && !rc; s++) {
		rc = xp_diff_cpu_collect(C->side[s]->db, s, self, total, lines);
		if (rc == -EIO)
			rc = db_fail(C, s);
		else if (rc)
			rc = fail(C, rc, "%s: %s", C->side[s]->name, strerror(-rc));
		else
			rc = folded(C, s, &fo, stk);
	}
	if (rc)
		goto out;
	if (C->o->format == XP_DIFF_CSV)
		fprintf(C->out, "section,base_samples,new_samples,diff_samples,diff_pct,"
			"base_instances,new_instances,name\n");
	if (C->o->format == XP_DIFF_JSON)
		json_begin(C);
	if ((rc = table(C, "CPU samples by function (self)", "cpu_self", self, 0)))
		goto out;
	C->no_sum = 1;
	rc = table(C, "CPU samples by function (total: with what it calls)", "cpu_total", total, 0);
	C->no_sum = 0;
	if (rc || (xp_wtab_count(lines) &&
		   (rc = table(C, "CPU samples by Python line (self)", "cpu_line", lines, 0))) ||
	    (rc = table(C, "CPU samples by stack", "cpu_stack", stk, 1)))
		goto out;
	rc = finish(C);
out:
	xp_wtab_free(lines);
	xp_wtab_free(self);
	xp_wtab_free(total);
	xp_wtab_free(stk);
	return rc;
}

/* {"runs": [...], "warnings": [...], "tables": [ ... left open for table() */
static void json_begin(struct ctx *C)
{
	struct jsonw *w = &C->json;

	jsonw_init(w, C->out);
	jsonw_obj_begin(w);
	jsonw_key(w, "report"); jsonw_str(w, "diff");
	jsonw_key(w, "runs"); jsonw_arr_begin(w);
	for (int s = 0; s < 2; s++) {
		const struct xp_archive *i = &C->info[s];

		jsonw_newline(w);
		jsonw_obj_begin(w);
		jsonw_key(w, "role"); jsonw_str(w, s ? "new" : "base");
		jsonw_key(w, "run"); jsonw_str(w, C->side[s]->name);
		jsonw_key(w, "command"); jsonw_str(w, i->command);
		jsonw_key(w, "start_realtime_ns"); jsonw_int(w, i->start_realtime_ns);
		jsonw_key(w, "duration_ns"); jsonw_int(w, i->duration_ns);
		jsonw_key(w, "gpu_ns"); jsonw_int(w, i->gpu_ns);
		jsonw_key(w, "host"); jsonw_str(w, i->host);
		jsonw_key(w, "gpu"); jsonw_str(w, i->gpu);
		jsonw_key(w, "driver"); jsonw_str(w, i->driver);
		jsonw_key(w, "sample_hz"); jsonw_int(w, i->sample_hz);
		jsonw_key(w, "xpcap_version"); jsonw_str(w, i->xpcap_version);
		jsonw_key(w, "git"); jsonw_str(w, i->git);
		jsonw_obj_end(w);
	}
	jsonw_arr_end(w);
	jsonw_key(w, "scale"); jsonw_fixed(w, C->scale, 6);
	jsonw_key(w, "warnings"); jsonw_arr_begin(w);
	for (int k = 0; k < C->warns; k++)
		jsonw_str(w, C->warn[k]);
	jsonw_arr_end(w);
	jsonw_key(w, "tables"); jsonw_arr_begin(w);
}

/* The json document's end; a failed write. 0, or the error. */
static int finish(struct ctx *C)
{
	int rc = 0;

	if (C->o->format == XP_DIFF_JSON) {
		jsonw_arr_end(&C->json);
		jsonw_obj_end(&C->json);
		fputc('\n', C->out);
		if (jsonw_error(&C->json))
			rc = fail(C, jsonw_error(&C->json), "write: %s", strerror(-jsonw_error(&C->json)));
	}
	if (!rc && ferror(C->out))
		rc = fail(C, -EIO, "write: %s", strerror(errno));
	return rc;
}

int xp_diff(const struct xp_diff_side *a, const struct xp_diff_side *b,
	    const struct xp_diff_opts *o, FILE *out, char *err, size_t errlen)
{
	struct ctx C = { .side = { a, b }, .o = o, .out = out, .err = err, .errlen = errlen,
			 .scale = 1.0 };
	struct xp_folded_opts fo = { .root = XP_ROOT_NONE, .pid = -1, .tid = -1,
				     .weight = XP_WEIGHT_GPU, .exact_only = o->exact_only,
				     .no_leaf = 1 };
	struct xp_wtab *gpu = xp_wtab_new(), *stk = xp_wtab_new(), *api = xp_wtab_new();
	struct xp_wtab *grf = xp_wtab_new();
	int rc = 0;

	err[0] = '\0';
	if (!gpu || !stk || !api || !grf) {
		rc = fail(&C, -ENOMEM, "%s", strerror(ENOMEM));
		goto out;
	}
	for (int s = 0; s < 2 && !rc; s++)
		if (xp_archive_read(C.side[s]->db, &C.info[s]) || items(&C, s, gpu_items_sql, gpu))
			rc = err[0] ? -EIO : db_fail(&C, s);
	if (rc)
		goto out;
	if (o->normalize == XP_NORM_DURATION) {
		if (C.info[0].duration_ns <= 0 || C.info[1].duration_ns <= 0) {
			rc = fail(&C, -ENOENT, "--normalize duration: the duration of %s is unknown",
				  C.info[0].duration_ns <= 0 ? a->name : b->name);
			goto out;
		}
		C.scale = (double)C.info[0].duration_ns / (double)C.info[1].duration_ns;
	} else if (o->normalize == XP_NORM_KERNEL && (rc = kernel_scale(&C, gpu))) {
		goto out;
	}
	header(&C);
	if (o->format == XP_DIFF_FOLDED || o->format == XP_DIFF_SVG) {
		rc = stacks_out(&C);
		goto out;
	}
	if (o->weight == XP_WEIGHT_CPU) {
		rc = cpu_tables(&C);
		goto out;
	}
	for (int s = 0; s < 2 && !rc; s++)
		if (!(rc = items(&C, s, api_items_sql, api)) && !(rc = folded(&C, s, &fo, stk)))
			rc = graphs(&C, s, grf);
	if (rc)
		goto out;
	if (o->format == XP_DIFF_CSV)
		fprintf(out, "section,base_ns,new_ns,diff_ns,diff_pct,base_instances,new_instances,name\n");
	if (o->format == XP_DIFF_JSON)
		json_begin(&C);
	if ((rc = table(&C, "GPU time by kernel, copy and set", "kernel", gpu, 0)) ||
	    (rc = table(&C, "GPU time by launching CPU stack", "stack", stk, 1)) ||
	    (rc = table(&C, "CUDA API calls (time in the call)", "api", api, 0)) ||
	    (xp_wtab_count(grf) &&
	     (rc = table(&C, "CUDA graph replays by capture site (GPU span)", "graph", grf, 0))))
		goto out;
	rc = finish(&C);
out:
	xp_wtab_free(gpu);
	xp_wtab_free(stk);
	xp_wtab_free(api);
	xp_wtab_free(grf);
	return rc;
}

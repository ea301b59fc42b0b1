/* report_source.c - `xpcorr report --by source`: GPU time per Python
 * function and line of the launching code, as a line profiler shows CPU
 * time. Self is the GPU time a line launched itself (it is the innermost
 * Python line of the launch stack); total adds what the functions it calls
 * launched (each line counted once per stack, so recursion does not count
 * twice). Under each line, the kernels its self time is made of. Backward
 * kernels that ingest put under the forward launch that made their node
 * (ingest/backward.h) count on the forward lines, and a column says how much
 * of each row's time is backward (shown when the run has any).
 *
 *   rows:   (stack, kernel name) -> GPU ns, records      one SQL pass
 *   stacks: Python frames of each stack, innermost first  one walk per stack
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "db/db_schema.h"
#include "export/names/elidename.h"
#include "db/launch.h"
#include "export/names/launcher.h"
#include "db/pypath.h"
#include "export/report/report_priv.h"
#include "src/array.h"
#include "src/strtab.h"
#include "src/u64map.h"
#include "src/satmath.h"

struct src_kernel {
	char *name;
	int64_t ns;
	uint64_t n;
};

struct src_line {
	size_t fn;                  /* index into funcs */
	int line;                   /* -1: not known */
	int library;                /* in site-packages or the standard library */
	int64_t self, total, own;   /* own: as the innermost line of the program's own files */
	int64_t bwd;                /* of total: backward kernels of nodes made here */
	uint64_t self_n, total_n;
	uint64_t mark;              /* the last row counted in total */
	struct src_kernel *k;
	size_t nk, capk;
};

struct src_func {
	char *file, *name;          /* the short path; the qualified name */
	int64_t self, total, bwd;
	uint64_t self_n, total_n;
	uint64_t mark;
};

struct src {
	struct rep *R;
	struct xp_pyroot root;
	struct xp_strtab *line_ids, *func_ids;     /* "module\tline\tqualname", "file\tqualname" */
	struct src_line *lines;
	struct src_func *funcs;
	size_t nlines, nfuncs, caplines, capfuncs;
	size_t *stack;              /* the current stack's lines, innermost first */
	size_t nstack, capstack;
	int backward;               /* the current stack is a backward launch's */
	int enclosing;              /* ... of a view made somewhere under its innermost line */
	int64_t all, none;          /* GPU ns in the view; of which with no Python line */
	int64_t under;              /* of all: views under an enclosing line (no self line) */
	int64_t bwd_all;            /* of all: backward on forward lines */
	uint64_t all_n, none_n, under_n;
};

static int func_of(struct src *S, const char *file, const char *name, size_t *fn)
{
	char key[1024];
	int64_t id;
	int fresh, n = snprintf(key, sizeof(key), "%s\t%s", file, name);

	if (xp_strtab_intern(S->func_ids, key, (size_t)n < sizeof(key) ? (size_t)n : sizeof(key) - 1,
			     &id, &fresh))
		return -ENOMEM;
	*fn = (size_t)id - 1;
	if (!fresh)
		return 0;
	if (xp_array__reserve((void **)&S->funcs, &S->capfuncs, S->nfuncs + 1, sizeof(*S->funcs), 64))
		return -ENOMEM;
	S->funcs[S->nfuncs] = (struct src_func){ .file = strdup(file), .name = strdup(name) };
	S->nfuncs++;
	return S->funcs[*fn].file && S->funcs[*fn].name ? 0 : -ENOMEM;
}

/* The row of a Python line frame: file, line and name from its columns
 * (db/pyframe.h); a frame without them (a code object not recorded) is a
 * line of its own, not known, named as it is stored. */
static int line_of(struct src *S, const struct xp_frame_row *fr, size_t *li)
{
	const char *module = fr->py ? fr->py->file : fr->module;
	const char *name = fr->py ? fr->py->qualname : fr->sym, *file;
	int line = fr->py ? fr->py->line : -1;
	char key[2048];
	int64_t id;
	int fresh, n = snprintf(key, sizeof(key), "%s\t%d\t%s", module ? module : "", line, name);
	size_t fn;

	if (xp_strtab_intern(S->line_ids, key, (size_t)n < sizeof(key) ? (size_t)n : sizeof(key) - 1,
			     &id, &fresh))
		return -ENOMEM;
	*li = (size_t)id - 1;
	if (!fresh)
		return 0;
	file = module && module[0] ? xp_pypath_short(&S->root, module) : "?";
	if (func_of(S, file, name, &fn) ||
	    xp_array__reserve((void **)&S->lines, &S->caplines, S->nlines + 1, sizeof(*S->lines), 64))
		return -ENOMEM;
	S->lines[S->nlines++] = (struct src_line){ .fn = fn, .line = line,
		.library = module && xp_pypath_is_library(module) };
	return 0;
}

/* The Python lines of a stack, innermost first, into S->stack. */
static int walk_stack(struct src *S, int64_t id)
{
	struct xp_frame_row fr;
	int64_t node = id;
	int rc = 0;

	S->nstack = 0;
	S->backward = 0;
	S->enclosing = 0;
	while (rc == 0 && xp_stackwalk_next(S->R->walk, &node, &fr)) {
		size_t li;

		if (xp_backward_note(fr.kind, fr.sym, NULL, 0)) {
			S->backward = 1;
			/* ingest/backward_bracket.c's note: under the line, not at it */
			S->enclosing = strstr(fr.sym, "(no launch of its own)") != NULL;
		}
		if (fr.kind != XP_FRAME_PYTHON || !fr.sym)
			continue;
		if ((rc = line_of(S, &fr, &li)) < 0 ||
		    (rc = xp_array__reserve((void **)&S->stack, &S->capstack, S->nstack + 1,
					    sizeof(*S->stack), 64)) < 0)
			break;
		S->stack[S->nstack++] = li;
	}
	xp_stackwalk_done(S->R->walk);
	return rc;
}

static int add_kernel(struct src_line *l, const char *name, int64_t ns, uint64_t n)
{
	for (size_t i = 0; i < l->nk; i++)
		if (!strcmp(l->k[i].name, name)) {
			l->k[i].ns = xp_sat_add(l->k[i].ns, ns);
			l->k[i].n += n;
			return 0;
		}
	if (xp_array__reserve((void **)&l->k, &l->capk, l->nk + 1, sizeof(*l->k), 4))
		return -ENOMEM;
	l->k[l->nk] = (struct src_kernel){ .name = strdup(name), .ns = ns, .n = n };
	return l->k[l->nk++].name ? 0 : -ENOMEM;
}

/* One (stack, name) row: self to the innermost line, total to each line and
 * function on the stack once. */
static int add_row(struct src *S, uint64_t row, const char *name, int64_t ns, uint64_t n)
{
	S->all = xp_sat_add(S->all, ns);
	S->all_n += n;
	if (!S->nstack) {
		S->none = xp_sat_add(S->none, ns);
		S->none_n += n;
		return 0;
	}
	struct src_line *in = &S->lines[S->stack[0]];
	int64_t bwd = S->backward ? ns : 0;

	S->bwd_all = xp_sat_add(S->bwd_all, bwd);
	if (S->enclosing) {         /* no line launched it itself: totals only */
		S->under = xp_sat_add(S->under, ns);
		S->under_n += n;
	} else {
		in->self = xp_sat_add(in->self, ns);
		in->self_n += n;
		S->funcs[in->fn].self = xp_sat_add(S->funcs[in->fn].self, ns);
		S->funcs[in->fn].self_n += n;
	}
	for (size_t i = 0; i < S->nstack; i++)
		if (!S->lines[S->stack[i]].library) {
			S->lines[S->stack[i]].own = xp_sat_add(S->lines[S->stack[i]].own, ns);
			break;
		}
	for (size_t i = 0; i < S->nstack; i++) {
		struct src_line *l = &S->lines[S->stack[i]];
		struct src_func *f = &S->funcs[l->fn];

		if (l->mark != row) {
			l->mark = row;
			l->total = xp_sat_add(l->total, ns);
			l->bwd = xp_sat_add(l->bwd, bwd);
			l->total_n += n;
		}
		if (f->mark != row) {
			f->mark = row;
			f->total = xp_sat_add(f->total, ns);
			f->bwd = xp_sat_add(f->bwd, bwd);
			f->total_n += n;
		}
	}
	return S->enclosing ? 0 : add_kernel(in, name, ns, n);
}

/* One (stack, name) group of GPU rows, summed in C: SQLite's GROUP BY over
 * a million rows cost more than the report's budget. */
struct src_group {
	int64_t stack, name;        /* name: a StringIds id, or -1 memcpy, -2 memset */
	int64_t ns;
	uint64_t n;
};

static int cmp_group_stack(const void *pa, const void *pb)
{
	const struct src_group *a = pa, *b = pb;

	if (a->stack != b->stack)
		return a->stack < b->stack ? -1 : 1;
	return (a->name > b->name) - (a->name < b->name);
}

/* Sums the rows of one GPU table into groups (every GPU row has its
 * attribution row, how 'none' when unattributed: scanned from there, the
 * GPU row found by its rowid). */
static int sum_table(struct src *S, const char *table, const char *name_col, struct xp_u64map *at,
		     struct src_group **g, size_t *n, size_t *cap)
{
	struct rep *R = S->R;
	sqlite3_stmt *s;
	char sql[768], f[256];
	int rc = 0, step;

	xp_rep_filter(R->o, "k.globalPid", "k.start", f, sizeof(f));
	snprintf(sql, sizeof(sql), "SELECT ifnull(a.stack_id, -1), %s, k.end - k.start"
		 " FROM xp_attribution a JOIN CUPTI_ACTIVITY_KIND_%s k ON k.rowid = a.gpu_rowid"
		 " WHERE a.gpu_table = '%s' AND %s", name_col, table, table, f);
	if (xp_rep_prepare(R, sql, &s) < 0)
		return -EIO;
	while (rc == 0 && (step = sqlite3_step(s)) == SQLITE_ROW) {
		int64_t stack = sqlite3_column_int64(s, 0), name = sqlite3_column_int64(s, 1);
		uint64_t *slot;
		int fresh;

		if ((rc = xp_u64map_upsert(at, (uint64_t)stack, (uint64_t)name, &slot, &fresh)))
			break;
		if (fresh) {
			if ((rc = xp_array__reserve((void **)g, cap, *n + 1, sizeof(**g), 256)))
				break;
			(*g)[*n] = (struct src_group){ .stack = stack, .name = name };
			*slot = (*n)++;
		}
		(*g)[*slot].ns = xp_sat_add((*g)[*slot].ns, sqlite3_column_int64(s, 2));
		(*g)[*slot].n++;
	}
	if (rc == 0 && step != SQLITE_DONE)
		rc = -EIO;
	sqlite3_finalize(s);
	return rc;
}

static int collect_rows(struct src *S)
{
	struct src_group *g = NULL;
	size_t n = 0, cap = 0;
	struct xp_u64map at;
	sqlite3_stmt *name_of = NULL;
	int64_t stack = -2;
	int rc;

	xp_u64map_init(&at);
	if ((rc = sum_table(S, "KERNEL", S->R->o->mangled ? "k.mangledName" : "k.demangledName",
			    &at, &g, &n, &cap)) ||
	    (rc = sum_table(S, "MEMCPY", "-1", &at, &g, &n, &cap)) ||
	    (rc = sum_table(S, "MEMSET", "-2", &at, &g, &n, &cap)))
		goto out;
	if (n)
		qsort(g, n, sizeof(*g), cmp_group_stack);
	if (sqlite3_prepare_v2(S->R->db, "SELECT value FROM StringIds WHERE id = ?", -1, &name_of,
			       NULL) != SQLITE_OK) {
		rc = -EIO;
		goto out;
	}
	for (size_t i = 0; i < n && rc == 0; i++) {
		const char *name = g[i].name == -1 ? "[CUDA memcpy]" : g[i].name == -2 ?
				   "[CUDA memset]" : NULL;

		if (g[i].stack != stack) {
			stack = g[i].stack;
			if (stack > 0)
				rc = walk_stack(S, stack);
			else
				S->nstack = 0;
		}
		if (!name) {
			sqlite3_reset(name_of);
			sqlite3_bind_int64(name_of, 1, g[i].name);
			if (sqlite3_step(name_of) == SQLITE_ROW)
				name = (const char *)sqlite3_column_text(name_of, 0);
		}
		if (rc == 0)
			rc = add_row(S, i + 1, name ? name : "?", g[i].ns, g[i].n);
	}
out:
	sqlite3_finalize(name_of);
	xp_u64map_free(&at);
	free(g);
	return rc;
}

/* Functions that launched work themselves first (most self time), then the
 * ones that only called them (most total time). */
static int cmp_func(const void *pa, const void *pb, void *ctx)
{
	const struct src *S = ctx;
	const struct src_func *a = &S->funcs[*(const size_t *)pa], *b = &S->funcs[*(const size_t *)pb];

	if (a->self != b->self)
		return a->self < b->self ? 1 : -1;
	if (a->total != b->total)
		return a->total < b->total ? 1 : -1;
	return strcmp(a->name, b->name);
}

static int cmp_line(const void *pa, const void *pb, void *ctx)
{
	const struct src *S = ctx;
	const struct src_line *a = &S->lines[*(const size_t *)pa], *b = &S->lines[*(const size_t *)pb];

	if (a->fn != b->fn)
		return a->fn < b->fn ? -1 : 1;
	return (a->line > b->line) - (a->line < b->line);
}

static int cmp_kernel(const void *pa, const void *pb)
{
	const struct src_kernel *a = pa, *b = pb;

	if (a->ns != b->ns)
		return a->ns < b->ns ? 1 : -1;
	return strcmp(a->name, b->name);
}

static double pct(const struct src *S, int64_t ns)
{
	return S->all ? 100.0 * (double)ns / (double)S->all : 0;
}

/* "kernel ×1250, other ×25" into buf: names short in text (elidename.h). */
static void kernel_list(const struct src *S, const struct src_line *l, char *buf, size_t len)
{
	int text_short = S->R->o->format == XP_FMT_TEXT && !S->R->o->full_names;
	size_t used = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < l->nk && used + 1 < len; i++) {
		char brief[512];
		const char *name = l->k[i].name;

		if (text_short && name[0] != '[') {
			xp_elide_name(name, brief, sizeof(brief));
			name = brief;
		}
		int n = snprintf(buf + used, len - used, "%s%s \u00d7%llu", i ? ", " : "", name,
				 (unsigned long long)l->k[i].n);

		if (n < 0 || (size_t)n >= len - used)
			break;
		used += (size_t)n;
	}
}

static int cmp_own(const void *pa, const void *pb, void *ctx)
{
	const struct src *S = ctx;
	const struct src_line *a = &S->lines[*(const size_t *)pa], *b = &S->lines[*(const size_t *)pb];

	return (a->own < b->own) - (a->own > b->own);
}

/* When libraries sit between the program and its GPU work (a model from
 * transformers), the lines of the program's own files that lead to it:
 * the innermost such line of each launch stack. Text and json only. */
static int print_own(struct src *S)
{
	const struct xp_report_opts *o = S->R->o;
	size_t *order, n = 0, shown;
	int64_t lib_self = 0;

	for (size_t i = 0; i < S->nlines; i++)
		if (S->lines[i].library)
			lib_self = xp_sat_add(lib_self, S->lines[i].self);
	if (!lib_self || o->format == XP_FMT_CSV)
		return 0;
	if (!(order = malloc(S->nlines * sizeof(*order))))
		return -ENOMEM;
	for (size_t i = 0; i < S->nlines; i++)
		if (S->lines[i].own)
			order[n++] = i;
	qsort_r(order, n, sizeof(*order), cmp_own, S);
	shown = n < 5 ? n : 5;
	if (o->format == XP_FMT_JSON) {
		jsonw_key(&S->R->json, "own_code_lines");
		jsonw_arr_begin(&S->R->json);
	} else {
		xp_rep_put_row(S->R, "Your code's lines nearest the GPU work (innermost frame outside"
			       " site-packages and the standard library):");
	}
	for (size_t i = 0; i < (o->format == XP_FMT_JSON ? n : shown); i++) {
		const struct src_line *l = &S->lines[order[i]];
		const struct src_func *f = &S->funcs[l->fn];
		char line[1024];

		if (o->format == XP_FMT_JSON) {
			struct jsonw *w = &S->R->json;

			jsonw_obj_begin(w);
			jsonw_key(w, "file"); jsonw_str(w, f->file);
			jsonw_key(w, "line"); jsonw_int(w, l->line);
			jsonw_key(w, "function"); jsonw_str(w, f->name);
			jsonw_key(w, "gpu_ns"); jsonw_int(w, l->own);
			jsonw_obj_end(w);
			continue;
		}
		snprintf(line, sizeof(line), "  %6.1f%%  %s:%d %s", pct(S, l->own), f->file, l->line,
			 f->name);
		xp_rep_put_row(S->R, line);
	}
	if (o->format == XP_FMT_JSON)
		jsonw_arr_end(&S->R->json);
	else
		xp_rep_put_row(S->R, "");
	free(order);
	return 0;
}

static void text_head(struct src *S)
{
	struct rep *R = S->R;
	char head[256];

	snprintf(head, sizeof(head), "** %s:", xp_rep_title(R->o->by));
	xp_rep_put_row(R, head);
	xp_rep_put_row(R, "");
}

static void text_columns(struct src *S)
{
	struct rep *R = S->R;

	if (S->bwd_all) {
		xp_rep_put_row(R, " Self (%)     Self (ns)  Total (%)    Total (ns)  Backward (%)"
			       "  Instances  Source");
		xp_rep_put_row(R, " --------  ------------  ---------  ------------  ------------"
			       "  ---------  ------");
		return;
	}
	xp_rep_put_row(R, " Self (%)     Self (ns)  Total (%)    Total (ns)  Instances  Source");
	xp_rep_put_row(R, " --------  ------------  ---------  ------------  ---------  ------");
}

/* Backward (%): the share of the row's total that backward kernels are. */
static void text_row(struct src *S, int64_t self, int64_t total, int64_t bwd, uint64_t n,
		     const char *what)
{
	char line[2048], share[24] = "";

	if (S->bwd_all)
		snprintf(share, sizeof(share), "  %12.1f", total ? 100.0 * (double)bwd /
			 (double)total : 0);
	snprintf(line, sizeof(line), " %8.1f  %12lld  %9.1f  %12lld%s  %9llu  %s", pct(S, self),
		 (long long)self, pct(S, total), (long long)total, share, (unsigned long long)n,
		 what);
	xp_rep_put_row(S->R, line);
}

static void csv_row(struct src *S, const char *level, const struct src_func *f, int line,
		    int64_t self, int64_t total, int64_t bwd, uint64_t n, const char *kernels)
{
	FILE *out = S->R->out;

	fprintf(out, "\"%s\",", level);
	xp_rep_csv_str(out, f ? f->file : "");
	fputc(',', out);
	xp_rep_csv_str(out, f ? f->name : "");
	if (line >= 0)
		fprintf(out, ",%d", line);
	else
		fputs(",", out);
	fprintf(out, ",%lld,%lld,", (long long)self, (long long)total);
	if (S->bwd_all)
		fprintf(out, "%lld,", (long long)bwd);
	fprintf(out, "%llu,", (unsigned long long)n);
	xp_rep_csv_str(out, kernels);
	fputc('\n', out);
}

static void json_line(struct src *S, const struct src_line *l)
{
	struct jsonw *w = &S->R->json;

	jsonw_obj_begin(w);
	jsonw_key(w, "line");
	if (l->line >= 0)
		jsonw_int(w, l->line);
	else
		jsonw_null(w);
	jsonw_key(w, "self_ns"); jsonw_int(w, l->self);
	jsonw_key(w, "total_ns"); jsonw_int(w, l->total);
	if (S->bwd_all) {
		jsonw_key(w, "backward_ns"); jsonw_int(w, l->bwd);
	}
	jsonw_key(w, "instances"); jsonw_uint(w, l->total_n);
	jsonw_key(w, "kernels");
	jsonw_arr_begin(w);
	for (size_t i = 0; i < l->nk; i++) {
		jsonw_obj_begin(w);
		jsonw_key(w, "name"); jsonw_str(w, l->k[i].name);
		jsonw_key(w, "self_ns"); jsonw_int(w, l->k[i].ns);
		jsonw_key(w, "instances"); jsonw_uint(w, l->k[i].n);
		jsonw_obj_end(w);
	}
	jsonw_arr_end(w);
	jsonw_obj_end(w);
}

/* One function and its lines (those that launched or called), in line order. */
static void print_func(struct src *S, size_t fi, const size_t *order, size_t nlines)
{
	const struct xp_report_opts *o = S->R->o;
	const struct src_func *f = &S->funcs[fi];
	char what[1024], kernels[1024];

	if (o->format == XP_FMT_TEXT) {
		snprintf(what, sizeof(what), "%s  (%s)", f->name, f->file);
		text_row(S, f->self, f->total, f->bwd, f->total_n, what);
	} else if (o->format == XP_FMT_CSV) {
		csv_row(S, "function", f, -1, f->self, f->total, f->bwd, f->total_n, "");
	} else {
		struct jsonw *w = &S->R->json;

		jsonw_obj_begin(w);
		jsonw_key(w, "file"); jsonw_str(w, f->file);
		jsonw_key(w, "function"); jsonw_str(w, f->name);
		jsonw_key(w, "self_ns"); jsonw_int(w, f->self);
		jsonw_key(w, "total_ns"); jsonw_int(w, f->total);
		if (S->bwd_all) {
			jsonw_key(w, "backward_ns"); jsonw_int(w, f->bwd);
		}
		jsonw_key(w, "instances"); jsonw_uint(w, f->total_n);
		jsonw_key(w, "lines");
		jsonw_arr_begin(w);
	}
	for (size_t i = 0; i < nlines; i++) {
		const struct src_line *l = &S->lines[order[i]];

		if (l->fn != fi || !l->total)
			continue;
		kernel_list(S, l, kernels, sizeof(kernels));
		if (o->format == XP_FMT_TEXT) {
			snprintf(what, sizeof(what), "    %s:%d  %s", f->file, l->line,
				 l->nk ? kernels : "(calls)");
			text_row(S, l->self, l->total, l->bwd, l->total_n, what);
		} else if (o->format == XP_FMT_CSV) {
			csv_row(S, "line", f, l->line, l->self, l->total, l->bwd, l->total_n, kernels);
		} else {
			json_line(S, l);
		}
	}
	if (o->format == XP_FMT_JSON) {
		jsonw_arr_end(&S->R->json);
		jsonw_obj_end(&S->R->json);
	}
}

/* A row of GPU time no line launched itself: none on the stack (kind
 * "none", key no_python_line), or a view's backward made somewhere under
 * the lines that hold it in their totals ("under", under_enclosing_line). */
static void print_lineless(struct src *S, const char *kind, const char *key, const char *what,
			   int64_t ns, int64_t bwd, uint64_t n)
{
	const struct xp_report_opts *o = S->R->o;

	if (!n)
		return;
	if (o->format == XP_FMT_TEXT) {
		text_row(S, ns, ns, bwd, n, what);
	} else if (o->format == XP_FMT_CSV) {
		csv_row(S, kind, NULL, -1, ns, ns, bwd, n, "");
	} else {
		struct jsonw *w = &S->R->json;

		jsonw_key(w, key);
		jsonw_obj_begin(w);
		jsonw_key(w, "self_ns"); jsonw_int(w, ns);
		jsonw_key(w, "instances"); jsonw_uint(w, n);
		jsonw_obj_end(w);
	}
}

static void print_none(struct src *S)
{
	print_lineless(S, "none", "no_python_line", "(no Python line on the launch stack)",
		       S->none, 0, S->none_n);
	print_lineless(S, "under", "under_enclosing_line", "(backward of views made under the"
		       " lines above, at no line of their own: in their totals)", S->under, S->under,
		       S->under_n);
}

static int print_all(struct src *S, size_t *shown_out)
{
	const struct xp_report_opts *o = S->R->o;
	size_t *fo = malloc((S->nfuncs + 1) * sizeof(*fo)), *lo = malloc((S->nlines + 1) * sizeof(*lo));
	size_t nf = 0, shown;

	if (!fo || !lo) {
		free(fo);
		free(lo);
		return -ENOMEM;
	}
	for (size_t i = 0; i < S->nfuncs; i++)
		if (S->funcs[i].total)
			fo[nf++] = i;
	for (size_t i = 0; i < S->nlines; i++)
		lo[i] = i;
	qsort_r(fo, nf, sizeof(*fo), cmp_func, S);
	qsort_r(lo, S->nlines, sizeof(*lo), cmp_line, S);
	for (size_t i = 0; i < S->nlines; i++)
		if (S->lines[i].nk)
			qsort(S->lines[i].k, S->lines[i].nk, sizeof(*S->lines[i].k), cmp_kernel);
	shown = o->top && o->top < nf ? o->top : nf;
	if (o->format == XP_FMT_TEXT) {
		text_head(S);
		if (print_own(S) < 0)
			goto nomem;
		text_columns(S);
	} else if (o->format == XP_FMT_CSV) {
		fprintf(S->R->out, "\"Level\",\"File\",\"Function\",\"Line\",\"Self (ns)\","
			"\"Total (ns)\",%s\"Instances\",\"Kernels\"\n",
			S->bwd_all ? "\"Backward (ns)\"," : "");
	} else {
		jsonw_key(&S->R->json, "total_ns");
		jsonw_int(&S->R->json, S->all);
		if (S->bwd_all) {
			jsonw_key(&S->R->json, "backward_ns");
			jsonw_int(&S->R->json, S->bwd_all);
		}
		jsonw_key(&S->R->json, "functions");
		jsonw_arr_begin(&S->R->json);
	}
	for (size_t i = 0; i < shown; i++)
		print_func(S, fo[i], lo, S->nlines);
	if (o->format == XP_FMT_JSON) {
		jsonw_arr_end(&S->R->json);
		if (print_own(S) < 0)
			goto nomem;
	}
	print_none(S);
	if (shown < nf && o->format == XP_FMT_TEXT)
		fprintf(S->R->out, " (%zu more functions; --top 0 shows all)\n", nf - shown);
	*shown_out = nf;
	free(fo);
	free(lo);
	return 0;
nomem:
	free(fo);
	free(lo);
	return -ENOMEM;
}

int xp_report_source(struct rep *R, size_t *rows)
{
	struct src S = { .R = R };
	size_t nf = 0;
	int rc;

	if (R->o->cpu)
		return xp_report_source_cpu(R, rows);
	if ((rc = xp_rep_frame_stmt(R)) < 0)
		return rc;

	S.line_ids = xp_strtab_new();
	S.func_ids = xp_strtab_new();
	if (!S.line_ids || !S.func_ids) {
		rc = -ENOMEM;
		goto out;
	}
	if ((rc = xp_pyroot_load(R->db, &S.root)) < 0 || (rc = collect_rows(&S)) < 0 ||
	    (rc = print_all(&S, &nf)) < 0)
		goto out;
	*rows = nf + (S.none_n > 0) + (S.under_n > 0);
out:
	for (size_t i = 0; i < S.nlines; i++) {
		for (size_t k = 0; k < S.lines[i].nk; k++)
			free(S.lines[i].k[k].name);
		free(S.lines[i].k);
	}
	for (size_t i = 0; i < S.nfuncs; i++) {
		free(S.funcs[i].file);
		free(S.funcs[i].name);
	}
	free(S.lines);
	free(S.funcs);
	free(S.stack);
	xp_strtab_free(S.line_ids);
	xp_strtab_free(S.func_ids);
	xp_pyroot_free(&S.root);
	return rc;
}

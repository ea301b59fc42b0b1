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
#include "export/report/decl.h"
#include "export/report/table.h"
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
	int text_short = xp_rep_short_names(S->R->o);
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

/* The view's columns: functions and lines (json: a function's lines and a
 * line's kernels nested; csv: a Level column), Backward where the run has
 * backward kernels on forward lines. */
enum { C_LEVEL, C_FILE, C_FUNC, C_LINE, C_SELF_PCT, C_SELF, C_TOTAL_PCT, C_TOTAL, C_BWD_PCT,
       C_BWD, C_INST, C_KERNELS, C_SOURCE, C_N };

static const struct xp_col cols[C_N] = {
	[C_LEVEL] = { .head = "Level", .kind = XP_COL_TEXT },
	[C_FILE] = { .head = "File", .json = "file", .kind = XP_COL_TEXT },
	[C_FUNC] = { .head = "Function", .json = "function", .kind = XP_COL_TEXT },
	[C_LINE] = { .head = "Line", .json = "line", .kind = XP_COL_INT },
	[C_SELF_PCT] = { .head = "Self (%)", .kind = XP_COL_FIXED, .width = 8, .rule = 8, .prec = 1 },
	[C_SELF] = { .head = "Self (ns)", .json = "self_ns", .kind = XP_COL_INT, .width = 12,
		     .rule = 12 },
	[C_TOTAL_PCT] = { .head = "Total (%)", .kind = XP_COL_FIXED, .width = 9, .rule = 9, .prec = 1 },
	[C_TOTAL] = { .head = "Total (ns)", .json = "total_ns", .kind = XP_COL_INT, .width = 12,
		      .rule = 12 },
	[C_BWD_PCT] = { .head = "Backward (%)", .kind = XP_COL_FIXED, .width = 12, .rule = 12,
			.prec = 1 },
	[C_BWD] = { .head = "Backward (ns)", .json = "backward_ns", .kind = XP_COL_INT },
	[C_INST] = { .head = "Instances", .json = "instances", .kind = XP_COL_UINT, .width = 9,
		     .rule = 9 },
	[C_KERNELS] = { .head = "Kernels", .kind = XP_COL_TEXT },
	[C_SOURCE] = { .head = "Source", .kind = XP_COL_TEXT, .rule = 6 },
};
/* [0]: without Backward, [1]: with */
static const unsigned char text_cols[2][7] = {
	{ C_SELF_PCT, C_SELF, C_TOTAL_PCT, C_TOTAL, C_INST, C_SOURCE },
	{ C_SELF_PCT, C_SELF, C_TOTAL_PCT, C_TOTAL, C_BWD_PCT, C_INST, C_SOURCE },
};
static const unsigned char csv_cols[2][9] = {
	{ C_LEVEL, C_FILE, C_FUNC, C_LINE, C_SELF, C_TOTAL, C_INST, C_KERNELS },
	{ C_LEVEL, C_FILE, C_FUNC, C_LINE, C_SELF, C_TOTAL, C_BWD, C_INST, C_KERNELS },
};
static const unsigned char json_cols[2][6] = {
	{ C_FILE, C_FUNC, C_SELF, C_TOTAL, C_INST },
	{ C_FILE, C_FUNC, C_SELF, C_TOTAL, C_BWD, C_INST },
};
static const unsigned char json_line_cols[2][5] = {
	{ C_LINE, C_SELF, C_TOTAL, C_INST },
	{ C_LINE, C_SELF, C_TOTAL, C_BWD, C_INST },
};
static const unsigned char json_lineless[] = { C_SELF, C_INST };

/* A line's kernels (json's alone), and the view's totals (json keys). */
static const struct xp_col kernel_cols[] = {
	{ .json = "name", .kind = XP_COL_TEXT, .json_only = 1 },
	{ .json = "self_ns", .kind = XP_COL_INT, .json_only = 1 },
	{ .json = "instances", .kind = XP_COL_UINT, .json_only = 1 },
};
static const struct xp_col total_cols[] = {
	{ .json = "total_ns", .kind = XP_COL_INT, .json_only = 1 },
	{ .json = "backward_ns", .kind = XP_COL_INT, .json_only = 1 },
};

/* The program's own lines nearest the GPU work: text shows the first five
 * above the table's heads, json all of them after the functions. */
enum { OWN_FILE, OWN_LINE, OWN_FUNC, OWN_NS, OWN_TEXT };
static const struct xp_col own_cols[] = {
	[OWN_FILE] = { .json = "file", .kind = XP_COL_TEXT },
	[OWN_LINE] = { .json = "line", .kind = XP_COL_INT },
	[OWN_FUNC] = { .json = "function", .kind = XP_COL_TEXT },
	[OWN_NS] = { .json = "gpu_ns", .kind = XP_COL_INT },
	[OWN_TEXT] = { .kind = XP_COL_TEXT, .text_only = 1 },
};
static const unsigned char own_text[] = { OWN_TEXT }, own_json[] = { OWN_FILE, OWN_LINE,
	OWN_FUNC, OWN_NS };

static struct xp_table table_of(struct src *S, const struct xp_col *c, size_t n)
{
	const struct xp_report_opts *o = S->R->o;

	return (struct xp_table){ .cols = c, .n = n, .fmt = o->format, .out = S->R->out,
				  .json = &S->R->json, .width = o->width, .no_split = 1,
				  .text_max = 2048 };
}

/* When libraries sit between the program and its GPU work (a model from
 * transformers), the lines of the program's own files that lead to it:
 * the innermost such line of each launch stack. Text (json: 0) or json. */
static int print_own(struct src *S, int json)
{
	struct xp_table t = table_of(S, own_cols, sizeof(own_cols) / sizeof(own_cols[0]));
	size_t *order, n = 0, shown;
	int64_t lib_self = 0;

	for (size_t i = 0; i < S->nlines; i++)
		if (S->lines[i].library)
			lib_self = xp_sat_add(lib_self, S->lines[i].self);
	if (!lib_self)
		return 0;
	if (!(order = malloc(S->nlines * sizeof(*order))))
		return -ENOMEM;
	for (size_t i = 0; i < S->nlines; i++)
		if (S->lines[i].own)
			order[n++] = i;
	qsort_r(order, n, sizeof(*order), cmp_own, S);
	t.key = "own_code_lines";
	t.text_max = 1024;
	t.lead = "  ";
	t.no_heads = 1;
	t.text_order = own_text;
	t.text_n = json ? 0 : 1;
	t.json_order = own_json;
	t.json_n = json ? sizeof(own_json) : 0;
	t.csv_order = own_json;     /* csv: none */
	shown = json ? n : n < 5 ? n : 5;
	if (!json)
		xp_table_text(&t, "Your code's lines nearest the GPU work (innermost frame outside"
			      " site-packages and the standard library):");
	xp_table_begin(&t, NULL);
	for (size_t i = 0; i < shown; i++) {
		const struct src_line *l = &S->lines[order[i]];
		const struct src_func *f = &S->funcs[l->fn];
		char line[1024];

		snprintf(line, sizeof(line), "%6.1f%%  %s:%d %s", pct(S, l->own), f->file, l->line,
			 f->name);
		xp_table_row(&t, (struct xp_cell[]){ { .s = f->file }, { .i = l->line }, { .s = f->name },
						     { .i = l->own }, { .s = line } });
	}
	xp_table_end(&t, shown, shown);
	if (!json)
		xp_table_text(&t, "%s", "");
	free(order);
	return 0;
}

/* One row of the view: a function (l NULL), one of its lines, or GPU time
 * no line launched itself (f NULL). */
static void fill(struct src *S, struct xp_cell *c, const char *level, const struct src_func *f,
		 const struct src_line *l, const char *kernels, const char *source)
{
	int64_t self = l ? l->self : f->self, total = l ? l->total : f->total;
	int64_t bwd = l ? l->bwd : f->bwd;

	c[C_LEVEL] = (struct xp_cell){ .s = level };
	c[C_FILE] = (struct xp_cell){ .s = f->file };
	c[C_FUNC] = (struct xp_cell){ .s = f->name };
	c[C_LINE] = (struct xp_cell){ .i = l ? l->line : 0, .absent = !l, .null = l && l->line < 0 };
	c[C_SELF_PCT] = (struct xp_cell){ .d = pct(S, self) };
	c[C_SELF] = (struct xp_cell){ .i = self };
	c[C_TOTAL_PCT] = (struct xp_cell){ .d = pct(S, total) };
	c[C_TOTAL] = (struct xp_cell){ .i = total };
	c[C_BWD_PCT] = (struct xp_cell){ .d = total ? 100.0 * (double)bwd / (double)total : 0 };
	c[C_BWD] = (struct xp_cell){ .i = bwd };
	c[C_INST] = (struct xp_cell){ .u = l ? l->total_n : f->total_n };
	c[C_KERNELS] = (struct xp_cell){ .s = kernels };
	c[C_SOURCE] = (struct xp_cell){ .s = source };
}

/* A line's kernels: json's, under the line. */
static void print_kernels(struct src *S, const struct src_line *l)
{
	struct xp_table t = table_of(S, kernel_cols, sizeof(kernel_cols) / sizeof(kernel_cols[0]));

	t.key = "kernels";
	xp_table_begin(&t, NULL);
	for (size_t i = 0; i < l->nk; i++)
		xp_table_row(&t, (struct xp_cell[]){ { .s = l->k[i].name }, { .i = l->k[i].ns },
						     { .u = l->k[i].n } });
	xp_table_end(&t, l->nk, l->nk);
}

/* One function and its lines (those that launched or called), in line
 * order: json's "lines" under the function, text's and csv's rows after it. */
static void print_func(struct src *S, struct xp_table *ft, size_t fi, const size_t *order,
		       size_t nlines)
{
	const struct src_func *f = &S->funcs[fi];
	struct xp_table lt = *ft;
	struct xp_cell c[C_N];
	char what[1024], kernels[1024];

	snprintf(what, sizeof(what), "%s  (%s)", f->name, f->file);
	fill(S, c, "function", f, NULL, "", what);
	xp_table_row_open(ft, c);
	lt.key = "lines";
	lt.json_order = json_line_cols[S->bwd_all != 0];
	lt.json_n = S->bwd_all ? 5 : 4;
	lt.no_heads = 1;
	lt.csv_continues = 1;
	xp_table_begin(&lt, NULL);
	for (size_t i = 0; i < nlines; i++) {
		const struct src_line *l = &S->lines[order[i]];

		if (l->fn != fi || !l->total)
			continue;
		kernel_list(S, l, kernels, sizeof(kernels));
		snprintf(what, sizeof(what), "    %s:%d  %s", f->file, l->line, l->nk ? kernels : "(calls)");
		fill(S, c, "line", f, l, kernels, what);
		xp_table_row_open(&lt, c);
		print_kernels(S, l);
		xp_table_row_close(&lt);
	}
	xp_table_end(&lt, 0, 0);
	xp_table_row_close(ft);
}

/* A row of GPU time no line launched itself: none on the stack (kind
 * "none", key no_python_line), or a view's backward made somewhere under
 * the lines that hold it in their totals ("under", under_enclosing_line). */
static void print_lineless(struct src *S, struct xp_table *t, const char *kind, const char *key,
			   const char *what, int64_t ns, int64_t bwd, uint64_t n)
{
	struct src_func none = { .file = "", .name = "", .self = ns, .total = ns, .bwd = bwd,
				 .total_n = n };
	struct xp_table kt = *t;
	struct xp_cell c[C_N];

	if (!n)
		return;
	fill(S, c, kind, &none, NULL, "", what);
	kt.json_order = json_lineless;
	kt.json_n = sizeof(json_lineless);
	xp_table_row_key(&kt, key, c);
}

static int print_all(struct src *S, size_t *shown_out)
{
	const struct xp_report_opts *o = S->R->o;
	size_t *fo = malloc((S->nfuncs + 1) * sizeof(*fo)), *lo = malloc((S->nlines + 1) * sizeof(*lo));
	size_t nf = 0, shown;
	int b = S->bwd_all != 0;
	struct xp_table t = table_of(S, cols, C_N), tt = table_of(S, total_cols, 2);

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
	t.text_order = text_cols[b];
	t.text_n = b ? 7 : 6;
	t.csv_order = csv_cols[b];
	t.csv_n = b ? 9 : 8;
	t.json_order = json_cols[b];
	t.json_n = b ? 6 : 5;
	t.key = "functions";
	t.more = "functions";
	xp_table_fields(&tt, (struct xp_cell[]){ { .i = S->all }, { .i = S->bwd_all, .absent = !b } });
	xp_table_text(&t, "** %s:", xp_rep_title(o->by));
	xp_table_text(&t, "%s", "");
	if (print_own(S, 0) < 0)
		goto nomem;
	xp_table_begin(&t, NULL);
	for (size_t i = 0; i < shown; i++)
		print_func(S, &t, fo[i], lo, S->nlines);
	xp_table_end(&t, 0, 0);
	if (print_own(S, 1) < 0)
		goto nomem;
	print_lineless(S, &t, "none", "no_python_line", "(no Python line on the launch stack)",
		       S->none, 0, S->none_n);
	print_lineless(S, &t, "under", "under_enclosing_line", "(backward of views made under the"
		       " lines above, at no line of their own: in their totals)", S->under, S->under,
		       S->under_n);
	xp_table_more(&t, shown, nf);
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

/* Where the view's tables land in json (report/decl.h); the orders with
 * Backward, a superset of those without. */
const struct xp_decl xp_decl_source[] = {
	XP_DECL("source", "", total_cols),
	XP_DECL_ORDER("source", "functions[]", cols, json_cols[1]),
	XP_DECL_ORDER("source", "functions[].lines[]", cols, json_line_cols[1]),
	XP_DECL("source", "functions[].lines[].kernels[]", kernel_cols),
	XP_DECL_ORDER("source", "own_code_lines[]", own_cols, own_json),
	XP_DECL_ORDER("source", "no_python_line", cols, json_lineless),
	XP_DECL_ORDER("source", "under_enclosing_line", cols, json_lineless),
	{ 0 },
};

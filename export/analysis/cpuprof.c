/* cpuprof.c - CPU samples by function and Python line; see cpuprof.h.
 * The samples are counted per stack in SQL (memory grows with distinct
 * stacks, never with samples); each stack is walked once from its leaf
 * with the report's walker (stackwalk.h), its frames named and counted.
 */
#include "export/analysis/cpuprof.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/db_schema.h"
#include "db/pyframe.h"
#include "db/stacktable.h"
#include "export/names/elidename.h"
#include "src/array.h"
#include "src/strtab.h"

/* One frame of the stack being counted. */
struct walked {
	size_t func;                /* its function's row */
	long long line;             /* its line's row, or -1 */
	unsigned cls;               /* XP_FRAME_IS_* */
};

static const char *base_name(const char *path)
{
	const char *s = path ? strrchr(path, '/') : NULL;

	return s ? s + 1 : path ? path : "";
}

/* A program, not a shared object: "prog", "python3.12", not "libc.so.6". */
static int is_exe(const char *module)
{
	const char *b = base_name(module);

	return module && module[0] == '/' && !strstr(b, ".so");
}

/* The row of key, made from the other arguments the first time. */
static int row_of(struct xp_cpuprof *p, const char *key, size_t klen, const struct xp_cpu_row *tmpl,
		  size_t *at)
{
	int64_t id;
	int fresh;
	struct xp_cpu_row *r;

	if (xp_strtab_intern(p->ids, key, klen, &id, &fresh))
		return -ENOMEM;
	*at = (size_t)id - 1;
	if (!fresh)
		return 0;
	if (xp_array__reserve((void **)&p->rows, &p->cap, p->n + 1, sizeof(*p->rows), 64))
		return -ENOMEM;
	r = &p->rows[p->n++];
	*r = *tmpl;
	r->file = strdup(tmpl->file);
	r->path = strdup(tmpl->path ? tmpl->path : tmpl->file);
	r->name = strdup(tmpl->name);
	r->mark = 0;
	p->lines |= r->is_line;
	return r->file && r->path && r->name ? 0 : -ENOMEM;
}

/* Keys: kind, then what tells two functions apart (a native function's
 * whole module path: two programs' "main" are two functions). */
static int frame_rows(struct xp_cpuprof *p, const struct xp_frame_row *fr, struct walked *w)
{
	struct xp_cpu_row t = { .line = -1 };
	const char *sym = fr->sym ? fr->sym : "?";
	char key[8400];
	int n, rc;

	w->cls = xp_frame_class(fr->kind, fr->sym, fr->module);
	w->line = -1;
	if (fr->kind == XP_FRAME_PYTHON) {
		const char *file = fr->py ? fr->py->file : fr->module ? fr->module : "";

		t.kind = XP_CPU_PYTHON;
		t.file = (char *)(file[0] ? xp_pypath_short(&p->root, file) : "?");
		t.path = (char *)(file[0] ? file : "?");
		t.name = (char *)(fr->py ? fr->py->qualname : sym);
		n = snprintf(key, sizeof(key), "P\t%s\t%s", file, t.name);
		if ((rc = row_of(p, key, (size_t)n < sizeof(key) ? (size_t)n : sizeof(key) - 1, &t,
				 &w->func)) || !fr->py)
			return rc;
		t.is_line = 1;
		t.line = fr->py->line;
		t.func = w->func;
		n = snprintf(key, sizeof(key), "L\t%s\t%d\t%s", file, t.line, t.name);
		size_t li;

		rc = row_of(p, key, (size_t)n < sizeof(key) ? (size_t)n : sizeof(key) - 1, &t, &li);
		w->line = (long long)li;
		return rc;
	}
	if (fr->kind == XP_FRAME_KERNEL) {
		t.kind = XP_CPU_KERNEL;
		t.file = "";
	} else if (fr->kind == XP_FRAME_USER || fr->kind == XP_FRAME_INLINED) {
		t.kind = XP_CPU_NATIVE;
		t.file = (char *)base_name(fr->module);
		t.exe = is_exe(fr->module);
	} else {
		t.kind = XP_CPU_RAW;
		t.file = "";
	}
	t.name = (char *)sym;
	n = snprintf(key, sizeof(key), "%d\t%s\t%s", (int)t.kind, t.kind == XP_CPU_NATIVE &&
		     fr->module ? fr->module : "", sym);
	return row_of(p, key, (size_t)n < sizeof(key) ? (size_t)n : sizeof(key) - 1, &t, &w->func);
}

/* The frames of stack id, leaf first, into *ws. */
static int walk(struct xp_cpuprof *p, struct xp_stackwalk *sw, int64_t id, struct walked **ws,
		size_t *n, size_t *cap)
{
	struct xp_frame_row fr;
	int rc = 0;

	*n = 0;
	while (rc == 0 && xp_stackwalk_next(sw, &id, &fr)) {
		if (fr.kind == XP_FRAME_GAP || fr.kind == XP_FRAME_NOTE)
			continue;
		if ((rc = xp_array__reserve((void **)ws, cap, *n + 1, sizeof(**ws), 64)) == 0 &&
		    (rc = frame_rows(p, &fr, &(*ws)[*n])) == 0)
			(*n)++;
	}
	xp_stackwalk_done(sw);
	return rc;
}

static void count_total(struct xp_cpuprof *p, size_t row, uint64_t stack, uint64_t k)
{
	struct xp_cpu_row *r = &p->rows[row];

	if (r->mark != stack) {
		r->mark = stack;
		r->total += k;
	}
}

/* k samples of one stack (ws, leaf first). */
static void count(struct xp_cpuprof *p, enum xp_cpu_self mode, const struct walked *ws, size_t n,
		  uint64_t stack, uint64_t k)
{
	size_t py = n, self;

	for (size_t i = 0; i < n && py == n; i++)
		if (ws[i].cls & XP_FRAME_IS_PYTHON)
			py = i;
	p->samples += k;
	if (!n) {
		p->no_frame += k;
		return;
	}
	p->python += py < n ? k : 0;
	self = 0;
	if (py < n) {
		/* the interpreter running the line is the line's time */
		self = py;
		for (size_t i = 0; i < py && mode == XP_CPU_SELF_LEAF; i++)
			if (!(ws[i].cls & XP_FRAME_IS_INTERP))
				self = 0;
	}
	p->rows[ws[self].line >= 0 ? (size_t)ws[self].line : ws[self].func].self += k;
	if (ws[self].line >= 0)
		p->rows[ws[self].func].self += k;
	for (size_t i = 0; i < n; i++) {
		if (mode == XP_CPU_SELF_PYTHON && py < n && !(ws[i].cls & XP_FRAME_IS_PYTHON))
			continue;
		count_total(p, ws[i].func, stack, k);
		if (ws[i].line >= 0)
			count_total(p, (size_t)ws[i].line, stack, k);
	}
}

int xp_cpuprof_collect(sqlite3 *db, const struct xp_cpuprof_opts *o, struct xp_cpuprof *p)
{
	struct xp_stackwalk *own = NULL, *sw = o->walk;
	struct walked *ws = NULL;
	size_t nws = 0, capws = 0;
	sqlite3_stmt *s = NULL;
	uint64_t serial = 0;
	char sql[1024];
	int rc, step;

	if (!(p->ids = xp_strtab_new()))
		return -ENOMEM;
	if ((rc = xp_pyroot_load(db, &p->root)) < 0)
		return rc;
	if (!sw && (rc = xp_stackwalk_open(db, &own)) < 0)
		return rc;
	sw = sw ? sw : own;
	snprintf(sql, sizeof(sql), "SELECT x.stack_id, count(*) FROM xp_samples x WHERE %s"
		 " GROUP BY x.stack_id", o->where ? o->where : "1");
	if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK) {
		rc = -EIO;
		goto out;
	}
	if (o->bind)
		o->bind(o->ctx, s);
	while (rc == 0 && (step = sqlite3_step(s)) == SQLITE_ROW) {
		int64_t id = sqlite3_column_int64(s, 0), k = sqlite3_column_int64(s, 1);

		nws = 0;
		if (id > 0 && (rc = walk(p, sw, id, &ws, &nws, &capws)))
			break;
		count(p, o->self, ws, nws, ++serial, k > 0 ? (uint64_t)k : 0);
	}
	if (rc == 0 && step != SQLITE_DONE)
		rc = -EIO;
out:
	sqlite3_finalize(s);
	xp_stackwalk_close(own);
	free(ws);
	return rc;
}

void xp_cpuprof_free(struct xp_cpuprof *p)
{
	for (size_t i = 0; i < p->n; i++) {
		free(p->rows[i].file);
		free(p->rows[i].path);
		free(p->rows[i].name);
	}
	free(p->rows);
	xp_strtab_free(p->ids);
	xp_pyroot_free(&p->root);
	*p = (struct xp_cpuprof){ 0 };
}

const char *xp_cpu_row_name(const struct xp_cpu_row *r, int flags, char *buf, size_t len)
{
	char brief[1024];
	const char *name = r->name;

	if ((flags & XP_CPU_NAME_SHORT) && r->kind != XP_CPU_PYTHON && r->kind != XP_CPU_RAW) {
		xp_elide_name(r->name, brief, sizeof(brief));
		name = brief;
	}
	if (r->is_line)
		xp_pyline_name(&(struct xp_pyline){ .file = r->path, .qualname = name,
						    .line = r->line }, buf, len);
	else if (r->kind == XP_CPU_PYTHON)
		snprintf(buf, len, "%s (%s)", name, xp_pypath_base(r->path));
	else if (r->kind == XP_CPU_KERNEL)
		snprintf(buf, len, "%s (kernel)", name);
	else if (r->kind == XP_CPU_RAW || !r->file[0] || (r->exe && (flags & XP_CPU_NAME_NO_EXE)))
		snprintf(buf, len, "%s", name);
	else
		snprintf(buf, len, "%s (%s)", name, r->file);
	return buf;
}

static int cmp_row(const void *pa, const void *pb, void *ctx)
{
	const struct xp_cpuprof *p = ctx;
	const struct xp_cpu_row *a = &p->rows[*(const size_t *)pa], *b = &p->rows[*(const size_t *)pb];
	int c;

	if (a->self != b->self)
		return a->self < b->self ? 1 : -1;
	if (a->total != b->total)
		return a->total < b->total ? 1 : -1;
	if ((c = strcmp(a->name, b->name)))
		return c;
	if ((c = strcmp(a->file, b->file)))
		return c;
	return (a->line > b->line) - (a->line < b->line);
}

int xp_cpuprof_order(const struct xp_cpuprof *p, int lines, size_t **order, size_t *n)
{
	*n = 0;
	if (!(*order = malloc((p->n + 1) * sizeof(**order))))
		return -ENOMEM;
	for (size_t i = 0; i < p->n; i++)
		if (p->rows[i].is_line == lines && p->rows[i].total)
			(*order)[(*n)++] = i;
	qsort_r(*order, *n, sizeof(**order), cmp_row, (void *)p);
	return 0;
}

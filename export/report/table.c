/* table.c - a declared table in text, csv or json (table.h). */
#include "export/report/table.h"

#include <stdarg.h>
#include <string.h>

#include "export/report/report_priv.h"
#include "src/textesc.h"

#define COLS_MAX XP_TABLE_COLS_MAX   /* columns of a table */

/* The columns a format writes, indices into t->cols in their order: how
 * many. Text leaves the calls out of its line (they follow it). */
static size_t fmt_cols(const struct xp_table *t, enum xp_report_format fmt, size_t idx[COLS_MAX])
{
	const unsigned char *order = fmt == XP_FMT_TEXT ? t->text_order :
				     fmt == XP_FMT_CSV ? t->csv_order : t->json_order;
	size_t on = fmt == XP_FMT_TEXT ? t->text_n : fmt == XP_FMT_CSV ? t->csv_n : t->json_n;
	size_t n = 0;

	for (size_t i = 0; i < (order ? on : t->n) && n < COLS_MAX; i++) {
		size_t k = order ? order[i] : i;
		const struct xp_col *c = &t->cols[k];

		if (fmt == XP_FMT_TEXT && c->kind == XP_COL_CALL)
			continue;
		if (!order && (fmt == XP_FMT_TEXT ? c->json_only || c->csv_only :
			       fmt == XP_FMT_CSV ? c->json_only || c->text_only :
			       c->csv_only || c->text_only || !c->json))
			continue;
		idx[n++] = k;
	}
	return n;
}

size_t xp_table_json_cols(const struct xp_table *t, size_t idx[XP_TABLE_COLS_MAX])
{
	return fmt_cols(t, XP_FMT_JSON, idx);
}

/* Text: the lead, else the column's gap, then the field right-aligned
 * (left-aligned in a negative width); the last column (width 0) as it is. */
static int text_field(const struct xp_table *t, char *line, size_t len, int n,
		      const struct xp_col *c, const char *v)
{
	if ((size_t)n >= len)
		return n;
	if (!n)
		return snprintf(line, len, "%s%*s", t->lead ? t->lead : " ", c->width, v);
	return n + snprintf(line + n, len - (size_t)n, "%*s%*s", c->gap ? c->gap : 2, "", c->width, v);
}

static void text_heads(struct xp_table *t)
{
	char head[1024], rule[1024], dash[64];
	size_t idx[COLS_MAX], nt = fmt_cols(t, XP_FMT_TEXT, idx);
	int n = 0, m = 0;

	for (const char *p = t->pending, *nl; p; p = nl ? nl + 1 : NULL) {
		char line[512];

		nl = strchr(p, '\n');
		snprintf(line, sizeof(line), "%.*s", nl ? (int)(nl - p) : (int)strlen(p), p);
		xp_rep_put_line(t->out, line, t->width);
	}
	if (t->pending && nt && !t->no_heads && !t->tight)
		xp_rep_put_line(t->out, "", t->width);
	t->pending = NULL;
	if (!nt || t->no_heads)
		return;
	for (size_t j = 0; j < nt; j++) {
		const struct xp_col *c = &t->cols[idx[j]];
		int r = c->rule < (int)sizeof(dash) - 1 ? c->rule : (int)sizeof(dash) - 1;

		n = text_field(t, head, sizeof(head), n, c, c->head);
		if (r < 0)
			continue;
		memset(dash, '-', (size_t)r);
		dash[r] = '\0';
		m = text_field(t, rule, sizeof(rule), m, c, dash);
	}
	xp_rep_put_line(t->out, head, t->width);
	xp_rep_put_line(t->out, rule, t->width);
}

/* Text: the title's lines (NULL: none), then, where the table has columns
 * in text, a blank line (unless tight) and the heads with their rules (at
 * the first row under text_lazy); csv: the header row; json: "rows": [. */
void xp_table_begin(struct xp_table *t, const char *title)
{
	t->started = 0;
	t->rows = 0;
	if (t->fmt == XP_FMT_TEXT) {
		t->pending = title;
		if (!t->text_lazy)
			text_heads(t);
	} else if (t->fmt == XP_FMT_CSV && !t->csv_continues) {
		size_t idx[COLS_MAX], nc = fmt_cols(t, XP_FMT_CSV, idx);

		if (!nc)
			return;
		for (size_t j = 0; j < nc; j++) {
			const struct xp_col *c = &t->cols[idx[j]];

			fprintf(t->out, "%s\"%s\"", j ? "," : "", c->csv ? c->csv : c->head);
		}
		fputc('\n', t->out);
	} else if (t->fmt == XP_FMT_JSON) {
		size_t idx[COLS_MAX];

		if (!fmt_cols(t, XP_FMT_JSON, idx))
			return;
		jsonw_key(t->json, t->key ? t->key : "rows");
		jsonw_arr_begin(t->json);
		t->in_rows = 1;
	}
}

static void cell_text(const struct xp_col *c, const struct xp_cell *v, char *buf, size_t len)
{
	if (v->null) {
		snprintf(buf, len, "?");
		return;
	}
	switch (c->kind) {
	case XP_COL_TEXT: snprintf(buf, len, "%s", v->s ? v->s : ""); break;
	case XP_COL_INT: snprintf(buf, len, "%lld", (long long)v->i); break;
	case XP_COL_UINT: snprintf(buf, len, "%llu", (unsigned long long)v->u); break;
	case XP_COL_FIXED: snprintf(buf, len, "%.*f", c->prec, v->d); break;
	case XP_COL_BOOL: snprintf(buf, len, "%d", v->i != 0); break;
	case XP_COL_CALL: buf[0] = '\0'; break;
	}
}

typedef int (*cell_call)(struct xp_table *t, const struct xp_cell *c);

/* A call column's writer in t's format. */
static cell_call call_of(const struct xp_table *t, const struct xp_col *c)
{
	cell_call f = t->fmt == XP_FMT_TEXT ? c->text_call : t->fmt == XP_FMT_CSV ? c->csv_call :
		      c->json_call;

	return f ? f : c->call;
}

/* Text: a last field that does not fit beside the numbers gets a line of
 * its own; the calls' lines follow. A table of calls alone has no line. */
static int row_text(struct xp_table *t, const struct xp_cell *cells)
{
	char line[4096], v[3072];
	size_t idx[COLS_MAX], nt = fmt_cols(t, XP_FMT_TEXT, idx);
	size_t max = t->text_max && t->text_max < sizeof(line) ? t->text_max : 1200;
	int n = 0, last = -1, cut, rc = 0;

	if (t->text_lazy && !t->started)
		text_heads(t);
	t->started = 1;
	for (size_t j = 0; j < nt; j++) {
		const struct xp_col *c = &t->cols[idx[j]];

		cell_text(c, &cells[idx[j]], v, sizeof(v));
		if (!c->width) {
			last = (int)idx[j];
			n = text_field(t, line, max, n, c, "");
			break;
		}
		n = text_field(t, line, max, n, c, v);
	}
	if (last >= 0) {
		cell_text(&t->cols[last], &cells[last], v, sizeof(v));
		if ((size_t)n < max)
			snprintf(line + n, max - (size_t)n, "%s", v);
		if (t->width && !t->no_split && (xp_rep_fit_bytes(line, t->width, &cut), cut) && n > 2) {
			line[n - 2] = '\0';
			xp_rep_put_line(t->out, line, t->width);
			snprintf(line, sizeof(line), "  %s", v);
		}
	}
	if (nt)
		xp_rep_put_line(t->out, line, t->width);
	for (size_t i = 0; i < t->n && rc == 0; i++)
		if (t->cols[i].kind == XP_COL_CALL && !cells[i].absent && !t->cols[i].csv_only &&
		    !t->cols[i].json_only)
			rc = call_of(t, &t->cols[i])(t, &cells[i]);
	return rc;
}

static int row_csv(struct xp_table *t, const struct xp_cell *cells)
{
	char v[64];
	size_t idx[COLS_MAX], nc = fmt_cols(t, XP_FMT_CSV, idx);
	int rc = 0;

	if (t->csv_nested || !nc)
		return 0;
	for (size_t j = 0; j < nc && rc == 0; j++) {
		const struct xp_col *c = &t->cols[idx[j]];
		const struct xp_cell *cell = &cells[idx[j]];

		if (j)
			fputc(',', t->out);
		if (cell->null) {
			continue;
		} else if (c->kind == XP_COL_TEXT) {
			if (!cell->absent)
				xp_rep_csv_str(t->out, cell->s ? cell->s : "");
		} else if (c->kind == XP_COL_CALL) {
			fputc('"', t->out);
			if (!cell->absent)
				rc = call_of(t, c)(t, cell);
			fputc('"', t->out);
		} else if (!cell->absent) {
			cell_text(c, cell, v, sizeof(v));
			fputs(v, t->out);
		}
	}
	fputc('\n', t->out);
	return rc;
}

/* json: the row's keys in the enclosing object (nested objects by obj). */
static int json_keys(struct xp_table *t, const struct xp_cell *cells)
{
	struct jsonw *w = t->json;
	size_t idx[COLS_MAX], nj = fmt_cols(t, XP_FMT_JSON, idx);
	const char *obj = NULL;
	int rc = 0;

	for (size_t j = 0; j < nj && rc == 0; j++) {
		const struct xp_col *c = &t->cols[idx[j]];
		const struct xp_cell *v = &cells[idx[j]];

		if (v->absent)
			continue;
		if (obj && (!c->obj || strcmp(c->obj, obj))) {
			jsonw_obj_end(w);
			obj = NULL;
		}
		if (c->obj && !obj) {
			jsonw_key(w, obj = c->obj);
			jsonw_obj_begin(w);
		}
		jsonw_key(w, c->json);
		if (v->null) {
			jsonw_null(w);
			continue;
		}
		switch (c->kind) {
		case XP_COL_TEXT: jsonw_str(w, v->s ? v->s : ""); break;
		case XP_COL_INT: jsonw_int(w, v->i); break;
		case XP_COL_UINT: jsonw_uint(w, v->u); break;
		case XP_COL_FIXED: jsonw_fixed(w, v->d, c->prec); break;
		case XP_COL_BOOL: jsonw_bool(w, v->i != 0); break;
		case XP_COL_CALL: rc = call_of(t, c)(t, v); break;
		}
	}
	if (obj)
		jsonw_obj_end(w);
	return rc;
}

int xp_table_wants(const struct xp_table *t, size_t i)
{
	return t->fmt != XP_FMT_TEXT || !t->capped || i < t->cap;
}

int xp_table_row_open(struct xp_table *t, const struct xp_cell *cells)
{
	if (!xp_table_wants(t, t->rows++))
		return 0;
	if (t->fmt == XP_FMT_TEXT)
		return row_text(t, cells);
	if (t->fmt == XP_FMT_CSV)
		return row_csv(t, cells);
	if (!t->in_rows)            /* no json columns: not in json */
		return 0;
	jsonw_obj_begin(t->json);
	return json_keys(t, cells);
}

void xp_table_row_close(struct xp_table *t)
{
	if (t->fmt == XP_FMT_JSON && (t->in_rows || t->keyed))
		jsonw_obj_end(t->json);
	t->keyed = 0;
}

int xp_table_row(struct xp_table *t, const struct xp_cell *cells)
{
	int rc = xp_table_row_open(t, cells);

	xp_table_row_close(t);
	return rc;
}

void xp_table_more(struct xp_table *t, size_t shown, size_t rows)
{
	char line[128];

	if (t->fmt != XP_FMT_TEXT || shown >= rows)
		return;
	snprintf(line, sizeof(line), "%s(%zu more %s; --top 0 shows all)",
		 t->more_lead ? t->more_lead : " ", rows - shown, t->more ? t->more : "rows");
	if (t->more_cut)
		xp_rep_put_line(t->out, line, t->width);
	else
		fprintf(t->out, "%s\n", line);
}

void xp_table_end(struct xp_table *t, size_t shown, size_t rows)
{
	if (t->fmt == XP_FMT_JSON && t->in_rows)
		jsonw_arr_end(t->json);
	t->in_rows = 0;
	xp_table_more(t, shown, rows);
}

void xp_table_fields(struct xp_table *t, const struct xp_cell *cells)
{
	if (t->fmt == XP_FMT_JSON)
		json_keys(t, cells);
}

int xp_table_row_key_open(struct xp_table *t, const char *key, const struct xp_cell *cells)
{
	if (t->fmt == XP_FMT_TEXT)          /* not one of the rows: no cap */
		return row_text(t, cells);
	if (t->fmt == XP_FMT_CSV)
		return row_csv(t, cells);
	jsonw_key(t->json, key);
	jsonw_obj_begin(t->json);
	t->keyed = 1;
	return json_keys(t, cells);
}

int xp_table_row_key(struct xp_table *t, const char *key, const struct xp_cell *cells)
{
	int rc = xp_table_row_key_open(t, key, cells);

	xp_table_row_close(t);
	return rc;
}

void xp_table_text(struct xp_table *t, const char *fmt, ...)
{
	char line[2048];
	va_list ap;

	if (t->fmt != XP_FMT_TEXT)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	xp_rep_put_line(t->out, line, t->width);
}

/* Prose wrapped at width columns on spaces, the following lines indented
 * under the first's text. */
static void put_wrapped(FILE *to, unsigned width, const char *text)
{
	unsigned indent = (unsigned)strspn(text, " ") + 4;
	const char *p = text;
	int first = 1, cut;

	while (width > indent + 20) {
		size_t room = first ? width : width - indent, n = xp_rep_fit_bytes(p, (unsigned)room, &cut);
		size_t brk = n;

		if (!cut)
			break;
		while (brk > 0 && p[brk] != ' ')
			brk--;
		if (brk == 0)
			brk = n;        /* one long word: cut it */
		fprintf(to, "%*s%.*s\n", first ? 0 : (int)indent, "", (int)brk, p);
		p += brk;
		p += strspn(p, " ");
		first = 0;
	}
	fprintf(to, "%*s%s\n", first ? 0 : (int)indent, "", p);
}

void xp_table_vnote(struct xp_table *t, const char *fmt, va_list ap)
{
	FILE *to = t->fmt == XP_FMT_CSV ? t->notes : t->out;
	char text[2048];

	if (t->fmt == XP_FMT_JSON || !to)
		return;
	vsnprintf(text, sizeof(text), fmt, ap);
	if (t->fmt == XP_FMT_TEXT && t->width)
		put_wrapped(to, t->width, xp_esc(text));
	else
		fprintf(to, "%s\n", xp_esc(text));
}

void xp_table_note(struct xp_table *t, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	xp_table_vnote(t, fmt, ap);
	va_end(ap);
}

void xp_table_doc_begin(struct xp_table *t, const struct xp_cell *cells)
{
	if (t->fmt != XP_FMT_JSON)
		return;
	jsonw_init(t->json, t->out);
	jsonw_obj_begin(t->json);
	json_keys(t, cells);
}

int xp_table_doc_end(struct xp_table *t)
{
	if (t->fmt != XP_FMT_JSON)
		return 0;
	jsonw_obj_end(t->json);
	fputc('\n', t->out);
	return jsonw_error(t->json);
}

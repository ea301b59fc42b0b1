/* table.c - a declared table in text, csv or json (table.h). */
#include "export/report/table.h"

#include <string.h>

#include "export/report/report_priv.h"

/* Text: " " then each field right-aligned, two spaces apart; the last
 * column (width 0) as it is. */
static int text_field(const struct xp_table *t, char *line, size_t len, int n,
		      const struct xp_col *c, const char *v)
{
	if ((size_t)n >= len)
		return n;
	return n + snprintf(line + n, len - (size_t)n, "%s%*s", n ? "  " : t->lead ? t->lead : " ",
			    c->width, v);
}

#define TEXT_MAX 32                 /* columns of a text row */

/* Text's columns, indices into t->cols, in their order: how many. */
static size_t text_cols(const struct xp_table *t, size_t idx[TEXT_MAX])
{
	size_t n = 0;

	if (t->text_order) {
		for (size_t i = 0; i < t->text_n && n < TEXT_MAX; i++)
			if (t->cols[t->text_order[i]].kind != XP_COL_CALL)
				idx[n++] = t->text_order[i];
		return n;
	}
	for (size_t i = 0; i < t->n && n < TEXT_MAX; i++)
		if (!t->cols[i].json_only && !t->cols[i].csv_only && t->cols[i].kind != XP_COL_CALL)
			idx[n++] = i;
	return n;
}

void xp_table_begin(struct xp_table *t, const char *title)
{
	if (t->fmt == XP_FMT_TEXT) {
		char head[1024], rule[1024], dash[64];
		size_t idx[TEXT_MAX], nt = text_cols(t, idx);
		int n = 0, m = 0;

		if (title) {
			xp_rep_put_line(t->out, title, t->width);
			xp_rep_put_line(t->out, "", t->width);
		}
		for (size_t j = 0; j < nt; j++) {
			const struct xp_col *c = &t->cols[idx[j]];
			int r = c->rule < (int)sizeof(dash) - 1 ? c->rule : (int)sizeof(dash) - 1;

			memset(dash, '-', (size_t)r);
			dash[r] = '\0';
			n = text_field(t, head, sizeof(head), n, c, c->head);
			m = text_field(t, rule, sizeof(rule), m, c, dash);
		}
		xp_rep_put_line(t->out, head, t->width);
		xp_rep_put_line(t->out, rule, t->width);
	} else if (t->fmt == XP_FMT_CSV && !t->csv_continues) {
		int first = 1;

		for (size_t i = 0; i < t->n; i++) {
			const struct xp_col *c = &t->cols[i];

			if (c->json_only || c->text_only)
				continue;
			fprintf(t->out, "%s\"%s\"", first ? "" : ",", c->csv ? c->csv : c->head);
			first = 0;
		}
		fputc('\n', t->out);
	} else if (t->fmt == XP_FMT_JSON) {
		jsonw_key(t->json, t->key ? t->key : "rows");
		jsonw_arr_begin(t->json);
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

/* Text: a last field that does not fit beside the numbers gets a line of
 * its own; the calls' lines follow. */
static int row_text(struct xp_table *t, const struct xp_cell *cells)
{
	char line[1200], v[1024];
	size_t idx[TEXT_MAX], nt = text_cols(t, idx);
	int n = 0, last = -1, cut, rc = 0;

	for (size_t j = 0; j < nt; j++) {
		const struct xp_col *c = &t->cols[idx[j]];

		cell_text(c, &cells[idx[j]], v, sizeof(v));
		if (!c->width) {
			last = (int)idx[j];
			n = text_field(t, line, sizeof(line), n, c, "");
			break;
		}
		n = text_field(t, line, sizeof(line), n, c, v);
	}
	if (last >= 0) {
		cell_text(&t->cols[last], &cells[last], v, sizeof(v));
		if ((size_t)n < sizeof(line))
			snprintf(line + n, sizeof(line) - (size_t)n, "%s", v);
		if (t->width && !t->no_split && (xp_rep_fit_bytes(line, t->width, &cut), cut) && n > 2) {
			line[n - 2] = '\0';
			xp_rep_put_line(t->out, line, t->width);
			snprintf(line, sizeof(line), "  %s", v);
		}
	}
	xp_rep_put_line(t->out, line, t->width);
	for (size_t i = 0; i < t->n && rc == 0; i++)
		if (t->cols[i].kind == XP_COL_CALL && !cells[i].absent && !t->cols[i].csv_only &&
		    !t->cols[i].json_only)
			rc = t->cols[i].call(t, &cells[i]);
	return rc;
}

static int row_csv(struct xp_table *t, const struct xp_cell *cells)
{
	char v[64];
	int first = 1, rc = 0;

	for (size_t i = 0; i < t->n && rc == 0; i++) {
		const struct xp_col *c = &t->cols[i];

		if (c->json_only || c->text_only)
			continue;
		if (!first)
			fputc(',', t->out);
		first = 0;
		if (cells[i].null) {
			continue;
		} else if (c->kind == XP_COL_TEXT) {
			if (!cells[i].absent)
				xp_rep_csv_str(t->out, cells[i].s ? cells[i].s : "");
		} else if (c->kind == XP_COL_CALL) {
			fputc('"', t->out);
			if (!cells[i].absent)
				rc = c->call(t, &cells[i]);
			fputc('"', t->out);
		} else if (!cells[i].absent) {
			cell_text(c, &cells[i], v, sizeof(v));
			fputs(v, t->out);
		}
	}
	fputc('\n', t->out);
	return rc;
}

static int row_json(struct xp_table *t, const struct xp_cell *cells)
{
	struct jsonw *w = t->json;
	int rc = 0;

	jsonw_obj_begin(w);
	for (size_t i = 0; i < t->n && rc == 0; i++) {
		const struct xp_col *c = &t->cols[i];
		const struct xp_cell *v = &cells[i];

		if (v->absent || c->csv_only || c->text_only || !c->json)
			continue;
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
		case XP_COL_CALL: rc = c->call(t, v); break;
		}
	}
	jsonw_obj_end(w);
	return rc;
}

int xp_table_row(struct xp_table *t, const struct xp_cell *cells)
{
	if (t->fmt == XP_FMT_TEXT)
		return row_text(t, cells);
	return t->fmt == XP_FMT_CSV ? row_csv(t, cells) : row_json(t, cells);
}

void xp_table_end(struct xp_table *t, size_t shown, size_t rows)
{
	if (t->fmt == XP_FMT_JSON)
		jsonw_arr_end(t->json);
	else if (t->fmt == XP_FMT_TEXT && shown < rows)
		fprintf(t->out, " (%zu more rows; --top 0 shows all)\n", rows - shown);
}

/* table.c - a declared table in text, csv or json (table.h). */
#include "export/table.h"

#include <string.h>

#include "export/report_priv.h"

/* Text: " " then each field right-aligned, two spaces apart; the last
 * column (width 0) as it is. */
static int text_field(char *line, size_t len, int n, const struct xp_col *c, const char *v)
{
	if ((size_t)n >= len)
		return n;
	return n + snprintf(line + n, len - (size_t)n, "%s%*s", n ? "  " : " ", c->width, v);
}

void xp_table_begin(struct xp_table *t, const char *title)
{
	if (t->fmt == XP_FMT_TEXT) {
		char head[1024], rule[1024], dash[64];
		int n = 0, m = 0;

		if (title) {
			xp_rep_put_line(t->out, title, t->width);
			xp_rep_put_line(t->out, "", t->width);
		}
		for (size_t i = 0; i < t->n; i++) {
			const struct xp_col *c = &t->cols[i];
			int r = c->rule < (int)sizeof(dash) - 1 ? c->rule : (int)sizeof(dash) - 1;

			if (c->json_only || c->kind == XP_COL_CALL)
				continue;
			memset(dash, '-', (size_t)r);
			dash[r] = '\0';
			n = text_field(head, sizeof(head), n, c, c->head);
			m = text_field(rule, sizeof(rule), m, c, dash);
		}
		xp_rep_put_line(t->out, head, t->width);
		xp_rep_put_line(t->out, rule, t->width);
	} else if (t->fmt == XP_FMT_CSV) {
		int first = 1;

		for (size_t i = 0; i < t->n; i++) {
			const struct xp_col *c = &t->cols[i];

			if (c->json_only)
				continue;
			fprintf(t->out, "%s\"%s\"", first ? "" : ",", c->csv ? c->csv : c->head);
			first = 0;
		}
		fputc('\n', t->out);
	} else {
		jsonw_key(t->json, t->key ? t->key : "rows");
		jsonw_arr_begin(t->json);
	}
}

static void cell_text(const struct xp_col *c, const struct xp_cell *v, char *buf, size_t len)
{
	switch (c->kind) {
	case XP_COL_TEXT: snprintf(buf, len, "%s", v->s ? v->s : ""); break;
	case XP_COL_INT: snprintf(buf, len, "%lld", (long long)v->i); break;
	case XP_COL_UINT: snprintf(buf, len, "%llu", (unsigned long long)v->u); break;
	case XP_COL_FIXED: snprintf(buf, len, "%.*f", c->prec, v->d); break;
	case XP_COL_CALL: buf[0] = '\0'; break;
	}
}

/* Text: a last field that does not fit beside the numbers gets a line of
 * its own; the calls' lines follow. */
static int row_text(struct xp_table *t, const struct xp_cell *cells)
{
	char line[1200], v[1024];
	int n = 0, last = -1, cut, rc = 0;

	for (size_t i = 0; i < t->n; i++) {
		const struct xp_col *c = &t->cols[i];

		if (c->json_only || c->kind == XP_COL_CALL)
			continue;
		cell_text(c, &cells[i], v, sizeof(v));
		if (!c->width) {
			last = (int)i;
			n = text_field(line, sizeof(line), n, c, "");
			break;
		}
		n = text_field(line, sizeof(line), n, c, v);
	}
	if (last >= 0) {
		cell_text(&t->cols[last], &cells[last], v, sizeof(v));
		if ((size_t)n < sizeof(line))
			snprintf(line + n, sizeof(line) - (size_t)n, "%s", v);
		if (t->width && (xp_rep_fit_bytes(line, t->width, &cut), cut) && n > 2) {
			line[n - 2] = '\0';
			xp_rep_put_line(t->out, line, t->width);
			snprintf(line, sizeof(line), "  %s", v);
		}
	}
	xp_rep_put_line(t->out, line, t->width);
	for (size_t i = 0; i < t->n && rc == 0; i++)
		if (t->cols[i].kind == XP_COL_CALL && !cells[i].absent)
			rc = t->cols[i].call(t, &cells[i]);
	return rc;
}

static int row_csv(struct xp_table *t, const struct xp_cell *cells)
{
	char v[64];
	int first = 1, rc = 0;

	for (size_t i = 0; i < t->n && rc == 0; i++) {
		const struct xp_col *c = &t->cols[i];

		if (c->json_only)
			continue;
		if (!first)
			fputc(',', t->out);
		first = 0;
		if (c->kind == XP_COL_TEXT) {
			xp_rep_csv_str(t->out, cells[i].absent ? "" : cells[i].s ? cells[i].s : "");
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

		if (v->absent)
			continue;
		jsonw_key(w, c->json);
		switch (c->kind) {
		case XP_COL_TEXT: jsonw_str(w, v->s ? v->s : ""); break;
		case XP_COL_INT: jsonw_int(w, v->i); break;
		case XP_COL_UINT: jsonw_uint(w, v->u); break;
		case XP_COL_FIXED: jsonw_fixed(w, v->d, c->prec); break;
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

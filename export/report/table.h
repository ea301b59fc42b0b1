/* table.h - a view's table declared once, written in text, csv or json.
 * A column is one row of a declaration (head, csv name, json key, kind,
 * width); a view fills cells row by row and the table writes them in the
 * report's format, as perf's sort_entry columns (util/sort.c). A view's
 * parts are tables too: a row left open holds tables nested in it (json:
 * keys of its object; text: blocks under its line; csv: more rows of one
 * sheet), and its lone values (json keys), sentences (text lines), footer
 * notes and the report's json document go through the table, so that a
 * view never tests the format.
 *
 *   static const struct xp_col cols[] = {
 *       { "Time (%)", NULL, "time_pct", XP_COL_FIXED, 8, 8, 1 },
 *       { "Name", NULL, "name", XP_COL_TEXT, 0, 4 },
 *   };
 *   struct xp_table t = { cols, 2, fmt, out, &json, width };
 *   xp_table_begin(&t, "** Title:");
 *   cells[0].d = 12.5; cells[1].s = "gemm";
 *   xp_table_row(&t, cells);
 *   xp_table_end(&t, shown, rows);
 */
#ifndef XP_TABLE_H
#define XP_TABLE_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "export/render/jsonw.h"
#include "export/report/report.h"

enum xp_col_kind {
	XP_COL_TEXT,                /* a string: quoted in csv */
	XP_COL_INT,                 /* int64_t */
	XP_COL_UINT,                /* uint64_t */
	XP_COL_FIXED,               /* double with prec decimals (ns averages, percents) */
	XP_COL_BOOL,                /* int: json true/false, else 1/0 */
	XP_COL_CALL,                /* written by the column's call (a row's stacks) */
};

struct xp_table;
struct xp_cell;

struct xp_col {
	const char *head;           /* text's head; csv's too unless csv is set */
	const char *csv;            /* csv's header name, NULL: head */
	const char *json;           /* json's key; NULL: not in json */
	enum xp_col_kind kind;
	int width;                  /* text: right-aligned in width, left-aligned in -width;
				     * 0: the row's last field, as is */
	int rule;                   /* text: dashes under the head; -1: none, the previous
				     * column's rule spans this one (a head over several) */
	int prec;                   /* XP_COL_FIXED: decimals */
	unsigned json_only : 1;     /* not in text nor csv (an id for scripts) */
	unsigned csv_only : 1;      /* csv's alone (a section's name, another section's fields) */
	unsigned text_only : 1;     /* text's alone (a share the others can compute) */
	/* XP_COL_CALL: writes the cell. Text: after the row's line; csv: inside
	 * its quoted field; json: the value after the key. 0 or a negative errno. */
	int (*call)(struct xp_table *t, const struct xp_cell *c);
	/* or a call per format where their shapes differ (NULL: call) */
	int (*text_call)(struct xp_table *t, const struct xp_cell *c);
	int (*csv_call)(struct xp_table *t, const struct xp_cell *c);
	int (*json_call)(struct xp_table *t, const struct xp_cell *c);
	const char *obj;            /* json: the key of an object of the row that holds this
				     * column (and the ones next to it with the same obj) */
	int gap;                    /* text: spaces before the field; 0: two */
};

struct xp_cell {
	union {
		const char *s;
		int64_t i;
		uint64_t u;
		double d;
		void *p;            /* XP_COL_CALL's argument */
	};
	int absent;                 /* json: key left out; csv: an empty field (a call's: "");
				     * text: nothing */
	int null;                   /* not known: json null, csv an empty field, text "?" */
};

struct xp_table {
	const struct xp_col *cols;
	size_t n;
	enum xp_report_format fmt;
	FILE *out;
	struct jsonw *json;         /* json: the report's writer, inside its object */
	unsigned width;             /* text: rows cut to this many columns; 0: whole */
	void *ctx;                  /* the view's, for the calls */
	const char *key;            /* json: the rows' key; NULL: "rows" */
	const char *lead;           /* text: before a row's first field; NULL: " " */
	int no_split;               /* text: a long last field is cut, not put on its own line */
	const unsigned char *text_order; /* text: the columns shown, in this order; NULL: all */
	size_t text_n;
	int csv_continues;          /* csv: rows of the table above, under its header */
	/* csv's and json's columns in their order (as text_order); NULL: all */
	const unsigned char *csv_order, *json_order;
	size_t csv_n, json_n;
	const char *more;           /* text: what the rows are ("(N more rows; ...)"); NULL: "rows" */
	const char *more_lead;      /* text: before that line; NULL: " " */
	int more_cut;               /* text: that line cut to the width too */
	int text_lazy;              /* text: title and heads above a first row only (an empty
				     * table writes nothing) */
	int no_heads;               /* text: no heads (rows under another table's row) */
	int tight;                  /* text: the heads right under the title, no blank line */
	int csv_nested;             /* csv: the header only; the rows are the nested tables' */
	size_t text_max;            /* text: a row's bytes before fitting it (0: 1200) */
	FILE *notes;                /* csv: where notes go (stdout stays one table); NULL: none */
	int capped;                 /* text: cap rows at most, the others csv's and json's alone */
	size_t cap;
	/* table.c's */
	const char *pending;        /* text_lazy: the title not written yet */
	int started, in_rows, keyed;
	size_t rows;                /* rows given since the beginning */
};

/* Text: the title's lines (NULL: none), a blank line, the heads and their
 * rules; csv: the header row; json: "rows": [. */
void xp_table_begin(struct xp_table *t, const char *title);
/* One row of t->n cells. 0 or a call's negative errno. */
int xp_table_row(struct xp_table *t, const struct xp_cell *cells);
/* Whether the i-th row (from 0) is written in t's format (capped). */
int xp_table_wants(const struct xp_table *t, size_t i);
/* As xp_table_row, json's object left open: the keys and the tables that
 * follow, until xp_table_row_close, are the row's (nested tables begin with
 * their key). Text and csv: the row as xp_table_row writes it. */
int xp_table_row_open(struct xp_table *t, const struct xp_cell *cells);
void xp_table_row_close(struct xp_table *t);
/* json: the array's end; text: how many rows --top left out of rows. */
void xp_table_end(struct xp_table *t, size_t shown, size_t rows);
/* json: the cells (of t's json columns) as keys of the object the table is
 * in: the view's own values (totals) beside its rows. Text, csv: nothing. */
void xp_table_fields(struct xp_table *t, const struct xp_cell *cells);
/* After xp_table_end: a row apart, json's "key": {row} in the enclosing
 * object; text and csv: a row as the others. */
int xp_table_row_key(struct xp_table *t, const char *key, const struct xp_cell *cells);
/* The same, json's object left open for nested tables (xp_table_row_close). */
int xp_table_row_key_open(struct xp_table *t, const char *key, const struct xp_cell *cells);
/* Text's alone: a line (a note, a block's head), cut to the width; csv
 * and json: nothing. */
void xp_table_text(struct xp_table *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The report's document: json's root object (jsonw set on t->out), its
 * first keys the cells of t's json columns; text and csv: nothing. Its
 * end: json's closing brace and newline; 0 or the writer's error. */
void xp_table_doc_begin(struct xp_table *t, const struct xp_cell *cells);
int xp_table_doc_end(struct xp_table *t);
/* A note (a footer's prose): text's line wrapped at the width, the next
 * lines indented under its text; csv's line to t->notes; json: nothing. */
void xp_table_note(struct xp_table *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void xp_table_vnote(struct xp_table *t, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));
/* Text's "(N more rows; --top 0 shows all)" alone, for rows after the end. */
void xp_table_more(struct xp_table *t, size_t shown, size_t rows);
/* The columns json writes (json_order, else every json column), indices
 * into t->cols in their order: how many, at most XP_TABLE_COLS_MAX. The
 * writer's own choice, for a test that reads the declarations (decl.h). */
#define XP_TABLE_COLS_MAX 64
size_t xp_table_json_cols(const struct xp_table *t, size_t idx[XP_TABLE_COLS_MAX]);

#endif

/* table.h - a view's table declared once, written in text, csv or json.
 * A column is one row of a declaration (head, csv name, json key, kind,
 * width); a view fills cells row by row and the table writes them in the
 * report's format, as perf's sort_entry columns (util/sort.c).
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
	int width;                  /* text: right-aligned in width; 0: the row's last field, as is */
	int rule;                   /* text: dashes under the head */
	int prec;                   /* XP_COL_FIXED: decimals */
	unsigned json_only : 1;     /* not in text nor csv (an id for scripts) */
	unsigned csv_only : 1;      /* csv's alone (a section's name, another section's fields) */
	unsigned text_only : 1;     /* text's alone (a share the others can compute) */
	/* XP_COL_CALL: writes the cell. Text: after the row's line; csv: inside
	 * its quoted field; json: the value after the key. 0 or a negative errno. */
	int (*call)(struct xp_table *t, const struct xp_cell *c);
};

struct xp_cell {
	union {
		const char *s;
		int64_t i;
		uint64_t u;
		double d;
		void *p;            /* XP_COL_CALL's argument */
	};
	int absent;                 /* json: key left out; csv: an empty field (a call's: ""); text: nothing */
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
};

/* Text: the title line (NULL: none), a blank line, the heads and their
 * rules; csv: the header row; json: "rows": [. */
void xp_table_begin(struct xp_table *t, const char *title);
/* One row of t->n cells. 0 or a call's negative errno. */
int xp_table_row(struct xp_table *t, const struct xp_cell *cells);
/* json: the array's end; text: how many rows --top left out of rows. */
void xp_table_end(struct xp_table *t, size_t shown, size_t rows);

#endif

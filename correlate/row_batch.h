/* row_batch.h - bulk INSERT of many small rows, XC_BATCH_ROWS rows per
 * statement: SQLite's per-statement cost (step, reset, VDBE start, journal
 * bookkeeping) is paid once per batch instead of once per row, which is
 * most of the cost of an insert of a few integers.
 *
 *   struct xc_batch b;
 *   xc_batch_init(&b, db, "xp_sample_api(sample_id, api_rowid)", 2);
 *   xc_batch_int(&b, sample_id); xc_batch_int(&b, api_rowid);
 *   if (xc_batch_row(&b) < 0) ...             // after each row's cells
 *   if (xc_batch_flush(&b) < 0) ...           // the last partial batch
 *   xc_batch_free(&b);
 *
 * Text cells are not copied: they must stay valid until the next flush
 * (string literals are).
 */
#ifndef XC_ROW_BATCH_H
#define XC_ROW_BATCH_H

#include <stdint.h>
#include <sqlite3.h>

#define XC_BATCH_ROWS 64
#define XC_BATCH_MAX_COLS 12

enum xc_cell_kind { XC_CELL_INT, XC_CELL_REAL, XC_CELL_TEXT, XC_CELL_NULL };

struct xc_cell {
	enum xc_cell_kind kind;
	int64_t i;
	double r;
	const char *text;           /* not copied */
};

struct xc_batch {
	sqlite3 *db;
	const char *target;         /* "table(col, col, ...)" */
	int ncols;
	int nrows;                  /* complete rows waiting */
	int ncells;                 /* cells of the row being added */
	sqlite3_stmt *full;         /* INSERT of XC_BATCH_ROWS rows, prepared on first use */
	struct xc_cell cells[XC_BATCH_ROWS * XC_BATCH_MAX_COLS];
};

/* target is not copied. 0, or -EINVAL if ncols > XC_BATCH_MAX_COLS (then
 * every row fails). */
int xc_batch_init(struct xc_batch *b, sqlite3 *db, const char *target, int ncols);
void xc_batch_int(struct xc_batch *b, int64_t v);
void xc_batch_null(struct xc_batch *b);
void xc_batch_real(struct xc_batch *b, double v);
void xc_batch_text(struct xc_batch *b, const char *s);
/* Ends a row (its ncols cells added); inserts a full batch. 0 or -EIO. */
int xc_batch_row(struct xc_batch *b);
/* Inserts the rows still waiting. 0 or -EIO (see sqlite3_errmsg). */
int xc_batch_flush(struct xc_batch *b);
void xc_batch_free(struct xc_batch *b);

#endif

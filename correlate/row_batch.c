/* row_batch.c - multi-row INSERT statements; see row_batch.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "correlate/row_batch.h"

int xc_batch_init(struct xc_batch *b, sqlite3 *db, const char *target, int ncols)
{
	int bad = ncols < 1 || ncols > XC_BATCH_MAX_COLS;

	b->db = db;
	b->target = target;
	b->ncols = bad ? -1 : ncols;
	b->nrows = 0;
	b->ncells = 0;
	b->full = NULL;
	return bad ? -EINVAL : 0;
}

static void add(struct xc_batch *b, struct xc_cell c)
{
	/* a row with too many cells is a bug of the caller: keep the buffer safe */
	if (b->ncells < b->ncols)
		b->cells[b->nrows * b->ncols + b->ncells++] = c;
}

void xc_batch_int(struct xc_batch *b, int64_t v)
{
	add(b, (struct xc_cell){ .kind = XC_CELL_INT, .i = v });
}

void xc_batch_real(struct xc_batch *b, double v)
{
	add(b, (struct xc_cell){ .kind = XC_CELL_REAL, .r = v });
}

void xc_batch_null(struct xc_batch *b)
{
	add(b, (struct xc_cell){ .kind = XC_CELL_NULL });
}

void xc_batch_text(struct xc_batch *b, const char *s)
{
	add(b, (struct xc_cell){ .kind = XC_CELL_TEXT, .text = s });
}

/* "INSERT INTO target VALUES (?,?),(?,?),..." for nrows rows. */
static int prepare(struct xc_batch *b, int nrows, sqlite3_stmt **st)
{
	size_t len = strlen(b->target) + 32 + (size_t)nrows * ((size_t)b->ncols * 2 + 3);
	char *sql = malloc(len), *p;
	int rc;

	if (!sql)
		return -ENOMEM;
	p = sql + sprintf(sql, "INSERT INTO %s VALUES", b->target);
	for (int r = 0; r < nrows; r++) {
		*p++ = r ? ',' : ' ';
		*p++ = '(';
		for (int c = 0; c < b->ncols; c++) {
			if (c)
				*p++ = ',';
			*p++ = '?';
		}
		*p++ = ')';
	}
	*p = '\0';
	rc = sqlite3_prepare_v2(b->db, sql, -1, st, NULL);
	free(sql);
	return rc == SQLITE_OK ? 0 : -EIO;
}

static int insert(struct xc_batch *b, sqlite3_stmt *st)
{
	int n = b->nrows * b->ncols, rc;

	for (int i = 0; i < n; i++) {
		const struct xc_cell *c = &b->cells[i];

		switch (c->kind) {
		case XC_CELL_INT: sqlite3_bind_int64(st, i + 1, c->i); break;
		case XC_CELL_REAL: sqlite3_bind_double(st, i + 1, c->r); break;
		case XC_CELL_TEXT: sqlite3_bind_text(st, i + 1, c->text, -1, SQLITE_STATIC); break;
		case XC_CELL_NULL: sqlite3_bind_null(st, i + 1); break;
		}
	}
	rc = sqlite3_step(st);
	sqlite3_reset(st);
	b->nrows = 0;
	return rc == SQLITE_DONE ? 0 : -EIO;
}

int xc_batch_row(struct xc_batch *b)
{
	if (b->ncells != b->ncols)
		return -EINVAL;
	b->ncells = 0;
	if (++b->nrows < XC_BATCH_ROWS)
		return 0;
	if (!b->full && prepare(b, XC_BATCH_ROWS, &b->full) < 0)
		return -EIO;
	return insert(b, b->full);
}

int xc_batch_flush(struct xc_batch *b)
{
	sqlite3_stmt *st;
	int rc;

	if (!b->nrows)
		return 0;
	if ((rc = prepare(b, b->nrows, &st)) < 0)
		return rc;
	rc = insert(b, st);
	sqlite3_finalize(st);
	return rc;
}

void xc_batch_free(struct xc_batch *b)
{
	sqlite3_finalize(b->full);
	b->full = NULL;
	b->nrows = 0;
	b->ncells = 0;
}

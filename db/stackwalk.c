/* stackwalk.c - a stack read from its leaf (stackwalk.h). */
#include "stackwalk.h"

#include <errno.h>
#include <stdlib.h>

#include "array.h"

struct xp_stackwalk {
	sqlite3_stmt *frame;
	unsigned steps;             /* since the walk began: a cycle must end */
	int64_t *kernel_names;      /* sorted StringIds ids of the run's kernel names */
	size_t nkernel_names;
};

static int cmp_id(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

static int load_kernel_names(sqlite3 *db, struct xp_stackwalk *w)
{
	sqlite3_stmt *s;
	size_t cap = 0;
	int rc = 0;

	if (sqlite3_prepare_v2(db, "SELECT DISTINCT demangledName FROM CUPTI_ACTIVITY_KIND_KERNEL"
			       " WHERE demangledName IS NOT NULL", -1, &s, NULL) != SQLITE_OK)
		return 0;           /* no GPU tables: no kernels, no stubs */
	while (rc == 0 && sqlite3_step(s) == SQLITE_ROW) {
		rc = xp_array__reserve((void **)&w->kernel_names, &cap, w->nkernel_names + 1,
				       sizeof(*w->kernel_names), 64);
		if (rc == 0)
			w->kernel_names[w->nkernel_names++] = sqlite3_column_int64(s, 0);
	}
	sqlite3_finalize(s);
	if (w->nkernel_names)
		qsort(w->kernel_names, w->nkernel_names, sizeof(*w->kernel_names), cmp_id);
	return rc;
}

int xp_stackwalk_open(sqlite3 *db, struct xp_stackwalk **out)
{
	struct xp_stackwalk *w = calloc(1, sizeof(*w));
	int rc;

	*out = NULL;
	if (!w)
		return -ENOMEM;
	if (sqlite3_prepare_v2(db, "SELECT n.parent, s.value, f.kind, m.value, f.symbol FROM xp_stacks n"
			       " LEFT JOIN xp_frames f ON f.id = n.frame"
			       " LEFT JOIN StringIds s ON s.id = f.symbol"
			       " LEFT JOIN StringIds m ON m.id = f.module WHERE n.id = ?",
			       -1, &w->frame, NULL) != SQLITE_OK) {
		free(w);
		return -EIO;
	}
	if ((rc = load_kernel_names(db, w)) < 0) {
		xp_stackwalk_close(w);
		return rc;
	}
	*out = w;
	return 0;
}

int xp_stackwalk_next(struct xp_stackwalk *w, int64_t *id, struct xp_frame_row *f)
{
	int64_t sym;

	if (*id <= 0 || w->steps++ >= XP_STACKWALK_MAX_DEPTH)
		return 0;
	sqlite3_reset(w->frame);
	sqlite3_bind_int64(w->frame, 1, *id);
	if (sqlite3_step(w->frame) != SQLITE_ROW)
		return 0;
	*id = sqlite3_column_int64(w->frame, 0);
	f->sym = (const char *)sqlite3_column_text(w->frame, 1);
	f->kind = sqlite3_column_int(w->frame, 2);
	f->module = (const char *)sqlite3_column_text(w->frame, 3);
	sym = sqlite3_column_int64(w->frame, 4);
	f->host_stub = w->nkernel_names && sqlite3_column_type(w->frame, 4) != SQLITE_NULL &&
		       bsearch(&sym, w->kernel_names, w->nkernel_names, sizeof(sym), cmp_id);
	return 1;
}

void xp_stackwalk_done(struct xp_stackwalk *w)
{
	sqlite3_reset(w->frame);
	w->steps = 0;
}

void xp_stackwalk_close(struct xp_stackwalk *w)
{
	if (!w)
		return;
	sqlite3_finalize(w->frame);
	free(w->kernel_names);
	free(w);
}

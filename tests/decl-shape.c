/* decl-shape.c - the declared json shape of `xpcorr report`: every table
 * of export/report/decl.h, its place and its json columns (the writer's
 * choice, xp_table_json_cols) with their kinds, and the views' names, as
 * one json document for check-report-decls.py. */
#include <stdio.h>

#include "export/render/jsonw.h"
#include "export/report/decl.h"
#include "export/report/table.h"
#include "export/report/views.h"

static const char *const kinds[] = {
	[XP_COL_TEXT] = "text", [XP_COL_INT] = "int", [XP_COL_UINT] = "uint",
	[XP_COL_FIXED] = "fixed", [XP_COL_BOOL] = "bool", [XP_COL_CALL] = "call",
};

static void decl(struct jsonw *w, const struct xp_decl *d)
{
	struct xp_table t = { .cols = d->cols, .n = d->n, .json_order = d->json_order,
			      .json_n = d->json_n };
	size_t idx[XP_TABLE_COLS_MAX], n = xp_table_json_cols(&t, idx);

	jsonw_obj_begin(w);
	jsonw_key(w, "view");
	if (d->view)
		jsonw_str(w, d->view);
	else
		jsonw_null(w);
	jsonw_key(w, "at");
	jsonw_str(w, d->at);
	jsonw_key(w, "cols");
	jsonw_arr_begin(w);
	for (size_t j = 0; j < n; j++) {
		const struct xp_col *c = &d->cols[idx[j]];

		jsonw_obj_begin(w);
		jsonw_key(w, "key");
		if (c->json)        /* an order naming a column json cannot write */
			jsonw_str(w, c->json);
		else
			jsonw_null(w);
		jsonw_key(w, "obj");
		if (c->obj)
			jsonw_str(w, c->obj);
		else
			jsonw_null(w);
		jsonw_key(w, "kind");
		jsonw_str(w, kinds[c->kind]);
		jsonw_obj_end(w);
	}
	jsonw_arr_end(w);
	jsonw_obj_end(w);
}

int main(void)
{
	struct jsonw w;

	jsonw_init(&w, stdout);
	jsonw_obj_begin(&w);
	jsonw_key(&w, "views");
	jsonw_arr_begin(&w);
	for (int i = 0; i < XP_BY_COUNT; i++)
		if (xp_views[i].name)
			jsonw_str(&w, xp_views[i].name);
		else
			jsonw_null(&w);
	jsonw_arr_end(&w);
	jsonw_key(&w, "decls");
	jsonw_arr_begin(&w);
	for (size_t f = 0; xp_decls[f]; f++)
		for (const struct xp_decl *d = xp_decls[f]; d->cols; d++)
			decl(&w, d);
	jsonw_arr_end(&w);
	jsonw_obj_end(&w);
	jsonw_newline(&w);
	return jsonw_error(&w) || fflush(stdout) ? 1 : 0;
}

/* runinfo_waits.c - `xpcorr info`'s "wait_lines" (runinfo.h): how many
 * launches of threads without Python ingest placed at the line their
 * Python thread waited in (ingest/waitlines.h), how many it left and why,
 * or that the ingest was told not to (--raw-launch-stacks). */
#include "export/runinfo/runinfo.h"

#include <stdlib.h>
#include <string.h>

/* xp.wait_lines.NAME of META_DATA_EXPORT: 1 and *v, 0 when absent. */
static int fact(sqlite3 *db, const char *name, json_int_t *v)
{
	sqlite3_stmt *st;
	int found = 0;

	if (sqlite3_prepare_v2(db, "SELECT value FROM META_DATA_EXPORT WHERE name = 'xp.wait_lines.'"
			       " || ?1", -1, &st, NULL) != SQLITE_OK)
		return 0;
	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0)) {
		*v = strtoll((const char *)sqlite3_column_text(st, 0), NULL, 10);
		found = 1;
	}
	sqlite3_finalize(st);
	return found;
}

json_t *xp_info_wait_lines(sqlite3 *db)
{
	static const char *const keys[] = { "placed", "no_waiter", "several" };
	json_t *o = NULL;
	json_int_t v;

	if (fact(db, "off", &v) && v) {
		o = json_object();
		json_object_set_new(o, "off", json_true());
		return o;
	}
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		if (!fact(db, keys[i], &v))
			continue;
		if (!o)
			o = json_object();
		json_object_set_new(o, keys[i], json_integer(v));
	}
	return o;               /* NULL: no launch of the run qualified */
}

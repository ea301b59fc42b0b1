/* info_python.c - Python stacks in `xpcorr info`; see info_python.h. */
#include "info_python.h"

#include <stdio.h>
#include <string.h>

static const char *const counts[] = {
	"launches", "with_python", "on_python_threads", "joined_gap", "no_thread",
	"unsupported", "unreadable", "lost_other",
};
#define NCOUNTS (sizeof(counts) / sizeof(counts[0]))

json_t *xp_info_python(sqlite3 *db)
{
	json_t *py = NULL, *procs = NULL;
	json_int_t sum[NCOUNTS] = { 0 };
	sqlite3_stmt *st;

	if (sqlite3_prepare_v2(db, "SELECT pid, python, supported, reason, launches, with_python,"
			       " on_python_threads, joined_gap, no_thread, unsupported, unreadable,"
			       " lost_other FROM xp_python_processes ORDER BY pid", -1, &st, NULL)
	    != SQLITE_OK)
		return NULL;        /* a database of an older xpcorr */
	while (sqlite3_step(st) == SQLITE_ROW) {
		json_t *p = json_object();

		if (!procs)
			procs = json_array();
		json_object_set_new(p, "pid", json_integer(sqlite3_column_int64(st, 0)));
		json_object_set_new(p, "python", sqlite3_column_type(st, 1) == SQLITE_NULL ? json_null() :
				    json_string((const char *)sqlite3_column_text(st, 1)));
		json_object_set_new(p, "supported", sqlite3_column_type(st, 2) == SQLITE_NULL ?
				    json_null() : json_boolean(sqlite3_column_int(st, 2)));
		json_object_set_new(p, "reason", sqlite3_column_type(st, 3) == SQLITE_NULL ? json_null() :
				    json_string((const char *)sqlite3_column_text(st, 3)));
		for (size_t i = 0; i < NCOUNTS; i++) {
			json_int_t v = sqlite3_column_int64(st, 4 + (int)i);

			json_object_set_new(p, counts[i], json_integer(v));
			sum[i] += v;
		}
		json_array_append_new(procs, p);
	}
	sqlite3_finalize(st);
	if (!procs)
		return NULL;
	py = json_object();
	for (size_t i = 0; i < NCOUNTS; i++)
		json_object_set_new(py, counts[i], json_integer(sum[i]));
	json_object_set_new(py, "processes", procs);
	return py;
}

static json_int_t get(const json_t *o, const char *k)
{
	return json_integer_value(json_object_get(o, k));
}

void xp_info_python_print(const json_t *py)
{
	json_int_t all = get(py, "launches"), with = get(py, "with_python");
	json_int_t could = get(py, "on_python_threads");
	json_int_t rest = all - with - get(py, "no_thread") - get(py, "unsupported") -
			  get(py, "unreadable") - get(py, "lost_other");
	const json_t *p;
	size_t i;

	printf("python lines:    %" JSON_INTEGER_FORMAT " of %" JSON_INTEGER_FORMAT
	       " launches on threads that run Python had a Python stack (%.1f%%); %"
	       JSON_INTEGER_FORMAT " launches in all\n", with, could,
	       could ? 100.0 * (double)with / (double)could : 0.0, all);
	printf("  without one:   %" JSON_INTEGER_FORMAT " frames unreadable, %" JSON_INTEGER_FORMAT
	       " lost (no room); not on a Python thread %" JSON_INTEGER_FORMAT
	       ", interpreter not supported %" JSON_INTEGER_FORMAT ", no Python record %"
	       JSON_INTEGER_FORMAT "\n", get(py, "unreadable"), get(py, "lost_other"),
	       get(py, "no_thread"), get(py, "unsupported"), rest > 0 ? rest : 0);
	if (get(py, "joined_gap"))
		printf("  %" JSON_INTEGER_FORMAT " joined above a gap: the native unwind did not reach"
		       " the interpreter's frames (modules missing here?)\n", get(py, "joined_gap"));
	json_array_foreach(json_object_get(py, "processes"), i, p) {
		const char *ver = json_string_value(json_object_get(p, "python"));
		const json_t *sup = json_object_get(p, "supported");
		const char *why = json_string_value(json_object_get(p, "reason"));

		printf("  %8" JSON_INTEGER_FORMAT " Python %s%s%s%s: %" JSON_INTEGER_FORMAT " of %"
		       JSON_INTEGER_FORMAT " launches with a Python stack\n", get(p, "pid"),
		       ver ? ver : "?", json_is_false(sup) ? " not supported" : json_is_null(sup) ?
		       " (no interpreter record)" : "", why ? ": " : "", why ? why : "",
		       get(p, "with_python"), get(p, "launches"));
	}
}

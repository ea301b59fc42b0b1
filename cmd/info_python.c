/* info_python.c - Python stacks in `xpcorr info`; see info_python.h. */
#include "info_python.h"

#include <stdio.h>
#include <string.h>

#include "launch.h"
#include "textesc.h"
#include "launcher.h"

static const char *const counts[] = {
	"launches", "with_python", "on_python_threads", "joined_gap", "no_thread",
	"unsupported", "unreadable", "lost_other",
};
#define NCOUNTS (sizeof(counts) / sizeof(counts[0]))

/* The exactly attributed GPU time by who launched it (launcher.h): from
 * Python, or why not, with the remedy; as the report's footer says. */
static void gpu_time(sqlite3 *db, json_t *py)
{
	int64_t ns[XP_LAUNCHER_KINDS], all = 0;
	int inproc = xp_launcher_inproc(db);
	json_t *by = json_array();
	sqlite3_stmt *st;
	char why[400];

	if (sqlite3_prepare_v2(db, "SELECT a.stack_id, sum(g.end - g.start) FROM " XP_GPU_ROWS
			       " WHERE a.how = 'exact' GROUP BY a.stack_id", -1, &st, NULL) != SQLITE_OK) {
		json_decref(by);
		return;
	}
	if (xp_launcher_shares(db, st, ns)) {
		sqlite3_finalize(st);
		json_decref(by);
		return;
	}
	sqlite3_finalize(st);
	for (int w = 0; w < XP_LAUNCHER_KINDS; w++)
		all += ns[w];
	for (int w = 0; w < XP_LAUNCHER_KINDS; w++) {
		json_t *o;

		if (!ns[w])
			continue;
		o = json_object();
		json_object_set_new(o, "launcher", json_string(xp_launcher_key(w)));
		json_object_set_new(o, "gpu_ns", json_integer(ns[w]));
		json_object_set_new(o, "pct", json_real(all ? 100.0 * (double)ns[w] / (double)all : 0));
		if (w != XP_LAUNCHER_PYTHON) {
			xp_launcher_why(w, inproc, why, sizeof(why));
			json_object_set_new(o, "why", json_string(why));
		}
		json_array_append_new(by, o);
	}
	json_object_set_new(py, "exact_gpu_ns", json_integer(all));
	json_object_set_new(py, "gpu_by_launcher", by);
}

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
	gpu_time(db, py);
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
	json_array_foreach(json_object_get(py, "gpu_by_launcher"), i, p) {
		const char *why = xp_esc(json_string_value(json_object_get(p, "why")));

		printf("  %5.1f%% of the exact GPU time %s\n", json_real_value(json_object_get(p, "pct")),
		       why ? why : "was launched from Python");
	}
	json_array_foreach(json_object_get(py, "processes"), i, p) {
		const char *ver = xp_esc(json_string_value(json_object_get(p, "python")));
		const json_t *sup = json_object_get(p, "supported");
		const char *why = xp_esc(json_string_value(json_object_get(p, "reason")));

		printf("  %8" JSON_INTEGER_FORMAT " Python %s%s%s%s: %" JSON_INTEGER_FORMAT " of %"
		       JSON_INTEGER_FORMAT " launches with a Python stack\n", get(p, "pid"),
		       ver ? ver : "?", json_is_false(sup) ? " not supported" : json_is_null(sup) ?
		       " (no interpreter record)" : "", why ? ": " : "", why ? why : "",
		       get(p, "with_python"), get(p, "launches"));
	}
}

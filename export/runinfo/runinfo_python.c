/* runinfo_python.c - Python stacks in `xpcorr info` (runinfo.h): per process
 * how many launches carry Python frames, or why not; GPU time by launcher;
 * how many CPU samples on Python threads carry Python frames (xpcap's
 * reader), how they were read, or why not. */
#include "export/runinfo/runinfo.h"

#include <stdio.h>
#include <string.h>

#include "db/launch.h"
#include "export/names/launcher.h"
#include "src/satmath.h"

static json_t *launch_side(sqlite3 *db);

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

/* "samples": per process that xpcap's reader looked at; NULL if none (or
 * a database of an older xpcorr). */
static json_t *sampled(sqlite3 *db)
{
	static const char *const cols[] = { "samples", "python_samples", "with_frames" };
	json_int_t sum[3] = { 0 };
	json_t *procs = NULL, *o;
	sqlite3_stmt *st;

	if (sqlite3_prepare_v2(db, "SELECT pid, python, supported, reason, samples, python_samples,"
			       " with_frames FROM xp_python_sampled ORDER BY pid", -1, &st, NULL)
	    != SQLITE_OK)
		return NULL;
	while (sqlite3_step(st) == SQLITE_ROW) {
		json_t *p = json_object();

		if (!procs)
			procs = json_array();
		json_object_set_new(p, "pid", json_integer(sqlite3_column_int64(st, 0)));
		json_object_set_new(p, "python", sqlite3_column_type(st, 1) == SQLITE_NULL ? json_null() :
				    json_string((const char *)sqlite3_column_text(st, 1)));
		json_object_set_new(p, "supported", json_boolean(sqlite3_column_int(st, 2)));
		json_object_set_new(p, "reason", json_string((const char *)sqlite3_column_text(st, 3)));
		for (int i = 0; i < 3; i++) {
			json_int_t v = sqlite3_column_int64(st, 4 + i);

			json_object_set_new(p, cols[i], json_integer(v));
			sum[i] += v;
		}
		json_array_append_new(procs, p);
	}
	sqlite3_finalize(st);
	if (!procs)
		return NULL;
	o = json_object();
	for (int i = 0; i < 3; i++)
		json_object_set_new(o, cols[i], json_integer(sum[i]));
	json_object_set_new(o, "processes", procs);
	return o;
}

json_t *xp_info_python(sqlite3 *db)
{
	json_t *launches = launch_side(db), *samples = sampled(db);

	if (samples) {
		if (!launches)
			launches = json_object();
		json_object_set_new(launches, "cpu_samples", samples);
	}
	return launches;
}

static json_t *launch_side(sqlite3 *db)
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
			sum[i] = xp_sat_add(sum[i], v);     /* a crafted count: no overflow */
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

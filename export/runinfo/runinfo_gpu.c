/* runinfo_gpu.c - the GPU part of `xpcorr info` (runinfo.h): whether GPU
 * capture was armed and, if the run holds no GPU work, why and what to do;
 * devices, kernels, copies, memsets, GPU time, launch records. */
#include "export/runinfo/runinfo.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* A number from sql into *n (NULL, a sum of no rows, is 0): 0, or -EIO. */
static int count(sqlite3 *db, const char *sql, json_int_t *n)
{
	sqlite3_stmt *st;
	int rc;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return -EIO;
	if ((rc = sqlite3_step(st)) == SQLITE_ROW)
		*n = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return rc == SQLITE_ROW ? 0 : -EIO;
}

/* The text of sql's first row, or NULL. */
static json_t *text(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st;
	json_t *v = NULL;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return NULL;
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
		v = json_string((const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	return v;
}

#define META(k) "SELECT value FROM META_DATA_EXPORT WHERE name = 'meta." k "'"

/* meta.json's booleans as the flattened table keeps them */
static bool is_true(const json_t *v)
{
	const char *s = json_string_value(v);

	return s && (!strcmp(s, "1") || !strcmp(s, "true"));
}

static void set(json_t *o, const char *key, json_t *v)
{
	if (v)
		json_object_set_new(o, key, v);
}

/* info describes what it can read: a table a CPU-only or older run lacks
 * (count fails) counts 0, as does a negative sum of a damaged run. */
static void set_count(json_t *o, const char *key, sqlite3 *db, const char *sql)
{
	json_int_t n = 0;

	if (count(db, sql, &n) < 0 || n < 0)
		n = 0;
	json_object_set_new(o, key, json_integer(n));
}

/* Why there is no GPU work, with the remedy: what xpcap knew. */
static void why_empty(json_t *gpu, sqlite3 *db)
{
	json_t *problem = text(db, META("gpu_problem.text"));
	json_t *cuda = text(db, META("cuda_library.path"));
	json_t *armed = text(db, META("gpu_capture_armed"));
	json_t *not_armed = text(db, META("gpu_not_armed"));
	json_t *range = text(db, META("capture_window.range"));
	char why[1024];

	why[0] = '\0';
	if (problem)
		snprintf(why, sizeof(why), "the injection library could not trace: %s",
			 json_string_value(problem));
	else if (not_armed && cuda)
		snprintf(why, sizeof(why), "the program loaded %s, but GPU capture was not armed: %s",
			 json_string_value(cuda), json_string_value(not_armed));
	else if (not_armed)
		snprintf(why, sizeof(why), "GPU capture was not armed: %s", json_string_value(not_armed));
	else if (range)
		snprintf(why, sizeof(why), "--capture-range %s: no GPU work inside the range (did the"
			 " program reach it? %s)", json_string_value(range),
			 strncmp(json_string_value(range), "nvtx:", 5) ?
			 "cudaProfilerStart, torch.cuda.profiler.start()" :
			 "an NVTX range of exactly that name, pushed or started");
	else if (is_true(armed) && cuda)
		snprintf(why, sizeof(why), "the program loaded %s but ran no GPU work while"
			 " traced (no cuInit, or CUDA_INJECTION64_PATH removed from its environment)",
			 json_string_value(cuda));
	if (why[0])
		json_object_set_new(gpu, "why_no_gpu_work", json_string(why));
	json_decref(problem);
	json_decref(cuda);
	json_decref(armed);
	json_decref(not_armed);
	json_decref(range);
}

json_t *xp_info_gpu(sqlite3 *db)
{
	json_t *gpu = json_object(), *armed = text(db, META("gpu_capture_armed"));

	/* null: a run whose meta.json does not say */
	json_object_set_new(gpu, "capture_armed", armed ? json_boolean(is_true(armed)) : json_null());
	json_decref(armed);
	set(gpu, "injection_library", text(db, META("cupti_library")));
	set(gpu, "devices", text(db, "SELECT group_concat(name, ', ') FROM (SELECT DISTINCT name"
				 " FROM TARGET_INFO_GPU ORDER BY id)"));
	set_count(gpu, "kernels", db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL");
	set_count(gpu, "kernel_ns", db, "SELECT sum(end - start) FROM CUPTI_ACTIVITY_KIND_KERNEL");
	set_count(gpu, "copies", db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY");
	set_count(gpu, "copy_ns", db, "SELECT sum(end - start) FROM CUPTI_ACTIVITY_KIND_MEMCPY");
	set_count(gpu, "memsets", db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMSET");
	set_count(gpu, "launch_records", db, "SELECT count(*) FROM xp_launches");
	set_count(gpu, "python_stacks", db, "SELECT sum(with_python) FROM xp_python_processes");
	set(gpu, "capture_range", text(db, META("capture_window.range")));
	set_count(gpu, "windows_opened", db, "SELECT count(*) FROM xp_gpu_status WHERE code = 9"
		  " AND detail = 1");
	if (!json_integer_value(json_object_get(gpu, "kernels")) &&
	    !json_integer_value(json_object_get(gpu, "copies")) &&
	    !json_integer_value(json_object_get(gpu, "memsets")))
		why_empty(gpu, db);
	return gpu;
}

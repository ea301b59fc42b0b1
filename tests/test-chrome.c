/* test-chrome.c - the Chrome trace writer on the synthetic ground truth of
 * gpu-testdb.c (graph launch, copy, lost and rejected launch records), plus
 * a second process on the same GPU stream, a kernel without timestamps, a
 * name that needs escaping and an NVTX range that never ended; correlated by
 * the real join, exported, parsed back with jansson. */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check-main.h"
#include "export/chrome/chrome.h"
#include "export/chrome/chrome_names.h"
#include "correlate/db_join.h"
#include "gpu-testdb.h"

#define OTHER_PID 300
#define ODD_NAME "k<\"odd\">\n"

static char dir[] = "/tmp/xp-chrome-XXXXXX";
static sqlite3 *db;
static struct testdb_sink sink;
static int64_t stream;               /* the truth's first kernel stream */

static void exec(const char *sql)
{
	ck_assert_msg(sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK, "%s: %s", sql,
		      sqlite3_errmsg(db));
}

static int64_t one(const char *sql)
{
	sqlite3_stmt *st;
	int64_t v;

	ck_assert_int_eq(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
	ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
	v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

static void setup(void)
{
	struct xc_summary s;
	char sql[4096];

	ck_assert_ptr_nonnull(mkdtemp(dir));
	db = testdb_open(":memory:");
	ck_assert_ptr_nonnull(db);
	ck_assert_int_eq(testdb_sink_init(&sink, db), 0);
	ck_assert_int_eq(truth_build(db, &sink, dir), 0);
	stream = one("SELECT streamId FROM CUPTI_ACTIVITY_KIND_KERNEL ORDER BY start LIMIT 1");
	/* pid 300 launches on the same device and stream, with correlation id 1,
	 * which pid 100 uses too; a kernel without timestamps; an open range */
	exec("INSERT INTO StringIds(value) VALUES ('" ODD_NAME "'), ('open range'), ('cudaLaunchKernel_x')");
	snprintf(sql, sizeof(sql),
		 "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME(start, end, eventClass, globalTid, correlationId,"
		 " nameId, returnValue, xp_cbid) VALUES (5000000000, 5000010000, 0, (%d << 24) | 301, 1,"
		 " (SELECT id FROM StringIds WHERE value = 'cudaLaunchKernel_x'), 0, 211);"
		 "INSERT INTO xp_launches(ts, pid, tid, cpu, correlation_id, cbid, stack_id)"
		 " VALUES (5000001000, %d, 301, 0, 1, 211, NULL);"
		 "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL(start, end, deviceId, contextId, streamId,"
		 " correlationId, globalPid, demangledName, shortName, gridX, gridY, gridZ, blockX, blockY,"
		 " blockZ, registersPerThread, staticSharedMemory, dynamicSharedMemory) VALUES"
		 " (5000020000, 5000030000, 0, 9, %lld, 1, %d << 24, (SELECT id FROM StringIds WHERE value ="
		 " '" ODD_NAME "'), 1, 2, 1, 1, 64, 1, 1, 40, 128, 256),"
		 " (0, 0, 0, 1, %lld, 77, 100 << 24, 1, 1, 1, 1, 1, 1, 1, 1, 8, 0, 0);"
		 "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET xp_flags = 1 WHERE correlationId = 77;"
		 "INSERT INTO NVTX_EVENTS(start, end, eventType, rangeId, globalTid, textId, domainId)"
		 " VALUES (1000000500, NULL, 60, 9, (100 << 24) | 101,"
		 " (SELECT id FROM StringIds WHERE value = 'open range'), 0);",
		 OTHER_PID, OTHER_PID, (long long)stream, OTHER_PID, (long long)stream);
	exec(sql);
	ck_assert_int_eq(xc_correlate_db(db, &s), 0);
}

static void teardown(void)
{
	char cmd[128];

	testdb_sink_fini(&sink);
	sqlite3_close(db);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);
	strcpy(dir, "/tmp/xp-chrome-XXXXXX");
}

static json_t *export(const struct xp_chrome_opts *o, struct xp_chrome_stats *st)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	json_error_t jerr;
	json_t *t;

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(xp_chrome_write(db, o, f, st), 0);
	fclose(f);
	ck_assert_uint_eq(st->bytes, len);
	t = json_loadb(buf, len, 0, &jerr);
	ck_assert_msg(t != NULL, "not JSON: %s at line %d", jerr.text, jerr.line);
	free(buf);
	return t;
}

static const char *str(json_t *e, const char *key)
{
	return json_string_value(json_object_get(e, key));
}

static int64_t num(json_t *e, const char *key)
{
	return json_integer_value(json_object_get(e, key));
}

static int is(json_t *e, const char *ph, const char *cat)
{
	return !strcmp(str(e, "ph"), ph) && (!cat || (str(e, "cat") && !strcmp(str(e, "cat"), cat)));
}

/* The flow end bound to a GPU slice: same track and time, ph "f". */
static json_t *flow_end_of(json_t *events, json_t *slice)
{
	size_t i;
	json_t *e;

	json_array_foreach(events, i, e)
		if (is(e, "f", "ac2g") && num(e, "pid") == num(slice, "pid") &&
		    num(e, "tid") == num(slice, "tid") &&
		    json_real_value(json_object_get(e, "ts")) == json_real_value(json_object_get(slice, "ts")))
			return e;
	return NULL;
}

START_TEST(kernels_flows_and_tracks)
{
	struct xp_chrome_opts o = { .pid = -1 };
	struct xp_chrome_stats st;
	json_t *t = export(&o, &st), *events = json_object_get(t, "traceEvents"), *e;
	json_t *frames = json_object_get(t, "stackFrames");
	int64_t kernels = 0, graph_ids = 0, s_count = 0, f_count = 0, other_track_named = 0;
	int64_t open_range = 0, odd = 0;
	size_t i;

	ck_assert_uint_eq(json_array_size(events), st.events);
	json_array_foreach(events, i, e) {
		json_t *args = json_object_get(e, "args"), *f;

		if (json_object_get(e, "sf")) {
			char key[24];

			snprintf(key, sizeof(key), "%lld", (long long)num(e, "sf"));
			ck_assert_msg(json_object_get(frames, key), "sf %s not in stackFrames", key);
		}
		s_count += is(e, "s", "ac2g");
		f_count += is(e, "f", "ac2g");
		/* tids of a device's other processes: 32-bit, as viewers read them */
		if (is(e, "M", NULL) && !strcmp(str(e, "name"), "thread_name") &&
		    num(e, "tid") >= 1ll << 31) {
			ck_assert_int_lt(num(e, "tid"), 1ll << 32);
			char want[64];

			snprintf(want, sizeof(want), "stream %lld (pid %d)", (long long)stream, OTHER_PID);
			ck_assert_str_eq(str(args, "name"), want);
			other_track_named++;
		}
		if (is(e, "i", "user_annotation") && !strcmp(str(e, "name"), "open range")) {
			ck_assert(json_is_true(json_object_get(args, "unended")));
			open_range++;
		}
		if (!is(e, "X", "kernel"))
			continue;
		kernels++;
		ck_assert_int_eq(num(e, "pid"), num(args, "device"));
		f = flow_end_of(events, e);
		if (!strcmp(str(e, "name"), ODD_NAME)) {
			/* the second process: its own track, a flow id that cannot collide */
			odd++;
			ck_assert_int_ge(num(e, "tid"), 1ll << 31);
			ck_assert_int_lt(num(e, "tid"), 1ll << 32);
			ck_assert_int_eq(num(args, "correlation"), 1);
			ck_assert_int_eq(num(args, "shared memory"), 128 + 256);
			ck_assert_int_eq(json_integer_value(json_array_get(json_object_get(args, "block"), 0)), 64);
			ck_assert_ptr_nonnull(f);
			ck_assert_int_ge(num(f, "id"), 1ll << 32);
		} else if (json_object_get(args, "graph id")) {
			graph_ids++;            /* 4 nodes of one launch: 4 distinct flows */
			ck_assert_ptr_nonnull(f);
			ck_assert_int_ge(num(f, "id"), 1ll << 32);
		} else if (f) {
			ck_assert_int_eq(num(f, "id"), num(args, "correlation"));
			ck_assert_int_eq(num(e, "tid"), num(args, "stream"));
		}
	}
	ck_assert_int_eq(kernels, one("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE xp_flags = 0"));
	ck_assert_int_eq(odd, 1);
	ck_assert_int_eq(graph_ids, 4);
	ck_assert_int_eq(other_track_named, 1);
	ck_assert_int_eq(open_range, 1);
	ck_assert_int_eq(s_count, (int64_t)st.flows);
	ck_assert_int_eq(f_count, (int64_t)st.flows);
	ck_assert_int_eq((int64_t)st.flows, one("SELECT count(*) FROM xp_attribution WHERE api_rowid IS NOT NULL"));
	json_decref(t);
}
END_TEST

START_TEST(window_drops_flows_from_outside)
{
	/* from just after pid 300's call started to after its kernel: the kernel
	 * is kept, its call and the arrow are not */
	struct xp_chrome_opts o = { .pid = -1, .since = 5000000001, .until = 5000030001 };
	struct xp_chrome_stats st;
	json_t *t = export(&o, &st), *events = json_object_get(t, "traceEvents"), *e;
	int64_t kernels = 0;
	size_t i;

	json_array_foreach(events, i, e) {
		kernels += is(e, "X", "kernel");
		ck_assert(!is(e, "X", "cuda_runtime"));
	}
	ck_assert_int_eq(kernels, 1);
	ck_assert_uint_eq(st.flows, 0);
	json_decref(t);
}
END_TEST

START_TEST(pid_keeps_one_process)
{
	struct xp_chrome_opts o = { .pid = OTHER_PID };
	struct xp_chrome_stats st;
	json_t *t = export(&o, &st), *events = json_object_get(t, "traceEvents"), *e;
	size_t i;

	json_array_foreach(events, i, e) {
		if (is(e, "M", NULL))
			continue;
		if (is(e, "X", "kernel") || is(e, "f", "ac2g"))
			ck_assert_int_eq(num(e, "pid"), 0);
		else
			ck_assert_int_eq(num(e, "pid"), OTHER_PID);
	}
	ck_assert_uint_eq(st.flows, 1);
	json_decref(t);
}
END_TEST

START_TEST(errors_are_returned)
{
	struct xp_chrome_opts o = { .pid = -1 };
	FILE *full = fopen("/dev/full", "w");

	if (full) {
		ck_assert_int_eq(xp_chrome_write(db, &o, full, NULL), -ENOSPC);
		fclose(full);
	}
	exec("DROP TABLE NVTX_EVENTS");
	full = fopen("/dev/null", "w");
	ck_assert_ptr_nonnull(full);
	ck_assert_int_eq(xp_chrome_write(db, &o, full, NULL), -EIO);
	ck_assert_ptr_nonnull(strstr(sqlite3_errmsg(db), "NVTX_EVENTS"));
	fclose(full);
}
END_TEST

/* Each sample keeps its own cpu, whether from the byte per row (cpu 1),
 * looked up past a byte (cpu 300), or with row ids too far apart for the
 * array (every row looked up). */
static void check_sample_cpus(int64_t want_big)
{
	struct xp_chrome_opts o = { .pid = -1 };
	struct xp_chrome_stats st;
	json_t *t = export(&o, &st), *events = json_object_get(t, "traceEvents"), *e;
	int64_t n = 0, big = 0;
	size_t i;

	json_array_foreach(events, i, e) {
		json_t *cpu = json_object_get(json_object_get(e, "args"), "cpu");

		if (!is(e, "i", "cpu_sample"))
			continue;
		n++;
		big += json_integer_value(cpu) == 300;
		ck_assert(json_integer_value(cpu) == 1 || json_integer_value(cpu) == 300);
	}
	ck_assert_int_eq(n, one("SELECT count(*) FROM xp_samples"));
	ck_assert_int_eq(big, want_big);
	json_decref(t);
}

START_TEST(sample_cpus)
{
	exec("UPDATE xp_samples SET cpu = 300 WHERE id = (SELECT min(id) FROM xp_samples)");
	check_sample_cpus(1);
	exec("UPDATE xp_samples SET id = id + (1 << 40) WHERE id = (SELECT max(id) FROM xp_samples)");
	check_sample_cpus(1);
}
END_TEST

/* Ids that share a cache slot evict each other and still get their own
 * names; an unknown id gets the missing name; ids <= 0 are never looked up.
 * The names are the product's StringIds, far above the test run's own. */
START_TEST(names_cache_collisions)
{
	const long long five = 1000LL * NAME_SLOTS + 5;
	struct xp_chrome_names *n;
	char sql[256];

	snprintf(sql, sizeof(sql), "INSERT INTO StringIds VALUES (%lld, 'five'), (%lld, 'five plus slots')",
		 five, five + NAME_SLOTS);
	exec(sql);
	ck_assert_int_eq(xp_chrome_names_new(db, "SELECT value FROM StringIds WHERE id = ?", "none", &n), 0);
	for (int i = 0; i < 3; i++) {
		ck_assert_str_eq(xp_chrome_names_get(n, five), "five");
		ck_assert_str_eq(xp_chrome_names_get(n, five + NAME_SLOTS), "five plus slots");
	}
	ck_assert_str_eq(xp_chrome_names_get(n, five + 1), "none");
	ck_assert_str_eq(xp_chrome_names_get(n, 0), "none");
	ck_assert_int_eq(n->err, 0);
	xp_chrome_names_free(n);
	ck_assert_int_eq(xp_chrome_names_new(db, "SELECT nothing FROM nowhere WHERE id = ?", "", &n), -EIO);
	ck_assert_ptr_null(n);
}
END_TEST

/* Op slices (chrome_ops.c): thread 701 of pid 700 launches from
 * <module>:1 > f:10 > aten::mm (S1), then f:11 (S2), then f:10 twice (S1,
 * S1 again); thread 702 makes a backward launch whose forward frames lie
 * above its note (S5). Stack ids from 900000, frames from 90000. */
static void op_slice_rows(void)
{
	char sql[4096];

	exec("INSERT INTO StringIds(id, value) VALUES (90001, 'prog.py:1 <module>'),"
	     " (90002, 'prog.py:10 f'), (90003, 'prog.py:11 f'),"
	     " (90004, 'at::_ops::mm::call(at::Tensor const&, at::Tensor const&)'),"
	     " (90005, 'at::_ops::mm::redispatch(c10::DispatchKeySet, at::Tensor const&)'),"
	     " (90006, 'cudaLaunchKernel'), (90007, '/w/prog.py'), (90008, 'libtorch_cuda.so'),"
	     " (90009, '\u2039backward: MmBackward0\u203a');"
	     "INSERT INTO xp_frames(id, symbol, module, kind) VALUES (90001, 90001, 90007, 6),"
	     " (90002, 90002, 90007, 6), (90003, 90003, 90007, 6), (90004, 90004, 90008, 0),"
	     " (90005, 90005, 90008, 0), (90006, 90006, 90008, 0), (90009, 90009, 90008, 8);"
	     /* S1 = 900005: mod 900001 > f:10 900002 > mm::call 900003 > redispatch 900004 > launch */
	     "INSERT INTO xp_stacks(id, parent, frame, depth) VALUES (900001, 0, 90001, 0),"
	     " (900002, 900001, 90002, 1), (900003, 900002, 90004, 2), (900004, 900003, 90005, 3),"
	     " (900005, 900004, 90006, 4),"
	     /* S2 = 900015: f:11 */
	     " (900012, 900001, 90003, 1), (900013, 900012, 90004, 2), (900014, 900013, 90005, 3),"
	     " (900015, 900014, 90006, 4),"
	     /* S5 = 900025: f:10 > note > mm::call > launch */
	     " (900023, 900002, 90009, 2), (900024, 900023, 90004, 3), (900025, 900024, 90006, 4);");
	snprintf(sql, sizeof(sql),
		 "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME(start, end, eventClass, globalTid, correlationId,"
		 " nameId, returnValue, xp_cbid) VALUES"
		 " (7000001000, 7000001100, 0, (700 << 24) | 701, 9001, 90006, 0, 211),"
		 " (7000002000, 7000002100, 0, (700 << 24) | 701, 9002, 90006, 0, 211),"
		 " (7000003000, 7000003100, 0, (700 << 24) | 701, 9003, 90006, 0, 211),"
		 " (7000004000, 7000004100, 0, (700 << 24) | 701, 9004, 90006, 0, 211),"
		 " (7000005000, 7000005200, 0, (700 << 24) | 702, 9005, 90006, 0, 211);"
		 "INSERT INTO xp_launches(ts, pid, tid, cpu, correlation_id, cbid, stack_id) VALUES"
		 " (7000001001, 700, 701, 0, 9001, 211, 900005), (7000002001, 700, 701, 0, 9002, 211, 900015),"
		 " (7000003001, 700, 701, 0, 9003, 211, 900005), (7000004001, 700, 701, 0, 9004, 211, 900005),"
		 " (7000005001, 700, 702, 0, 9005, 211, 900025);");
	exec(sql);
}

static double ts_of(json_t *events, const char *name)
{
	size_t i;
	json_t *e;

	json_array_foreach(events, i, e)
		if (!strcmp(str(e, "name"), name))
			return json_number_value(json_object_get(e, "ts"));
	ck_abort_msg("no event %s", name);
	return 0;
}

START_TEST(op_slices)
{
	struct xp_chrome_opts o = { .pid = 700 };
	struct xp_chrome_stats st;
	json_t *t, *events, *e;
	int64_t mod = 0, f = 0, f_at_t0 = 0, mm701 = 0, mm702 = 0, py702 = 0;
	double t0;
	size_t i, first_api = 0, first_op = SIZE_MAX;

	op_slice_rows();
	t = export(&o, &st);
	events = json_object_get(t, "traceEvents");
	t0 = ts_of(events, "prog.py: <module>");       /* the first launch's call */
	json_array_foreach(events, i, e) {
		json_t *args = json_object_get(e, "args");
		double ts = json_number_value(json_object_get(e, "ts"));
		double dur = json_number_value(json_object_get(e, "dur"));
		int64_t launches = num(args, "launches");

		if (is(e, "X", "cuda_runtime") && !first_api)
			first_api = i;
		if (!is(e, "X", "cpu_op") && !is(e, "X", "python_function"))
			continue;
		first_op = i < first_op ? i : first_op;
		if (num(e, "tid") == 702) {
			/* the backward launch: its own op, not its forward frames */
			py702 += is(e, "X", "python_function");
			mm702 += !strcmp(str(e, "name"), "aten::mm");
			continue;
		}
		if (!strcmp(str(e, "name"), "prog.py: <module>")) {
			mod++;
			ck_assert_int_eq(launches, 4);
			ck_assert_double_eq_tol(dur, 3.1, 1e-6);      /* first call start to last call end */
		} else if (!strcmp(str(e, "name"), "prog.py: f")) {
			/* f:10, f:11, then f:10 again: its line went back, a second slice */
			int second = ts > t0 + 1.5;

			f++;
			f_at_t0 += !second;
			ck_assert_int_eq(launches, 2);
			ck_assert_double_eq_tol(dur, 1.1, 1e-6);
			ck_assert_double_eq_tol(ts, t0 + (second ? 2.0 : 0.0), 1e-6);
			ck_assert_int_eq(num(args, "first_line"), 10);
			ck_assert_int_eq(num(args, "last_line"), second ? 10 : 11);
		} else {
			/* one launch each: a new caller line, or the same launch stack again */
			ck_assert_str_eq(str(e, "name"), "aten::mm");
			ck_assert_int_eq(launches, 1);
			ck_assert_double_eq_tol(dur, 0.1, 1e-6);
			mm701++;
		}
		/* a parent before the children that start with it */
		if (ts == t0 && !strcmp(str(e, "name"), "aten::mm"))
			ck_assert_int_eq(mod * 10 + f_at_t0, 11);
		if (ts == t0 && !strcmp(str(e, "name"), "prog.py: f"))
			ck_assert_int_eq(mod, 1);
	}
	ck_assert_int_eq(mod, 1);
	ck_assert_int_eq(f, 2);
	ck_assert_int_eq(mm701, 4);
	ck_assert_int_eq(mm702, 1);
	ck_assert_int_eq(py702, 0);
	ck_assert_uint_lt(first_op, first_api);       /* before the calls' slices of the same span */
	json_decref(t);
}
END_TEST

static Suite *chrome_suite(void)
{
	Suite *s = suite_create("chrome");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, kernels_flows_and_tracks);
	tcase_add_test(tc, window_drops_flows_from_outside);
	tcase_add_test(tc, pid_keeps_one_process);
	tcase_add_test(tc, errors_are_returned);
	tcase_add_test(tc, names_cache_collisions);
	tcase_add_test(tc, sample_cpus);
	tcase_add_test(tc, op_slices);
	suite_add_tcase(s, tc);
	return s;
}

XP_CHECK_MAIN(chrome_suite)

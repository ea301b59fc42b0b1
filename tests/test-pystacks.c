/* test-pystacks.c - ingest of launches with Python stacks (synthetic runs
 * over the real fixture ELF files and the real line tables of each
 * interpreter, gen-run python): the Python lines stand in place of the
 * interpreter's frames, above the gap frame where the unwind stopped short;
 * the counts of xp_python_processes; damaged Python records are skipped with
 * a warning, a stack naming a code object never recorded keeps its place. */
#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check-main.h"
#include "db/stackwalk.h"
#include "ingest/ingest.h"
#include "src/runfile.h"
#include "src/runfmt_py.h"
#include "synthrun.h"

static const char *const versions[] = { "3.10", "3.11", "3.12", "3.13" };
static struct xp_synth fx;
static char dir[64], db_path[128];

static void setup(void)
{
	fx.exe = getenv("XP_FIXTURE_EXE");
	fx.lib = getenv("XP_FIXTURE_LIB");
	ck_assert_msg(fx.exe && fx.lib, "XP_FIXTURE_EXE/LIB not set (run through meson test)");
	ck_assert_int_eq(xp_synth_load_elves(&fx), 0);
	strcpy(dir, "/tmp/xp-test-pystacks-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(db_path, sizeof(db_path), "%s/xpcorr.db", dir);
}

static void teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}

static void write_run(int v)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/lines-%s.txt", getenv("XP_PYLINES_DIR"), versions[v]);
	ck_assert_int_eq(xp_synth_write_python(&fx, dir, path), 0);
}

static void ingest(struct xp_load_result *res)
{
	struct xp_load_opts o = { .run_dir = dir };

	ck_assert_msg(xp_ingest(&o, res) == 0, "%s", res->error);
}

/* The frames of launch corr's stack, leaf first, "KIND:name" joined by '|'. */
static void stack_text(int64_t corr, char *buf, size_t len)
{
	struct xp_stackwalk *w;
	struct xp_frame_row f;
	sqlite3 *db;
	sqlite3_stmt *st;
	int64_t node;
	size_t used = 0;

	ck_assert_int_eq(sqlite3_open_v2(db_path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	ck_assert_int_eq(sqlite3_prepare_v2(db, "SELECT stack_id FROM xp_launches WHERE"
					    " correlation_id = ?", -1, &st, NULL), SQLITE_OK);
	sqlite3_bind_int64(st, 1, corr);
	ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
	node = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	/* as every reader names them: a Python line from its columns */
	ck_assert_int_eq(xp_stackwalk_open(db, &w), 0);
	buf[0] = '\0';
	while (xp_stackwalk_next(w, &node, &f)) {
		ck_assert(f.kind != 6 || f.py || !strcmp(f.sym, "[python code not recorded]"));
		used += (size_t)snprintf(buf + used, used < len ? len - used : 0, "%s%d:%s",
					 used ? "|" : "", f.kind, f.sym);
	}
	xp_stackwalk_close(w);
	sqlite3_close(db);
}

static int64_t query(const char *sql)
{
	sqlite3 *db;
	sqlite3_stmt *st;
	int64_t v = -1;

	ck_assert_int_eq(sqlite3_open_v2(db_path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	ck_assert_int_eq(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	sqlite3_close(db);
	return v;
}

/* 3.10 names the frame by co_name */
static const char *fwd(int v)
{
	return v == 0 ? "6:sample.py:396 forward" : "6:sample.py:396 Model.forward";
}

START_TEST(spliced_in_place)
{
	struct xp_load_result res;
	char got[4096], want[4096];

	write_run(_i);
	ingest(&res);
	ck_assert_uint_eq(res.nwarnings, 0);
	/* every activation's frame gives way to its Python frames, the
	 * trampolines (3.12+) go, the C frames between stay */
	stack_text(1, got, sizeof(got));
	if (_i == 0)
		snprintf(want, sizeof(want), "0:xp_lib_leaf|0:xp_lib_middle|6:sample.py:10 leaf|0:xp_parse|"
			 "%s|0:xp_parse|6:sample.py:448 main|0:xp_parse|6:sample.py:454 <module>|0:main",
			 fwd(_i));
	else
		snprintf(want, sizeof(want), "0:xp_lib_leaf|0:xp_lib_middle|6:sample.py:10 leaf|%s|"
			 "0:xp_parse|6:sample.py:448 main|6:sample.py:454 <module>|0:main", fwd(_i));
	ck_assert_str_eq(got, want);
	/* the unwind stopped in the framework: all Python frames above the gap */
	stack_text(4, got, sizeof(got));
	snprintf(want, sizeof(want), "0:xp_lib_leaf|0:xp_lib_middle|7:[native frames not unwound]|"
		 "6:sample.py:10 leaf|%s|6:sample.py:448 main|6:sample.py:454 <module>", fwd(_i));
	ck_assert_str_eq(got, want);
	/* no Python stack: the native one as unwound (3.12+: with py:: frames) */
	stack_text(7, got, sizeof(got));
	ck_assert_ptr_nonnull(strstr(got, "0:_PyEval_EvalFrameDefault"));
	ck_assert_ptr_null(strstr(got, "6:"));
	ck_assert_int_eq(query("SELECT count(*) FROM xp_frames WHERE kind = 6"), 4);
	ck_assert_int_eq(query("SELECT count(*) FROM xp_frame_names WHERE kind = 6 AND"
			       " module = '/app/sample.py'"), 4);
	/* as data: the qualified name, the file and the line in their columns */
	ck_assert_int_eq(query("SELECT count(*) FROM xp_frame_names WHERE kind = 6 AND"
			       " symbol = 'leaf' AND line = 10"), 1);
	ck_assert_int_eq(query("SELECT launches * 1000000 + with_python * 10000 + joined_gap * 1000"
			       " + on_python_threads * 100 + no_thread * 10 + unreadable"
			       " FROM xp_python_processes WHERE pid = 4000"), 7052611);
	ck_assert_int_eq(query("SELECT value FROM META_DATA_EXPORT WHERE name = 'xp.python.with_python'"), 5);
	ck_assert_int_eq(query("SELECT count(*) FROM xp_record_counts WHERE kind = 'pystack'"), 1);
	ck_assert_int_eq(query("SELECT count(*) FROM xp_losses WHERE kind = 'pystack' AND"
			       " reason IN ('python_no_thread', 'python_unreadable')"), 2);
}
END_TEST

/* A run without any Python record has no rows, and the schema still has the table. */
START_TEST(no_python_no_rows)
{
	struct xp_load_result res;

	ck_assert_int_eq(xp_synth_write_golden(&fx, dir), 0);
	ingest(&res);
	ck_assert_int_eq(query("SELECT count(*) FROM xp_python_processes"), 0);
	ck_assert_int_eq(query("SELECT count(*) FROM META_DATA_EXPORT WHERE name GLOB 'xp.python.*'"), 0);
	ck_assert_int_eq(query("SELECT count(*) FROM xp_frames WHERE kind IN (6, 7)"), 0);
}
END_TEST

/* Appends records to the run's launch stream (a second file of the same
 * process: ingest reads both). */
static void append_stream(void (*fill)(struct xp_writer *w))
{
	struct xp_writer *w;
	char path[4096];

	snprintf(path, sizeof(path), "%s/launch-4000-extra.xpr", dir);
	ck_assert_int_eq(xp_writer_open(&w, path, XP_STREAM_CPU, 4000), 0);
	fill(w);
	ck_assert_int_eq(xp_writer_close(w), 0);
}

static void damaged(struct xp_writer *w)
{
	struct xp_pystack ps = { .correlation_id = 2, .pid = 4000, .tid = 4000, .nframes = 3 };
	struct xp_pyframe f = { .code_id = 1, .instr_offset = 2 };
	struct xp_pycode c = { .code_id = 77, .pid = 4000, .py_version = 0x030c,
			       .filename_len = 500, .qualname_len = 1 };
	struct xp_pyinfo in = { .pid = 4000, .reason_len = 200 };

	/* claims 3 frames, holds 1; a code object shorter than its strings; an
	 * info record shorter than its reason */
	ck_assert_int_eq(xp_writer_append(w, XP_REC_PYSTACK, &ps, sizeof(ps), &f, sizeof(f)), 0);
	ck_assert_int_eq(xp_writer_append(w, XP_REC_PYCODE, &c, sizeof(c), "x.py", 4), 0);
	ck_assert_int_eq(xp_writer_append(w, XP_REC_PYINFO, &in, sizeof(in), "why", 3), 0);
	/* more frames than any record may hold */
	ps.nframes = XP_PY_MAX_FRAMES + 1;
	ck_assert_int_eq(xp_writer_append(w, XP_REC_PYSTACK, &ps, sizeof(ps), NULL, 0), 0);
}

START_TEST(damaged_records_skipped)
{
	struct xp_load_result res;
	char got[4096];

	write_run(2);
	append_stream(damaged);
	ingest(&res);
	ck_assert_uint_eq(res.nwarnings, 4);
	ck_assert_ptr_nonnull(strstr(res.warnings[0], "malformed pystack record skipped"));
	ck_assert_ptr_nonnull(strstr(res.warnings[1], "malformed pycode record skipped"));
	ck_assert_ptr_nonnull(strstr(res.warnings[2], "malformed pyinfo record skipped"));
	/* launch 2 keeps the stack its own stream gave it */
	stack_text(2, got, sizeof(got));
	ck_assert_ptr_nonnull(strstr(got, "6:sample.py:10 leaf|6:sample.py:396 Model.forward"));
}
END_TEST

static void unknown_code(struct xp_writer *w)
{
	struct xp_launch l = { .ts = 5, .correlation_id = 900, .pid = 4000, .tid = 4000 };
	struct xp_pystack ps = { .correlation_id = 900, .pid = 4000, .tid = 4000, .nframes = 1 };
	struct xp_pyframe f = { .code_id = 0xdead, .instr_offset = 2, .flags = XP_PYFRAME_ENTRY };

	ck_assert_int_eq(xp_writer_append(w, XP_REC_LAUNCH, &l, sizeof(l), NULL, 0), 0);
	ck_assert_int_eq(xp_writer_append(w, XP_REC_PYSTACK, &ps, sizeof(ps), &f, sizeof(f)), 0);
}

/* A frame whose code object was never written (lost) keeps its place, named
 * for what it is. */
START_TEST(code_not_recorded)
{
	struct xp_load_result res;
	char got[4096];

	write_run(3);
	append_stream(unknown_code);
	ingest(&res);
	stack_text(900, got, sizeof(got));
	ck_assert_str_eq(got, "7:[native frames not unwound]|6:[python code not recorded]");
}
END_TEST

static Suite *pystacks_suite(void)
{
	Suite *s = suite_create("pystacks");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_loop_test(tc, spliced_in_place, 0, 4);
	tcase_add_test(tc, no_python_no_rows);
	tcase_add_test(tc, damaged_records_skipped);
	tcase_add_test(tc, code_not_recorded);
	suite_add_tcase(s, tc);
	return s;
}

XP_CHECK_MAIN(pystacks_suite)

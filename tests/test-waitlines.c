/* test-waitlines.c - launches of threads without Python at the line their
 * Python thread waited in (ingest/waitlines.h), on a crafted database:
 * process 7's main thread (tid 100) blocks in backend_compile_and_load
 * under train.py:59 while runtime threads (tids 200, 210) launch; a second
 * Python thread (tid 300) blocks at worker.py:7 late in the run; process
 * 8 has no Python at all. Then what the exports make of the new stacks:
 * the footer's Python reach, who launched it, the site's name. */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check-main.h"
#include "db/db_schema.h"
#include "export/names/launcher.h"
#include "export/names/launchsite.h"
#include "export/names/pyreach.h"
#include "ingest/ingest.h"
#include "ingest/waitlines.h"
#include "src/runfile.h"
#include "synthrun.h"

static sqlite3 *db;

/* frames; a Python line's module is its file (db/pyframe.h) */
enum { F_START = 1, F_MAIN, F_COMPILE, F_COND, F_SCHED, F_CLONE, F_XLA, F_LAUNCH, F_WORKER,
       F_NOTE, F_TIMER, F_LAST = F_TIMER };
static const struct { const char *sym; int kind, module, line; } frames[] = { { NULL, 0, 0, 0 },
	{ "_start", XP_FRAME_USER, 90, 0 },
	{ "main", XP_FRAME_PYTHON, 91, 59 },
	{ "backend_compile_and_load", XP_FRAME_PYTHON, 92, 395 },
	{ "pthread_cond_wait", XP_FRAME_USER, 93, 0 },
	{ "schedule", XP_FRAME_KERNEL, 94, 0 },
	{ "clone3", XP_FRAME_USER, 93, 0 },
	{ "xla::gpu::AutotunerUtil::Autotune", XP_FRAME_USER, 95, 0 },
	{ "cudaLaunchKernel", XP_FRAME_USER, 96, 0 },
	{ "loop", XP_FRAME_PYTHON, 97, 7 },
	{ "\u2039backward: AddmmBackward0\u203a", XP_FRAME_NOTE, 98, 0 },
	{ "Event.wait", XP_FRAME_PYTHON, 99, 655 } };

/* stacks, root first; their leaves are the ids below */
static const int chains[][5] = {
	{ F_START, F_MAIN, F_COMPILE, F_COND, F_SCHED },    /* 1..5: main's wait */
	{ F_CLONE, F_XLA, F_LAUNCH },                       /* 6..8: a runtime launch */
	{ F_START, F_WORKER, F_COND },                      /* 9..11: the worker's wait */
	{ F_START, F_MAIN, F_LAUNCH },                      /* 12..14: main's own launch */
	{ F_CLONE, F_XLA, F_LAUNCH, F_NOTE },               /* 15..18: placed by the join */
	{ F_CLONE, F_COND },                                /* 19..20: a runtime thread's sample */
	{ F_START, F_TIMER, F_COND },                       /* 21..23: a timer thread's wait */
};
enum { S_WAIT = 5, S_RUNTIME = 8, S_WORKER = 11, S_MAIN = 14, S_NOTED = 18, S_SAMPLE = 20,
       S_TIMER = 23 };

static void exec(const char *sql)
{
	char *err = NULL;

	ck_assert_msg(sqlite3_exec(db, sql, NULL, NULL, &err) == SQLITE_OK, "%s: %s", sql, err);
}

static long long q1(const char *sql)
{
	sqlite3_stmt *st;
	long long v = -1;

	ck_assert_int_eq(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

static void build(void)
{
	char sql[512], line[16];
	int node = 0;

	ck_assert_int_eq(sqlite3_open(":memory:", &db), SQLITE_OK);
	ck_assert_int_eq(xp_db_create_schema(db), SQLITE_OK);
	ck_assert_int_eq(xp_gpu_schema_create(db), 0);
	exec("INSERT INTO StringIds(id, value) VALUES (90, '/usr/bin/python3.12'),"
	     " (91, '/home/u/train.py'), (92, '/venv/site-packages/jax/_src/compiler.py'),"
	     " (93, '/usr/lib/x86_64-linux-gnu/libc.so.6'), (94, '[kernel]'),"
	     " (95, '/venv/site-packages/jaxlib/libjax_common.so'), (96, '/usr/lib/libcudart.so.13'),"
	     " (97, '/home/u/worker.py'), (98, '[autograd]'), (99, '/usr/lib/python3.12/threading.py'),"
	     " (80, 'python3'), (81, 'tf_XLAEigen')");
	for (int f = 1; f <= F_LAST; f++) {
		snprintf(line, sizeof(line), frames[f].kind == XP_FRAME_PYTHON ? "%d" : "NULL",
			 frames[f].line);
		snprintf(sql, sizeof(sql), "INSERT INTO StringIds(id, value) VALUES (%d, '%s');"
			 "INSERT INTO xp_frames(id, symbol, module, kind, line) VALUES (%d, %d, %d, %d, %s)",
			 f, frames[f].sym, f, f, frames[f].module, frames[f].kind, line);
		exec(sql);
	}
	for (size_t c = 0; c < sizeof(chains) / sizeof(chains[0]); c++)
		for (int i = 0, parent = 0; i < 5 && chains[c][i]; i++, parent = node) {
			snprintf(sql, sizeof(sql), "INSERT INTO xp_stacks(id, parent, frame, depth)"
				 " VALUES (%d, %d, %d, %d)", ++node, parent, chains[c][i], i + 1);
			exec(sql);
		}
	/* tid 200 has its own name; the others kept the process's */
	exec("INSERT INTO ThreadNames(nameId, priority, globalTid) VALUES"
	     " (80, 0, 7 << 24 | 100), (81, 0, 7 << 24 | 200), (80, 0, 7 << 24 | 210),"
	     " (80, 0, 7 << 24 | 300)");
	/* main blocks in [1000, 2000) and [5000, 6000), is preempted in [3000, 4000);
	 * the worker blocks in [5000, 6000); the runtime thread only at native frames */
	exec("INSERT INTO xp_switches(ts, duration, pid, tid, cpu, prev_state, stack_id) VALUES"
	     " (1000, 1000, 7, 100, 0, 1, 5), (3000, 1000, 7, 100, 0, 0, 5),"
	     " (5000, 1000, 7, 100, 0, 1, 5), (5000, 1000, 7, 300, 1, 1, 11),"
	     " (1000, 500, 7, 200, 2, 1, 20), (1000, 5000, 8, 800, 3, 1, 20),"
	     /* a timer thread of 7 that launches nothing sleeps throughout; so
	      * does process 9's only Python thread */
	     " (1000, 8000, 7, 500, 3, 1, 23), (1000, 1000, 9, 900, 0, 1, 23)");
	exec("INSERT INTO xp_samples(ts, pid, tid, cpu, stack_id, period) VALUES"
	     " (900, 7, 200, 2, 20, 1), (900, 7, 100, 0, 14, 1)");
	exec("INSERT INTO xp_launches(id, ts, pid, tid, cpu, correlation_id, cbid, stack_id) VALUES"
	     " (1, 1500, 7, 200, 2, 1, 211, 8),"       /* main waits: placed */
	     " (2, 2500, 7, 200, 2, 2, 211, 8),"       /* main on CPU: left */
	     " (3, 3500, 7, 200, 2, 3, 211, 8),"       /* main preempted: left */
	     " (4, 5500, 7, 200, 2, 4, 211, 8),"       /* main and the worker wait: left */
	     " (5, 1600, 7, 210, 2, 5, 211, NULL),"    /* no stack, main waits: placed */
	     " (6, 1700, 7, 300, 1, 6, 211, 8),"       /* a Python thread: its own */
	     " (7, 1800, 7, 400, 2, 7, 211, 18),"      /* placed by the backward join */
	     " (8, 500, 7, 100, 0, 8, 211, 14),"       /* main's own, in Python */
	     " (9, 1500, 8, 800, 3, 9, 211, 8),"       /* a process without Python */
	     " (10, 1500, 9, 901, 1, 10, 211, 8)");    /* 9's Python thread waits: placed */
}

static long long stack_of(int launch)
{
	char sql[96];

	snprintf(sql, sizeof(sql), "SELECT ifnull(stack_id, -1) FROM xp_launches WHERE id = %d", launch);
	return q1(sql);
}

/* A stack's frames as text, leaf first: "8 7 6 [note] 3 2 1". */
static const char *frames_of(long long stack, char *buf, size_t len)
{
	sqlite3_stmt *st;
	size_t n = 0;

	buf[0] = 0;
	ck_assert_int_eq(sqlite3_prepare_v2(db, "SELECT s.parent, s.frame, f.kind, y.value FROM xp_stacks s"
					    " JOIN xp_frames f ON f.id = s.frame JOIN StringIds y"
					    " ON y.id = f.symbol WHERE s.id = ?1", -1, &st, NULL), SQLITE_OK);
	for (int depth = 0; stack > 0 && depth < 50; depth++) {
		sqlite3_bind_int64(st, 1, stack);
		ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
		if (sqlite3_column_int(st, 2) == XP_FRAME_NOTE)
			n += (size_t)snprintf(buf + n, len - n, "%s[%s]", n ? " " : "", sqlite3_column_text(st, 3));
		else
			n += (size_t)snprintf(buf + n, len - n, "%s%lld", n ? " " : "",
					      (long long)sqlite3_column_int64(st, 1));
		stack = sqlite3_column_int64(st, 0);
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
	return buf;
}

static long long fact(const char *name)
{
	char sql[160];

	snprintf(sql, sizeof(sql), "SELECT CAST(value AS INTEGER) FROM META_DATA_EXPORT WHERE"
		 " name = 'xp.wait_lines.%s'", name);
	return q1(sql);
}

START_TEST(placed_at_waiting_line)
{
	struct xp_wait_lines n;
	char buf[600];

	build();
	ck_assert_int_eq(xp_wait_lines(db, &n), 0);
	ck_assert_int_eq(n.placed, 3);
	ck_assert_int_eq(n.no_waiter, 2);
	ck_assert_int_eq(n.several, 1);
	ck_assert_int_eq(fact("placed"), 3);
	ck_assert_int_eq(fact("no_waiter"), 2);
	ck_assert_int_eq(fact("several"), 1);

	/* main's line down to its innermost Python frame (the wait's native
	 * frames dropped), the note, the launch's own frames as they were */
	ck_assert_str_eq(frames_of(stack_of(1), buf, sizeof(buf)), "8 7 6 [[launched by runtime thread"
			 " tf_XLAEigen while this line waited]] 3 2 1");
	ck_assert_int_eq(q1("SELECT depth FROM xp_stacks WHERE id = (SELECT stack_id FROM xp_launches"
			    " WHERE id = 1)"), 7);
	ck_assert_int_eq(q1("SELECT count(*) FROM xp_frames f JOIN StringIds y ON y.id = f.module"
			    " WHERE f.kind = 8 AND y.value = '[waits]'"), 2);
	/* no stack of its own: the line and the note; a name like the waiter's says nothing */
	ck_assert_str_eq(frames_of(stack_of(5), buf, sizeof(buf)), "[[launched by a runtime thread"
			 " while this line waited]] 3 2 1");
	/* a process whose Python threads launch nothing: any of them waits for it */
	ck_assert_str_eq(frames_of(stack_of(10), buf, sizeof(buf)), "8 7 6 [[launched by a runtime"
			 " thread while this line waited]] 11 1");
	/* left: main on CPU (the timer's sleep is not a line that hands work
	 * over), main preempted, two threads that launch waiting */
	ck_assert_int_eq(stack_of(2), S_RUNTIME);
	ck_assert_int_eq(stack_of(3), S_RUNTIME);
	ck_assert_int_eq(stack_of(4), S_RUNTIME);
	/* untouched, not counted: a Python thread's, another pass's, main's
	 * own, a process that never waited in Python */
	ck_assert_int_eq(stack_of(6), S_RUNTIME);
	ck_assert_int_eq(stack_of(7), S_NOTED);
	ck_assert_int_eq(stack_of(8), S_MAIN);
	ck_assert_int_eq(stack_of(9), S_RUNTIME);

	/* again: nothing more to place, the same stacks, the counts replaced */
	long long placed = stack_of(1);

	ck_assert_int_eq(xp_wait_lines(db, &n), 0);
	ck_assert_int_eq(n.placed, 0);
	ck_assert_int_eq(n.no_waiter, 2);
	ck_assert_int_eq(stack_of(1), placed);
	ck_assert_int_eq(q1("SELECT count(*) FROM META_DATA_EXPORT WHERE name = 'xp.wait_lines.placed'"), 1);
	ck_assert_int_eq(fact("placed"), 0);
	sqlite3_close(db);
}
END_TEST

/* What the exports make of it: GPU time at a waiting line is counted
 * apart from launch stacks taken in Python, named by its line. */
START_TEST(exports_tell_it_apart)
{
	struct xp_wait_lines n;
	struct xp_python_reach r;
	struct xp_sites *sites;
	int64_t ns[XP_LAUNCHER_KINDS];
	sqlite3_stmt *rows;
	const char *rows_sql = "SELECT stack_id, CASE id WHEN 1 THEN 100 WHEN 8 THEN 50 ELSE 7 END"
			       " FROM xp_launches WHERE id IN (1, 8, 2)";

	build();
	ck_assert_int_eq(xp_wait_lines(db, &n), 0);
	ck_assert_int_eq(sqlite3_prepare_v2(db, rows_sql, -1, &rows, NULL), SQLITE_OK);
	ck_assert_int_eq(xp_python_reach(db, rows, &r), 0);
	ck_assert_int_eq(r.gpu_ns, 157);
	ck_assert_int_eq(r.waited_ns, 100);
	ck_assert_int_eq(r.python_ns, 50);
	ck_assert_int_eq(r.line_ns, 50);
	sqlite3_reset(rows);
	ck_assert_int_eq(xp_launcher_shares(db, rows, ns), 0);
	ck_assert_int_eq(ns[XP_LAUNCHER_WAITED], 100);
	ck_assert_int_eq(ns[XP_LAUNCHER_PYTHON], 50);
	ck_assert_int_eq(ns[XP_LAUNCHER_XLA], 7);
	sqlite3_finalize(rows);

	ck_assert_int_eq(xp_sites_new(db, &sites), 0);
	/* both placed at a waiting line: said in the site */
	ck_assert_str_eq(xp_sites_get(sites, stack_of(1)), "compiler.py:395 backend_compile_and_load"
			 " \u2039launched while it waited\u203a");
	ck_assert_str_eq(xp_sites_get(sites, S_RUNTIME), "XLA runtime");
	xp_sites_prefer_own(sites);
	ck_assert_str_eq(xp_sites_get(sites, stack_of(5)), "train.py:59 main \u2039launched while it waited\u203a");
	xp_sites_free(sites);
	sqlite3_close(db);
}
END_TEST

/* Before the pass (ingest --raw-launch-stacks), the same rows are XLA's. */
START_TEST(raw_stacks_stay_xla)
{
	struct xp_python_reach r;
	sqlite3_stmt *rows;

	build();
	ck_assert_int_eq(xp_wait_lines_off(db), 0);
	ck_assert_int_eq(fact("off"), 1);
	ck_assert_int_eq(sqlite3_prepare_v2(db, "SELECT stack_id, 100 FROM xp_launches WHERE id = 1",
					    -1, &rows, NULL), SQLITE_OK);
	ck_assert_int_eq(xp_python_reach(db, rows, &r), 0);
	ck_assert_int_eq(r.waited_ns, 0);
	ck_assert_int_eq(r.python_ns, 0);
	sqlite3_finalize(rows);
	ck_assert_int_eq(stack_of(1), S_RUNTIME);
	sqlite3_close(db);
}
END_TEST

/* A run without Python frames, or without voluntary waits: nothing read,
 * nothing written. */
START_TEST(nothing_to_place)
{
	struct xp_wait_lines n;

	build();
	exec("UPDATE xp_switches SET prev_state = 0");
	ck_assert_int_eq(xp_wait_lines(db, &n), 0);
	ck_assert_int_eq(n.placed + n.no_waiter + n.several, 0);
	ck_assert_int_eq(q1("SELECT count(*) FROM META_DATA_EXPORT WHERE name GLOB 'xp.wait_lines.*'"), 0);
	ck_assert_int_eq(stack_of(1), S_RUNTIME);
	sqlite3_close(db);
}
END_TEST

/* Through ingest, on a synthetic Python 3.12 run (gen-run python: its
 * perf map names the interpreter's frames py::FUNC:FILE): the launch of
 * pt_worker, a thread without Python, while the main thread sleeps under
 * py::Model.forward (a stream of its own: the run's other records as
 * test-pystacks has them). */
static void write_waiting_run(const char *dir)
{
	struct xp_synth fx = { .exe = getenv("XP_FIXTURE_EXE"), .lib = getenv("XP_FIXTURE_LIB") };
	struct { struct xp_switch w; uint64_t ips[7]; } sw = {
		/* gen-run python's pt_worker launches at 1000599000 */
		.w = { .ts = 1000550000, .duration_ns = 100000, .pid = 4000, .tid = 4000,
		       .prev_state = 1, .stack = { .user_depth = 7 } },
	};
	struct xp_writer *w;
	char path[4096];

	ck_assert_msg(fx.exe && fx.lib, "XP_FIXTURE_EXE/LIB not set (run through meson test)");
	ck_assert_int_eq(xp_synth_load_elves(&fx), 0);
	snprintf(path, sizeof(path), "%s/lines-3.12.txt", getenv("XP_PYLINES_DIR"));
	ck_assert_int_eq(xp_synth_write_python(&fx, dir, path), 0);
	/* leaf first: the wait, Model.forward's activation, a C call, <module>'s, main */
	sw.ips[0] = xp_synth_ip(&fx, "xp_idle", 3);
	sw.ips[1] = xp_synth_return_ip(&fx, "_PyEval_EvalFrameDefault");
	sw.ips[2] = XP_SYNTH_JIT_BASE + 0x220;
	sw.ips[3] = xp_synth_return_ip(&fx, "xp_parse");
	sw.ips[4] = xp_synth_return_ip(&fx, "_PyEval_EvalFrameDefault");
	sw.ips[5] = XP_SYNTH_JIT_BASE + 0x420;
	sw.ips[6] = xp_synth_return_ip(&fx, "main");
	ck_assert_int_eq(xp_synth_open_stream(&w, dir, "waits", XP_STREAM_CPU, 0), 0);
	ck_assert_int_eq(xp_writer_append(w, XP_REC_SWITCH, &sw, sizeof(sw), NULL, 0), 0);
	ck_assert_int_eq(xp_writer_close(w), 0);
}

/* The worker launch's stack through ingest, leaf first ("a|b|..."). */
static const char *ingested(const char *dir, int raw, char *buf, size_t len)
{
	struct xp_load_opts o = { .run_dir = dir, .raw_launch_stacks = raw };
	struct xp_load_result res;
	char path[128];
	sqlite3_stmt *st;
	size_t n = 0;

	ck_assert_msg(xp_ingest(&o, &res) == 0, "%s", res.error);
	snprintf(path, sizeof(path), "%s/xpcorr.db", dir);
	ck_assert_int_eq(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	ck_assert_int_eq(sqlite3_prepare_v2(db, "WITH RECURSIVE up(id, n) AS (SELECT stack_id, 0"
					    " FROM xp_launches WHERE tid = 4001 UNION ALL SELECT s.parent,"
					    " up.n + 1 FROM up JOIN xp_stacks s ON s.id = up.id WHERE"
					    " s.parent != 0) SELECT y.value FROM up JOIN xp_stacks s ON"
					    " s.id = up.id JOIN xp_frames f ON f.id = s.frame JOIN StringIds y"
					    " ON y.id = f.symbol ORDER BY up.n", -1, &st, NULL), SQLITE_OK);
	buf[0] = 0;
	while (sqlite3_step(st) == SQLITE_ROW && n < len)
		n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? "|" : "", sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	return buf;
}

START_TEST(placed_by_ingest)
{
	char dir[64] = "/tmp/xp-test-waitlines-XXXXXX", cmd[128], buf[2048];
	const char *note = "[launched by runtime thread pt_worker while this line waited]";

	ck_assert_ptr_nonnull(mkdtemp(dir));
	write_waiting_run(dir);
	ingested(dir, 0, buf, sizeof(buf));
	/* its own frames, the note, then main's from Model.forward up (the
	 * wait's xp_idle and the evaluator's frame below it dropped) */
	ck_assert_msg(!strncmp(buf, "xp_lib_leaf|xp_lib_middle|xp_idle|", 34), "%s", buf);
	ck_assert_msg(strstr(buf, note) && !strncmp(strstr(buf, note) + strlen(note),
						      "|py::Model.forward:", 19), "%s", buf);
	ck_assert_msg(strstr(buf, "py::<module>:") && strstr(buf, "|main"), "%s", buf);
	ck_assert_int_eq(fact("placed"), 1);
	ck_assert_int_eq(fact("no_waiter"), 0);
	sqlite3_close(db);
	/* --raw-launch-stacks: as recorded, said so */
	ingested(dir, 1, buf, sizeof(buf));
	ck_assert_str_eq(buf, "xp_lib_leaf|xp_lib_middle|xp_idle");
	ck_assert_int_eq(fact("off"), 1);
	ck_assert_int_eq(fact("placed"), -1);
	sqlite3_close(db);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}
END_TEST

static Suite *waitlines_suite(void)
{
	Suite *s = suite_create("waitlines");
	TCase *tc = tcase_create("core");
	TCase *run = tcase_create("ingest");

	tcase_add_test(tc, placed_at_waiting_line);
	tcase_add_test(tc, exports_tell_it_apart);
	tcase_add_test(tc, raw_stacks_stay_xla);
	tcase_add_test(tc, nothing_to_place);
	suite_add_tcase(s, tc);
	tcase_add_test(run, placed_by_ingest);
	suite_add_tcase(s, run);
	return s;
}

XP_CHECK_MAIN(waitlines_suite)

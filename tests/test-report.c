/* test-report.c - golden files for `xpcorr report` on the synthetic ground
 * truth of gpu-testdb.c: tests/golden/report/<name>.{txt,csv,json}.
 * Regenerate them on purpose with tests/golden/regen-report (sets
 * XP_REGEN_GOLDEN=1, which writes instead of comparing). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check-main.h"
#include "db/db_schema.h"
#include "correlate/db_join.h"
#include "gpu-testdb.h"
#include "export/report/report.h"
#include "db/pypath.h"
#include "db/pyframe.h"
#include "export/names/launcher.h"
#include "db/launch.h"
#include "db/groups.h"
#include "correlate/report_groups.h"
#include "db/dbtask.h"
#include "db/rundb.h"
#include "export/idle/thread_samples.h"

static char dir[] = "/tmp/xp-report-XXXXXX";
static sqlite3 *db;
static struct testdb_sink sink;

static void setup(void)
{
	struct xc_summary s;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	db = testdb_open(":memory:");
	ck_assert_ptr_nonnull(db);
	ck_assert_int_eq(testdb_sink_init(&sink, db), 0);
	ck_assert_int_eq(truth_build(db, &sink, dir), 0);
	ck_assert_int_eq(xc_correlate_db(db, &s), 0);
}

static void teardown(void)
{
	char cmd[128];

	testdb_sink_fini(&sink);
	sqlite3_close(db);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);
	strcpy(dir, "/tmp/xp-report-XXXXXX");
}

static int64_t q1(const char *sql)
{
	sqlite3_stmt *s;
	int64_t v = -1;

	ck_assert_int_eq(sqlite3_prepare_v2(db, sql, -1, &s, NULL), SQLITE_OK);
	if (sqlite3_step(s) == SQLITE_ROW)
		v = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	return v;
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;

	*len = 0;
	if (!f)
		return NULL;
	buf = malloc(1 << 20);
	*len = fread(buf, 1, (1 << 20) - 1, f);
	buf[*len] = '\0';
	fclose(f);
	return buf;
}

static void golden(const char *name, const struct xp_report_opts *o)
{
	const char *gdir = getenv("GOLDEN_DIR");
	char path[512], *got = NULL, *want;
	size_t got_len = 0, want_len;
	FILE *mem = open_memstream(&got, &got_len);

	ck_assert_ptr_nonnull(gdir);
	ck_assert_int_eq(xp_report(db, o, mem, NULL), 0);
	fclose(mem);
	snprintf(path, sizeof(path), "%s/%s", gdir, name);
	if (getenv("XP_REGEN_GOLDEN")) {
		FILE *f = fopen(path, "w");

		ck_assert_ptr_nonnull(f);
		fwrite(got, 1, got_len, f);
		fclose(f);
	}
	want = slurp(path, &want_len);
	ck_assert_msg(want != NULL, "no golden file %s (run tests/golden/regen-report)", path);
	ck_assert_msg(got_len == want_len && !memcmp(got, want, got_len),
		      "%s differs; got:\n%s", name, got);
	free(got);
	free(want);
}

static char *report_text(const struct xp_report_opts *o)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&buf, &len);

	ck_assert_int_eq(xp_report(db, o, mem, NULL), 0);
	fclose(mem);
	return buf;
}

START_TEST(kernel_text_csv_json)
{
	struct xp_report_opts o = XP_REPORT_DEFAULTS;

	golden("kernels.txt", &o);
	o.format = XP_FMT_CSV;
	golden("kernels.csv", &o);
	o.format = XP_FMT_JSON;
	golden("kernels.json", &o);
	o = (struct xp_report_opts)XP_REPORT_DEFAULTS;
	o.mangled = 1;
	o.sort = XP_SORT_NAME;
	o.top = 2;
	golden("kernels-mangled-name-top2.txt", &o);
}
END_TEST

/* text names C++ short (template arguments and parameters elided); --names
 * full and the machine formats keep them whole */
START_TEST(names_short_and_full)
{
	struct xp_report_opts o = XP_REPORT_DEFAULTS;
	char *text = report_text(&o);

	ck_assert_ptr_nonnull(strstr(text, "  flash::(anonymous namespace)::fwd_impl<\u2026>()\n"));
	ck_assert_ptr_null(strstr(text, "fwd_impl<128>"));
	free(text);
	o.full_names = 1;
	text = report_text(&o);
	ck_assert_ptr_nonnull(strstr(text, "void flash::(anonymous namespace)::fwd_impl<128>(float const*, float*)"));
	free(text);
	o.full_names = 0;
	o.format = XP_FMT_CSV;
	text = report_text(&o);
	ck_assert_ptr_nonnull(strstr(text, "fwd_impl<128>(float const*, float*)"));
	free(text);
}
END_TEST

START_TEST(other_views)
{
	static const struct { enum xp_report_by by; const char *file; } views[] = {
		{ XP_BY_STACK, "by-stack.txt" }, { XP_BY_API, "by-api.txt" },
		{ XP_BY_MEMOP, "by-memop.txt" }, { XP_BY_THREAD, "by-thread.txt" },
		{ XP_BY_GRAPH, "by-graph.txt" }, { XP_BY_NVTX, "by-nvtx.txt" },
	};
	struct xp_report_opts o = XP_REPORT_DEFAULTS;

	for (size_t i = 0; i < sizeof(views) / sizeof(views[0]); i++) {
		o.by = views[i].by;
		golden(views[i].file, &o);
	}
	o.by = XP_BY_STACK;
	o.format = XP_FMT_JSON;
	golden("by-stack.json", &o);
}
END_TEST

/* a copy between GPUs is its own row, named with both devices; a database
 * ingested before the peer columns existed still reports its copies */
START_TEST(memop_peer_copies)
{
	struct xp_report_opts o = XP_REPORT_DEFAULTS;
	char *text;

	ck_assert_int_eq(sqlite3_exec(db, "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY(start, end, deviceId,"
				      " contextId, streamId, globalPid, bytes, copyKind, srcDeviceId,"
				      " srcContextId, dstDeviceId, dstContextId) VALUES (1000, 9000, 0, 1,"
				      " 7, 100 << 24, 4096, 10, 0, 1, 1, 2)", NULL, NULL, NULL), SQLITE_OK);
	o.by = XP_BY_MEMOP;
	text = report_text(&o);
	ck_assert_msg(strstr(text, "[CUDA memcpy Peer-to-Peer 0 -> 1]") != NULL, "%s", text);
	ck_assert_msg(strstr(text, "[CUDA memcpy Host-to-Device]\n") != NULL, "%s", text);
	free(text);
	ck_assert_int_eq(sqlite3_exec(db, "DELETE FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE copyKind = 10;"
				      " ALTER TABLE CUPTI_ACTIVITY_KIND_MEMCPY DROP COLUMN srcDeviceId",
				      NULL, NULL, NULL), SQLITE_OK);
	text = report_text(&o);
	ck_assert_msg(strstr(text, "[CUDA memcpy Host-to-Device]\n") != NULL, "%s", text);
	free(text);
}
END_TEST

START_TEST(filters)
{
	struct xp_report_opts o = XP_REPORT_DEFAULTS;

	/* the first 1.5 ms: sites A, B, C and the graph launch only */
	o.since = 1000000000;
	o.until = 1001500000;
	golden("kernels-since-until.txt", &o);
	o = (struct xp_report_opts)XP_REPORT_DEFAULTS;
	o.pid = 4242;
	golden("kernels-other-pid.txt", &o);
	/* 40..80 ms: the rejected launch record (50 ms) and the CUPTI loss
	 * (70 ms) are in the view, so the footer counts them without a note */
	o = (struct xp_report_opts)XP_REPORT_DEFAULTS;
	o.since = 1040000000;
	o.until = 1080000000;
	golden("kernels-since-until-late.txt", &o);
	o.format = XP_FMT_JSON;
	golden("kernels-since-until-late.json", &o);
	/* the footer of a process filter: losses are about the whole run, and say so */
	o = (struct xp_report_opts)XP_REPORT_DEFAULTS;
	o.pid = 100;
	o.format = XP_FMT_JSON;
	golden("kernels-pid.json", &o);
	/* a loss without a time cannot be placed in a time range: kept, marked */
	sqlite3_exec(db, "INSERT INTO xp_losses(ts, kind, reason, count, source)"
		     " VALUES (NULL, 0, 1, 7, 'cpu.xpr')", NULL, NULL, NULL);
	o = (struct xp_report_opts)XP_REPORT_DEFAULTS;
	o.since = 1000000000;
	o.until = 1001500000;
	{
		char *text = report_text(&o);

		ck_assert_msg(strstr(text, "Losses: BPF ring buffer full: 7 records in cpu.xpr"
				     " (whole run: no time recorded)\n") != NULL, "%s", text);
		ck_assert_ptr_null(strstr(text, "gpu-100.xpr"));
		free(text);
	}
}
END_TEST

START_TEST(no_gpu_activity_warns)
{
	struct xp_report_opts o = XP_REPORT_DEFAULTS;

	sqlite3_exec(db, "DELETE FROM CUPTI_ACTIVITY_KIND_KERNEL; DELETE FROM CUPTI_ACTIVITY_KIND_MEMCPY;"
		     "DELETE FROM xp_gpu_processes; DELETE FROM xp_losses;", NULL, NULL, NULL);
	golden("empty.txt", &o);
	sqlite3_exec(db, "INSERT INTO xp_gpu_status(ts, pid, code, severity, detail, text)"
		     " VALUES(5, 100, 2, 2, 0, 'libkineto (torch.profiler)')", NULL, NULL, NULL);
	golden("empty-subscriber.txt", &o);
}
END_TEST

/* What each process said its own code took per launch call (status code
 * 8) ends the footer: one process plainly, several as median and max. */
START_TEST(library_cost_footer)
{
	struct xp_report_opts o = XP_REPORT_DEFAULTS;
	char *text = report_text(&o);

	ck_assert_ptr_null(strstr(text, "Recording cost"));    /* none recorded: no line */
	free(text);
	sqlite3_exec(db, "INSERT INTO xp_gpu_status(ts, pid, code, severity, detail, text)"
		     " VALUES(9, 100, 8, 0, 812, 'library code per launch-class call 812 ns')",
		     NULL, NULL, NULL);
	text = report_text(&o);
	ck_assert_msg(strstr(text, "\nRecording cost: xpcap's own code in the process took 812 ns a"
			     " launch call (timed on one in 64; CUPTI's share not included)\n"), "%s", text);
	free(text);
	sqlite3_exec(db, "INSERT INTO xp_gpu_status(ts, pid, code, severity, detail, text)"
		     " VALUES(9, 101, 8, 0, 1500, ''), (9, 102, 8, 0, 900, '')", NULL, NULL, NULL);
	text = report_text(&o);
	ck_assert_msg(strstr(text, "took 900 ns a launch call, median of 3 processes, max 1500"),
		      "%s", text);
	free(text);
	o.format = XP_FMT_JSON;
	text = report_text(&o);
	ck_assert_msg(strstr(text, "\"library_cost\":{\"processes\":3,\"median_ns_per_call\":900,"
			     "\"max_ns_per_call\":1500}"), "%s", text);
	free(text);
}
END_TEST

/* Launch stacks that took an earlier copy's frames (ingest's counts in
 * META_DATA_EXPORT): a footer line, with the checks and what was lost. */
START_TEST(stack_reuse_footer)
{
	struct xp_report_opts o = XP_REPORT_DEFAULTS;
	char *text = report_text(&o);

	ck_assert_ptr_null(strstr(text, "Launch stacks:"));    /* none borrowed: no line */
	free(text);
	sqlite3_exec(db, "INSERT INTO META_DATA_EXPORT(name, value) VALUES"
		     " ('xp.launches_borrowed', '2'), ('xp.borrowed_missing', '0'),"
		     " ('xp.stack_checks', '5'), ('xp.stack_checks_differed', '1')", NULL, NULL, NULL);
	text = report_text(&o);
	ck_assert_msg(strstr(text, "\nLaunch stacks: 2 of "), "%s", text);
	ck_assert_msg(strstr(text, "5 checks by a full copy, 1 found other frames (xpcap record"
			     " --reuse-stacks off copies every one)\n"), "%s", text);
	free(text);
	sqlite3_exec(db, "UPDATE META_DATA_EXPORT SET value = '1' WHERE name = 'xp.borrowed_missing'",
		     NULL, NULL, NULL);
	text = report_text(&o);
	ck_assert_msg(strstr(text, "1 found other frames; 1 found no copy (lost) and have none"),
		      "%s", text);
	free(text);
	o.format = XP_FMT_JSON;
	text = report_text(&o);
	ck_assert_msg(strstr(text, "\"stack_reuse\":{\"launches\":"), "%s", text);
	ck_assert_msg(strstr(text, "\"borrowed\":2,\"missing\":1,\"checks\":5,"
			     "\"checks_differed\":1}"), "%s", text);
	free(text);
}
END_TEST

/* The correlation's precomputed groups (xp_report_groups and friends) give
 * the same bytes as the statistics computed from the rows at report time,
 * in every view that has them, with and without --mangled, in every format. */
START_TEST(groups_equal_rows)
{
	static const enum xp_report_by bys[] = { XP_BY_KERNEL, XP_BY_STACK, XP_BY_API };
	char *from_groups[3][3][2], *from_rows;

	ck_assert_int_eq(xp_groups_fresh(db), 1);
	ck_assert_int_gt(q1("SELECT count(*) FROM xp_report_groups WHERE view = 'kernel'"), 2);
	for (int b = 0; b < 3; b++)
		for (int f = 0; f < 3; f++)
			for (int m = 0; m < 2; m++) {
				struct xp_report_opts o = XP_REPORT_DEFAULTS;

				o.by = bys[b];
				o.format = (enum xp_report_format)f;
				o.mangled = m;
				from_groups[b][f][m] = report_text(&o);
			}
	/* forget what they were computed from: the report computes from rows */
	sqlite3_exec(db, "DELETE FROM META_DATA_EXPORT WHERE name = 'xp_report_groups_of'",
		     NULL, NULL, NULL);
	ck_assert_int_eq(xp_groups_fresh(db), 0);
	for (int b = 0; b < 3; b++)
		for (int f = 0; f < 3; f++)
			for (int m = 0; m < 2; m++) {
				struct xp_report_opts o = XP_REPORT_DEFAULTS;

				o.by = bys[b];
				o.format = (enum xp_report_format)f;
				o.mangled = m;
				from_rows = report_text(&o);
				ck_assert_msg(!strcmp(from_groups[b][f][m], from_rows),
					      "view %d format %d mangled %d: groups gave\n%s\nrows gave\n%s",
					      b, f, m, from_groups[b][f][m], from_rows);
				free(from_rows);
				free(from_groups[b][f][m]);
			}
}
END_TEST

/* Rows added or deleted after the correlation make the groups stale. */
START_TEST(groups_stale_after_changes)
{
	struct xc_summary s;

	ck_assert_int_eq(xp_groups_fresh(db), 1);
	sqlite3_exec(db, "DELETE FROM CUPTI_ACTIVITY_KIND_MEMCPY", NULL, NULL, NULL);
	ck_assert_int_eq(xp_groups_fresh(db), 0);
	ck_assert_int_eq(xc_correlate_db(db, &s), 0);
	ck_assert_int_eq(xp_groups_fresh(db), 1);
	sqlite3_exec(db, "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME(start, end, eventClass, nameId,"
		     " returnValue) VALUES (1, 2, 0, 1, 0)", NULL, NULL, NULL);
	ck_assert_int_eq(xp_groups_fresh(db), 0);
}
END_TEST

/* the command on a database file: same bytes as the library's output */
/* The test's database as dir/xpcorr.db, one the commands read. */
static void write_run_db(char *path, size_t len)
{
	sqlite3 *disk;
	sqlite3_backup *b;

	snprintf(path, len, "%s/xpcorr.db", dir);
	ck_assert_int_eq(sqlite3_open(path, &disk), SQLITE_OK);
	b = sqlite3_backup_init(disk, "main", db, "main");
	ck_assert_ptr_nonnull(b);
	ck_assert_int_eq(sqlite3_backup_step(b, -1), SQLITE_DONE);
	sqlite3_backup_finish(b);
	/* the command reads only a database with ingest's version and indexes
	 * (db/dbcheck.h); the test's tables lack those of the load */
	ck_assert_int_eq(sqlite3_exec(disk, "PRAGMA user_version = 1;"
		"CREATE INDEX IF NOT EXISTS xp_samples_stack ON xp_samples(stack_id);"
		"CREATE INDEX IF NOT EXISTS xp_stacks_parent ON xp_stacks(parent);"
		"CREATE INDEX IF NOT EXISTS xp_launches_corr ON xp_launches(pid, correlation_id);"
		"CREATE INDEX IF NOT EXISTS xp_launches_pid_tid_ts ON xp_launches(pid, tid, ts);"
		"CREATE INDEX IF NOT EXISTS xp_switches_pid_tid_ts ON xp_switches(pid, tid, ts);",
		NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(disk);
}

START_TEST(command_on_run_dir)
{
	const char *xpcorr = getenv("XPCORR"), *gdir = getenv("GOLDEN_DIR");
	char path[512], cmd[2048];

	ck_assert_ptr_nonnull(xpcorr);
	write_run_db(path, sizeof(path));
	/* a database file is reported as it is (a run directory would be ingested) */
	snprintf(cmd, sizeof(cmd), "%s report --format csv %s | cmp - %s/kernels.csv", xpcorr, path, gdir);
	ck_assert_int_eq(system(cmd), 0);
	snprintf(cmd, sizeof(cmd), "%s report --by nonsense %s 2>/dev/null", xpcorr, path);
	ck_assert_int_eq(WEXITSTATUS(system(cmd)), 2);
	/* a path that does not exist is a bad argument, as a bad option value is */
	snprintf(cmd, sizeof(cmd), "%s report %s/nonexistent.db 2>/dev/null", xpcorr, dir);
	ck_assert_int_eq(WEXITSTATUS(system(cmd)), 2);
	/* --rank N: the process its launcher numbered N (the run's rank 1 is pid 100) */
	snprintf(cmd, sizeof(cmd), "%s report --rank 1 --format json %s | cmp - %s/kernels-pid.json",
		 xpcorr, path, gdir);
	ck_assert_int_eq(system(cmd), 0);
	snprintf(cmd, sizeof(cmd), "%s report --rank 7 %s 2>&1 | grep -q 'rank 7: no process'",
		 xpcorr, path);
	ck_assert_int_eq(WEXITSTATUS(system(cmd)), 0);
}
END_TEST

/* Each thread's samples, as SQL counts them, from the reader of db: read
 * ahead, or when asked (a thread without CUDA calls). */
static void check_samples(sqlite3 *on)
{
	struct xp_sample_reader *r;
	sqlite3_stmt *s;
	size_t threads = 0;
	int err;

	ck_assert_int_eq(xp_sample_reader_start(on, 0, &r), 0);
	ck_assert_int_eq(sqlite3_prepare_v2(on, "SELECT pid << 24 | tid, count(*), min(ts), max(ts)"
					    " FROM xp_samples GROUP BY 1", -1, &s, NULL), SQLITE_OK);
	while (sqlite3_step(s) == SQLITE_ROW) {
		const struct xp_thread_samples *t = xp_sample_reader_get(r, sqlite3_column_int64(s, 0), &err);

		ck_assert_ptr_nonnull(t);
		ck_assert_uint_eq(t->n, (size_t)sqlite3_column_int64(s, 1));
		ck_assert_int_eq(t->s[0][0], sqlite3_column_int64(s, 2));
		ck_assert_int_eq(t->s[t->n - 1][0], sqlite3_column_int64(s, 3));
		for (size_t i = 1; i < t->n; i++)
			ck_assert_int_le(t->s[i - 1][0], t->s[i][0]);
		threads++;
	}
	sqlite3_finalize(s);
	ck_assert_uint_ge(threads, 2);
	/* no sample: an empty list */
	ck_assert_uint_eq(xp_sample_reader_get(r, 4242LL << 24 | 1, &err)->n, 0);
	xp_sample_reader_free(r);
}

START_TEST(samples_read_ahead)
{
	char path[512], err[512];
	sqlite3 *disk;
	int64_t launching = q1("SELECT count(DISTINCT globalTid) FROM CUPTI_ACTIVITY_KIND_RUNTIME");

	ck_assert_int_gt(launching, 0);
	/* a thread that made no CUDA call, read when asked */
	ck_assert_int_eq(sqlite3_exec(db, "INSERT INTO xp_samples(ts, pid, tid, cpu, stack_id, period)"
				      " VALUES (30, 777, 778, 0, 1, 1), (10, 777, 778, 0, 1, 1),"
				      " (20, 777, 778, 0, 1, 1)", NULL, NULL, NULL), SQLITE_OK);
	/* a database without a file of its own: read over its connection */
	check_samples(db);
	write_run_db(path, sizeof(path));
	ck_assert_int_eq(xp_db_open_file(path, &disk, err, sizeof(err)), 0);
	check_samples(disk);
	sqlite3_close(disk);
}
END_TEST

/* What a task saw: the connection, the thread and the kernels it read. */
struct task_seen {
	sqlite3 *db;
	pthread_t thread;
	int64_t kernels;
};

static int see(sqlite3 *on, void *arg)
{
	struct task_seen *t = arg;
	sqlite3_stmt *s;

	t->db = on;
	t->thread = pthread_self();
	if (sqlite3_prepare_v2(on, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL", -1, &s,
			       NULL) == SQLITE_OK && sqlite3_step(s) == SQLITE_ROW)
		t->kernels = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	return 7;
}

/* A task reads a database file over a connection of its own on a thread of
 * its own, on the first one's descriptor: a link (to another database) or a
 * FIFO put in its place since changes nothing it reads, nor blocks it; one
 * in memory, over the caller's at the join; a dropped task reads nothing
 * over the caller's. */
START_TEST(db_task)
{
	char path[512], err[512];
	struct task_seen t = { 0 };
	struct xp_db_task *k;
	int64_t kernels = q1("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL");
	sqlite3 *disk, *other;

	write_run_db(path, sizeof(path));
	ck_assert_int_eq(xp_db_open_file(path, &disk, err, sizeof(err)), 0);
	ck_assert_int_eq(xp_db_task_start(disk, see, &t, &k), 0);
	ck_assert_int_eq(xp_db_task_join(k), 7);
	ck_assert_ptr_nonnull(t.db);
	ck_assert_ptr_ne(t.db, disk);
	ck_assert(!pthread_equal(t.thread, pthread_self()));
	ck_assert_int_eq(t.kernels, kernels);
	ck_assert_int_gt(t.kernels, 0);

	for (int fifo = 0; fifo <= 1; fifo++) {
		char swap[600], copy[600], cmd[4096];

		snprintf(swap, sizeof(swap), "%s/swap", dir);
		snprintf(copy, sizeof(copy), "%s.copy", path);
		if (fifo) {
			snprintf(cmd, sizeof(cmd), "mkfifo %s && mv -f %s %s", swap, swap, path);
		} else {
			/* a database as good, but of no kernel */
			snprintf(cmd, sizeof(cmd), "cp %s %s", path, copy);
			ck_assert_int_eq(system(cmd), 0);
			ck_assert_int_eq(sqlite3_open(copy, &other), SQLITE_OK);
			ck_assert_int_eq(sqlite3_exec(other, "DELETE FROM CUPTI_ACTIVITY_KIND_KERNEL",
						      NULL, NULL, NULL), SQLITE_OK);
			sqlite3_close(other);
			snprintf(cmd, sizeof(cmd), "ln -s %s %s && mv -f %s %s", copy, swap, swap, path);
		}
		ck_assert_int_eq(system(cmd), 0);
		memset(&t, 0, sizeof(t));
		ck_assert_int_eq(xp_db_task_start(disk, see, &t, &k), 0);
		ck_assert_int_eq(xp_db_task_join(k), 7);
		ck_assert_ptr_nonnull(t.db);
		ck_assert_ptr_ne(t.db, disk);
		ck_assert(!pthread_equal(t.thread, pthread_self()));
		ck_assert_int_eq(t.kernels, kernels);
	}
	sqlite3_close(disk);

	memset(&t, 0, sizeof(t));
	ck_assert_int_eq(xp_db_task_start(db, see, &t, &k), 0);
	ck_assert_int_eq(xp_db_task_join(k), 7);
	ck_assert_ptr_eq(t.db, db);
	ck_assert(pthread_equal(t.thread, pthread_self()));

	memset(&t, 0, sizeof(t));
	ck_assert_int_eq(xp_db_task_start(db, see, &t, &k), 0);
	xp_db_task_drop(k);
	ck_assert_ptr_null(t.db);
}
END_TEST

/* The ranks of a job side by side: a second process (pid 101, rank 0) that
 * ran the same kernels, each twice as long, is the slowest on each. */
START_TEST(ranks_side_by_side)
{
	struct xp_report_opts o = XP_REPORT_DEFAULTS;

	ck_assert_int_eq(sqlite3_exec(db,
		"CREATE TEMP TABLE k2 AS SELECT * FROM CUPTI_ACTIVITY_KIND_KERNEL"
		" WHERE globalPid = 100 << 24;"
		"UPDATE temp.k2 SET globalPid = 101 << 24, end = start + 2 * (end - start);"
		"INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL SELECT * FROM temp.k2;"
		"INSERT INTO xp_ranks(pid, host, rank, local_rank, world_size, local_world_size, source)"
		" VALUES (101, 'node7', 0, 0, 2, 2, 'torchrun');", NULL, NULL, NULL), SQLITE_OK);
	o.by = XP_BY_RANK;
	golden("by-rank.txt", &o);
	o.format = XP_FMT_JSON;
	golden("by-rank.json", &o);
	o.format = XP_FMT_CSV;
	golden("by-rank.csv", &o);
}
END_TEST

/* Python paths as a person reads them: a package's from the package, the
 * standard library's from python3.X, the program's from the directory its
 * files share; names that are no path stay as they are. */
START_TEST(python_paths_short)
{
	const char *paths[] = {
		"/home/u/proj/train.py", "/home/u/proj/model/layers.py",
		"/opt/venv/lib/python3.12/site-packages/torch/nn/modules/linear.py",
		"/usr/lib/python3.12/threading.py", "<frozen runpy>", NULL,
	};
	struct xp_pyroot r;

	ck_assert_int_eq(xp_pyroot_from(paths, 6, &r), 0);
	ck_assert_str_eq(r.dir, "/home/u/proj/");
	ck_assert_str_eq(xp_pypath_short(&r, paths[0]), "train.py");
	ck_assert_str_eq(xp_pypath_short(&r, paths[1]), "model/layers.py");
	ck_assert_str_eq(xp_pypath_short(&r, paths[2]), "torch/nn/modules/linear.py");
	ck_assert_str_eq(xp_pypath_short(&r, paths[3]), "python3.12/threading.py");
	ck_assert_str_eq(xp_pypath_short(&r, paths[4]), "<frozen runpy>");
	ck_assert_str_eq(xp_pypath_short(&r, "/elsewhere/x.py"), "/elsewhere/x.py");
	ck_assert(xp_pypath_is_library(paths[2]) && xp_pypath_is_library(paths[3]));
	ck_assert(!xp_pypath_is_library(paths[0]));
	/* torch.compile's generated code is the framework's */
	ck_assert(xp_pypath_is_library("/tmp/torchinductor_root/cz/czabc.py"));
	xp_pyroot_free(&r);
	/* one file: its directory; none of the program's: no root */
	ck_assert_int_eq(xp_pyroot_from(paths, 1, &r), 0);
	ck_assert_str_eq(xp_pypath_short(&r, paths[0]), "train.py");
	xp_pyroot_free(&r);
	ck_assert_int_eq(xp_pyroot_from(paths + 2, 2, &r), 0);
	ck_assert_ptr_null(r.dir);
	ck_assert_str_eq(xp_pypath_short(&r, "/home/u/proj/train.py"), "/home/u/proj/train.py");
}
END_TEST

/* A Python line is data: file, line and qualified name from the columns,
 * named "file.py:LINE qualname" at display time (a file with a space keeps
 * its line); a row of a database ingested before xp_frames.line (its name
 * in symbol) reads back the same; the placeholder of a code object not
 * recorded and other kinds are no line. */
START_TEST(python_lines_as_data)
{
	const int64_t l42 = 42, none = -1;
	struct xp_pyline p;
	char name[XP_PYLINE_NAME_MAX], tiny[12];

	ck_assert(xp_pyline_of(XP_FRAME_PYTHON, "Step.forward", "/home/u/train step.py", &l42, &p));
	ck_assert_int_eq(p.line, 42);
	ck_assert_str_eq(p.qualname, "Step.forward");
	ck_assert_str_eq(p.file, "/home/u/train step.py");
	ck_assert_str_eq(xp_pyline_name(&p, name, sizeof(name)), "train step.py:42 Step.forward");
	ck_assert(xp_pyline_of(XP_FRAME_PYTHON, "f", "/p/nn/__init__.py", &none, &p));
	ck_assert_str_eq(xp_pyline_name(&p, name, sizeof(name)), "nn/__init__.py:? f");
	/* cut at a whole character */
	ck_assert(xp_pyline_of(XP_FRAME_PYTHON, "\u00e9\u00e9\u00e9", "/a/b.py", &l42, &p));
	ck_assert_str_eq(xp_pyline_name(&p, tiny, sizeof(tiny)), "b.py:42 \u00e9");
	/* an older database's row */
	ck_assert(xp_pyline_of(XP_FRAME_PYTHON, "train step.py:42 Step.forward",
			       "/home/u/train step.py", NULL, &p));
	ck_assert_int_eq(p.line, 42);
	ck_assert_str_eq(p.qualname, "Step.forward");
	ck_assert(xp_pyline_of(XP_FRAME_PYTHON, "x.py:? <module>", "/x.py", NULL, &p));
	ck_assert_int_eq(p.line, -1);
	ck_assert_str_eq(xp_frame_display(XP_FRAME_PYTHON, "x.py:? <module>", "/x.py", NULL, name,
					  sizeof(name)), "x.py:? <module>");
	/* no line */
	ck_assert(!xp_pyline_of(XP_FRAME_PYTHON, "[python code not recorded]", "[python]", NULL, &p));
	ck_assert(!xp_pyline_of(XP_FRAME_PYTHON, "other.py:42 f", "/home/u/train.py", NULL, &p));
	ck_assert(!xp_pyline_of(XP_FRAME_USER, "main", "/bin/x", &l42, &p));
	ck_assert_str_eq(xp_frame_display(XP_FRAME_PYTHON, "[python code not recorded]", "[python]",
					  NULL, name, sizeof(name)), "[python code not recorded]");
	ck_assert_str_eq(xp_pypath_base("/a/b/__main__.py"), "b/__main__.py");
	ck_assert_str_eq(xp_pypath_base("<string>"), "<string>");
}
END_TEST

/* Feeds frames leaf first: "sym@module" (module optional), NULL-terminated. */
static enum xp_launcher scan(struct xp_launcher_scan *sc, const char *const *frames)
{
	xp_launcher_begin(sc);
	for (; *frames; frames++) {
		char sym[256];
		const char *at = strchr(*frames, '@');

		snprintf(sym, sizeof(sym), "%.*s", at ? (int)(at - *frames) : (int)strlen(*frames), *frames);
		xp_launcher_frame(sc, !strcmp(sym, "train.py:3 step") ? XP_FRAME_PYTHON : XP_FRAME_USER,
				  sym, at ? at + 1 : "/usr/lib/libtorch_cuda.so");
	}
	return xp_launcher_end(sc);
}

/* Who launched GPU work with no Python on its stack, from the frames'
 * names: autograd's engine (with the node), NCCL (with the call), XLA, a
 * stack cut short (interpreter frames, or no thread start at the root), a
 * native thread (with its function). */
START_TEST(launcher_of_stacks)
{
	const char *autograd[] = { "cudaLaunchKernel@/x/libcudart.so.13", "at::native::gemm",
		"at::_ops::mm::call(at::Tensor const&)",
		"torch::autograd::generated::AddmmBackward0::apply(std::vector<at::Tensor>&&)",
		"torch::autograd::Engine::thread_main(std::shared_ptr<torch::autograd::GraphTask> const&)",
		"libstdc++.so.6+0xe1234@/usr/lib/libstdc++.so.6", "start_thread@/usr/lib/libc.so.6", NULL };
	const char *nccl[] = { "ncclLaunchKernel@/x/libnccl.so.2", "ncclAllReduce@/x/libnccl.so.2",
		"c10d::ProcessGroupNCCL::allreduce", "clone3@/usr/lib/libc.so.6", NULL };
	const char *reducer[] = { "ncclAllReduce@/x/libnccl.so.2", "c10d::Reducer::run_comm_hook",
		"torch::autograd::Engine::thread_main", "clone3@/usr/lib/libc.so.6", NULL };
	const char *python[] = { "cudaLaunchKernel", "at::native::add", "_PyEval_EvalFrameDefault@/usr/lib/libpython3.12.so",
		"train.py:3 step", NULL };
	const char *cut[] = { "cudaLaunchKernel", "at::native::add", "_PyEval_EvalFrameDefault@/usr/lib/libpython3.12.so", NULL };
	const char *unrooted[] = { "cudaLaunchKernel", "at::native::add", "at::native::foo", NULL };
	const char *native[] = { "k_thread(float*, int)@/bin/workload", "thread_main()@/bin/workload",
		"libc.so.6+0x9cb83@/usr/lib/x86_64-linux-gnu/libc.so.6", NULL };
	const char *xla[] = { "cuLaunchKernel@/x/libcuda.so.1", "xla::gpu::KernelThunk::ExecuteOnStream@/x/xla_extension.so",
		"start_thread@/usr/lib/libc.so.6", NULL };
	const char *none[] = { NULL };
	struct xp_launcher_scan sc;

	ck_assert_int_eq(scan(&sc, autograd), XP_LAUNCHER_AUTOGRAD);
	ck_assert_str_eq(sc.what, "AddmmBackward0");
	ck_assert_int_eq(scan(&sc, nccl), XP_LAUNCHER_NCCL);
	ck_assert_str_eq(sc.what, "ncclAllReduce");
	ck_assert_int_eq(scan(&sc, reducer), XP_LAUNCHER_NCCL);
	ck_assert_str_eq(sc.what, "DDP reducer");
	ck_assert_int_eq(scan(&sc, python), XP_LAUNCHER_PYTHON);
	ck_assert_int_eq(scan(&sc, cut), XP_LAUNCHER_TRUNCATED);
	ck_assert_int_eq(scan(&sc, unrooted), XP_LAUNCHER_TRUNCATED);
	ck_assert_int_eq(scan(&sc, native), XP_LAUNCHER_NATIVE);
	ck_assert_str_eq(sc.what, "thread_main()");
	ck_assert_int_eq(scan(&sc, xla), XP_LAUNCHER_XLA);
	ck_assert_int_eq(scan(&sc, none), XP_LAUNCHER_NONE);
}
END_TEST

/* Whose code a frame is: a library the program calls (its launches are named
 * below it, at the program's own function) or the program's. */
START_TEST(library_frames)
{
	ck_assert(xp_is_library_frame("cublasSgemm_v2", "/usr/lib/x86_64-linux-gnu/libcublas.so.13"));
	ck_assert(xp_is_library_frame("libcublasLt.so.13+0x71ba5cc", NULL));
	ck_assert(xp_is_library_frame("at::native::add", "/venv/lib/python3.12/site-packages/torch/lib/libtorch_cuda.so"));
	ck_assert(xp_is_library_frame("__libc_start_main", "/usr/lib/x86_64-linux-gnu/libc.so.6"));
	ck_assert(xp_is_library_frame("[unknown]+0x0", NULL));
	ck_assert(!xp_is_library_frame("gemm_step()", "/home/u/app/bin/solver"));
	ck_assert(!xp_is_library_frame("solver+0x1234", "/home/u/app/bin/solver"));
}
END_TEST

static Suite *report_suite(void)
{
	Suite *s = suite_create("report");
	TCase *tc = tcase_create("golden");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, kernel_text_csv_json);
	tcase_add_test(tc, names_short_and_full);
	tcase_add_test(tc, other_views);
	tcase_add_test(tc, memop_peer_copies);
	tcase_add_test(tc, filters);
	tcase_add_test(tc, no_gpu_activity_warns);
	tcase_add_test(tc, library_cost_footer);
	tcase_add_test(tc, stack_reuse_footer);
	tcase_add_test(tc, command_on_run_dir);
	tcase_add_test(tc, samples_read_ahead);
	tcase_add_test(tc, db_task);
	tcase_add_test(tc, groups_equal_rows);
	tcase_add_test(tc, groups_stale_after_changes);
	tcase_add_test(tc, python_paths_short);
	tcase_add_test(tc, python_lines_as_data);
	tcase_add_test(tc, ranks_side_by_side);
	tcase_add_test(tc, launcher_of_stacks);
	tcase_add_test(tc, library_frames);
	suite_add_tcase(s, tc);
	return s;
}

XP_CHECK_MAIN(report_suite)

/* runinfo.c - the facts of `xpcorr info` as one JSON document: the run,
 * its records and losses, symbolization, the GPU, Python and autograd parts
 * (runinfo_*.c), processes, warnings, a merged job's runs. */
#include "export/runinfo/runinfo.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/db_schema.h"
#include "src/gtid.h"

static int64_t scalar(sqlite3 *db, const char *sql, int64_t def)
{
	sqlite3_stmt *st;
	int64_t v = def;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return def;
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

/* value of META_DATA_EXPORT name, or NULL (caller frees) */
static char *meta(sqlite3 *db, const char *name)
{
	sqlite3_stmt *st;
	char *v = NULL;

	if (sqlite3_prepare_v2(db, "SELECT value FROM META_DATA_EXPORT WHERE name = ?", -1,
			       &st, NULL) != SQLITE_OK)
		return NULL;
	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
		v = strdup((const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	return v;
}

/* Runs sql and appends each row as an object with the column names. */
static json_t *rows(sqlite3 *db, const char *sql)
{
	json_t *arr = json_array();
	sqlite3_stmt *st;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return arr;
	while (sqlite3_step(st) == SQLITE_ROW) {
		json_t *o = json_object();

		for (int i = 0; i < sqlite3_column_count(st); i++) {
			const char *k = sqlite3_column_name(st, i);

			switch (sqlite3_column_type(st, i)) {
			case SQLITE_INTEGER:
				json_object_set_new(o, k, json_integer(sqlite3_column_int64(st, i)));
				break;
			case SQLITE_NULL:
				json_object_set_new(o, k, json_null());
				break;
			default:
				json_object_set_new(o, k, json_string((const char *)
								      sqlite3_column_text(st, i)));
			}
		}
		json_array_append_new(arr, o);
	}
	sqlite3_finalize(st);
	return arr;
}

static void set_meta(json_t *o, sqlite3 *db, const char *key, const char *meta_key)
{
	char *v = meta(db, meta_key);

	if (v)
		json_object_set_new(o, key, json_string(v));
	free(v);
}

/* Modules missing where the run is read are the usual reason frames stay
 * addresses and launch stacks stop short of the caller's code: say so among
 * the warnings, with the remedy, rather than only in the module list. */
static void missing_modules_warning(json_t *info, json_t *sym)
{
	json_int_t missing = json_integer_value(json_object_get(sym, "modules_missing"));
	json_t *w = json_object_get(info, "warnings"), *row;
	char msg[320];

	if (!missing || !json_is_array(w))
		return;
	snprintf(msg, sizeof(msg), "%" JSON_INTEGER_FORMAT " module%s missing or unreadable here:"
		 " their frames stay module+offset and native stacks may stop in them; ingest on"
		 " the machine that recorded the run, or give copies with --symfs DIR", missing,
		 missing == 1 ? " is" : "s are");
	row = json_object();
	json_object_set_new(row, "message", json_string(msg));
	json_array_append_new(w, row);
}

/* Ingest's counts (META_DATA_EXPORT xp.*) under their JSON names. */
static void set_ingest_facts(json_t *sym, sqlite3 *db)
{
	static const char *const facts[] = { "kallsyms_symbols", "stack_copies", "stacks_unwound",
					     "unwinds_no_fd", "unwinds_not_walked",
					     "launches_borrowed", "stack_checks",
					     "stack_checks_differed" };
	char sql[160];

	for (size_t i = 0; i < sizeof(facts) / sizeof(facts[0]); i++) {
		snprintf(sql, sizeof(sql), "SELECT value FROM META_DATA_EXPORT WHERE name = 'xp.%s'",
			 facts[i]);
		json_object_set_new(sym, facts[i], json_integer(scalar(db, sql, 0)));
	}
}

/* The processes; in a merged job a run's pids are stored as run << 22 | pid:
 * the pid the program had, and its run and host, are what a person knows. */
static json_t *processes(sqlite3 *db)
{
	return rows(db, xp_db_job_runs(db) > 0 ?
		"SELECT " XP_SQL_PID_LOCAL("p.pid") " AS pid, p.pid >> 22 AS run,"
		" (SELECT j.host FROM xp_job_runs j WHERE j.run = p.pid >> 22) AS host,"
		" (SELECT group_concat(k.rank) FROM xp_ranks k WHERE k.pid = p.pid) AS rank,"
		" p.pid AS stored_pid, p.name,"
		" (SELECT count(*) FROM ThreadNames t WHERE " XP_SQL_GTID_PID("t.globalTid") " = p.pid) AS threads,"
		" (SELECT count(*) FROM xp_samples x WHERE x.pid = p.pid) AS samples"
		" FROM PROCESSES p ORDER BY p.pid" :
		"SELECT p.pid, p.name,"
		" (SELECT count(*) FROM ThreadNames t WHERE " XP_SQL_GTID_PID("t.globalTid") " = p.pid) AS threads,"
		" (SELECT count(*) FROM xp_samples x WHERE x.pid = p.pid) AS samples"
		" FROM PROCESSES p ORDER BY p.pid");
}

/* --capture-range that xpcap could not bound (no uprobe: a normal user):
 * what ingest cut outside the windows (ingest/rangecut.h). */
static void range_cut(json_t *run, sqlite3 *db)
{
	int64_t samples = scalar(db, "SELECT value FROM META_DATA_EXPORT"
				 " WHERE name = 'xp.range_samples_cut'", -1);
	int64_t switches = scalar(db, "SELECT value FROM META_DATA_EXPORT"
				  " WHERE name = 'xp.range_switches_cut'", 0);
	int64_t windows = scalar(db, "SELECT value FROM META_DATA_EXPORT"
				 " WHERE name = 'xp.range_windows'", 0);
	char *range = meta(db, "meta.capture_window.range"), text[320];

	if (samples >= 0) {
		snprintf(text, sizeof(text), "%" PRId64 " CPU samples and %" PRId64 " off-CPU"
			 " intervals outside the %" PRId64 " window%s of --capture-range %s, cut at"
			 " ingest (xpcap had no uprobe to leave them out)", samples, switches,
			 windows, windows == 1 ? "" : "s", range ? range : "?");
		json_object_set_new(run, "range_cut", json_string(text));
		json_object_set_new(run, "range_samples_cut", json_integer(samples));
		json_object_set_new(run, "range_switches_cut", json_integer(switches));
	}
	free(range);
}

/* Where the off-CPU intervals' frames came from (xp.waits.*, pywaits.h):
 * "off_cpu_frames", a line, and "off_cpu_waits", the counts. */
static void wait_frames(json_t *run, sqlite3 *db)
{
	static const char *const keys[] = { "intervals", "blocked", "native_stacks",
					     "python_frames", "blocked_call" };
	json_int_t n[5];
	json_t *o = json_object();
	char line[400], name[40];
	int len;

	for (int i = 0; i < 5; i++) {
		char *v;

		snprintf(name, sizeof(name), "xp.waits.%s", keys[i]);
		if (!(v = meta(db, name))) {
			json_decref(o);
			return;     /* no intervals, or a database of an older xpcorr */
		}
		n[i] = strtoll(v, NULL, 10);
		free(v);
		json_object_set_new(o, keys[i], json_integer(n[i]));
	}
	json_object_set_new(run, "off_cpu_waits", o);
	len = snprintf(line, sizeof(line), "%" JSON_INTEGER_FORMAT " intervals: %" JSON_INTEGER_FORMAT
		       " blocked, %" JSON_INTEGER_FORMAT " preempted", n[0], n[1], n[0] - n[1]);
	if (n[2])
		len += snprintf(line + len, sizeof(line) - (size_t)len, "; %" JSON_INTEGER_FORMAT
				" with the stack where they went off CPU (sched_switch)", n[2]);
	if (n[3])
		len += snprintf(line + len, sizeof(line) - (size_t)len, "; %" JSON_INTEGER_FORMAT
				" with Python frames (xpcap's frame reader, read while off CPU)",
				n[3]);
	if (n[4])
		snprintf(line + len, sizeof(line) - (size_t)len, "; %" JSON_INTEGER_FORMAT " with the"
			 " call they blocked in (/proc/PID/task/TID/syscall, read with the frames)",
			 n[4]);
	json_object_set_new(run, "off_cpu_frames", json_string(line));
}

/* The run: what xpcap wrote in meta.json, and how long it recorded. */
static json_t *run_facts(sqlite3 *db)
{
	json_t *run = json_object();
	int64_t start, stop;
	char *s, *e;

	set_meta(run, db, "tool_version", "meta.tool_version");
	set_meta(run, db, "format_version", "meta.format_version");
	set_meta(run, db, "command", "meta.command");
	if (!json_object_get(run, "command")) {
		/* the command as an argv array: "meta.command.0", "meta.command.1", ... */
		sqlite3_stmt *st;

		if (sqlite3_prepare_v2(db, "SELECT group_concat(value, ' ') FROM (SELECT value"
				       " FROM META_DATA_EXPORT WHERE name GLOB 'meta.command.[0-9]*'"
				       " ORDER BY rowid)", -1, &st, NULL) == SQLITE_OK) {
			if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
				json_object_set_new(run, "command", json_string(
					(const char *)sqlite3_column_text(st, 0)));
			sqlite3_finalize(st);
		}
	}
	set_meta(run, db, "hostname", "meta.hostname");
	/* the keys xpcap writes (xpcap-run(5), META.JSON) */
	set_meta(run, db, "kernel", "meta.kernel_release");
	set_meta(run, db, "cpus", "meta.cpu_count");
	set_meta(run, db, "frequency_hz", "meta.sample_frequency_hz");
	set_meta(run, db, "sampler", "meta.sampler");     /* bpf, perf (not root), none */
	/* off-CPU intervals: "--off-cpu", "default" (waits where GPU capture is
	 * armed), with where they came from (sched_switch, perf_switch) */
	if ((s = meta(db, "meta.off_cpu.by"))) {
		set_meta(run, db, "off_cpu", "meta.off_cpu.by");
		set_meta(run, db, "off_cpu_source", "meta.off_cpu.source");
		set_meta(run, db, "off_cpu_min_us", "meta.off_cpu.min_us");
		free(s);
	}
	wait_frames(run, db);
	set_meta(run, db, "off_cpu_error", "meta.off_cpu.error");
	range_cut(run, db);
	set_meta(run, db, "exit_code", "meta.exit.code");
	set_meta(run, db, "exit_signal", "meta.exit.signal");
	/* duration: the capture's own start/stop if meta.json had them, else
	 * the span of the samples */
	s = meta(db, "meta.start_monotonic_ns");
	e = meta(db, "meta.stop_monotonic_ns");
	if (s && e) {
		start = strtoll(s, NULL, 10);
		stop = strtoll(e, NULL, 10);
		json_object_set_new(run, "duration_source", json_string("meta.json"));
	} else {
		start = scalar(db, "SELECT min(ts) FROM xp_samples", 0);
		stop = scalar(db, "SELECT max(ts) FROM xp_samples", 0);
		json_object_set_new(run, "duration_source", json_string("samples"));
	}
	free(s);
	free(e);
	json_object_set_new(run, "duration_ns", json_integer(stop > start ? stop - start : 0));
	return run;
}

/* How well the samples and launch stacks symbolized. */
static json_t *symbolization(sqlite3 *db)
{
	json_t *sym = json_object();
	int64_t frames, resolved;

	frames = scalar(db, "SELECT value FROM META_DATA_EXPORT WHERE name = 'xp.sample_frames'", 0);
	resolved = scalar(db, "SELECT value FROM META_DATA_EXPORT"
			  " WHERE name = 'xp.sample_frames_resolved'", 0);
	json_object_set_new(sym, "sample_frames", json_integer(frames));
	json_object_set_new(sym, "sample_frames_resolved", json_integer(resolved));
	json_object_set_new(sym, "percent_resolved",
			    json_real(frames ? 0.1 * (double)(int64_t)(1000.0 * (double)resolved /
								      (double)frames + 0.5) : 100.0));
	json_object_set_new(sym, "distinct_frames", json_integer(
		scalar(db, "SELECT count(*) FROM xp_frames", 0)));
	json_object_set_new(sym, "distinct_stacks", json_integer(
		scalar(db, "SELECT count(*) FROM xp_stacks", 0)));
	set_ingest_facts(sym, db);
	json_object_set_new(sym, "build_id_mismatches", json_integer(
		scalar(db, "SELECT count(*) FROM xp_modules WHERE status = 'build_id_mismatch'", 0)));
	json_object_set_new(sym, "modules_missing", json_integer(
		scalar(db, "SELECT count(*) FROM xp_modules WHERE status IN ('missing', 'not_elf')", 0)));
	json_object_set_new(sym, "modules", rows(db,
		"SELECT s.value AS path, m.status FROM xp_modules m"
		" JOIN StringIds s ON s.id = m.path WHERE m.status != 'unused'"
		" ORDER BY m.status != 'ok', s.value"));
	return sym;
}

/* The whole document (runinfo.h). */
json_t *xp_info(sqlite3 *db)
{
	json_t *info = json_object(), *sym;
	json_t *v;

	json_object_set_new(info, "run", run_facts(db));
	json_object_set_new(info, "records", rows(db,
		"SELECT stream, kind, records FROM xp_record_counts ORDER BY stream, kind"));
	json_object_set_new(info, "losses", rows(db,
		"SELECT kind, reason, source, sum(count) AS count FROM xp_losses"
		/* no Python on a launching thread lost nothing: under python lines */
		" WHERE reason != 'python_no_thread'"
		" GROUP BY kind, reason, source ORDER BY source, kind, reason"));
	sym = symbolization(db);
	json_object_set_new(info, "symbolization", sym);
	json_object_set_new(info, "gpu", xp_info_gpu(db));
	if ((v = xp_info_python(db)))
		json_object_set_new(info, "python", v);
	if ((v = xp_info_autograd(db)))
		json_object_set_new(info, "autograd", v);
	if ((v = xp_info_wait_lines(db)))
		json_object_set_new(info, "wait_lines", v);
	json_object_set_new(info, "processes", processes(db));
	json_object_set_new(info, "warnings", rows(db,
		"SELECT message FROM xp_warnings ORDER BY rowid"));
	missing_modules_warning(info, sym);
	xp_info_python_samples(db, info);
	if (xp_db_job_runs(db) > 0)
		json_object_set_new(info, "job_runs", rows(db,
			"SELECT run, host, ranks, method, shift_ns, wall_ns, refine_ns, spread_ns,"
			" matched, markers, path FROM xp_job_runs ORDER BY run"));
	return info;
}

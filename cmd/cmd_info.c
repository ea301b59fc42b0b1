/* cmd_info.c - `xpcorr info run/`: what was captured, what was lost, how
 * well it symbolized. Built as one JSON document (export/runinfo/runinfo.h),
 * printed as text or JSON.
 *   xpcorr info run/
 *   xpcorr info --format json run/ | jq .symbolization
 */
#include <getopt.h>
#include <inttypes.h>
#include <jansson.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "src/textesc.h"
#include "cmd/info_autograd.h"
#include "cmd/info_gpu.h"
#include "cmd/info_python.h"
#include "cmd/opendb.h"
#include "export/runinfo/runinfo.h"

/* A merged job's runs (xpcorr merge): how each clock was put on the job's. */
static void print_job_runs(json_t *runs)
{
	json_t *v;
	size_t i;

	printf("job:             %zu runs merged (in the database a run's pids are run << 22 | pid)\n",
	       json_array_size(runs));
	json_array_foreach(runs, i, v) {
		json_t *spread = json_object_get(v, "spread_ns");

		printf("  run %-3" JSON_INTEGER_FORMAT " %-16s ranks %-6s %-12s shift %+.6f ms",
		       json_integer_value(json_object_get(v, "run")),
		       xp_esc(json_string_value(json_object_get(v, "host"))) ?: "?",
		       xp_esc(json_string_value(json_object_get(v, "ranks"))) ?: "?",
		       xp_esc(json_string_value(json_object_get(v, "method"))) ?: "?",
		       (double)json_integer_value(json_object_get(v, "shift_ns")) / 1e6);
		if (json_is_integer(spread))
			printf(", %" JSON_INTEGER_FORMAT " %s collectives: wall clocks off by %+.1f us,"
			       " +-%.1f us left", json_integer_value(json_object_get(v, "matched")),
			       xp_esc(json_string_value(json_object_get(v, "markers"))) ?: "",
			       (double)json_integer_value(json_object_get(v, "refine_ns")) / 1e3,
			       (double)json_integer_value(spread) / 1e3);
		printf("  (%s)\n", xp_esc(json_string_value(json_object_get(v, "path"))) ?: "?");
	}
}

/* Whether rows a and b have the same strings under keys k1 and k2. */
static int same_strings(json_t *a, json_t *b, const char *k1, const char *k2)
{
	const char *a1 = json_string_value(json_object_get(a, k1));
	const char *b1 = json_string_value(json_object_get(b, k1));
	const char *a2 = json_string_value(json_object_get(a, k2));
	const char *b2 = json_string_value(json_object_get(b, k2));

	return a1 && b1 && a2 && b2 && !strcmp(a1, b1) && !strcmp(a2, b2);
}

/* How well the run symbolized, and its modules. */
static void print_symbolization(json_t *sym)
{
	json_t *v;
	size_t i;

	printf("symbolization:   %.1f%% of sample frames resolved (%" JSON_INTEGER_FORMAT
	       " of %" JSON_INTEGER_FORMAT "); %" JSON_INTEGER_FORMAT " distinct frames, %"
	       JSON_INTEGER_FORMAT " stack nodes, %" JSON_INTEGER_FORMAT " kernel symbols\n",
	       json_real_value(json_object_get(sym, "percent_resolved")),
	       json_integer_value(json_object_get(sym, "sample_frames_resolved")),
	       json_integer_value(json_object_get(sym, "sample_frames")),
	       json_integer_value(json_object_get(sym, "distinct_frames")),
	       json_integer_value(json_object_get(sym, "distinct_stacks")),
	       json_integer_value(json_object_get(sym, "kallsyms_symbols")));
	if (json_integer_value(json_object_get(sym, "stack_copies")))
		printf("dwarf unwinding: %" JSON_INTEGER_FORMAT " of %" JSON_INTEGER_FORMAT
		       " stack copies reached further than frame pointers\n",
		       json_integer_value(json_object_get(sym, "stacks_unwound")),
		       json_integer_value(json_object_get(sym, "stack_copies")));
	if (json_integer_value(json_object_get(sym, "unwinds_no_fd")) ||
	    json_integer_value(json_object_get(sym, "unwinds_not_walked")))
		printf("                 %" JSON_INTEGER_FORMAT " not unwound (or not to their end)"
		       " for lack of file descriptors, %" JSON_INTEGER_FORMAT " for other errors\n",
		       json_integer_value(json_object_get(sym, "unwinds_no_fd")),
		       json_integer_value(json_object_get(sym, "unwinds_not_walked")));
	if (json_integer_value(json_object_get(sym, "launches_borrowed")))
		printf("launch stacks:   %" JSON_INTEGER_FORMAT " took an earlier copy's frames;"
		       " %" JSON_INTEGER_FORMAT " checks, %" JSON_INTEGER_FORMAT " found other frames\n",
		       json_integer_value(json_object_get(sym, "launches_borrowed")),
		       json_integer_value(json_object_get(sym, "stack_checks")),
		       json_integer_value(json_object_get(sym, "stack_checks_differed")));
	printf("modules:         %" JSON_INTEGER_FORMAT " with another build id on disk (frames kept"
	       " as module+offset), %" JSON_INTEGER_FORMAT " missing or unreadable\n",
	       json_integer_value(json_object_get(sym, "build_id_mismatches")),
	       json_integer_value(json_object_get(sym, "modules_missing")));
	/* a merged job lists a module once per run that mapped it: once here */
	json_array_foreach(json_object_get(sym, "modules"), i, v)
		if (!i || !same_strings(v, json_array_get(json_object_get(sym, "modules"), i - 1),
					"status", "path"))
			printf("  %-18s %s\n", xp_esc(json_string_value(json_object_get(v, "status"))),
			       xp_esc(json_string_value(json_object_get(v, "path"))));
}

/* The record counts; a merged job's runs of one host have rows of the same
 * stream name: one row each, summed, with how many runs. */
static void print_records(json_t *recs)
{
	size_t n = json_array_size(recs);

	printf("records:\n");
	for (size_t i = 0, j; i < n; i = j) {
		json_t *v = json_array_get(recs, i);
		json_int_t sum = 0;

		for (j = i; j < n && same_strings(v, json_array_get(recs, j), "stream", "kind"); j++)
			sum += json_integer_value(json_object_get(json_array_get(recs, j), "records"));
		printf("  %-14s %-8s %12" JSON_INTEGER_FORMAT, xp_esc(json_string_value(
		       json_object_get(v, "stream"))), xp_esc(json_string_value(json_object_get(
		       v, "kind"))), sum);
		if (j - i > 1)
			printf("  (%zu runs)", j - i);
		putchar('\n');
	}
}

static void print_processes(json_t *procs)
{
	json_t *v;
	size_t i;

	printf("processes:\n");
	json_array_foreach(procs, i, v) {
		printf("  %8" JSON_INTEGER_FORMAT " %-16s %4" JSON_INTEGER_FORMAT " threads %10"
		       JSON_INTEGER_FORMAT " samples",
		       json_integer_value(json_object_get(v, "pid")),
		       xp_esc(json_string_value(json_object_get(v, "name"))) ?: "?",
		       json_integer_value(json_object_get(v, "threads")),
		       json_integer_value(json_object_get(v, "samples")));
		if (json_object_get(v, "run"))      /* a merged job: which run it was */
			printf("  run %" JSON_INTEGER_FORMAT " on %s%s%s",
			       json_integer_value(json_object_get(v, "run")),
			       xp_esc(json_string_value(json_object_get(v, "host"))) ?: "?",
			       json_string_value(json_object_get(v, "rank")) ? ", rank " : "",
			       xp_esc(json_string_value(json_object_get(v, "rank"))) ?: "");
		putchar('\n');
	}
}

/* Launches of threads without Python that ingest placed at the line their
 * Python thread waited in (ingest/waitlines.h), and those it left. */
static void print_wait_lines(json_t *w)
{
	if (json_is_true(json_object_get(w, "off"))) {
		printf("waiting lines:   off (ingested with --raw-launch-stacks): launches of threads"
		       " without Python keep their own stacks\n");
		return;
	}
	printf("waiting lines:   %" JSON_INTEGER_FORMAT " launches of threads without Python placed at"
	       " the line their Python thread waited in; left as recorded: %" JSON_INTEGER_FORMAT
	       " with no Python thread waiting, %" JSON_INTEGER_FORMAT " with several\n",
	       json_integer_value(json_object_get(w, "placed")),
	       json_integer_value(json_object_get(w, "no_waiter")),
	       json_integer_value(json_object_get(w, "several")));
}

static void print_text(json_t *info)
{
	json_t *run = json_object_get(info, "run"), *sym = json_object_get(info, "symbolization");
	json_t *v;
	size_t i;
	const char *k;

	/* a merged job's facts are its first run's (merge keeps one meta) */
	if (json_object_get(info, "job_runs"))
		printf("facts of run 0 of %zu (each run's own, its command too: xpcorr info on its"
		       " directory)\n", json_array_size(json_object_get(info, "job_runs")));
	json_object_foreach(run, k, v) {
		if (!strcmp(k, "duration_ns"))
			printf("%-16s %.3f s (from %s)\n", "duration:",
			       (double)json_integer_value(v) / 1e9,
			       xp_esc(json_string_value(json_object_get(run, "duration_source"))));
		else if (json_is_string(v) && strcmp(k, "duration_source"))
			printf("%-16s %s\n", xp_esc(k), xp_esc(json_string_value(v)));
	}
	print_records(json_object_get(info, "records"));
	printf("lost:%s\n", json_array_size(json_object_get(info, "losses")) ? "" : " nothing");
	json_array_foreach(json_object_get(info, "losses"), i, v)
		printf("  %-8s %-16s %12" JSON_INTEGER_FORMAT "  (counted in %s)\n",
		       xp_esc(json_string_value(json_object_get(v, "kind"))),
		       xp_esc(json_string_value(json_object_get(v, "reason"))),
		       json_integer_value(json_object_get(v, "count")),
		       xp_esc(json_string_value(json_object_get(v, "source"))));
	print_symbolization(sym);
	xp_info_gpu_print(json_object_get(info, "gpu"));
	if (json_object_get(info, "python"))
		xp_info_python_print(json_object_get(info, "python"));
	if (json_object_get(info, "autograd"))
		xp_info_autograd_print(json_object_get(info, "autograd"));
	if (json_object_get(info, "wait_lines"))
		print_wait_lines(json_object_get(info, "wait_lines"));
	print_processes(json_object_get(info, "processes"));
	if (json_object_get(info, "job_runs"))
		print_job_runs(json_object_get(info, "job_runs"));
	printf("warnings:%s\n", json_array_size(json_object_get(info, "warnings")) ? "" : " none");
	json_array_foreach(json_object_get(info, "warnings"), i, v)
		printf("  %s\n", xp_esc(json_string_value(json_object_get(v, "message"))));
}

int cmd_info(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static const char *const formats[] = { "text", "json" };
	const char *format = "text";
	sqlite3 *db = NULL;
	int c, rc;
	json_t *info;

	while ((c = getopt_long(argc, argv, "f:h", opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			if (xp_cmd_choice("xpcorr info", "format", optarg, formats, 2) < 0)
				return XP_EXIT_USAGE;
			format = optarg;
			break;
		case 'h':
			printf("usage: xpcorr info [--format text|json] RUN_DIR\n");
			return XP_EXIT_OK;
		default:
			return XP_EXIT_USAGE;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "xpcorr info: expected [--format text|json] RUN_DIR\n");
		return XP_EXIT_USAGE;
	}
	if ((rc = xp_cmd_open_db("xpcorr info", argv[optind], &db)))
		return rc;
	info = xp_info(db);
	if (!strcmp(format, "json")) {
		json_dumpf(info, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(6));
		putchar('\n');
	} else {
		print_text(info);
	}
	json_decref(info);
	sqlite3_close(db);
	return XP_EXIT_OK;
}

/* cmd_ingest.c - `xpcorr ingest run/`: decode, symbolize and load a run into
 * run/xpcorr.db (schema in xpcorr-db(5)).
 *   xpcorr ingest run/              # keeps the valid part of a damaged run, warns
 *   xpcorr ingest --strict run/     # a damaged stream is an error (exit 1)
 *   xpcorr ingest -o mine.db run/   # a run you cannot write: the database elsewhere
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "cmd/jobsum_file.h"
#include "ingest/ingest.h"
#include "cmd/opendb.h"
#include "cmd/stopsig.h"
#include "src/textesc.h"

/* The terminal's progress line: how far the reading is, and which step runs
 * (the steps after the reading, indexing and correlating a large run, take
 * as long as the reading and move no byte counter). */
static const char *step = "";
static unsigned percent;

static void show_line(void)
{
	/* a percentage while the records are read, then the step alone */
	if (!strncmp(step, "reading", 7))
		fprintf(stderr, "\rxpcorr: ingesting %3u%%: %s\033[K", percent, step);
	else
		fprintf(stderr, "\rxpcorr: ingesting: %s\033[K", step);
}

static void show_progress(void *ctx, uint64_t done, uint64_t total)
{
	(void)ctx;
	if (total) {
		percent = (unsigned)(done * 100 / total);
		show_line();
	}
}

static void show_phase(void *ctx, const char *what)
{
	(void)ctx;
	step = what;
	show_line();
}

/* The correlation is the command's step in the load (opendb.c): named too. */
static int (*correlate)(void *ctx, sqlite3 *db, struct xp_load_result *res);

static int announce_correlation(void *ctx, sqlite3 *db, struct xp_load_result *res)
{
	show_phase(NULL, "correlating GPU work with the CPU stacks that launched it");
	return correlate(ctx, db, res);
}

/* On a terminal: the progress line, its steps, the correlation among them. */
static void show_steps(struct xp_load_opts *o)
{
	o->progress = show_progress;
	o->phase = show_phase;
	correlate = o->after_load;
	if (correlate)
		o->after_load = announce_correlation;
}

/* --max-records N, --max-expand N: 0, or -1 after saying why. */
static int parse_limit(struct xp_load_opts *o, int c, const char *arg)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(arg, &end, 10);
	if (c == 'R' && (errno || *end || !v || arg[0] == '-')) {
		fprintf(stderr, "xpcorr ingest: --max-records: expected a count above 0\n");
		return -1;
	}
	if (c == 'E' && (errno || *end || !v || v > 1000000 || arg[0] == '-')) {
		fprintf(stderr, "xpcorr ingest: --max-expand: expected 1 to 1000000\n");
		return -1;
	}
	if (c == 'R')
		o->max_records = v;
	else
		o->max_expand = (uint32_t)v;
	return 0;
}

/* What the database holds, and what symbolizing and unwinding cost. */
static void say_done(const struct xp_load_opts *o, const struct xp_load_result *res)
{
	fprintf(stderr, "xpcorr: %s%s%s: %" PRIu64 " samples, %" PRIu64 " stacks, %" PRIu64
		" frames, %.1f%% of sample frames symbolized\n", o->out_db ? o->out_db : o->run_dir,
		o->out_db ? "" : "/", o->out_db ? "" : XP_DB_NAME,
		res->samples, res->stacks, res->frames,
		res->sample_frames ? 100.0 * (double)res->sample_frames_resolved /
		(double)res->sample_frames : 100.0);
	if (res->addresses)
		fprintf(stderr, "xpcorr: symbolized %" PRIu64 " distinct user addresses in %.2f s"
			" (%.0f/s)\n", res->addresses, (double)res->symbolize_ns / 1e9,
			(double)res->addresses / ((double)res->symbolize_ns / 1e9 + 1e-9));
	if (res->unwind_ns)
		fprintf(stderr, "xpcorr: unwound %" PRIu64 " dwarf stack copies further than frame"
			" pointers in %.2f s\n", res->stacks_unwound, (double)res->unwind_ns / 1e9);
}

/* A job's rank gets its summary beside its database (jobsum_file.h),
 * made in the load (after the correlation, on the load's connection) and
 * written once the database is. */
struct summary_step {
	int (*correlate)(void *ctx, sqlite3 *db, struct xp_load_result *res);
	void *ctx;
	sqlite3 *mem;               /* the summary made, NULL: none (no rank) */
};

static int correlate_and_summarize(void *ctx, sqlite3 *db, struct xp_load_result *res)
{
	struct summary_step *s = ctx;
	int rc = s->correlate ? s->correlate(s->ctx, db, res) : 0;

	if (!rc && xp_cmd_has_rank(db))
		rc = xp_cmd_make_summary(db, &s->mem, res->error, sizeof(res->error));
	return rc;
}

static void add_summary_step(struct xp_load_opts *o, struct summary_step *s)
{
	s->correlate = o->after_load;
	s->ctx = o->after_load_ctx;
	o->after_load = correlate_and_summarize;
	o->after_load_ctx = s;
}

/* What is left after the load: its warnings, its error or its figures,
 * the job summary. */
static int finish(const struct xp_load_opts *o, const struct xp_load_result *res, int err,
		  int quiet, struct summary_step *sum)
{
	xp_print_load_warnings(res);
	if (err) {
		fprintf(stderr, "xpcorr: %s%s\n", xp_esc(res->error),
			err == -ECANCELED ? "; the previous database, if any, is unchanged" :
			!o->out_db && (err == -EACCES || err == -EROFS || err == -EPERM) &&
			!strncmp(res->error, "cannot create ", 14) ? " (xpcorr ingest -o FILE.db RUN "
			"writes the database elsewhere)" : "");
		sqlite3_close(sum->mem);
		return XP_EXIT_FAIL;
	}
	if (!quiet)
		say_done(o, res);
	/* every ingest loads anew: no summary made, no rank recorded */
	if (sum->mem && !o->out_db)
		err = xp_cmd_save_summary("xpcorr ingest", o->run_dir, sum->mem, o->trust_run_dir);
	sqlite3_close(sum->mem);
	return err ? XP_EXIT_FAIL : XP_EXIT_OK;
}

int cmd_ingest(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "strict", no_argument, NULL, 's' },
		{ "output", required_argument, NULL, 'o' },
		{ "symfs", required_argument, NULL, 'S' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "max-records", required_argument, NULL, 'R' },
		{ "max-expand", required_argument, NULL, 'E' },
		{ "trust-run-dir", no_argument, NULL, 'T' },
		{ "raw-launch-stacks", no_argument, NULL, 'W' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct xp_load_opts o;
	struct xp_load_result res;
	struct xp_stopsig stop;
	struct summary_step sum = { 0 };
	int c, quiet = 0, err;

	xp_cmd_load_opts(&o, NULL);
	while ((c = getopt_long(argc, argv, "so:S:qh", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			o.strict = 1;
			break;
		case 'o':
			o.out_db = optarg;
			break;
		case 'S':
			o.symfs = optarg;
			break;
		case 'q':
			quiet = 1;
			break;
		case 'T':
			o.trust_run_dir = 1;
			break;
		case 'W':
			o.raw_launch_stacks = 1;
			break;
		case 'R':
		case 'E':
			if (parse_limit(&o, c, optarg))
				return XP_EXIT_USAGE;
			break;
		case 'h':
			printf("usage: xpcorr ingest [-o FILE.db] [--strict] [--symfs DIR] [--quiet]"
			       " [--trust-run-dir] [--raw-launch-stacks] [--max-records N] [--max-expand N]"
			       " RUN_DIR\n"
			       "Writes RUN_DIR/xpcorr.db, or FILE.db with -o (see xpcorr-db(5)).\n");
			return XP_EXIT_OK;
		default:
			return XP_EXIT_USAGE;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "xpcorr ingest: expected one run directory\n");
		return XP_EXIT_USAGE;
	}
	o.run_dir = argv[optind];
	err = xp_cmd_need_path("xpcorr ingest", o.run_dir, "run directory");
	if (err)
		return err;
	if (!quiet && isatty(STDERR_FILENO))
		show_steps(&o);
	/* the load stops at the next record, the temporary database is removed */
	if (!o.out_db)
		add_summary_step(&o, &sum);
	xp_stopsig_catch(&stop);
	o.cancel = xp_stopsig_flag();
	err = xp_ingest(&o, &res);
	xp_stopsig_restore(&stop);
	if (o.progress)
		fprintf(stderr, "\r\033[K");
	return finish(&o, &res, err, quiet, &sum);
}

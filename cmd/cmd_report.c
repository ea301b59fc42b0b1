/* cmd_report.c - `xpcorr report`: prints a report of run/xpcorr.db.
 *   xpcorr report --top 20 --by stack --format csv run/ > stacks.csv
 * The only place of the report that prints to stderr. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cmd/cmd.h"
#include "ingest/ingest.h"
#include "cmd/opendb.h"
#include "cmd/output.h"
#include "export/report/report.h"
#include "db/runfacts.h"
#include "export/analysis/selection.h"
#include "src/textesc.h"
#include "export/report/views.h"
#include "export/render/weights.h"
#include "cmd/timearg.h"

static const char usage[] =
	"usage: xpcorr report [--top N] [--by VIEW] [--step N] [--skip-steps N]\n"
	"                     [--format text|csv|json] [--sort total|avg|instances|name]\n"
	"                     [--mangled] [--pid PID] [--rank N] [--since T] [--until T]\n"
	"                     [--stacks N] [--frames N] [--names short|full]\n"
	"                     [--width COLUMNS] [--weight gpu|cpu] [-o FILE] RUN_DIR|FILE.db\n"
	"  --top N                rows (default 30 in text; csv and json carry every\n"
	"                         row; 0 = all)\n"
	"  --since T, --until T   GPU work starting in [T, T): CLOCK_MONOTONIC ns as in\n"
	"                         the database, or +OFFSET from the run's start (+1.5s)\n"
	"  --weight gpu|cpu       --by source: GPU time (default) or CPU samples (the\n"
	"                         default for a run without GPU work)\n"
	"  -o, --output FILE      write there instead of stdout\n"
	"A run without GPU work is shown --by cpu unless --by is given.\n";

/* The usage, with the views' names from their table (views.c). */
static void print_usage(FILE *to)
{
	fputs(usage, to);
	fputs("VIEW: ", to);
	for (int i = 0; i < XP_BY_COUNT; i++)
		fprintf(to, "%s%s", i ? "|" : "", xp_views[i].name);
	fputc('\n', to);
}

static const char *long_name(const struct option *opts, int c)
{
	for (; opts->name; opts++)
		if (opts->val == c)
			return opts->name;
	return "?";
}

/* Whether the run has any GPU work: without it the report's own footer says
 * why (no GPU capture, no CUDA), and an empty view needs no second note. */
static int has_gpu_work(sqlite3 *db)
{
	return xp_weight_has_rows(db, XP_WEIGHT_GPU) == 1;
}

static int number(const char *arg, long long *v)
{
	char *end;

	errno = 0;
	*v = strtoll(arg, &end, 10);
	return errno || end == arg || *end || *v < 0 ? -1 : 0;
}

/* --step N ('T') and --skip-steps N ('K') of --by idle: 0, or -1 said. */
static int parse_steps(int c, const char *arg, struct xp_report_opts *o)
{
	long long v;

	if (number(arg, &v) == 0) {
		*(c == 'T' ? &o->step : &o->skip_steps) = v;
		return 0;
	}
	if (c == 'T')
		fprintf(stderr, "xpcorr report: --step %s: expected a step number of 0 or more\n", arg);
	else
		fprintf(stderr, "xpcorr report: --skip-steps %s: expected a number of steps, 0 or"
			" more\n", arg);
	return -1;
}

/* getopt into o: -1 to go on, else the exit status. */
static long long rank_wanted = -1;     /* --rank N, mapped to its process once the run is open */
static int64_t since_off = -1, until_off = -1;   /* --since/--until +OFFSET, or -1 */
static const char *output;             /* -o FILE, or NULL: stdout */
static int by_given;                   /* --by: else a run without GPU work shows cpu */
static int weight_wanted = -1;         /* --weight: 0 gpu, 1 cpu; -1 by the run */

/* --since/--until T into o (ns) or the offsets; 0, or the exit status
 * after saying what is wrong. */
static int parse_time(int c, const char *arg, struct xp_report_opts *o)
{
	const char *name = c == 'S' ? "since" : "until";
	long long v;

	if (arg[0] == '+') {
		if (!xp_cmd_parse_offset(arg, c == 'S' ? &since_off : &until_off))
			return 0;
		fprintf(stderr, "xpcorr report: --%s %s: expected +SECONDS with a unit (s, ms, us,"
			" ns), e.g. +1.5s, up to 1e18 ns\n", name, arg);
		return XP_EXIT_USAGE;
	}
	if (number(arg, &v) < 0) {
		fprintf(stderr, "xpcorr report: --%s %s: expected a number of ns, or +OFFSET such"
			" as +1.5s\n", name, arg);
		return XP_EXIT_USAGE;
	}
	*(c == 'S' ? &o->since : &o->until) = v;
	return 0;
}

/* The defaults that depend on other options, and --since before --until (in
 * ns or as offsets): -1 to go on, else the exit status. */
static int finish_options(struct xp_report_opts *o, int width_given, int top_given)
{
	if (!width_given)
		o->width = xp_cmd_text_width(output != NULL);
	/* a table for a script is whole; --top cuts it on purpose */
	if (!top_given && o->format != XP_FMT_TEXT)
		o->top = 0;
	if (o->since && o->until && o->since >= o->until) {
		fprintf(stderr, "xpcorr report: --since %lld is not before --until %lld: an empty"
			" window\n", (long long)o->since, (long long)o->until);
		return XP_EXIT_USAGE;
	}
	if (since_off >= 0 && until_off >= 0 && since_off >= until_off) {
		fprintf(stderr, "xpcorr report: --since +%lldns is not before --until +%lldns: an"
			" empty window\n", (long long)since_off, (long long)until_off);
		return XP_EXIT_USAGE;
	}
	return -1;
}

/* --by, --format, --sort, --names: 0, or -1 after saying why. */
static int parse_choice(int c, const char *opt, struct xp_report_opts *o)
{
	static const char *const fmts[] = { "text", "csv", "json" };
	static const char *const sorts[] = { "total", "avg", "instances", "name" };
	static const char *const namings[] = { "short", "full" };
	const char *bys[XP_BY_COUNT];
	const char *const *names;
	int i, n;

	for (i = 0; i < XP_BY_COUNT; i++)
		bys[i] = xp_views[i].name;
	names = c == 'b' ? bys : c == 'f' ? fmts : c == 's' ? sorts : namings;
	n = c == 'b' ? XP_BY_COUNT : c == 'f' ? 3 : c == 's' ? 4 : 2;
	i = xp_cmd_choice("xpcorr report", opt, optarg, names, n);
	if (i < 0)
		return -1;
	if (c == 'N')
		o->full_names = i == 1;
	else if (c == 'b') {
		o->by = (enum xp_report_by)i;
		by_given = 1;
	}
	else if (c == 'f')
		o->format = (enum xp_report_format)i;
	else
		o->sort = (enum xp_report_sort)i;
	return 0;
}

/* --top, --pid, --stacks, --frames, --width: 0, or -1 after saying why. */
static int parse_count(int c, const char *opt, struct xp_report_opts *o)
{
	long long v;

	if (number(optarg, &v) < 0 || v > 0xffffffffll) {
		fprintf(stderr, "xpcorr report: --%s %s: expected a number of 0 or more\n", opt,
			optarg);
		return -1;
	}
	if (c == 'n')
		o->top = (unsigned)v;
	if (c == 'p')
		o->pid = (uint32_t)v;
	if (c == 'k')
		o->stacks = (unsigned)v;
	if (c == 'F')
		o->frames = (unsigned)v;
	if (c == 'W')
		o->width = (unsigned)v;
	return 0;
}

static int parse_options(int argc, char **argv, struct xp_report_opts *o)
{
	static const struct option opts[] = {
		{ "top", required_argument, NULL, 'n' }, { "by", required_argument, NULL, 'b' },
		{ "format", required_argument, NULL, 'f' }, { "sort", required_argument, NULL, 's' },
		{ "mangled", no_argument, NULL, 'm' }, { "pid", required_argument, NULL, 'p' },
		{ "since", required_argument, NULL, 'S' }, { "until", required_argument, NULL, 'U' },
		{ "stacks", required_argument, NULL, 'k' }, { "frames", required_argument, NULL, 'F' },
		{ "names", required_argument, NULL, 'N' }, { "width", required_argument, NULL, 'W' },
		{ "rank", required_argument, NULL, 'R' }, { "step", required_argument, NULL, 'T' },
		{ "output", required_argument, NULL, 'o' }, { "weight", required_argument, NULL, 'w' },
		{ "skip-steps", required_argument, NULL, 'K' },
		{ "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 },
	};
	int c, i, width_given = 0, top_given = 0;

	optind = 1;
	while ((c = getopt_long(argc, argv, "n:b:f:s:mp:S:U:k:F:N:W:R:T:o:K:h", opts, NULL)) != -1) {
		switch (c) {
		case 'w':
			if ((weight_wanted = xp_cmd_choice("xpcorr report", "weight", optarg,
							   (const char *const[]){ "gpu", "cpu" }, 2)) < 0)
				return XP_EXIT_USAGE;
			break;
		case 'b': case 'f': case 's': case 'N':
			if (parse_choice(c, long_name(opts, c), o))
				return XP_EXIT_USAGE;
			break;
		case 'm':
			o->mangled = 1;
			break;
		case 'o':
			output = optarg;
			break;
		case 'S': case 'U':
			if ((i = parse_time(c, optarg, o)))
				return i;
			break;
		case 'R':
			if (number(optarg, &rank_wanted) < 0 || rank_wanted > 0x7fffffff) {
				fprintf(stderr, "xpcorr report: --rank %s: expected a number of 0 or more\n",
					optarg);
				return XP_EXIT_USAGE;
			}
			break;
		case 'T': case 'K':
			if (parse_steps(c, optarg, o))
				return XP_EXIT_USAGE;
			break;
		case 'n': case 'p': case 'k': case 'F': case 'W':
			if (parse_count(c, long_name(opts, c), o))
				return XP_EXIT_USAGE;
			top_given |= c == 'n';
			width_given |= c == 'W';
			break;
		case 'h':
			print_usage(stdout);
			return XP_EXIT_OK;
		default:
			print_usage(stderr);
			return XP_EXIT_USAGE;
		}
	}
	if (optind != argc - 1) {
		print_usage(stderr);
		return XP_EXIT_USAGE;
	}
	if (weight_wanted >= 0 && o->by != XP_BY_SOURCE) {
		fprintf(stderr, "xpcorr report: --weight: only with --by source (--by cpu shows CPU"
			" samples, the other views GPU work)\n");
		return XP_EXIT_USAGE;
	}
	return finish_options(o, width_given, top_given);
}

/* A run without GPU work but with CPU samples is a CPU profile: its report
 * is --by cpu, and --by source counts samples (a GPU run's stay as they
 * were). 0, or -EIO. */
static int pick_cpu(sqlite3 *db, struct xp_report_opts *o)
{
	int gpu, cpu;

	if (weight_wanted >= 0) {
		o->cpu = weight_wanted == 1;
		return 0;
	}
	if (by_given && o->by != XP_BY_SOURCE)
		return 0;
	if ((gpu = xp_weight_has_rows(db, XP_WEIGHT_GPU)) < 0 ||
	    (cpu = xp_weight_has_rows(db, XP_WEIGHT_CPU)) < 0)
		return -EIO;
	if (gpu || !cpu)
		return 0;
	if (!by_given)
		o->by = XP_BY_CPU;
	o->cpu = 1;
	return 0;
}

/* --rank N: the process the launcher gave that rank (xp_ranks); 0, or the
 * exit status after saying why (db closed then). */
static int pid_of_rank(sqlite3 *db, const char *run, struct xp_report_opts *o)
{
	if (xp_db_pid_of_rank(db, rank_wanted, &o->pid) == 1)
		return 0;
	fprintf(stderr, "xpcorr report: --rank %lld: no process of %s had that rank (ranks come from"
		" RANK, SLURM_PROCID, OMPI_COMM_WORLD_RANK or PMI_RANK in a GPU process's"
		" environment)\n", rank_wanted, run);
	sqlite3_close(db);
	return XP_EXIT_USAGE;
}

/* --since/--until +OFFSET: from the run's start into o; 0, or the exit
 * status after saying why (db closed then). */
static int resolve_offsets(sqlite3 *db, const char *run, struct xp_report_opts *o)
{
	int64_t t0;
	int rc;

	if (since_off < 0 && until_off < 0)
		return 0;
	if ((rc = xp_db_run_start_ns(db, &t0)) == -EIO) {
		fprintf(stderr, "xpcorr: report on %s: %s\n", run, xp_esc(sqlite3_errmsg(db)));
		sqlite3_close(db);
		return XP_EXIT_FAIL;
	}
	if (rc < 0) {
		fprintf(stderr, "xpcorr report: --since/--until +OFFSET: %s has no start time"
			" (meta.start_monotonic_ns); give CLOCK_MONOTONIC ns\n", run);
		sqlite3_close(db);
		return XP_EXIT_USAGE;
	}
	if ((since_off >= 0 && xp_cmd_offset_time(t0, since_off, &o->since)) ||
	    (until_off >= 0 && xp_cmd_offset_time(t0, until_off, &o->until))) {
		fprintf(stderr, "xpcorr report: --since/--until +OFFSET: %s starts at %lld ns"
			" (meta.start_monotonic_ns): no time after it fits in 64 bits\n", run,
			(long long)t0);
		sqlite3_close(db);
		return XP_EXIT_USAGE;
	}
	if (o->since && o->until && o->since >= o->until) {
		fprintf(stderr, "xpcorr report: --since %lld is not before --until %lld: an empty"
			" window\n", (long long)o->since, (long long)o->until);
		sqlite3_close(db);
		return XP_EXIT_USAGE;
	}
	return 0;
}

int cmd_report(int argc, char **argv)
{
	struct xp_report_opts o = XP_REPORT_DEFAULTS;
	sqlite3 *db = NULL;
	struct xp_cmd_out out;
	size_t groups = 0;
	int rc;

	if ((rc = parse_options(argc, argv, &o)) >= 0)
		return rc;
	/* a run directory is ingested first when its database is missing or stale */
	if ((rc = xp_cmd_open_db("xpcorr report", argv[optind], &db)))
		return rc;
	if (rank_wanted >= 0 && (rc = pid_of_rank(db, argv[optind], &o)))
		return rc;
	if ((rc = resolve_offsets(db, argv[optind], &o)))
		return rc;
	if (o.pid && !xp_selection_matches(db, o.pid, -1)) {
		fprintf(stderr, "xpcorr report: --pid %u: no such process in %s (xpcorr report"
			" --by thread lists them)\n", (unsigned)o.pid, argv[optind]);
		sqlite3_close(db);
		return XP_EXIT_USAGE;
	}
	/* never onto what it reads: the run's database or its files */
	if ((rc = xp_cmd_out_open(&out, "xpcorr report", output,
				  (const char *[]){ argv[optind] }, 1))) {
		sqlite3_close(db);
		return rc;
	}
	o.notes = stderr;       /* csv: one table on stdout, the footer beside it */
	rc = pick_cpu(db, &o);
	if (rc == 0)
		rc = xp_report(db, &o, out.f, &groups);
	if (rc < 0)
		fprintf(stderr, "xpcorr: report on %s: %s\n", argv[optind],
			rc == -EIO ? xp_esc(sqlite3_errmsg(db)) : strerror(-rc));
	else if (!groups && has_gpu_work(db) && (o.since || o.until))
		fprintf(stderr, "xpcorr report: nothing to show by %s in %s: no GPU work started"
			" in the --since/--until window\n", xp_views[o.by].name, argv[optind]);
	else if (!groups && (o.by == XP_BY_CPU || o.cpu))
		fprintf(stderr, "xpcorr report: nothing to show by %s in %s: %s\n", xp_views[o.by].name,
			argv[optind], xp_views[XP_BY_CPU].empty_why);
	else if (!groups && has_gpu_work(db))   /* an empty table is an answer: say what it means */
		fprintf(stderr, "xpcorr report: nothing to show by %s in %s: %s\n", xp_views[o.by].name,
			argv[optind], xp_views[o.by].empty_why);
	sqlite3_close(db);
	return xp_cmd_out_close(&out, rc < 0 ? XP_EXIT_FAIL : XP_EXIT_OK);
}

/* cmd_export.c - `xpcorr export`: folded stacks, flame graphs, Chrome traces.
 *   xpcorr export --format folded run/ > cpu.folded
 *   xpcorr export --format chrome -o trace.json --since NS --until NS run/
 *   xpcorr export --format svg -o cpu.svg run/
 *   xpcorr export --format svg --input cpu.folded -o cpu.svg    # any folded file
 *   xpcorr export --format folded --root tid --no-kernel --pid 1234 run/
 *   xpcorr export --format folded --weight gpu run/   # launching stack;kernel gpu_ns
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export/chrome/chrome.h"
#include "cmd/cmd.h"
#include "export/render/folded.h"
#include "ingest/ingest.h"
#include "cmd/opendb.h"
#include "cmd/output.h"
#include "db/runfacts.h"
#include "export/analysis/selection.h"
#include "export/render/svg.h"
#include "cmd/timearg.h"
#include "export/render/weights.h"

static void usage(FILE *out)
{
	fprintf(out,
		"usage: xpcorr export --format folded|svg|chrome [options] RUN_DIR\n"
		"       xpcorr export --format svg --input FILE.folded [-o FILE.svg]\n"
		"  -o, --output FILE      write there instead of stdout\n"
		"  --weight cpu|gpu|offcpu|api  what a line counts: CPU samples (default),\n"
		"                         GPU ns under the launching stack (kernel or copy\n"
		"                         as leaf), ns off CPU (record --off-cpu), ns in\n"
		"                         CUDA API calls (API name as leaf)\n"
		"  --exact-only           gpu, api: drop time attributed by inference\n"
		"                         (leaf marked ' [inferred]') and unattributed time\n"
		"  --differential         --input holds 'stack base new' lines (xpcorr diff\n"
		"                         --format folded): red grew, blue shrank\n"
		"  --root comm|pid|tid|none|python  first frame: thread name (default), name-PID,\n"
		"                         name-PID/TID, nothing, or the outermost Python frame\n"
		"                         (the interpreter's frames between Python frames left\n"
		"                         out; --native keeps them)\n"
		"  --pid PID, --tid TID, --comm NAME   only these samples\n"
		"  --no-kernel            drop kernel frames\n"
		"  --title TEXT           SVG title\n"
		"  --minwidth PX          SVG: frames narrower than PX pixels are not drawn (default 1)\n"
		"  --since T, --until T   chrome: only events starting in [T, T): CLOCK_MONOTONIC\n"
		"                         ns as in the database, or +OFFSET from the run's start\n"
		"                         (+1.5s, +200ms, +50us, +1000ns)\n"
		"  --absolute-time        chrome: ts in CLOCK_MONOTONIC us (default: from the run's\n"
		"                         start, which baseTimeNanoseconds gives, as Kineto)\n"
		"  --queue-depth          chrome: a counter per stream of its work launched and not\n"
		"                         yet finished (two events per kernel, copy or set)\n");
}

static int parse_int(const char *s, int64_t *v)
{
	char *end;

	errno = 0;
	*v = strtoll(s, &end, 10);
	return errno || end == s || *end || *v < 0 ? -EINVAL : 0;
}

/* The size past which a chrome trace gets a warning; the environment may
 * lower it (tests cannot write a gigabyte). */
static uint64_t chrome_warn_bytes(void)
{
	const char *e = getenv("XPCORR_CHROME_WARN_BYTES");
	int64_t v;

	return e && !parse_int(e, &v) ? (uint64_t)v : XP_CHROME_BROWSER_LIMIT;
}

/* What the command line asked for. */
struct export_args {
	struct xp_folded_opts fo;
	struct xp_svg_opts so;
	struct xp_chrome_opts co;
	int64_t since_off, until_off;           /* +OFFSET from the run's start, or -1 */
	int absolute;                           /* chrome: ts in CLOCK_MONOTONIC, not from the start */
	const char *format, *output, *input;
};

/* --minwidth PX, --since/--until NS or +OFFSET, --pid, --tid into a.
 * 0, or -1 after saying what is wrong. */
static int parse_number_option(int c, const char *arg, struct export_args *a)
{
	const char *name = c == 'M' ? "minwidth" : c == 'p' ? "pid" : c == 't' ? "tid" :
			   c == 'S' ? "since" : "until";

	if (c == 'M') {
		char *end;

		errno = 0;
		a->so.min_width = strtod(arg, &end);
		if (!errno && end != arg && !*end && a->so.min_width > 0 && a->so.min_width <= 1000)
			return 0;
		fprintf(stderr, "xpcorr export: --minwidth %s: expected pixels, more than 0"
			" and at most 1000 (e.g. 0.1)\n", arg);
		return -1;
	}
	if ((c == 'S' || c == 'U') && arg[0] == '+') {
		if (!xp_cmd_parse_offset(arg, c == 'S' ? &a->since_off : &a->until_off))
			return 0;
		fprintf(stderr, "xpcorr export: --%s %s: expected +SECONDS with a unit (s, ms, us,"
			" ns), e.g. +1.5s, up to 1e18 ns\n", name, arg);
		return -1;
	}
	if (!parse_int(arg, c == 'p' ? &a->fo.pid : c == 't' ? &a->fo.tid :
		       c == 'S' ? &a->co.since : &a->co.until))
		return 0;
	fprintf(stderr, "xpcorr export: --%s %s: expected a number%s\n", name, arg,
		c == 'S' || c == 'U' ? " of ns, or +OFFSET such as +1.5s" : "");
	return -1;
}

/* getopt: -1 to go on, else the exit status. */
static int parse_options(int argc, char **argv, struct export_args *a)
{
	static const char *const formats[] = { "folded", "svg", "chrome" };
	static const char *const roots[] = { "comm", "pid", "tid", "none", "python" };
	static const enum xp_folded_root root_of[] = { XP_ROOT_COMM, XP_ROOT_PID, XP_ROOT_TID,
						XP_ROOT_NONE, XP_ROOT_PYTHON };
	static const struct option opts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "weight", required_argument, NULL, 'w' },
		{ "exact-only", no_argument, NULL, 'E' },
		{ "differential", no_argument, NULL, 'D' },
		{ "output", required_argument, NULL, 'o' },
		{ "input", required_argument, NULL, 'i' },
		{ "root", required_argument, NULL, 'r' },
		{ "pid", required_argument, NULL, 'p' },
		{ "tid", required_argument, NULL, 't' },
		{ "comm", required_argument, NULL, 'c' },
		{ "no-kernel", no_argument, NULL, 'K' },
		{ "title", required_argument, NULL, 'T' },
		{ "minwidth", required_argument, NULL, 'M' },
		{ "since", required_argument, NULL, 'S' },
		{ "absolute-time", no_argument, NULL, 'A' },
		{ "queue-depth", no_argument, NULL, 'Q' },
		{ "native", no_argument, NULL, 'N' },
		{ "until", required_argument, NULL, 'U' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct xp_folded_opts *fo = &a->fo;
	int c, i;

	while ((c = getopt_long(argc, argv, "f:o:i:h", opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			if (xp_cmd_choice("xpcorr export", "format", optarg, formats, 3) < 0)
				return XP_EXIT_USAGE;
			a->format = optarg;
			break;
		case 'E': fo->exact_only = 1; break;
		case 'A': a->absolute = 1; break;
		case 'Q': a->co.queue_depth = 1; break;
		case 'N': fo->native = 1; break;
		case 'D': a->so.differential = 1; break;
		case 'w':
			if ((i = xp_cmd_choice("xpcorr export", "weight", optarg, xp_weight_names,
					       XP_WEIGHT_COUNT)) < 0)
				return XP_EXIT_USAGE;
			fo->weight = (enum xp_weight)i;
			break;
		case 'o': a->output = optarg; break;
		case 'i': a->input = optarg; break;
		case 'K': fo->no_kernel = 1; break;
		case 'c': fo->comm = optarg; break;
		case 'T': a->so.title = optarg; break;
		case 'M': case 'S': case 'U': case 'p': case 't':
			if (parse_number_option(c, optarg, a))
				return XP_EXIT_USAGE;
			break;
		case 'r':
			if ((i = xp_cmd_choice("xpcorr export", "root", optarg, roots, 5)) < 0)
				return XP_EXIT_USAGE;
			fo->root = root_of[i];
			break;
		case 'h':
			usage(stdout);
			return XP_EXIT_OK;
		default:
			usage(stderr);
			return XP_EXIT_USAGE;
		}
	}
	return -1;
}

/* Combinations that make no sense: -1 to go on, else the exit status. */
static int check_options(int argc, struct export_args *a)
{
	const char *format = a->format;

	if (!format && optind < argc) {
		/* one line, not the usage's 25 */
		fprintf(stderr, "xpcorr export: --format is needed: folded, svg or chrome (see "
			"xpcorr export --help)\n");
		return XP_EXIT_USAGE;
	}
	if (!format || (a->input && strcmp(format, "svg")) ||
	    (a->input ? optind != argc : optind != argc - 1)) {
		usage(stderr);
		return XP_EXIT_USAGE;
	}
	if (a->so.differential && !a->input) {
		fprintf(stderr, "xpcorr export: --differential reads --input; xpcorr diff --format svg"
			" draws two runs\n");
		return XP_EXIT_USAGE;
	}
	a->so.unit = xp_weight_unit(a->fo.weight);
	a->so.gpu_leaves = a->fo.weight == XP_WEIGHT_GPU && !a->fo.no_leaf;
	if (!a->so.title && a->fo.weight != XP_WEIGHT_CPU)
		a->so.title = xp_weight_title(a->fo.weight);
	if (a->since_off >= 0 && a->until_off >= 0 && a->since_off >= a->until_off) {
		fprintf(stderr, "xpcorr export: --since +%lldns is not before --until +%lldns: an"
			" empty window\n", (long long)a->since_off, (long long)a->until_off);
		return XP_EXIT_USAGE;
	}
	if (a->co.since && a->co.until && a->co.since >= a->co.until) {
		fprintf(stderr, "xpcorr export: --since %lld is not before --until %lld: an empty"
			" window\n", (long long)a->co.since, (long long)a->co.until);
		return XP_EXIT_USAGE;
	}
	if ((a->co.since || a->co.until || a->since_off >= 0 || a->until_off >= 0) &&
	    strcmp(format, "chrome")) {
		fprintf(stderr, "xpcorr export: --since and --until are for --format chrome\n");
		return XP_EXIT_USAGE;
	}
	if (a->fo.native && a->fo.root != XP_ROOT_PYTHON) {
		fprintf(stderr, "xpcorr export: --native is for --root python\n");
		return XP_EXIT_USAGE;
	}
	if ((a->absolute || a->co.queue_depth) && strcmp(format, "chrome")) {
		fprintf(stderr, "xpcorr export: --%s is for --format chrome\n",
			a->absolute ? "absolute-time" : "queue-depth");
		return XP_EXIT_USAGE;
	}
	if (!strcmp(format, "chrome") && (a->fo.weight != XP_WEIGHT_CPU || a->fo.exact_only)) {
		fprintf(stderr, "xpcorr export: --weight and --exact-only are for folded and svg;"
			" a chrome trace holds every kind\n");
		return XP_EXIT_USAGE;
	}
	return -1;
}

/* --format chrome: 0 written, 1 failed after saying why, or a negative errno. */
static int export_chrome(sqlite3 *db, struct export_args *a, const char *run, FILE *out)
{
	struct xp_chrome_opts *co = &a->co;
	struct xp_chrome_stats cs = { 0 };
	int64_t t0 = 0;
	int err = xp_db_run_start_ns(db, &t0);

	if (err == -EIO)
		return err;
	co->pid = a->fo.pid;
	/* as Kineto: times from the run's start (baseTimeNanoseconds says where) */
	if (!a->absolute && !err && t0 > 0)
		co->base = t0;
	if (a->since_off >= 0 || a->until_off >= 0) {
		if (err) {
			fprintf(stderr, "xpcorr export: --since/--until +OFFSET: %s has no start"
				" time (meta.start_monotonic_ns); give CLOCK_MONOTONIC ns\n", run);
			return 1;
		}
		if ((a->since_off >= 0 && xp_cmd_offset_time(t0, a->since_off, &co->since)) ||
		    (a->until_off >= 0 && xp_cmd_offset_time(t0, a->until_off, &co->until))) {
			fprintf(stderr, "xpcorr export: --since/--until +OFFSET: %s starts at %lld"
				" ns (meta.start_monotonic_ns): no time after it fits in 64 bits\n",
				run, (long long)t0);
			return 1;
		}
	}
	err = xp_chrome_write(db, co, out, &cs);
	/* a window with nothing in it is a mistake, not an empty trace */
	if (!err && (co->since || co->until) && cs.events == cs.metadata) {
		fprintf(stderr, "xpcorr export: no event starts in the --since/--until window"
			" (CLOCK_MONOTONIC ns %lld to %s); the run's times are in `xpcorr info`,"
			" offsets such as +1.5s count from its start\n", (long long)co->since,
			co->until ? "its --until" : "its end");
		return 1;
	}
	if (!err && cs.bytes > chrome_warn_bytes())
		fprintf(stderr, "xpcorr: warning: %s: the trace is %.2f GB; the Perfetto UI loads"
			" about 1 GB in a browser: cut it with --since/--until/--pid, or open"
			" it with trace_processor\n", a->output ? a->output : "stdout",
			(double)cs.bytes / 1e9);
	return err;
}

/* --format svg: collapse (unless --input gives folded text), then render. */
static int export_svg(sqlite3 *db, struct export_args *a, FILE *folded, FILE *out)
{
	char *mem = NULL;
	size_t memlen = 0;
	uint64_t bad = 0;
	int err = 0;

	if (!folded) {
		/* one path for both inputs: the folded text */
		FILE *m = open_memstream(&mem, &memlen);

		if (!m)
			return -ENOMEM;
		err = xp_folded_write(db, &a->fo, m);
		fclose(m);
		if (!err && !(folded = fmemopen(mem, memlen ? memlen : 1, "r")))
			err = -ENOMEM;
		if (err)
			goto out;
	}
	err = xp_svg_render(folded, &a->so, out, &bad);
	if (bad)
		fprintf(stderr, "xpcorr: warning: %s: %" PRIu64 " lines that are not"
			" 'frame;frame count' were skipped\n", a->input ? a->input : "folded", bad);
	if (!a->input)
		fclose(folded);
out:
	free(mem);
	return err;
}

/* A --pid/--tid that matches nothing is a mistake, not an empty graph; in
 * a merged job a --pid is the local pid a person sees, or the stored one
 * (gtid.h: the run above bit 22): the filter takes the stored one. */
static int check_selection(sqlite3 *db, struct export_args *a, const char *run)
{
	int64_t stored[2];
	int n;

	if (!xp_selection_matches(db, a->fo.pid, a->fo.tid)) {
		if (a->fo.tid >= 0 && a->fo.pid >= 0)
			fprintf(stderr, "xpcorr export: --pid %lld --tid %lld: no such thread in %s"
				" (xpcorr info lists them)\n", (long long)a->fo.pid,
				(long long)a->fo.tid, run);
		else
			fprintf(stderr, "xpcorr export: --%s %lld: no such %s in %s (xpcorr info"
				" lists them)\n", a->fo.tid >= 0 ? "tid" : "pid",
				(long long)(a->fo.tid >= 0 ? a->fo.tid : a->fo.pid),
				a->fo.tid >= 0 ? "thread" : "process", run);
		return XP_EXIT_USAGE;
	}
	if (a->fo.pid < 0 || (n = xp_selection_stored_pid(db, a->fo.pid, stored)) == 0)
		return 0;               /* known only to tables without pids of their own */
	if (n > 1 && stored[0] != a->fo.pid) {
		fprintf(stderr, "xpcorr export: --pid %lld: a process of that pid in more than one"
			" run of %s (stored as %lld and %lld): give the stored pid\n",
			(long long)a->fo.pid, run, (long long)stored[0], (long long)stored[1]);
		return XP_EXIT_USAGE;
	}
	if (n > 1)              /* run 0's, stored as it is; another run has it too */
		fprintf(stderr, "xpcorr export: --pid %lld: the job's first run's process; another"
			" run's of that pid is stored as %lld\n", (long long)a->fo.pid,
			(long long)stored[1]);
	a->fo.pid = stored[0];
	return 0;
}

int cmd_export(int argc, char **argv)
{
	struct export_args a = {
		.fo = { .root = XP_ROOT_COMM, .pid = -1, .tid = -1 },
		.co = { .pid = -1 },
		.since_off = -1, .until_off = -1,
	};
	struct xp_cmd_out out = { .dirfd = -1 };
	FILE *folded = NULL;
	sqlite3 *db = NULL;
	int err, rc = XP_EXIT_FAIL;

	if ((rc = parse_options(argc, argv, &a)) >= 0 || (rc = check_options(argc, &a)) >= 0)
		return rc;
	rc = XP_EXIT_FAIL;
	if (a.input) {
		folded = fopen(a.input, "re");
		if (!folded) {
			fprintf(stderr, "xpcorr: cannot read %s: %s\n", a.input, strerror(errno));
			return XP_EXIT_FAIL;
		}
	} else {
		if ((rc = xp_cmd_open_db("xpcorr export", argv[optind], &db)))
			return rc;
		rc = XP_EXIT_FAIL;
		if ((rc = check_selection(db, &a, argv[optind]))) {
			sqlite3_close(db);
			return rc;
		}
		rc = XP_EXIT_FAIL;
	}
	/* an empty flame graph should say why */
	if (db && strcmp(a.format, "chrome") && xp_weight_has_rows(db, a.fo.weight) == 0)
		fprintf(stderr, "xpcorr: warning: %s\n", xp_weight_empty_hint(a.fo.weight));
	/* never onto what it reads: the run (its database, its files) or --input */
	if ((rc = xp_cmd_out_open(&out, "xpcorr export", a.output,
				  (const char *[]){ a.input ? a.input : argv[optind] }, 1)))
		goto out;
	rc = XP_EXIT_FAIL;
	if (!strcmp(a.format, "chrome"))
		err = export_chrome(db, &a, argv[optind], out.f);
	else if (!strcmp(a.format, "folded"))
		err = xp_folded_write(db, &a.fo, out.f);
	else
		err = export_svg(db, &a, folded, out.f);
	if (err == 1)
		goto out;       /* said why; rc is still a failure */
	if (err == -EIO && db && !ferror(out.f))    /* -EIO of a write is not the db's */
		fprintf(stderr, "xpcorr: export: %s\n", sqlite3_errmsg(db));
	else if (err)
		fprintf(stderr, "xpcorr: export: %s\n", strerror(-err));
	else
		rc = XP_EXIT_OK;
out:
	rc = xp_cmd_out_close(&out, rc);
	if (folded)
		fclose(folded);
	sqlite3_close(db);
	return rc;
}

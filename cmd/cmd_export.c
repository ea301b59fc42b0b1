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

#include "chrome.h"
#include "cmd.h"
#include "folded.h"
#include "ingest.h"
#include "opendb.h"
#include "svg.h"
#include "weights.h"

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
		"  --root comm|pid|tid|none  first frame: thread name (default), name-PID,\n"
		"                         name-PID/TID, or nothing\n"
		"  --pid PID, --tid TID, --comm NAME   only these samples\n"
		"  --no-kernel            drop kernel frames\n"
		"  --title TEXT           SVG title\n"
		"  --minwidth PX          SVG: frames narrower than PX pixels are not drawn (default 1)\n"
		"  --since T, --until T   chrome: only events starting in [T, T): CLOCK_MONOTONIC\n"
		"                         ns as in the database, or +OFFSET from the run's start\n"
		"                         (+1.5s, +200ms, +50us, +1000ns)\n");
}

static int parse_int(const char *s, int64_t *v)
{
	char *end;

	errno = 0;
	*v = strtoll(s, &end, 10);
	return errno || end == s || *end || *v < 0 ? -EINVAL : 0;
}

/* "+1.5s", "+200ms", "+50us", "+1000ns" (or "+1500000000"): an offset from
 * the run's start, in ns. */
static int parse_offset(const char *s, int64_t *ns)
{
	static const struct { const char *unit; double scale; } units[] = {
		{ "ns", 1 }, { "us", 1e3 }, { "ms", 1e6 }, { "s", 1e9 }, { "", 1 },
	};
	char *end;
	double v;

	if (s[0] != '+')
		return -EINVAL;
	errno = 0;
	v = strtod(s + 1, &end);
	if (errno || end == s + 1 || v < 0 || v > 1e6)
		return -EINVAL;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (!strcmp(end, units[i].unit)) {
			*ns = (int64_t)(v * units[i].scale + 0.5);
			return 0;
		}
	return -EINVAL;
}

/* The run's start (meta.json's, CLOCK_MONOTONIC ns), or -1. */
static int64_t run_start_ns(sqlite3 *db)
{
	sqlite3_stmt *st;
	int64_t t = -1;

	if (sqlite3_prepare_v2(db, "SELECT CAST(value AS INTEGER) FROM META_DATA_EXPORT"
			       " WHERE name = 'meta.start_monotonic_ns'", -1, &st, NULL) != SQLITE_OK)
		return -1;
	if (sqlite3_step(st) == SQLITE_ROW)
		t = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return t;
}

/* The size past which a chrome trace gets a warning; the environment may
 * lower it (tests cannot write a gigabyte). */
static uint64_t chrome_warn_bytes(void)
{
	const char *e = getenv("XPCORR_CHROME_WARN_BYTES");
	int64_t v;

	return e && !parse_int(e, &v) ? (uint64_t)v : XP_CHROME_BROWSER_LIMIT;
}

int cmd_export(int argc, char **argv)
{
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
		{ "until", required_argument, NULL, 'U' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct xp_folded_opts fo = { .root = XP_ROOT_COMM, .pid = -1, .tid = -1 };
	struct xp_svg_opts so = { 0 };
	struct xp_chrome_opts co = { .pid = -1 };
	struct xp_chrome_stats cs = { 0 };
	int64_t since_off = -1, until_off = -1;
	const char *format = NULL, *output = NULL, *input = NULL;
	FILE *out = stdout, *folded = NULL;
	char *mem = NULL;
	size_t memlen = 0;
	sqlite3 *db = NULL;
	int c, err, rc = XP_EXIT_FAIL;
	uint64_t bad = 0;

	while ((c = getopt_long(argc, argv, "f:o:i:h", opts, NULL)) != -1) {
		switch (c) {
		case 'f': format = optarg; break;
		case 'E': fo.exact_only = 1; break;
		case 'D': so.differential = 1; break;
		case 'w':
			if (xp_weight_parse(optarg, &fo.weight)) {
				fprintf(stderr, "xpcorr export: --weight is cpu, gpu, offcpu or api\n");
				return XP_EXIT_USAGE;
			}
			break;
		case 'o': output = optarg; break;
		case 'i': input = optarg; break;
		case 'K': fo.no_kernel = 1; break;
		case 'c': fo.comm = optarg; break;
		case 'T': so.title = optarg; break;
		case 'M': {
			char *end;

			errno = 0;
			so.min_width = strtod(optarg, &end);
			if (errno || end == optarg || *end || !(so.min_width > 0 && so.min_width <= 1000)) {
				fprintf(stderr, "xpcorr export: --minwidth %s: expected pixels, more than 0"
					" and at most 1000 (e.g. 0.1)\n", optarg);
				return XP_EXIT_USAGE;
			}
			break;
		}
		case 'S':
		case 'U':
			if (optarg[0] == '+') {
				if (parse_offset(optarg, c == 'S' ? &since_off : &until_off)) {
					fprintf(stderr, "xpcorr export: --%s %s: expected +SECONDS with a"
						" unit (s, ms, us, ns), e.g. +1.5s\n",
						c == 'S' ? "since" : "until", optarg);
					return XP_EXIT_USAGE;
				}
				break;
			}
			/* fall through */
		case 'p':
		case 't':
			if (parse_int(optarg, c == 'p' ? &fo.pid : c == 't' ? &fo.tid :
				      c == 'S' ? &co.since : &co.until)) {
				fprintf(stderr, "xpcorr export: --%s %s: expected a number%s\n",
					c == 'p' ? "pid" : c == 't' ? "tid" : c == 'S' ? "since" : "until",
					optarg, c == 'S' || c == 'U' ? " of ns, or +OFFSET such as +1.5s" : "");
				return XP_EXIT_USAGE;
			}
			break;
		case 'r':
			if (!strcmp(optarg, "comm")) fo.root = XP_ROOT_COMM;
			else if (!strcmp(optarg, "pid")) fo.root = XP_ROOT_PID;
			else if (!strcmp(optarg, "tid")) fo.root = XP_ROOT_TID;
			else if (!strcmp(optarg, "none")) fo.root = XP_ROOT_NONE;
			else {
				fprintf(stderr, "xpcorr export: --root is comm, pid, tid or none\n");
				return XP_EXIT_USAGE;
			}
			break;
		case 'h':
			usage(stdout);
			return XP_EXIT_OK;
		default:
			usage(stderr);
			return XP_EXIT_USAGE;
		}
	}
	if (!format || (strcmp(format, "folded") && strcmp(format, "svg") && strcmp(format, "chrome")) ||
	    (input && strcmp(format, "svg")) || (input ? optind != argc : optind != argc - 1)) {
		usage(stderr);
		return XP_EXIT_USAGE;
	}
	if (so.differential && !input) {
		fprintf(stderr, "xpcorr export: --differential reads --input; xpcorr diff --format svg"
			" draws two runs\n");
		return XP_EXIT_USAGE;
	}
	so.unit = xp_weight_unit(fo.weight);
	if (!so.title && fo.weight != XP_WEIGHT_CPU)
		so.title = xp_weight_title(fo.weight);
	if (since_off >= 0 && until_off >= 0 && since_off >= until_off) {
		fprintf(stderr, "xpcorr export: --since +%lldns is not before --until +%lldns: an"
			" empty window\n", (long long)since_off, (long long)until_off);
		return XP_EXIT_USAGE;
	}
	if (co.since && co.until && co.since >= co.until) {
		fprintf(stderr, "xpcorr export: --since %lld is not before --until %lld: an empty"
			" window\n", (long long)co.since, (long long)co.until);
		return XP_EXIT_USAGE;
	}
	if ((co.since || co.until || since_off >= 0 || until_off >= 0) && strcmp(format, "chrome")) {
		fprintf(stderr, "xpcorr export: --since and --until are for --format chrome\n");
		return XP_EXIT_USAGE;
	}
	if (!strcmp(format, "chrome") && (fo.weight != XP_WEIGHT_CPU || fo.exact_only)) {
		fprintf(stderr, "xpcorr export: --weight and --exact-only are for folded and svg;"
			" a chrome trace holds every kind\n");
		return XP_EXIT_USAGE;
	}
	if (input) {
		folded = fopen(input, "re");
		if (!folded) {
			fprintf(stderr, "xpcorr: cannot read %s: %s\n", input, strerror(errno));
			return XP_EXIT_FAIL;
		}
	} else {
		if (xp_cmd_open_db(argv[optind], &db))
			return XP_EXIT_FAIL;
	}
	/* an empty flame graph should say why */
	if (db && strcmp(format, "chrome") && xp_weight_has_rows(db, fo.weight) == 0)
		fprintf(stderr, "xpcorr: warning: %s\n", xp_weight_empty_hint(fo.weight));
	if (output) {
		out = fopen(output, "we");
		if (!out) {
			fprintf(stderr, "xpcorr: cannot write %s: %s\n", output, strerror(errno));
			out = NULL;
			goto out;
		}
	}
	if (!strcmp(format, "chrome")) {
		co.pid = fo.pid;
		if (since_off >= 0 || until_off >= 0) {
			int64_t t0 = run_start_ns(db);

			if (t0 < 0) {
				fprintf(stderr, "xpcorr export: --since/--until +OFFSET: %s has no start"
					" time (meta.start_monotonic_ns); give CLOCK_MONOTONIC ns\n",
					argv[optind]);
				err = -EINVAL;
				goto out;
			}
			if (since_off >= 0)
				co.since = t0 + since_off;
			if (until_off >= 0)
				co.until = t0 + until_off;
		}
		err = xp_chrome_write(db, &co, out, &cs);
		/* a window with nothing in it is a mistake, not an empty trace */
		if (!err && (co.since || co.until) && cs.events == cs.metadata) {
			fprintf(stderr, "xpcorr export: no event starts in the --since/--until window"
				" (CLOCK_MONOTONIC ns %lld to %s); the run's times are in `xpcorr info`,"
				" offsets such as +1.5s count from its start\n", (long long)co.since,
				co.until ? "its --until" : "its end");
			goto out;       /* rc is still a failure */
		}
		if (!err && cs.bytes > chrome_warn_bytes())
			fprintf(stderr, "xpcorr: warning: %s: the trace is %.2f GB; the Perfetto UI loads"
				" about 1 GB in a browser: cut it with --since/--until/--pid, or open"
				" it with trace_processor\n", output ? output : "stdout",
				(double)cs.bytes / 1e9);
	} else if (!strcmp(format, "folded")) {
		err = xp_folded_write(db, &fo, out);
	} else {
		if (!folded) {
			/* collapse, then render the folded text: one path for both inputs */
			FILE *m = open_memstream(&mem, &memlen);

			if (!m) {
				err = -ENOMEM;
				goto report;
			}
			err = xp_folded_write(db, &fo, m);
			fclose(m);
			if (err)
				goto report;
			folded = fmemopen(mem, memlen ? memlen : 1, "r");
			if (!folded) {
				err = -ENOMEM;
				goto report;
			}
		}
		err = xp_svg_render(folded, &so, out, &bad);
		if (bad)
			fprintf(stderr, "xpcorr: warning: %s: %" PRIu64 " lines that are not"
				" 'frame;frame count' were skipped\n", input ? input : "folded", bad);
	}
report:
	if (err == -EIO && db)
		fprintf(stderr, "xpcorr: export: %s\n", sqlite3_errmsg(db));
	else if (err)
		fprintf(stderr, "xpcorr: export: %s\n", strerror(-err));
	else
		rc = XP_EXIT_OK;
out:
	if (out && out != stdout && fclose(out) && rc == XP_EXIT_OK) {
		fprintf(stderr, "xpcorr: cannot write %s: %s\n", output, strerror(errno));
		rc = XP_EXIT_FAIL;
	}
	if (folded)
		fclose(folded);
	free(mem);
	sqlite3_close(db);
	return rc;
}

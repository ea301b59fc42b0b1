/* cmd_diff.c - `xpcorr diff`: what got slower, faster, appeared, vanished.
 *   xpcorr diff runA/ runB/                          # per kernel, stack, API
 *   xpcorr diff --normalize kernel=k_step runA/ runB/
 *   xpcorr diff --format folded runA/ runB/ > d.folded   # "stack base new"
 *   xpcorr diff --format svg -o diff.svg runA/ runB/     # red slower, blue faster
 *   xpcorr diff --format json runA/ runB/ > diff.json     # every row, for scripts
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "export/diff/diff.h"
#include "ingest/ingest.h"
#include "cmd/opendb.h"
#include "cmd/output.h"
#include "export/render/weights.h"

static int weight_given;               /* --weight: else the runs decide */

static void usage(FILE *out)
{
	fprintf(out,
		"usage: xpcorr diff [options] BASE_RUN NEW_RUN\n"
		"  Runs are run directories (ingested first when needed) or databases.\n"
		"  --format text|csv|json|folded|svg   tables (default), a CSV or JSON of them,\n"
		"                         differential folded stacks 'stack base new', or their\n"
		"                         flame graph\n"
		"  -o, --output FILE      write there instead of stdout\n"
		"  --top N                rows per table (default 20 in text; csv and json carry\n"
		"                         every row; 0 = all)\n"
		"  --frames N             frames shown per launching stack (default 4)\n"
		"  --width COLUMNS        text: rows cut to fit (default: the terminal's width,\n"
		"                         120 when not a terminal; 0: whole)\n"
		"  --normalize none|duration|kernel=NAME   scale the new run's totals by\n"
		"                         base/new duration, or so that kernel NAME (or a\n"
		"                         unique part of its name) has the base's instances\n"
		"  --weight cpu|gpu|offcpu|api   folded, svg: what a stack counts; cpu: also\n"
		"                         the tables, by function and stack (default gpu;\n"
		"                         cpu when neither run has GPU work)\n"
		"  --exact-only           drop GPU time attributed by inference or not at all\n"
		"  --title TEXT           SVG title\n");
}

static int parse_uint(const char *s, unsigned *v)
{
	char *end;
	unsigned long x;

	errno = 0;
	x = strtoul(s, &end, 10);
	if (errno || end == s || *end || *s == '-' || x > 1000000)
		return -EINVAL;
	*v = (unsigned)x;
	return 0;
}

/* --normalize none|duration|kernel=NAME into o. 0, or -1 after saying why. */
static int parse_normalize(const char *arg, struct xp_diff_opts *o)
{
	if (!strcmp(arg, "none")) {
		o->normalize = XP_NORM_NONE;
	} else if (!strcmp(arg, "duration")) {
		o->normalize = XP_NORM_DURATION;
	} else if (!strncmp(arg, "kernel=", 7) && arg[7]) {
		o->normalize = XP_NORM_KERNEL;
		o->norm_kernel = arg + 7;
	} else {
		fprintf(stderr, "xpcorr diff: --normalize %s: expected one of none,"
			" duration, kernel=NAME\n", arg);
		return -1;
	}
	return 0;
}

/* getopt into o and *output: -1 to go on, else the exit status. */
static int parse_options(int argc, char **argv, struct xp_diff_opts *o, const char **output)
{
	static const char *const formats[] = { "text", "csv", "json", "folded", "svg" };
	static const enum xp_diff_format format_of[] = { XP_DIFF_TEXT, XP_DIFF_CSV, XP_DIFF_JSON,
							 XP_DIFF_FOLDED, XP_DIFF_SVG };
	static const struct option opts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "output", required_argument, NULL, 'o' },
		{ "top", required_argument, NULL, 't' },
		{ "frames", required_argument, NULL, 'F' },
		{ "normalize", required_argument, NULL, 'n' },
		{ "weight", required_argument, NULL, 'w' },
		{ "exact-only", no_argument, NULL, 'E' },
		{ "title", required_argument, NULL, 'T' },
		{ "width", required_argument, NULL, 'W' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c, i, top_given = 0, width_given = 0;

	while ((c = getopt_long(argc, argv, "f:o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			if ((i = xp_cmd_choice("xpcorr diff", "format", optarg, formats, 5)) < 0)
				return XP_EXIT_USAGE;
			o->format = format_of[i];
			break;
		case 'o': *output = optarg; break;
		case 'E': o->exact_only = 1; break;
		case 'T': o->title = optarg; break;
		case 't':
		case 'F':
		case 'W':
			if (parse_uint(optarg, c == 't' ? &o->top : c == 'F' ? &o->frames : &o->width)) {
				fprintf(stderr, "xpcorr diff: --%s %s: expected a number from 0 to"
					" 1000000\n", c == 't' ? "top" : c == 'F' ? "frames" : "width",
					optarg);
				return XP_EXIT_USAGE;
			}
			top_given |= c == 't';
			width_given |= c == 'W';
			break;
		case 'n':
			if (parse_normalize(optarg, o))
				return XP_EXIT_USAGE;
			break;
		case 'w':
			if ((i = xp_cmd_choice("xpcorr diff", "weight", optarg, xp_weight_names,
					       XP_WEIGHT_COUNT)) < 0)
				return XP_EXIT_USAGE;
			o->weight = (enum xp_weight)i;
			weight_given = 1;
			break;
		case 'h':
			usage(stdout);
			return XP_EXIT_OK;
		default:
			usage(stderr);
			return XP_EXIT_USAGE;
		}
	}
	if (optind != argc - 2) {
		fprintf(stderr, "xpcorr diff: expected two runs, the base and the new one\n");
		usage(stderr);
		return XP_EXIT_USAGE;
	}
	if (!width_given)
		o->width = xp_cmd_text_width(*output != NULL);
	/* a table for a script is whole; --top cuts it on purpose */
	if (!top_given && (o->format == XP_DIFF_CSV || o->format == XP_DIFF_JSON))
		o->top = 0;
	return -1;
}

int cmd_diff(int argc, char **argv)
{
	struct xp_diff_opts o = XP_DIFF_DEFAULTS;
	struct xp_diff_side a = { 0 }, b = { 0 };
	const char *output = NULL;
	struct xp_cmd_out out;
	char err[1200];
	int c, rc;

	if ((rc = parse_options(argc, argv, &o, &output)) >= 0)
		return rc;
	a.name = argv[optind];
	b.name = argv[optind + 1];
	o.warnings = stderr;
	if ((rc = xp_cmd_open_db("xpcorr diff", a.name, &a.db)) ||
	    (rc = xp_cmd_open_db("xpcorr diff", b.name, &b.db)))
		goto out;
	/* two CPU profiles compare by their samples, not by GPU work neither has */
	if (!weight_given && !xp_weight_has_rows(a.db, XP_WEIGHT_GPU) &&
	    !xp_weight_has_rows(b.db, XP_WEIGHT_GPU))
		o.weight = XP_WEIGHT_CPU;
	if ((rc = xp_cmd_out_open(&out, "xpcorr diff", output, (const char *[]){ a.name, b.name },
				  2)))
		goto out;
	c = xp_diff(&a, &b, &o, out.f, err, sizeof(err));
	if (c) {
		fprintf(stderr, "xpcorr: diff: %s\n", err);
		rc = c == -ENOENT || c == -EINVAL ? XP_EXIT_USAGE : XP_EXIT_FAIL;
	} else {
		rc = XP_EXIT_OK;
	}
	rc = xp_cmd_out_close(&out, rc);
out:
	sqlite3_close(a.db);
	sqlite3_close(b.db);
	return rc;
}

/* cmd_report.c - `xpcorr report`: prints a report of run/xpcorr.db.
 *   xpcorr report --top 20 --by stack --format csv run/ > stacks.csv
 * The only place of the report that prints to stderr. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cmd.h"
#include "ingest.h"
#include "report.h"

static const char usage[] =
	"usage: xpcorr report [--top N] [--by kernel|api|memop|stack|thread|graph|nvtx]\n"
	"                     [--format text|csv|json] [--sort total|avg|instances|name]\n"
	"                     [--mangled] [--pid PID] [--since NS] [--until NS]\n"
	"                     [--stacks N] [--frames N] RUN_DIR|FILE.db\n";

static int pick(const char *arg, const char *const *names, int n)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(arg, names[i]))
			return i;
	return -1;
}

static int number(const char *arg, long long *v)
{
	char *end;

	errno = 0;
	*v = strtoll(arg, &end, 10);
	return errno || end == arg || *end || *v < 0 ? -1 : 0;
}

int cmd_report(int argc, char **argv)
{
	static const char *const bys[] = { "kernel", "stack", "api", "memop", "thread", "graph",
					    "nvtx" };
	static const char *const fmts[] = { "text", "csv", "json" };
	static const char *const sorts[] = { "total", "avg", "instances", "name" };
	static const struct option opts[] = {
		{ "top", required_argument, NULL, 'n' }, { "by", required_argument, NULL, 'b' },
		{ "format", required_argument, NULL, 'f' }, { "sort", required_argument, NULL, 's' },
		{ "mangled", no_argument, NULL, 'm' }, { "pid", required_argument, NULL, 'p' },
		{ "since", required_argument, NULL, 'S' }, { "until", required_argument, NULL, 'U' },
		{ "stacks", required_argument, NULL, 'k' }, { "frames", required_argument, NULL, 'F' },
		{ "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 },
	};
	struct xp_report_opts o = XP_REPORT_DEFAULTS;
	sqlite3 *db = NULL;
	long long v;
	int c, i, rc;

	optind = 1;
	while ((c = getopt_long(argc, argv, "n:b:f:s:mp:S:U:k:F:h", opts, NULL)) != -1) {
		switch (c) {
		case 'b': case 'f': case 's':
			i = pick(optarg, c == 'b' ? bys : c == 'f' ? fmts : sorts,
				 c == 'b' ? 7 : c == 'f' ? 3 : 4);
			if (i < 0)
				goto bad;
			if (c == 'b')
				o.by = (enum xp_report_by)i;
			else if (c == 'f')
				o.format = (enum xp_report_format)i;
			else
				o.sort = (enum xp_report_sort)i;
			break;
		case 'm':
			o.mangled = 1;
			break;
		case 'n': case 'p': case 'S': case 'U': case 'k': case 'F':
			if (number(optarg, &v) < 0 || ((c == 'n' || c == 'p' || c == 'k' || c == 'F') &&
						       v > 0xffffffffll))
				goto bad;
			if (c == 'n') o.top = (unsigned)v;
			if (c == 'p') o.pid = (uint32_t)v;
			if (c == 'S') o.since = v;
			if (c == 'U') o.until = v;
			if (c == 'k') o.stacks = (unsigned)v;
			if (c == 'F') o.frames = (unsigned)v;
			break;
		case 'h':
			fputs(usage, stdout);
			return XP_EXIT_OK;
		default:
			fputs(usage, stderr);
			return XP_EXIT_USAGE;
		}
	}
	if (optind != argc - 1) {
		fputs(usage, stderr);
		return XP_EXIT_USAGE;
	}
	/* a run directory is ingested first when its database is missing or stale */
	if (xp_cmd_open_db(argv[optind], &db))
		return XP_EXIT_FAIL;
	rc = xp_report(db, &o, stdout);
	if (rc < 0)
		fprintf(stderr, "xpcorr: report on %s: %s\n", argv[optind],
			rc == -EIO ? sqlite3_errmsg(db) : strerror(-rc));
	sqlite3_close(db);
	if (fflush(stdout) != 0 && rc == 0) {
		fprintf(stderr, "xpcorr: writing the report: %s\n", strerror(errno));
		rc = -EIO;
	}
	return rc < 0 ? XP_EXIT_FAIL : XP_EXIT_OK;
bad:
	fprintf(stderr, "xpcorr: report: bad value '%s' for %s\n%s", optarg, argv[optind - 1],
		usage);
	return XP_EXIT_USAGE;
}

/* cmd_job.c - `xpcorr job RUN...`: the views of a distributed job read from
 * its ranks' summaries (export/job/jobsum.h), not from one database of every
 * row: each rank's run is ingested where it was recorded (its summary,
 * RUN/xpsum.db, written then), the clocks are aligned on the summaries'
 * collective anchors (correlate/clockalign.h, as merge does), and the
 * views add the summaries up. --rank N opens that rank's own database.
 *   xargs -P 8 -n 1 xpcorr ingest -q < runs.txt
 *   xpcorr job --by rank runs/rank-0 runs/rank-1 ...
 *   xpcorr job --rank 3 --by kernel runs/rank-0 runs/rank-1 ...
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cmd/cmd.h"
#include "cmd/jobsum_file.h"
#include "cmd/opendb.h"
#include "correlate/clocksum.h"
#include "db/dbcheck.h"
#include "export/job/jobsum.h"
#include "export/render/jsonw.h"
#include "src/textesc.h"

struct job_opts {
	struct xp_jobview_opts view;
	int clock;                  /* --by clock: each run's shift, not a view of the summaries */
	const char *by, *format;
	long rank;                  /* --rank: -1 none */
	const char *reference;      /* NULL: the run of rank 0, else the first */
	int wall_only, quiet;
};

static void usage(FILE *f)
{
	fprintf(f, "usage: xpcorr job [--by rank|idle|kernel|source|wait|clock] [--format text|csv|json] [--top N]"
		" [--rank N] [--reference RUN] [--no-refine] [-q] RUN...\n"
		"The views of a distributed job from its runs' summaries (RUN/xpsum.db, written by\n"
		"xpcorr ingest): clocks aligned on the collectives, no database of every row.\n"
		"--rank N: that rank's own run, as xpcorr report --by VIEW shows it.\n");
}

static int parse_by(struct job_opts *o, const char *by)
{
	static const char *const names[] = { [XP_JOB_RANK] = "rank", [XP_JOB_IDLE] = "idle",
					      [XP_JOB_KERNEL] = "kernel", [XP_JOB_SOURCE] = "source",
					      [XP_JOB_WAIT] = "wait" };

	o->by = by;
	if ((o->clock = !strcmp(by, "clock")))
		return 0;
	for (int i = 0; i < 5; i++)
		if (!strcmp(by, names[i])) {
			o->view.by = (enum xp_jobview_by)i;
			return 0;
		}
	fprintf(stderr, "xpcorr job: --by %s: one of rank, idle, kernel, source, wait, clock\n", by);
	return XP_EXIT_USAGE;
}

static int parse_number(const char *opt, const char *arg, long *v)
{
	char *end;

	errno = 0;
	*v = strtol(arg, &end, 10);
	if (errno || end == arg || *end || *v < 0) {
		fprintf(stderr, "xpcorr job: %s %s: expected a number >= 0\n", opt, arg);
		return XP_EXIT_USAGE;
	}
	return 0;
}

static int parse_options(int argc, char **argv, struct job_opts *o)
{
	static const struct option opts[] = {
		{ "by", required_argument, NULL, 'b' }, { "format", required_argument, NULL, 'f' },
		{ "top", required_argument, NULL, 'n' }, { "rank", required_argument, NULL, 'R' },
		{ "reference", required_argument, NULL, 'r' }, { "no-refine", no_argument, NULL, 'W' },
		{ "quiet", no_argument, NULL, 'q' }, { "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	long top;
	int c, rc = 0;

	memset(o, 0, sizeof(*o));
	o->view.top = 30;
	o->rank = -1;
	o->by = "rank";
	o->format = "text";
	while (!rc && (c = getopt_long(argc, argv, "qh", opts, NULL)) != -1) {
		switch (c) {
		case 'b': rc = parse_by(o, optarg); break;
		case 'f':
			o->format = optarg;
			o->view.csv = !strcmp(optarg, "csv");
			o->view.format = o->view.csv ? XP_JOB_CSV : !strcmp(optarg, "json") ? XP_JOB_JSON :
					 XP_JOB_TEXT;
			if (!o->view.csv && strcmp(optarg, "text") && strcmp(optarg, "json")) {
				fprintf(stderr, "xpcorr job: --format %s: text, csv or json\n", optarg);
				rc = XP_EXIT_USAGE;
			}
			break;
		case 'n': rc = parse_number("--top", optarg, &top); o->view.top = (unsigned)top; break;
		case 'R': rc = parse_number("--rank", optarg, &o->rank); break;
		case 'r': o->reference = optarg; break;
		case 'W': o->wall_only = 1; break;
		case 'q': o->quiet = 1; break;
		case 'h': usage(stdout); return -1;
		default: return XP_EXIT_USAGE;
		}
	}
	if (!rc && optind >= argc) {
		fprintf(stderr, "xpcorr job: expected the job's run directories\n");
		rc = XP_EXIT_USAGE;
	}
	return rc;
}

/* What is at path itself (a link is not followed: the summary's open
 * refuses one); -1 when nothing is, -2 (errno set) when it cannot be looked at. */
static int64_t mtime_ns(const char *path)
{
	struct stat st;

	if (fstatat(AT_FDCWD, path, &st, AT_SYMLINK_NOFOLLOW))
		return errno == ENOENT || errno == ENOTDIR ? -1 : -2;
	return (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
}

/* RUN/xpsum.db, made when missing or older than the run's database (the
 * run ingested first when it needs to be). */
static int ensure_summary(const char *run, char *sum, size_t len, int quiet)
{
	char db_path[PATH_MAX];
	sqlite3 *db = NULL;
	int64_t t_sum, t_db;
	int rc;

	xp_cmd_summary_path(run, sum, len);
	snprintf(db_path, sizeof(db_path), "%s/xpcorr.db", run);
	t_sum = mtime_ns(sum);
	if (t_sum == -2) {
		/* a link loop, a directory we may not search: said, not ingested */
		fprintf(stderr, "xpcorr job: cannot open %s: %s\n", xp_esc(sum), strerror(errno));
		return XP_EXIT_FAIL;
	}
	t_db = mtime_ns(db_path);
	if (t_sum >= 0 && t_sum >= t_db)
		return XP_EXIT_OK;
	if ((rc = xp_cmd_open_db("xpcorr job", run, &db)))
		return rc;
	if (!quiet)
		fprintf(stderr, "xpcorr job: %s: %s summary\n", run, t_sum < 0 ? "writing its" :
			"its database is newer: writing its");
	rc = xp_cmd_write_summary("xpcorr job", run, db, 0);
	sqlite3_close(db);
	return rc;
}

static int open_summary(const char *path, sqlite3 **db)
{
	char err[PATH_MAX + 256];

	if (!xp_jobsum_open(path, db, err, sizeof(err)))
		return 0;
	fprintf(stderr, "xpcorr job: %s\n", xp_esc(err));
	sqlite3_close(*db);
	*db = NULL;
	return XP_EXIT_FAIL;
}

/* "cannot read PATH: why", the work limit's line when it stopped the query. */
static void read_failed(const char *path, sqlite3 *db)
{
	char msg[256];

	if (sqlite3_errcode(db) == SQLITE_INTERRUPT) {
		xp_db_work_why(msg, sizeof(msg));
		xp_db_work_said();
	} else {
		snprintf(msg, sizeof(msg), "%s", sqlite3_errmsg(db));
	}
	fprintf(stderr, "xpcorr job: cannot read %s: %s\n", xp_esc(path), xp_esc(msg));
}

/* Whether the summary at path holds rank (a process of that rank). */
static int holds_rank(const char *path, long rank, int *yes)
{
	sqlite3_stmt *st;
	sqlite3 *db = NULL;
	int rc = open_summary(path, &db);

	*yes = 0;
	if (rc)
		return rc;
	if (sqlite3_prepare_v2(db, "SELECT 1 FROM xs_rank WHERE rank = ?", -1, &st, NULL) != SQLITE_OK) {
		read_failed(path, db);
		sqlite3_close(db);
		return XP_EXIT_FAIL;
	}
	sqlite3_bind_int64(st, 1, rank);
	rc = sqlite3_step(st);
	*yes = rc == SQLITE_ROW;
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		read_failed(path, db);
	sqlite3_finalize(st);
	sqlite3_close(db);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : XP_EXIT_FAIL;
}

/* A run's clock evidence from its summary. */
static int read_clock(const char *path, struct xc_clock_run *c, int wall_only)
{
	sqlite3 *db = NULL;
	int rc = open_summary(path, &db), err;

	if (rc)
		return rc;
	if ((err = xc_clock_run_read(db, c)) == -ENOMEM)
		fprintf(stderr, "xpcorr job: out of memory\n");
	else if (err)
		read_failed(path, db);
	sqlite3_close(db);
	if (!err && wall_only)
		xc_clock_run_free(c);
	return err ? XP_EXIT_FAIL : 0;
}

/* Every run onto the reference's clock, one run's markers in memory at a
 * time besides the reference's. */
static int align_all(struct xp_jobrun *runs, size_t n, int wall_only, int64_t *worst)
{
	struct xc_clock_run ref, c;
	struct xc_clock_shift s = { 0 };
	int rc = read_clock(runs[0].path, &ref, wall_only);

	*worst = 0;
	for (size_t i = 0; !rc && i < n; i++) {
		if (i && (rc = read_clock(runs[i].path, &c, wall_only)))
			break;
		if (xc_clock_align(&ref, i ? &c : &ref, &s)) {
			fprintf(stderr, "xpcorr job: out of memory\n");
			rc = XP_EXIT_FAIL;
		}
		if (i)
			xc_clock_run_free(&c);
		runs[i].method = s.method;
		runs[i].matched = s.matched;
		runs[i].shift_ns = s.shift_ns;
		runs[i].spread_ns = s.spread_ns;
		if (s.spread_ns > *worst)
			*worst = s.spread_ns;
	}
	if (!rc || n)
		xc_clock_run_free(&ref);
	return rc;
}

/* The index of the run with rank (-1: none), after saying so. */
static int find_rank(struct xp_jobrun *runs, size_t n, long rank, size_t *at)
{
	for (size_t i = 0; i < n; i++) {
		int yes, rc = holds_rank(runs[i].path, rank, &yes);

		if (rc)
			return rc;
		if (yes) {
			*at = i;
			return 0;
		}
	}
	return -1;
}

/* The reference first: --reference, else the run of rank 0, else the first. */
static int reference_first(struct xp_jobrun *runs, char **dirs, size_t n, const struct job_opts *o)
{
	size_t ref = 0;
	int rc = 0;

	if (o->reference) {
		for (ref = 0; ref < n && strcmp(dirs[ref], o->reference); ref++)
			;
		if (ref == n) {
			fprintf(stderr, "xpcorr job: --reference %s: not one of the runs given\n",
				o->reference);
			return XP_EXIT_USAGE;
		}
	} else if ((rc = find_rank(runs, n, 0, &ref)) > 0) {
		return rc;
	} else if (rc < 0) {
		ref = 0;
	}
	if (ref) {
		struct xp_jobrun keep = runs[ref];
		char *d = dirs[ref];

		memmove(runs + 1, runs, ref * sizeof(*runs));
		memmove(dirs + 1, dirs, ref * sizeof(*dirs));
		runs[0] = keep;
		dirs[0] = d;
	}
	return 0;
}

/* --rank N: report on that rank's own run. */
static int rank_detail(struct xp_jobrun *runs, char **dirs, size_t n, const struct job_opts *o)
{
	char rank[32], top[32];
	size_t at;
	int rc = find_rank(runs, n, o->rank, &at);
	char *argv[12];
	int argc = 0;

	if (rc > 0)
		return rc;
	if (rc < 0) {
		fprintf(stderr, "xpcorr job: --rank %ld: no run of the job holds that rank\n", o->rank);
		return XP_EXIT_USAGE;
	}
	snprintf(rank, sizeof(rank), "%ld", o->rank);
	snprintf(top, sizeof(top), "%u", o->view.top);
	argv[argc++] = "report";
	argv[argc++] = "--by";
	argv[argc++] = (char *)o->by;
	argv[argc++] = "--format";
	argv[argc++] = (char *)o->format;
	argv[argc++] = "--top";
	argv[argc++] = top;
	argv[argc++] = "--rank";
	argv[argc++] = rank;
	argv[argc++] = dirs[at];
	argv[argc] = NULL;
	optind = 1;
	if (!o->quiet)
		fprintf(stderr, "xpcorr job: rank %ld: %s\n", o->rank, dirs[at]);
	return cmd_report(argc, argv);
}

/* --by clock: how each run was put onto the reference's clock. */
static void put_clocks(const struct xp_jobrun *runs, char **dirs, size_t n, int csv, int json)
{
	if (json) {
		struct jsonw j;

		jsonw_init(&j, stdout);
		jsonw_obj_begin(&j);
		jsonw_key(&j, "job"), jsonw_str(&j, "clock");
		jsonw_key(&j, "runs"), jsonw_arr_begin(&j);
		for (size_t i = 0; i < n; i++) {
			jsonw_obj_begin(&j);
			jsonw_key(&j, "run"), jsonw_uint(&j, i);
			jsonw_key(&j, "path"), jsonw_str(&j, dirs[i]);
			jsonw_key(&j, "method"), jsonw_str(&j, runs[i].method);
			jsonw_key(&j, "shift_ns"), jsonw_int(&j, runs[i].shift_ns);
			jsonw_key(&j, "spread_ns");
			if (runs[i].spread_ns >= 0)
				jsonw_int(&j, runs[i].spread_ns);
			else
				jsonw_null(&j);
			jsonw_key(&j, "matched"), jsonw_uint(&j, runs[i].matched);
			jsonw_obj_end(&j);
		}
		jsonw_arr_end(&j);
		jsonw_obj_end(&j);
		putchar('\n');
		return;
	}
	if (csv)
		puts("\"Run\",\"Path\",\"Method\",\"Shift (ns)\",\"Spread (ns)\",\"Matched\"");
	else
		printf("  %-5s  %-12s  %20s  %12s  %8s  %s\n", "Run", "Clock", "Shift (ns)",
		       "Spread (ns)", "Matched", "Path");
	for (size_t i = 0; i < n; i++) {
		if (csv) {
			printf("%zu,\"", i);
			for (const char *p = dirs[i]; *p; p++)
				printf(*p == '"' ? "\"\"" : "%c", *p);
			printf("\",\"%s\",%lld,", runs[i].method, (long long)runs[i].shift_ns);
			if (runs[i].spread_ns >= 0)
				printf("%lld", (long long)runs[i].spread_ns);
			printf(",%u\n", runs[i].matched);
		} else {
			printf("  %-5zu  %-12s  %20lld  %12lld  %8u  %s\n", i, runs[i].method,
			       (long long)runs[i].shift_ns, (long long)runs[i].spread_ns, runs[i].matched,
			       xp_esc(dirs[i]));
		}
	}
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int run_job(struct xp_jobrun *runs, char **dirs, size_t n, const struct job_opts *o)
{
	char err[PATH_MAX + 256];
	int64_t worst;
	double t0 = now_s();
	int rc = reference_first(runs, dirs, n, o);

	if (!rc && o->rank >= 0)
		return rank_detail(runs, dirs, n, o);
	if (!rc)
		rc = align_all(runs, n, o->wall_only, &worst);
	if (rc)
		return rc;
	if (o->clock)
		put_clocks(runs, dirs, n, o->view.csv, o->view.format == XP_JOB_JSON);
	else if ((rc = xp_jobview(runs, n, &o->view, stdout, err, sizeof(err)))) {
		fprintf(stderr, "xpcorr job: %s\n", xp_esc(err));
		if (rc == -ETIME)       /* the line names the summary: xpcorr adds none */
			xp_db_work_said();
		return XP_EXIT_FAIL;
	}
	if (!o->quiet)
		fprintf(stderr, "xpcorr job: %zu runs' summaries, clocks onto %s's within +-%.1f us,"
			" %.2f s\n", n, xp_esc(dirs[0]), (double)worst / 1e3, now_s() - t0);
	return XP_EXIT_OK;
}

struct dir_id {
	dev_t dev;
	ino_t ino;
	size_t i;                   /* its place on the command line */
};

static int cmp_dir(const void *a, const void *b)
{
	const struct dir_id *x = a, *y = b;

	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	if (x->ino != y->ino)
		return x->ino < y->ino ? -1 : 1;
	return (x->i > y->i) - (x->i < y->i);
}

/* A run directory named twice (a trailing /, a link, a copy of the list)
 * would count its ranks twice: refused, whatever the view. Directories
 * that cannot be looked at are left to the summary's open to say why. */
static int given_twice(char **dirs, size_t n)
{
	struct dir_id *v = malloc((n ? n : 1) * sizeof(*v));
	size_t m = 0;
	struct stat st;
	int rc = 0;

	if (!v) {
		fprintf(stderr, "xpcorr job: out of memory\n");
		return XP_EXIT_FAIL;
	}
	for (size_t i = 0; i < n; i++)
		if (!stat(dirs[i], &st))
			v[m++] = (struct dir_id){ st.st_dev, st.st_ino, i };
	qsort(v, m, sizeof(*v), cmp_dir);
	for (size_t k = 1; !rc && k < m; k++)
		if (v[k].dev == v[k - 1].dev && v[k].ino == v[k - 1].ino) {
			fprintf(stderr, "xpcorr job: %s is %s given twice: give each rank's run once\n",
				xp_esc(dirs[v[k].i]), xp_esc(dirs[v[k - 1].i]));
			rc = XP_EXIT_USAGE;
		}
	free(v);
	return rc;
}

int cmd_job(int argc, char **argv)
{
	struct job_opts o;
	struct xp_jobrun *runs;
	char **paths, **dirs;
	size_t n;
	int rc;

	if ((rc = parse_options(argc, argv, &o)))
		return rc < 0 ? XP_EXIT_OK : rc;
	n = (size_t)(argc - optind);
	dirs = argv + optind;
	if ((rc = given_twice(dirs, n)))
		return rc;
	runs = calloc(n, sizeof(*runs));
	paths = calloc(n, sizeof(*paths));
	for (size_t i = 0; runs && paths && !rc && i < n; i++) {
		if (!(paths[i] = malloc(PATH_MAX)))
			break;
		runs[i].path = paths[i];
		rc = ensure_summary(dirs[i], paths[i], PATH_MAX, o.quiet);
	}
	if (!rc && (!runs || !paths || (n && !paths[n - 1]))) {
		fprintf(stderr, "xpcorr job: out of memory\n");
		rc = XP_EXIT_FAIL;
	}
	if (!rc)
		rc = run_job(runs, dirs, n, &o);
	for (size_t i = 0; paths && i < n; i++)
		free(paths[i]);
	free(paths);
	free(runs);
	return rc;
}

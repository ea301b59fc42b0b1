/* cmd_merge.c - `xpcorr merge -o job/ runs/...`: the runs of one distributed
 * job (one per host, or per rank recorded apart) into one database that
 * report, export and diff read like a run's: every row keeps its host and
 * rank, every run's clock is put onto the reference run's (clockalign.h:
 * wall clocks, then collectives), and what is left of each host's offset is
 * printed and kept in xp_job_runs.
 *   xpcorr merge -o job/ runs/node-a runs/node-b
 *   xpcorr report --by rank job/
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "db/dbmerge.h"
#include "src/gtid.h"
#include "db/rundb.h"
#include "correlate/jobmerge.h"
#include "cmd/opendb.h"
#include "src/textesc.h"

struct merge_opts {
	const char *output;         /* the job directory */
	const char *reference;      /* NULL: the run of rank 0, else the first */
	int wall_only;              /* --no-refine */
	int force, quiet;
};

static void usage(FILE *f)
{
	fprintf(f, "usage: xpcorr merge -o JOB_DIR [--reference RUN] [--no-refine] [--force] [-q]"
		" RUN...\n"
		"Merges the runs of one job (one per host or rank) into JOB_DIR/xpcorr.db, their\n"
		"clocks aligned on the reference run's (the run of rank 0 unless given): by the\n"
		"hosts' wall clocks, then refined on NCCL/gloo collectives; report, export and diff\n"
		"read JOB_DIR like a run.\n");
}

static int parse_options(int argc, char **argv, struct merge_opts *o)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "reference", required_argument, NULL, 'r' },
		{ "no-refine", no_argument, NULL, 'W' },
		{ "force", no_argument, NULL, 'f' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	memset(o, 0, sizeof(*o));
	while ((c = getopt_long(argc, argv, "o:fqh", opts, NULL)) != -1) {
		switch (c) {
		case 'o': o->output = optarg; break;
		case 'r': o->reference = optarg; break;
		case 'W': o->wall_only = 1; break;
		case 'f': o->force = 1; break;
		case 'q': o->quiet = 1; break;
		case 'h': usage(stdout); return -1;
		default: return XP_EXIT_USAGE;
		}
	}
	if (!o->output) {
		fprintf(stderr, "xpcorr merge: -o JOB_DIR is needed (the merged job's directory)\n");
		return XP_EXIT_USAGE;
	}
	if (optind >= argc) {
		fprintf(stderr, "xpcorr merge: expected at least one run directory\n");
		return XP_EXIT_USAGE;
	}
	if (argc - optind > XP_MERGE_MAX_RUNS) {
		fprintf(stderr, "xpcorr merge: %d runs: at most %d merge into one job\n",
			argc - optind, XP_MERGE_MAX_RUNS);
		return XP_EXIT_USAGE;
	}
	return 0;
}

/* The database a run path names, as device and inode: a directory's
 * xpcorr.db (not followed if a link), or the .db file itself. "a", "./a/",
 * a link to a and a/xpcorr.db are one run. 0 or -errno. */
static int run_identity(const char *path, dev_t *dev, ino_t *ino)
{
	struct stat st;
	int fd;

	if (stat(path, &st))
		return -errno;
	if (S_ISDIR(st.st_mode)) {
		if ((fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
			return -errno;
		if (fstatat(fd, XP_DB_NAME, &st, AT_SYMLINK_NOFOLLOW)) {
			close(fd);
			return -errno;
		}
		close(fd);
	}
	*dev = st.st_dev;
	*ino = st.st_ino;
	return 0;
}

/* -o is none of the inputs: the job would be read while it is replaced,
 * and hold itself. */
static int check_not_output(const struct xc_job_run *r, const char *output)
{
	char db[PATH_MAX];
	struct stat st[2];
	int have[2];

	/* the name (a run's identity: not followed), and where a link leads */
	snprintf(db, sizeof(db), "%s/%s", output, XP_DB_NAME);
	have[0] = lstat(db, &st[0]) == 0;
	have[1] = stat(db, &st[1]) == 0;
	for (int k = 0; k < 2; k++)
		if (have[k] && r->dev == st[k].st_dev && r->ino == st[k].st_ino) {
			fprintf(stderr, "xpcorr merge: -o %s: its %s is the input %s; give another"
				" directory\n", output, XP_DB_NAME, r->path);
			return XP_EXIT_USAGE;
		}
	return 0;
}

/* The same run given twice would be counted twice. */
static int check_unique(struct xc_job_run *runs, int i, const char *output)
{
	struct xc_job_run *r = &runs[i];
	int e = run_identity(r->path, &r->dev, &r->ino);

	if (e) {
		fprintf(stderr, "xpcorr merge: cannot read %s: %s\n", r->path, strerror(-e));
		return XP_EXIT_FAIL;
	}
	if ((e = check_not_output(r, output)))
		return e;
	for (int j = 0; j < i; j++)
		if (runs[j].dev == r->dev && runs[j].ino == r->ino) {
			fprintf(stderr, "xpcorr merge: %s and %s are the same run (one database, device"
				" %u:%u inode %ju); give each run once\n", runs[j].path, r->path,
				major(r->dev), minor(r->dev), (uintmax_t)r->ino);
			return XP_EXIT_USAGE;
		}
	return 0;
}

/* The same recording in two inputs would be counted twice, and its
 * processes, pid for pid, would share a run's pid space: a run and its
 * copy, or a merged job and one of its runs. */
static int check_recordings(struct xc_job_run *runs, int i)
{
	struct xc_job_run *r = &runs[i];
	char err[256];
	int e = xc_job_identify(r->db, r, err, sizeof(err)), a, b;

	if (e) {
		fprintf(stderr, "xpcorr merge: %s: %s\n", r->path, e == -ENOMEM ? "out of memory" : err);
		return e == -ENOMEM ? XP_EXIT_FAIL : XP_EXIT_USAGE;
	}
	for (int j = 0; j < i; j++) {
		char in_a[32] = "", in_b[32] = "";

		if ((a = xc_job_same_recording(&runs[j], r, &b)) < 0)
			continue;
		if (runs[j].is_job)
			snprintf(in_a, sizeof(in_a), " (its run %d)", a);
		if (r->is_job)
			snprintf(in_b, sizeof(in_b), " (its run %d)", b);
		fprintf(stderr, "xpcorr merge: %s%s and %s%s are the same recording (host, start"
			" realtime and monotonic ns: %s); give each run once\n", runs[j].path, in_a,
			r->path, in_b, xp_esc(r->ids[b]));
		return XP_EXIT_USAGE;
	}
	return 0;
}

/* Each run's database (ingested and correlated first when needed), its
 * host, ranks and clock evidence; the database is closed again. */
static int open_runs(struct xc_job_run *runs, int n, char **paths, const struct merge_opts *o)
{
	for (int i = 0; i < n; i++) {
		struct xc_job_run *r = &runs[i];
		int rc;

		r->path = paths[i];
		if ((rc = xp_cmd_open_db("xpcorr merge", r->path, &r->db)) ||
		    (rc = check_unique(runs, i, o->output)))
			return rc;
		xc_job_describe(r->db, r);
		if ((rc = check_recordings(runs, i)))
			return rc;
		if (xc_clock_run_load(r->db, &r->clock)) {
			fprintf(stderr, "xpcorr merge: %s: cannot read its clock evidence: %s\n", r->path,
				sqlite3_errmsg(r->db));
			return XP_EXIT_FAIL;
		}
		if (o->wall_only)
			xc_clock_run_free(&r->clock);
		if (!o->quiet)
			fprintf(stderr, "xpcorr merge: %s: host %s, rank %s, %zu %s collectives\n", r->path,
				xp_esc(r->host), r->ranks[0] ? xp_esc(r->ranks) : "?", r->clock.nmarkers,
				r->clock.kind ? r->clock.kind : "");
		/* reopened one at a time for the copy: memory stays that of one run */
		sqlite3_close(r->db);
		r->db = NULL;
	}
	return 0;
}

/* The reference first (its pids and metadata stay the job's): --reference,
 * else the run with rank 0, else the first given. */
static int put_reference_first(struct xc_job_run *runs, int n, const struct merge_opts *o)
{
	dev_t dev = 0;
	ino_t ino = 0;
	int ref = 0, found = o->reference && !run_identity(o->reference, &dev, &ino);

	for (int i = 0; i < n; i++) {
		if (o->reference ? found && runs[i].dev == dev && runs[i].ino == ino :
		    runs[i].min_rank == 0) {
			ref = i;
			break;
		}
		if (o->reference && i == n - 1) {
			fprintf(stderr, "xpcorr merge: --reference %s: not one of the runs given\n",
				o->reference);
			return XP_EXIT_USAGE;
		}
	}
	if (ref) {
		struct xc_job_run keep = runs[ref];

		memmove(runs + 1, runs, (size_t)ref * sizeof(*runs));
		runs[0] = keep;
	}
	return 0;
}

/* Each input's first run in the job: a merged job given as a run brings
 * its runs, and every run keeps a pid space of its own. */
static int place_runs(struct xc_job_run *runs, int n)
{
	int base = 0;

	for (int i = 0; i < n; i++) {
		runs[i].base = base;
		base += runs[i].slots;
	}
	if (base > XP_MERGE_MAX_RUNS) {
		fprintf(stderr, "xpcorr merge: %d runs in all (a merged job counts its runs): at most"
			" %d merge into one job\n", base, XP_MERGE_MAX_RUNS);
		return XP_EXIT_USAGE;
	}
	return 0;
}

static int align(struct xc_job_run *runs, int n)
{
	for (int i = 0; i < n; i++)
		if (xc_clock_align(&runs[0].clock, &runs[i].clock, &runs[i].shift)) {
			fprintf(stderr, "xpcorr merge: out of memory\n");
			return XP_EXIT_FAIL;
		}
	return 0;
}

static void print_shift(const struct xc_job_run *r, int index)
{
	const struct xc_clock_shift *s = &r->shift;

	fprintf(stderr, "  %-4d %-20.20s %-8s %-12s %+16.6f ms", index, xp_esc(r->host),
		r->ranks[0] ? xp_esc(r->ranks) : "?", s->method, (double)s->shift_ns / 1e6);
	if (s->spread_ns >= 0)
		fprintf(stderr, "  %u collectives: wall clocks off by %+.1f us, +-%.1f us left",
			s->matched, (double)s->refine_ns / 1e3, (double)s->spread_ns / 1e3);
	else if (index)
		fprintf(stderr, "  no collectives in common: the hosts' wall clocks alone");
	fputc('\n', stderr);
}

static void summary(const struct xc_job_run *runs, int n, const struct merge_opts *o,
		    uint64_t rows, double seconds)
{
	fprintf(stderr, "xpcorr merge: %d runs -> %s/%s (%" PRIu64 " rows, %.1f s)\n", n, o->output,
		XP_DB_NAME, rows, seconds);
	fprintf(stderr, "  %-4s %-20s %-8s %-12s %19s\n", "run", "host", "ranks", "clock", "shift");
	for (int i = 0; i < n; i++)
		print_shift(&runs[i], i);
}

struct job_ctx {
	int quiet;
	int rc;                     /* the exit status of a run that did not open */
};

static int reopen_run(void *ctx, const char *path, sqlite3 **db)
{
	struct job_ctx *c = ctx;

	return (c->rc = xp_cmd_reopen_db("xpcorr merge", path, db));
}

static void show_progress(void *ctx, int done, int n, uint64_t rows)
{
	const struct job_ctx *c = ctx;

	if (c->quiet || !isatty(STDERR_FILENO))
		return;
	if (done < 0)
		fprintf(stderr, "\r\033[K");
	else
		fprintf(stderr, "\rxpcorr merge: %d of %d runs, %" PRIu64 " rows", done, n, rows);
}

/* JOB_DIR/xpcorr.db (correlate/jobmerge.h): XP_EXIT_* after saying why. */
static int write_job(const struct merge_opts *o, const struct xc_job_run *runs, int n,
		     uint64_t *rows)
{
	struct job_ctx c = { .quiet = o->quiet };
	struct xc_job job = { .output = o->output, .force = o->force, .open_run = reopen_run,
			      .progress = show_progress, .ctx = &c };
	int err = xc_job_write(&job, runs, n, rows);

	if (err == -ECANCELED)
		return c.rc;
	if (err)
		fprintf(stderr, "xpcorr merge: %s\n", job.err);
	return !err ? XP_EXIT_OK : job.refused ? XP_EXIT_USAGE : XP_EXIT_FAIL;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int cmd_merge(int argc, char **argv)
{
	struct merge_opts o;
	struct xc_job_run *runs;
	uint64_t rows = 0;
	double t0 = now_s();
	int n, rc;

	if ((rc = parse_options(argc, argv, &o)))
		return rc < 0 ? XP_EXIT_OK : rc;
	n = argc - optind;
	runs = calloc((size_t)n, sizeof(*runs));
	if (!runs) {
		fprintf(stderr, "xpcorr merge: out of memory\n");
		return XP_EXIT_FAIL;
	}
	rc = open_runs(runs, n, argv + optind, &o);
	if (!rc)
		rc = put_reference_first(runs, n, &o);
	if (!rc)
		rc = place_runs(runs, n);
	if (!rc)
		rc = align(runs, n);
	if (!rc)
		rc = write_job(&o, runs, n, &rows);
	if (!rc && !o.quiet)
		summary(runs, n, &o, rows, now_s() - t0);
	for (int i = 0; i < n; i++) {
		xc_clock_run_free(&runs[i].clock);
		xc_job_run_free(&runs[i]);
		sqlite3_close(runs[i].db);
	}
	free(runs);
	return rc;
}

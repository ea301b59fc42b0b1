/* cmd_ls.c - `xpcorr ls`: the archived runs of a directory, oldest first,
 * with date, duration, GPU time, GPU, git describe and command. Reads what
 * ingest recorded (archive.h) and never ingests: a run without a database
 * shows what its meta.json says.
 *   xpcorr ls runs/            # every run directory directly under runs/
 *   xpcorr ls runA/ runB/      # these runs
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "db/archive.h"
#include "cmd/cmd.h"
#include "src/array.h"
#include "ingest/ingest.h"
#include "src/runmeta.h"
#include "src/textesc.h"

struct run {
	char *path;
	struct xp_archive a;
	int ingested;
	int failed;             /* said already, not listed */
};

static int has(const char *dir, const char *name)
{
	char path[4096];
	struct stat st;
	int n = snprintf(path, sizeof(path), "%s/%s", dir, name);

	/* lstat: a link or a FIFO named xpcorr.db is no database */
	return n > 0 && (size_t)n < sizeof(path) && lstat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static int is_run(const char *dir)
{
	return has(dir, XP_DB_NAME) || has(dir, "meta.json");
}

/* From the database when there is one, else from meta.json. 0 or -1 (said). */
static int load(struct run *r)
{
	char path[4096], why[512];
	struct xp_rundir d;
	sqlite3 *db = NULL;
	json_t *j, *cmd;
	int line, err;

	/* the database opened once, whatever a check before found: a name
	 * that changes between the two is no run's meta.json to fall back on */
	err = xp_rundir_open(&d, r->path, why, sizeof(why));
	if (!err) {
		err = xp_rundir_open_db(&d, &db, why, sizeof(why));
		xp_rundir_close(&d);
	}
	/* none, or a FIFO or link in a run that has its meta.json */
	if (err != -ENOENT && !(err == -ENXIO && has(r->path, "meta.json"))) {
		snprintf(path, sizeof(path), "%s/%s", r->path, XP_DB_NAME);
		if (err || xp_archive_read(db, &r->a)) {
			if (err)
				fprintf(stderr, "xpcorr: ls: %s\n", xp_esc(why));
			else
				fprintf(stderr, "xpcorr: ls: %s: %s\n", xp_esc(path), xp_esc(sqlite3_errmsg(db)));
			sqlite3_close(db);
			return -1;
		}
		sqlite3_close(db);
		r->ingested = 1;
		return 0;
	}
	snprintf(path, sizeof(path), "%s/meta.json", r->path);
	err = xp_meta_load(&j, path, &line);
	if (err) {
		if (err == -EBADMSG)
			fprintf(stderr, "xpcorr: ls: %s at line %d: not valid JSON\n", path, line);
		else
			fprintf(stderr, "xpcorr: ls: %s: %s\n", path, strerror(-err));
		return -1;
	}
	r->a.start_realtime_ns = xp_meta_int(j, "start_realtime_ns", 0);
	r->a.duration_ns = xp_meta_int(j, "stop_monotonic_ns", 0) - xp_meta_int(j, "start_monotonic_ns", 0);
	cmd = json_object_get(j, "command");
	if (json_is_string(cmd)) {
		snprintf(r->a.command, sizeof(r->a.command), "%s", json_string_value(cmd));
	} else if (json_is_array(cmd)) {
		size_t i, used = 0;
		json_t *v;

		json_array_foreach(cmd, i, v)
			if (json_is_string(v) && used < sizeof(r->a.command))
				used += (size_t)snprintf(r->a.command + used, sizeof(r->a.command) - used,
							 "%s%s", i ? " " : "", json_string_value(v));
	}
	/* a run of processes xpcap attached to has no command of its own */
	if (!r->a.command[0] && json_is_array(json_object_get(j, "target_pids")) &&
	    !strcmp(json_string_value(json_object_get(j, "mode")) ?: "", "attach")) {
		size_t i, used = snprintf(r->a.command, sizeof(r->a.command), "-p ");
		json_t *v;

		json_array_foreach(json_object_get(j, "target_pids"), i, v)
			if (used < sizeof(r->a.command))
				used += (size_t)snprintf(r->a.command + used, sizeof(r->a.command) -
							 used, "%s%lld", i ? "," : "",
							 (long long)json_integer_value(v));
	} else if (!r->a.command[0] &&
		   !strcmp(json_string_value(json_object_get(j, "mode")) ?: "", "system")) {
		snprintf(r->a.command, sizeof(r->a.command), "-a (all CPUs)");
	}
	/* what xpcap took at record time (meta.json "git") */
	snprintf(r->a.git, sizeof(r->a.git), "%s",
		 json_string_value(json_object_get(json_object_get(j, "git"), "describe")) ?: "");
	json_decref(j);
	return 0;
}

static int cmp_run(const void *pa, const void *pb)
{
	const struct run *a = pa, *b = pb;

	if (a->a.start_realtime_ns != b->a.start_realtime_ns)
		return a->a.start_realtime_ns < b->a.start_realtime_ns ? -1 : 1;
	return strcmp(a->path, b->path);
}

static int add(struct run **runs, size_t *n, size_t *cap, const char *path)
{
	if (xp_array__reserve((void **)runs, cap, *n + 1, sizeof(**runs), 16))
		return -ENOMEM;
	memset(&(*runs)[*n], 0, sizeof(**runs));
	(*runs)[*n].path = strdup(path);
	return (*runs)[(*n)++].path ? 0 : -ENOMEM;
}

/* DIR itself when it is a run, else the runs directly under it. */
static int scan(const char *dir, struct run **runs, size_t *n, size_t *cap)
{
	struct dirent **names;
	char path[4096];
	int count, err = 0;

	if (is_run(dir))
		return add(runs, n, cap, dir);
	count = scandir(dir, &names, NULL, alphasort);
	if (count < 0) {
		fprintf(stderr, "xpcorr: ls: cannot read %s: %s\n", dir, strerror(errno));
		return -1;
	}
	for (int i = 0; i < count; i++) {
		struct stat st;

		snprintf(path, sizeof(path), "%s%s%s", dir, dir[strlen(dir) - 1] == '/' ? "" : "/",
			 names[i]->d_name);
		if (!err && names[i]->d_name[0] != '.' && !stat(path, &st) && S_ISDIR(st.st_mode) &&
		    is_run(path))
			err = add(runs, n, cap, path);
		free(names[i]);
	}
	free(names);
	return err;
}

int cmd_ls(int argc, char **argv)
{
	struct run *runs = NULL;
	size_t n = 0, cap = 0;
	int rc = XP_EXIT_OK;

	if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		printf("usage: xpcorr ls DIR...\n"
		       "Lists the runs in each DIR (or DIR itself when it is a run), oldest first:\n"
		       "date, duration, GPU time, GPU, git describe, path and command.\n");
		return XP_EXIT_OK;
	}
	if (argc > 1 && argv[1][0] == '-') {
		fprintf(stderr, "xpcorr ls: %s: no such option (usage: xpcorr ls DIR...)\n",
			argv[1]);
		return XP_EXIT_USAGE;
	}
	if (argc < 2) {
		fprintf(stderr, "usage: xpcorr ls DIR...\n");
		return XP_EXIT_USAGE;
	}
	for (int i = 1; i < argc; i++) {
		size_t before = n;
		int bad = xp_cmd_need_path("xpcorr ls", argv[i], "directory");

		if (bad) {
			rc = bad;
			continue;
		}
		if (scan(argv[i], &runs, &n, &cap)) {
			if (rc == XP_EXIT_OK)
				rc = XP_EXIT_FAIL;
		} else if (n == before) {
			/* an empty listing says why */
			fprintf(stderr, "xpcorr ls: no run in %s (a run directory holds meta.json"
				" or xpcorr.db)\n", argv[i]);
		}
	}
	size_t listed = 0;

	for (size_t i = 0; i < n; i++)
		if ((runs[i].failed = load(&runs[i]) != 0))
			rc = XP_EXIT_FAIL;
		else
			listed++;
	if (n)
		qsort(runs, n, sizeof(*runs), cmp_run);
	/* a header only above rows: not after the errors alone */
	if (listed)
		printf("%-23s  %10s  %12s  %-24s  %-16s  %s\n", "DATE (UTC)", "DURATION", "GPU TIME",
		       "GPU", "GIT", "RUN: COMMAND");
	for (size_t i = 0; i < n; i++) {
		const struct xp_archive *a = &runs[i].a;

		if (runs[i].failed)
			continue;
		time_t t = (time_t)(a->start_realtime_ns / 1000000000);
		char date[32] = "?", dur[32] = "?", gpu[32] = "not ingested";
		struct tm tm;

		if (a->start_realtime_ns > 0 && gmtime_r(&t, &tm))
			strftime(date, sizeof(date), "%Y-%m-%d %H:%M:%S", &tm);
		if (a->duration_ns > 0)
			snprintf(dur, sizeof(dur), "%.3f s", (double)a->duration_ns / 1e9);
		if (runs[i].ingested)
			snprintf(gpu, sizeof(gpu), "%.3f ms", (double)a->gpu_ns / 1e6);
		printf("%-23s  %10s  %12s  %-24s  %-16s  %s: %s\n", date, dur, gpu,
		       a->gpu[0] ? xp_esc(a->gpu) : "-", a->git[0] ? xp_esc(a->git) : "-",
		       xp_esc(runs[i].path), a->command[0] ? xp_esc(a->command) : "?");
	}
	for (size_t i = 0; i < n; i++)
		free(runs[i].path);
	free(runs);
	return rc;
}

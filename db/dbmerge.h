/* dbmerge.h - the databases of several runs (hosts, or ranks recorded
 * apart) into one job database, table by table, through each run's own
 * connection (a run is hostile input: no ATTACH by path). Names, modules,
 * frames and stack nodes are shared across runs (the same Python line on
 * every rank is one stack node, so views group across ranks); each run's
 * times move onto the job's clock by its shift; each run's pids move into
 * a space of their own (two hosts' pid 4242 stay two processes):
 * run i > 0 stores pid i << XP_PID_LOCAL_BITS | pid (gtid.h). The
 * correlation's tables are left empty: the caller correlates the job.
 *
 *   struct xp_dbmerge *m;
 *   xp_dbmerge_new(job, &m);                         // job: schema created
 *   for each run: xp_dbmerge_run(m, run_db, &(struct xp_merge_run){ .index = i,
 *                                 .shift_ns = s, .label = "host-b", .host = "host-b" })
 *                or say(xp_dbmerge_error(m));
 *   xp_dbmerge_free(m);
 */
#ifndef XP_DBMERGE_H
#define XP_DBMERGE_H

#include <stddef.h>
#include <stdint.h>
#include <sqlite3.h>

struct xp_dbmerge;

struct xp_merge_run {
	uint32_t index;             /* 0 keeps its pids and the job's metadata */
	uint32_t slots;             /* runs it holds: 0 or 1 for a run; a merged job's
				     * runs keep apart at index + their own run */
	int64_t shift_ns;           /* added to every timestamp of the run */
	const char *label;          /* prefixed to its streams' names, "label/cpu.xpr" */
	const char *host;           /* for its processes' ranks that name none */
};

/* The job's runs, one row each, written by the merge command: how each
 * run's clock was put onto the job's (clockalign.h). */
#define XP_JOB_RUNS_SQL \
	"CREATE TABLE IF NOT EXISTS xp_job_runs(" \
	" run INTEGER NOT NULL,"           /* index: its pids are run << 22 | pid */ \
	" path TEXT, host TEXT, ranks TEXT," \
	" shift_ns INTEGER NOT NULL,"      /* added to its times */ \
	" wall_ns INTEGER NOT NULL,"       /* the shift by the wall clocks alone */ \
	" refine_ns INTEGER NOT NULL,"     /* what collectives moved it by */ \
	" spread_ns INTEGER,"              /* what is left: NULL when not refined */ \
	" matched INTEGER NOT NULL,"       /* collectives matched with the reference */ \
	" markers TEXT,"                   /* 'nccl' | 'gloo' | NULL */ \
	" method TEXT NOT NULL," /* 'reference' | 'collectives' | 'wall clock' | 'none' */ \
	" run_id TEXT)"                    /* the recording: XP_RUN_ID_SQL of its metadata */

/* A recording's identity, from what xpcap wrote at its start (meta.json):
 * host, CLOCK_REALTIME and CLOCK_MONOTONIC ns; a copy of a run is the same
 * recording. NULL when the metadata lacks one. */
#define XP_RUN_ID_SQL \
	"SELECT (SELECT value FROM META_DATA_EXPORT WHERE name = 'meta.hostname') || ' ' ||" \
	" (SELECT CAST(value AS INTEGER) FROM META_DATA_EXPORT WHERE name = 'meta.start_realtime_ns')" \
	" || ' ' || (SELECT CAST(value AS INTEGER) FROM META_DATA_EXPORT" \
	" WHERE name = 'meta.start_monotonic_ns')"

/* 0 or -ENOMEM. */
int xp_dbmerge_new(sqlite3 *job, struct xp_dbmerge **out);
/* Copies one run's rows into the job: 0, -E2BIG (more runs than pid space),
 * -ENOMEM, or -EIO; xp_dbmerge_error then says what (the table and
 * SQLite's message). */
int xp_dbmerge_run(struct xp_dbmerge *m, sqlite3 *run, const struct xp_merge_run *r);
/* The message of xp_dbmerge_run's last failure, on the merge's handle. */
const char *xp_dbmerge_error(const struct xp_dbmerge *m);
/* Rows copied so far (all tables), for progress lines. */
uint64_t xp_dbmerge_rows(const struct xp_dbmerge *m);
void xp_dbmerge_free(struct xp_dbmerge *m);

#endif

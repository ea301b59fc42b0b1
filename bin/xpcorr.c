/* xpcorr.c - entry point of xpcorr: dispatches to the offline commands.
 *   xpcorr ingest run/ && xpcorr report --top 30 run/
 */
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>

#include "cmd/cmd.h"
#include "db/dbcheck.h"

static const struct xp_cmd commands[] = {
	{ "ingest", cmd_ingest, "load a run into run/xpcorr.db, symbolized" },
	{ "info", cmd_info, "what a run captured, lost and symbolized" },
	{ "export", cmd_export, "folded stacks, a flame graph SVG or a Chrome/Perfetto trace" },
	{ "dump", cmd_dump, "print the raw records of a run, one per line" },
	{ "report", cmd_report, "GPU time per kernel (or stack, API, ...) with the CPU stacks that launched it" },
	{ "diff", cmd_diff, "what got slower, faster, appeared or vanished between two runs" },
	{ "merge", cmd_merge, "the runs of one job (hosts, ranks) into one, clocks aligned" },
	{ "job", cmd_job, "a job's views from its runs' summaries: thousands of ranks, no merge" },
	{ "ls", cmd_ls, "archived runs in a directory: date, command, duration, GPU time" },
	{ NULL, NULL, NULL },
};

int main(int argc, char **argv)
{
	char why[512];
	int rc;

	/* no connection is shared between threads, and nobody reads SQLite's
	 * memory statistics: both cost a mutex on every step and allocation
	 * (6% of a Chrome export) */
	sqlite3_config(SQLITE_CONFIG_MULTITHREAD);
	sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
	rc = xp_cmd_dispatch("xpcorr", commands, argc, argv);
	/* a bounded database stopped answering (db/dbcheck.h): whatever the
	 * command made of its failed queries, say why once, and fail */
	if (xp_db_work_exhausted(why, sizeof(why))) {
		if (!xp_db_work_was_said())
			fprintf(stderr, "xpcorr: %s\n", why);
		rc = 1;
	}
	return rc;
}

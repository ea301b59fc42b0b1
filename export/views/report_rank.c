/* report_rank.c - `xpcorr report --by rank`: the processes of a distributed
 * job side by side (their ranks from xp_ranks), each with its GPU time, its
 * kernels and the share of its time in collectives (NCCL and gloo kernels);
 * then, for each collective or kernel every rank ran, the spread of its
 * time across the ranks and the slowest rank: where ranks wait on each
 * other. For a collective the rank named is the one the others waited
 * for: in each instance of it (the k-th launch of its name on every rank)
 * the rank that started it last, whose collective kernel is the shortest;
 * the waiting ranks' kernels are the long ones (timeline.h's instances,
 * as --by idle's "waiting for rank N"). Where the last two ranks started
 * within the clock alignment's error of each other (a merged job's
 * xp_job_runs.spread_ns), no rank is named for that instance.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "export/names/elidename.h"
#include "db/db_schema.h"
#include "src/array.h"
#include "src/gtid.h"
#include "export/names/launchsite.h"
#include "export/analysis/timeline.h"
#include "export/report/report_priv.h"
#include "export/report/decl.h"
#include "export/report/table.h"
#include "export/views/rank_host.h"

/* kernels of a collective library: NCCL's and gloo's CUDA kernels */
/* (for snprintf formats: the LIKE patterns' percent signs doubled) */
#define IS_COLLECTIVE(name) "(" name " LIKE 'nccl%%' OR " name " LIKE '%%gloo%%')"

/* The ranks table. csv's header also names the spread's fields (its rows
 * follow in the same table, "Section" telling them apart); text shows the
 * share in collectives and puts the process last. */
static const struct xp_col rank_cols[] = {
	{ .head = "Section", .kind = XP_COL_TEXT, .csv_only = 1 },
	{ .head = "Rank", .json = "rank", .kind = XP_COL_INT, .width = 4, .rule = 4 },
	{ .head = "World", .json = "world_size", .kind = XP_COL_INT, .width = 5, .rule = 5 },
	{ .head = "PID", .json = "pid", .kind = XP_COL_INT, .width = 7, .rule = 3 },
	{ .head = "Host", .json = "host", .kind = XP_COL_TEXT, .width = 0, .rule = 4 },
	{ .head = "GPU Time (ns)", .json = "gpu_ns", .kind = XP_COL_INT, .width = 14, .rule = 13 },
	{ .head = "Kernels", .json = "kernels", .kind = XP_COL_INT, .width = 7, .rule = 7 },
	{ .head = "Collectives (ns)", .json = "collective_ns", .kind = XP_COL_INT, .width = 16,
	  .rule = 16 },
	{ .head = "Sync Wait (ns)", .json = "sync_wait_ns", .kind = XP_COL_INT, .width = 14,
	  .rule = 14 },
	{ .head = "Name", .kind = XP_COL_TEXT, .csv_only = 1 },
	{ .head = "Spread (ns)", .kind = XP_COL_INT, .csv_only = 1 },
	{ .head = "Slowest Rank", .kind = XP_COL_INT, .csv_only = 1 },
	{ .head = "Waited (ns)", .kind = XP_COL_INT, .csv_only = 1 },
	{ .head = "Waited Within Clock Error (ns)", .kind = XP_COL_INT, .csv_only = 1 },
	{ .head = "Coll (%)", .kind = XP_COL_FIXED, .width = 8, .rule = 8, .prec = 1, .text_only = 1 },
};
static const unsigned char rank_text[] = { 1, 2, 5, 6, 7, 14, 8, 3, 4 };

/* One rank's row (per_rank's statement) in R's format. */
static int rank_row(struct xp_table *t, sqlite3_stmt *s)
{
	/* a merged job's pids carry their run in the high bits (gtid.h) */
	int64_t gpu = sqlite3_column_int64(s, 4), coll = sqlite3_column_int64(s, 6);
	struct xp_cell c[] = {
		{ .s = "rank" }, { .i = sqlite3_column_int64(s, 0) }, { .i = sqlite3_column_int64(s, 3) },
		{ .i = xp_pid_local((uint64_t)sqlite3_column_int64(s, 2)) },
		{ .s = (const char *)sqlite3_column_text(s, 1) }, { .i = gpu },
		{ .i = sqlite3_column_int64(s, 5) }, { .i = coll }, { .i = sqlite3_column_int64(s, 7) },
		{ .s = "" }, { .absent = 1 }, { .absent = 1 }, { .absent = 1 }, { .absent = 1 },
		{ .d = gpu ? 100.0 * (double)coll / (double)gpu : 0 },
	};

	return xp_table_row(t, c);
}

/* The ranks table: each rank's GPU time, kernels, collectives, sync wait. */
static int per_rank(struct rep *R, size_t *rows)
{
	const struct xp_report_opts *o = R->o;
	sqlite3_stmt *s;
	struct xp_table t = { .cols = rank_cols, .n = sizeof(rank_cols) / sizeof(rank_cols[0]),
			      .fmt = o->format, .out = R->out, .json = &R->json, .width = o->width,
			      .key = "ranks", .lead = "  ", .no_split = 1, .text_order = rank_text,
			      .text_n = sizeof(rank_text) };
	char sql[2048], f[256], fa[256], who[256], title[256];
	int step;

	xp_rep_filter(o, "k.globalPid", "k.start", f, sizeof(f));
	xp_rep_filter(o, "a.globalTid", "a.start", fa, sizeof(fa));
	/* --pid/--rank: that process's row alone */
	xp_rep_filter(&(struct xp_report_opts){ .pid = o->pid }, "(r.pid << 24)", "0", who, sizeof(who));
	snprintf(sql, sizeof(sql), "SELECT r.rank, ifnull(r.host, '?'), r.pid, ifnull(r.world_size, -1),"
		 " ifnull(sum(k.end - k.start), 0), count(k.rowid),"
		 " ifnull(sum(CASE WHEN " IS_COLLECTIVE("n.value") " THEN k.end - k.start END), 0),"
		 " ifnull(max(w.ns), 0)"
		 " FROM xp_ranks r LEFT JOIN CUPTI_ACTIVITY_KIND_KERNEL k"
		 " ON " XP_SQL_GTID_PID("k.globalPid") " = r.pid AND %s"
		 " LEFT JOIN StringIds n ON n.id = k.demangledName"
		 /* the host waiting for its GPU: time in the CUDA synchronize calls */
		 " LEFT JOIN (SELECT " XP_SQL_GTID_PID("a.globalTid") " AS pid, sum(a.end - a.start) AS ns"
		 "  FROM CUPTI_ACTIVITY_KIND_RUNTIME a JOIN StringIds an ON an.id = a.nameId"
		 "  WHERE an.value LIKE '%%Synchronize%%' AND %s GROUP BY 1) w ON w.pid = r.pid"
		 " WHERE %s GROUP BY r.pid ORDER BY r.rank, r.pid", f, fa, who);
	if (xp_rep_prepare(R, sql, &s) < 0)
		return -EIO;
	snprintf(title, sizeof(title), "** %s:", xp_rep_title(o->by));
	xp_table_begin(&t, title);
	while ((step = sqlite3_step(s)) == SQLITE_ROW) {
		(*rows)++;
		rank_row(&t, s);
	}
	sqlite3_finalize(s);
	xp_table_end(&t, *rows, *rows);
	return step == SQLITE_DONE ? 0 : -EIO;
}

/* Where rank launched most of kernel name's GPU time: the launch site the
 * slowest rank spends its extra time under. NULL if none. */
static const char *slowest_site(struct rep *R, struct xp_sites *sites, int64_t name, int64_t rank)
{
	sqlite3_stmt *s;
	int64_t stack = -1;

	if (sqlite3_prepare_v2(R->db, "SELECT a.stack_id FROM CUPTI_ACTIVITY_KIND_KERNEL k"
			       " JOIN xp_attribution a ON a.gpu_table = 'KERNEL' AND a.gpu_rowid = k.rowid"
			       " JOIN xp_ranks r ON r.pid = " XP_SQL_GTID_PID("k.globalPid")
			       " WHERE k.demangledName = ? AND r.rank = ? AND a.stack_id IS NOT NULL"
			       " GROUP BY a.stack_id ORDER BY sum(k.end - k.start) DESC, a.stack_id LIMIT 1",
			       -1, &s, NULL) != SQLITE_OK)
		return NULL;
	sqlite3_bind_int64(s, 1, name);
	sqlite3_bind_int64(s, 2, rank);
	if (sqlite3_step(s) == SQLITE_ROW)
		stack = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	return stack > 0 ? xp_sites_get(sites, stack) : NULL;
}

/* What the ranks waited for in one collective: the rank the others waited
 * for longest (-1: none decided), the others' wait in all, and the part of
 * it in instances whose last two ranks started within the clock error. */
struct coll_wait {
	int64_t name;               /* StringIds id of the kernel's name */
	int64_t late_rank;
	int64_t late_ns;            /* the others' wait in the instances it was last */
	int64_t wait_ns, unsure_ns;
};

/* One coll_wait per collective name every rank ran, into *out (*n of
 * them). 0, -EIO or -ENOMEM. */
static int coll_waits(struct rep *R, struct coll_wait **out, size_t *n)
{
	char sql[2048], f[256];
	size_t cap = 0;
	sqlite3_stmt *s;
	int step;

	*out = NULL;
	*n = 0;
	xp_rep_filter(R->o, "m.gp", "m.start", f, sizeof(f));
	snprintf(sql, sizeof(sql), "WITH c AS (%s),"
		 " m AS (SELECT nm, i, gp, start, max(start) OVER w AS last, count(*) OVER w AS cnt,"
		 " first_value(gp) OVER (PARTITION BY nm, i ORDER BY start DESC, gp) AS lgp,"
		 " nth_value(start, 2) OVER (PARTITION BY nm, i ORDER BY start DESC, gp ROWS BETWEEN"
		 " UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING) AS second FROM c"
		 " WINDOW w AS (PARTITION BY nm, i))"
		 " SELECT m.nm, r.rank, sum(m.last - m.start),"
		 " sum(CASE WHEN m.last - m.second <= ?1 THEN m.last - m.start ELSE 0 END)"
		 " FROM m JOIN xp_ranks r ON r.pid = (m.lgp >> 24)"
		 " WHERE m.cnt = (SELECT count(DISTINCT pid) FROM xp_ranks) AND %s"
		 " GROUP BY m.nm, r.rank ORDER BY m.nm, r.rank", XP_SQL_COLL_KERNELS, f);
	if (xp_rep_prepare(R, sql, &s) < 0)
		return -EIO;
	sqlite3_bind_int64(s, 1, xp_tl_clock_error(R->db));
	while ((step = sqlite3_step(s)) == SQLITE_ROW) {
		int64_t name = sqlite3_column_int64(s, 0), rank = sqlite3_column_int64(s, 1);
		int64_t ns = sqlite3_column_int64(s, 2), unsure = sqlite3_column_int64(s, 3);
		struct coll_wait *w = *n ? &(*out)[*n - 1] : NULL;

		if (!w || w->name != name) {
			if (xp_array__reserve((void **)out, &cap, *n + 1, sizeof(**out), 8)) {
				sqlite3_finalize(s);
				return -ENOMEM;
			}
			w = &(*out)[(*n)++];
			*w = (struct coll_wait){ .name = name, .late_rank = -1 };
		}
		w->wait_ns += ns;
		w->unsure_ns += unsure;
		if (ns - unsure > w->late_ns) {
			w->late_ns = ns - unsure;
			w->late_rank = rank;
		}
	}
	sqlite3_finalize(s);
	return step == SQLITE_DONE ? 0 : -EIO;
}

static const struct coll_wait *find_wait(const struct coll_wait *w, size_t n, int64_t name)
{
	for (size_t i = 0; i < n; i++)
		if (w[i].name == name)
			return &w[i];
	return NULL;
}

/* A collective's row, its second line: how long the others waited, and
 * for whom. */
static void put_wait_line(struct rep *R, const struct coll_wait *cw)
{
	char line[300];
	double share = cw->wait_ns ? 100.0 * (double)cw->late_ns / (double)cw->wait_ns : 0;

	if (cw->late_rank >= 0)
		snprintf(line, sizeof(line), "%24sthe others waited %lld ns, %.1f%% of it for rank %lld",
			 "", (long long)cw->wait_ns, share, (long long)cw->late_rank);
	else
		snprintf(line, sizeof(line), "%24sthe others waited %lld ns", "", (long long)cw->wait_ns);
	if (cw->unsure_ns) {
		size_t len = strlen(line);

		snprintf(line + len, sizeof(line) - len, " (%lld ns where the ranks started within"
			 " the clocks' error)", (long long)cw->unsure_ns);
	}
	xp_rep_put_row(R, line);
}

/* What text shows under a spread row: the others' wait (a collective)
 * and where the slowest rank launched the kernel. */
struct spread_more {
	struct rep *R;
	const struct coll_wait *cw;
	const char *site;
};

static int spread_lines(struct xp_table *t, const struct xp_cell *c)
{
	const struct spread_more *m = c->p;
	char line[700];

	(void)t;
	if (m->cw)
		put_wait_line(m->R, m->cw);
	/* the site as the kernel report names it (a line, "NCCL: DDP
	 * reducer, bucket 1"), cut to the width with the row */
	snprintf(line, sizeof(line), "%24s%s", "", m->site ? m->site : "(no launch stack)");
	xp_rep_put_row(m->R, line);
	return 0;
}

/* The spread table: in csv, rows of the ranks table (its last fields). */
static const struct xp_col spread_cols[] = {
	{ .head = "Section", .kind = XP_COL_TEXT, .csv_only = 1 },
	{ .head = "Rank", .kind = XP_COL_INT, .csv_only = 1 },
	{ .head = "World", .kind = XP_COL_INT, .csv_only = 1 },
	{ .head = "PID", .kind = XP_COL_INT, .csv_only = 1 },
	{ .head = "Host", .kind = XP_COL_TEXT, .csv_only = 1 },
	{ .head = "GPU Time (ns)", .kind = XP_COL_INT, .csv_only = 1 },
	{ .head = "Kernels", .kind = XP_COL_INT, .csv_only = 1 },
	{ .head = "Collectives (ns)", .kind = XP_COL_INT, .csv_only = 1 },
	{ .head = "Sync Wait (ns)", .kind = XP_COL_INT, .csv_only = 1 },
	{ .head = "Kernel (collectives first; run by every rank) / where the slowest rank launched it",
	  .csv = "Name", .json = "kernel", .kind = XP_COL_TEXT, .width = 0, .rule = 6 },
	{ .head = "Spread (ns)", .json = "spread_ns", .kind = XP_COL_INT, .width = 11, .rule = 11 },
	{ .head = "Slowest", .csv = "Slowest Rank", .json = "slowest_rank", .kind = XP_COL_INT,
	  .width = 7, .rule = 7 },
	{ .head = "Waited (ns)", .json = "waited_ns", .kind = XP_COL_INT },
	{ .head = "Waited For Slowest (ns)", .json = "waited_for_slowest_ns", .kind = XP_COL_INT,
	  .json_only = 1 },
	{ .head = "Waited Within Clock Error (ns)", .json = "waited_within_clock_error_ns",
	  .kind = XP_COL_INT },
	{ .head = "Slowest Site", .json = "slowest_site", .kind = XP_COL_TEXT, .json_only = 1 },
	{ .head = "Collective", .json = "collective", .kind = XP_COL_BOOL, .json_only = 1 },
	{ .head = "Then", .kind = XP_COL_CALL, .text_only = 1, .call = spread_lines },
	{ .head = "Kernel (collectives first; run by every rank) / where the slowest rank launched it",
	  .kind = XP_COL_TEXT, .width = 0, .rule = 6, .text_only = 1 },  /* its name short */
	/* a collective run on the hosts (rank_host.h); absent for kernels */
	{ .head = "Host Side", .json = "host_side", .kind = XP_COL_BOOL, .json_only = 1 },
};
static const unsigned char spread_text[] = { 10, 11, 18 };

/* One row of the spread table (spread's statement at a row); cw: the
 * collective's waits, NULL for other kernels. */
static void spread_row(struct rep *R, struct xp_table *t, sqlite3_stmt *s, struct xp_sites *sites,
		       const struct coll_wait *cw)
{
	const char *name = (const char *)sqlite3_column_text(s, 0);
	int64_t ns = sqlite3_column_int64(s, 1), slow = sqlite3_column_int64(s, 2);
	struct spread_more more = { R, cw, NULL };
	char brief[512];

	/* a collective: the rank the others waited for, not the one
	 * whose kernel lasted longest (that one waited) */
	if (cw)
		slow = cw->late_rank;
	more.site = slow >= 0 ? slowest_site(R, sites, sqlite3_column_int64(s, 4), slow) : NULL;
	xp_elide_name(name ? name : "?", brief, sizeof(brief));
	xp_table_row(t, (struct xp_cell[]){
		{ .s = "spread" }, { .absent = 1 }, { .absent = 1 }, { .absent = 1 }, { .absent = 1 },
		{ .absent = 1 }, { .absent = 1 }, { .absent = 1 }, { .absent = 1 },
		{ .s = name ? name : "?" }, { .i = ns },
		{ .i = slow, .null = slow < 0 }, { .i = cw ? cw->wait_ns : 0, .absent = !cw },
		{ .i = cw ? cw->late_ns : 0, .absent = !cw }, { .i = cw ? cw->unsure_ns : 0, .absent = !cw },
		{ .s = more.site, .null = !more.site }, { .i = sqlite3_column_int(s, 3) }, { .p = &more },
		{ .s = brief }, { .absent = 1 },
	});
}

/* The row of a collective the ranks waited for on their hosts. */
static void host_spread_row(struct rep *R, struct xp_table *t, struct xp_sites *sites,
			    const struct xp_rank_host_coll *c)
{
	struct coll_wait cw = { .late_rank = c->late_rank, .late_ns = c->late_ns,
				.wait_ns = c->wait_ns, .unsure_ns = c->unsure_ns };
	struct spread_more more = { R, &cw, c->late_stack > 0 ? xp_sites_get(sites, c->late_stack) : NULL };
	char name[300];

	snprintf(name, sizeof(name), XP_HOST_COLL_LABEL, c->name);
	xp_table_row(t, (struct xp_cell[]){
		{ .s = "spread" }, { .absent = 1 }, { .absent = 1 }, { .absent = 1 }, { .absent = 1 },
		{ .absent = 1 }, { .absent = 1 }, { .absent = 1 }, { .absent = 1 },
		{ .s = name }, { .i = c->spread_ns },
		{ .i = c->late_rank, .null = c->late_rank < 0 }, { .i = c->wait_ns }, { .i = c->late_ns },
		{ .i = c->unsure_ns }, { .s = more.site, .null = !more.site }, { .i = 1 }, { .p = &more },
		{ .s = name }, { .i = 1 },
	});
}

/* An empty spread table of a run that holds fewer ranks than its world:
 * the spread and the waits for other ranks need the other ranks' runs. */
static void alone_note(struct rep *R, struct xp_table *t)
{
	sqlite3_stmt *s;
	int64_t ranks = 0, world = 0;

	if (sqlite3_prepare_v2(R->db, "SELECT count(DISTINCT rank), ifnull(max(world_size), 0)"
			       " FROM xp_ranks", -1, &s, NULL) != SQLITE_OK)
		return;
	if (sqlite3_step(s) == SQLITE_ROW) {
		ranks = sqlite3_column_int64(s, 0);
		world = sqlite3_column_int64(s, 1);
	}
	sqlite3_finalize(s);
	if (ranks > 1 || ranks >= world)
		return;
	xp_table_text(t, "  (%lld of the job's %lld ranks recorded here: spreads and waits"
		      " for other ranks need their runs: xpcorr merge)", (long long)ranks,
		      (long long)world);
}

/* Kernels every rank ran, by how far apart the ranks' times are; first
 * the collectives the ranks waited for on their hosts. */
static int spread(struct rep *R, const struct xp_host_colls *H)
{
	const struct xp_report_opts *o = R->o;
	struct xp_sites *sites = NULL;
	struct coll_wait *waits = NULL;
	size_t nwaits = 0;
	struct xp_table t = { .cols = spread_cols, .n = sizeof(spread_cols) / sizeof(spread_cols[0]),
			      .fmt = o->format, .out = R->out, .json = &R->json, .width = o->width,
			      .key = "spread", .lead = "  ", .no_split = 1, .text_order = spread_text,
			      .text_n = sizeof(spread_text), .csv_continues = 1 };
	struct xp_rank_host_coll *host = NULL;
	size_t nhost = 0;
	sqlite3_stmt *s;
	char sql[2048], f[256];
	unsigned shown = 0;
	int step;

	xp_rep_filter(o, "k.globalPid", "k.start", f, sizeof(f));
	snprintf(sql, sizeof(sql), "WITH t AS (SELECT k.demangledName AS name, r.rank AS rank,"
		 " sum(k.end - k.start) AS ns FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN xp_ranks r"
		 " ON r.pid = " XP_SQL_GTID_PID("k.globalPid") " WHERE %s GROUP BY 1, 2)"
		 " SELECT n.value, max(t.ns) - min(t.ns), (SELECT t2.rank FROM t t2 WHERE t2.name = t.name"
		 " ORDER BY t2.ns DESC, t2.rank LIMIT 1), " IS_COLLECTIVE("n.value") ", t.name"
		 " FROM t JOIN StringIds n ON n.id = t.name GROUP BY t.name"
		 " HAVING count(*) = (SELECT count(DISTINCT rank) FROM xp_ranks) AND count(*) > 1"
		 " ORDER BY 4 DESC, 2 DESC, 1", f);
	if ((step = coll_waits(R, &waits, &nwaits)) < 0)
		return step;
	if ((step = xp_rank_host_colls(o, H, &host, &nhost)) < 0) {
		free(waits);
		return step;
	}
	if (xp_rep_prepare(R, sql, &s) < 0) {
		free(waits);
		free(host);
		return -EIO;
	}
	if (xp_sites_new(R->db, &sites) < 0) {
		sqlite3_finalize(s);
		free(waits);
		free(host);
		return -EIO;
	}
	xp_sites_prefer_own(sites);
	xp_table_text(&t, "%s", "");
	xp_table_begin(&t, NULL);
	if (nwaits || nhost)
		xp_table_text(&t, "  (a collective's Slowest is the rank the others waited for: the"
			      " last to start it)");
	for (size_t i = 0; i < nhost && (!o->top || shown < o->top); i++, shown++)
		host_spread_row(R, &t, sites, &host[i]);
	free(host);
	while ((step = sqlite3_step(s)) == SQLITE_ROW && (!o->top || shown < o->top)) {
		shown++;
		spread_row(R, &t, s, sites, sqlite3_column_int(s, 3) ?
			   find_wait(waits, nwaits, sqlite3_column_int64(s, 4)) : NULL);
	}
	sqlite3_finalize(s);
	xp_sites_free(sites);
	free(waits);
	xp_table_end(&t, shown, shown);
	if (!shown && step == SQLITE_DONE)
		alone_note(R, &t);     /* text's alone */
	return step == SQLITE_ROW || step == SQLITE_DONE ? 0 : -EIO;
}

int xp_report_rank(struct rep *R, size_t *rows)
{
	struct xp_host_colls H;
	int rc;

	*rows = 0;
	/* runs of older builds have no table: no rank, an empty view */
	if (!xp_db_has_table(R->db, "xp_ranks")) {
		static const unsigned char none[1];
		struct xp_table t = { .cols = rank_cols, .n = sizeof(rank_cols) / sizeof(rank_cols[0]),
				      .fmt = R->o->format, .out = R->out, .json = &R->json,
				      .key = "ranks", .text_order = none, .csv_order = none };

		xp_table_begin(&t, NULL);  /* json's "ranks": [], nothing in text and csv */
		xp_table_end(&t, 0, 0);
		return 0;
	}
	if ((rc = per_rank(R, rows)) < 0 || !*rows)
		return rc;
	if ((rc = xp_host_colls_load(R->db, &H)) < 0)
		return rc;
	if ((rc = xp_rank_host_section(R, &H)) >= 0)
		rc = spread(R, &H);
	xp_host_colls_free(&H);
	return rc;
}

/* Where the view's tables land in json (report/decl.h). */
const struct xp_decl xp_decl_rank[] = {
	XP_DECL("rank", "ranks[]", rank_cols),
	XP_DECL("rank", "spread[]", spread_cols),
	{ 0 },
};

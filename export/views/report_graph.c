/* report_graph.c - `xpcorr report --by graph`: one row per graph exec that
 * was replayed, named for where its graph was captured, with the replays'
 * GPU span (first node start to last node end: total, avg, med, min, max),
 * the node count, the capture's duration and the replay call site; under
 * each, its nodes with the line that put each into the graph.
 *
 * The links come from the graph events (xp_graph_events, runfmt_gpu.h):
 * a replayed kernel's graphId is its exec, whose EXEC_CREATED names the
 * captured graph; the graph's GRAPH_CREATED carries the correlation id of
 * the call that began the capture (its launch record: the capture site);
 * the kernel's graphNodeId is a node cloned at instantiation, whose
 * NODE_CLONED names the captured node, whose NODE_CREATED carries the
 * correlation id of the captured launch (its stack: the node's site). Runs
 * without graph events get the exec's rows with "capture not recorded".
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "src/array.h"
#include "export/names/elidename.h"
#include "src/gtid.h"
#include "export/names/launchsite.h"
#include "export/report/report_priv.h"
#include "export/report/decl.h"
#include "export/report/table.h"
#include "db/stats.h"
#include "src/satmath.h"

struct replay {
	int64_t span;               /* last node end - first node start */
	int64_t stack;              /* the replay call's launch stack, -1 none */
};

struct exec_row {
	int64_t pid, exec;          /* kernels' globalPid (as stored) and graphId */
	int64_t graph;              /* the captured graph, -1 unknown */
	int64_t capture_stack;      /* stack of the call that began the capture, -1 */
	int64_t capture_ns;         /* begin capture to end capture, -1 unknown */
	int64_t nodes;              /* captured nodes, or distinct node ids replayed */
	int64_t total, min, max;
	struct xp_stats st;
	struct replay *r;
	size_t n, cap;
	int64_t replay_stack;       /* the most common replay call stack */
};

struct graphs {
	struct rep *R;
	struct xp_sites *sites;     /* a node's site: the innermost line */
	struct xp_sites *capture;   /* a capture's: the program's own line */
	struct exec_row *e;
	size_t n, cap;
	int64_t all;                /* GPU span of every replay */
};

static void graphs_free(struct graphs *G)
{
	for (size_t i = 0; i < G->n; i++)
		free(G->e[i].r);
	free(G->e);
	xp_sites_free(G->sites);
	xp_sites_free(G->capture);
}

static int64_t one_int(struct rep *R, const char *sql, const int64_t *args, int nargs, int64_t dflt)
{
	sqlite3_stmt *s;
	int64_t v = dflt;

	if (sqlite3_prepare_v2(R->db, sql, -1, &s, NULL) != SQLITE_OK)
		return dflt;        /* a database without graph events: no link */
	for (int i = 0; i < nargs; i++)
		sqlite3_bind_int64(s, i + 1, args[i]);
	if (sqlite3_step(s) == SQLITE_ROW && sqlite3_column_type(s, 0) != SQLITE_NULL)
		v = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	return v;
}

/* The replays: one per (process, exec, correlation id of the launch). */
static int collect_replays(struct graphs *G)
{
	struct rep *R = G->R;
	sqlite3_stmt *s;
	char sql[1024], f[256];
	int rc = 0, step;

	xp_rep_filter(R->o, "k.globalPid", "k.start", f, sizeof(f));
	snprintf(sql, sizeof(sql), "SELECT k.globalPid, k.graphId, max(k.end) - min(k.start),"
		 " ifnull(max(a.stack_id), -1) FROM CUPTI_ACTIVITY_KIND_KERNEL k"
		 " LEFT JOIN xp_attribution a ON a.gpu_table = 'KERNEL' AND a.gpu_rowid = k.rowid"
		 " WHERE k.graphId > 0 AND %s GROUP BY k.globalPid, k.graphId, k.correlationId"
		 " ORDER BY 1, 2", f);
	if (xp_rep_prepare(R, sql, &s) < 0)
		return -EIO;
	while (rc == 0 && (step = sqlite3_step(s)) == SQLITE_ROW) {
		int64_t pid = sqlite3_column_int64(s, 0), exec = sqlite3_column_int64(s, 1);
		struct exec_row *e = G->n ? &G->e[G->n - 1] : NULL;

		if (!e || e->pid != pid || e->exec != exec) {
			if ((rc = xp_array__reserve((void **)&G->e, &G->cap, G->n + 1, sizeof(*G->e), 16)))
				break;
			e = &G->e[G->n++];
			*e = (struct exec_row){ .pid = pid, .exec = exec, .graph = -1,
						.capture_stack = -1, .capture_ns = -1, .min = INT64_MAX };
		}
		if ((rc = xp_array__reserve((void **)&e->r, &e->cap, e->n + 1, sizeof(*e->r), 16)))
			break;
		e->r[e->n++] = (struct replay){ .span = sqlite3_column_int64(s, 2),
						.stack = sqlite3_column_int64(s, 3) };
	}
	if (rc == 0 && step != SQLITE_DONE)
		rc = -EIO;
	sqlite3_finalize(s);
	return rc;
}

static int cmp_span(const void *a, const void *b)
{
	int64_t x = ((const struct replay *)a)->span, y = ((const struct replay *)b)->span;

	return (x > y) - (x < y);
}

static int cmp_stack(const void *a, const void *b)
{
	int64_t x = ((const struct replay *)a)->stack, y = ((const struct replay *)b)->stack;

	return (x > y) - (x < y);
}

/* Statistics of the spans and the most common replay call stack. */
static void summarize(struct exec_row *e)
{
	size_t best = 0, run = 0;

	qsort(e->r, e->n, sizeof(*e->r), cmp_stack);
	e->replay_stack = -1;
	for (size_t i = 0; i < e->n; i++) {
		run = i && e->r[i].stack == e->r[i - 1].stack ? run + 1 : 1;
		if (run > best) {
			best = run;
			e->replay_stack = e->r[i].stack;
		}
	}
	qsort(e->r, e->n, sizeof(*e->r), cmp_span);
	for (size_t i = 0; i < e->n; i++)
		e->total = xp_sat_add(e->total, e->r[i].span);
	e->min = e->r[0].span;
	e->max = e->r[e->n - 1].span;
	xp_stats__of_sorted(&e->r[0].span, e->n, sizeof(e->r[0]), e->total, &e->st);
}

/* Where the exec's graph was captured, how long it took, how many nodes. */
static void link_capture(struct graphs *G, struct exec_row *e)
{
	struct rep *R = G->R;
	int64_t pid = xp_gtid_pid(e->pid), corr, a[3];

	a[0] = e->exec;
	a[1] = pid;
	e->graph = one_int(R, "SELECT graphId FROM xp_graph_events WHERE event = 7 AND execId = ?"
			   " AND " XP_SQL_GTID_PID("globalTid") " = ? ORDER BY ts LIMIT 1", a, 2, -1);
	if (e->graph < 0) {
		e->nodes = one_int(R, "SELECT count(DISTINCT graphNodeId) FROM CUPTI_ACTIVITY_KIND_KERNEL"
				   " WHERE graphId = ? AND globalPid = ?", (int64_t[]){ e->exec, e->pid },
				   2, 0);
		return;
	}
	a[0] = e->graph;
	e->nodes = one_int(R, "SELECT count(*) FROM xp_graph_events WHERE event = 4 AND graphId = ?"
			   " AND " XP_SQL_GTID_PID("globalTid") " = ?", a, 2, 0);
	/* the graph is made inside the call that began the capture */
	corr = one_int(R, "SELECT correlationId FROM xp_graph_events WHERE event = 1 AND graphId = ?"
		       " AND " XP_SQL_GTID_PID("globalTid") " = ? ORDER BY ts LIMIT 1", a, 2, 0);
	if (corr <= 0)
		return;
	a[0] = pid;
	a[1] = corr;
	e->capture_stack = one_int(R, "SELECT stack_id FROM xp_launches WHERE pid = ?"
				   " AND correlation_id = ? LIMIT 1", a, 2, -1);
	a[0] = corr;
	a[1] = pid;
	e->capture_ns = one_int(R, "SELECT (SELECT min(x.end) FROM CUPTI_ACTIVITY_KIND_RUNTIME x"
				" JOIN StringIds n ON n.id = x.nameId WHERE x.globalTid = b.globalTid"
				" AND x.start >= b.start AND n.value LIKE '%EndCapture%') - b.start"
				" FROM CUPTI_ACTIVITY_KIND_RUNTIME b WHERE b.correlationId = ?"
				" AND " XP_SQL_GTID_PID("b.globalTid") " = ? LIMIT 1", a, 2, -1);
}

static const char *site_of(struct graphs *G, int64_t stack, const char *none)
{
	const char *s = stack > 0 ? xp_sites_get(G->sites, stack) : NULL;

	return s ? s : none;
}

/* The replay call, named by the program's own line (not torch's replay()). */
static const char *replay_site(struct graphs *G, const struct exec_row *e)
{
	const char *s = e->replay_stack > 0 ? xp_sites_get(G->capture, e->replay_stack) : NULL;

	return s ? s : "(no launch stack)";
}

static int cmp_exec(const void *pa, const void *pb, void *ctx)
{
	const struct exec_row *a = pa, *b = pb;

	(void)ctx;
	if (a->total != b->total)
		return a->total < b->total ? 1 : -1;
	return (a->exec > b->exec) - (a->exec < b->exec);
}

/* An exec's nodes (json's node_list; text: lines under the exec, its
 * kernel and the line that captured it). */
enum { N_ID, N_KERNEL, N_NS, N_COUNT, N_SITE, N_TEXT };
static const struct xp_col node_cols[] = {
	[N_ID] = { .json = "node_id", .kind = XP_COL_INT, .json_only = 1 },
	[N_KERNEL] = { .json = "kernel", .kind = XP_COL_TEXT, .json_only = 1 },
	[N_NS] = { .json = "total_ns", .kind = XP_COL_INT, .json_only = 1 },
	[N_COUNT] = { .json = "instances", .kind = XP_COL_INT, .json_only = 1 },
	[N_SITE] = { .json = "capture_site", .kind = XP_COL_TEXT, .json_only = 1 },
	[N_TEXT] = { .kind = XP_COL_TEXT, .text_only = 1 },
};

/* The exec's nodes: kernel, time over the replays, and the line that
 * captured each (the NODE_CLONED -> NODE_CREATED -> launch record chain);
 * text: the first most. */
static int print_nodes(struct graphs *G, const struct xp_table *et, const struct exec_row *e,
		       unsigned most)
{
	struct rep *R = G->R;
	struct xp_table t = { .cols = node_cols, .n = sizeof(node_cols) / sizeof(node_cols[0]),
			      .fmt = et->fmt, .out = et->out, .json = et->json, .width = et->width,
			      .key = "node_list", .lead = "            ", .no_split = 1, .no_heads = 1,
			      .text_max = 1400, .capped = 1, .cap = most, .csv_nested = 1 };
	sqlite3_stmt *s;
	unsigned shown = 0;
	int step;

	if (sqlite3_prepare_v2(R->db, "SELECT k.graphNodeId, n.value, sum(k.end - k.start), count(*),"
			       " (SELECT l.stack_id FROM xp_graph_events c JOIN xp_graph_events m"
			       "  ON m.event = 4 AND m.nodeId = c.origNodeId JOIN xp_launches l"
			       "  ON l.pid = " XP_SQL_GTID_PID("m.globalTid") " AND l.correlation_id ="
			       "  m.correlationId WHERE c.event = 5 AND c.nodeId = k.graphNodeId LIMIT 1)"
			       " FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds n ON n.id = k.demangledName"
			       " WHERE k.graphId = ? AND k.globalPid = ? GROUP BY k.graphNodeId"
			       " ORDER BY 3 DESC, 1", -1, &s, NULL) != SQLITE_OK)
		return 0;           /* no graph events table: no node lines */
	sqlite3_bind_int64(s, 1, e->exec);
	sqlite3_bind_int64(s, 2, e->pid);
	xp_table_begin(&t, NULL);
	while ((step = sqlite3_step(s)) == SQLITE_ROW && xp_table_wants(&t, shown)) {
		const char *name = (const char *)sqlite3_column_text(s, 1);
		int64_t ns = sqlite3_column_int64(s, 2), count = sqlite3_column_int64(s, 3);
		int64_t stack = sqlite3_column_type(s, 4) == SQLITE_NULL ? -1 : sqlite3_column_int64(s, 4);
		const char *site = site_of(G, stack, "(capture not recorded)");
		char line[1400], brief[512];

		shown++;
		xp_elide_name(name ? name : "?", brief, sizeof(brief));
		/* CUPTI numbers a node (graph << 32 | index): the index reads best */
		snprintf(line, sizeof(line), "%5.1f%%  node %lld  %s: %s",
			 e->total ? 100.0 * (double)ns / (double)e->total : 0.0,
			 (long long)(sqlite3_column_int64(s, 0) & 0xffffffff), site, brief);
		xp_table_row(&t, (struct xp_cell[]){ { .i = sqlite3_column_int64(s, 0) }, { .s = name },
						     { .i = ns }, { .i = count }, { .s = site },
						     { .s = line } });
	}
	sqlite3_finalize(s);
	xp_table_end(&t, 0, 0);
	return step == SQLITE_ROW || step == SQLITE_DONE ? 0 : -EIO;
}

/* One row per exec: nsys' columns, then where it was captured and
 * replayed (text: lines under it; json: its nodes too). */
enum { E_PID, E_EXEC, E_GRAPH_ID, E_CAPTURE_SITE, E_CAPTURE_NS, E_NODES, E_REPLAYS, E_PCT,
       E_TOTAL, E_AVG, E_MED, E_MIN, E_MAX, E_REPLAY_SITE, E_GRAPH, E_CAPTURE_TEXT, E_N };
static const struct xp_col exec_cols[E_N] = {
	[E_PID] = { .json = "pid", .kind = XP_COL_INT },
	[E_EXEC] = { .head = "Exec", .json = "exec_id", .kind = XP_COL_INT, .rule = 4 },
	[E_GRAPH_ID] = { .json = "graph_id", .kind = XP_COL_INT },
	[E_CAPTURE_SITE] = { .head = "Capture Site", .json = "capture_site", .kind = XP_COL_TEXT },
	[E_CAPTURE_NS] = { .head = "Capture Time (ns)", .json = "capture_ns", .kind = XP_COL_INT },
	[E_NODES] = { .head = "Nodes", .json = "nodes", .kind = XP_COL_INT, .width = 5, .rule = 5 },
	[E_REPLAYS] = { .head = "Replays", .json = "replays", .kind = XP_COL_UINT, .width = 7,
			.rule = 7 },
	[E_PCT] = { .head = "Time (%)", .json = "time_pct", .kind = XP_COL_FIXED, .width = 8,
		    .rule = 8, .prec = 1 },
	[E_TOTAL] = { .head = "Total Time (ns)", .json = "total_ns", .kind = XP_COL_INT, .width = 15,
		      .rule = 15 },
	[E_AVG] = { .head = "Avg (ns)", .json = "avg_ns", .kind = XP_COL_FIXED, .width = 12,
		    .rule = 8, .prec = 1 },
	[E_MED] = { .head = "Med (ns)", .json = "med_ns", .kind = XP_COL_FIXED, .width = 12,
		    .rule = 8, .prec = 1 },
	[E_MIN] = { .head = "Min (ns)", .json = "min_ns", .kind = XP_COL_INT, .width = 10, .rule = 8 },
	[E_MAX] = { .head = "Max (ns)", .json = "max_ns", .kind = XP_COL_INT, .width = 10, .rule = 8 },
	[E_REPLAY_SITE] = { .head = "Replay Site", .json = "replay_site", .kind = XP_COL_TEXT },
	[E_GRAPH] = { .head = "Graph", .kind = XP_COL_INT },
	[E_CAPTURE_TEXT] = { .head = "Capture (ns)", .kind = XP_COL_TEXT, .width = 12, .rule = 12 },
};
static const unsigned char exec_text[] = { E_PCT, E_TOTAL, E_REPLAYS, E_AVG, E_MED, E_MIN, E_MAX,
	E_NODES, E_CAPTURE_TEXT, E_EXEC };
static const unsigned char exec_csv[] = { E_PCT, E_TOTAL, E_REPLAYS, E_AVG, E_MED, E_MIN, E_MAX,
	E_NODES, E_CAPTURE_NS, E_GRAPH, E_EXEC, E_CAPTURE_SITE, E_REPLAY_SITE };
static const unsigned char exec_json[] = { E_PID, E_EXEC, E_GRAPH_ID, E_CAPTURE_SITE,
	E_CAPTURE_NS, E_NODES, E_REPLAYS, E_PCT, E_TOTAL, E_AVG, E_MED, E_MIN, E_MAX, E_REPLAY_SITE };

static int print_exec(struct graphs *G, struct xp_table *t, const struct exec_row *e)
{
	const struct xp_report_opts *o = G->R->o;
	double pct = G->all ? 100.0 * (double)e->total / (double)G->all : 0;
	const char *capture = e->graph < 0 ? "(capture not recorded)" :
			      e->capture_stack > 0 ? xp_sites_get(G->capture, e->capture_stack) :
			      "(capture call not recorded)";
	char site[600], capture_ns[24] = "-";
	int rc;

	snprintf(site, sizeof(site), "%s", capture ? capture : "?");
	if (e->capture_ns >= 0)
		snprintf(capture_ns, sizeof(capture_ns), "%lld", (long long)e->capture_ns);
	xp_table_row_open(t, (struct xp_cell[E_N]){
		[E_PID] = { .i = xp_gtid_pid(e->pid) }, [E_EXEC] = { .i = e->exec },
		[E_GRAPH_ID] = { .i = e->graph, .null = e->graph < 0 },
		[E_CAPTURE_SITE] = { .s = site }, [E_CAPTURE_NS] = { .i = e->capture_ns },
		[E_NODES] = { .i = e->nodes }, [E_REPLAYS] = { .u = e->n }, [E_PCT] = { .d = pct },
		[E_TOTAL] = { .i = e->total }, [E_AVG] = { .d = e->st.avg }, [E_MED] = { .d = e->st.med },
		[E_MIN] = { .i = e->min }, [E_MAX] = { .i = e->max },
		[E_REPLAY_SITE] = { .s = replay_site(G, e) }, [E_GRAPH] = { .i = e->graph },
		[E_CAPTURE_TEXT] = { .s = capture_ns },
	});
	if (e->graph >= 0)
		xp_table_text(t, "            captured at %s (graph %lld)", site, (long long)e->graph);
	else
		xp_table_text(t, "            captured at %s", site);
	xp_table_text(t, "            replayed at %s", replay_site(G, e));
	rc = print_nodes(G, t, e, o->stacks ? o->stacks : 0);    /* text: --stacks N; json: all */
	xp_table_row_close(t);
	return rc;
}

int xp_report_graph(struct rep *R, size_t *rows)
{
	struct graphs G = { .R = R };
	const struct xp_report_opts *o = R->o;
	struct xp_table t = { .cols = exec_cols, .n = E_N, .fmt = o->format, .out = R->out,
			      .json = &R->json, .width = o->width, .key = "graphs", .no_split = 1,
			      .text_max = 1400, .more = "graph execs",
			      .text_order = exec_text, .text_n = sizeof(exec_text),
			      .csv_order = exec_csv, .csv_n = sizeof(exec_csv),
			      .json_order = exec_json, .json_n = sizeof(exec_json) };
	size_t shown;
	char title[256];
	int rc;

	*rows = 0;
	if ((rc = xp_sites_new(R->db, &G.sites)) < 0 || (rc = xp_sites_new(R->db, &G.capture)) < 0 ||
	    (rc = collect_replays(&G)) < 0)
		goto out;
	xp_sites_prefer_own(G.capture);
	for (size_t i = 0; i < G.n; i++) {
		summarize(&G.e[i]);
		link_capture(&G, &G.e[i]);
		G.all = xp_sat_add(G.all, G.e[i].total);
	}
	if (G.n)
		qsort_r(G.e, G.n, sizeof(*G.e), cmp_exec, NULL);
	shown = o->top && o->top < G.n ? o->top : G.n;
	snprintf(title, sizeof(title), "** %s:", xp_rep_title(o->by));
	xp_table_begin(&t, title);
	for (size_t i = 0; i < shown && rc == 0; i++)
		rc = print_exec(&G, &t, &G.e[i]);
	xp_table_end(&t, shown, G.n);
	*rows = G.n;
out:
	graphs_free(&G);
	return rc;
}

static int cmp_graph_id(const void *pa, const void *pb, void *ctx)
{
	const struct exec_row *a = pa, *b = pb;

	(void)ctx;
	if (a->graph != b->graph)
		return a->graph < b->graph ? -1 : 1;
	return (a->exec > b->exec) - (a->exec < b->exec);
}

int xp_graph_sites(sqlite3 *db, int (*fn)(void *ctx, const char *key, int64_t ns, uint64_t replays),
		   void *ctx)
{
	struct xp_report_opts o = XP_REPORT_DEFAULTS;
	struct rep R = { .db = db, .o = &o };
	struct graphs G = { .R = &R };
	int rc;

	if ((rc = xp_sites_new(db, &G.sites)) < 0 || (rc = xp_sites_new(db, &G.capture)) < 0 ||
	    (rc = collect_replays(&G)) < 0)
		goto out;
	xp_sites_prefer_own(G.capture);
	for (size_t i = 0; i < G.n; i++) {
		summarize(&G.e[i]);
		link_capture(&G, &G.e[i]);
	}
	/* in capture order, so that the k-th graph of a site is the k-th in both runs */
	if (G.n)
		qsort_r(G.e, G.n, sizeof(*G.e), cmp_graph_id, NULL);
	for (size_t i = 0; i < G.n && rc == 0; i++) {
		const struct exec_row *e = &G.e[i];
		const char *site = e->graph < 0 ? NULL : e->capture_stack > 0 ?
				   xp_sites_get(G.capture, e->capture_stack) : NULL;
		unsigned k = 1, of = 0;
		char key[700];

		for (size_t j = 0; j < G.n; j++) {
			const struct exec_row *f = &G.e[j];
			const char *other = f->graph < 0 ? NULL : f->capture_stack > 0 ?
					    xp_sites_get(G.capture, f->capture_stack) : NULL;

			if ((!site && !other) || (site && other && !strcmp(site, other))) {
				of++;
				k += j < i;
			}
		}
		if (!site)
			snprintf(key, sizeof(key), "graph exec %lld (capture not recorded)",
				 (long long)e->exec);
		else if (of > 1)
			snprintf(key, sizeof(key), "%s [%u of %u]", site, k, of);
		else
			snprintf(key, sizeof(key), "%s", site);
		rc = fn(ctx, key, e->total, e->n);
	}
out:
	graphs_free(&G);
	return rc;
}

/* Where the view's tables land in json (report/decl.h). */
const struct xp_decl xp_decl_graph[] = {
	XP_DECL_ORDER("graph", "graphs[]", exec_cols, exec_json),
	XP_DECL("graph", "graphs[].node_list[]", node_cols),
	{ 0 },
};

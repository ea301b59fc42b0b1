/* view_groups.c - the six views of `xpcorr report` that nsys' tables have:
 * kernel, stack, api, memop, thread, nvtx. Each is a declaration (below,
 * group_views): its SQL query of (name, key, duration) rows, its
 * precomputed groups in xp_report_groups if any, its columns (table.h) and
 * how its name column reads; report.c collects and sorts the groups.
 *
 *   xp_rep_group_query(R, sql, sizeof(sql));    // the view's query, -ENOENT if none
 *   xp_rep_group_table(R, shown);               // the rows in R's format
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "db/db_schema.h"
#include "db/launch.h"
#include "export/names/elidename.h"
#include "export/report/report_priv.h"
#include "export/report/decl.h"
#include "export/report/table.h"
#include "src/gtid.h"

/* The GPU rows of every kind, each with its attribution (or NULLs). */
#define GPU_ROWS XP_GPU_ROWS        /* launch.h: shared with export --weight gpu */

static void q_kernel(struct rep *R, char *sql, size_t len)
{
	const struct xp_report_opts *o = R->o;
	const char *col = o->mangled ? "mangledName" : "demangledName";
	char f[256];

	xp_rep_filter(o, "k.globalPid", "k.start", f, sizeof(f));
	snprintf(sql, len, "SELECT s.value, k.%s, k.end - k.start FROM CUPTI_ACTIVITY_KIND_KERNEL k"
		 " JOIN StringIds s ON s.id = k.%s WHERE %s ORDER BY 2, 3", col, col, f);
}

static void q_stack(struct rep *R, char *sql, size_t len)
{
	const struct xp_report_opts *o = R->o;
	char f[256];

	xp_rep_filter(o, "g.gp", "g.start", f, sizeof(f));
	snprintf(sql, len, "SELECT NULL, ifnull(a.stack_id, -1), g.end - g.start FROM " GPU_ROWS
		 " WHERE %s ORDER BY 2, 3", f);
}

static void q_api(struct rep *R, char *sql, size_t len)
{
	const struct xp_report_opts *o = R->o;
	char f[256];

	xp_rep_filter(o, "r.globalTid", "r.start", f, sizeof(f));
	snprintf(sql, len, "SELECT s.value, r.nameId, r.end - r.start FROM CUPTI_ACTIVITY_KIND_RUNTIME r"
		 " JOIN StringIds s ON s.id = r.nameId WHERE %s ORDER BY 2, 3", f);
}

static void q_memop(struct rep *R, char *sql, size_t len)
{
	const struct xp_report_opts *o = R->o;
	char f[256], f2[256];
	int peer;

	peer = xp_db_has_column(R->db, "CUPTI_ACTIVITY_KIND_MEMCPY", "srcDeviceId");
	xp_rep_filter(o, "m.globalPid", "m.start", f, sizeof(f));
	xp_rep_filter(o, "globalPid", "start", f2, sizeof(f2));
	/* copies between GPUs are grouped by their two devices: "[CUDA memcpy
	 * Peer-to-Peer 0 -> 1]"; the group key keeps each pair apart */
	snprintf(sql, len, "SELECT '[CUDA memcpy ' || ifnull(e.label, m.copyKind) || %s ']',"
		 " m.copyKind + %s, m.end - m.start FROM CUPTI_ACTIVITY_KIND_MEMCPY m"
		 " LEFT JOIN ENUM_CUDA_MEMCPY_OPER e ON e.id = m.copyKind WHERE %s UNION ALL"
		 " SELECT '[CUDA memset]', 1000, end - start FROM CUPTI_ACTIVITY_KIND_MEMSET"
		 " WHERE %s ORDER BY 2, 3", peer ? "ifnull(' ' || m.srcDeviceId || ' -> ' ||"
		 " m.dstDeviceId, '') ||" : "", peer ? "ifnull((m.srcDeviceId * 256 + m.dstDeviceId"
		 " + 1) * 65536, 0)" : "0", f, f2);
}

static void q_thread(struct rep *R, char *sql, size_t len)
{
	const struct xp_report_opts *o = R->o;
	char f[256];

	xp_rep_filter(o, "g.gp", "g.start", f, sizeof(f));
	/* the thread's name where the run has it: "pt_autograd_0 754/785"; a
	 * rank of a distributed job names its process: "rank 1: python3
	 * 754/785"; in a merged job without ranks, its host: "node-b: ..." */
	snprintf(sql, len, "SELECT CASE WHEN r.globalTid IS NULL THEN '(no API call)' ELSE"
		 " %s%sifnull(tname.value || ' ', '') || "
		 XP_SQL_PID_LOCAL(XP_SQL_GTID_PID("r.globalTid")) " || '/' || "
		 XP_SQL_GTID_TID("r.globalTid") " END, ifnull(r.globalTid, -1),"
		 " g.end - g.start FROM " GPU_ROWS " LEFT JOIN CUPTI_ACTIVITY_KIND_RUNTIME r"
		 " ON r.rowid = a.api_rowid LEFT JOIN (SELECT globalTid, min(nameId) AS nameId FROM"
		 " ThreadNames GROUP BY globalTid) tn ON tn.globalTid = r.globalTid"
		 " LEFT JOIN StringIds tname ON tname.id = tn.nameId AND tname.value != ''"
		 " WHERE %s ORDER BY 2, 3",
		 xp_db_has_table(R->db, "xp_ranks") ? "ifnull((SELECT 'rank ' || k.rank || ': ' FROM"
		 " xp_ranks k WHERE k.pid = " XP_SQL_GTID_PID("r.globalTid") " LIMIT 1), '') || " : "",
		 xp_db_job_runs(R->db) > 1 ? "CASE WHEN (SELECT count(*) FROM xp_ranks k WHERE"
		 " k.pid = " XP_SQL_GTID_PID("r.globalTid") ") THEN '' ELSE ifnull((SELECT j.host || ': '"
		 " FROM xp_job_runs j WHERE j.run = " XP_SQL_GTID_PID("r.globalTid") " >> 22), '')"
		 " END || " : "", f);
}

static void q_nvtx(struct rep *R, char *sql, size_t len)
{
	const struct xp_report_opts *o = R->o;
	char f[256];

	/* a GPU row counts in every start/end range open on the calling
	 * thread when its API call began (nested ranges each count it) */
	xp_rep_filter(o, "g.gp", "g.start", f, sizeof(f));
	snprintf(sql, len, "SELECT s.value, n.textId, g.end - g.start FROM " GPU_ROWS
		 " JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON r.rowid = a.api_rowid"
		 " JOIN NVTX_EVENTS n ON n.globalTid = r.globalTid AND n.eventType = 60"
		 " AND n.start <= r.start AND n.end >= r.start"
		 " JOIN StringIds s ON s.id = n.textId WHERE %s ORDER BY 2, 3", f);
}

/* The kernel's launching stacks as a column of its row (table.h), written
 * per format. */
static int stacks_text(struct xp_table *t, const struct xp_cell *c)
{
	return xp_rep_kernel_stacks_text(t->ctx, c->p, 12);
}

static int stacks_csv(struct xp_table *t, const struct xp_cell *c)
{
	return xp_rep_kernel_stacks_csv(t->ctx, c->p);
}

static int stacks_json(struct xp_table *t, const struct xp_cell *c)
{
	return xp_rep_kernel_stacks_json(t->ctx, c->p);
}

/* nsys' columns, then the view's name; --by kernel adds the stacks, --by
 * stack the stack's id for scripts. */
#define GROUP_COLS \
	{ .head = "Time (%)", .json = "time_pct", .kind = XP_COL_FIXED, .width = 8, .rule = 8, .prec = 1 }, \
	{ .head = "Total Time (ns)", .json = "total_ns", .kind = XP_COL_INT, .width = 15, .rule = 15 }, \
	{ .head = "Instances", .json = "instances", .kind = XP_COL_UINT, .width = 9, .rule = 9 }, \
	{ .head = "Avg (ns)", .json = "avg_ns", .kind = XP_COL_FIXED, .width = 12, .rule = 8, .prec = 1 }, \
	{ .head = "Med (ns)", .json = "med_ns", .kind = XP_COL_FIXED, .width = 12, .rule = 8, .prec = 1 }, \
	{ .head = "Min (ns)", .json = "min_ns", .kind = XP_COL_INT, .width = 10, .rule = 8 }, \
	{ .head = "Max (ns)", .json = "max_ns", .kind = XP_COL_INT, .width = 10, .rule = 8 }, \
	{ .head = "StdDev (ns)", .json = "stddev_ns", .kind = XP_COL_FIXED, .width = 12, .rule = 11, .prec = 1 }, \
	{ .head = "Name", .json = "name", .kind = XP_COL_TEXT, .width = 0, .rule = 4 }

static const struct xp_col group_cols[] = { GROUP_COLS };
static const struct xp_col kernel_cols[] = {
	GROUP_COLS, { .head = "Launching CPU Stacks", .json = "stacks", .kind = XP_COL_CALL,
			.text_call = stacks_text, .csv_call = stacks_csv,
			.json_call = stacks_json },
};
static const struct xp_col stack_cols[] = {
	GROUP_COLS, { .head = "Stack Id", .json = "stack_id", .kind = XP_COL_INT,
			.json_only = 1 },
};

/* --by kernel: a C++ kernel's name short in text (elidename.h). */
static const char *kernel_name(struct rep *R, struct group *g, char *buf, size_t len)
{
	if (!xp_rep_short_names(R->o))
		return g->name;
	xp_elide_name(g->name, buf, len);
	return buf;
}

/* --by stack: the stack in a line (report_stack.c). */
static const char *stack_name(struct rep *R, struct group *g, char *buf, size_t len)
{
	if (xp_rep_format_stack(R, g->key, buf, len) < 0)
		return NULL;
	if (g->key < 0)
		snprintf(buf, len, "(unattributed)");
	return buf;
}

struct group_view {
	const char *groups;         /* its precomputed groups in xp_report_groups, or NULL */
	void (*query)(struct rep *R, char *sql, size_t len);
	const struct xp_col *cols;
	size_t ncols;
	/* the name column's text (NULL: the group's name as read); NULL on error */
	const char *(*name)(struct rep *R, struct group *g, char *buf, size_t len);
};

#define COLS(c) c, sizeof(c) / sizeof(c[0])

static const struct group_view group_views[XP_BY_COUNT] = {
	[XP_BY_KERNEL] = { "kernel", q_kernel, COLS(kernel_cols), kernel_name },
	[XP_BY_STACK] = { "stack", q_stack, COLS(stack_cols), stack_name },
	[XP_BY_API] = { "api", q_api, COLS(group_cols), NULL },
	[XP_BY_MEMOP] = { NULL, q_memop, COLS(group_cols), NULL },
	[XP_BY_THREAD] = { NULL, q_thread, COLS(group_cols), NULL },
	[XP_BY_NVTX] = { NULL, q_nvtx, COLS(group_cols), NULL },
};

const char *xp_rep_groups_view(const struct xp_report_opts *o)
{
	const char *v = group_views[o->by].groups;

	/* the correlation groups kernels under both their names */
	return v && o->mangled && !strcmp(v, "kernel") ? "kernel_mangled" : v;
}

int xp_rep_group_query(struct rep *R, char *sql, size_t len)
{
	if (!group_views[R->o->by].query)
		return -ENOENT;
	group_views[R->o->by].query(R, sql, len);
	return 0;
}

/* One group's row: nsys' nine cells, then the view's own (table.h). */
static int print_row(struct rep *R, struct xp_table *t, struct group *g)
{
	const struct group_view *v = &group_views[R->o->by];
	double pct = R->all_total ? 100.0 * (double)g->total / (double)R->all_total : 0;
	char name[1024];
	struct xp_cell c[10] = {
		{ .d = pct }, { .i = g->total }, { .u = g->n }, { .d = g->avg }, { .d = g->med },
		{ .i = g->min }, { .i = g->max }, { .d = g->sd }, { .s = g->name },
	};

	if (t->n > 9)       /* a kernel's stacks, a stack's id */
		c[9] = t->cols[9].kind == XP_COL_CALL ?
			(struct xp_cell){ .p = g, .absent = !R->o->stacks } :
			(struct xp_cell){ .i = g->key, .absent = g->key < 0 };
	if (v->name && g->name && !(c[8].s = v->name(R, g, name, sizeof(name))))
		return -EIO;
	return xp_table_row(t, c);
}

int xp_rep_group_table(struct rep *R, size_t shown)
{
	const struct xp_report_opts *o = R->o;
	const struct group_view *v = &group_views[o->by];
	struct xp_table t = { .cols = v->cols, .n = v->ncols, .fmt = o->format, .out = R->out,
			      .json = &R->json, .width = o->width, .ctx = R };
	char title[256];
	int rc = 0;

	snprintf(title, sizeof(title), "** %s:", xp_rep_title(o->by));
	xp_table_begin(&t, title);
	for (size_t i = 0; i < shown && rc == 0; i++)
		rc = print_row(R, &t, &R->g[i]);
	xp_table_end(&t, shown, R->n);
	return rc;
}

/* Where the views' tables land in json (report/decl.h). */
const struct xp_decl xp_decl_groups[] = {
	XP_DECL("kernel", "rows[]", kernel_cols),
	XP_DECL("stack", "rows[]", stack_cols),
	XP_DECL("api", "rows[]", group_cols),
	XP_DECL("memop", "rows[]", group_cols),
	XP_DECL("thread", "rows[]", group_cols),
	XP_DECL("nvtx", "rows[]", group_cols),
	{ 0 },
};

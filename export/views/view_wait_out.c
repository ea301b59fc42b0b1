/* view_wait_out.c - --by wait's totals in text, csv or json (view_wait.c
 * computes them): per waiting rank, late rank, the rank whose cause it is
 * (the late one, or a rank it waited for in turn), the cause and where;
 * where more than one rank waited, first the same over all waiting ranks
 * (the job owner's question: who made the others wait, doing what). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "export/idle/idle_cause.h"
#include "export/report/report_priv.h"
#include "export/report/decl.h"
#include "export/report/table.h"
#include "export/analysis/wait_blame.h"
#include "src/satmath.h"

static const char *const own_label[] = {
	[XP_TL_COMPUTE] = "GPU compute",
	[XP_TL_COMM] = "GPU communication", [XP_TL_MEM] = "GPU memory",
	[XP_WAIT_RANK - XP_WAIT_GPU] = "waiting for rank",
	[XP_WAIT_CYCLE - XP_WAIT_GPU] = "waiting, a cycle", [XP_WAIT_DEPTH - XP_WAIT_GPU] = "waiting, too deep",
	[XP_WAIT_CLOSE - XP_WAIT_GPU] = "too close to call", [XP_WAIT_NONE - XP_WAIT_GPU] = "no cause",
};
static const char *const own_key[] = {
	[XP_TL_COMPUTE] = "gpu_compute", [XP_TL_COMM] = "gpu_communication", [XP_TL_MEM] = "gpu_memory",
	[XP_WAIT_RANK - XP_WAIT_GPU] = "rank", [XP_WAIT_CYCLE - XP_WAIT_GPU] = "rank_cycle",
	[XP_WAIT_DEPTH - XP_WAIT_GPU] = "rank_too_deep", [XP_WAIT_CLOSE - XP_WAIT_GPU] = "too_close",
	[XP_WAIT_NONE - XP_WAIT_GPU] = "none",
};

static const char *kind_text(int kind, int key)
{
	const char *t = xp_idle_kind(kind, key);

	if (t)
		return t;
	kind -= XP_WAIT_GPU;
	if (kind < 0 || kind > XP_WAIT_NONE - XP_WAIT_GPU || !(key ? own_key : own_label)[kind])
		return "?";
	return (key ? own_key : own_label)[kind];
}

static int cmp_total(const void *pa, const void *pb)
{
	const struct xp_wait_total *a = pa, *b = pb;

	if (a->ns != b->ns)
		return a->ns < b->ns ? 1 : -1;
	if (a->waiter != b->waiter)
		return a->waiter < b->waiter ? -1 : 1;
	if (a->late != b->late)
		return a->late < b->late ? -1 : 1;
	if (a->kind != b->kind)
		return a->kind - b->kind;
	return strcmp(a->where, b->where);
}

#define ALL SIZE_MAX                 /* a total over every waiting rank */

/* The view's sheet: the totals over all waiting ranks, then by waiting
 * rank (csv: a Section column; json: two arrays; text: two tables, the
 * waiting rank and the cause's rank in words). */
enum { W_SECTION, W_WAITING, W_LATE, W_CAUSE_RANK, W_CAUSE, W_WHERE, W_NS, W_SHARE, W_WAITS,
       W_SHARE_TEXT, W_WAITING_TEXT, W_CAUSE_OF, W_CAUSE_TEXT, W_N };
static const struct xp_col cols[W_N] = {
	[W_SECTION] = { .head = "Section", .kind = XP_COL_TEXT },
	[W_WAITING] = { .head = "Waiting Rank", .json = "waiting_rank", .kind = XP_COL_INT },
	[W_LATE] = { .head = "Late", .csv = "Late Rank", .json = "late_rank", .kind = XP_COL_INT,
		     .width = 4, .rule = 4 },
	[W_CAUSE_RANK] = { .head = "Cause Rank", .json = "cause_rank", .kind = XP_COL_INT },
	[W_CAUSE] = { .head = "Cause", .json = "cause", .kind = XP_COL_TEXT },
	[W_WHERE] = { .head = "Where", .json = "where", .kind = XP_COL_TEXT, .rule = 5 },
	[W_NS] = { .head = "Wait (ns)", .json = "ns", .kind = XP_COL_INT, .width = 14, .rule = 14 },
	[W_SHARE] = { .head = "Share of Wait (%)", .json = "share_percent", .kind = XP_COL_FIXED,
		      .prec = 2 },
	[W_WAITS] = { .head = "Waits", .json = "waits", .kind = XP_COL_UINT, .width = 6, .rule = 6 },
	[W_SHARE_TEXT] = { .head = "Wait (%)", .kind = XP_COL_FIXED, .prec = 1, .width = 8,
			   .rule = 8 },
	[W_WAITING_TEXT] = { .head = "Waiting", .kind = XP_COL_TEXT, .width = 7, .rule = 7 },
	[W_CAUSE_OF] = { .head = "Cause of", .kind = XP_COL_TEXT, .width = -10, .rule = 10 },
	[W_CAUSE_TEXT] = { .head = "Cause", .kind = XP_COL_TEXT, .width = -17, .rule = 5 },
};
static const unsigned char text_cols[] = { W_SHARE_TEXT, W_NS, W_WAITS, W_WAITING_TEXT, W_LATE,
	W_CAUSE_OF, W_CAUSE_TEXT, W_WHERE };
static const unsigned char csv_cols[] = { W_SECTION, W_WAITING, W_LATE, W_CAUSE_RANK, W_CAUSE,
	W_WHERE, W_NS, W_SHARE, W_WAITS };
static const unsigned char json_cols[] = { W_WAITING, W_LATE, W_CAUSE_RANK, W_CAUSE, W_WHERE,
	W_NS, W_SHARE, W_WAITS };
/* over all waiting ranks: no waiting rank */
static const unsigned char json_all[] = { W_LATE, W_CAUSE_RANK, W_CAUSE, W_WHERE, W_NS, W_SHARE,
	W_WAITS };
static const struct xp_col total_cols[] = {
	{ .json = "total_wait_ns", .kind = XP_COL_INT, .json_only = 1 },
	{ .json = "waits", .kind = XP_COL_UINT, .json_only = 1 },
	{ .json = "clock_error_ns", .kind = XP_COL_INT, .json_only = 1 },
};

static void row(struct xp_table *tb, const struct xp_wait_total *v, const int64_t *rank,
		double share)
{
	long long w = v->waiter == ALL ? -1 : (long long)rank[v->waiter], l = (long long)rank[v->late];
	long long c = (long long)rank[v->culprit];
	char via[32], who[24] = "all";

	snprintf(via, sizeof(via), v->culprit == v->late ? "rank %lld" : "> rank %lld", c);
	if (v->waiter != ALL)
		snprintf(who, sizeof(who), "%lld", w);
	xp_table_row(tb, (struct xp_cell[W_N]){
		[W_SECTION] = { .s = v->waiter == ALL ? "all" : "rank" },
		[W_WAITING] = { .i = w, .absent = v->waiter == ALL }, [W_LATE] = { .i = l },
		[W_CAUSE_RANK] = { .i = c }, [W_CAUSE] = { .s = kind_text(v->kind, 1) },
		[W_WHERE] = { .s = v->where }, [W_NS] = { .i = v->ns }, [W_SHARE] = { .d = share },
		[W_WAITS] = { .u = v->waits }, [W_SHARE_TEXT] = { .d = share },
		[W_WAITING_TEXT] = { .s = who }, [W_CAUSE_OF] = { .s = via },
		[W_CAUSE_TEXT] = { .s = kind_text(v->kind, 0) } });
}

static int cmp_place(const void *pa, const void *pb)
{
	const struct xp_wait_total *a = pa, *b = pb;

	if (a->late != b->late)
		return a->late < b->late ? -1 : 1;
	if (a->culprit != b->culprit)
		return a->culprit < b->culprit ? -1 : 1;
	if (a->kind != b->kind)
		return a->kind - b->kind;
	return strcmp(a->where, b->where);
}

/* The totals over every waiting rank, most first, into *out (malloc'd):
 * their number, 0 when out of memory. A wait has one waiting rank: the
 * counts add up. */
static size_t over_all(const struct xp_wait_table *t, struct xp_wait_total **out)
{
	struct xp_wait_total *v = t->n ? malloc(t->n * sizeof(*v)) : NULL;
	size_t n = 0;

	if (!(*out = v))
		return 0;
	memcpy(v, t->v, t->n * sizeof(*v));
	qsort(v, t->n, sizeof(*v), cmp_place);
	for (size_t i = 0; i < t->n; i++) {
		if (n && !cmp_place(&v[n - 1], &v[i])) {
			v[n - 1].ns = xp_sat_add(v[n - 1].ns, v[i].ns);
			v[n - 1].waits += v[i].waits;
			continue;
		}
		v[n] = v[i];
		v[n++].waiter = ALL;
	}
	qsort(v, n, sizeof(*v), cmp_total);
	return n;
}

static void table(struct rep *R, int all, int csv_continues, struct xp_wait_total *v, size_t n,
		  const int64_t *rank, int64_t total)
{
	size_t shown = R->o->top && R->o->top < n ? R->o->top : n;
	struct xp_table t = { .cols = cols, .n = W_N, .fmt = R->o->format, .out = R->out,
			      .json = &R->json, .width = R->o->width, .lead = "  ", .more_lead = "  ",
			      .more_cut = 1,
			      .no_split = 1, .text_max = 1024, .text_lazy = 1, .tight = 1,
			      .key = all ? "blame_all_waiting" : "blame", .csv_continues = csv_continues,
			      .text_order = text_cols, .text_n = sizeof(text_cols),
			      .csv_order = csv_cols, .csv_n = sizeof(csv_cols),
			      .json_order = all ? json_all : json_cols,
			      .json_n = all ? sizeof(json_all) : sizeof(json_cols) };

	xp_table_begin(&t, all ? "\n  All waiting ranks:" : "\n  By waiting rank:");
	for (size_t i = 0; i < shown; i++)
		row(&t, &v[i], rank, total ? 100.0 * (double)v[i].ns / (double)total : 0);
	xp_table_end(&t, shown, n);
}

void xp_wait_print(struct rep *R, struct xp_wait_table *t, const int64_t *rank, int64_t clock_err)
{
	struct xp_table tt = { .cols = total_cols, .n = 3, .fmt = R->o->format, .out = R->out,
			       .json = &R->json, .width = R->o->width };
	struct xp_wait_total *all = NULL;
	size_t nall = 0;
	int several = 0;

	if (t->n)
		qsort(t->v, t->n, sizeof(*t->v), cmp_total);
	for (size_t i = 1; i < t->n && !several; i++)
		several = t->v[i].waiter != t->v[0].waiter;
	xp_table_fields(&tt, (struct xp_cell[]){ { .i = t->total_ns }, { .u = t->nwaits },
						 { .i = clock_err } });
	xp_table_text(&tt, "** %s:", xp_rep_title(R->o->by));
	xp_table_text(&tt, "%s", "");
	xp_table_text(&tt, "  Collective waits: %llu, %lld ns in all; clock alignment error %lld ns",
		      (unsigned long long)t->nwaits, (long long)t->total_ns, (long long)clock_err);
	if (several && (nall = over_all(t, &all)))
		table(R, 1, 0, all, nall, rank, t->total_ns);
	free(all);
	/* csv: the header above the first table; text: nothing of an empty one */
	table(R, 0, nall > 0, t->v, t->n, rank, t->total_ns);
}

/* Where the view's tables land in json (report/decl.h). */
const struct xp_decl xp_decl_wait[] = {
	XP_DECL("wait", "", total_cols),
	XP_DECL_ORDER("wait", "blame[]", cols, json_cols),
	XP_DECL_ORDER("wait", "blame_all_waiting[]", cols, json_all),
	{ 0 },
};

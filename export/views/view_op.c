/* view_op.c - `xpcorr report --by op`: one row per operator, in the manner
 * of torch.profiler's key_averages(): the framework operation a CUDA call
 * was made under (the innermost PyTorch dispatcher frame of its launch
 * stack, "aten::addmm"), else the CUDA call's own name; its calls (as
 * key_averages counts them: one call of an op may make several CUDA calls),
 * its CUDA calls, the host time in them, the GPU time of the work they launched (kernels,
 * copies, sets: key_averages' self CUDA time), GPU records per call, and
 * the user's line that launched most of it. Sorted by GPU time.
 *
 *   xpcorr report --by op --top 20 run/
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/array.h"
#include "export/analysis/callstacks.h"
#include "export/names/launcher.h"
#include "export/names/launchsite.h"
#include "export/report/report_priv.h"
#include "export/report/decl.h"
#include "export/report/table.h"
#include "db/stackwalk.h"
#include "export/analysis/timeline.h"
#include "src/u64map.h"
#include "src/satmath.h"

struct op_row {
	char *name;                 /* "aten::mm" or "cudaMemcpyAsync" */
	uint64_t calls, cuda_calls, gpu_ops; /* calls: of the op */
	int64_t host_ns, gpu_ns;
	const char *top_site;       /* xp_sites' string: the line with most GPU time (calls) */
	int64_t top_ns;
};

/* One (operator, site) pair's weight, to find each operator's top line. */
struct op_site {
	size_t op;
	const char *site;
	int64_t weight;
};

struct op_state {
	struct rep *R;
	struct xp_sites *sites;
	struct xp_stackwalk *walk;  /* the sites' own */
	struct xp_u64map op_of;     /* (stack id, API name id) -> index + 1 into rows */
	struct xp_u64map by_site;   /* (row, site pointer) -> index + 1 into pairs */
	struct op_row *rows;
	size_t n, cap;
	struct op_site *pairs;
	size_t np, pcap;
	struct xp_u64map agg_at;    /* (stack, CUDA function) -> index + 1 into aggs */
	struct xp_u64map op_node;   /* (stack, 0) -> the op frame's stack node + 1 (1: none) */
	struct op_agg *aggs;
	size_t nagg, acap;
};

/* The innermost framework operation on the stack, into op ("" if none).
 * A backward launch's own op lies under its note (ingest/backward.h);
 * above the note are its forward launch's ops, not what it ran: where a
 * database ingested before the own op was kept has none, the row is the
 * node's ("autograd: AddmmBackward0"). */
static void stack_op(struct op_state *S, int64_t id, char *op, size_t len, int64_t *op_node)
{
	struct xp_frame_row fr;
	char node[96];
	int64_t at;

	op[0] = '\0';
	*op_node = 0;
	while (id > 0 && (at = id, xp_stackwalk_next(S->walk, &id, &fr))) {
		if (xp_framework_op(fr.sym, op, len)) {
			*op_node = at;
			break;
		}
		if (xp_backward_note(fr.kind, fr.sym, node, sizeof(node))) {
			snprintf(op, len, "autograd: %s", node);
			break;
		}
	}
	xp_stackwalk_done(S->walk);
}

static int row_named(struct op_state *S, const char *name, size_t *idx)
{
	for (size_t i = 0; i < S->n; i++)
		if (!strcmp(S->rows[i].name, name)) {
			*idx = i;
			return 0;
		}
	if (xp_array__reserve((void **)&S->rows, &S->cap, S->n + 1, sizeof(*S->rows), 32))
		return -ENOMEM;
	memset(&S->rows[S->n], 0, sizeof(*S->rows));
	if (!(S->rows[S->n].name = strdup(name)))
		return -ENOMEM;
	*idx = S->n++;
	return 0;
}

/* The row of a call's (stack, API name): its operator, else the API name. */
static int row_of(struct op_state *S, int64_t stack, int64_t api_name, const char *api, size_t *idx)
{
	char op[160];
	uint64_t *slot;
	int fresh, rc;

	if (xp_u64map_upsert(&S->op_of, (uint64_t)stack, (uint64_t)api_name, &slot, &fresh))
		return -ENOMEM;
	if (!fresh) {
		*idx = (size_t)*slot - 1;
		return 0;
	}
	int64_t op_node;

	stack_op(S, stack, op, sizeof(op), &op_node);
	if ((rc = row_named(S, op[0] ? op : api ? api : "(no CUDA call)", idx)) < 0)
		return rc;
	if ((slot = xp_u64map_find(&S->op_of, (uint64_t)stack, (uint64_t)api_name)))
		*slot = *idx + 1;
	return 0;
}

static int add_site(struct op_state *S, size_t row, int64_t stack, int64_t weight)
{
	const char *site = stack > 0 ? xp_sites_get(S->sites, stack) : "(no launch stack)";
	uint64_t *slot;
	int fresh;

	if (!site)
		return -ENOMEM;
	if (xp_u64map_upsert(&S->by_site, row, (uint64_t)(uintptr_t)site, &slot, &fresh))
		return -ENOMEM;
	if (fresh) {
		if (xp_array__reserve((void **)&S->pairs, &S->pcap, S->np + 1, sizeof(*S->pairs), 64))
			return -ENOMEM;
		S->pairs[S->np] = (struct op_site){ .op = row, .site = site };
		*slot = ++S->np;
	}
	S->pairs[*slot - 1].weight = xp_sat_add(S->pairs[*slot - 1].weight, weight);
	return 0;
}

/* The calls and GPU work of one (stack, CUDA function) pair. */
struct op_agg {
	int64_t stack, name;
	uint64_t calls, cuda_calls, gpu_ops; /* calls: of the op */
	int64_t host_ns, gpu_ns;
};

static struct op_agg *agg_of(struct op_state *S, int64_t stack, int64_t name)
{
	uint64_t *slot;
	int fresh;

	if (xp_u64map_upsert(&S->agg_at, (uint64_t)stack, (uint64_t)name, &slot, &fresh))
		return NULL;
	if (fresh) {
		if (xp_array__reserve((void **)&S->aggs, &S->acap, S->nagg + 1, sizeof(*S->aggs), 64))
			return NULL;
		S->aggs[S->nagg] = (struct op_agg){ .stack = stack, .name = name };
		*slot = ++S->nagg;
	}
	return &S->aggs[*slot - 1];
}

static int add_call(struct op_state *S, int64_t stack, const struct xp_tl_api *a, int new_call)
{
	struct op_agg *g = agg_of(S, stack, a->name);

	if (!g)
		return -ENOMEM;
	g->calls += new_call != 0;
	g->cuda_calls++;
	g->host_ns = xp_sat_add(g->host_ns, xp_sat_sub(a->end, a->start));
	return 0;
}

/* The stack node of the op frame of a stack (0: none), walked once. */
static int op_node_of(struct op_state *S, int64_t stack, int64_t *node)
{
	char op[160];
	uint64_t *slot;
	int fresh;

	*node = 0;
	if (stack <= 0)
		return 0;
	if (xp_u64map_upsert(&S->op_node, (uint64_t)stack, 0, &slot, &fresh))
		return -ENOMEM;
	if (!fresh) {
		*node = (int64_t)*slot - 1;
		return 0;
	}
	stack_op(S, stack, op, sizeof(op), node);
	*xp_u64map_find(&S->op_node, (uint64_t)stack, 0) = (uint64_t)*node + 1;
	return 0;
}

static const struct xp_tl_api *sort_api;    /* for cmp_thread_time */

static int cmp_thread_time(const void *pa, const void *pb)
{
	const struct xp_tl_api *a = &sort_api[*(const size_t *)pa], *b = &sort_api[*(const size_t *)pb];

	if (a->gtid != b->gtid)
		return a->gtid < b->gtid ? -1 : 1;
	return (a->start > b->start) - (a->start < b->start);
}

/* One call of an op makes its CUDA calls one after another on its thread,
 * all under the same frame of the op (one stack node), each from its own
 * place in the op's code: a CUDA call starts a new call of the op when its
 * thread's previous one was under another op frame, or when its stack and
 * CUDA function were seen already in the current call (the op called again
 * from the same line), as torch.profiler's key_averages counts calls. */
struct op_call {
	int64_t gtid, node;
	int64_t stacks[16], names[16];
	size_t n;
};

static int new_op_call(struct op_call *c, const struct xp_tl_api *a, int64_t stack, int64_t node)
{
	int fresh = !node || a->gtid != c->gtid || node != c->node || c->n == 16;

	for (size_t i = 0; !fresh && i < c->n; i++)
		fresh = c->stacks[i] == stack && c->names[i] == a->name;
	if (fresh) {
		c->gtid = a->gtid;
		c->node = node;
		c->n = 0;
	}
	c->stacks[c->n] = stack;
	c->names[c->n++] = a->name;
	return fresh;
}

/* The CUDA calls: their count, the op calls they make and their host time,
 * by (stack, function), each thread's in time order. */
static int gather_calls(struct op_state *S, const struct xp_tl_set *set)
{
	const struct xp_report_opts *o = S->R->o;
	struct op_call call = { .gtid = -1 };
	struct xp_callstacks *c;
	size_t *order;
	int rc;

	if (!(order = malloc((set->napi ? set->napi : 1) * sizeof(*order))))
		return -ENOMEM;
	for (size_t i = 0; i < set->napi; i++)
		order[i] = i;
	sort_api = set->api;
	qsort(order, set->napi, sizeof(*order), cmp_thread_time);
	if ((rc = xp_callstacks_load(S->R->db, &c)) < 0) {
		free(order);
		return rc;
	}
	for (size_t i = 0; i < set->napi && !rc; i++) {
		const struct xp_tl_api *a = &set->api[order[i]];
		int64_t node;
		size_t k;

		if (!xp_tl_selected(a->gtid, o->pid) || a->start < o->since ||
		    (o->until && a->start >= o->until))
			continue;
		k = a->corr >= 0 ? xp_callstacks_find(c, a->gtid, a->corr, 0) : 0;
		if (!k)
			rc = add_call(S, -1, a, 1);
		for (int first = 1; k && !rc; k = xp_callstacks_find(c, a->gtid, a->corr, k), first = 0) {
			int64_t stack = xp_callstacks_stack(c, k);

			if (!(rc = op_node_of(S, stack, &node)))
				rc = add_call(S, stack, a, first && new_op_call(&call, a, stack, node));
		}
	}
	xp_callstacks_free(c);
	free(order);
	return rc;
}

/* The GPU work, by the (stack, function) of the call that launched it. */
static int gather_gpu(struct op_state *S, const struct xp_tl_set *set)
{
	const struct xp_report_opts *o = S->R->o;

	for (size_t d = 0; d < set->ndev; d++) {
		const struct xp_tl *tl = &set->dev[d];

		if (!xp_tl_selected(tl->gpid, o->pid))
			continue;
		for (size_t i = xp_tl_first_from(tl, o->since); i < tl->n; i++) {
			const struct xp_tl_op *op = &tl->ops[i];
			struct op_agg *g;

			if (o->until && op->start >= o->until)
				break;
			if (!(g = agg_of(S, op->stack, op->api_name)))
				return -ENOMEM;
			g->gpu_ops++;
			g->gpu_ns = xp_sat_add(g->gpu_ns, xp_sat_sub(op->end, op->start));
		}
	}
	return 0;
}

/* Each (stack, function) pair to its operator's row. */
static int gather(struct op_state *S)
{
	sqlite3_stmt *name = NULL;
	struct xp_tl_set set;
	int rc;

	if ((rc = xp_tl_load_all(S->R->db, &set)) < 0)
		return rc;
	rc = gather_calls(S, &set);
	if (!rc)
		rc = gather_gpu(S, &set);
	xp_tl_set_free(&set);
	if (rc < 0)
		return rc;
	if (sqlite3_prepare_v2(S->R->db, "SELECT value FROM StringIds WHERE id = ?", -1, &name, NULL)
	    != SQLITE_OK)
		return -EIO;
	for (size_t k = 0; k < S->nagg && !rc; k++) {
		const struct op_agg *g = &S->aggs[k];
		size_t i;

		sqlite3_reset(name);
		sqlite3_bind_int64(name, 1, g->name);
		if ((rc = row_of(S, g->stack, g->name, sqlite3_step(name) == SQLITE_ROW ?
				 (const char *)sqlite3_column_text(name, 0) : NULL, &i)) < 0)
			break;
		S->rows[i].calls += g->calls;
		S->rows[i].cuda_calls += g->cuda_calls;
		S->rows[i].host_ns = xp_sat_add(S->rows[i].host_ns, g->host_ns);
		S->rows[i].gpu_ops += g->gpu_ops;
		S->rows[i].gpu_ns = xp_sat_add(S->rows[i].gpu_ns, g->gpu_ns);
		/* the top line: by GPU time, by calls where the op launched nothing */
		rc = add_site(S, i, g->stack, g->gpu_ns ? g->gpu_ns : (int64_t)g->calls);
	}
	sqlite3_finalize(name);
	return rc;
}

static int cmp_op(const void *pa, const void *pb)
{
	const struct op_row *a = pa, *b = pb;

	if (a->gpu_ns != b->gpu_ns)
		return a->gpu_ns < b->gpu_ns ? 1 : -1;
	if (a->host_ns != b->host_ns)
		return a->host_ns < b->host_ns ? 1 : -1;
	return strcmp(a->name, b->name);
}

static void top_sites(struct op_state *S)
{
	for (size_t i = 0; i < S->np; i++) {
		struct op_row *r = &S->rows[S->pairs[i].op];

		if (!r->top_site || S->pairs[i].weight > r->top_ns ||
		    (S->pairs[i].weight == r->top_ns && strcmp(S->pairs[i].site, r->top_site) < 0)) {
			r->top_site = S->pairs[i].site;
			r->top_ns = S->pairs[i].weight;
		}
	}
}

/* One row per operator, as key_averages() (text: the operator and its
 * top launch site in one field). */
enum { O_PCT, O_GPU_NS, O_PCT_JSON, O_CALLS, O_CUDA, O_HOST, O_OPS, O_PER, O_OP, O_SITE,
       O_TEXT, O_N };
static const struct xp_col cols[O_N] = {
	[O_PCT] = { .head = "GPU (%)", .kind = XP_COL_FIXED, .prec = 1, .width = 7, .rule = 7 },
	[O_GPU_NS] = { .head = "GPU Time (ns)", .json = "gpu_ns", .kind = XP_COL_INT, .width = 14,
		       .rule = 14 },
	[O_PCT_JSON] = { .json = "gpu_percent", .kind = XP_COL_FIXED, .prec = 2 },
	[O_CALLS] = { .head = "Calls", .json = "calls", .kind = XP_COL_UINT, .width = 9, .rule = 9 },
	[O_CUDA] = { .head = "CUDA Calls", .json = "cuda_calls", .kind = XP_COL_UINT, .width = 10,
		     .rule = 10 },
	[O_HOST] = { .head = "Host Time (ns)", .json = "host_ns", .kind = XP_COL_INT, .width = 14,
		     .rule = 14 },
	[O_OPS] = { .head = "GPU Ops", .json = "gpu_ops", .kind = XP_COL_UINT },
	[O_PER] = { .head = "Ops/Call", .csv = "GPU Ops/Call", .json = "gpu_ops_per_call",
		    .kind = XP_COL_FIXED, .prec = 2, .width = 7, .rule = 8 },
	[O_OP] = { .head = "Operator", .json = "op", .kind = XP_COL_TEXT },
	[O_SITE] = { .head = "Top Launch Site", .json = "top_site", .kind = XP_COL_TEXT },
	[O_TEXT] = { .head = "Operator  \u2039 the line that launched most of it", .kind = XP_COL_TEXT,
		     .rule = 8 },
};
static const unsigned char text_cols[] = { O_PCT, O_GPU_NS, O_CALLS, O_CUDA, O_HOST, O_PER, O_TEXT };
static const unsigned char csv_cols[] = { O_PCT, O_GPU_NS, O_CALLS, O_CUDA, O_HOST, O_OPS, O_PER,
	O_OP, O_SITE };
static const unsigned char json_cols[] = { O_OP, O_GPU_NS, O_PCT_JSON, O_CALLS, O_CUDA, O_HOST,
	O_OPS, O_PER, O_SITE };

static void print_ops(struct rep *R, struct op_state *S)
{
	const struct xp_report_opts *o = R->o;
	size_t shown = o->top && o->top < S->n ? o->top : S->n;
	struct xp_table t = { .cols = cols, .n = O_N, .fmt = o->format, .out = R->out,
			      .json = &R->json, .width = o->width, .key = "ops", .lead = "  ",
			      .no_split = 1, .text_max = 1024,
			      .text_order = text_cols, .text_n = sizeof(text_cols),
			      .csv_order = csv_cols, .csv_n = sizeof(csv_cols),
			      .json_order = json_cols, .json_n = sizeof(json_cols) };
	int64_t all = 0;
	char title[256];

	for (size_t i = 0; i < S->n; i++)
		all = xp_sat_add(all, S->rows[i].gpu_ns);
	snprintf(title, sizeof(title), "** %s:", xp_rep_title(o->by));
	xp_table_begin(&t, title);
	for (size_t i = 0; i < shown; i++) {
		const struct op_row *r = &S->rows[i];
		double pct = all ? 100.0 * (double)r->gpu_ns / (double)all : 0;
		double per = r->calls ? (double)r->gpu_ops / (double)r->calls : 0;
		const char *site = r->top_site ? r->top_site : "";
		char both[1024];

		snprintf(both, sizeof(both), "%s  \u2039 %s", r->name, site);
		xp_table_row(&t, (struct xp_cell[O_N]){
			[O_PCT] = { .d = pct }, [O_GPU_NS] = { .i = r->gpu_ns }, [O_PCT_JSON] = { .d = pct },
			[O_CALLS] = { .u = r->calls }, [O_CUDA] = { .u = r->cuda_calls },
			[O_HOST] = { .i = r->host_ns }, [O_OPS] = { .u = r->gpu_ops }, [O_PER] = { .d = per },
			[O_OP] = { .s = r->name }, [O_SITE] = { .s = site }, [O_TEXT] = { .s = both } });
	}
	xp_table_end(&t, shown, S->n);
}

int xp_view_op(struct rep *R, size_t *rows)
{
	struct op_state S = { .R = R };
	int rc;

	*rows = 0;
	xp_u64map_init(&S.op_of);
	xp_u64map_init(&S.by_site);
	xp_u64map_init(&S.agg_at);
	xp_u64map_init(&S.op_node);
	if ((rc = xp_sites_new(R->db, &S.sites)) < 0)
		goto out;
	S.walk = xp_sites_walk(S.sites);
	xp_sites_prefer_own(S.sites);
	if ((rc = gather(&S)) < 0)
		goto out;
	top_sites(&S);
	if (S.n)
		qsort(S.rows, S.n, sizeof(*S.rows), cmp_op);
	print_ops(R, &S);
	*rows = S.n;
out:
	for (size_t i = 0; i < S.n; i++)
		free(S.rows[i].name);
	free(S.rows);
	free(S.pairs);
	xp_u64map_free(&S.op_of);
	xp_u64map_free(&S.by_site);
	xp_u64map_free(&S.agg_at);
	xp_u64map_free(&S.op_node);
	free(S.aggs);
	xp_sites_free(S.sites);
	return rc;
}

/* Where the view's table lands in json (report/decl.h). */
const struct xp_decl xp_decl_op[] = {
	XP_DECL_ORDER("op", "ops[]", cols, json_cols),
	{ 0 },
};

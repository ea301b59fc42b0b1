/* view_launch.c - `xpcorr report --by launch`: how long GPU work waits
 * between its CUDA call and its start (HTA's kernel launch statistics, nsys
 * cuda_kern_exec_sum), per device of each process, per stream and per
 * kernel name: the delay and the queue depth at the launch (the work of
 * that stream launched before and not yet finished) as min / median / p99,
 * and the CPU cost of the launch calls per CUDA function. A stream whose
 * queue is empty at most launches is launch-bound (the GPU waits for the
 * host); one whose queue holds work is GPU-bound.
 *
 *   xpcorr report --by launch --top 10 run/
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "src/array.h"
#include "db/db_schema.h"
#include "export/names/elidename.h"
#include "src/gtid.h"
#include "export/report/report_priv.h"
#include "export/report/decl.h"
#include "export/report/table.h"
#include "export/analysis/timeline.h"
#include "src/satmath.h"
#include "src/u64map.h"

struct lrec {
	int64_t stream, name, api;
	int64_t delay, depth, cost;     /* ns, ops, ns */
	int64_t at;                     /* the launch call's start */
};

struct stat3 {
	int64_t min, med, p99;
};

enum { SEC_STREAM, SEC_KERNEL, SEC_API };
static const char *const sec_key[] = { "streams", "kernels", "apis" };

struct lgroup {
	int64_t key;
	size_t n;
	struct stat3 delay, depth, cost;
	int64_t delay_sum;
};

/* A min-heap of end times: the queue of one stream. */
struct heap {
	int64_t *v;
	size_t n, cap;
};

static int heap_push(struct heap *h, int64_t x)
{
	size_t i;

	if (xp_array__reserve((void **)&h->v, &h->cap, h->n + 1, sizeof(*h->v), 64))
		return -ENOMEM;
	for (i = h->n++; i && h->v[(i - 1) / 2] > x; i = (i - 1) / 2)
		h->v[i] = h->v[(i - 1) / 2];
	h->v[i] = x;
	return 0;
}

static void heap_pop(struct heap *h)
{
	int64_t x = h->v[--h->n];
	size_t i = 0;

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= h->n)
			break;
		if (c + 1 < h->n && h->v[c + 1] < h->v[c])
			c++;
		if (h->v[c] >= x)
			break;
		h->v[i] = h->v[c];
		i = c;
	}
	if (h->n)
		h->v[i] = x;
}

static int cmp_launch(const void *pa, const void *pb)
{
	const struct xp_tl_op *a = *(const struct xp_tl_op *const *)pa;
	const struct xp_tl_op *b = *(const struct xp_tl_op *const *)pb;

	if (a->stream != b->stream)
		return a->stream < b->stream ? -1 : 1;
	return a->launch < b->launch ? -1 : a->launch > b->launch;
}

/* One record per launched op, its queue depth from a walk of each stream
 * in launch order. *out malloc'd. 0 or -ENOMEM. */
static int records(const struct xp_tl *tl, struct lrec **out, size_t *n)
{
	const struct xp_tl_op **by = malloc((tl->n ? tl->n : 1) * sizeof(*by));
	struct heap h = { 0 };
	size_t m = 0;
	int rc = 0;

	*out = malloc((tl->n ? tl->n : 1) * sizeof(**out));
	if (!by || !*out) {
		free(by);
		return -ENOMEM;
	}
	for (size_t i = 0; i < tl->n; i++)
		if (tl->ops[i].launch >= 0)
			by[m++] = &tl->ops[i];
	if (m)
		qsort(by, m, sizeof(*by), cmp_launch);
	for (size_t i = 0; i < m && !rc; i++) {
		if (i && by[i]->stream != by[i - 1]->stream)
			h.n = 0;
		while (h.n && h.v[0] <= by[i]->launch)
			heap_pop(&h);
		(*out)[i] = (struct lrec){ by[i]->stream, by[i]->name, by[i]->api_name,
					   xp_sat_sub(by[i]->start, by[i]->launch), (int64_t)h.n,
					   xp_sat_sub(by[i]->launch_end, by[i]->launch), by[i]->launch };
		rc = heap_push(&h, by[i]->end);
	}
	*n = m;
	free(by);
	free(h.v);
	return rc;
}

static int64_t rec_key(const struct lrec *r, int sec)
{
	return sec == SEC_STREAM ? r->stream : sec == SEC_KERNEL ? r->name : r->api;
}

static int cmp_key(const void *pa, const void *pb)
{
	int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;

	return a < b ? -1 : a > b;
}

static struct stat3 stat_of(int64_t *v, size_t n)
{
	xp_tl_sort(v, n);
	return (struct stat3){ n ? v[0] : 0, xp_tl_percentile(v, n, 50), xp_tl_percentile(v, n, 99) };
}

/* The section's distinct keys in ascending order, each mapped to its
 * index + 1 and the count of its records (a few hundred keys for a
 * million records: a counting sort, not a sort of the records). */
static int keys_of(const struct lrec *r, size_t n, int sec, struct xp_u64map *at, int64_t **keys,
		   size_t *nk)
{
	size_t cap = 0;

	*keys = NULL;
	*nk = 0;
	for (size_t i = 0; i < n; i++) {
		uint64_t *slot;
		int fresh;

		if (xp_u64map_upsert(at, (uint64_t)rec_key(&r[i], sec), 0, &slot, &fresh) ||
		    (fresh && xp_array__reserve((void **)keys, &cap, *nk + 1, sizeof(**keys), 16)))
			return -ENOMEM;
		if (fresh)
			(*keys)[(*nk)++] = rec_key(&r[i], sec);
	}
	if (*nk)
		qsort(*keys, *nk, sizeof(**keys), cmp_key);
	for (size_t k = 0; k < *nk; k++)
		*xp_u64map_find(at, (uint64_t)(*keys)[k], 0) = k + 1;
	return 0;
}

/* The records grouped by the section's key (in key order), each group with
 * its statistics: each record's values put into its group's slice of d. */
static int group(const struct lrec *r, size_t n, int sec, struct lgroup **out, size_t *ng)
{
	int64_t *d = malloc((n ? n : 1) * 3 * sizeof(*d)), *keys = NULL;
	size_t *first = NULL, nk = 0;
	struct xp_u64map at;
	int rc = -ENOMEM;

	*out = NULL;
	*ng = 0;
	xp_u64map_init(&at);
	if (!d || keys_of(r, n, sec, &at, &keys, &nk) < 0 || !(first = calloc(nk + 1, sizeof(*first))) ||
	    !(*out = calloc(nk ? nk : 1, sizeof(**out))))
		goto out;
	for (size_t i = 0; i < n; i++)
		first[*xp_u64map_find(&at, (uint64_t)rec_key(&r[i], sec), 0)]++;
	for (size_t k = 0; k < nk; k++)         /* first[k]: where group k's slice starts */
		first[k + 1] += first[k];
	for (size_t i = 0; i < n; i++) {
		size_t k = *xp_u64map_find(&at, (uint64_t)rec_key(&r[i], sec), 0) - 1, j = first[k]++;
		struct lgroup *g = &(*out)[k];

		d[j] = r[i].delay;
		d[n + j] = r[i].depth;
		d[2 * n + j] = r[i].cost;
		g->delay_sum = xp_sat_add(g->delay_sum, r[i].delay);
		g->n++;
	}
	for (size_t k = 0, j = 0; k < nk; j += (*out)[k++].n) {
		struct lgroup *g = &(*out)[k];

		g->key = keys[k];
		g->delay = stat_of(d + j, g->n);
		g->depth = stat_of(d + n + j, g->n);
		g->cost = stat_of(d + 2 * n + j, g->n);
	}
	*ng = nk;
	rc = 0;
out:
	if (rc < 0) {
		free(*out);
		*out = NULL;
	}
	xp_u64map_free(&at);
	free(first);
	free(keys);
	free(d);
	return rc;
}

static int cmp_delay_sum(const void *pa, const void *pb)
{
	const struct lgroup *a = pa, *b = pb;

	return a->delay_sum != b->delay_sum ? (a->delay_sum < b->delay_sum ? 1 : -1) :
	       a->key < b->key ? -1 : a->key > b->key;
}

static const char *name_of(struct rep *R, int64_t id, char *buf, size_t len)
{
	sqlite3_stmt *s;

	snprintf(buf, len, "%s", id < 0 ? "[memcpy/memset]" : "?");
	if (id >= 0 && sqlite3_prepare_v2(R->db, "SELECT value FROM StringIds WHERE id = ?", -1, &s,
					  NULL) == SQLITE_OK) {
		sqlite3_bind_int64(s, 1, id);
		if (sqlite3_step(s) == SQLITE_ROW && sqlite3_column_text(s, 0))
			snprintf(buf, len, "%s", (const char *)sqlite3_column_text(s, 0));
		sqlite3_finalize(s);
	}
	return buf;
}

static const char *verdict(const struct lgroup *g)
{
	/* an empty queue and still a long wait: the stream waited on another */
	return g->depth.med >= 2 ? "GPU-bound (queue full)" : g->depth.med == 1 ? "keeping up" :
	       g->delay.med > 50000 ? "waits on other work" : "launch-bound (GPU waits)";
}

/* The view's sheet: per device, its streams, kernels and CUDA calls with
 * the delay, queue depth and call cost of their launches (csv: a Section
 * column; json: min, median and p99 objects, the sections nested in the
 * device; text: microseconds, under a head per group of columns). */
enum { L_SECTION, L_RANK, L_DEVICE, L_PID, L_STREAM, L_VERDICT_JSON, L_NAME, L_LAUNCHES,
       L_DELAY_MIN, L_DELAY_MED, L_DELAY_P99, L_Q_MIN, L_Q_MED, L_Q_P99, L_CALL_MIN, L_CALL_MED,
       L_CALL_P99, L_DMIN_US, L_DMED_US, L_DP99_US, L_QMED_K, L_CALL_US, L_CMED_US, L_CP99_US,
       L_VERDICT, L_KERNEL, L_API, L_DEVICE_TEXT, L_N };

static int device_text(struct xp_table *t, const struct xp_cell *c);

#define STAT(h, key, o) .csv = h, .json = key, .obj = o, .kind = XP_COL_INT
#define US(h) .head = h, .kind = XP_COL_FIXED, .prec = 1, .width = 9

static const struct xp_col cols[L_N] = {
	[L_SECTION] = { .head = "Section", .kind = XP_COL_TEXT },
	[L_RANK] = { .head = "Rank", .json = "rank", .kind = XP_COL_INT },
	[L_DEVICE] = { .head = "Device", .json = "device", .kind = XP_COL_INT },
	[L_PID] = { .json = "pid", .kind = XP_COL_INT },
	[L_STREAM] = { .head = "Stream", .json = "stream", .kind = XP_COL_INT, .width = 6, .rule = 6 },
	[L_VERDICT_JSON] = { .json = "verdict", .kind = XP_COL_TEXT },
	[L_NAME] = { .head = "Name", .json = "name", .kind = XP_COL_TEXT },
	[L_LAUNCHES] = { .head = "Launches", .json = "launches", .kind = XP_COL_UINT, .width = 9,
			 .rule = 9 },
	[L_DELAY_MIN] = { STAT("Delay Min (ns)", "min", "delay_ns") },
	[L_DELAY_MED] = { STAT("Delay Med (ns)", "median", "delay_ns") },
	[L_DELAY_P99] = { STAT("Delay P99 (ns)", "p99", "delay_ns") },
	[L_Q_MIN] = { .head = "Q min", STAT("Queue Min", "min", "queue_depth"), .width = 5,
		      .rule = 17 },
	[L_Q_MED] = { .head = "Q med", STAT("Queue Med", "median", "queue_depth"), .width = 5,
		      .gap = 1, .rule = -1 },
	[L_Q_P99] = { .head = "Q p99", STAT("Queue P99", "p99", "queue_depth"), .width = 5,
		      .gap = 1, .rule = -1 },
	[L_CALL_MIN] = { STAT("Call Min (ns)", "min", "call_ns") },
	[L_CALL_MED] = { STAT("Call Med (ns)", "median", "call_ns") },
	[L_CALL_P99] = { STAT("Call P99 (ns)", "p99", "call_ns") },
	[L_DMIN_US] = { US("Delay min"), .rule = 28 },
	[L_DMED_US] = { US("median"), .gap = 1, .rule = -1 },
	[L_DP99_US] = { US("p99 (us)"), .gap = 1, .rule = -1 },
	[L_QMED_K] = { .head = "Q med", .kind = XP_COL_INT, .width = 5, .rule = 11 },
	[L_CALL_US] = { US("Call (us)"), .rule = 9 },
	[L_CMED_US] = { US("Call med"), .rule = 19 },
	[L_CP99_US] = { US("p99 (us)"), .gap = 1, .rule = -1 },
	[L_VERDICT] = { .head = "Verdict (median queue)", .kind = XP_COL_TEXT, .rule = 7 },
	[L_KERNEL] = { .head = "Kernel (most delay first)", .kind = XP_COL_TEXT, .rule = 6 },
	[L_API] = { .head = "CUDA call", .kind = XP_COL_TEXT, .rule = 6 },
	[L_DEVICE_TEXT] = { .kind = XP_COL_CALL, .text_only = 1, .call = device_text },
};
static const unsigned char csv_cols[] = { L_SECTION, L_RANK, L_DEVICE, L_STREAM, L_NAME,
	L_LAUNCHES, L_DELAY_MIN, L_DELAY_MED, L_DELAY_P99, L_Q_MIN, L_Q_MED, L_Q_P99, L_CALL_MIN,
	L_CALL_MED, L_CALL_P99 };
static const unsigned char device_json[] = { L_RANK, L_DEVICE, L_PID, L_LAUNCHES };
#define STATS L_LAUNCHES, L_DELAY_MIN, L_DELAY_MED, L_DELAY_P99, L_Q_MIN, L_Q_MED, L_Q_P99, \
	L_CALL_MIN, L_CALL_MED, L_CALL_P99
static const unsigned char stream_json[] = { L_STREAM, L_VERDICT_JSON, STATS };
static const unsigned char name_json[] = { L_NAME, STATS };
static const unsigned char stream_text[] = { L_STREAM, L_LAUNCHES, L_DMIN_US, L_DMED_US,
	L_DP99_US, L_Q_MIN, L_Q_MED, L_Q_P99, L_CALL_US, L_VERDICT };
static const unsigned char kernel_text[] = { L_LAUNCHES, L_DMIN_US, L_DMED_US, L_DP99_US,
	L_QMED_K, L_Q_P99, L_CMED_US, L_CP99_US, L_KERNEL };
static const unsigned char api_text[] = { L_LAUNCHES, L_DMIN_US, L_DMED_US, L_DP99_US,
	L_QMED_K, L_Q_P99, L_CMED_US, L_CP99_US, L_API };

static void print_group(struct rep *R, struct xp_table *t, int s, const struct lgroup *g,
			int64_t rank, int64_t dev)
{
	char name[1024] = "", brief[512] = "";
	const char *text_name = name;

	if (s != SEC_STREAM) {
		name_of(R, g->key, name, sizeof(name));
		xp_elide_name(name, brief, sizeof(brief));
		text_name = R->o->full_names ? name : brief;
	}
	xp_table_row(t, (struct xp_cell[L_N]){
		[L_SECTION] = { .s = sec_key[s] }, [L_RANK] = { .i = rank }, [L_DEVICE] = { .i = dev },
		[L_STREAM] = { .i = g->key, .absent = s != SEC_STREAM },
		[L_VERDICT_JSON] = { .s = verdict(g) }, [L_NAME] = { .s = name },
		[L_LAUNCHES] = { .u = g->n },
		[L_DELAY_MIN] = { .i = g->delay.min }, [L_DELAY_MED] = { .i = g->delay.med },
		[L_DELAY_P99] = { .i = g->delay.p99 }, [L_Q_MIN] = { .i = g->depth.min },
		[L_Q_MED] = { .i = g->depth.med }, [L_Q_P99] = { .i = g->depth.p99 },
		[L_CALL_MIN] = { .i = g->cost.min }, [L_CALL_MED] = { .i = g->cost.med },
		[L_CALL_P99] = { .i = g->cost.p99 }, [L_DMIN_US] = { .d = g->delay.min / 1e3 },
		[L_DMED_US] = { .d = g->delay.med / 1e3 }, [L_DP99_US] = { .d = g->delay.p99 / 1e3 },
		[L_QMED_K] = { .i = g->depth.med }, [L_CALL_US] = { .d = g->cost.med / 1e3 },
		[L_CMED_US] = { .d = g->cost.med / 1e3 }, [L_CP99_US] = { .d = g->cost.p99 / 1e3 },
		[L_VERDICT] = { .s = verdict(g) }, [L_KERNEL] = { .s = text_name },
		[L_API] = { .s = text_name }, [L_DEVICE_TEXT] = { .absent = 1 },
	});
}

/* One section of a device: its table nested in the device's row. */
static int section(struct rep *R, const struct xp_table *dt, int s, struct lrec *r, size_t n,
		   int64_t rank, int64_t dev)
{
	static const unsigned char *const text[] = { stream_text, kernel_text, api_text };
	static const size_t text_n[] = { sizeof(stream_text), sizeof(kernel_text), sizeof(api_text) };
	struct xp_table t = *dt;
	struct lgroup *g;
	size_t ng, shown;
	int rc;

	if ((rc = group(r, n, s, &g, &ng)) < 0)
		return rc;
	if (s != SEC_STREAM && ng)
		qsort(g, ng, sizeof(*g), cmp_delay_sum);
	shown = s != SEC_STREAM && R->o->top && R->o->top < ng ? R->o->top : ng;
	t.key = sec_key[s];
	t.lead = "    ";
	t.text_order = text[s];
	t.text_n = text_n[s];
	t.json_order = s == SEC_STREAM ? stream_json : name_json;
	t.json_n = s == SEC_STREAM ? sizeof(stream_json) : sizeof(name_json);
	t.text_lazy = 1;
	t.csv_continues = 1;
	t.csv_nested = 0;
	xp_table_begin(&t, NULL);
	for (size_t i = 0; i < shown; i++)
		print_group(R, &t, s, &g[i], rank, dev);
	xp_table_end(&t, shown, shown);
	free(g);
	return 0;
}

/* A device in text: who and how many launches. */
struct device_row {
	int64_t rank, dev;
	long long pid;
	size_t n;
};

static int device_text(struct xp_table *t, const struct xp_cell *c)
{
	const struct device_row *d = c->p;
	char who[48] = "", dev[32];

	if (d->rank >= 0)
		snprintf(who, sizeof(who), "Rank %lld, ", (long long)d->rank);
	xp_table_text(t, "%s", "");
	xp_tl_device_name(d->dev, dev, sizeof(dev));
	xp_table_text(t, "  %s%s of process %lld: %zu launches", who, dev, d->pid, d->n);
	return 0;
}

static int one_device(struct rep *R, struct xp_table *dt, const struct xp_tl *tl, size_t *rows)
{
	int64_t gpid = tl->gpid, dev = tl->device, rank;
	struct lrec *r = NULL;
	size_t n = 0;
	int rc;

	if ((rc = records(tl, &r, &n)) < 0 || !n)
		goto out;
	/* --since/--until: the launches made in the window (their queues counted whole) */
	if (R->o->since || R->o->until) {
		size_t m = 0;

		for (size_t i = 0; i < n; i++)
			if (r[i].at >= R->o->since && (!R->o->until || r[i].at < R->o->until))
				r[m++] = r[i];
		if (!(n = m))
			goto out;
	}
	if ((rc = xp_tl_rank(R->db, gpid, &rank)) < 0)
		goto out;
	{
		struct device_row d = { rank, dev, (long long)xp_pid_local((uint64_t)gpid >> 24), n };

		xp_table_row_open(dt, (struct xp_cell[L_N]){
			[L_RANK] = { .i = rank }, [L_DEVICE] = { .i = dev }, [L_PID] = { .i = d.pid },
			[L_LAUNCHES] = { .u = n }, [L_DEVICE_TEXT] = { .p = &d } });
	}
	for (int s = SEC_STREAM; s <= SEC_API && rc == 0; s++)
		rc = section(R, dt, s, r, n, rank, dev);
	xp_table_row_close(dt);
	*rows += n;
out:
	free(r);
	return rc;
}

int xp_view_launch(struct rep *R, size_t *rows)
{
	static const unsigned char none[1];
	struct xp_table t = { .cols = cols, .n = L_N, .fmt = R->o->format, .out = R->out,
			      .json = &R->json, .width = R->o->width, .key = "devices", .no_split = 1,
			      .text_max = 1024,
			      .text_order = none, .csv_order = csv_cols, .csv_n = sizeof(csv_cols),
			      .json_order = device_json, .json_n = sizeof(device_json),
			      .csv_nested = 1 };
	struct xp_tl_set set;
	char title[256];
	int rc;

	*rows = 0;
	if ((rc = xp_tl_load_all(R->db, &set)) < 0)
		return rc;
	snprintf(title, sizeof(title), "** %s:", xp_rep_title(R->o->by));
	xp_table_begin(&t, title);
	for (size_t i = 0; i < set.ndev && rc == 0; i++)
		if (xp_tl_selected(set.dev[i].gpid, R->o->pid))
			rc = one_device(R, &t, &set.dev[i], rows);
	xp_table_end(&t, 0, 0);
	xp_tl_set_free(&set);
	return rc;
}

/* Where the view's tables land in json (report/decl.h): a device's
 * sections, by sec_key. */
const struct xp_decl xp_decl_launch[] = {
	XP_DECL_ORDER("launch", "devices[]", cols, device_json),
	XP_DECL_ORDER("launch", "devices[].streams[]", cols, stream_json),
	XP_DECL_ORDER("launch", "devices[].kernels[]", cols, name_json),
	XP_DECL_ORDER("launch", "devices[].apis[]", cols, name_json),
	{ 0 },
};

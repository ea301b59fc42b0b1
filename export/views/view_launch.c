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

static void text_row(struct rep *R, int s, const struct lgroup *g, const char *name)
{
	char line[1024], brief[512];

	if (s == SEC_STREAM)
		snprintf(line, sizeof(line), "    %6lld  %9zu  %9.1f %9.1f %9.1f  %5lld %5lld %5lld  %9.1f  %s",
			 (long long)g->key, g->n, g->delay.min / 1e3, g->delay.med / 1e3,
			 g->delay.p99 / 1e3, (long long)g->depth.min, (long long)g->depth.med,
			 (long long)g->depth.p99, g->cost.med / 1e3, verdict(g));
	else {
		xp_elide_name(name, brief, sizeof(brief));
		snprintf(line, sizeof(line), "    %9zu  %9.1f %9.1f %9.1f  %5lld %5lld  %9.1f %9.1f  %s", g->n,
			 g->delay.min / 1e3, g->delay.med / 1e3, g->delay.p99 / 1e3,
			 (long long)g->depth.med, (long long)g->depth.p99, g->cost.med / 1e3,
			 g->cost.p99 / 1e3, R->o->full_names ? name : brief);
	}
	xp_rep_put_row(R, line);
}

static void json_stat(struct jsonw *w, const char *key, const struct stat3 *st)
{
	jsonw_key(w, key);
	jsonw_obj_begin(w);
	jsonw_key(w, "min"); jsonw_int(w, st->min);
	jsonw_key(w, "median"); jsonw_int(w, st->med);
	jsonw_key(w, "p99"); jsonw_int(w, st->p99);
	jsonw_obj_end(w);
}

static void print_group(struct rep *R, int s, const struct lgroup *g, int64_t rank, int64_t dev)
{
	char name[1024] = "";

	if (s != SEC_STREAM)
		name_of(R, g->key, name, sizeof(name));
	if (R->o->format == XP_FMT_TEXT) {
		text_row(R, s, g, name);
	} else if (R->o->format == XP_FMT_CSV) {
		fprintf(R->out, "\"%s\",%lld,%lld,", sec_key[s], (long long)rank, (long long)dev);
		if (s == SEC_STREAM)
			fprintf(R->out, "%lld,\"\"", (long long)g->key);
		else {
			fputc(',', R->out);
			xp_rep_csv_str(R->out, name);
		}
		fprintf(R->out, ",%zu,%lld,%lld,%lld,%lld,%lld,%lld,%lld,%lld,%lld\n", g->n,
			(long long)g->delay.min, (long long)g->delay.med, (long long)g->delay.p99,
			(long long)g->depth.min, (long long)g->depth.med, (long long)g->depth.p99,
			(long long)g->cost.min, (long long)g->cost.med, (long long)g->cost.p99);
	} else {
		struct jsonw *w = &R->json;

		jsonw_obj_begin(w);
		if (s == SEC_STREAM) {
			jsonw_key(w, "stream"); jsonw_int(w, g->key);
			jsonw_key(w, "verdict"); jsonw_str(w, verdict(g));
		} else {
			jsonw_key(w, "name"); jsonw_str(w, name);
		}
		jsonw_key(w, "launches"); jsonw_uint(w, g->n);
		json_stat(w, "delay_ns", &g->delay);
		json_stat(w, "queue_depth", &g->depth);
		json_stat(w, "call_ns", &g->cost);
		jsonw_obj_end(w);
	}
}

/* The text table's two header lines, in the rows' widths; the queue's
 * columns named alike in both tables (Q: queue depth at the launch). */
static void text_head(struct rep *R, int s)
{
	char line[256];

	if (s == SEC_STREAM)
		snprintf(line, sizeof(line), "    %6s  %9s  %9s %9s %9s  %5s %5s %5s  %9s  %s", "Stream",
			 "Launches", "Delay min", "median", "p99 (us)", "Q min", "Q med", "Q p99", "Call (us)",
			 "Verdict (median queue)");
	else
		snprintf(line, sizeof(line), "    %9s  %9s %9s %9s  %5s %5s  %9s %9s  %s", "Launches",
			 "Delay min", "median", "p99 (us)", "Q med", "Q p99", "Call med", "p99 (us)",
			 s == SEC_KERNEL ? "Kernel (most delay first)" : "CUDA call");
	xp_rep_put_row(R, line);
	xp_rep_put_row(R, s == SEC_STREAM ? "    ------  ---------  ----------------------------"
		       "  -----------------  ---------  -------" : "    ---------  ----------------------------"
		       "  -----------  -------------------  ------");
}

static int section(struct rep *R, int s, struct lrec *r, size_t n, int64_t rank, int64_t dev)
{
	struct lgroup *g;
	size_t ng, shown;
	int rc;

	if ((rc = group(r, n, s, &g, &ng)) < 0)
		return rc;
	if (s != SEC_STREAM && ng)
		qsort(g, ng, sizeof(*g), cmp_delay_sum);
	shown = s != SEC_STREAM && R->o->top && R->o->top < ng ? R->o->top : ng;
	if (R->o->format == XP_FMT_TEXT && ng) {
		text_head(R, s);
	} else if (R->o->format == XP_FMT_JSON) {
		jsonw_key(&R->json, sec_key[s]);
		jsonw_arr_begin(&R->json);
	}
	for (size_t i = 0; i < shown; i++)
		print_group(R, s, &g[i], rank, dev);
	if (R->o->format == XP_FMT_JSON)
		jsonw_arr_end(&R->json);
	free(g);
	return 0;
}

static void device_head(struct rep *R, int64_t rank, int64_t gpid, int64_t dev, size_t n)
{
	long long pid = (long long)xp_pid_local((uint64_t)gpid >> 24);

	if (R->o->format == XP_FMT_TEXT) {
		char line[256], who[48] = "";

		if (rank >= 0)
			snprintf(who, sizeof(who), "Rank %lld, ", (long long)rank);
		snprintf(line, sizeof(line), "  %sdevice %lld of process %lld: %zu launches", who,
			 (long long)dev, pid, n);
		xp_rep_put_row(R, "");
		xp_rep_put_row(R, line);
	} else if (R->o->format == XP_FMT_JSON) {
		jsonw_obj_begin(&R->json);
		jsonw_key(&R->json, "rank"); jsonw_int(&R->json, rank);
		jsonw_key(&R->json, "device"); jsonw_int(&R->json, dev);
		jsonw_key(&R->json, "pid"); jsonw_int(&R->json, pid);
		jsonw_key(&R->json, "launches"); jsonw_uint(&R->json, n);
	}
}

static int one_device(struct rep *R, const struct xp_tl *tl, size_t *rows)
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
	rank = xp_tl_rank(R->db, gpid);
	device_head(R, rank, gpid, dev, n);
	for (int s = SEC_STREAM; s <= SEC_API && rc == 0; s++)
		rc = section(R, s, r, n, rank, dev);
	if (R->o->format == XP_FMT_JSON)
		jsonw_obj_end(&R->json);
	*rows += n;
out:
	free(r);
	return rc;
}

int xp_view_launch(struct rep *R, size_t *rows)
{
	struct xp_tl_set set;
	int rc;

	*rows = 0;
	if ((rc = xp_tl_load_all(R->db, &set)) < 0)
		return rc;
	if (R->o->format == XP_FMT_TEXT) {
		xp_rep_put_title(R);
	} else if (R->o->format == XP_FMT_CSV) {
		fputs("\"Section\",\"Rank\",\"Device\",\"Stream\",\"Name\",\"Launches\",\"Delay Min (ns)\","
		      "\"Delay Med (ns)\",\"Delay P99 (ns)\",\"Queue Min\",\"Queue Med\",\"Queue P99\","
		      "\"Call Min (ns)\",\"Call Med (ns)\",\"Call P99 (ns)\"\n", R->out);
	} else {
		jsonw_key(&R->json, "devices");
		jsonw_arr_begin(&R->json);
	}
	for (size_t i = 0; i < set.ndev && rc == 0; i++)
		if (xp_tl_selected(set.dev[i].gpid, R->o->pid))
			rc = one_device(R, &set.dev[i], rows);
	if (R->o->format == XP_FMT_JSON)
		jsonw_arr_end(&R->json);
	xp_tl_set_free(&set);
	return rc;
}

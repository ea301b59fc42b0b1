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
#include "export/analysis/wait_blame.h"

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

static void head(struct rep *R, const struct xp_wait_table *t, int64_t clock_err)
{
	char line[300];

	if (R->o->format == XP_FMT_TEXT) {
		xp_rep_put_title(R);
		xp_rep_put_row(R, "");
		snprintf(line, sizeof(line), "  Collective waits: %llu, %lld ns in all; clock alignment error"
			 " %lld ns", (unsigned long long)t->nwaits, (long long)t->total_ns,
			 (long long)clock_err);
		xp_rep_put_row(R, line);
	} else if (R->o->format == XP_FMT_CSV) {
		fputs("\"Section\",\"Waiting Rank\",\"Late Rank\",\"Cause Rank\",\"Cause\",\"Where\","
		      "\"Wait (ns)\",\"Share of Wait (%)\",\"Waits\"\n", R->out);
	} else {
		jsonw_key(&R->json, "total_wait_ns"); jsonw_int(&R->json, t->total_ns);
		jsonw_key(&R->json, "waits"); jsonw_uint(&R->json, t->nwaits);
		jsonw_key(&R->json, "clock_error_ns"); jsonw_int(&R->json, clock_err);
	}
}

/* A table's head: text's title and columns, json's key. */
static void table_head(struct rep *R, int all)
{
	if (R->o->format == XP_FMT_TEXT) {
		xp_rep_put_row(R, "");
		xp_rep_put_row(R, all ? "  All waiting ranks:" : "  By waiting rank:");
		xp_rep_put_row(R, "  Wait (%)       Wait (ns)   Waits  Waiting  Late  Cause of    Cause"
			       "              Where");
		xp_rep_put_row(R, "  --------  --------------  ------  -------  ----  ----------  -----"
			       "              -----");
	} else if (R->o->format == XP_FMT_JSON) {
		jsonw_key(&R->json, all ? "blame_all_waiting" : "blame");
		jsonw_arr_begin(&R->json);
	}
}

static void row(struct rep *R, const struct xp_wait_total *v, const int64_t *rank, double share)
{
	long long w = v->waiter == ALL ? -1 : (long long)rank[v->waiter], l = (long long)rank[v->late];
	long long c = (long long)rank[v->culprit];

	if (R->o->format == XP_FMT_TEXT) {
		char line[1024], via[32], who[24] = "all";

		snprintf(via, sizeof(via), v->culprit == v->late ? "rank %lld" : "> rank %lld", c);
		if (v->waiter != ALL)
			snprintf(who, sizeof(who), "%lld", w);
		snprintf(line, sizeof(line), "  %8.1f  %14lld  %6llu  %7s  %4lld  %-10s  %-17s  %s", share,
			 (long long)v->ns, (unsigned long long)v->waits, who, l, via,
			 kind_text(v->kind, 0), v->where);
		xp_rep_put_row(R, line);
	} else if (R->o->format == XP_FMT_CSV) {
		if (v->waiter == ALL)
			fprintf(R->out, "\"all\",,%lld,%lld,\"%s\",", l, c, kind_text(v->kind, 1));
		else
			fprintf(R->out, "\"rank\",%lld,%lld,%lld,\"%s\",", w, l, c, kind_text(v->kind, 1));
		xp_rep_csv_str(R->out, v->where);
		fprintf(R->out, ",%lld,%.2f,%llu\n", (long long)v->ns, share, (unsigned long long)v->waits);
	} else {
		struct jsonw *j = &R->json;

		jsonw_obj_begin(j);
		if (v->waiter != ALL) {
			jsonw_key(j, "waiting_rank");
			jsonw_int(j, w);
		}
		jsonw_key(j, "late_rank"); jsonw_int(j, l);
		jsonw_key(j, "cause_rank"); jsonw_int(j, c);
		jsonw_key(j, "cause"); jsonw_str(j, kind_text(v->kind, 1));
		jsonw_key(j, "where"); jsonw_str(j, v->where);
		jsonw_key(j, "ns"); jsonw_int(j, v->ns);
		jsonw_key(j, "share_percent"); jsonw_fixed(j, share, 2);
		jsonw_key(j, "waits"); jsonw_uint(j, v->waits);
		jsonw_obj_end(j);
	}
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
			v[n - 1].ns += v[i].ns;
			v[n - 1].waits += v[i].waits;
			continue;
		}
		v[n] = v[i];
		v[n++].waiter = ALL;
	}
	qsort(v, n, sizeof(*v), cmp_total);
	return n;
}

static void table(struct rep *R, int all, struct xp_wait_total *v, size_t n, const int64_t *rank,
		  int64_t total)
{
	size_t shown = R->o->top && R->o->top < n ? R->o->top : n;

	table_head(R, all);
	for (size_t i = 0; i < shown; i++)
		row(R, &v[i], rank, total ? 100.0 * (double)v[i].ns / (double)total : 0);
	if (R->o->format == XP_FMT_JSON) {
		jsonw_arr_end(&R->json);
	} else if (R->o->format == XP_FMT_TEXT && shown < n) {
		char line[96];

		snprintf(line, sizeof(line), "  (%zu more rows; --top 0 shows all)", n - shown);
		xp_rep_put_row(R, line);
	}
}

void xp_wait_print(struct rep *R, struct xp_wait_table *t, const int64_t *rank, int64_t clock_err)
{
	struct xp_wait_total *all = NULL;
	size_t nall = 0;
	int several = 0;

	if (t->n)
		qsort(t->v, t->n, sizeof(*t->v), cmp_total);
	for (size_t i = 1; i < t->n && !several; i++)
		several = t->v[i].waiter != t->v[0].waiter;
	head(R, t, clock_err);
	if (several && (nall = over_all(t, &all)))
		table(R, 1, all, nall, rank, t->total_ns);
	free(all);
	if (t->n || R->o->format == XP_FMT_JSON)
		table(R, 0, t->v, t->n, rank, t->total_ns);
}

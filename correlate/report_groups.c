/* report_groups.c - group statistics for the report; see report_groups.h.
 * One sort per view of 16-byte (key, duration) pairs: about 0.1 s per
 * million rows, instead of an SQL sort at every report. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "correlate/report_groups.h"
#include "db/groups.h"
#include "src/array.h"
#include "db/stats.h"
#include "correlate/row_batch.h"
#include "correlate/sat_add.h"

static int push(struct xc_vec *v, const void *item, size_t size)
{
	if (xp_array__reserve(&v->v, &v->cap, v->n + 1, size, 4096))
		return -ENOMEM;
	memcpy((char *)v->v + v->n++ * size, item, size);
	return 0;
}

const char *xc_how_name(uint8_t how)
{
	return how == XC_EXACT ? "exact" : how == XC_INFERRED ? "inferred" : "none";
}

const char *xc_attr_reason_name(uint8_t reason)
{
	return reason == XC_NO_API_REASON ? "no API record" : xc_reason_name(reason);
}

int xc_groups_gpu_row(struct xc_groups *g, const struct xc_gpu_row *r)
{
	struct xc_keydur st = { r->stack_id == XC_NO_STACK ? -1 : r->stack_id, r->dur };
	unsigned how = r->how < 3 ? r->how : XC_UNATTRIBUTED;
	unsigned why = r->reason <= XC_NO_API_REASON ? r->reason : XC_NO_API_REASON;

	g->cov_n[how][why]++;
	g->cov_ns[how][why] = xc_sat_add(g->cov_ns[how][why], r->dur);
	if (push(&g->stack, &st, sizeof(st)))
		return -ENOMEM;
	if (!r->is_kernel)
		return 0;
	struct xc_keydur k = { r->name_id, r->dur };
	struct xc_kstack ks = { .key = r->name_id, .stack_id = st.key, .dur = r->dur,
				.how = (uint8_t)how, .reason = (uint8_t)why };

	if (push(&g->kernel, &k, sizeof(k)) || push(&g->kstack, &ks, sizeof(ks)))
		return -ENOMEM;
	if (r->mangled_id < 0)
		return 0;
	k.key = ks.key = r->mangled_id;
	return push(&g->mangled, &k, sizeof(k)) || push(&g->mstack, &ks, sizeof(ks)) ? -ENOMEM : 0;
}

int xc_groups_api_row(struct xc_groups *g, int64_t name_id, int64_t dur)
{
	struct xc_keydur k = { name_id, dur };

	return push(&g->api, &k, sizeof(k));
}

static int cmp_keydur(const void *pa, const void *pb)
{
	const struct xc_keydur *a = pa, *b = pb;

	if (a->key != b->key)
		return (a->key > b->key) - (a->key < b->key);
	return (a->dur > b->dur) - (a->dur < b->dur);
}

/* One row per key: instances, total, min, max, avg, median, sample stddev. */
static int write_view(struct xc_batch *b, const char *view, struct xc_vec *v)
{
	struct xc_keydur *d = v->v;
	size_t i = 0;

	if (v->n)
		qsort(d, v->n, sizeof(*d), cmp_keydur);
	while (i < v->n) {
		size_t j = i, n;
		int64_t total = 0;
		struct xp_stats st;

		while (j < v->n && d[j].key == d[i].key)
			total = xc_sat_add(total, d[j++].dur);
		n = j - i;
		xp_stats__of_sorted(&d[i].dur, n, sizeof(*d), total, &st);
		xc_batch_text(b, view);
		xc_batch_int(b, d[i].key);
		xc_batch_int(b, (int64_t)n);
		xc_batch_int(b, total);
		xc_batch_int(b, d[i].dur);
		xc_batch_int(b, d[j - 1].dur);
		xc_batch_real(b, st.avg);
		xc_batch_real(b, st.med);
		xc_batch_real(b, st.sd);
		if (xc_batch_row(b) < 0)
			return -EIO;
		i = j;
	}
	return 0;
}

static int cmp_kstack(const void *pa, const void *pb)
{
	const struct xc_kstack *a = pa, *b = pb;

	if (a->key != b->key)
		return (a->key > b->key) - (a->key < b->key);
	if (a->stack_id != b->stack_id)
		return (a->stack_id > b->stack_id) - (a->stack_id < b->stack_id);
	if (a->how != b->how)
		return a->how - b->how;
	return a->reason - b->reason;
}

/* GPU time per (kernel, stack, how, reason). */
static int write_kstacks(struct xc_batch *b, int mangled, struct xc_vec *v)
{
	struct xc_kstack *d = v->v;
	size_t i = 0;

	if (v->n)
		qsort(d, v->n, sizeof(*d), cmp_kstack);
	while (i < v->n) {
		size_t j = i;
		int64_t total = 0;

		while (j < v->n && !cmp_kstack(&d[j], &d[i]))
			total = xc_sat_add(total, d[j++].dur);
		xc_batch_int(b, mangled);
		xc_batch_int(b, d[i].key);
		xc_batch_int(b, d[i].stack_id);
		xc_batch_text(b, xc_how_name(d[i].how));
		xc_batch_text(b, xc_attr_reason_name(d[i].reason));
		xc_batch_int(b, total);
		if (xc_batch_row(b) < 0)
			return -EIO;
		i = j;
	}
	return 0;
}

static int write_coverage(struct xc_batch *b, const struct xc_groups *g)
{
	for (unsigned how = 0; how < 3; how++)
		for (unsigned why = 0; why <= XC_NO_API_REASON; why++) {
			if (!g->cov_n[how][why])
				continue;
			xc_batch_text(b, xc_how_name((uint8_t)how));
			xc_batch_text(b, xc_attr_reason_name((uint8_t)why));
			xc_batch_int(b, g->cov_n[how][why]);
			xc_batch_int(b, g->cov_ns[how][why]);
			if (xc_batch_row(b) < 0)
				return -EIO;
		}
	return 0;
}

int xc_groups_write(sqlite3 *db, struct xc_groups *g)
{
	struct xc_batch b;
	int rc;

	if ((rc = xp_groups_fingerprint_write(db)) < 0)
		return rc;
	xc_batch_init(&b, db, "xp_report_groups(view, key, instances, total_ns, min_ns, max_ns,"
		      " avg_ns, med_ns, stddev_ns)", 9);
	rc = write_view(&b, "kernel", &g->kernel);
	rc = rc ? rc : write_view(&b, "kernel_mangled", &g->mangled);
	rc = rc ? rc : write_view(&b, "stack", &g->stack);
	rc = rc ? rc : write_view(&b, "api", &g->api);
	rc = rc ? rc : xc_batch_flush(&b);
	xc_batch_free(&b);
	if (rc)
		return rc;
	xc_batch_init(&b, db, "xp_report_kernel_stacks(mangled, key, stack_id, how, reason,"
		      " gpu_ns)", 6);
	rc = write_kstacks(&b, 0, &g->kstack);
	rc = rc ? rc : write_kstacks(&b, 1, &g->mstack);
	rc = rc ? rc : xc_batch_flush(&b);
	xc_batch_free(&b);
	if (rc)
		return rc;
	xc_batch_init(&b, db, "xp_report_coverage(how, reason, records, gpu_ns)", 4);
	rc = write_coverage(&b, g);
	rc = rc ? rc : xc_batch_flush(&b);
	xc_batch_free(&b);
	return rc;
}

void xc_groups_free(struct xc_groups *g)
{
	free(g->kernel.v);
	free(g->mangled.v);
	free(g->kstack.v);
	free(g->mstack.v);
	free(g->stack.v);
	free(g->api.v);
	*g = (struct xc_groups){ 0 };
}

/* join.c - sort-merge joins of launch records, API calls and CPU samples.
 * O(n log n) in the records: two sorts, then linear sweeps. */
#include "correlate/join.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int cmp_u64(uint64_t a, uint64_t b)
{
	return (a > b) - (a < b);
}

static int api_by_pid_corr(const void *pa, const void *pb)
{
	const struct xc_api *a = pa, *b = pb;

	if (a->pid != b->pid)
		return cmp_u64(a->pid, b->pid);
	if (a->corr != b->corr)
		return cmp_u64(a->corr, b->corr);
	return cmp_u64(a->start, b->start);
}

static int launch_by_pid_corr(const void *pa, const void *pb)
{
	const struct xc_launch *a = pa, *b = pb;

	if (a->pid != b->pid)
		return cmp_u64(a->pid, b->pid);
	if (a->corr != b->corr)
		return cmp_u64(a->corr, b->corr);
	return cmp_u64(a->ts, b->ts);
}

/* (pid, tid) as one sortable key */
static uint64_t thread_key(uint32_t pid, uint32_t tid)
{
	return (uint64_t)pid << 32 | tid;
}

static const struct xc_api *sort_base;  /* qsort has no context argument */

static int api_index_by_thread(const void *pa, const void *pb)
{
	const struct xc_api *a = &sort_base[*(const size_t *)pa];
	const struct xc_api *b = &sort_base[*(const size_t *)pb];
	uint64_t ka = thread_key(a->pid, a->tid), kb = thread_key(b->pid, b->tid);

	if (ka != kb)
		return cmp_u64(ka, kb);
	return cmp_u64(a->start, b->start);
}

const char *xc_reason_name(enum xc_reason r)
{
	static const char *const names[XC_REASON_COUNT] = {
		[XC_OK] = "ok",
		[XC_LAUNCH_NO_API] = "launch without API call",
		[XC_LAUNCH_WRONG_TID] = "launch from another thread than the call",
		[XC_LAUNCH_OUTSIDE_CALL] = "launch outside the call's time",
		[XC_LAUNCH_DUPLICATE] = "second launch for one call",
		[XC_API_NO_LAUNCH] = "call without launch record (inferred)",
		[XC_API_NO_EVIDENCE] = "call without any CPU evidence",
	};

	return (unsigned)r < XC_REASON_COUNT ? names[r] : "?";
}

const struct xc_api *xc_find_api(const struct xc_input *in, uint32_t pid,
				 uint64_t corr, size_t *index)
{
	size_t lo = 0, hi = in->n_apis;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct xc_api *a = &in->apis[mid];

		if (a->pid < pid || (a->pid == pid && a->corr < corr))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == in->n_apis || in->apis[lo].pid != pid || in->apis[lo].corr != corr)
		return NULL;
	if (index)
		*index = lo;
	return &in->apis[lo];
}

/* Decides one launch record against the run of API calls sharing its
 * (pid, corr), which starts at apis[first]. */
static enum xc_reason match_launch(const struct xc_input *in, struct xc_result *res,
				   size_t first, const struct xc_launch *l)
{
	enum xc_reason verdict = XC_LAUNCH_WRONG_TID;

	for (size_t i = first; i < in->n_apis && in->apis[i].pid == l->pid &&
	     in->apis[i].corr == l->corr; i++) {
		const struct xc_api *a = &in->apis[i];

		if (a->tid != l->tid)
			continue;
		if (l->ts + in->slack_ns < a->start || l->ts > a->end + in->slack_ns) {
			verdict = XC_LAUNCH_OUTSIDE_CALL;
			continue;
		}
		if (res->api_attr[i].how == XC_EXACT)
			return XC_LAUNCH_DUPLICATE;
		res->api_attr[i] = (struct xc_attr){ .stack_id = l->stack_id, .how = XC_EXACT };
		return XC_OK;
	}
	return verdict;
}

static void join_launches(const struct xc_input *in, struct xc_result *res)
{
	size_t a = 0;

	for (size_t i = 0; i < in->n_launches; i++) {
		const struct xc_launch *l = &in->launches[i];

		while (a < in->n_apis && (in->apis[a].pid < l->pid ||
		       (in->apis[a].pid == l->pid && in->apis[a].corr < l->corr)))
			a++;
		enum xc_reason r = XC_LAUNCH_NO_API;

		if (a < in->n_apis && in->apis[a].pid == l->pid && in->apis[a].corr == l->corr)
			r = match_launch(in, res, a, l);
		res->reasons[r]++;
		res->launch_reason[i] = (uint8_t)r;
	}
}

/* Per-thread sweep state for tagging samples and inferring stacks. */
struct sweep {
	const struct xc_input *in;
	struct xc_result *res;
	const size_t *order;        /* API indexes in (pid, tid, start) order */
	size_t j;                   /* next unfinished API in order */
	struct xc_sample prev;      /* latest sample of the current thread */
	int have_prev;
	struct xc_sample inside;    /* first sample inside order[j] */
	int have_inside;
};

/* A call without its own launch record takes the stack of a sample of its
 * thread: inside the call if any, else the latest one within the window. */
static void finish_api(struct sweep *sw)
{
	size_t k = sw->order[sw->j];
	const struct xc_api *a = &sw->in->apis[k];
	struct xc_attr *at = &sw->res->api_attr[k];

	if (at->how != XC_EXACT) {
		if (sw->have_inside) {
			*at = (struct xc_attr){ .stack_id = sw->inside.stack_id,
						.how = XC_INFERRED, .reason = XC_API_NO_LAUNCH };
		} else if (sw->have_prev && sw->prev.pid == a->pid && sw->prev.tid == a->tid &&
			   sw->prev.ts <= a->start && a->start - sw->prev.ts <= sw->in->window_ns) {
			*at = (struct xc_attr){ .stack_id = sw->prev.stack_id, .how = XC_INFERRED,
						.reason = XC_API_NO_LAUNCH,
						.distance_ns = (int64_t)(a->start - sw->prev.ts) };
		} else {
			*at = (struct xc_attr){ .stack_id = XC_NO_STACK, .how = XC_UNATTRIBUTED,
						.reason = XC_API_NO_EVIDENCE };
		}
		sw->res->reasons[at->reason]++;
	}
	sw->j++;
	sw->have_inside = 0;
}

static uint64_t order_thread(const struct sweep *sw)
{
	const struct xc_api *a = &sw->in->apis[sw->order[sw->j]];

	return thread_key(a->pid, a->tid);
}

static int sweep_sample(struct sweep *sw, const struct xc_sample *s)
{
	uint64_t key = thread_key(s->pid, s->tid);
	size_t n = sw->in->n_apis;

	/* finish calls of threads before this one, and of this thread that ended before s */
	while (sw->j < n && (order_thread(sw) < key ||
	       (order_thread(sw) == key && sw->in->apis[sw->order[sw->j]].end < s->ts)))
		finish_api(sw);
	if (sw->j < n && order_thread(sw) == key) {
		const struct xc_api *a = &sw->in->apis[sw->order[sw->j]];

		if (s->ts >= a->start) {
			if (!sw->have_inside) {
				sw->inside = *s;
				sw->have_inside = 1;
			}
			sw->res->samples_in_api++;
			if (sw->in->on_sample_in_api) {
				int err = sw->in->on_sample_in_api(sw->in->in_api_ctx, s, a);

				if (err)
					return err;
			}
		}
	}
	sw->prev = *s;
	sw->have_prev = 1;
	return 0;
}

static int sweep_samples(const struct xc_input *in, struct xc_result *res)
{
	struct sweep sw = { .in = in, .res = res };
	struct xc_sample s, last = { 0 };
	size_t *order;
	int err = 0, got, have_last = 0;

	order = malloc((in->n_apis ? in->n_apis : 1) * sizeof(*order));
	if (!order)
		return -ENOMEM;
	for (size_t i = 0; i < in->n_apis; i++)
		order[i] = i;
	sort_base = in->apis;
	qsort(order, in->n_apis, sizeof(*order), api_index_by_thread);
	sw.order = order;
	while (in->next_sample && (got = in->next_sample(in->sample_ctx, &s)) != 0) {
		if (got < 0) {
			err = got;
			goto cleanup;
		}
		if (have_last && (thread_key(s.pid, s.tid) < thread_key(last.pid, last.tid) ||
		    (thread_key(s.pid, s.tid) == thread_key(last.pid, last.tid) && s.ts < last.ts))) {
			res->samples_out_of_order++;
			continue;
		}
		last = s;
		have_last = 1;
		err = sweep_sample(&sw, &s);
		if (err)
			goto cleanup;
	}
	while (sw.j < in->n_apis)
		finish_api(&sw);
cleanup:
	free(order);
	return err;
}

static int is_sorted(const void *base, size_t n, size_t size,
		     int (*cmp)(const void *, const void *))
{
	for (size_t i = 1; i < n; i++)
		if (cmp((const char *)base + (i - 1) * size, (const char *)base + i * size) > 0)
			return 0;
	return 1;
}

int xc_join(struct xc_input *in, struct xc_result *res)
{
	int err;

	memset(res, 0, sizeof(*res));
	res->api_attr = calloc(in->n_apis ? in->n_apis : 1, sizeof(*res->api_attr));
	res->launch_reason = calloc(in->n_launches ? in->n_launches : 1, 1);
	if (!res->api_attr || !res->launch_reason) {
		xc_result_free(res);
		return -ENOMEM;
	}
	for (size_t i = 0; i < in->n_apis; i++)
		res->api_attr[i].stack_id = XC_NO_STACK;
	/* qsort's pointer must not be NULL, even for zero elements; records
	 * usually arrive in correlation id order already, and a check is linear */
	if (in->n_apis && !is_sorted(in->apis, in->n_apis, sizeof(*in->apis), api_by_pid_corr))
		qsort(in->apis, in->n_apis, sizeof(*in->apis), api_by_pid_corr);
	if (in->n_launches && !is_sorted(in->launches, in->n_launches, sizeof(*in->launches),
					 launch_by_pid_corr))
		qsort(in->launches, in->n_launches, sizeof(*in->launches), launch_by_pid_corr);
	join_launches(in, res);
	err = sweep_samples(in, res);
	if (err)
		xc_result_free(res);
	return err;
}

void xc_result_free(struct xc_result *res)
{
	free(res->api_attr);
	free(res->launch_reason);
	res->api_attr = NULL;
	res->launch_reason = NULL;
}

/* db_join.c - the database glue of the correlation join: arrays in, the
 * pure xc_join (join.c), rows out. Linear in rows apart from two sorts and
 * one binary search per GPU row; samples are streamed per thread from an
 * index, so memory grows with API calls and GPU rows, not with samples.
 *
 *   xp_gpu_schema_create(db); ...load...; xc_correlate_db(db, &summary);
 *
 * GPU row -> API call by (pid, correlationId) -> the API call's attribution:
 * exact (its own launch record), inferred (a sample of its thread), or none.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "correlate/db_join.h"
#include "db/db_schema.h"
#include "src/array.h"
#include "src/gtid.h"
#include "correlate/report_groups.h"
#include "correlate/row_batch.h"
#include "correlate/sat_add.h"
#include "src/satmath.h"

/* Samples of the threads that made API calls, streamed thread by thread in
 * (ts) order from the covering index xp_samples_pid_tid_ts (pid, tid, ts,
 * stack_id): no table scan, no sort, and memory independent of the number
 * of samples. Only the time span where a sample can matter is read: from
 * the window before the thread's first call to the end of its last. */
static int grow(void **arr, size_t *cap, size_t n, size_t elem);

struct thread_span {
	uint64_t key;               /* pid << 32 | tid */
	uint64_t lo, hi;            /* ts range of samples that can matter */
};

struct db_iter {
	struct thread_span *t;      /* sorted by key */
	size_t nt;
	size_t ti;                  /* thread being read */
	sqlite3_stmt *sel;          /* samples of one thread in ts order */
	int running;                /* sel is bound to t[ti] */
	struct xc_batch tag;        /* INTO xp_sample_api */
};

static int cmp_span(const void *a, const void *b)
{
	const struct thread_span *x = a, *y = b;

	if (x->key != y->key)
		return (x->key > y->key) - (x->key < y->key);
	return (x->lo > y->lo) - (x->lo < y->lo);
}

/* One span per thread that made API calls. */
static int thread_spans(const struct xc_input *in, struct db_iter *it)
{
	size_t n = 0;

	it->t = malloc((in->n_apis ? in->n_apis : 1) * sizeof(*it->t));
	if (!it->t)
		return -ENOMEM;
	for (size_t i = 0; i < in->n_apis; i++) {
		const struct xc_api *a = &in->apis[i];

		it->t[i] = (struct thread_span){ .key = (uint64_t)a->pid << 32 | a->tid,
			.lo = a->start > in->window_ns ? a->start - in->window_ns : 0,
			.hi = a->end > a->start ? a->end : a->start };
	}
	if (in->n_apis)
		qsort(it->t, in->n_apis, sizeof(*it->t), cmp_span);
	for (size_t i = 0; i < in->n_apis; i++) {
		if (n && it->t[n - 1].key == it->t[i].key) {
			if (it->t[i].hi > it->t[n - 1].hi)
				it->t[n - 1].hi = it->t[i].hi;
		} else {
			it->t[n++] = it->t[i];
		}
	}
	it->nt = n;
	/* a few threads left of one entry per call: give the rest back */
	void *p = realloc(it->t, (n ? n : 1) * sizeof(*it->t));

	if (p)
		it->t = p;
	return 0;
}

static int open_samples(sqlite3 *db, const struct xc_input *in, struct db_iter *it)
{
	int rc = thread_spans(in, it);

	if (rc < 0)
		return rc;
	/* built by ingest (xp_db_create_indexes); only a bare database lacks it */
	if (sqlite3_exec(db, "CREATE INDEX IF NOT EXISTS xp_samples_pid_tid_ts"
			 " ON xp_samples(pid, tid, ts, stack_id)", NULL, NULL, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, "SELECT ts, stack_id, id FROM xp_samples"
			       " WHERE pid = ?1 AND tid = ?2 AND ts BETWEEN ?3 AND ?4 ORDER BY ts",
			       -1, &it->sel, NULL) != SQLITE_OK)
		return -EIO;
	return 0;
}

static int next_sample(void *ctx, struct xc_sample *out)
{
	struct db_iter *it = ctx;

	while (it->ti < it->nt) {
		const struct thread_span *t = &it->t[it->ti];
		int rc;

		if (!it->running) {
			sqlite3_reset(it->sel);
			sqlite3_bind_int64(it->sel, 1, (int64_t)(t->key >> 32));
			sqlite3_bind_int64(it->sel, 2, (int64_t)(uint32_t)t->key);
			sqlite3_bind_int64(it->sel, 3, (int64_t)t->lo);
			sqlite3_bind_int64(it->sel, 4, (int64_t)t->hi);
			it->running = 1;
		}
		rc = sqlite3_step(it->sel);
		if (rc == SQLITE_ROW) {
			*out = (struct xc_sample){ .ts = (uint64_t)sqlite3_column_int64(it->sel, 0),
				.pid = (uint32_t)(t->key >> 32), .tid = (uint32_t)t->key,
				.stack_id = sqlite3_column_type(it->sel, 1) == SQLITE_NULL ?
					    XC_NO_STACK : sqlite3_column_int64(it->sel, 1),
				.id = sqlite3_column_int64(it->sel, 2) };
			return 1;
		}
		if (rc != SQLITE_DONE)
			return -EIO;
		it->running = 0;
		it->ti++;
	}
	return 0;
}

static void close_samples(struct db_iter *it)
{
	sqlite3_finalize(it->sel);
	free(it->t);
	it->sel = NULL;
	it->t = NULL;
	it->nt = 0;
}

static int on_in_api(void *ctx, const struct xc_sample *s, const struct xc_api *a)
{
	struct db_iter *it = ctx;

	xc_batch_int(&it->tag, s->id);
	xc_batch_int(&it->tag, a->id);
	return xc_batch_row(&it->tag);
}

/* Grows *arr (of elem bytes) to hold n + 1. */
static int grow(void **arr, size_t *cap, size_t n, size_t elem)
{
	return xp_array__reserve(arr, cap, n + 1, elem, 4096);
}

static int read_launches(sqlite3 *db, struct xc_input *in)
{
	sqlite3_stmt *s;
	size_t cap = 0;
	int rc;

	if (sqlite3_prepare_v2(db, "SELECT ts, correlation_id, pid, tid, stack_id, rowid FROM xp_launches",
			       -1, &s, NULL) != SQLITE_OK)
		return -EIO;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		if (grow((void **)&in->launches, &cap, in->n_launches, sizeof(*in->launches))) {
			sqlite3_finalize(s);
			return -ENOMEM;
		}
		in->launches[in->n_launches++] = (struct xc_launch){
			.ts = (uint64_t)sqlite3_column_int64(s, 0),
			.corr = (uint64_t)sqlite3_column_int64(s, 1),
			.pid = (uint32_t)sqlite3_column_int64(s, 2),
			.tid = (uint32_t)sqlite3_column_int64(s, 3),
			.stack_id = sqlite3_column_type(s, 4) == SQLITE_NULL ? XC_NO_STACK :
				    sqlite3_column_int64(s, 4),
			.id = sqlite3_column_int64(s, 5) };
	}
	sqlite3_finalize(s);
	return rc == SQLITE_DONE ? 0 : -EIO;
}

static int read_apis(sqlite3 *db, struct xc_input *in, struct xc_groups *g)
{
	sqlite3_stmt *s;
	size_t cap = 0;
	int rc;

	if (sqlite3_prepare_v2(db, "SELECT rowid, start, end, correlationId, globalTid, nameId"
			       " FROM CUPTI_ACTIVITY_KIND_RUNTIME", -1, &s, NULL) != SQLITE_OK)
		return -EIO;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		int64_t gt = sqlite3_column_int64(s, 4);

		if (grow((void **)&in->apis, &cap, in->n_apis, sizeof(*in->apis)) ||
		    xc_groups_api_row(g, sqlite3_column_int64(s, 5),
				      xp_sat_sub(sqlite3_column_int64(s, 2), sqlite3_column_int64(s, 1)))) {
			sqlite3_finalize(s);
			return -ENOMEM;
		}
		in->apis[in->n_apis++] = (struct xc_api){
			.id = sqlite3_column_int64(s, 0),
			.start = (uint64_t)sqlite3_column_int64(s, 1),
			.end = (uint64_t)sqlite3_column_int64(s, 2),
			.corr = (uint64_t)sqlite3_column_int64(s, 3),
			.pid = xp_gtid_pid(gt), .tid = xp_gtid_tid(gt) };
	}
	sqlite3_finalize(s);
	return rc == SQLITE_DONE ? 0 : -EIO;
}

struct skew {
	int64_t *d;
	size_t n, cap;
};

/* The columns after the GPU row's of its attribution (a, at: its API call,
 * NULL when none), counted in sum; a kernel's launch-to-start time into sk.
 * 0 or -ENOMEM. */
static int attribution_row(const struct xc_api *a, const struct xc_attr *at, int64_t start,
			   int64_t dur, struct xc_batch *ins, struct xc_summary *sum,
			   struct skew *sk)
{
	sum->gpu_rows++;
	sum->gpu_ns = xc_sat_add(sum->gpu_ns, dur);
	if (!at) {
		sum->no_api++;
		sum->rows_none++;
		sum->ns_none = xc_sat_add(sum->ns_none, dur);
		xc_batch_null(ins);
		xc_batch_null(ins);
		xc_batch_text(ins, "none");
		xc_batch_text(ins, "no API record");
		xc_batch_int(ins, 0);
		return 0;
	}
	if (at->how == XC_EXACT) {
		sum->rows_exact++;
		sum->ns_exact = xc_sat_add(sum->ns_exact, dur);
	} else if (at->how == XC_INFERRED) {
		sum->rows_inferred++;
		sum->ns_inferred = xc_sat_add(sum->ns_inferred, dur);
	} else {
		sum->rows_none++;
		sum->ns_none = xc_sat_add(sum->ns_none, dur);
	}
	xc_batch_int(ins, a->id);
	if (at->stack_id == XC_NO_STACK)
		xc_batch_null(ins);
	else
		xc_batch_int(ins, at->stack_id);
	xc_batch_text(ins, xc_how_name(at->how));
	xc_batch_text(ins, xc_reason_name(at->reason));
	xc_batch_int(ins, at->distance_ns);
	if (sk && start > 0) {
		if (grow((void **)&sk->d, &sk->cap, sk->n, sizeof(*sk->d)))
			return -ENOMEM;
		sk->d[sk->n++] = start - (int64_t)a->start;
	}
	return 0;
}

/* Attributes every row of one GPU table through its API call. */
static int attribute_table(sqlite3 *db, const struct xc_input *in, const struct xc_result *res,
			   const char *table, struct xc_summary *sum, struct skew *sk,
			   struct xc_groups *g)
{
	char sql[160];
	sqlite3_stmt *sel = NULL;
	struct xc_batch ins;
	int rc = -EIO, step;

	xc_batch_init(&ins, db, "xp_attribution(gpu_table, gpu_rowid, api_rowid, stack_id, how,"
		      " reason, distance_ns)", 7);
	snprintf(sql, sizeof(sql), "SELECT rowid, globalPid, correlationId, start, end, %s"
		 " FROM CUPTI_ACTIVITY_KIND_%s", strcmp(table, "KERNEL") ? "0, NULL" :
		 "demangledName, mangledName", table);
	if (sqlite3_prepare_v2(db, sql, -1, &sel, NULL) != SQLITE_OK)
		goto out;
	while ((step = sqlite3_step(sel)) == SQLITE_ROW) {
		uint32_t pid = xp_gtid_pid(sqlite3_column_int64(sel, 1));
		uint64_t corr = (uint64_t)sqlite3_column_int64(sel, 2);
		int64_t start = sqlite3_column_int64(sel, 3);
		/* wraps instead of overflowing on a corrupt (calibrated) time */
		int64_t dur = (int64_t)((uint64_t)sqlite3_column_int64(sel, 4) - (uint64_t)start);
		size_t i;
		const struct xc_api *a = xc_find_api(in, pid, corr, &i);
		const struct xc_attr *at = a ? &res->api_attr[i] : NULL;
		struct xc_gpu_row row = { .is_kernel = !strcmp(table, "KERNEL"), .dur = dur,
			.name_id = sqlite3_column_int64(sel, 5),
			.mangled_id = sqlite3_column_type(sel, 6) == SQLITE_NULL ? -1 :
				      sqlite3_column_int64(sel, 6),
			.stack_id = at ? at->stack_id : XC_NO_STACK,
			.how = at ? at->how : XC_UNATTRIBUTED,
			.reason = at ? at->reason : XC_NO_API_REASON };

		if (xc_groups_gpu_row(g, &row)) {
			rc = -ENOMEM;
			goto out;
		}
		xc_batch_text(&ins, table);
		xc_batch_int(&ins, sqlite3_column_int64(sel, 0));
		if ((rc = attribution_row(a, at, start, dur, &ins, sum, sk)) < 0 ||
		    (rc = xc_batch_row(&ins)) < 0)
			goto out;
	}
	rc = step == SQLITE_DONE ? xc_batch_flush(&ins) : -EIO;
out:
	sqlite3_finalize(sel);
	xc_batch_free(&ins);
	return rc;
}

/* The launch records the join refused, each with why: few, and what lets a
 * filtered report count the rejections of its own processes and times. */
static int write_rejects(sqlite3 *db, const struct xc_input *in, const struct xc_result *res)
{
	struct xc_batch b;
	int rc = 0;

	xc_batch_init(&b, db, "xp_launch_rejects(launch_rowid, reason)", 2);
	for (size_t i = 0; i < in->n_launches && rc == 0; i++) {
		if (res->launch_reason[i] == XC_OK)
			continue;
		xc_batch_int(&b, in->launches[i].id);
		xc_batch_text(&b, xc_reason_name(res->launch_reason[i]));
		rc = xc_batch_row(&b);
	}
	if (rc == 0)
		rc = xc_batch_flush(&b);
	xc_batch_free(&b);
	return rc;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

static int put_count(sqlite3_stmt *s, const char *reason, uint64_t n)
{
	int rc;

	sqlite3_bind_text(s, 1, reason, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 2, (int64_t)n);
	rc = sqlite3_step(s);
	sqlite3_reset(s);
	return rc == SQLITE_DONE ? 0 : -EIO;
}

static int write_counts(sqlite3 *db, const struct xc_summary *sum)
{
	sqlite3_stmt *c = NULL, *m = NULL;
	int rc = -EIO;

	if (sqlite3_prepare_v2(db, "INSERT INTO xp_correlation_counts(reason, count) VALUES(?,?)",
			       -1, &c, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, "INSERT INTO META_DATA_EXPORT(name, value) VALUES(?,?)",
			       -1, &m, NULL) != SQLITE_OK)
		goto out;
	for (int r = 0; r < XC_REASON_COUNT; r++)
		if (put_count(c, xc_reason_name(r), sum->reasons[r]))
			goto out;
	if (put_count(c, "no API record", sum->no_api) ||
	    put_count(c, "samples inside API calls", sum->samples_in_api) ||
	    put_count(c, "samples out of order", sum->samples_out_of_order))
		goto out;
	if (put_count(m, "xp_clock_skew_kernels", sum->skew_n) ||
	    put_count(m, "xp_clock_skew_negative", sum->skew_negative))
		goto out;
	if (sum->skew_n && (put_count(m, "xp_clock_skew_min_ns", (uint64_t)sum->skew_min_ns) ||
			    put_count(m, "xp_clock_skew_median_ns", (uint64_t)sum->skew_median_ns)))
		goto out;
	rc = 0;
out:
	sqlite3_finalize(c);
	sqlite3_finalize(m);
	return rc;
}

/* The samples read thread by thread and joined to the launches and calls
 * (xc_join); those inside a call are tagged with it. 0 or -errno. */
static int join_samples(sqlite3 *db, struct xc_input *in, struct xc_result *res,
			struct db_iter *it)
{
	int rc = open_samples(db, in, it);

	if (rc < 0)
		return rc;
	xc_batch_init(&it->tag, db, "xp_sample_api(sample_id, api_rowid)", 2);
	in->next_sample = next_sample;
	in->sample_ctx = it;
	in->on_sample_in_api = on_in_api;
	in->in_api_ctx = it;
	rc = xc_join(in, res);
	if (rc == 0)
		rc = xc_batch_flush(&it->tag);
	return rc;
}

/* The kernels' launch-to-start times: the least, the median, how many < 0. */
static void sum_skew(struct skew *sk, struct xc_summary *out)
{
	if (!sk->n)
		return;
	qsort(sk->d, sk->n, sizeof(*sk->d), cmp_i64);
	out->skew_n = sk->n;
	out->skew_min_ns = sk->d[0];
	out->skew_median_ns = sk->n % 2 ? sk->d[sk->n / 2] :
			      (sk->d[sk->n / 2 - 1] + sk->d[sk->n / 2]) / 2;
	for (size_t i = 0; i < sk->n && sk->d[i] < 0; i++)
		out->skew_negative++;
}

int xc_correlate_db(sqlite3 *db, struct xc_summary *out)
{
	static const char prologue[] =
		"SAVEPOINT xc_correlate;"
		"DELETE FROM xp_attribution; DELETE FROM xp_sample_api;"
		"DELETE FROM xp_correlation_counts;"
		"DELETE FROM xp_report_groups; DELETE FROM xp_report_kernel_stacks;"
		"DELETE FROM xp_report_coverage; DELETE FROM xp_launch_rejects;"
		"DELETE FROM META_DATA_EXPORT WHERE name LIKE 'xp_clock_skew%'"
		" OR name = 'xp_report_groups_of';"
		"DROP INDEX IF EXISTS xp_attribution_row;"
		;
	struct xc_input in = { .window_ns = XC_WINDOW_NS, .slack_ns = XC_SLACK_NS };
	struct xc_result res = { 0 };
	struct db_iter it = { 0 };
	struct skew sk = { 0 };
	struct xc_groups groups = { 0 };
	int rc = -EIO;

	memset(out, 0, sizeof(*out));
	if (sqlite3_exec(db, prologue, NULL, NULL, NULL) != SQLITE_OK)
		return -EIO;
	if ((rc = read_launches(db, &in)) < 0 || (rc = read_apis(db, &in, &groups)) < 0)
		goto out;
	if ((rc = join_samples(db, &in, &res, &it)) < 0)
		goto out;
	memcpy(out->reasons, res.reasons, sizeof(out->reasons));
	out->samples_in_api = res.samples_in_api;
	out->samples_out_of_order = res.samples_out_of_order;
	if ((rc = write_rejects(db, &in, &res)) < 0)
		goto out;
	/* the launches and the sample cursor are done: their memory goes before
	 * the GPU rows' (the peak of a big run is in the attribution) */
	close_samples(&it);
	free(in.launches);
	in.launches = NULL;
	in.n_launches = 0;
	free(res.launch_reason);
	res.launch_reason = NULL;
	if ((rc = attribute_table(db, &in, &res, "KERNEL", out, &sk, &groups)) < 0 ||
	    (rc = attribute_table(db, &in, &res, "MEMCPY", out, NULL, &groups)) < 0 ||
	    (rc = attribute_table(db, &in, &res, "MEMSET", out, NULL, &groups)) < 0 ||
	    (rc = xc_groups_write(db, &groups)) < 0)
		goto out;
	sum_skew(&sk, out);
	rc = write_counts(db, out);
	/* built after the rows: the report joins GPU rows to their attribution */
	if (rc == 0 && sqlite3_exec(db, XP_SQL_ATTRIBUTION_INDEX, NULL, NULL, NULL) != SQLITE_OK)
		rc = -EIO;
out:
	close_samples(&it);
	xc_batch_free(&it.tag);
	free(in.launches);
	free(in.apis);
	free(sk.d);
	xc_groups_free(&groups);
	xc_result_free(&res);
	if (rc < 0) {
		/* keep sqlite3_errmsg for the caller: roll back without clobbering it
		 * only if the failure was not SQLite's own */
		sqlite3_exec(db, "ROLLBACK TO xc_correlate; RELEASE xc_correlate;", NULL, NULL, NULL);
		return rc;
	}
	return sqlite3_exec(db, "RELEASE xc_correlate;", NULL, NULL, NULL) == SQLITE_OK ? 0 : -EIO;
}

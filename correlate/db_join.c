/* db_join.c - the database glue of the correlation join: arrays in, the
 * pure xc_join (join.c), rows out. Linear in rows apart from two sorts and
 * one binary search per GPU row; samples come in one table scan, bucketed
 * per thread that made API calls (memory: 24 bytes per such sample).
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

#include "db_join.h"

/* Samples of the threads that made API calls, bucketed per thread in one
 * table scan (rowid order, which is about time order), then sorted per
 * thread where needed: an index on (pid, tid, ts) over 10 million rows
 * cost 3x the whole join (bench/correlate-bench). */
static int grow(void **arr, size_t *cap, size_t n, size_t elem);

struct tsample {
	uint64_t ts;
	int64_t id;
	int64_t stack_id;
};

struct thread_bucket {
	uint64_t key;               /* pid << 32 | tid */
	struct tsample *s;
	size_t n, cap;
	int sorted;                 /* appended in ts order so far */
};

struct db_iter {
	struct thread_bucket *t;    /* sorted by key */
	size_t nt;
	size_t ti, si;              /* iteration cursor */
	sqlite3_stmt *tag;          /* INSERT INTO xp_sample_api */
};

static int cmp_u64p(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

static int cmp_tsample(const void *a, const void *b)
{
	const struct tsample *x = a, *y = b;

	return (x->ts > y->ts) - (x->ts < y->ts);
}

static struct thread_bucket *find_thread(struct db_iter *it, uint64_t key)
{
	size_t lo = 0, hi = it->nt;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (it->t[mid].key < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < it->nt && it->t[lo].key == key ? &it->t[lo] : NULL;
}

static int load_samples(sqlite3 *db, const struct xc_input *in, struct db_iter *it)
{
	sqlite3_stmt *sel;
	uint64_t *keys, last_key = UINT64_MAX;
	struct thread_bucket *b = NULL;
	size_t nk = 0;
	int rc;

	keys = malloc((in->n_apis ? in->n_apis : 1) * sizeof(*keys));
	if (!keys)
		return -ENOMEM;
	for (size_t i = 0; i < in->n_apis; i++)
		keys[i] = (uint64_t)in->apis[i].pid << 32 | in->apis[i].tid;
	if (in->n_apis)
		qsort(keys, in->n_apis, sizeof(*keys), cmp_u64p);
	for (size_t i = 0; i < in->n_apis; i++)
		if (!nk || keys[nk - 1] != keys[i])
			keys[nk++] = keys[i];
	it->t = calloc(nk ? nk : 1, sizeof(*it->t));
	if (!it->t) {
		free(keys);
		return -ENOMEM;
	}
	for (size_t i = 0; i < nk; i++)
		it->t[i] = (struct thread_bucket){ .key = keys[i], .sorted = 1 };
	it->nt = nk;
	free(keys);
	if (!nk)
		return 0;
	if (sqlite3_prepare_v2(db, "SELECT id, ts, pid, tid, stack_id FROM xp_samples", -1, &sel,
			       NULL) != SQLITE_OK)
		return -EIO;
	while ((rc = sqlite3_step(sel)) == SQLITE_ROW) {
		uint64_t key = (uint64_t)sqlite3_column_int64(sel, 2) << 32 |
			       (uint32_t)sqlite3_column_int64(sel, 3);
		struct tsample *t;

		if (key != last_key) {
			b = find_thread(it, key);
			last_key = key;
		}
		if (!b)
			continue;
		if (grow((void **)&b->s, &b->cap, b->n, sizeof(*b->s))) {
			sqlite3_finalize(sel);
			return -ENOMEM;
		}
		t = &b->s[b->n];
		t->id = sqlite3_column_int64(sel, 0);
		t->ts = (uint64_t)sqlite3_column_int64(sel, 1);
		t->stack_id = sqlite3_column_type(sel, 4) == SQLITE_NULL ? XC_NO_STACK :
			      sqlite3_column_int64(sel, 4);
		if (b->n && t->ts < b->s[b->n - 1].ts)
			b->sorted = 0;
		b->n++;
	}
	sqlite3_finalize(sel);
	if (rc != SQLITE_DONE)
		return -EIO;
	for (size_t i = 0; i < nk; i++)
		if (!it->t[i].sorted)
			qsort(it->t[i].s, it->t[i].n, sizeof(*it->t[i].s), cmp_tsample);
	return 0;
}

static int next_sample(void *ctx, struct xc_sample *out)
{
	struct db_iter *it = ctx;

	while (it->ti < it->nt && it->si == it->t[it->ti].n) {
		it->ti++;
		it->si = 0;
	}
	if (it->ti == it->nt)
		return 0;
	const struct thread_bucket *b = &it->t[it->ti];
	const struct tsample *t = &b->s[it->si++];

	*out = (struct xc_sample){ .ts = t->ts, .pid = (uint32_t)(b->key >> 32),
				   .tid = (uint32_t)b->key, .stack_id = t->stack_id, .id = t->id };
	return 1;
}

static void free_samples(struct db_iter *it)
{
	for (size_t i = 0; i < it->nt; i++)
		free(it->t[i].s);
	free(it->t);
}

static int on_in_api(void *ctx, const struct xc_sample *s, const struct xc_api *a)
{
	struct db_iter *it = ctx;
	int rc;

	sqlite3_bind_int64(it->tag, 1, s->id);
	sqlite3_bind_int64(it->tag, 2, a->id);
	rc = sqlite3_step(it->tag);
	sqlite3_reset(it->tag);
	return rc == SQLITE_DONE ? 0 : -EIO;
}

/* Grows *arr (of elem bytes) to hold n + 1. */
static int grow(void **arr, size_t *cap, size_t n, size_t elem)
{
	void *p;

	if (n < *cap)
		return 0;
	*cap = *cap ? *cap * 2 : 4096;
	p = realloc(*arr, *cap * elem);
	if (!p)
		return -ENOMEM;
	*arr = p;
	return 0;
}

static int read_launches(sqlite3 *db, struct xc_input *in)
{
	sqlite3_stmt *s;
	size_t cap = 0;
	int rc;

	if (sqlite3_prepare_v2(db, "SELECT ts, correlation_id, pid, tid, stack_id FROM xp_launches",
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
				    sqlite3_column_int64(s, 4) };
	}
	sqlite3_finalize(s);
	return rc == SQLITE_DONE ? 0 : -EIO;
}

static int read_apis(sqlite3 *db, struct xc_input *in)
{
	sqlite3_stmt *s;
	size_t cap = 0;
	int rc;

	if (sqlite3_prepare_v2(db, "SELECT rowid, start, end, correlationId, globalTid"
			       " FROM CUPTI_ACTIVITY_KIND_RUNTIME", -1, &s, NULL) != SQLITE_OK)
		return -EIO;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		int64_t gt = sqlite3_column_int64(s, 4);

		if (grow((void **)&in->apis, &cap, in->n_apis, sizeof(*in->apis))) {
			sqlite3_finalize(s);
			return -ENOMEM;
		}
		in->apis[in->n_apis++] = (struct xc_api){
			.id = sqlite3_column_int64(s, 0),
			.start = (uint64_t)sqlite3_column_int64(s, 1),
			.end = (uint64_t)sqlite3_column_int64(s, 2),
			.corr = (uint64_t)sqlite3_column_int64(s, 3),
			.pid = (uint32_t)(gt >> 24), .tid = (uint32_t)(gt & 0xffffff) };
	}
	sqlite3_finalize(s);
	return rc == SQLITE_DONE ? 0 : -EIO;
}

static const char *how_name(uint8_t how)
{
	return how == XC_EXACT ? "exact" : how == XC_INFERRED ? "inferred" : "none";
}

struct skew {
	int64_t *d;
	size_t n, cap;
};

/* Attributes every row of one GPU table through its API call. */
static int attribute_table(sqlite3 *db, const struct xc_input *in, const struct xc_result *res,
			   const char *table, struct xc_summary *sum, struct skew *sk)
{
	char sql[160];
	sqlite3_stmt *sel = NULL, *ins = NULL;
	int rc = -EIO, step;

	snprintf(sql, sizeof(sql), "SELECT rowid, globalPid, correlationId, start, end"
		 " FROM CUPTI_ACTIVITY_KIND_%s", table);
	if (sqlite3_prepare_v2(db, sql, -1, &sel, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, "INSERT INTO xp_attribution(gpu_table, gpu_rowid, api_rowid,"
			       " stack_id, how, reason, distance_ns) VALUES(?,?,?,?,?,?,?)",
			       -1, &ins, NULL) != SQLITE_OK)
		goto out;
	sqlite3_bind_text(ins, 1, table, -1, SQLITE_STATIC);
	while ((step = sqlite3_step(sel)) == SQLITE_ROW) {
		uint32_t pid = (uint32_t)(sqlite3_column_int64(sel, 1) >> 24);
		uint64_t corr = (uint64_t)sqlite3_column_int64(sel, 2);
		int64_t start = sqlite3_column_int64(sel, 3);
		/* wraps instead of overflowing on a corrupt (calibrated) time */
		int64_t dur = (int64_t)((uint64_t)sqlite3_column_int64(sel, 4) - (uint64_t)start);
		size_t i;
		const struct xc_api *a = xc_find_api(in, pid, corr, &i);
		const struct xc_attr *at = a ? &res->api_attr[i] : NULL;

		sqlite3_bind_int64(ins, 2, sqlite3_column_int64(sel, 0));
		sum->gpu_rows++;
		sum->gpu_ns += dur;
		if (!at) {
			sum->no_api++;
			sum->rows_none++;
			sum->ns_none += dur;
			sqlite3_bind_null(ins, 3);
			sqlite3_bind_null(ins, 4);
			sqlite3_bind_text(ins, 5, "none", -1, SQLITE_STATIC);
			sqlite3_bind_text(ins, 6, "no API record", -1, SQLITE_STATIC);
			sqlite3_bind_int64(ins, 7, 0);
		} else {
			if (at->how == XC_EXACT) {
				sum->rows_exact++;
				sum->ns_exact += dur;
			} else if (at->how == XC_INFERRED) {
				sum->rows_inferred++;
				sum->ns_inferred += dur;
			} else {
				sum->rows_none++;
				sum->ns_none += dur;
			}
			sqlite3_bind_int64(ins, 3, a->id);
			if (at->stack_id == XC_NO_STACK)
				sqlite3_bind_null(ins, 4);
			else
				sqlite3_bind_int64(ins, 4, at->stack_id);
			sqlite3_bind_text(ins, 5, how_name(at->how), -1, SQLITE_STATIC);
			sqlite3_bind_text(ins, 6, xc_reason_name(at->reason), -1, SQLITE_STATIC);
			sqlite3_bind_int64(ins, 7, at->distance_ns);
			if (sk && start > 0) {
				if (grow((void **)&sk->d, &sk->cap, sk->n, sizeof(*sk->d))) {
					rc = -ENOMEM;
					goto out;
				}
				sk->d[sk->n++] = start - (int64_t)a->start;
			}
		}
		if (sqlite3_step(ins) != SQLITE_DONE)
			goto out;
		sqlite3_reset(ins);
	}
	rc = step == SQLITE_DONE ? 0 : -EIO;
out:
	sqlite3_finalize(sel);
	sqlite3_finalize(ins);
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

int xc_correlate_db(sqlite3 *db, struct xc_summary *out)
{
	static const char prologue[] =
		"SAVEPOINT xc_correlate;"
		"DELETE FROM xp_attribution; DELETE FROM xp_sample_api;"
		"DELETE FROM xp_correlation_counts;"
		"DELETE FROM META_DATA_EXPORT WHERE name LIKE 'xp_clock_skew%';"
		"DROP INDEX IF EXISTS xp_attribution_row;"
		;
	struct xc_input in = { .window_ns = XC_WINDOW_NS, .slack_ns = XC_SLACK_NS };
	struct xc_result res = { 0 };
	struct db_iter it = { 0 };
	struct skew sk = { 0 };
	int rc = -EIO;

	memset(out, 0, sizeof(*out));
	if (sqlite3_exec(db, prologue, NULL, NULL, NULL) != SQLITE_OK)
		return -EIO;
	if ((rc = read_launches(db, &in)) < 0 || (rc = read_apis(db, &in)) < 0)
		goto out;
	if ((rc = load_samples(db, &in, &it)) < 0)
		goto out;
	rc = -EIO;
	if (sqlite3_prepare_v2(db, "INSERT INTO xp_sample_api(sample_id, api_rowid) VALUES(?,?)",
			       -1, &it.tag, NULL) != SQLITE_OK)
		goto out;
	in.next_sample = next_sample;
	in.sample_ctx = &it;
	in.on_sample_in_api = on_in_api;
	in.in_api_ctx = &it;
	rc = xc_join(&in, &res);
	if (rc < 0)
		goto out;
	memcpy(out->reasons, res.reasons, sizeof(out->reasons));
	out->samples_in_api = res.samples_in_api;
	out->samples_out_of_order = res.samples_out_of_order;
	if ((rc = attribute_table(db, &in, &res, "KERNEL", out, &sk)) < 0 ||
	    (rc = attribute_table(db, &in, &res, "MEMCPY", out, NULL)) < 0 ||
	    (rc = attribute_table(db, &in, &res, "MEMSET", out, NULL)) < 0)
		goto out;
	if (sk.n) {
		qsort(sk.d, sk.n, sizeof(*sk.d), cmp_i64);
		out->skew_n = sk.n;
		out->skew_min_ns = sk.d[0];
		out->skew_median_ns = sk.n % 2 ? sk.d[sk.n / 2] :
				      (sk.d[sk.n / 2 - 1] + sk.d[sk.n / 2]) / 2;
		for (size_t i = 0; i < sk.n && sk.d[i] < 0; i++)
			out->skew_negative++;
	}
	rc = write_counts(db, out);
	/* built after the rows: the report joins GPU rows to their attribution */
	if (rc == 0 && sqlite3_exec(db, "CREATE INDEX xp_attribution_row ON xp_attribution(gpu_table,"
				    " gpu_rowid)", NULL, NULL, NULL) != SQLITE_OK)
		rc = -EIO;
out:
	free_samples(&it);
	sqlite3_finalize(it.tag);
	free(in.launches);
	free(in.apis);
	free(sk.d);
	xc_result_free(&res);
	if (rc < 0) {
		/* keep sqlite3_errmsg for the caller: roll back without clobbering it
		 * only if the failure was not SQLite's own */
		sqlite3_exec(db, "ROLLBACK TO xc_correlate; RELEASE xc_correlate;", NULL, NULL, NULL);
		return rc;
	}
	return sqlite3_exec(db, "RELEASE xc_correlate;", NULL, NULL, NULL) == SQLITE_OK ? 0 : -EIO;
}

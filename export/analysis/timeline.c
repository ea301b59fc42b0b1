/* timeline.c - a device's GPU work as a timeline (timeline.h). */
#include "export/analysis/timeline.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/array.h"
#include "db/db_schema.h"
#include "db/dbtask.h"
#include "src/gtid.h"
#include "src/u64map.h"

/* Collectives of a job: for each collective kernel, how long it ran before
 * the last rank started the same one (its k-th launch of that name), into
 * waits: kernel rowid -> index + 1 of a (wait, late pid) pair. */
static int rank_waits(sqlite3 *db, struct xp_u64map *waits, int64_t (**pairs)[2], size_t *np)
{
	static const char sql[] =
		"WITH c AS (" XP_SQL_COLL_KERNELS "),"
		" m AS (SELECT id, gp, start, max(start) OVER w AS last, count(*) OVER w AS cnt,"
		" first_value(gp) OVER (PARTITION BY nm, i ORDER BY start DESC, gp) AS lgp FROM c"
		" WINDOW w AS (PARTITION BY nm, i))"
		" SELECT id, last - start, lgp >> 24 FROM m WHERE last > start"
		" AND cnt = (SELECT count(DISTINCT pid) FROM xp_ranks)";
	size_t cap = 0;
	sqlite3_stmt *s;
	int step, fresh;

	if (!xp_db_has_table(db, "xp_ranks"))
		return 0;
	if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK)
		return -EIO;
	while ((step = sqlite3_step(s)) == SQLITE_ROW) {
		uint64_t *slot;

		if (xp_array__reserve((void **)pairs, &cap, *np + 1, sizeof(**pairs), 64) ||
		    xp_u64map_upsert(waits, (uint64_t)sqlite3_column_int64(s, 0), 0, &slot, &fresh)) {
			sqlite3_finalize(s);
			return -ENOMEM;
		}
		(*pairs)[*np][0] = sqlite3_column_int64(s, 1);
		(*pairs)[*np][1] = sqlite3_column_int64(s, 2);
		*slot = ++*np;
	}
	sqlite3_finalize(s);
	return step == SQLITE_DONE ? 0 : -EIO;
}

/* Rows found by rowid: an array indexed by rowid where the rowids are dense
 * (as ingest writes them: 1..N), else (a database from elsewhere) a map. */
struct rowidx {
	uint32_t *at;               /* rowid -> index + 1, 0 none */
	size_t n;
	struct xp_u64map map;
};

static int rowidx_put(struct rowidx *x, int64_t rowid, uint64_t k2, size_t index);

/* The index of n rows read: rowid[i] (and k2[i], the table; NULL: all 0)
 * finds row i, a later row of the same key replacing an earlier one. Built
 * after the scan, so that the rows read say whether they are dense (no
 * count(*) over the table before). 0 or -ENOMEM. */
static int rowidx_build(struct rowidx *x, const int64_t *rowid, const int *k2, size_t n)
{
	int64_t max = -1;
	size_t count = 0;

	memset(x, 0, sizeof(*x));
	xp_u64map_init(&x->map);
	for (size_t i = 0; i < n; i++)
		if ((!k2 || !k2[i]) && rowid[i] >= 0) {
			max = rowid[i] > max ? rowid[i] : max;
			count++;
		}
	if (max >= 0 && (uint64_t)max <= 2 * (uint64_t)count + 1024 && max < UINT32_MAX) {
		x->n = (size_t)max + 1;
		if (!(x->at = calloc(x->n, sizeof(*x->at))))
			return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		if (rowidx_put(x, rowid[i], k2 ? (uint64_t)k2[i] : 0, i) < 0)
			return -ENOMEM;
	return 0;
}

static int rowidx_put(struct rowidx *x, int64_t rowid, uint64_t k2, size_t index)
{
	uint64_t *slot;
	int fresh;

	if (x->at && !k2 && rowid >= 0 && (size_t)rowid < x->n && index < UINT32_MAX) {
		x->at[rowid] = (uint32_t)(index + 1);
		return 0;
	}
	if (xp_u64map_upsert(&x->map, (uint64_t)rowid, k2, &slot, &fresh))
		return -ENOMEM;
	*slot = index + 1;
	return 0;
}

/* index + 1, or 0 */
static uint64_t rowidx_get(const struct rowidx *x, int64_t rowid, uint64_t k2)
{
	const uint64_t *v;

	if (x->at && !k2 && rowid >= 0 && (size_t)rowid < x->n && x->at[rowid])
		return x->at[rowid];
	v = x->map.count ? xp_u64map_find(&x->map, (uint64_t)rowid, k2) : NULL;
	return v ? *v : 0;
}

static void rowidx_free(struct rowidx *x)
{
	free(x->at);
	xp_u64map_free(&x->map);
}

/* What one pass over the tables gathers before the ops are put together:
 * the CUDA calls and the attribution, each found by rowid. */
struct tl_load {
	sqlite3 *db;
	struct xp_tl_set *set;
	struct rowidx api_at;       /* CUDA call rowid -> index + 1 into set->api */
	struct rowidx attr_at;      /* kernels' rowids (copies, sets: the table in k2) -> into attr */
	struct xp_u64map coll;      /* collective kernel name ids */
	struct xp_u64map waits;     /* kernel rowid -> index + 1 into wait */
	int64_t (*attr)[2];         /* (api rowid or -1, stack or -1) */
	int64_t *api_rowid, *attr_rowid;    /* the rows' keys, until the indexes are built */
	int *attr_table;
	size_t api_key_cap, attr_key_cap, attr_table_cap;
	int64_t (*wait)[2];
	size_t nattr, attr_cap, nwait;
	size_t last_dev;            /* the device of the row before: rows come by device */
	struct xp_db_task *calls;   /* scans the CUDA calls meanwhile */
};

static int step_rows(sqlite3 *db, const char *sql, int (*row)(struct tl_load *L, sqlite3_stmt *s),
		     struct tl_load *L)
{
	sqlite3_stmt *s;
	int step, rc = 0;

	if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK)
		return -EIO;
	while (!rc && (step = sqlite3_step(s)) == SQLITE_ROW)
		rc = row(L, s);
	sqlite3_finalize(s);
	return rc ? rc : step == SQLITE_DONE ? 0 : -EIO;
}

static int api_row(struct tl_load *L, sqlite3_stmt *s)
{
	struct xp_tl_set *S = L->set;

	if (xp_array__reserve((void **)&S->api, &S->api_cap, S->napi + 1, sizeof(*S->api), 1024) ||
	    xp_array__reserve((void **)&L->api_rowid, &L->api_key_cap, S->napi + 1,
			      sizeof(*L->api_rowid), 1024))
		return -ENOMEM;
	L->api_rowid[S->napi] = sqlite3_column_int64(s, 0);
	S->api[S->napi++] = (struct xp_tl_api){ sqlite3_column_int64(s, 1), sqlite3_column_int64(s, 2),
						sqlite3_column_int64(s, 3), sqlite3_column_int64(s, 4),
						-1, sqlite3_column_int64(s, 5) };
	return 0;
}

static int attr_row(struct tl_load *L, sqlite3_stmt *s)
{
	if (xp_array__reserve((void **)&L->attr, &L->attr_cap, L->nattr + 1, sizeof(*L->attr), 1024) ||
	    xp_array__reserve((void **)&L->attr_rowid, &L->attr_key_cap, L->nattr + 1,
			      sizeof(*L->attr_rowid), 1024) ||
	    xp_array__reserve((void **)&L->attr_table, &L->attr_table_cap, L->nattr + 1,
			      sizeof(*L->attr_table), 1024))
		return -ENOMEM;
	L->attr_rowid[L->nattr] = sqlite3_column_int64(s, 1);
	L->attr_table[L->nattr] = sqlite3_column_int(s, 0);
	L->attr[L->nattr][0] = sqlite3_column_int64(s, 2);
	L->attr[L->nattr++][1] = sqlite3_column_int64(s, 3);
	return 0;
}

static int coll_row(struct tl_load *L, sqlite3_stmt *s)
{
	uint64_t *slot;
	int fresh;

	return xp_u64map_upsert(&L->coll, (uint64_t)sqlite3_column_int64(s, 0), 0, &slot, &fresh) ?
	       -ENOMEM : 0;
}

static struct xp_tl *device_of(struct tl_load *L, int64_t gpid, int64_t device)
{
	struct xp_tl_set *S = L->set;
	size_t last = L->last_dev;

	if (last < S->ndev && S->dev[last].gpid == gpid && S->dev[last].device == device)
		return &S->dev[last];
	for (last = 0; last < S->ndev; last++)
		if (S->dev[last].gpid == gpid && S->dev[last].device == device) {
			L->last_dev = last;
			return &S->dev[last];
		}
	if (xp_array__reserve((void **)&S->dev, &S->dev_cap, S->ndev + 1, sizeof(*S->dev), 8))
		return NULL;
	S->dev[S->ndev] = (struct xp_tl){ .gpid = gpid, .device = device };
	L->last_dev = S->ndev;
	return &S->dev[S->ndev++];
}

/* One kernel, copy or set: its call and stack through the maps. Columns:
 * table code, rowid, globalPid, deviceId, start, end, streamId, name. */
static int gpu_row(struct tl_load *L, sqlite3_stmt *s)
{
	int table = sqlite3_column_int(s, 0);
	int64_t rowid = sqlite3_column_int64(s, 1), name = sqlite3_column_int64(s, 7);
	struct xp_tl *tl = device_of(L, sqlite3_column_int64(s, 2), sqlite3_column_int64(s, 3));
	uint64_t a = rowidx_get(&L->attr_at, rowid, (uint64_t)table), *w;
	struct xp_tl_op *op;

	if (!tl || xp_array__reserve((void **)&tl->ops, &tl->cap, tl->n + 1, sizeof(*tl->ops), 1024))
		return -ENOMEM;
	op = &tl->ops[tl->n++];
	*op = (struct xp_tl_op){ .start = sqlite3_column_int64(s, 4), .end = sqlite3_column_int64(s, 5),
				 .stream = sqlite3_column_int64(s, 6), .name = table ? -1 : name,
				 .launch = -1, .launch_end = -1, .gtid = -1, .stack = -1,
				 .api_name = -1, .late_pid = -1,
				 .cls = table ? XP_TL_MEM : xp_u64map_find(&L->coll, (uint64_t)name, 0) ?
					XP_TL_COMM : XP_TL_COMPUTE };
	if (a) {
		op->stack = L->attr[a - 1][1];
		op->launch = L->attr[a - 1][0];     /* the call's rowid, until join_calls */
	}
	if (op->cls == XP_TL_COMM && (w = xp_u64map_find(&L->waits, (uint64_t)rowid, 0))) {
		op->wait = L->wait[*w - 1][0];
		op->late_pid = L->wait[*w - 1][1];
	}
	return 0;
}

static int cmp_op(const void *pa, const void *pb)
{
	const struct xp_tl_op *a = pa, *b = pb;

	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return a->end < b->end ? -1 : a->end > b->end;
}

static int cmp_dev(const void *pa, const void *pb)
{
	const struct xp_tl *a = pa, *b = pb;

	if (a->gpid != b->gpid)
		return a->gpid < b->gpid ? -1 : 1;
	return a->device < b->device ? -1 : a->device > b->device;
}

void xp_tl_device_name(int64_t device, char *out, size_t len)
{
	if (device == XP_TL_HOST_ONLY)
		snprintf(out, len, "host only (no GPU work)");
	else
		snprintf(out, len, "device %lld", (long long)device);
}

struct xp_tl *xp_tl_add_host(struct xp_tl_set *set, int64_t gpid)
{
	struct xp_tl add = { .gpid = gpid, .device = XP_TL_HOST_ONLY };
	size_t at = 0;

	if (xp_array__reserve((void **)&set->dev, &set->dev_cap, set->ndev + 1, sizeof(*set->dev), 8))
		return NULL;
	while (at < set->ndev && cmp_dev(&set->dev[at], &add) < 0)
		at++;
	memmove(&set->dev[at + 1], &set->dev[at], (set->ndev - at) * sizeof(*set->dev));
	set->dev[at] = add;
	set->ndev++;
	return &set->dev[at];
}

/* The ops by start (a device's rows mostly come so already: the sort is
 * skipped then), and how far each prefix reaches, so that a sweep of a
 * later window starts at its first op, not at the run's. 0 or -ENOMEM. */
static int order_ops(struct xp_tl *tl)
{
	size_t i = 1;

	while (i < tl->n && cmp_op(&tl->ops[i - 1], &tl->ops[i]) <= 0)
		i++;
	if (i < tl->n)
		qsort(tl->ops, tl->n, sizeof(*tl->ops), cmp_op);
	if (tl->n && !(tl->reach = malloc(tl->n * sizeof(*tl->reach))))
		return -ENOMEM;
	for (i = 0; i < tl->n; i++)
		tl->reach[i] = i && tl->reach[i - 1] > tl->ops[i].end ? tl->reach[i - 1] : tl->ops[i].end;
	return 0;
}

static const char calls_sql[] = "SELECT rowid, start, end, globalTid, nameId,"
				 " ifnull(correlationId, -1) FROM CUPTI_ACTIVITY_KIND_RUNTIME";

/* The CUDA calls (a task: dbtask.h). */
static int scan_calls(sqlite3 *db, void *arg)
{
	return step_rows(db, calls_sql, api_row, arg);
}

/* Each op's CUDA call (op->launch holds its rowid until now), once the
 * calls are read. 0 or -errno. */
static int join_calls(struct tl_load *L)
{
	struct xp_tl_set *S = L->set;
	int rc = xp_db_task_join(L->calls);

	L->calls = NULL;
	if (rc < 0 || (rc = rowidx_build(&L->api_at, L->api_rowid, NULL, S->napi)) < 0)
		return rc;
	for (size_t d = 0; d < S->ndev; d++)
		for (size_t i = 0; i < S->dev[d].n; i++) {
			struct xp_tl_op *op = &S->dev[d].ops[i];
			uint64_t c = op->launch == -1 ? 0 : rowidx_get(&L->api_at, op->launch, 0);

			op->launch = c ? S->api[c - 1].start : -1;
			if (c) {
				op->launch_end = S->api[c - 1].end;
				op->gtid = S->api[c - 1].gtid;
				op->api_name = S->api[c - 1].name;
			}
		}
	return 0;
}

/* rows without timestamps (the device's buffer was full) cannot be placed */
#define TIMED " WHERE (xp_flags & 1) = 0 AND end >= start AND globalPid IS NOT NULL"

int xp_tl_load_all(sqlite3 *db, struct xp_tl_set *set)
{
	struct tl_load L = { .db = db, .set = set };
	int rc;

	memset(set, 0, sizeof(*set));
	xp_u64map_init(&L.coll);
	xp_u64map_init(&L.waits);
	/* the calls and the work are two scans of about a third of the time each */
	if ((rc = xp_db_task_start(db, scan_calls, &L, &L.calls)) < 0 ||
	    (rc = step_rows(db, "SELECT id FROM StringIds WHERE " XP_SQL_IS_COLLECTIVE("value"),
			    coll_row, &L)) < 0 ||
	    /* no collective's name in the run: no kernel to match across ranks */
	    (L.coll.count && (rc = rank_waits(db, &L.waits, &L.wait, &L.nwait)) < 0) ||
	    (rc = step_rows(db, "SELECT CASE gpu_table WHEN 'KERNEL' THEN 0 WHEN 'MEMCPY' THEN 1"
			    " ELSE 2 END, gpu_rowid, ifnull(api_rowid, -1), ifnull(stack_id, -1)"
			    " FROM xp_attribution", attr_row, &L)) < 0 ||
	    (rc = rowidx_build(&L.attr_at, L.attr_rowid, L.attr_table, L.nattr)) < 0 ||
	    (rc = step_rows(db, "SELECT 0, rowid, globalPid, deviceId, start, end, streamId,"
			    " demangledName FROM CUPTI_ACTIVITY_KIND_KERNEL" TIMED, gpu_row, &L)) < 0 ||
	    (rc = step_rows(db, "SELECT 1, rowid, globalPid, deviceId, start, end, streamId, -1"
			    " FROM CUPTI_ACTIVITY_KIND_MEMCPY" TIMED, gpu_row, &L)) < 0 ||
	    (rc = step_rows(db, "SELECT 2, rowid, globalPid, deviceId, start, end, streamId, -1"
			    " FROM CUPTI_ACTIVITY_KIND_MEMSET" TIMED, gpu_row, &L)) < 0 ||
	    (rc = join_calls(&L)) < 0)
		goto out;
	for (size_t i = 0; i < set->ndev && rc == 0; i++)
		rc = order_ops(&set->dev[i]);
	if (rc == 0 && set->ndev)
		qsort(set->dev, set->ndev, sizeof(*set->dev), cmp_dev);
out:
	xp_db_task_drop(L.calls);       /* (joined already, unless an error came first) */
	rowidx_free(&L.api_at);
	rowidx_free(&L.attr_at);
	xp_u64map_free(&L.coll);
	xp_u64map_free(&L.waits);
	free(L.attr);
	free(L.wait);
	free(L.api_rowid);
	free(L.attr_rowid);
	free(L.attr_table);
	if (rc < 0)
		xp_tl_set_free(set);
	return rc;
}

void xp_tl_set_free(struct xp_tl_set *set)
{
	for (size_t i = 0; i < set->ndev; i++) {
		free(set->dev[i].ops);
		free(set->dev[i].reach);
	}
	free(set->dev);
	free(set->api);
	memset(set, 0, sizeof(*set));
}

int xp_tl_selected(int64_t gpid, uint32_t pid)
{
	uint64_t p = (uint64_t)gpid >> 24;

	return !pid || p == pid || xp_pid_local(p) == pid;
}

int xp_tl_rank(sqlite3 *db, int64_t gpid, int64_t *rank)
{
	sqlite3_stmt *s;
	int rc;

	*rank = -1;
	if (!xp_db_has_table(db, "xp_ranks"))
		return 0;
	if (sqlite3_prepare_v2(db, "SELECT rank FROM xp_ranks WHERE pid = ? LIMIT 1", -1, &s, NULL)
	    != SQLITE_OK)
		return -EIO;
	sqlite3_bind_int64(s, 1, gpid >> 24);
	if ((rc = sqlite3_step(s)) == SQLITE_ROW)
		*rank = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : -EIO;
}

static int cmp_i64(const void *pa, const void *pb)
{
	int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;

	return a < b ? -1 : a > b;
}

/* LSD radix sort, 11 bits a pass (6 passes: an even count leaves the
 * values in v), the sign bit flipped so that the unsigned order is the
 * signed one: a 1M-value sort in linear passes where qsort's calls to a
 * comparison took 0.1 s. 0 or -ENOMEM. */
static int radix_sort(int64_t *v, size_t n)
{
	uint64_t *a = (uint64_t *)v, *b = malloc(n * sizeof(*b)), *t;
	size_t count[1 << 11];

	if (!b)
		return -ENOMEM;
	for (int shift = 0; shift < 66; shift += 11) {
		size_t sum = 0;

		memset(count, 0, sizeof(count));
		for (size_t i = 0; i < n; i++)
			count[((a[i] ^ (1ull << 63)) >> shift) & 0x7ff]++;
		for (size_t d = 0; d < 1 << 11; d++) {
			size_t c = count[d];

			count[d] = sum;
			sum += c;
		}
		for (size_t i = 0; i < n; i++)
			b[count[((a[i] ^ (1ull << 63)) >> shift) & 0x7ff]++] = a[i];
		t = a;
		a = b;
		b = t;
	}
	free(b);
	return 0;
}

void xp_tl_sort(int64_t *v, size_t n)
{
	/* small arrays, or no memory for the radix sort's copy: qsort */
	if (n && (n < 4096 || radix_sort(v, n) < 0))
		qsort(v, n, sizeof(*v), cmp_i64);
}

int64_t xp_tl_percentile(const int64_t *sorted, size_t n, double p)
{
	size_t rank;

	if (!n)
		return 0;
	rank = (size_t)(p / 100.0 * (double)n + 0.999999);
	return sorted[rank ? (rank > n ? n : rank) - 1 : 0];
}

size_t xp_tl_first_from(const struct xp_tl *tl, int64_t t)
{
	size_t lo = 0, hi = tl->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (tl->ops[mid].start < t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int xp_tl_in_window(const struct xp_tl *tl, int64_t since, int64_t until)
{
	size_t i = xp_tl_first_from(tl, since);

	return i < tl->n && (!until || tl->ops[i].start < until);
}

struct tl_event {
	int64_t t;
	int delta, cls;
	const struct xp_tl_op *op;
};

static int cmp_event(const void *pa, const void *pb)
{
	const struct tl_event *a = pa, *b = pb;

	return a->t < b->t ? -1 : a->t > b->t;
}

/* A segment waits here until the next one differs in class or op. */
struct tl_pending {
	int64_t a, b;
	int cls;
	const struct xp_tl_op *op;
	xp_tl_segment_fn fn;
	void *ctx;
};

static void emit(struct tl_pending *p, int64_t a, int64_t b, int cls, const struct xp_tl_op *op)
{
	if (b <= a)
		return;
	if (p->b == a && p->cls == cls && p->op == op) {
		p->b = b;
		return;
	}
	if (p->b > p->a)
		p->fn(p->ctx, p->a, p->b, p->cls, p->op);
	*p = (struct tl_pending){ a, b, cls, op, p->fn, p->ctx };
}

static int add_piece(struct tl_event **ev, size_t *n, size_t *cap, int64_t a, int64_t b, int cls,
		     const struct xp_tl_op *op)
{
	if (b <= a)
		return 0;
	if (xp_array__reserve((void **)ev, cap, *n + 2, sizeof(**ev), 1024))
		return -ENOMEM;
	(*ev)[(*n)++] = (struct tl_event){ a, 1, cls, op };
	(*ev)[(*n)++] = (struct tl_event){ b, -1, cls, op };
	return 0;
}

/* The first op still running at w0 or later: reach is sorted. */
static size_t first_reaching(const struct xp_tl *tl, int64_t w0)
{
	size_t lo = 0, hi = tl->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (tl->reach[mid] <= w0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The events by time, those of one time in the order they were added (as
 * a stable sort leaves them: the sweep's choice of op depends on it): as
 * (time - w0, index) packed in one key for the radix sort where both fit,
 * else by a comparison. 0 or -ENOMEM. */
static int order_events(struct tl_event **ev, size_t n, int64_t w0, int64_t w1)
{
	int bits = 1;
	uint64_t *key;
	struct tl_event *out;

	while (bits < 63 && (1ull << bits) < n)
		bits++;
	if (n < 4096 || (uint64_t)w1 - (uint64_t)w0 >= 1ull << (63 - bits)) {
		if (n > 1)      /* none: *ev may be NULL, which qsort must not get */
			qsort(*ev, n, sizeof(**ev), cmp_event);
		return 0;
	}
	if (!(key = malloc(n * sizeof(*key))) || !(out = malloc(n * sizeof(*out)))) {
		free(key);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		key[i] = ((uint64_t)(*ev)[i].t - (uint64_t)w0) << bits | i;
	if (radix_sort((int64_t *)key, n) < 0) {
		free(key);
		free(out);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		out[i] = (*ev)[key[i] & ((1ull << bits) - 1)];
	free(key);
	free(*ev);
	*ev = out;
	return 0;
}

int xp_tl_sweep(const struct xp_tl *tl, int64_t w0, int64_t w1, xp_tl_segment_fn fn, void *ctx)
{
	struct tl_pending p = { .fn = fn, .ctx = ctx };
	const struct xp_tl_op *last[XP_TL_CLASSES] = { 0 };
	int count[XP_TL_CLASSES] = { 0 };
	struct tl_event *ev = NULL;
	size_t n = 0, cap = 0;
	int64_t t = w0;

	for (size_t i = first_reaching(tl, w0); i < tl->n && tl->ops[i].start < w1; i++) {
		const struct xp_tl_op *op = &tl->ops[i];
		int64_t a = op->start < w0 ? w0 : op->start, b = op->end > w1 ? w1 : op->end;
		int64_t split = op->start + op->wait;

		split = split < a ? a : split > b ? b : split;
		/* a host's collective: the GPU's concern is its wait alone */
		if (add_piece(&ev, &n, &cap, a, split, XP_TL_RANK, op) ||
		    (!op->host && add_piece(&ev, &n, &cap, split, b, op->cls, op))) {
			free(ev);
			return -ENOMEM;
		}
	}
	if (order_events(&ev, n, w0, w1) < 0) {
		free(ev);
		return -ENOMEM;
	}
	for (size_t i = 0; i <= n; i++) {
		int64_t at = i < n ? ev[i].t : w1;
		int cls = XP_TL_IDLE;

		for (int c = 0; c < XP_TL_IDLE; c++)
			if (count[c] > 0) {
				cls = c;
				break;
			}
		emit(&p, t, at, cls, cls == XP_TL_IDLE ? NULL : last[cls]);
		t = at;
		if (i == n)
			break;
		count[ev[i].cls] += ev[i].delta;
		if (ev[i].delta > 0)
			last[ev[i].cls] = ev[i].op;
		else if (!count[ev[i].cls])
			last[ev[i].cls] = NULL;
	}
	if (p.b > p.a)
		fn(ctx, p.a, p.b, p.cls, p.op);
	free(ev);
	return 0;
}

int xp_tl_insert(struct xp_tl *tl, const struct xp_tl_op *add, size_t n)
{
	struct xp_tl_op *ops;
	int64_t *reach;
	size_t i, j, k;

	if (!n)
		return 0;
	ops = malloc((tl->n + n) * sizeof(*ops));
	reach = malloc((tl->n + n) * sizeof(*reach));
	if (!ops || !reach) {
		free(ops);
		free(reach);
		return -ENOMEM;
	}
	for (i = j = k = 0; i < tl->n || j < n; k++)
		ops[k] = j >= n || (i < tl->n && tl->ops[i].start <= add[j].start) ? tl->ops[i++] :
			 add[j++];
	for (k = 0; k < tl->n + n; k++)
		reach[k] = k && reach[k - 1] > ops[k].end ? reach[k - 1] : ops[k].end;
	free(tl->ops);
	free(tl->reach);
	tl->ops = ops;
	tl->reach = reach;
	tl->n += n;
	tl->cap = tl->n;
	return 0;
}

int64_t xp_tl_clock_error(sqlite3 *db)
{
	sqlite3_stmt *s;
	int64_t err = 0;

	if (!xp_db_has_table(db, "xp_job_runs") ||
	    sqlite3_prepare_v2(db, "SELECT ifnull(max(spread_ns), 0) FROM xp_job_runs", -1, &s, NULL)
	    != SQLITE_OK)
		return 0;
	if (sqlite3_step(s) == SQLITE_ROW)
		err = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	return err > 0 ? err : 0;
}

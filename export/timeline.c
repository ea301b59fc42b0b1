/* timeline.c - a device's GPU work as a timeline (timeline.h). */
#include "timeline.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "db_schema.h"
#include "u64map.h"

int xp_tl_devices(sqlite3 *db, const char *filter, void (*bind)(void *ctx, sqlite3_stmt *s),
		  void *ctx, int64_t (**out)[2], size_t *n)
{
	char sql[1024];
	sqlite3_stmt *s;
	size_t cap = 0;
	int step;

	*out = NULL;
	*n = 0;
	snprintf(sql, sizeof(sql), "SELECT DISTINCT gp, dev FROM (SELECT globalPid AS gp, deviceId AS dev,"
		 " start FROM CUPTI_ACTIVITY_KIND_KERNEL UNION ALL SELECT globalPid, deviceId, start FROM"
		 " CUPTI_ACTIVITY_KIND_MEMCPY UNION ALL SELECT globalPid, deviceId, start FROM"
		 " CUPTI_ACTIVITY_KIND_MEMSET) WHERE gp IS NOT NULL AND %s ORDER BY 1, 2", filter);
	if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK)
		return -EIO;
	bind(ctx, s);
	while ((step = sqlite3_step(s)) == SQLITE_ROW) {
		if (xp_array__reserve((void **)out, &cap, *n + 1, sizeof(**out), 8)) {
			sqlite3_finalize(s);
			return -ENOMEM;
		}
		(*out)[*n][0] = sqlite3_column_int64(s, 0);
		(*out)[(*n)++][1] = sqlite3_column_int64(s, 1);
	}
	sqlite3_finalize(s);
	return step == SQLITE_DONE ? 0 : -EIO;
}

/* Collectives of a job: for each of this process's collective kernels, how
 * long it ran before the last rank started the same one (its k-th launch of
 * that name), into waits: rowid -> index + 1 of a (wait, late pid) pair. */
static int rank_waits(sqlite3 *db, int64_t gpid, struct xp_u64map *waits, int64_t (**pairs)[2],
		      size_t *np)
{
	static const char sql[] =
		"WITH c AS (SELECT k.rowid AS id, k.globalPid AS gp, k.start AS start,"
		" k.demangledName AS nm, row_number() OVER (PARTITION BY k.globalPid, k.demangledName"
		" ORDER BY k.start) AS i FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds n"
		" ON n.id = k.demangledName WHERE " XP_SQL_IS_COLLECTIVE("n.value")
		" AND (k.globalPid >> 24) IN (SELECT pid FROM xp_ranks)),"
		" m AS (SELECT id, gp, start, max(start) OVER w AS last, count(*) OVER w AS cnt,"
		" first_value(gp) OVER (PARTITION BY nm, i ORDER BY start DESC, gp) AS lgp FROM c"
		" WINDOW w AS (PARTITION BY nm, i))"
		" SELECT id, last - start, lgp >> 24 FROM m WHERE gp = ?1 AND last > start"
		" AND cnt = (SELECT count(DISTINCT pid) FROM xp_ranks)";
	size_t cap = 0;
	sqlite3_stmt *s;
	int step, fresh;

	if (!xp_db_has_table(db, "xp_ranks"))
		return 0;
	if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK)
		return -EIO;
	sqlite3_bind_int64(s, 1, gpid);
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

static const char load_sql[] =
	"SELECT g.start, g.end, ifnull(r.start, -1), ifnull(r.end, -1), ifnull(r.globalTid, -1),"
	" ifnull(a.stack_id, -1), g.name, g.stream, g.cls, g.r, ifnull(r.nameId, -1) FROM"
	" (SELECT 'KERNEL' AS t, k.rowid AS r, k.start, k.end, k.streamId AS stream,"
	"  k.demangledName AS name, CASE WHEN " XP_SQL_IS_COLLECTIVE("n.value") " THEN 1 ELSE 0 END"
	"  AS cls FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds n ON n.id = k.demangledName"
	"  WHERE k.globalPid = ?1 AND k.deviceId = ?2 AND (k.xp_flags & 1) = 0"
	"  UNION ALL SELECT 'MEMCPY', rowid, start, end, streamId, -1, 2 FROM CUPTI_ACTIVITY_KIND_MEMCPY"
	"  WHERE globalPid = ?1 AND deviceId = ?2 AND (xp_flags & 1) = 0"
	"  UNION ALL SELECT 'MEMSET', rowid, start, end, streamId, -1, 2 FROM CUPTI_ACTIVITY_KIND_MEMSET"
	"  WHERE globalPid = ?1 AND deviceId = ?2 AND (xp_flags & 1) = 0) g"
	" LEFT JOIN xp_attribution a ON a.gpu_table = g.t AND a.gpu_rowid = g.r"
	" LEFT JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON r.rowid = a.api_rowid"
	" WHERE g.end >= g.start ORDER BY g.start, g.end";

int xp_tl_load(sqlite3 *db, int64_t gpid, int64_t device, struct xp_tl *tl)
{
	struct xp_u64map waits;
	int64_t (*pairs)[2] = NULL;
	size_t np = 0, cap = 0;
	sqlite3_stmt *s = NULL;
	int step = SQLITE_DONE, rc;

	memset(tl, 0, sizeof(*tl));
	tl->gpid = gpid;
	tl->device = device;
	xp_u64map_init(&waits);
	if ((rc = rank_waits(db, gpid, &waits, &pairs, &np)) < 0)
		goto out;
	rc = -EIO;
	if (sqlite3_prepare_v2(db, load_sql, -1, &s, NULL) != SQLITE_OK)
		goto out;
	sqlite3_bind_int64(s, 1, gpid);
	sqlite3_bind_int64(s, 2, device);
	while ((step = sqlite3_step(s)) == SQLITE_ROW) {
		struct xp_tl_op *op;
		uint64_t *w;

		if (xp_array__reserve((void **)&tl->ops, &cap, tl->n + 1, sizeof(*tl->ops), 1024)) {
			rc = -ENOMEM;
			goto out;
		}
		op = &tl->ops[tl->n++];
		*op = (struct xp_tl_op){
			.start = sqlite3_column_int64(s, 0), .end = sqlite3_column_int64(s, 1),
			.launch = sqlite3_column_int64(s, 2), .launch_end = sqlite3_column_int64(s, 3),
			.gtid = sqlite3_column_int64(s, 4), .stack = sqlite3_column_int64(s, 5),
			.name = sqlite3_column_int64(s, 6), .stream = sqlite3_column_int64(s, 7),
			.cls = sqlite3_column_int(s, 8), .late_pid = -1,
			.api_name = sqlite3_column_int64(s, 10) };
		if (op->cls == XP_TL_COMM &&
		    (w = xp_u64map_find(&waits, (uint64_t)sqlite3_column_int64(s, 9), 0))) {
			op->wait = pairs[*w - 1][0];
			op->late_pid = pairs[*w - 1][1];
		}
	}
	rc = step == SQLITE_DONE ? 0 : -EIO;
out:
	sqlite3_finalize(s);
	xp_u64map_free(&waits);
	free(pairs);
	if (rc < 0)
		xp_tl_free(tl);
	return rc;
}

void xp_tl_free(struct xp_tl *tl)
{
	free(tl->ops);
	tl->ops = NULL;
	tl->n = 0;
}

int64_t xp_tl_rank(sqlite3 *db, int64_t gpid)
{
	sqlite3_stmt *s;
	int64_t rank = -1;

	if (!xp_db_has_table(db, "xp_ranks") ||
	    sqlite3_prepare_v2(db, "SELECT rank FROM xp_ranks WHERE pid = ? LIMIT 1", -1, &s, NULL)
	    != SQLITE_OK)
		return -1;
	sqlite3_bind_int64(s, 1, gpid >> 24);
	if (sqlite3_step(s) == SQLITE_ROW)
		rank = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	return rank;
}

static int cmp_i64(const void *pa, const void *pb)
{
	int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;

	return a < b ? -1 : a > b;
}

void xp_tl_sort(int64_t *v, size_t n)
{
	if (n)
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

int xp_tl_sweep(const struct xp_tl *tl, int64_t w0, int64_t w1, xp_tl_segment_fn fn, void *ctx)
{
	struct tl_pending p = { .fn = fn, .ctx = ctx };
	const struct xp_tl_op *last[XP_TL_CLASSES] = { 0 };
	int count[XP_TL_CLASSES] = { 0 };
	struct tl_event *ev = NULL;
	size_t n = 0, cap = 0;
	int64_t t = w0;

	for (size_t i = 0; i < tl->n && tl->ops[i].start < w1; i++) {
		const struct xp_tl_op *op = &tl->ops[i];
		int64_t a = op->start < w0 ? w0 : op->start, b = op->end > w1 ? w1 : op->end;
		int64_t split = op->start + op->wait;

		split = split < a ? a : split > b ? b : split;
		if (add_piece(&ev, &n, &cap, a, split, XP_TL_RANK, op) ||
		    add_piece(&ev, &n, &cap, split, b, op->cls, op)) {
			free(ev);
			return -ENOMEM;
		}
	}
	if (n)
		qsort(ev, n, sizeof(*ev), cmp_event);
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

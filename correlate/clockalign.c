/* clockalign.c - runs of several hosts onto one clock; see clockalign.h. */
#include "correlate/clockalign.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "src/array.h"
#include "db/stackwalk.h"
#include "src/u64map.h"
#include "src/satmath.h"

struct marker_in {
	int64_t pid;                /* globalPid */
	uint64_t name;
	int64_t ts;
};

struct marker_list {
	struct marker_in *v;
	size_t n, cap;
};

static int push(struct marker_list *l, int64_t pid, uint64_t name, int64_t ts)
{
	if (xp_array__reserve((void **)&l->v, &l->cap, l->n + 1, sizeof(*l->v), 256))
		return -ENOMEM;
	l->v[l->n++] = (struct marker_in){ pid, name, ts };
	return 0;
}

static uint64_t name_hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;       /* FNV-1a */

	for (; s && *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return xp_hash64(h);
}

static int64_t meta_int(sqlite3 *db, const char *name, int *found)
{
	sqlite3_stmt *st;
	int64_t v = 0;

	*found = 0;
	if (sqlite3_prepare_v2(db, "SELECT CAST(value AS INTEGER) FROM META_DATA_EXPORT"
			       " WHERE name = ?", -1, &st, NULL) != SQLITE_OK)
		return 0;
	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL) {
		v = sqlite3_column_int64(st, 0);
		*found = 1;
	}
	sqlite3_finalize(st);
	return v;
}

/* NCCL: every collective is a kernel of its own; it ends once every rank
 * has sent and received its part. */
static int nccl_markers(sqlite3 *db, struct marker_list *l)
{
	sqlite3_stmt *st;
	int rc, err = 0;

	if (sqlite3_prepare_v2(db, "SELECT k.globalPid, s.value, k.end FROM CUPTI_ACTIVITY_KIND_KERNEL k"
			       " JOIN StringIds s ON s.id = k.shortName WHERE s.value LIKE 'nccl%'"
			       " ORDER BY k.globalPid, k.start", -1, &st, NULL) != SQLITE_OK)
		return -EIO;
	while (!err && (rc = sqlite3_step(st)) == SQLITE_ROW)
		err = push(l, sqlite3_column_int64(st, 0),
			   name_hash((const char *)sqlite3_column_text(st, 1)), sqlite3_column_int64(st, 2));
	sqlite3_finalize(st);
	return err ? err : rc == SQLITE_DONE ? 0 : -EIO;
}

/* Whether a launch stack passes through gloo (c10d::ProcessGroupGloo::runLoop,
 * gloo::...), remembered per stack node. */
static int through_gloo(struct xp_stackwalk *w, struct xp_u64map *seen, int64_t stack)
{
	struct xp_frame_row f;
	uint64_t *slot;
	int fresh, yes = 0;

	if (stack <= 0 || xp_u64map_upsert(seen, (uint64_t)stack, 0, &slot, &fresh))
		return 0;
	if (!fresh)
		return (int)*slot;
	for (int64_t id = stack; !yes && xp_stackwalk_next(w, &id, &f); )
		yes = f.sym && (strstr(f.sym, "gloo") || strstr(f.sym, "Gloo"));
	xp_stackwalk_done(w);
	*slot = (uint64_t)yes;
	return yes;
}

/* gloo all-reduces on the CPU, then copies the result back to the GPU from
 * its worker thread: the start of that copy's API call follows the
 * collective's end at once. */
static int gloo_markers(sqlite3 *db, struct marker_list *l)
{
	struct xp_stackwalk *w = NULL;
	struct xp_u64map seen;
	sqlite3_stmt *st = NULL;
	int rc = SQLITE_DONE, err;

	xp_u64map_init(&seen);
	err = xp_stackwalk_open(db, &w);
	if (!err && sqlite3_prepare_v2(db, "SELECT m.globalPid, r.start, a.stack_id"
				       " FROM CUPTI_ACTIVITY_KIND_MEMCPY m JOIN xp_attribution a"
				       " ON a.gpu_table = 'MEMCPY' AND a.gpu_rowid = m.rowid"
				       " JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON r.rowid = a.api_rowid"
				       " WHERE m.copyKind = 1 ORDER BY m.globalPid, r.start",
				       -1, &st, NULL) != SQLITE_OK)
		err = -EIO;
	while (!err && (rc = sqlite3_step(st)) == SQLITE_ROW)
		if (through_gloo(w, &seen, sqlite3_column_int64(st, 2)))
			err = push(l, sqlite3_column_int64(st, 0), name_hash("gloo: copy back"),
				   sqlite3_column_int64(st, 1));
	sqlite3_finalize(st);
	xp_stackwalk_close(w);
	xp_u64map_free(&seen);
	return err ? err : rc == SQLITE_DONE ? 0 : -EIO;
}

/* The markers of the process with the most (all ranks of a host share its
 * clock: one is enough), each numbered within its name. */
static int keep_busiest(const struct marker_list *l, struct xc_clock_run *r)
{
	struct xp_u64map counts;
	int64_t best = 0;
	uint64_t best_n = 0, *slot;
	int fresh;

	xp_u64map_init(&counts);
	for (size_t i = 0; i < l->n; i++) {
		if (xp_u64map_upsert(&counts, (uint64_t)l->v[i].pid, 0, &slot, &fresh))
			goto nomem;
		if (++*slot > best_n || (*slot == best_n && l->v[i].pid < best))
			best_n = *slot, best = l->v[i].pid;
	}
	xp_u64map_free(&counts);
	xp_u64map_init(&counts);
	r->markers = calloc(best_n ? best_n : 1, sizeof(*r->markers));
	if (!r->markers)
		goto nomem;
	for (size_t i = 0; i < l->n; i++) {
		if (l->v[i].pid != best)
			continue;
		if (xp_u64map_upsert(&counts, l->v[i].name, 0, &slot, &fresh))
			goto nomem;
		r->markers[r->nmarkers++] = (struct xc_marker){ l->v[i].name, (uint32_t)(*slot)++,
								 l->v[i].ts };
	}
	xp_u64map_free(&counts);
	return 0;
nomem:
	xp_u64map_free(&counts);
	return -ENOMEM;
}

int xc_clock_run_load(sqlite3 *db, struct xc_clock_run *r)
{
	struct marker_list l = { 0 };
	int mono, real, err;

	memset(r, 0, sizeof(*r));
	r->mono_ns = meta_int(db, "meta.start_monotonic_ns", &mono);
	r->real_ns = meta_int(db, "meta.start_realtime_ns", &real);
	r->has_pair = mono && real;
	err = nccl_markers(db, &l);
	if (!err && l.n)
		r->kind = "nccl";
	else if (!err && !(err = gloo_markers(db, &l)) && l.n)
		r->kind = "gloo";
	if (!err && l.n)
		err = keep_busiest(&l, r);
	free(l.v);
	if (err)
		xc_clock_run_free(r);
	return err;
}

void xc_clock_run_free(struct xc_clock_run *r)
{
	free(r->markers);
	r->markers = NULL;
	r->nmarkers = 0;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

static int64_t median(int64_t *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_i64);
	return n % 2 ? v[n / 2] : xp_sat_add(v[n / 2 - 1], xp_sat_sub(v[n / 2], v[n / 2 - 1]) / 2);
}

/* Differences ref - (run + wall) of the collectives both have (by name and
 * number), into *out (malloc'ed); their count. */
static int matched_differences(const struct xc_clock_run *ref, const struct xc_clock_run *run,
			       int64_t wall, int64_t **out, size_t *n)
{
	struct xp_u64map at;
	uint64_t *slot;
	int fresh;

	*n = 0;
	*out = malloc((run->nmarkers ? run->nmarkers : 1) * sizeof(**out));
	if (!*out)
		return -ENOMEM;
	xp_u64map_init(&at);
	for (size_t i = 0; i < ref->nmarkers; i++) {
		if (xp_u64map_upsert(&at, ref->markers[i].name, ref->markers[i].nth, &slot, &fresh)) {
			xp_u64map_free(&at);
			return -ENOMEM;
		}
		*slot = (uint64_t)ref->markers[i].ts;
	}
	for (size_t i = 0; i < run->nmarkers; i++) {
		const uint64_t *t = xp_u64map_find(&at, run->markers[i].name, run->markers[i].nth);

		if (t)
			(*out)[(*n)++] = xp_sat_sub((int64_t)*t, xp_sat_add(run->markers[i].ts, wall));
	}
	xp_u64map_free(&at);
	return 0;
}

int xc_clock_align(const struct xc_clock_run *ref, const struct xc_clock_run *run,
		   struct xc_clock_shift *out)
{
	int64_t *d;
	size_t n;
	int err;

	memset(out, 0, sizeof(*out));
	out->spread_ns = -1;
	out->method = "reference";
	if (ref == run)
		return 0;
	if (ref->has_pair && run->has_pair)
		out->wall_ns = xp_sat_sub(xp_sat_sub(run->real_ns, run->mono_ns),
					  xp_sat_sub(ref->real_ns, ref->mono_ns));
	out->method = ref->has_pair && run->has_pair ? "wall clock" : "none";
	out->shift_ns = out->wall_ns;
	if ((err = matched_differences(ref, run, out->wall_ns, &d, &n)))
		return err;
	if (n) {
		out->refine_ns = median(d, n);
		for (size_t i = 0; i < n; i++)
			d[i] = xp_sat_sub(d[i], out->refine_ns) == INT64_MIN ? INT64_MAX :
			       llabs(xp_sat_sub(d[i], out->refine_ns));
		out->spread_ns = median(d, n);
		out->shift_ns = xp_sat_add(out->wall_ns, out->refine_ns);
		out->matched = (uint32_t)n;
		out->method = "collectives";
	}
	free(d);
	return 0;
}

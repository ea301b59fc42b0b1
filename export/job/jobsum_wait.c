/* jobsum_wait.c - what `xpcorr job --by wait` needs in a rank's summary
 * (jobsum.h): per collective op of each rank, the causes of the stretch
 * before it, from where the rank finished its latest earlier collective
 * (coll_inst.h's in-step point, taken on the rank alone) to its entry,
 * split as --by wait splits a stretch (idle_cause.h's causes of its idle
 * gaps, the GPU's own work at its launch site). The job view compares the
 * waiting rank's stretch with the late rank's (wait_share.c): a few rows
 * per collective, not the rows they came from. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "export/analysis/coll_inst.h"
#include "export/idle/idle_cause.h"
#include "export/job/jobsum.h"
#include "export/job/jobsum_host.h"
#include "export/analysis/wait_blame.h"
#include "src/array.h"
#include "src/u64map.h"

struct spans {
	struct xp_idle *I;
	struct xp_wait_row *rows;   /* the stretch's rows */
	size_t n, cap;
	int err;
};

static void add_row(struct spans *S, int kind, const char *where, int64_t ns)
{
	if (!where) {
		S->err = -ENOMEM;
		return;
	}
	for (size_t i = 0; i < S->n; i++)
		if (S->rows[i].kind == kind && S->rows[i].where == where) {
			S->rows[i].ns += ns;
			return;
		}
	if (xp_array__reserve((void **)&S->rows, &S->cap, S->n + 1, sizeof(*S->rows), 16)) {
		S->err = -ENOMEM;
		return;
	}
	S->rows[S->n++] = (struct xp_wait_row){ .kind = kind, .where = where, .ns = ns };
}

/* A segment not idle: the GPU's work at its site; a wait for a rank of
 * this run (a run of several ranks) is kept as such, not followed. */
static void on_busy(void *ctx, int64_t a, int64_t b, int cls, const struct xp_tl_op *op)
{
	struct spans *S = ctx;

	if (!op)
		return;
	if (cls == XP_TL_RANK)
		add_row(S, XP_WAIT_RANK, xp_idle_intern(S->I, "another rank of the run"), b - a);
	else
		add_row(S, XP_WAIT_GPU + cls, xp_idle_site(S->I, op->stack), b - a);
}

/* The rows of S; with marker, at least one (an empty stretch still says
 * where it starts). */
static int put_rows(struct spans *S, sqlite3_stmt *ins, int64_t pid, int64_t name, int64_t nth,
		    int marker)
{
	size_t put = marker ? 0 : 1;

	if (xp_array__reserve((void **)&S->rows, &S->cap, S->n + 1, sizeof(*S->rows), 16))
		return -ENOMEM;
	for (size_t i = 0; i <= S->n; i++) {
		int rc;

		if (i == S->n && put)
			break;
		if (i == S->n)
			S->rows[i] = (struct xp_wait_row){ .kind = XP_WAIT_NONE, .where = "" };
		else if (S->rows[i].ns <= 0)
			continue;
		put++;
		sqlite3_bind_int64(ins, 1, pid);
		sqlite3_bind_int64(ins, 2, name);
		sqlite3_bind_int64(ins, 3, nth);
		sqlite3_bind_int(ins, 4, S->rows[i].kind);
		sqlite3_bind_text(ins, 5, S->rows[i].where, -1, SQLITE_STATIC);
		sqlite3_bind_int64(ins, 6, S->rows[i].ns);
		rc = sqlite3_step(ins);
		sqlite3_reset(ins);
		if (rc != SQLITE_DONE)
			return -EIO;
	}
	return 0;
}

/* Where the rank's first stretch starts: the merged job takes its ranks in
 * step at the job's first work, which a rank alone cannot know; the
 * rank's own first work (a CPU sample, else a GPU op) stands for it. */
static int64_t first_work(sqlite3 *db, const struct xp_coll_job *J, size_t sl)
{
	sqlite3_stmt *st;
	int64_t t = J->t0;

	if (sqlite3_prepare_v2(db, "SELECT min(ts) FROM xp_samples WHERE pid = ?", -1, &st, NULL)
	    != SQLITE_OK)
		return t;
	sqlite3_bind_int64(st, 1, J->pid[sl]);
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL &&
	    sqlite3_column_int64(st, 0) < t)
		t = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return t;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* The causes of [a, b): on the device's timeline, or (gtid >= 0) what
 * that thread did, as report --by wait takes a host-side collective's
 * stretch (xp_idle_host_span). Into S's rows. */
static int span_causes(struct spans *S, int64_t gtid, int64_t a, int64_t b)
{
	struct xp_idle_row row;
	int rc;

	S->n = 0;
	rc = gtid >= 0 ? xp_idle_host_span(S->I, gtid, a, b) : xp_idle_span(S->I, a, b, on_busy, S);
	if (rc < 0)
		return rc;
	for (size_t r = 0; xp_idle_row(S->I, r, &row); r++)
		add_row(S, row.kind, row.where, row.ns);
	return S->err;
}

/* The rank's timeline cut at its collectives' starts and ends, from its
 * first work to its last entry: each piece by cause (xs_piece; with gtid
 * >= 0 what that thread did, xs_hpiece), so that the job view can take a
 * late rank's stretch from wherever the waiting rank was last in step
 * with it, as report --by wait does. */
static int slot_pieces(struct spans *S, const struct xp_coll_job *J, size_t sl, int64_t t0,
		       int64_t gtid, sqlite3_stmt *ins)
{
	const struct xp_tl *tl = J->tl[sl];
	size_t n = 0, nc = J->ncoll[sl];
	int64_t *cut = malloc((2 * nc + 1) * sizeof(*cut)), last = INT64_MIN;
	int rc = 0;

	if (!cut)
		return -ENOMEM;
	cut[n++] = t0;
	for (size_t k = 0; k < nc; k++) {
		const struct xp_tl_op *op = &tl->ops[J->coll[sl][k]];

		cut[n++] = op->start;
		cut[n++] = op->end;
		last = op->start > last ? op->start : last;
	}
	qsort(cut, n, sizeof(*cut), cmp_i64);
	for (size_t i = 0; i + 1 < n && !rc && cut[i + 1] <= last; i++) {
		if (cut[i + 1] <= cut[i] || cut[i] < t0)
			continue;
		if ((rc = span_causes(S, gtid, cut[i], cut[i + 1])) < 0)
			break;
		sqlite3_bind_int64(ins, 7, cut[i + 1]);
		rc = put_rows(S, ins, J->pid[sl], cut[i], -1, 0);
	}
	free(cut);
	return rc;
}

/* The summary's (name, nth) of each of the slot's collectives, as xs_coll
 * has them: a kernel's name its StringIds id, a host wait's its rank's
 * (jobsum_host.h); the nth the count of that name before it. */
static int slot_ids(const struct xp_coll_job *J, size_t sl, const struct xp_host_colls *H,
		    int64_t base, int64_t *name, int64_t *nth)
{
	const struct xp_tl *tl = J->tl[sl];
	struct xp_u64map count;
	size_t r = 0, host = 0;

	while (r < H->nranks && H->pid[r] != J->pid[sl])
		r++;
	xp_u64map_init(&count);
	for (size_t k = 0; k < J->ncoll[sl]; k++) {
		const struct xp_tl_op *op = &tl->ops[J->coll[sl][k]];
		uint64_t *n;
		int fresh;

		name[k] = !op->host ? op->name : r < H->nranks && host < H->count[r] ?
			xp_jobsum_host_name(H, base, r, host++) : -1;
		if (xp_u64map_upsert(&count, (uint64_t)name[k], 0, &n, &fresh)) {
			xp_u64map_free(&count);
			return -ENOMEM;
		}
		nth[k] = (int64_t)(*n)++;
	}
	xp_u64map_free(&count);
	return 0;
}

/* One rank's collectives' stretches, each with the instance it starts
 * from (-1, -1: the rank's first work), then its pieces. */
static int slot_spans(struct spans *S, sqlite3 *db, const struct xp_coll_job *J, size_t sl,
		      const int64_t *name, const int64_t *nth, sqlite3_stmt *ins, sqlite3_stmt *piece,
		      sqlite3_stmt *hpiece)
{
	int64_t t0 = first_work(db, J, sl), host_gtid = -1;
	const struct xp_tl *tl = J->tl[sl];
	int rc;

	if ((rc = xp_idle_use(S->I, tl)) < 0)
		return rc;
	for (size_t k = 0; k < J->ncoll[sl] && !rc; k++) {
		size_t i = (size_t)J->coll[sl][k], from = SIZE_MAX;
		const struct xp_tl_op *op = &tl->ops[i];
		int64_t a, unused;

		xp_coll_in_step(J, sl, i, sl, &a, &unused);
		for (size_t b = k; b-- > 0 && k - b <= 64 && from == SIZE_MAX;)
			if (tl->ops[J->coll[sl][b]].end == a)
				from = b;
		if (from == SIZE_MAX)
			a = t0;
		if ((rc = span_causes(S, op->host ? op->gtid : -1, a, a < op->start ? op->start : a)) < 0)
			break;
		sqlite3_bind_int64(ins, 7, from != SIZE_MAX ? name[from] : -1);
		sqlite3_bind_int64(ins, 8, from != SIZE_MAX ? nth[from] : -1);
		rc = put_rows(S, ins, J->pid[sl], name[k], nth[k], 1);
		if (op->host && host_gtid < 0)
			host_gtid = op->gtid;
	}
	if (!rc)
		rc = slot_pieces(S, J, sl, t0, -1, piece);
	/* a host-side collective's late rank: what its waiting thread did */
	return rc || host_gtid < 0 ? rc : slot_pieces(S, J, sl, t0, host_gtid, hpiece);
}

/* Slot sl's ids, then its stretches. */
static int slot_put(struct spans *S, sqlite3 *db, const struct xp_coll_job *J, size_t sl,
		    const struct xp_host_colls *H, int64_t base, sqlite3_stmt **ins)
{
	size_t n = J->ncoll[sl] ? J->ncoll[sl] : 1;
	int64_t *name = malloc(n * sizeof(*name)), *nth = malloc(n * sizeof(*nth));
	int rc = name && nth ? slot_ids(J, sl, H, base, name, nth) : -ENOMEM;

	if (!rc)
		rc = slot_spans(S, db, J, sl, name, nth, ins[0], ins[1], ins[2]);
	free(name);
	free(nth);
	return rc;
}

int xp_jobsum_put_spans(sqlite3 *db, sqlite3 *sum, const struct xp_host_colls *H, int64_t base)
{
	struct xp_tl_set set = { 0 };
	struct xp_coll_job J = { 0 };
	struct spans S = { 0 };
	/* a stretch, a piece, a piece of a host's waiting thread */
	sqlite3_stmt *ins[3] = { NULL };
	int rc = -EIO;

	if (sqlite3_prepare_v2(sum, "INSERT INTO xs_span VALUES(?,?,?,?,?,?,?,?)", -1, &ins[0], NULL)
	    != SQLITE_OK ||
	    sqlite3_prepare_v2(sum, "INSERT INTO xs_piece VALUES(?1, ?2, ?7, ?4, ?5, ?6)",
			       -1, &ins[1], NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(sum, "INSERT INTO xs_hpiece VALUES(?1, ?2, ?7, ?4, ?5, ?6)",
			       -1, &ins[2], NULL) != SQLITE_OK)
		goto out;
	if ((rc = xp_idle_open(db, 0, &S.I)) < 0)
		goto out;
	if ((rc = xp_tl_load_all(db, &set)) < 0 || (rc = xp_host_colls_add_each(H, &set)) < 0 ||
	    (rc = xp_coll_job_load(db, &set, &J)) < 0)
		goto out;
	for (size_t sl = 0; sl < J.nslots && rc >= 0; sl++)
		rc = slot_put(&S, db, &J, sl, H, base, ins);
out:
	for (int i = 0; i < 3; i++)
		sqlite3_finalize(ins[i]);
	xp_idle_close(S.I);
	xp_coll_job_free(&J);
	xp_tl_set_free(&set);
	free(S.rows);
	return rc < 0 ? rc : 0;
}

/* jobwait.c - `xpcorr job --by wait`: report --by wait's cross-rank blame
 * from the ranks' summaries. Each wait in a collective instance every rank
 * entered (jobview.c found its last entry on the job's clock) is charged
 * to the last rank and shared among the causes that rank spent more time
 * in than the waiting one since each finished its latest earlier
 * collective (the waiting rank's xs_span stretch, jobsum_wait.c; the late
 * rank's from the end of the same instance on it, added up from its
 * xs_piece pieces), by the rule --by wait uses (wait_share.c); an instance
 * whose last two entries, or a wait, is within the clock alignment's error
 * is "too close to call". Memory: the pieces of the ranks some instance
 * waited for (a few rows per collective), never a rank's rows. Unlike
 * report --by wait, a late rank's own wait for a third rank is not
 * followed there: the summary keeps its collectives' time as GPU
 * communication. A host-side collective's (gloo's) stretches are what the
 * ranks' waiting threads did (xs_hpiece), each wait shared by its pair of
 * ranks' stretches summed over their waits, as report --by wait does.
 *
 *   xpcorr job --by wait runs/rank-*
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "db/db_schema.h"
#include "export/idle/idle_cause.h"
#include "export/job/jobview_priv.h"
#include "export/report/report_priv.h"
#include "export/report/table.h"
#include "export/analysis/wait_blame.h"
#include "src/array.h"
#include "src/satmath.h"

/* A late rank's time in pieces (jobsum_wait.c's xs_piece), and where each
 * instance started and ended on its clock. */
struct piece {
	int64_t a, b;
	struct xp_wait_row row;
};

struct pieces {
	struct piece *v;            /* by a */
	size_t n, cap;
};

struct late_rank {
	struct pieces dev;          /* xs_piece: its device's timeline */
	struct pieces host;         /* xs_hpiece: its thread that waits in host-side ones */
};

struct span_at {                    /* a late rank's collective instance, on its clock */
	int64_t start, end;
};

/* The stretches of every host-side wait of one waiting and one late rank,
 * summed, as report --by wait shares them (share_host in view_wait.c): a
 * host's stretch is named by CPU samples too few in one wait of a few ms. */
struct host_pair {
	struct xp_wait_row *rw, *rl;
	size_t nw, nl, cw, cl;
};

struct host_wait {                  /* one wait, shared once every pair is summed */
	size_t waiter, late, pair;
	int64_t ns;
	uint64_t wid;
	const char *path;           /* the late rank's summary, for the work limit's line */
};

struct jv_wait {
	struct late_rank **late;    /* per rank index: NULL unless late somewhere */
	struct span_at *times;      /* the late ranks' instances (a row each, not */
	size_t ntimes, times_cap;   /* late ranks x instances: a summary may hold */
	struct xp_u64map times_at;  /* millions), (rank index, instance) -> index + 1 */
	struct xp_wait_row *own;    /* the waiting rank's stretch being read */
	size_t nown, own_cap;
	int64_t from_name, from_nth; /* where that stretch starts (local ids), -1 */
	struct xp_wait_row *lrows;  /* the late rank's stretch, from the same place */
	size_t nl, l_cap;
	struct xp_wait_table out;
	struct host_pair *pairs;    /* host-side waits: per (waiting, late rank) */
	size_t npairs, pairs_cap;
	struct xp_u64map pair_at;   /* (waiting, late) -> index + 1 into pairs */
	struct host_wait *hw;       /* the host-side waits, shared at the end */
	size_t nhw, hw_cap;
	int64_t *rank;              /* per rank index: its rank */
	const char *close, *none;   /* interned */
	int err;
};

static int wait_init(struct jv *J)
{
	struct jv_wait *W;
	int64_t id;

	if (J->wait)
		return 0;
	if (!(W = J->wait = calloc(1, sizeof(*W))))
		return -ENOMEM;
	xp_u64map_init(&W->out.at);
	xp_u64map_init(&W->times_at);
	xp_u64map_init(&W->pair_at);
	if (!(W->late = calloc(J->nranks ? J->nranks : 1, sizeof(*W->late))) ||
	    !(W->rank = calloc(J->nranks ? J->nranks : 1, sizeof(*W->rank))))
		return -ENOMEM;
	for (size_t i = 0; i < J->ninst; i++) {
		struct late_rank **L = &W->late[J->inst[i].late];

		if (J->inst[i].cnt != J->nranks || *L)
			continue;
		if (!(*L = calloc(1, sizeof(**L))))
			return -ENOMEM;
	}
	for (size_t r = 0; r < J->nranks; r++)
		W->rank[r] = J->ranks[r].rank;
	if (jv_intern(&J->names, "too close to call", &id))
		return -ENOMEM;
	W->close = J->names.v[id];
	if (jv_intern(&J->names, "(nothing took the late rank longer)", &id))
		return -ENOMEM;
	W->none = J->names.v[id];
	return 0;
}

void jv_wait_free(struct jv *J)
{
	struct jv_wait *W = J->wait;

	if (!W)
		return;
	for (size_t r = 0; W->late && r < J->nranks; r++)
		if (W->late[r]) {
			free(W->late[r]->dev.v);
			free(W->late[r]->host.v);
			free(W->late[r]);
		}
	free(W->late);
	free(W->own);
	free(W->lrows);
	free(W->rank);
	free(W->out.v);
	xp_u64map_free(&W->out.at);
	free(W->times);
	xp_u64map_free(&W->times_at);
	for (size_t i = 0; i < W->npairs; i++) {
		free(W->pairs[i].rw);
		free(W->pairs[i].rl);
	}
	free(W->pairs);
	xp_u64map_free(&W->pair_at);
	free(W->hw);
	free(W);
	J->wait = NULL;
}

/* Where a late rank's instance at started and ended (INT64_MIN: not read). */
static struct span_at times_of(const struct jv_wait *W, size_t rank, size_t at)
{
	const uint64_t *v = xp_u64map_find(&W->times_at, rank, at);

	return v ? W->times[*v - 1] : (struct span_at){ INT64_MIN, INT64_MIN };
}

static int put_times(struct jv_wait *W, size_t rank, size_t at, int64_t start, int64_t end)
{
	uint64_t *slot;
	int fresh;

	if (xp_u64map_upsert(&W->times_at, rank, at, &slot, &fresh))
		return -ENOMEM;
	if (fresh) {
		if (xp_array__reserve((void **)&W->times, &W->times_cap, W->ntimes + 1,
				      sizeof(*W->times), 256))
			return -ENOMEM;
		*slot = ++W->ntimes;
	}
	W->times[*slot - 1] = (struct span_at){ start, end };
	return 0;
}

/* The instance of a run's (pid, name, nth) that every rank entered, and
 * the rank index of pid; NULL when not one. */
static const struct jv_inst *instance_of(const struct jv *J, const struct jv_run *R,
					 sqlite3_stmt *st, int64_t *rank, size_t *at, int complete)
{
	int64_t name = jv_job_name(R, sqlite3_column_int64(st, 1));
	const uint64_t *slot = name < 0 ? NULL :
		xp_u64map_find(&J->inst_at, (uint64_t)name, (uint64_t)sqlite3_column_int64(st, 2));

	*rank = jv_rank_of_pid(J, R, sqlite3_column_int64(st, 0));
	if (!slot || *rank < 0 || (complete && J->inst[*slot].cnt != J->nranks))
		return NULL;
	*at = (size_t)*slot;
	return &J->inst[*slot];
}

static const struct jv_inst *instance(const struct jv *J, const struct jv_run *R, sqlite3_stmt *st,
				      int64_t *rank, size_t *at)
{
	return instance_of(J, R, st, rank, at, 1);
}

/* A row of a stretch (kind, site, ns at columns c..c+2) with its where interned. */
static int read_row(struct jv *J, sqlite3_stmt *st, int c, struct xp_wait_row *r)
{
	int64_t id;
	int kind = sqlite3_column_int(st, c);

	if (jv_intern(&J->names, (const char *)sqlite3_column_text(st, c + 1), &id))
		return -ENOMEM;
	*r = (struct xp_wait_row){ .kind = kind >= 0 && kind < XP_WAIT_KINDS ? kind : XP_WAIT_NONE,
				   .where = J->names.v[id], .ns = sqlite3_column_int64(st, c + 2),
				   .slot = -1, .inst = -1 };
	return 0;
}

static int no_spans(struct jv *J, const struct jv_run *R)
{
	return jv_fail(J, -EINVAL, "cannot read %s: it has no collectives' stretches (written by an"
		       " older xpcorr): run xpcorr ingest on its run again", R->r->path);
}

/* The pieces (sql: xs_piece's, host: xs_hpiece's) of the run's late ranks. */
static int read_pieces(struct jv *J, struct jv_run *R, const char *sql, int host)
{
	struct jv_wait *W = J->wait;
	sqlite3_stmt *st;
	int step;

	if (sqlite3_prepare_v2(R->db, sql, -1, &st, NULL) != SQLITE_OK)
		return no_spans(J, R);
	while ((step = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t rank = jv_rank_of_pid(J, R, sqlite3_column_int64(st, 0));
		struct pieces *P = rank < 0 || !W->late[rank] ? NULL :
				   host ? &W->late[rank]->host : &W->late[rank]->dev;

		if (!P)
			continue;
		if (xp_array__reserve((void **)&P->v, &P->cap, P->n + 1, sizeof(*P->v), 64) ||
		    read_row(J, st, 3, &P->v[P->n].row)) {
			sqlite3_finalize(st);
			return jv_fail(J, -ENOMEM, "out of memory");
		}
		P->v[P->n].a = sqlite3_column_int64(st, 1);
		P->v[P->n++].b = sqlite3_column_int64(st, 2);
	}
	return jv_end(J, R, st, step);
}

/* Pass: the pieces and collectives' times of this run's ranks that some
 * instance waited for. */
int jv_wait_late(struct jv *J, struct jv_run *R)
{
	sqlite3_stmt *st;
	struct jv_wait *W;
	int step, err;

	if (wait_init(J))
		return jv_fail(J, -ENOMEM, "out of memory");
	W = J->wait;
	if ((err = jv_prep(J, R->db, R->r->path, "SELECT pid, name, nth, start, end FROM xs_coll", &st)))
		return err;
	while ((step = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t rank;
		size_t at;

		/* any instance: the waiting rank's stretch may start at one not all entered */
		if (!instance_of(J, R, st, &rank, &at, 0) || !W->late[rank])
			continue;
		if (put_times(W, (size_t)rank, at, sqlite3_column_int64(st, 3),
			      sqlite3_column_int64(st, 4))) {
			sqlite3_finalize(st);
			return jv_fail(J, -ENOMEM, "out of memory");
		}
	}
	if ((err = jv_end(J, R, st, step)) ||
	    (err = read_pieces(J, R, "SELECT pid, a, b, kind, site, ns FROM xs_piece ORDER BY pid, a", 0)))
		return err;
	/* a summary before version 3 has no host pieces (nor host-side collectives) */
	if (!xp_db_has_table(R->db, "xs_hpiece"))
		return 0;
	return read_pieces(J, R, "SELECT pid, a, b, kind, site, ns FROM xs_hpiece ORDER BY pid, a", 1);
}

/* The summary of the rank index late (R: a run of the same job). */
static const char *late_path(const struct jv_run *R, const struct jv *J, size_t late)
{
	return (R->r - R->index + J->ranks[late].run)->path;
}

/* The late rank's stretch from where the waiting one's starts (the end of
 * the same instance on the late rank, else the late rank's first work) to
 * its entry into instance at: its pieces in between, into W->lrows. The
 * steps it takes are charged as they add up (a crafted summary's stretches
 * may each hold millions): -ETIME with the line said once the budget is
 * spent, -ENOMEM; *work: what is left to charge. */
static int late_stretch(struct jv *J, const struct jv_run *R, size_t late, size_t at,
			uint64_t *work)
{
	struct jv_wait *W = J->wait;
	/* a host-side collective's: what the late rank's waiting thread did */
	const struct pieces *L = J->kern[J->inst[at].name].host ? &W->late[late]->host :
				 &W->late[late]->dev;
	int64_t name = W->from_name >= 0 ? jv_job_name(R, W->from_name) : -1, from = INT64_MIN;
	const uint64_t *x = name < 0 ? NULL : xp_u64map_find(&J->inst_at, (uint64_t)name,
							      (uint64_t)W->from_nth);
	int64_t to = times_of(W, late, at).start;
	size_t lo = 0, hi = L->n;

	if (x && times_of(W, late, (size_t)*x).end != INT64_MIN)
		from = times_of(W, late, (size_t)*x).end;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (L->v[mid].a < from)
			lo = mid + 1;
		else
			hi = mid;
	}
	W->nl = 0;
	for (size_t i = lo; i < L->n && L->v[i].b <= to; i++) {
		const struct xp_wait_row *r = &L->v[i].row;
		size_t k = 0;

		while (k < W->nl && (W->lrows[k].kind != r->kind || W->lrows[k].where != r->where))
			k++;
		if ((*work += k + 1) >= 1u << 16) {
			int err = jv_spend(J, late_path(R, J, late), *work);

			if (err)
				return err;
			*work = 0;
		}
		if (k == W->nl) {
			if (xp_array__reserve((void **)&W->lrows, &W->l_cap, W->nl + 1, sizeof(*W->lrows), 16))
				return -ENOMEM;
			W->lrows[W->nl++] = *r;
		} else {
			W->lrows[k].ns = xp_sat_add(W->lrows[k].ns, r->ns);
		}
	}
	return 0;
}

struct part_ctx {
	struct jv_wait *W;
	size_t waiter, late;
	uint64_t wid;
};

static void on_part(void *ctx, const struct xp_wait_row *r, int64_t ns)
{
	struct part_ctx *p = ctx;

	if (xp_wait_table_add(&p->W->out, p->waiter, p->late, p->late, r->kind, r->where, ns, p->wid))
		p->W->err = -ENOMEM;
}

/* A host-side wait (p's) of ns: its two stretches added to its pair's,
 * the wait kept to be shared by them (jv_wait_share_host). The adding
 * compares each row with the pair's: charged to the work limit (a
 * crafted summary's stretches may each hold millions of places), -ETIME
 * with the line said; -ENOMEM. */
static int hold_host_wait(struct jv *J, const struct part_ctx *p, int64_t ns, const char *path)
{
	struct jv_wait *W = J->wait;
	uint64_t *slot;
	struct host_pair *q;
	int fresh, err;

	if (xp_u64map_upsert(&W->pair_at, p->waiter, p->late, &slot, &fresh) ||
	    (fresh && xp_array__reserve((void **)&W->pairs, &W->pairs_cap, W->npairs + 1,
					sizeof(*W->pairs), 8)) ||
	    xp_array__reserve((void **)&W->hw, &W->hw_cap, W->nhw + 1, sizeof(*W->hw), 64))
		return -ENOMEM;
	if (fresh)
		W->pairs[(*slot = ++W->npairs) - 1] = (struct host_pair){ 0 };
	q = &W->pairs[*slot - 1];
	if ((err = jv_spend(J, path, (uint64_t)W->nown * (q->nw + W->nown) +
			    (uint64_t)W->nl * (q->nl + W->nl))))
		return err;
	W->hw[W->nhw++] = (struct host_wait){ p->waiter, p->late, *slot - 1, ns, p->wid, path };
	if (xp_wait_rows_add(&q->rw, &q->nw, &q->cw, W->own, W->nown) ||
	    xp_wait_rows_add(&q->rl, &q->nl, &q->cl, W->lrows, W->nl))
		return -ENOMEM;
	return 0;
}

/* One wait of rank index w in instance at (its stretch in W->own). */
static void charge_one(struct jv *J, const struct jv_run *R, size_t w, size_t at, int64_t start)
{
	struct jv_wait *W = J->wait;
	const struct jv_inst *in = &J->inst[at];
	int64_t ns = xp_sat_sub(in->last, start);
	struct part_ctx p = { W, w, in->late, 0 };
	uint64_t work = 0;
	int err;

	if (ns <= 0 || in->late == w)
		return;
	p.wid = ++W->out.nwaits;
	W->out.total_ns = xp_sat_add(W->out.total_ns, ns);
	if (ns <= J->clock_err ||
	    (in->second != INT64_MIN && xp_sat_sub(in->last, in->second) <= J->clock_err)) {
		on_part(&p, &(struct xp_wait_row){ .kind = XP_WAIT_CLOSE, .where = W->close }, ns);
		return;
	}
	if ((err = late_stretch(J, R, in->late, at, &work))) {
		W->err = err;
		return;
	}
	/* the share compares every row of one stretch with every row of the other */
	if ((err = jv_spend(J, late_path(R, J, in->late), work + (uint64_t)W->nown * W->nl))) {
		W->err = err;
		return;
	}
	/* a stretch from the rank's own first work (no earlier instance) is
	 * not summed: ranks recorded apart start their runs at different
	 * points, and one rank's start-up would be shared by every wait */
	if (J->kern[in->name].host && W->from_name >= 0) {
		W->err = hold_host_wait(J, &p, ns, late_path(R, J, in->late));
		return;
	}
	if (!xp_wait_share(W->own, W->nown, W->lrows, W->nl, ns, on_part, &p))
		on_part(&p, &(struct xp_wait_row){ .kind = XP_WAIT_NONE, .where = W->none }, ns);
}

int jv_wait_share_host(struct jv *J)
{
	struct jv_wait *W = J->wait;

	for (size_t i = 0; W && i < W->nhw && !W->err; i++) {
		const struct host_wait *h = &W->hw[i];
		const struct host_pair *q = &W->pairs[h->pair];
		struct part_ctx p = { W, h->waiter, h->late, h->wid };
		int err;

		/* the share compares every row of one stretch with every row of the other */
		if ((err = jv_spend(J, h->path, (uint64_t)q->nw * q->nl + q->nw + q->nl)))
			return err;
		if (!xp_wait_share(q->rw, q->nw, q->rl, q->nl, h->ns, on_part, &p))
			on_part(&p, &(struct xp_wait_row){ .kind = XP_WAIT_NONE, .where = W->none },
				h->ns);
	}
	return W && W->err ? jv_fail(J, W->err, "out of memory") : 0;
}

/* Pass: every wait of this run's ranks against its late rank's stretch. */
int jv_wait_charge(struct jv *J, struct jv_run *R)
{
	struct jv_wait *W = J->wait;
	sqlite3_stmt *st;
	int64_t cur[3] = { -1, -1, -1 }, start = 0, rank = -1;
	size_t at = 0;
	const struct jv_inst *in = NULL;
	int step;

	if (sqlite3_prepare_v2(R->db, "SELECT c.pid, c.name, c.nth, c.start, s.kind, s.site, s.ns,"
			       " s.from_name, s.from_nth"
			       " FROM xs_coll c LEFT JOIN xs_span s ON s.pid = c.pid AND s.name = c.name"
			       " AND s.nth = c.nth ORDER BY 1, 2, 3", -1, &st, NULL) != SQLITE_OK)
		return no_spans(J, R);
	while (!W->err) {
		int row = (step = sqlite3_step(st)) == SQLITE_ROW;
		int same = row && sqlite3_column_int64(st, 0) == cur[0] &&
			   sqlite3_column_int64(st, 1) == cur[1] && sqlite3_column_int64(st, 2) == cur[2];

		if (!same && in)
			charge_one(J, R, (size_t)rank, at, start);
		if (!row)
			break;
		if (!same) {
			for (int c = 0; c < 3; c++)
				cur[c] = sqlite3_column_int64(st, c);
			W->nown = 0;
			W->from_name = W->from_nth = -1;
			start = xp_sat_add(sqlite3_column_int64(st, 3), R->r->shift_ns);
			in = instance(J, R, st, &rank, &at);
		}
		if (!in || sqlite3_column_type(st, 4) == SQLITE_NULL)
			continue;
		W->from_name = sqlite3_column_int64(st, 7);
		W->from_nth = sqlite3_column_int64(st, 8);
		if (xp_array__reserve((void **)&W->own, &W->own_cap, W->nown + 1, sizeof(*W->own), 16) ||
		    read_row(J, st, 4, &W->own[W->nown]))
			W->err = -ENOMEM;
		else
			W->nown++;
	}
	if (W->err) {
		sqlite3_finalize(st);
		/* -ETIME: jv_spend said it */
		return W->err == -ENOMEM ? jv_fail(J, W->err, "out of memory") : W->err;
	}
	return jv_end(J, R, st, step);
}

int jv_wait_print(struct jv *J, FILE *out)
{
	struct xp_report_opts o = XP_REPORT_DEFAULTS;
	static const struct xp_col doc_cols[] = {
		{ .json = "job", .kind = XP_COL_TEXT, .json_only = 1 },
		{ .json = "title", .kind = XP_COL_TEXT, .json_only = 1 },
		{ .json = "ranks", .kind = XP_COL_UINT, .json_only = 1 },
	};
	struct rep R = { .o = &o, .out = out };
	struct xp_table doc = { .cols = doc_cols, .n = 3, .out = out, .json = &R.json };
	struct jv_wait *W = J->wait;

	if (!W && wait_init(J))
		return -ENOMEM;
	W = J->wait;
	o.by = XP_BY_WAIT;
	o.top = J->o->top;
	o.format = J->o->format == XP_JOB_JSON ? XP_FMT_JSON : J->o->format == XP_JOB_CSV ?
		   XP_FMT_CSV : XP_FMT_TEXT;
	doc.fmt = o.format;
	xp_table_doc_begin(&doc, (struct xp_cell[]){ { .s = "wait" }, { .s = xp_rep_title(XP_BY_WAIT) },
						     { .u = J->nranks } });
	xp_wait_print(&R, &W->out, W->rank, J->clock_err);
	return xp_table_doc_end(&doc) ? -EIO : 0;
}

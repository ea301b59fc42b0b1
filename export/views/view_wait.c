/* view_wait.c - `xpcorr report --by wait`: cross-rank blame. Every wait in
 * a collective (a rank's kernel running before the last rank entered the
 * same instance, timeline.h) is charged to the rank it waited for and to
 * what that rank did to be late: the two ranks were last in step at the end
 * of the latest instance the waiting rank had finished (coll_inst.h); from
 * there each went to this instance's entry, and the late rank took longer.
 * Both stretches are split into causes as --by idle splits idle time
 * (idle_cause.h: a Python line the host ran, a blocking call, a wait off
 * CPU, launch to start) plus the GPU's own work (its launch site) and its
 * waits for other ranks; the wait is shared among the causes in which the
 * late rank spent more than the waiting one: among kinds of cause by their
 * net excess (a blocking call named differently on the two ranks is no
 * excess), within a kind by each place's excess. The first instance has no
 * earlier one: the ranks are taken to be in step at the job's first work.
 * A late rank's excess wait for a third rank is followed there (the third
 * rank against the late one, at the instance it waited on), to a depth of
 * MAX_DEPTH and never back to a rank of the chain. An instance whose last
 * two entries are within the clock alignment's error (a merged job's
 * xp_job_runs.spread_ns) is "too close to call", not charged to a cause.
 * Collectives waited for on the hosts (gloo's: host_coll.h) are instances
 * too; their stretches are what the waiting thread did (xp_idle_host_span),
 * shared by a pair of ranks' stretches summed over its waits (share_host).
 *
 *   xpcorr report --by wait job.db
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export/analysis/coll_inst.h"
#include "export/analysis/host_coll.h"
#include "export/idle/idle_cause.h"
#include "export/report/report_priv.h"
#include "export/analysis/wait_blame.h"
#include "src/array.h"
#include "src/satmath.h"
#include "src/u64map.h"

/* A stretch of one rank's device, split into causes. */
struct span {
	size_t slot;
	int64_t a, b;
	int64_t gtid;               /* a host's collective: the thread that waited, else -1 */
	size_t first, n;            /* its rows in the pool */
};

/* A wait to share out: slot w waited for slot l in instance inst. */
struct req {
	size_t w, l, inst;
	int64_t ns;                 /* the part of the first wait this one stands for */
	uint64_t wid;               /* the first wait's number */
	size_t chain[MAX_DEPTH + 2], depth;  /* chain[0] waited, chain[1] was late, ... */
	size_t sw, sl;              /* its spans */
};

struct blame {
	struct rep *R;
	struct xp_idle *I;
	struct xp_coll_job J;
	struct span *spans;
	size_t nspans, span_cap;
	struct xp_wait_row *pool;   /* the spans' rows */
	size_t npool, pool_cap;
	struct req *reqs, *next;    /* this round's, the next's */
	size_t nreqs, nnext, req_cap, next_cap;
	struct xp_wait_table out;
	size_t cur;                 /* the span being split */
	int err;
};

/* ns more to the span's row (kind, where), kept as the largest piece's
 * instance and slot for a wait for a rank. */
static void span_add(struct blame *B, int kind, const char *where, int64_t ns, int32_t slot,
		     int32_t inst)
{
	struct span *sp = &B->spans[B->cur];
	struct xp_wait_row *r = NULL;

	if (!where) {
		B->err = -ENOMEM;
		return;
	}
	for (size_t i = sp->first; i < sp->first + sp->n; i++)
		if (B->pool[i].kind == kind && B->pool[i].where == where)
			r = &B->pool[i];
	if (!r) {
		if (xp_array__reserve((void **)&B->pool, &B->pool_cap, B->npool + 1, sizeof(*B->pool),
				      256)) {
			B->err = -ENOMEM;
			return;
		}
		r = &B->pool[B->npool++];
		*r = (struct xp_wait_row){ .kind = kind, .where = where, .slot = slot, .inst = inst };
		sp->n++;
	}
	r->ns = xp_sat_add(r->ns, ns);
	if (ns > r->big)
		r->big = ns, r->slot = slot, r->inst = inst;
}

/* A segment of the span that is not idle: the GPU's own work at its launch
 * site, or its wait for another rank. */
static void on_busy(void *ctx, int64_t a, int64_t b, int cls, const struct xp_tl_op *op)
{
	struct blame *B = ctx;
	size_t sl = B->spans[B->cur].slot;
	char who[64];
	int slot;

	if (!op)
		return;
	if (cls != XP_TL_RANK) {
		span_add(B, XP_WAIT_GPU + cls, xp_idle_site(B->I, op->stack), b - a, -1, -1);
		return;
	}
	slot = xp_coll_slot(&B->J, op->late_pid);
	snprintf(who, sizeof(who), "rank %lld", slot >= 0 ? (long long)B->J.rank[slot] : -1ll);
	span_add(B, XP_WAIT_RANK, xp_idle_intern(B->I, who), b - a, slot,
		 B->J.inst[sl][op - B->J.tl[sl]->ops]);
}

/* One span split: the engine's rows of its idle time, on_busy's of the rest. */
static int split_span(struct blame *B, size_t k)
{
	struct span *sp = &B->spans[k];
	struct xp_idle_row row;
	int rc;

	B->cur = k;
	sp->first = B->npool;
	sp->n = 0;
	rc = sp->gtid >= 0 ? xp_idle_host_span(B->I, sp->gtid, sp->a, sp->b) :
	     xp_idle_span(B->I, sp->a, sp->b, on_busy, B);
	if (rc < 0)
		return rc;
	for (size_t i = 0; xp_idle_row(B->I, i, &row); i++)
		span_add(B, row.kind, row.where, row.ns, -1, -1);
	return B->err;
}

static int cmp_span(const void *pa, const void *pb, void *ctx)
{
	const struct span *s = ctx;
	size_t a = *(const size_t *)pa, b = *(const size_t *)pb;

	if (s[a].slot != s[b].slot)
		return s[a].slot < s[b].slot ? -1 : 1;
	return (a > b) - (a < b);
}

/* Every span of the round split, a device at a time (the engine loads a
 * process's blocking calls and waits once for all its spans). */
static int split_all(struct blame *B)
{
	size_t *order = malloc((B->nspans ? B->nspans : 1) * sizeof(*order));
	int rc = 0;

	if (!order)
		return -ENOMEM;
	for (size_t i = 0; i < B->nspans; i++)
		order[i] = i;
	qsort_r(order, B->nspans, sizeof(*order), cmp_span, B->spans);
	for (size_t i = 0; i < B->nspans && !rc; i++) {
		size_t k = order[i];

		if ((!i || B->spans[order[i - 1]].slot != B->spans[k].slot) &&
		    (rc = xp_idle_use(B->I, B->J.tl[B->spans[k].slot])) < 0)
			break;
		rc = split_span(B, k);
	}
	free(order);
	return rc;
}

static size_t add_span(struct blame *B, size_t slot, int64_t a, int64_t b, int64_t gtid)
{
	if (xp_array__reserve((void **)&B->spans, &B->span_cap, B->nspans + 1, sizeof(*B->spans), 64)) {
		B->err = -ENOMEM;
		return 0;
	}
	B->spans[B->nspans] = (struct span){ .slot = slot, .a = a, .b = a < b ? b : a, .gtid = gtid };
	return B->nspans++;
}

/* The round's requests' spans: each rank from where the two were last in
 * step to its entry into the instance; for a host's collective, what the
 * thread that entered it did (its GPU's work is not what it waited on). */
static int plan_spans(struct blame *B)
{
	B->nspans = B->npool = 0;
	for (size_t i = 0; i < B->nreqs && !B->err; i++) {
		struct req *q = &B->reqs[i];
		int32_t iw = B->J.op[q->inst * B->J.nslots + q->w];
		const struct xp_tl_op *ow = &B->J.tl[q->w]->ops[iw], *ol = xp_coll_op(&B->J, q->inst, q->l);
		int64_t pw, pl;

		xp_coll_in_step(&B->J, q->w, (size_t)iw, q->l, &pw, &pl);
		q->sw = add_span(B, q->w, pw, ow->start, ow->host ? ow->gtid : -1);
		q->sl = add_span(B, q->l, pl, ol->start, ol->host ? ol->gtid : -1);
	}
	return B->err;
}

/* ns of wait wid more to (waiter, late, culprit, kind, where). */
static void charge(struct blame *B, const struct req *q, size_t culprit, int kind,
		   const char *where, int64_t ns)
{
	if (xp_wait_table_add(&B->out, q->chain[0], q->chain[1], culprit, kind, where, ns, q->wid))
		B->err = -ENOMEM;
}

static int in_chain(const struct req *q, size_t slot)
{
	for (size_t i = 0; i <= q->depth + 1; i++)
		if (q->chain[i] == slot)
			return 1;
	return 0;
}

/* A part of the late rank's excess that is its own wait for rank row->slot:
 * followed there, or charged as a cycle or as too deep. */
static void follow(struct blame *B, const struct req *q, const struct xp_wait_row *row, int64_t ns)
{
	struct req *n;

	if (row->slot < 0 || row->inst < 0 || in_chain(q, (size_t)row->slot) || q->depth >= MAX_DEPTH ||
	    !xp_coll_op(&B->J, (size_t)row->inst, q->l) ||
	    !xp_coll_op(&B->J, (size_t)row->inst, (size_t)row->slot)) {
		charge(B, q, q->l, row->slot >= 0 && in_chain(q, (size_t)row->slot) ? XP_WAIT_CYCLE :
		       q->depth >= MAX_DEPTH ? XP_WAIT_DEPTH : XP_WAIT_RANK, row->where, ns);
		return;
	}
	if (xp_array__reserve((void **)&B->next, &B->next_cap, B->nnext + 1, sizeof(*B->next), 64)) {
		B->err = -ENOMEM;
		return;
	}
	n = &B->next[B->nnext++];
	*n = *q;
	n->w = q->l;
	n->l = (size_t)row->slot;
	n->inst = (size_t)row->inst;
	n->ns = ns;
	n->chain[++n->depth + 1] = (size_t)row->slot;
}

struct part_ctx {
	struct blame *B;
	const struct req *q;
};

static void on_part(void *ctx, const struct xp_wait_row *r, int64_t ns)
{
	struct part_ctx *p = ctx;

	if (r->kind == XP_WAIT_RANK)
		follow(p->B, p->q, r, ns);
	else
		charge(p->B, p->q, p->q->l, r->kind, r->where, ns);
}

/* A request's wait shared among the late rank's causes (wait_share.c). */
static void share(struct blame *B, const struct req *q)
{
	const struct span *w = &B->spans[q->sw], *l = &B->spans[q->sl];
	struct part_ctx p = { B, q };

	if (!xp_wait_share(B->pool + w->first, w->n, B->pool + l->first, l->n, q->ns, on_part, &p))
		charge(B, q, q->l, XP_WAIT_NONE,
		       xp_idle_intern(B->I, "(nothing took the late rank longer)"), q->ns);
}

/* The rows of every host wait of one waiting and one late rank, summed. */
struct pair_rows {
	size_t w, l;
	struct xp_wait_row *rw, *rl;
	size_t nw, nl, cw, cl;
};

/* The round's waits in host collectives, shared by what their two ranks'
 * stretches add up to over all their waits: a host's stretch is named by
 * its CPU samples (about 1 ms apart at 999 Hz), too coarse for one wait of
 * a few ms; over the job the samples' noise cancels, a slow loader's does
 * not. Each wait still gets its own share of those rows. */
static int share_host(struct blame *B)
{
	struct pair_rows *p = NULL;
	struct xp_u64map at;        /* (waiting, late slot) -> index + 1 into p */
	size_t np = 0, cap = 0;
	int rc = 0;

	xp_u64map_init(&at);
	for (size_t i = 0; i < B->nreqs && !rc; i++) {
		const struct req *q = &B->reqs[i];
		const struct span *w = &B->spans[q->sw], *l = &B->spans[q->sl];
		uint64_t *slot;
		int fresh;

		if (w->gtid < 0)
			continue;
		if (xp_u64map_upsert(&at, q->w, q->l, &slot, &fresh) ||
		    (fresh && xp_array__reserve((void **)&p, &cap, np + 1, sizeof(*p), 8))) {
			rc = -ENOMEM;
			break;
		}
		if (fresh)
			p[(*slot = ++np) - 1] = (struct pair_rows){ .w = q->w, .l = q->l };
		rc = xp_wait_rows_add(&p[*slot - 1].rw, &p[*slot - 1].nw, &p[*slot - 1].cw,
				      B->pool + w->first, w->n);
		rc = rc ? rc : xp_wait_rows_add(&p[*slot - 1].rl, &p[*slot - 1].nl, &p[*slot - 1].cl,
						B->pool + l->first, l->n);
	}
	for (size_t i = 0; i < B->nreqs && !rc && !B->err; i++) {
		const struct req *q = &B->reqs[i];
		struct part_ctx c = { B, q };
		const struct pair_rows *r;

		if (B->spans[q->sw].gtid < 0)
			continue;
		r = &p[*xp_u64map_find(&at, q->w, q->l) - 1];
		if (!xp_wait_share(r->rw, r->nw, r->rl, r->nl, q->ns, on_part, &c))
			charge(B, q, q->l, XP_WAIT_NONE,
			       xp_idle_intern(B->I, "(nothing took the late rank longer)"), q->ns);
	}
	for (size_t k = 0; k < np; k++) {
		free(p[k].rw);
		free(p[k].rl);
	}
	free(p);
	xp_u64map_free(&at);
	return rc ? rc : B->err;
}

/* The first round: every collective wait of the selected ranks. */
static int first_waits(struct blame *B)
{
	const struct xp_report_opts *o = B->R->o;
	const struct xp_coll_job *J = &B->J;

	for (size_t sl = 0; sl < J->nslots; sl++) {
		const struct xp_tl *tl = J->tl[sl];

		if (!xp_tl_selected(tl->gpid, o->pid))
			continue;
		for (size_t i = 0; i < tl->n && !B->err; i++) {
			const struct xp_tl_op *op = &tl->ops[i];
			int late = op->wait > 0 ? xp_coll_slot(J, op->late_pid) : -1;
			struct req q = { .w = sl, .ns = op->wait };

			if (op->wait <= 0 || J->inst[sl][i] < 0 || (o->since && op->start < o->since) ||
			    (o->until && op->start >= o->until))
				continue;
			q.wid = ++B->out.nwaits;
			B->out.total_ns = xp_sat_add(B->out.total_ns, op->wait);
			q.inst = (size_t)J->inst[sl][i];
			q.chain[0] = sl;
			q.chain[1] = q.l = late >= 0 ? (size_t)late : sl;
			if (late < 0 || (size_t)late == sl || !xp_coll_op(J, q.inst, q.l)) {
				charge(B, &q, q.l, XP_WAIT_NONE, xp_idle_intern(B->I, "(late rank not found)"),
				       op->wait);
			} else if (op->wait <= J->clock_err || xp_coll_too_close(J, q.inst)) {
				charge(B, &q, q.l, XP_WAIT_CLOSE, xp_idle_intern(B->I, "too close to call"),
				       op->wait);
			} else {
				if (xp_array__reserve((void **)&B->next, &B->next_cap, B->nnext + 1,
						      sizeof(*B->next), 64))
					return -ENOMEM;
				B->next[B->nnext++] = q;
			}
		}
	}
	return B->err;
}

/* Rounds: the waits, then the late ranks' own waits followed, deeper each. */
static int rounds(struct blame *B)
{
	int rc = first_waits(B);

	while (!rc && B->nnext) {
		struct req *t = B->reqs;
		size_t cap = B->req_cap;

		B->reqs = B->next, B->nreqs = B->nnext, B->req_cap = B->next_cap;
		B->next = t, B->nnext = 0, B->next_cap = cap;
		if ((rc = plan_spans(B)) < 0 || (rc = split_all(B)) < 0 || (rc = share_host(B)) < 0)
			break;
		for (size_t i = 0; i < B->nreqs && !B->err; i++)
			if (B->spans[B->reqs[i].sw].gtid < 0)
				share(B, &B->reqs[i]);
		rc = B->err;
	}
	return rc;
}

int xp_view_wait(struct rep *R, size_t *rows)
{
	struct blame B = { .R = R };
	struct xp_tl_set set = { 0 };
	struct xp_host_colls H = { 0 };
	int rc;

	*rows = 0;
	xp_u64map_init(&B.out.at);
	if ((rc = xp_idle_open(R->db, R->o->pid, &B.I)) < 0)
		return rc;
	if ((rc = xp_host_colls_timelines(R->db, &set, &H)) < 0 ||
	    (rc = xp_coll_job_load(R->db, &set, &B.J)) < 0 || (rc = rounds(&B)) < 0)
		goto out;
	xp_wait_print(R, &B.out, B.J.rank, B.J.clock_err);
	*rows = B.out.n;
	if (H.mismatch)
		xp_rep_foot_line(R, "Host-side collectives (waits in c10d::Work::wait) not matched across"
				 " ranks, not charged: rank %lld waited %zu times, rank %lld %zu",
				 (long long)H.rank[0], H.count[0], (long long)H.rank[xp_host_colls_odd(&H)],
				 H.count[xp_host_colls_odd(&H)]);
out:
	xp_idle_close(B.I);
	xp_host_colls_free(&H);
	xp_coll_job_free(&B.J);
	xp_tl_set_free(&set);
	free(B.spans);
	free(B.pool);
	free(B.reqs);
	free(B.next);
	free(B.out.v);
	xp_u64map_free(&B.out.at);
	return rc;
}

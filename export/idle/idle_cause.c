/* idle_cause.c - the causes of GPU idle time (idle_cause.h), --by idle's
 * engine: each idle gap is owned by the thread that launched the work that
 * ended it; from the gap's start until that launch the thread was blocked
 * in a CUDA synchronize call (the line that called it), off CPU (where it
 * blocked) or running (its CPU samples in the gap share the time: the
 * hottest functions, time without a sample shared as the samples of gaps
 * between the same launch sites, else before the same launch, else of the
 * same launching thread); from the launch to the start the work
 * was on its way ("launch to start"). A collective's kernel that ran before
 * the last rank started the same collective was waiting for that rank. Each
 * gap also has what drained the queue before it: the blocking call the
 * host was in when the GPU ran out of work, else none. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/array.h"
#include "db/launch.h"
#include "db/pypath.h"
#include "db/db_schema.h"
#include "export/names/elidename.h"
#include "export/idle/idle_priv.h"
#include "export/names/pyreach.h"
#include "src/satmath.h"

/* Plain words: what the host was doing while the GPU idled. The estimated
 * kinds are time the thread ran without a sample or a wait in its gap,
 * shared out as the samples of the gaps between the same launch sites. */
static const char *const cause_label[C_KINDS] = {
	"host running", "host in libraries", "host not seen", "CUDA synchronize", "launch to start",
	"waiting for rank", "not blocked", "host waiting", "est. host running", "est. in libraries",
};
static const char *const cause_key[C_KINDS] = { "host", "host_native", "host_unsampled", "sync",
						"launch", "rank", "none", "wait", "host_estimated",
						"host_native_estimated" };

/* ns more to row i of t, from the gap being attributed. */
static void add_to_row(struct xp_idle *S, struct cause_table *t, size_t i, int64_t ns)
{
	t->v[i].ns = xp_sat_add(t->v[i].ns, ns);
	t->v[i].pieces += t->v[i].last_gap != S->gap_no;
	t->v[i].last_gap = S->gap_no;
}

/* Adds ns to the cause (kind, where) of t; its index + 1 in t->v, 0 if
 * nothing was added (ns <= 0, or out of memory: S->err). */
static size_t add_cause_to(struct xp_idle *S, struct cause_table *t, int kind, const char *where,
			   int64_t ns)
{
	uint64_t *slot;
	int fresh;

	if (ns <= 0)
		return 0;
	if (!where) {
		S->err = -ENOMEM;
		return 0;
	}
	/* where is interned (site_of): one pointer per text */
	if (xp_u64map_upsert(&t->at, (uint64_t)kind, (uint64_t)(uintptr_t)where, &slot, &fresh)) {
		S->err = -ENOMEM;
		return 0;
	}
	if (fresh) {
		if (xp_array__reserve((void **)&t->v, &t->cap, t->n + 1, sizeof(*t->v), 16)) {
			S->err = -ENOMEM;
			return 0;
		}
		t->v[t->n] = (struct cause){ .kind = kind, .where = where };
		*slot = ++t->n;
	}
	add_to_row(S, t, (size_t)*slot - 1, ns);
	return (size_t)*slot;
}

static void add_cause(struct xp_idle *S, int kind, const char *where, int64_t ns)
{
	add_cause_to(S, &S->causes, kind, where, ns);
}

/* The kind of the gap between the launches of stacks before and after
 * (index + 1 into S->kinds; 0 when out of memory). */
static size_t gap_kind_of(struct xp_idle *S, int64_t before, int64_t after, int64_t gtid)
{
	const char *a = xp_idle__site_of(S, before, "(no launch stack)"), *b = xp_idle__site_of(S, after,
									"(no launch stack)");
	uint64_t *slot;
	int fresh;

	if (!a || !b || xp_u64map_upsert(&S->kind_at, (uint64_t)(uintptr_t)a, (uint64_t)(uintptr_t)b,
					 &slot, &fresh))
		return 0;
	if (fresh) {
		if (xp_array__reserve((void **)&S->kinds, &S->kind_cap, S->nkinds + 1, sizeof(*S->kinds),
				      16))
			return 0;
		S->kinds[S->nkinds] = (struct gap_kind){ .next_site = b, .gtid = gtid };
		*slot = ++S->nkinds;
	}
	return (size_t)*slot;
}

/* A sample's share of the gap, to the distribution of its kind of gap. */
static void add_share(struct xp_idle *S, int cause, const char *where, int64_t ns)
{
	struct gap_kind *k;
	uint64_t *slot;
	int fresh;

	if (!S->gap_kind || !where || ns <= 0)
		return;
	k = &S->kinds[S->gap_kind - 1];
	k->sampled_ns = xp_sat_add(k->sampled_ns, ns);
	if (S->last_share) {
		struct kind_share *last = &S->shares[S->last_share - 1];

		if (last->kind == S->gap_kind - 1 && last->cause == cause && last->where == where) {
			last->ns = xp_sat_add(last->ns, ns);
			return;
		}
	}
	/* interned pointers and small indices: the key is unique */
	if (xp_u64map_upsert(&S->share_at, (uint64_t)S->gap_kind << 2 | (uint64_t)cause,
			     (uint64_t)(uintptr_t)where, &slot, &fresh)) {
		S->err = -ENOMEM;
		return;
	}
	if (fresh) {
		if (xp_array__reserve((void **)&S->shares, &S->share_cap, S->nshares + 1,
				      sizeof(*S->shares), 64)) {
			S->err = -ENOMEM;
			return;
		}
		S->shares[S->nshares] = (struct kind_share){ S->gap_kind - 1, cause, where, 0 };
		*slot = ++S->nshares;
	}
	S->shares[*slot - 1].ns = xp_sat_add(S->shares[*slot - 1].ns, ns);
	S->last_share = (size_t)*slot;
}

/* Time of the gap with no sample and no wait: shared out at the end. */
static void add_unseen(struct xp_idle *S, int64_t ns)
{
	struct gap_kind *k;

	if (!S->gap_kind || ns <= 0)
		return;
	k = &S->kinds[S->gap_kind - 1];
	k->unseen_ns = xp_sat_add(k->unseen_ns, ns);
	k->unseen_gaps += k->last_gap != S->gap_no;
	k->last_gap = S->gap_no;
}

/* Kind k's unseen time, the share sh of sampled (what sh's samples stood
 * for among them) as an estimated row. The row has a number of its own:
 * it counts one piece here, the kind's gaps in all (kinds that name one
 * place add up). */
static void add_estimate(struct xp_idle *S, const struct gap_kind *k, const struct kind_share *sh,
			 int64_t sampled)
{
	int64_t ns = (int64_t)((double)k->unseen_ns * (double)sh->ns / (double)sampled + 0.5);
	size_t row;

	S->gap_no++;
	row = add_cause_to(S, &S->causes, sh->cause == C_HOST ? C_HOST_EST : C_NATIVE_EST,
			   sh->where, ns);
	if (row)
		S->causes.v[row - 1].pieces += k->unseen_gaps - 1;
	S->est_ns = xp_sat_add(S->est_ns, ns);
}

/* Whether kinds a and b pool their samples for an unsampled kind: the same
 * launch ended them, or (by_thread) the same thread made that launch. */
static int pooled_with(const struct gap_kind *a, const struct gap_kind *b, int by_thread)
{
	/* interned names: one site, one pointer */
	return by_thread ? a->gtid >= 0 && a->gtid == b->gtid : a->next_site == b->next_site;
}

/* A kind of gap none of whose gaps was sampled (short gaps at 99 Hz): its
 * unseen time as the samples of the kinds it pools with shared theirs (the
 * host's way to the same launch seen elsewhere; failing that, what the
 * same launching thread ran between its launches). 1 when estimated, 0
 * when no such kind had a sample either. */
static int estimate_pooled(struct xp_idle *S, const struct gap_kind *k, int by_thread)
{
	int64_t pooled = 0;

	for (size_t i = 0; i < S->nshares; i++)
		if (pooled_with(&S->kinds[S->shares[i].kind], k, by_thread))
			pooled = xp_sat_add(pooled, S->shares[i].ns);
	if (!pooled)
		return 0;
	for (size_t i = 0; i < S->nshares; i++)
		if (pooled_with(&S->kinds[S->shares[i].kind], k, by_thread))
			add_estimate(S, k, &S->shares[i], pooled);
	return 1;
}

/* Each kind of gap's unseen time, as the samples of its kind shared the
 * sampled time (estimated rows); a kind without a sample pools with others
 * (estimate_pooled), else leaves it "host not seen" before its launch. */
void xp_idle__estimate(struct xp_idle *S)
{
	for (size_t i = 0; i < S->nshares; i++) {
		const struct gap_kind *k = &S->kinds[S->shares[i].kind];

		if (k->unseen_ns && k->sampled_ns)
			add_estimate(S, k, &S->shares[i], k->sampled_ns);
	}
	for (size_t i = 0; i < S->nkinds; i++) {
		const struct gap_kind *k = &S->kinds[i];
		size_t row;

		if (!k->unseen_ns || k->sampled_ns || estimate_pooled(S, k, 0) ||
		    estimate_pooled(S, k, 1))
			continue;
		S->gap_no++;
		row = add_cause_to(S, &S->causes, C_NOSAMPLE, k->next_site, k->unseen_ns);
		if (row)
			S->causes.v[row - 1].pieces += k->unseen_gaps - 1;
	}
	S->nkinds = S->nshares = S->last_share = 0;
	xp_u64map_free(&S->kind_at);
	xp_u64map_free(&S->share_at);
}

static void on_segment(void *ctx, int64_t a, int64_t b, int cls, const struct xp_tl_op *op)
{
	struct xp_idle *S = ctx;
	char who[64];

	S->cls_ns[cls] = xp_sat_add(S->cls_ns[cls], xp_sat_sub(b, a));
	if (S->busy && cls != XP_TL_IDLE) {
		S->busy(S->busy_ctx, a, b, cls, op);
	} else if (cls == XP_TL_IDLE) {
		if (xp_array__reserve((void **)&S->gaps, &S->gcap, S->ngaps + 1, sizeof(*S->gaps), 64)) {
			S->err = -ENOMEM;
			return;
		}
		S->gaps[S->ngaps][0] = a;
		S->gaps[S->ngaps++][1] = b;
	} else if (cls == XP_TL_RANK && op) {
		sqlite3_stmt *s;
		int64_t rank = -1;

		if (sqlite3_prepare_v2(S->db, "SELECT rank FROM xp_ranks WHERE pid = ?", -1, &s,
				       NULL) == SQLITE_OK) {
			sqlite3_bind_int64(s, 1, op->late_pid);
			if (sqlite3_step(s) == SQLITE_ROW)
				rank = sqlite3_column_int64(s, 0);
			sqlite3_finalize(s);
		}
		snprintf(who, sizeof(who), "rank %lld (the last to start the collective)", (long long)rank);
		S->gap_no++;
		add_cause(S, C_RANK, xp_idle__intern(S, who), b - a);
	}
}

/* A readable sample's share: to "host running" at its site, the row
 * remembered in its memo after the first time. */
static void add_host_sample(struct xp_idle *S, int64_t stack, int64_t ns)
{
	struct stack_memo *m;
	const char *site;
	size_t row;

	if (ns <= 0)
		return;
	m = xp_idle__memo(S, stack);
	if (m && m->host_row && m->host_generation == S->causes.generation) {
		add_to_row(S, &S->causes, m->host_row - 1, ns);
		add_share(S, C_HOST, S->causes.v[m->host_row - 1].where, ns);
		return;
	}
	site = xp_idle__host_name(S, stack, 0);
	add_share(S, C_HOST, site, ns);
	if ((row = add_cause_to(S, &S->causes, C_HOST, site, ns)) && (m = xp_idle__memo(S, stack))) {
		m->host_row = row;
		m->host_generation = S->causes.generation;
	}
}

/* The sample of the piece (up to hi) nearest sample i in time that is
 * readable: prev (the latest before i, hi if none) or the first after
 * i, which *next caches; hi if none. */
static size_t nearest_readable(struct xp_idle *S, const struct xp_thread_samples *t, size_t hi,
			     size_t i, size_t prev, size_t *next)
{
	if (*next <= i || *next == (size_t)-1)
		for (*next = i + 1; *next < hi && !xp_idle__readable(S, t->s[*next][1]); ++*next)
			;
	if (prev == hi)
		return *next;
	if (*next >= hi)
		return prev;
	return t->s[i][0] - t->s[prev][0] <= t->s[*next][0] - t->s[i][0] ? prev : *next;
}

/* [a, b) of thread gtid on CPU: its CPU samples there share the time;
 * without one, the time is unseen (estimate_unseen shares it out). A
 * sample in libraries only (native code the sampler could not walk out of:
 * cuBLAS loading its kernels, libtorch) is "host in libraries", named by the
 * nearest readable sample of the piece, else by its own innermost frame. */
static void cpu_piece(struct xp_idle *S, int64_t gtid, int64_t a, int64_t b)
{
	const struct xp_thread_samples *t;
	int64_t each, rest;
	size_t lo, hi, n, prev, next = (size_t)-1;
	const char *where;
	int err;

	if (b <= a)
		return;
	if (!(t = xp_sample_reader_get(S->samples, gtid, &err))) {
		S->err = err;
		return;
	}
	for (lo = 0, hi = t->n; lo < hi;) {         /* the first sample at or after a */
		size_t mid = lo + (hi - lo) / 2;

		if (t->s[mid][0] < a)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (hi = lo; hi < t->n && t->s[hi][0] < b; hi++)
		;
	n = hi - lo;
	if (!n) {
		add_unseen(S, b - a);
		return;
	}
	each = (b - a) / (int64_t)n;
	rest = (b - a) - each * (int64_t)n;
	prev = hi;
	for (size_t i = lo; i < hi; i++) {
		int64_t ns = each + ((int64_t)(i - lo) < rest), stack = t->s[i][1];
		size_t near;

		if (xp_idle__readable(S, stack)) {
			prev = i;
			add_host_sample(S, stack, ns);
			continue;
		}
		near = nearest_readable(S, t, hi, i, prev, &next);
		where = near < hi ? xp_idle__host_name(S, t->s[near][1], 0) :
			xp_idle__site_of(S, S->next_stack, "(no launch stack)");
		add_share(S, C_NATIVE, where, ns);
		add_cause(S, C_NATIVE, where, ns);
	}
}

/* The name of wait w of thread gtid: where it went off CPU; without a
 * stack there (perf's switch records for a normal user), the thread's last
 * sample before it; "preempted" when the thread stayed runnable. */
static const char *wait_name(struct xp_idle *S, int64_t gtid, const struct xp_wait *w)
{
	const struct xp_thread_samples *t;
	const char *name = NULL;
	char buf[700];
	int err;

	if (w->stack > 0) {
		name = xp_idle__host_name(S, w->stack, 1);
	} else if ((t = xp_sample_reader_get(S->samples, gtid, &err))) {
		size_t lo = 0, hi = t->n;

		while (lo < hi) {   /* past the last sample before the wait */
			size_t mid = lo + (hi - lo) / 2;

			if (t->s[mid][0] < w->start)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo && (name = xp_idle__host_name(S, t->s[lo - 1][1], 0))) {
			snprintf(buf, sizeof(buf), "%slast seen at %s", w->preempted ? "preempted, " : "",
				 name);
			return xp_idle__intern(S, buf);
		}
	} else {
		S->err = err;
	}
	if (!name)
		name = xp_idle__intern_fixed(S, "(wait without a stack)");
	if (name && w->preempted) {
		snprintf(buf, sizeof(buf), "preempted at %s", name);
		name = xp_idle__intern(S, buf);
	}
	return name;
}

/* [a, b) of thread gtid before its launch, outside CUDA calls: off CPU in
 * its waits (named where it blocked), on CPU between them (cpu_piece). */
static void host_piece(struct xp_idle *S, int64_t gtid, int64_t a, int64_t b)
{
	for (size_t i = xp_idle_wait_first(S->waits, S->nwaits, gtid, a); i < S->nwaits && a < b;
	     i++) {
		const struct xp_wait *w = &S->waits[i];

		if (w->gtid != gtid || w->start >= b)
			break;
		if (w->start > a)
			cpu_piece(S, gtid, a, w->start);
		a = w->start > a ? w->start : a;
		add_cause(S, C_WAIT, wait_name(S, gtid, w), (w->end < b ? w->end : b) - a);
		a = w->end;
	}
	cpu_piece(S, gtid, a, b);
}

/* The first of the thread's blocking calls that ends after a (the calls
 * are by thread then start; one thread's do not overlap, so their ends
 * rise too): S->nsync if none. */
static size_t first_sync_after(const struct xp_idle *S, int64_t gtid, int64_t a)
{
	size_t lo = 0, hi = S->nsync;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct xp_sync_call *c = &S->syncs[mid];

		if (c->gtid < gtid || (c->gtid == gtid && c->end <= a))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* [a, b) of the launching thread before its launch: in sync calls or not. */
static void host_part(struct xp_idle *S, int64_t gtid, int64_t a, int64_t b)
{
	for (size_t i = first_sync_after(S, gtid, a); i < S->nsync && a < b; i++) {
		const struct xp_sync_call *c = &S->syncs[i];

		if (c->gtid != gtid)
			break;
		if (c->end <= a)
			continue;
		if (c->start >= b)
			break;
		if (c->start > a)
			host_piece(S, gtid, a, c->start);
		a = c->start > a ? c->start : a;
		add_cause(S, C_SYNC, xp_idle__site_of(S, c->stack, "(sync call without a launch stack)"),
			  (c->end < b ? c->end : b) - a);
		a = c->end;
	}
	host_piece(S, gtid, a, b);
}

/* When the GPU ran out of work before the gap starting at a: a, or for a
 * gap that began before its window (a step's first), the end of the last
 * work before it; -1: none before. */
static int64_t drained_at(const struct xp_idle *S, int64_t a)
{
	size_t i = xp_tl_first_from(S->tl, a);
	int64_t last = -1;

	if (a != S->window_start)
		return a;
	/* work overlaps a little; the latest end is among the last started */
	for (size_t k = 0; k < 64 && i > 0; k++) {
		const struct xp_tl_op *op = &S->tl->ops[--i];

		if (op->end <= a && op->end > last)
			last = op->end;
	}
	return last;
}

/* The blocking call of the process in progress at t, or NULL. */
static const struct xp_sync_call *blocking_at(const struct xp_idle *S, int64_t t)
{
	size_t lo = 0, hi = S->nsync;

	while (lo < hi) {           /* past the last call started at or before t */
		size_t mid = lo + (hi - lo) / 2;

		if (S->sync_by_start[mid].start <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* calls of one thread do not overlap; a few threads may */
	for (size_t k = 0; k < 16 && lo > 0; k++) {
		const struct xp_sync_call *c = &S->sync_by_start[--lo];

		if (c->end > t)
			return c;
	}
	return NULL;
}

/* Gap [a, b): the call that drained the queue before it (the host was
 * blocked in it when the GPU ran out of work: without it the host would
 * have queued more ahead), or none (the host was running: it did not
 * launch in time). */
static void drained_by(struct xp_idle *S, int64_t a, int64_t b)
{
	int64_t t = drained_at(S, a);
	const struct xp_sync_call *c = t >= 0 ? blocking_at(S, t) : NULL;

	if (c)
		add_cause_to(S, &S->drained, C_SYNC,
			     xp_idle__site_of(S, c->stack, "(sync call without a launch stack)"), b - a);
	else
		add_cause_to(S, &S->drained, C_UNBLOCKED, xp_idle__intern_fixed(S, t < 0 ? "(no GPU work before it)" :
			     "(no blocking call: the host did not launch in time)"), b - a);
}

static void attribute_gaps(struct xp_idle *S)
{
	/* the gaps come in time order: the op after each, found moving on */
	size_t next = S->ngaps ? xp_tl_first_from(S->tl, S->gaps[0][1]) : 0;

	for (size_t g = 0; g < S->ngaps && !S->err; g++) {
		int64_t a = S->gaps[g][0], b = S->gaps[g][1], launch = b, gtid = S->main_gtid, stack = -1;

		while (next < S->tl->n && S->tl->ops[next].start < b)
			next++;

		S->gap_no++;
		if (next < S->tl->n && S->tl->ops[next].launch >= 0) {
			launch = S->tl->ops[next].launch;
			gtid = S->tl->ops[next].gtid;
			stack = S->tl->ops[next].stack;
		}
		if (launch < b)
			add_cause(S, C_LAUNCH, xp_idle__site_of(S, stack, "(no launch stack)"),
				  b - (launch > a ? launch : a));
		/* the gap's kind: the launch sites before and after it */
		S->next_stack = stack;
		S->gap_kind = gap_kind_of(S, next > 0 ? S->tl->ops[next - 1].stack : -1, stack, gtid);
		if (!S->gap_kind)
			S->err = -ENOMEM;
		if (launch > a)
			host_part(S, gtid, a, launch < b ? launch : b);
		drained_by(S, a, b);
	}
	S->ngaps = 0;
}

static int cmp_sync_start(const void *pa, const void *pb)
{
	const struct xp_sync_call *a = pa, *b = pb;

	return (a->start > b->start) - (a->start < b->start);
}

/* The process's blocking CUDA calls with their stacks (idle_sync.h). */
static int load_syncs(struct xp_idle *S, int64_t gpid)
{
	int rc;

	free(S->syncs);
	free(S->sync_by_start);
	S->sync_by_start = NULL;
	if ((rc = xp_idle_syncs_load(S->db, gpid, &S->syncs, &S->nsync)) < 0 || !S->nsync)
		return rc;
	if (!(S->sync_by_start = malloc(S->nsync * sizeof(*S->syncs))))
		return -ENOMEM;
	memcpy(S->sync_by_start, S->syncs, S->nsync * sizeof(*S->syncs));
	qsort(S->sync_by_start, S->nsync, sizeof(*S->syncs), cmp_sync_start);
	return 0;
}

/* The thread owning gaps whose next work has no launch call. */
static int64_t main_thread(const struct xp_tl *tl)
{
	int64_t best = -1, run = 0, best_run = 0;

	/* the most frequent launching thread, by a majority vote */
	for (size_t i = 0; i < tl->n; i++) {
		if (tl->ops[i].gtid < 0)
			continue;
		if (!run)
			best = tl->ops[i].gtid;
		run += tl->ops[i].gtid == best ? 1 : -1;
		best_run = run > best_run ? run : best_run;
	}
	return best;
}

int xp_idle__has_python(sqlite3 *db)
{
	sqlite3_stmt *s;
	int rc;

	if (sqlite3_prepare_v2(db, "SELECT EXISTS (SELECT 1 FROM xp_frames WHERE kind = ?1)", -1, &s,
			       NULL) != SQLITE_OK)
		return -EIO;
	sqlite3_bind_int(s, 1, XP_FRAME_PYTHON);
	rc = sqlite3_step(s) == SQLITE_ROW ? sqlite3_column_int(s, 0) != 0 : -EIO;
	sqlite3_finalize(s);
	return rc;
}

static void table_reset(struct cause_table *t)
{
	t->n = 0;
	t->generation++;
	xp_u64map_free(&t->at);
}

static void table_free(struct cause_table *t)
{
	xp_u64map_free(&t->at);
	free(t->v);
}

int xp_idle_use(struct xp_idle *S, const struct xp_tl *tl)
{
	int rc;

	S->tl = tl;
	free(S->waits);
	S->waits = NULL;
	if ((rc = load_syncs(S, tl->gpid)) < 0 ||
	    (rc = xp_idle_waits_load(S->db, tl->gpid, &S->waits, &S->nwaits)) < 0)
		return rc;
	S->main_gtid = main_thread(tl);
	return 0;
}

void xp_idle__reset(struct xp_idle *S)
{
	table_reset(&S->causes);
	table_reset(&S->drained);
}

int xp_idle__sweep(struct xp_idle *S, int64_t a, int64_t b)
{
	int rc;

	S->window_start = a;
	if ((rc = xp_tl_sweep(S->tl, a, b, on_segment, S)) < 0)
		return rc;
	attribute_gaps(S);
	return 0;
}

int xp_idle_span(struct xp_idle *S, int64_t a, int64_t b, xp_tl_segment_fn busy, void *ctx)
{
	int rc;

	xp_idle__reset(S);
	S->busy = busy;
	S->busy_ctx = ctx;
	rc = b > a ? xp_idle__sweep(S, a, b) : 0;
	xp_idle__estimate(S);
	S->busy = NULL;
	return rc ? rc : S->err;
}

int xp_idle_host_span(struct xp_idle *S, int64_t gtid, int64_t a, int64_t b)
{
	xp_idle__reset(S);
	if (b > a) {
		/* one kind of "gap" for every host span: its unsampled time
		 * shared as the host spans' samples */
		S->gap_no++;
		S->next_stack = -1;
		if (!(S->gap_kind = gap_kind_of(S, -1, -1, gtid)))
			return -ENOMEM;
		host_part(S, gtid, a, b);
	}
	xp_idle__estimate(S);
	S->gap_kind = 0;
	return S->err;
}

int xp_idle_row(struct xp_idle *S, size_t i, struct xp_idle_row *row)
{
	/* an estimate stands for the kind it estimates */
	static const int base[C_KINDS] = { [C_NATIVE] = C_NATIVE, [C_NOSAMPLE] = C_NOSAMPLE,
					   [C_SYNC] = C_SYNC, [C_LAUNCH] = C_LAUNCH, [C_RANK] = C_RANK,
					   [C_UNBLOCKED] = C_UNBLOCKED, [C_WAIT] = C_WAIT,
					   [C_HOST_EST] = C_HOST, [C_NATIVE_EST] = C_NATIVE };
	const struct cause *c;

	if (i >= S->causes.n)
		return 0;
	c = &S->causes.v[i];
	*row = (struct xp_idle_row){ base[c->kind], cause_key[base[c->kind]], cause_label[base[c->kind]],
				     c->where, c->ns };
	return 1;
}

const char *xp_idle_kind(int kind, int key)
{
	if (kind < 0 || kind >= C_KINDS)
		return NULL;
	return key ? cause_key[kind] : cause_label[kind];
}

const char *xp_idle_intern(struct xp_idle *S, const char *text)
{
	return xp_idle__intern(S, text);
}

const char *xp_idle_site(struct xp_idle *S, int64_t stack)
{
	return xp_idle__site_of(S, stack, "(no launch stack)");
}

int xp_idle_open(sqlite3 *db, uint32_t pid, struct xp_idle **out)
{
	struct xp_idle *S = calloc(1, sizeof(*S));
	int rc;

	if (!(*out = S))
		return -ENOMEM;
	S->db = db;
	S->pid = pid;
	/* read while the timeline loads */
	if ((rc = xp_sample_reader_start(db, pid, &S->samples)) < 0 ||
	    (rc = xp_idle__memo_index(S)) < 0 || (rc = xp_sites_new(db, &S->sites)) < 0 ||
	    (rc = xp_idle__has_python(db)) < 0) {
		xp_idle_close(S);
		*out = NULL;
		return rc;
	}
	S->walk = xp_sites_walk(S->sites);
	S->python = rc;
	xp_sites_prefer_own(S->sites);
	xp_sites_host_names(S->sites);
	return 0;
}

void xp_idle_close(struct xp_idle *S)
{
	if (!S)
		return;
	xp_sample_reader_free(S->samples);
	xp_sites_free(S->sites);
	free(S->gaps);
	table_free(&S->causes);
	table_free(&S->drained);
	xp_u64map_free(&S->memo_at);
	free(S->memo_by_id);
	free(S->memos);
	free(S->syncs);
	free(S->sync_by_start);
	free(S->waits);
	free(S->kinds);
	free(S->shares);
	xp_u64map_free(&S->kind_at);
	xp_u64map_free(&S->share_at);
	xp_strtab_free(S->names);
	free(S);
}

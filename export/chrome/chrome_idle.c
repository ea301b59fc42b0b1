/* chrome_idle.c - GPU idle time in the Chrome trace, as --by idle sees it:
 * per device of each process a track "GPU idle" beside its streams, with a
 * slice for every stretch when none of the process's work ran on the device
 * (named for the launch that ended it: what the host was on its way to) and
 * for every wait of a collective for a later rank ("waiting for rank N").
 * Gaps shorter than XP_CHROME_IDLE_MIN_NS are left out: between two queued
 * kernels there are always a few microseconds. With --queue-depth, a
 * counter per stream ("queue depth stream S") of its work launched and not
 * yet finished, as --by launch counts it, at every launch and every end.
 * In a job, a flow (cat "blame") from each wait of a collective for a later
 * rank to that rank's longest GPU idle slice between where the two were last
 * in step and its entry (coll_inst.h): the gap whose host causes --by wait
 * charges the wait to; or to its own "waiting for rank M" slice there where
 * it spent more time waiting than the waiting rank did (whose flow goes on
 * to rank M). Collectives the ranks waited for on their hosts (gloo's,
 * host_coll.h) are waits and flows as NCCL's kernels are. */
#include "export/chrome/chrome_priv.h"
#include "src/gtid.h"
#include "export/analysis/coll_inst.h"
#include "export/analysis/host_coll.h"
#include "export/analysis/timeline.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#define XP_CHROME_IDLE_MIN_NS 10000
#define IDLE_TID ((1ll << 31) - 1)      /* below the other processes' streams (chrome_gpu.c) */

struct idle_ctx {
	struct xp_chrome *c;
	const struct xp_tl *tl;
	int64_t pid, tid;
	int named, err;
};

static void name_track(struct idle_ctx *x)
{
	struct jsonw *w = &x->c->w;

	xp_chrome_event_begin(x->c, "M", NULL, "thread_name", x->pid, x->tid, 0);
	jsonw_key_lit(w, "args"); jsonw_obj_begin(w);
	jsonw_key_lit(w, "name"); jsonw_str(w, "GPU idle (xpcorr report --by idle)");
	jsonw_obj_end(w); jsonw_obj_end(w);
	/* above the streams, whose sort index is their id */
	xp_chrome_event_begin(x->c, "M", NULL, "thread_sort_index", x->pid, x->tid, 0);
	jsonw_key_lit(w, "args"); jsonw_obj_begin(w);
	jsonw_key_lit(w, "sort_index"); jsonw_int(w, -1);
	jsonw_obj_end(w); jsonw_obj_end(w);
	x->named = 1;
}

static void on_segment(void *ctx, int64_t a, int64_t b, int cls, const struct xp_tl_op *op)
{
	struct idle_ctx *x = ctx;
	struct jsonw *w = &x->c->w;
	const struct xp_tl_op *next = NULL;
	char name[96];
	size_t i;

	if ((cls != XP_TL_IDLE && cls != XP_TL_RANK) || b - a < XP_CHROME_IDLE_MIN_NS || x->err)
		return;
	if (!x->named)
		name_track(x);
	if (cls == XP_TL_RANK) {
		int64_t rank;

		if ((x->err = xp_tl_rank(x->c->db, op ? op->late_pid << 24 : -1, &rank)) < 0)
			return;
		snprintf(name, sizeof(name), "waiting for rank %lld", (long long)rank);
	} else
		snprintf(name, sizeof(name), "GPU idle");
	if (cls == XP_TL_IDLE && (i = xp_tl_first_from(x->tl, b)) < x->tl->n)
		next = &x->tl->ops[i];
	xp_chrome_event_begin(x->c, "X", "gpu_idle", name, x->pid, x->tid, a);
	jsonw_key_lit(w, "dur"); jsonw_ns_as_us(w, b - a);
	jsonw_key_lit(w, "args"); jsonw_obj_begin(w);
	if (next && next->stack > 0) {
		const char *site = xp_sites_get(x->c->sites, next->stack);

		if (!site)
			x->err = -ENOMEM;
		jsonw_key_lit(w, "until_launch_from"); jsonw_str(w, site ? site : "?");
	}
	jsonw_obj_end(w);
	jsonw_obj_end(w);
}

struct qd_event {
	int64_t stream, t;
	int delta;
};

static int cmp_qd(const void *pa, const void *pb)
{
	const struct qd_event *a = pa, *b = pb;

	if (a->stream != b->stream)
		return a->stream < b->stream ? -1 : 1;
	if (a->t != b->t)
		return a->t < b->t ? -1 : 1;
	return a->delta - b->delta;         /* an end before a launch at the same ns */
}

/* The counters of one device's streams. 0 or -ENOMEM. */
static int queue_depth(struct xp_chrome *c, const struct xp_tl *tl, int64_t pid)
{
	struct qd_event *ev = malloc((tl->n ? 2 * tl->n : 1) * sizeof(*ev));
	struct jsonw *w = &c->w;
	size_t n = 0;
	int64_t depth = 0;

	if (!ev)
		return -ENOMEM;
	for (size_t i = 0; i < tl->n; i++) {
		if (tl->ops[i].launch < 0)
			continue;
		ev[n++] = (struct qd_event){ tl->ops[i].stream, tl->ops[i].launch, 1 };
		ev[n++] = (struct qd_event){ tl->ops[i].stream, tl->ops[i].end, -1 };
	}
	if (n)
		qsort(ev, n, sizeof(*ev), cmp_qd);
	for (size_t i = 0; i < n; i++) {
		char name[64];

		depth = i && ev[i].stream == ev[i - 1].stream ? depth + ev[i].delta : ev[i].delta;
		/* one value per instant: the last event at it */
		if ((i + 1 < n && ev[i + 1].stream == ev[i].stream && ev[i + 1].t == ev[i].t) ||
		    !xp_chrome_in_window(c, ev[i].t))
			continue;
		snprintf(name, sizeof(name), "queue depth stream %lld", (long long)ev[i].stream);
		xp_chrome_event_begin(c, "C", NULL, name, pid, 0, ev[i].t);
		jsonw_key_lit(w, "args"); jsonw_obj_begin(w);
		jsonw_key_lit(w, "ops"); jsonw_int(w, depth);
		jsonw_obj_end(w); jsonw_obj_end(w);
	}
	free(ev);
	return 0;
}

/* A stretch of a device by class: each class's time, and its longest
 * segment of at least XP_CHROME_IDLE_MIN_NS (a slice of the idle track). */
struct profile {
	const struct xp_tl_op *only;    /* non-NULL: the segments of this op alone */
	int64_t sum[XP_TL_CLASSES], a[XP_TL_CLASSES], len[XP_TL_CLASSES];
};

static void profile_segment(void *ctx, int64_t a, int64_t b, int cls, const struct xp_tl_op *op)
{
	struct profile *p = ctx;

	if (p->only && op != p->only)
		return;
	p->sum[cls] += b - a;
	if (b - a >= XP_CHROME_IDLE_MIN_NS && b - a > p->len[cls])
		p->a[cls] = a, p->len[cls] = b - a;
}

/* The flow of slot w's wait at op i for slot l: from the wait's slice to
 * the late rank's longest idle gap, or to its own wait for another rank
 * where that is what it spent more time in than the waiting one (the
 * class --by wait's excess falls in; that wait has its own flow on). Both
 * ends slices of the idle tracks and in the window. 0 or -ENOMEM. */
static int blame_flow(struct xp_chrome *c, const struct xp_tl_set *set, const struct xp_coll_job *J,
		      size_t w, size_t i, size_t l)
{
	const struct xp_tl *tw = J->tl[w], *tl = J->tl[l];
	const struct xp_tl_op *op = &tw->ops[i], *late = xp_coll_op(J, (size_t)J->inst[w][i], l);
	struct profile from = { .only = op }, mine = { 0 }, to = { 0 };
	int64_t pw, pl;
	uint64_t id;
	int rc, cls;

	xp_coll_in_step(J, w, i, l, &pw, &pl);
	pl = pl < tl->ops[0].start ? tl->ops[0].start : pl;   /* the track starts there */
	if ((rc = xp_tl_sweep(tw, op->start, op->start + op->wait, profile_segment, &from)) < 0 ||
	    (rc = xp_tl_sweep(tw, pw, op->start, profile_segment, &mine)) < 0 ||
	    (rc = xp_tl_sweep(tl, pl, late->start, profile_segment, &to)) < 0)
		return rc;
	cls = to.sum[XP_TL_RANK] - mine.sum[XP_TL_RANK] > to.sum[XP_TL_IDLE] - mine.sum[XP_TL_IDLE] ?
	      XP_TL_RANK : XP_TL_IDLE;
	cls = to.len[cls] ? cls : cls == XP_TL_RANK ? XP_TL_IDLE : XP_TL_RANK;
	if (!from.len[XP_TL_RANK] || !to.len[cls] || !xp_chrome_in_window(c, from.a[XP_TL_RANK]) ||
	    !xp_chrome_in_window(c, to.a[cls]))
		return 0;
	id = c->next_flow_id++;
	xp_chrome_flow_event(c, "blame", "s", id, xp_chrome_device_pid(c, tw->device, tw->gpid),
			     IDLE_TID - (tw - set->dev), from.a[XP_TL_RANK]);
	xp_chrome_flow_event(c, "blame", "f", id, xp_chrome_device_pid(c, tl->device, tl->gpid),
			     IDLE_TID - (tl - set->dev), to.a[cls]);
	c->st.flows++;
	return 0;
}

/* The blame flows of a job: none without ranks or waits. */
static int blame_flows(struct xp_chrome *c, const struct xp_tl_set *set)
{
	struct xp_coll_job J;
	int rc = xp_coll_job_load(c->db, set, &J);

	for (size_t w = 0; !rc && w < J.nslots; w++) {
		const struct xp_tl *tl = J.tl[w];

		for (size_t i = 0; !rc && i < tl->n; i++) {
			const struct xp_tl_op *op = &tl->ops[i];
			int l = op->wait >= XP_CHROME_IDLE_MIN_NS ? xp_coll_slot(&J, op->late_pid) : -1;

			if (l < 0 || (size_t)l == w || J.inst[w][i] < 0 ||
			    !xp_coll_op(&J, (size_t)J.inst[w][i], (size_t)l) ||
			    xp_coll_too_close(&J, (size_t)J.inst[w][i]) ||
			    (c->o->pid >= 0 && ((tl->gpid >> 24) != c->o->pid ||
						 (J.tl[l]->gpid >> 24) != c->o->pid)))
				continue;
			rc = blame_flow(c, set, &J, w, i, (size_t)l);
		}
	}
	xp_coll_job_free(&J);
	return rc;
}

int xp_chrome_idle_events(struct xp_chrome *c)
{
	struct xp_tl_set set = { 0 };
	struct xp_host_colls H = { 0 };
	/* the collectives the ranks waited for on their hosts (gloo's) as
	 * --by idle takes them */
	int rc = xp_host_colls_timelines(c->db, &set, &H);

	xp_host_colls_free(&H);
	if (rc < 0) {
		xp_tl_set_free(&set);
		return rc;
	}
	for (size_t d = 0; d < set.ndev && rc == 0; d++) {
		const struct xp_tl *tl = &set.dev[d];
		struct idle_ctx x = { .c = c, .tl = tl, .pid = xp_chrome_device_pid(c, tl->device, tl->gpid),
				      .tid = IDLE_TID - (int64_t)d };
		int64_t w0 = tl->n ? tl->ops[0].start : 0, w1 = w0;

		if (!tl->n || (c->o->pid >= 0 && (tl->gpid >> 24) != c->o->pid))
			continue;
		for (size_t i = 0; i < tl->n; i++)
			w1 = tl->ops[i].end > w1 ? tl->ops[i].end : w1;
		w0 = w0 < c->o->since ? c->o->since : w0;
		w1 = c->o->until && w1 > c->o->until ? c->o->until : w1;
		if (w1 > w0)
			rc = xp_tl_sweep(tl, w0, w1, on_segment, &x);
		rc = rc ? rc : x.err;
		if (!rc && c->o->queue_depth)
			rc = queue_depth(c, tl, x.pid);
	}
	if (!rc)
		rc = blame_flows(c, &set);
	xp_tl_set_free(&set);
	return rc;
}

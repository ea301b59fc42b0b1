/* view_idle.c - `xpcorr report --by idle`: per device (and rank), the
 * step's time split into compute, communication, memory copies and sets,
 * waiting for another rank and idle (in that order of precedence, so the
 * parts add up to the window), in the manner of HTA's temporal breakdown;
 * then the idle time split by what the host did meanwhile, which only we
 * can say: each idle gap is owned by the thread that launched the work
 * that ended it; from the gap's start until that launch the thread was
 * blocked in a CUDA synchronize call (the line that called it) or running
 * (its CPU samples in the gap share the time: the hottest functions); from
 * the launch to the start the work was on its way ("launch to start").
 * A collective's kernel that ran before the last rank started the same
 * collective was waiting for that rank; so was an idle GPU while its host
 * waited in a collective run on the host (gloo's) for a later rank.
 *
 * Each gap also has what drained the queue before it: the blocking call
 * the host was in when the GPU ran out of work (an .item() that waited for
 * the step to finish, so the host could not queue the next one ahead),
 * else none (the host was running and did not launch in time).
 *
 * Steps are NVTX ranges named ProfilerStep#N (else "step N") on the
 * process's threads, else the turns of the Python loop its launches come
 * from (idle_steps.h); without either the window is the device's first to
 * last work. --step N takes one step.
 *
 *   xpcorr report --by idle --step 3 run/
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "src/array.h"
#include "src/gtid.h"
#include "src/satmath.h"
#include "export/analysis/host_coll.h"
#include "export/idle/idle_priv.h"
#include "export/idle/idle_steps.h"
#include "export/report/report_priv.h"
#include "export/report/decl.h"
#include "export/report/table.h"

static const char *const steps_key[] = { "nvtx", "python_loop", "run" };

/* "ProfilerStep#12" -> 12, "step 3" / "Step_3" / "step#3" -> 3; else -1. */
static int64_t step_number(const char *name, int profiler_only)
{
	const char *p = NULL;

	if (!name)
		return -1;
	if (!strncmp(name, "ProfilerStep#", 13))
		p = name + 13;
	else if (!profiler_only && !strncasecmp(name, "step", 4)) {
		p = name + 4;
		p += *p == ' ' || *p == '#' || *p == '_' || *p == ':';
	}
	if (!p || !isdigit((unsigned char)*p))
		return -1;
	for (const char *q = p; *q; q++)
		if (!isdigit((unsigned char)*q))
			return -1;
	return strtoll(p, NULL, 10);
}

/* The process's NVTX step ranges (ProfilerStep#N, else "step N"). */
static int nvtx_windows(struct rep *R, int64_t gpid, struct window **w, size_t *n, size_t *cap)
{
	sqlite3_stmt *s;

	for (int pass = 0; pass < 2 && !*n; pass++) {
		if (sqlite3_prepare_v2(R->db, "SELECT e.start, e.end, ifnull(e.text, t.value)"
				       " FROM NVTX_EVENTS e LEFT JOIN StringIds t ON t.id = e.textId"
				       " WHERE e.eventType = 60 AND e.end > e.start AND"
				       " (e.globalTid >> 24) = (?1 >> 24) ORDER BY e.start", -1, &s,
				       NULL) != SQLITE_OK)
			return -EIO;
		sqlite3_bind_int64(s, 1, gpid);
		while (sqlite3_step(s) == SQLITE_ROW) {
			int64_t num = step_number((const char *)sqlite3_column_text(s, 2), pass == 0);

			if (num < 0 || (R->o->step >= 0 && num != R->o->step))
				continue;
			if (xp_array__reserve((void **)w, cap, *n + 1, sizeof(**w), 16)) {
				sqlite3_finalize(s);
				return -ENOMEM;
			}
			(*w)[(*n)++] = (struct window){ sqlite3_column_int64(s, 0),
							sqlite3_column_int64(s, 1), num };
		}
		sqlite3_finalize(s);
	}
	return 0;
}

/* The steps of the process's Python loop (idle_steps.h): 1 found, 0 none. */
static int loop_windows(struct rep *R, struct xp_idle *S, struct window **w, size_t *n, size_t *cap)
{
	struct xp_loop_steps ls;
	int rc = S->python ? xp_loop_steps_find(S->walk, S->tl, &ls) : 0;

	if (rc <= 0)
		return rc;
	for (size_t i = 0; rc == 1 && i < ls.n; i++) {
		if (R->o->step >= 0 && (int64_t)i != R->o->step)
			continue;
		if (xp_array__reserve((void **)w, cap, *n + 1, sizeof(**w), 16)) {
			rc = -ENOMEM;
			break;
		}
		(*w)[(*n)++] = (struct window){ ls.w[i][0], ls.w[i][1], (int64_t)i };
	}
	if (rc == 1)
		snprintf(S->loop_line, sizeof(S->loop_line), "%s", ls.line);
	xp_loop_steps_free(&ls);
	return rc;
}

/* The process's steps: NVTX ranges, else its Python loop's, else its
 * device's whole span. */
static int load_windows(struct rep *R, struct xp_idle *S, int64_t gpid, struct window **w,
			size_t *n)
{
	size_t cap = 0;
	int rc;

	*n = 0;
	S->steps_from = STEPS_NVTX;
	if ((rc = nvtx_windows(R, gpid, w, n, &cap)) < 0 || *n)
		return rc;
	S->steps_from = STEPS_LOOP;
	if ((rc = loop_windows(R, S, w, n, &cap)) != 0)
		return rc < 0 ? rc : 0;
	S->steps_from = STEPS_RUN;
	if (R->o->step >= 0 || !S->tl->n)
		return 0;
	if (xp_array__reserve((void **)w, &cap, 1, sizeof(**w), 1))
		return -ENOMEM;
	(*w)[0] = (struct window){ S->tl->ops[0].start, S->tl->ops[0].end, -1 };
	for (size_t i = 0; i < S->tl->n; i++)
		(*w)[0].end = S->tl->ops[i].end > (*w)[0].end ? S->tl->ops[i].end : (*w)[0].end;
	*n = 1;
	return 0;
}

static int cmp_i64(const void *pa, const void *pb)
{
	int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;

	return (a > b) - (a < b);
}

/* The warm-up: the leading steps (at most half) that took more than twice
 * the median step, as the first steps of a training loop do while modules
 * load and libraries make their handles. 0 with fewer than 4 steps. */
static size_t warmup_steps(const struct window *w, size_t n)
{
	int64_t *len, median;
	size_t k = 0;

	if (n < 4 || !(len = malloc(n * sizeof(*len))))
		return 0;
	for (size_t i = 0; i < n; i++)
		len[i] = w[i].end - w[i].start;
	qsort(len, n, sizeof(*len), cmp_i64);
	median = len[n / 2];
	free(len);
	while (k < n / 2 && w[k].end - w[k].start > 2 * median)
		k++;
	return k;
}

static int cmp_cause(const void *pa, const void *pb)
{
	const struct cause *a = pa, *b = pb;

	if (a->ns != b->ns)
		return a->ns < b->ns ? 1 : -1;
	if (a->kind != b->kind)
		return a->kind - b->kind;
	return strcmp(a->where, b->where);
}

/* The view's sheet: a device's row (its step window in parts), then its
 * causes of idle time and the calls that drained the queue. json: the
 * causes nested in the device; text: the device in words, tables under it. */
enum { IC_SECTION, IC_RANK, IC_DEVICE, IC_PID, IC_STEPS, IC_STEPS_FROM, IC_LOOP, IC_LOOP_JSON,
       IC_START, IC_END, IC_WINDOW, IC_COMPUTE, IC_COMM, IC_MEM, IC_RANK_WAIT, IC_IDLE, IC_EST,
       IC_WARM, IC_WARM_IDLE, IC_SKIPPED, IC_CAUSE, IC_WHERE, IC_NS, IC_SHARE, IC_GAPS,
       IC_SHARE_TEXT, IC_MEANWHILE, IC_BLOCKED, IC_DEVICE_TEXT, IC_N };

static int device_text(struct xp_table *t, const struct xp_cell *c);

static const struct xp_col cols[IC_N] = {
	[IC_SECTION] = { .head = "Section", .kind = XP_COL_TEXT },
	[IC_RANK] = { .head = "Rank", .json = "rank", .kind = XP_COL_INT },
	[IC_DEVICE] = { .head = "Device", .json = "device", .kind = XP_COL_INT },
	[IC_PID] = { .head = "PID", .json = "pid", .kind = XP_COL_INT },
	[IC_STEPS] = { .head = "Steps", .json = "steps", .kind = XP_COL_UINT },
	[IC_STEPS_FROM] = { .head = "Steps From", .json = "steps_from", .kind = XP_COL_TEXT },
	[IC_LOOP] = { .head = "Loop Line", .kind = XP_COL_TEXT },
	[IC_LOOP_JSON] = { .json = "loop_line", .kind = XP_COL_TEXT },
	[IC_START] = { .json = "start_ns", .kind = XP_COL_INT },
	[IC_END] = { .json = "end_ns", .kind = XP_COL_INT },
	[IC_WINDOW] = { .head = "Window (ns)", .json = "window_ns", .kind = XP_COL_INT },
	[IC_COMPUTE] = { .head = "Compute (ns)", .json = "compute_ns", .kind = XP_COL_INT },
	[IC_COMM] = { .head = "Communication (ns)", .json = "communication_ns", .kind = XP_COL_INT },
	[IC_MEM] = { .head = "Memory (ns)", .json = "memory_ns", .kind = XP_COL_INT },
	[IC_RANK_WAIT] = { .head = "Rank Wait (ns)", .json = "rank_wait_ns", .kind = XP_COL_INT },
	[IC_IDLE] = { .head = "Idle (ns)", .json = "idle_ns", .kind = XP_COL_INT },
	[IC_EST] = { .json = "estimated_ns", .kind = XP_COL_INT },
	[IC_WARM] = { .json = "warmup_steps", .kind = XP_COL_UINT },
	[IC_WARM_IDLE] = { .json = "warmup_idle_ns", .kind = XP_COL_INT },
	[IC_SKIPPED] = { .json = "skipped_steps", .kind = XP_COL_UINT },
	[IC_CAUSE] = { .head = "Cause", .json = "cause", .kind = XP_COL_TEXT },
	[IC_WHERE] = { .head = "Where", .json = "where", .kind = XP_COL_TEXT, .rule = 5 },
	[IC_NS] = { .head = "Idle (ns)", .csv = "Cause (ns)", .json = "ns", .kind = XP_COL_INT,
		   .width = 14, .rule = 14 },
	[IC_SHARE] = { .head = "Share of Idle (%)", .json = "share_percent", .kind = XP_COL_FIXED,
		      .prec = 2 },
	[IC_GAPS] = { .head = "Gaps", .json = "gaps", .kind = XP_COL_UINT, .width = 6, .rule = 6 },
	[IC_SHARE_TEXT] = { .head = "Idle (%)", .kind = XP_COL_FIXED, .width = 8, .rule = 8, .prec = 1 },
	[IC_MEANWHILE] = { .head = "Host meanwhile", .kind = XP_COL_TEXT, .width = -17, .rule = 17 },
	[IC_BLOCKED] = { .head = "Host blocked in", .kind = XP_COL_TEXT, .width = -17, .rule = 17 },
	[IC_DEVICE_TEXT] = { .kind = XP_COL_CALL, .text_only = 1, .call = device_text },
};
static const unsigned char csv_cols[] = { IC_SECTION, IC_RANK, IC_DEVICE, IC_PID, IC_STEPS,
	IC_WINDOW, IC_COMPUTE, IC_COMM, IC_MEM, IC_RANK_WAIT, IC_IDLE, IC_CAUSE, IC_WHERE, IC_NS,
	IC_SHARE, IC_GAPS, IC_STEPS_FROM, IC_LOOP };
static const unsigned char device_json[] = { IC_RANK, IC_DEVICE, IC_PID, IC_STEPS, IC_STEPS_FROM,
	IC_LOOP_JSON, IC_START, IC_END, IC_WINDOW, IC_COMPUTE, IC_COMM, IC_MEM, IC_RANK_WAIT,
	IC_IDLE, IC_EST, IC_WARM, IC_WARM_IDLE, IC_SKIPPED };
static const unsigned char cause_json[] = { IC_CAUSE, IC_WHERE, IC_NS, IC_SHARE, IC_GAPS };
static const unsigned char cause_text[] = { IC_SHARE_TEXT, IC_NS, IC_GAPS, IC_MEANWHILE, IC_WHERE };
static const unsigned char drained_text[] = { IC_SHARE_TEXT, IC_NS, IC_GAPS, IC_BLOCKED, IC_WHERE };
static const struct xp_col step_cols[] = { { .json = "step", .kind = XP_COL_INT, .json_only = 1 } };

/* Where the steps came from, in words: "30 steps of NVTX ranges". */
static void steps_text(const struct xp_idle *S, size_t steps, char *out, size_t len)
{
	const char *s = steps > 1 ? "steps" : "step";

	if (S->steps_from == STEPS_RUN)
		snprintf(out, len, "the whole run (no NVTX step ranges, no repeating Python loop)");
	else if (S->steps_from == STEPS_LOOP)
		snprintf(out, len, "%zu %s of the Python loop at %s", steps, s, S->loop_line);
	else
		snprintf(out, len, "%zu %s of NVTX ranges", steps, s);
}

/* A device's row in text: who, its steps and the window in parts. */
struct device_row {
	const struct xp_idle *S;
	int64_t rank, dev;
	long long pid;
	size_t steps;
};

static int device_text(struct xp_table *t, const struct xp_cell *cell)
{
	const struct device_row *d = cell->p;
	const int64_t *c = d->S->cls_ns;
	double w = d->S->window_ns ? 100.0 / (double)d->S->window_ns : 0;
	char who[48] = "", what[320], dev[32];

	if (d->rank >= 0)
		snprintf(who, sizeof(who), "Rank %lld, ", (long long)d->rank);
	steps_text(d->S, d->steps, what, sizeof(what));
	xp_table_text(t, "%s", "");
	xp_tl_device_name(d->dev, dev, sizeof(dev));
	xp_table_text(t, "  %s%s of process %lld: %s, %lld ns", who, dev, d->pid, what,
		      (long long)d->S->window_ns);
	xp_table_text(t, "    Compute %.1f%%  Communication %.1f%%  Memory %.1f%%  Waiting"
		      " for another rank %.1f%%  Idle %.1f%%", w * (double)c[XP_TL_COMPUTE],
		      w * (double)c[XP_TL_COMM], w * (double)c[XP_TL_MEM], w * (double)c[XP_TL_RANK],
		      w * (double)c[XP_TL_IDLE]);
	return 0;
}

static void print_device(struct xp_idle *S, struct xp_table *t, int64_t rank, int64_t gpid,
			 int64_t dev, size_t steps)
{
	const int64_t *c = S->cls_ns;
	struct device_row d = { S, rank, dev, (long long)xp_pid_local((uint64_t)gpid >> 24), steps };
	const char *loop = S->steps_from == STEPS_LOOP ? S->loop_line : "";
	struct xp_cell v[IC_N] = {
		[IC_SECTION] = { .s = "device" }, [IC_RANK] = { .i = rank }, [IC_DEVICE] = { .i = dev },
		[IC_PID] = { .i = d.pid }, [IC_STEPS] = { .u = steps },
		[IC_STEPS_FROM] = { .s = steps_key[S->steps_from] }, [IC_LOOP] = { .s = loop },
		[IC_LOOP_JSON] = { .s = loop, .absent = !*loop }, [IC_START] = { .i = S->span[0] },
		[IC_END] = { .i = S->span[1] }, [IC_WINDOW] = { .i = S->window_ns },
		[IC_COMPUTE] = { .i = c[XP_TL_COMPUTE] }, [IC_COMM] = { .i = c[XP_TL_COMM] },
		[IC_MEM] = { .i = c[XP_TL_MEM] }, [IC_RANK_WAIT] = { .i = c[XP_TL_RANK] },
		[IC_IDLE] = { .i = c[XP_TL_IDLE] }, [IC_EST] = { .i = S->est_ns },
		[IC_WARM] = { .u = S->warm_steps }, [IC_WARM_IDLE] = { .i = S->warm_idle_ns },
		[IC_SKIPPED] = { .u = S->skipped }, [IC_CAUSE] = { .s = "" }, [IC_WHERE] = { .s = "" },
		[IC_NS] = { .absent = 1 }, [IC_SHARE] = { .absent = 1 }, [IC_GAPS] = { .absent = 1 },
		[IC_DEVICE_TEXT] = { .p = &d },
	};

	xp_table_row_open(t, v);
}

/* "step", "3 steps". */
static const char *steps_count(size_t k, char *out, size_t len)
{
	if (k == 1)
		snprintf(out, len, "step");
	else
		snprintf(out, len, "%zu steps", k);
	return out;
}

/* Text: the warm-up steps told apart, and the share estimated. */
static void print_notes(struct xp_idle *S, struct xp_table *t)
{
	int64_t idle = S->cls_ns[XP_TL_IDLE] + S->cls_ns[XP_TL_RANK];
	char n[32];

	if (S->est_ns && idle)
		xp_table_text(t, "    Estimated: %.1f%% of idle time (gaps unsampled, shared as the"
			      " samples of gaps between the same launches, else before the same"
			      " launch, else of the same thread)", 100.0 * (double)S->est_ns / (double)idle);
	if (S->warm_steps && S->cls_ns[XP_TL_IDLE])
		xp_table_text(t, "    Warm-up: the first %s, over twice the median step,"
			      " hold%s %.1f%% of idle time (--skip-steps %zu: the steady state)",
			      steps_count(S->warm_steps, n, sizeof(n)), S->warm_steps > 1 ? "" : "s",
			      100.0 * (double)S->warm_idle_ns / (double)S->cls_ns[XP_TL_IDLE],
			      S->warm_steps);
	if (S->skipped)
		xp_table_text(t, "    Steady state: the first %s left out (--skip-steps)",
			      steps_count(S->skipped, n, sizeof(n)));
}

/* What a table of causes is called: csv's section, json's key, text's
 * columns and what --top's line calls its rows. */
struct table_names {
	const char *section, *json_key;
	const unsigned char *text;
	const char *more;
};

static const struct table_names cause_names = { "cause", "causes", cause_text, "causes" };
static const struct table_names drained_names = { "drained", "drained_by", drained_text, "calls" };

/* One table of causes, most idle time first, shares of idle ns: rows of
 * the sheet, nested in the device's. */
static void print_table(struct rep *R, const struct xp_table *dt,
			const struct table_names *tn, struct cause_table *ct, int64_t idle,
			int64_t rank, int64_t dev)
{
	size_t shown = R->o->top && R->o->top < ct->n ? R->o->top : ct->n;
	struct xp_table t = *dt;

	if (ct->n)
		qsort(ct->v, ct->n, sizeof(*ct->v), cmp_cause);
	t.key = tn->json_key;
	t.text_order = tn->text;
	t.text_n = sizeof(cause_text);
	t.json_order = cause_json;
	t.json_n = sizeof(cause_json);
	t.lead = t.more_lead = "    ";
	t.more_cut = 1;
	t.more = tn->more;
	t.text_lazy = 1;
	t.csv_continues = 1;
	xp_table_begin(&t, NULL);
	for (size_t i = 0; i < shown; i++) {
		const struct cause *c = &ct->v[i];
		double share = idle ? 100.0 * (double)c->ns / (double)idle : 0;
		const char *label = xp_idle_kind(c->kind, 0);
		struct xp_cell v[IC_N] = {
			[IC_SECTION] = { .s = tn->section }, [IC_RANK] = { .i = rank },
			[IC_DEVICE] = { .i = dev }, [IC_PID] = { .absent = 1 }, [IC_STEPS] = { .absent = 1 },
			[IC_STEPS_FROM] = { .s = "" }, [IC_LOOP] = { .s = "" },
			[IC_WINDOW] = { .absent = 1 }, [IC_COMPUTE] = { .absent = 1 },
			[IC_COMM] = { .absent = 1 }, [IC_MEM] = { .absent = 1 },
			[IC_RANK_WAIT] = { .absent = 1 }, [IC_IDLE] = { .absent = 1 },
			[IC_CAUSE] = { .s = xp_idle_kind(c->kind, 1) }, [IC_WHERE] = { .s = c->where },
			[IC_NS] = { .i = c->ns }, [IC_SHARE] = { .d = share }, [IC_GAPS] = { .u = c->pieces },
			[IC_SHARE_TEXT] = { .d = share }, [IC_MEANWHILE] = { .s = label },
			[IC_BLOCKED] = { .s = label }, [IC_DEVICE_TEXT] = { .absent = 1 },
		};

		xp_table_row(&t, v);
	}
	xp_table_end(&t, shown, ct->n);
}

/* The causes of idle time, then what drained the queue before each gap. */
static void print_causes(struct rep *R, struct xp_idle *S, struct xp_table *dt, int64_t rank,
			 int64_t dev)
{
	print_table(R, dt, &cause_names, &S->causes, S->cls_ns[XP_TL_IDLE] + S->cls_ns[XP_TL_RANK],
		    rank, dev);
	print_notes(S, dt);
	if (S->drained.n)
		xp_table_text(dt, "    Queue drained by: the call the host was blocked in when the GPU"
			      " ran out of work before each gap");
	print_table(R, dt, &drained_names, &S->drained, S->cls_ns[XP_TL_IDLE], rank, dev);
	xp_table_row_close(dt);
}

/* One device: its steps swept and its gaps attributed, then printed. 1 if
 * it had a window, 0 if not (--step N that it lacks), or a negative errno. */
static int one_device(struct rep *R, struct xp_idle *S, struct xp_table *dt, const struct xp_tl *tl)
{
	int64_t gpid = tl->gpid, dev = tl->device;
	const struct xp_report_opts *o = R->o;
	struct window *w = NULL;
	size_t nw = 0;
	int rc;

	S->window_ns = 0;
	S->span[0] = S->span[1] = 0;
	xp_idle__reset(S);
	memset(S->cls_ns, 0, sizeof(S->cls_ns));
	S->est_ns = 0;
	if ((rc = xp_idle_use(S, tl)) < 0 || (rc = load_windows(R, S, gpid, &w, &nw)) < 0)
		goto out;
	/* --skip-steps: steady state only; else the warm-up told apart */
	S->skipped = o->step < 0 && S->steps_from != STEPS_RUN ?
		     (size_t)(o->skip_steps < (int64_t)nw ? o->skip_steps : (int64_t)nw) : 0;
	S->warm_steps = S->skipped || o->step >= 0 ? 0 : warmup_steps(w, nw);
	S->warm_idle_ns = 0;
	if (S->skipped) {
		memmove(w, w + S->skipped, (nw - S->skipped) * sizeof(*w));
		nw -= S->skipped;
	}
	for (size_t i = 0; i < nw && !S->err; i++) {
		int64_t a = w[i].start, b = w[i].end;

		a = o->since && a < o->since ? o->since : a;
		b = o->until && b > o->until ? o->until : b;
		if (b <= a)
			continue;
		S->window_ns = xp_sat_add(S->window_ns, xp_sat_sub(b, a));
		S->span[0] = S->span[1] ? S->span[0] : a;
		S->span[1] = b;
		if ((rc = xp_idle__sweep(S, a, b)) < 0)
			goto out;
		if (i + 1 == S->warm_steps)
			S->warm_idle_ns = S->cls_ns[XP_TL_IDLE];
	}
	xp_idle__estimate(S);
	if ((rc = S->err) < 0)
		goto out;
	rc = nw > 0;
	if (rc) {
		int64_t rank;

		if ((rc = xp_tl_rank(R->db, gpid, &rank)) < 0)
			goto out;
		print_device(S, dt, rank, gpid, dev, nw);
		print_causes(R, S, dt, rank, dev);
		rc = 1;
	}
out:
	free(w);
	return rc;
}

int xp_view_idle(struct rep *R, size_t *rows)
{
	static const unsigned char none[1];
	struct xp_table t = { .cols = cols, .n = IC_N, .fmt = R->o->format, .out = R->out,
			      .json = &R->json, .width = R->o->width, .key = "devices", .no_split = 1,
			      .text_max = 1024,
			      .text_order = none, .csv_order = csv_cols, .csv_n = sizeof(csv_cols),
			      .json_order = device_json, .json_n = sizeof(device_json) };
	struct xp_table st = { .cols = step_cols, .n = 1, .fmt = R->o->format, .json = &R->json };
	struct xp_tl_set set = { 0 };
	struct xp_host_colls H = { 0 };
	struct xp_idle *S;
	size_t ndev = 0;
	char title[256];
	int rc;

	*rows = 0;
	if ((rc = xp_idle_open(R->db, R->o->pid, &S)) < 0)
		return rc;
	/* a host's wait in gloo's collectives: waiting for another rank too */
	if ((rc = xp_host_colls_timelines(R->db, &set, &H)) < 0)
		goto out;
	xp_table_fields(&st, (struct xp_cell[]){ { .i = R->o->step, .null = R->o->step < 0 } });
	snprintf(title, sizeof(title), "** %s:", xp_rep_title(R->o->by));
	xp_table_begin(&t, title);
	for (size_t i = 0; i < set.ndev; i++) {
		if (!xp_tl_selected(set.dev[i].gpid, R->o->pid) ||
		    !xp_tl_in_window(&set.dev[i], R->o->since, R->o->until))
			continue;
		ndev++;
		if ((rc = one_device(R, S, &t, &set.dev[i])) < 0)
			goto out;
		*rows += (size_t)rc;
	}
	rc = 0;
	xp_table_end(&t, 0, 0);
	if (H.mismatch)
		xp_rep_foot_line(R, "Host-side collectives (waits in c10d::Work::wait) not matched across"
				 " ranks, no wait for a rank in them: rank %lld waited %zu times, rank %lld %zu",
				 (long long)H.rank[0], H.count[0], (long long)H.rank[xp_host_colls_odd(&H)],
				 H.count[xp_host_colls_odd(&H)]);
	if (R->o->step >= 0 && !*rows && ndev)
		xp_rep_foot_line(R, "No step %lld: steps are NVTX ranges named ProfilerStep#N or"
				 " \"step N\" on the process's threads, else the turns of its Python"
				 " loop, from 0", (long long)R->o->step);
out:
	xp_idle_close(S);
	xp_host_colls_free(&H);
	xp_tl_set_free(&set);
	return rc;
}

/* Where the view's tables land in json (report/decl.h). */
const struct xp_decl xp_decl_idle[] = {
	XP_DECL("idle", "", step_cols),
	XP_DECL_ORDER("idle", "devices[]", cols, device_json),
	XP_DECL_ORDER("idle", "devices[].causes[]", cols, cause_json),
	XP_DECL_ORDER("idle", "devices[].drained_by[]", cols, cause_json),
	{ 0 },
};

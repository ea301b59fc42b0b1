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
 * collective was waiting for that rank.
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
#include "export/idle/idle_priv.h"
#include "export/idle/idle_steps.h"
#include "export/report/report_priv.h"

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
static int nvtx_windows(struct xp_idle *S, int64_t gpid, struct window **w, size_t *n, size_t *cap)
{
	sqlite3_stmt *s;

	for (int pass = 0; pass < 2 && !*n; pass++) {
		if (sqlite3_prepare_v2(S->R->db, "SELECT e.start, e.end, ifnull(e.text, t.value)"
				       " FROM NVTX_EVENTS e LEFT JOIN StringIds t ON t.id = e.textId"
				       " WHERE e.eventType = 60 AND e.end > e.start AND"
				       " (e.globalTid >> 24) = (?1 >> 24) ORDER BY e.start", -1, &s,
				       NULL) != SQLITE_OK)
			return -EIO;
		sqlite3_bind_int64(s, 1, gpid);
		while (sqlite3_step(s) == SQLITE_ROW) {
			int64_t num = step_number((const char *)sqlite3_column_text(s, 2), pass == 0);

			if (num < 0 || (S->R->o->step >= 0 && num != S->R->o->step))
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
static int loop_windows(struct xp_idle *S, struct window **w, size_t *n, size_t *cap)
{
	struct xp_loop_steps ls;
	int rc = S->python ? xp_loop_steps_find(S->walk, S->tl, &ls) : 0;

	if (rc <= 0)
		return rc;
	for (size_t i = 0; rc == 1 && i < ls.n; i++) {
		if (S->R->o->step >= 0 && (int64_t)i != S->R->o->step)
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
static int load_windows(struct xp_idle *S, int64_t gpid, struct window **w, size_t *n)
{
	size_t cap = 0;
	int rc;

	*n = 0;
	S->steps_from = STEPS_NVTX;
	if ((rc = nvtx_windows(S, gpid, w, n, &cap)) < 0 || *n)
		return rc;
	S->steps_from = STEPS_LOOP;
	if ((rc = loop_windows(S, w, n, &cap)) != 0)
		return rc < 0 ? rc : 0;
	S->steps_from = STEPS_RUN;
	if (S->R->o->step >= 0 || !S->tl->n)
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

static const char csv_head[] =
	"\"Section\",\"Rank\",\"Device\",\"PID\",\"Steps\",\"Window (ns)\",\"Compute (ns)\","
	"\"Communication (ns)\",\"Memory (ns)\",\"Rank Wait (ns)\",\"Idle (ns)\",\"Cause\",\"Where\","
	"\"Cause (ns)\",\"Share of Idle (%)\",\"Gaps\",\"Steps From\",\"Loop Line\"\n";

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

static void print_device(struct xp_idle *S, int64_t rank, int64_t gpid, int64_t dev, size_t steps)
{
	struct rep *R = S->R;
	const int64_t *c = S->cls_ns;
	double w = S->window_ns ? 100.0 / (double)S->window_ns : 0;
	long long pid = (long long)xp_pid_local((uint64_t)gpid >> 24);
	const char *loop = S->steps_from == STEPS_LOOP ? S->loop_line : "";

	if (R->o->format == XP_FMT_TEXT) {
		char line[512], who[48] = "", what[320];

		xp_rep_put_row(R, "");
		if (rank >= 0)
			snprintf(who, sizeof(who), "Rank %lld, ", (long long)rank);
		steps_text(S, steps, what, sizeof(what));
		snprintf(line, sizeof(line), "  %sdevice %lld of process %lld: %s, %lld ns", who,
			 (long long)dev, pid, what, (long long)S->window_ns);
		xp_rep_put_row(R, line);
		snprintf(line, sizeof(line), "    Compute %.1f%%  Communication %.1f%%  Memory %.1f%%  Waiting"
			 " for another rank %.1f%%  Idle %.1f%%", w * (double)c[XP_TL_COMPUTE],
			 w * (double)c[XP_TL_COMM], w * (double)c[XP_TL_MEM], w * (double)c[XP_TL_RANK],
			 w * (double)c[XP_TL_IDLE]);
		xp_rep_put_row(R, line);
	} else if (R->o->format == XP_FMT_CSV) {
		fprintf(R->out, "\"device\",%lld,%lld,%lld,%zu,%lld,%lld,%lld,%lld,%lld,%lld,\"\",\"\",,,,\"%s\",",
			(long long)rank, (long long)dev, pid, steps, (long long)S->window_ns,
			(long long)c[XP_TL_COMPUTE], (long long)c[XP_TL_COMM], (long long)c[XP_TL_MEM],
			(long long)c[XP_TL_RANK], (long long)c[XP_TL_IDLE], steps_key[S->steps_from]);
		xp_rep_csv_str(R->out, loop);
		fputc('\n', R->out);
	} else {
		struct jsonw *j = &R->json;

		jsonw_obj_begin(j);
		jsonw_key(j, "rank"); jsonw_int(j, rank);
		jsonw_key(j, "device"); jsonw_int(j, dev);
		jsonw_key(j, "pid"); jsonw_int(j, pid);
		jsonw_key(j, "steps"); jsonw_uint(j, steps);
		jsonw_key(j, "steps_from"); jsonw_str(j, steps_key[S->steps_from]);
		if (*loop) {
			jsonw_key(j, "loop_line");
			jsonw_str(j, loop);
		}
		jsonw_key(j, "start_ns"); jsonw_int(j, S->span[0]);
		jsonw_key(j, "end_ns"); jsonw_int(j, S->span[1]);
		jsonw_key(j, "window_ns"); jsonw_int(j, S->window_ns);
		jsonw_key(j, "compute_ns"); jsonw_int(j, c[XP_TL_COMPUTE]);
		jsonw_key(j, "communication_ns"); jsonw_int(j, c[XP_TL_COMM]);
		jsonw_key(j, "memory_ns"); jsonw_int(j, c[XP_TL_MEM]);
		jsonw_key(j, "rank_wait_ns"); jsonw_int(j, c[XP_TL_RANK]);
		jsonw_key(j, "idle_ns"); jsonw_int(j, c[XP_TL_IDLE]);
		jsonw_key(j, "estimated_ns"); jsonw_int(j, S->est_ns);
		jsonw_key(j, "warmup_steps"); jsonw_uint(j, S->warm_steps);
		jsonw_key(j, "warmup_idle_ns"); jsonw_int(j, S->warm_idle_ns);
		jsonw_key(j, "skipped_steps"); jsonw_uint(j, S->skipped);
	}
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
static void print_notes(struct xp_idle *S)
{
	int64_t idle = S->cls_ns[XP_TL_IDLE] + S->cls_ns[XP_TL_RANK];
	char line[400], n[32];

	if (S->R->o->format != XP_FMT_TEXT)
		return;
	if (S->est_ns && idle) {
		snprintf(line, sizeof(line), "    Estimated: %.1f%% of idle time (gaps unsampled, shared as the"
			 " samples of gaps between the same launches, else before the same"
			 " launch, else of the same thread)",
			 100.0 * (double)S->est_ns / (double)idle);
		xp_rep_put_row(S->R, line);
	}
	if (S->warm_steps && S->cls_ns[XP_TL_IDLE]) {
		snprintf(line, sizeof(line), "    Warm-up: the first %s, over twice the median step,"
			 " hold%s %.1f%% of idle time (--skip-steps %zu: the steady state)",
			 steps_count(S->warm_steps, n, sizeof(n)), S->warm_steps > 1 ? "" : "s",
			 100.0 * (double)S->warm_idle_ns / (double)S->cls_ns[XP_TL_IDLE], S->warm_steps);
		xp_rep_put_row(S->R, line);
	}
	if (S->skipped) {
		snprintf(line, sizeof(line), "    Steady state: the first %s left out (--skip-steps)",
			 steps_count(S->skipped, n, sizeof(n)));
		xp_rep_put_row(S->R, line);
	}
}

/* What a table of causes is called in each format. */
struct table_names {
	const char *section, *json_key, *head, *more;
};

static const struct table_names cause_names = {
	"cause", "causes", "    Idle (%)       Idle (ns)    Gaps  Host meanwhile     Where", "causes",
};

static const struct table_names drained_names = {
	"drained", "drained_by", "    Idle (%)       Idle (ns)    Gaps  Host blocked in    Where", "calls",
};

static void print_row(struct xp_idle *S, const struct table_names *tn, int64_t rank, int64_t dev,
		      const struct cause *c, double share)
{
	struct rep *R = S->R;

	if (R->o->format == XP_FMT_TEXT) {
		char line[1024];

		snprintf(line, sizeof(line), "    %8.1f  %14lld  %6llu  %-17s  %s", share, (long long)c->ns,
			 (unsigned long long)c->pieces, xp_idle_kind(c->kind, 0), c->where);
		xp_rep_put_row(R, line);
	} else if (R->o->format == XP_FMT_CSV) {
		fprintf(R->out, "\"%s\",%lld,%lld,,,,,,,,,\"%s\",", tn->section, (long long)rank,
			(long long)dev, xp_idle_kind(c->kind, 1));
		xp_rep_csv_str(R->out, c->where);
		fprintf(R->out, ",%lld,%.2f,%llu,\"\",\"\"\n", (long long)c->ns, share,
			(unsigned long long)c->pieces);
	} else {
		struct jsonw *j = &R->json;

		jsonw_obj_begin(j);
		jsonw_key(j, "cause"); jsonw_str(j, xp_idle_kind(c->kind, 1));
		jsonw_key(j, "where"); jsonw_str(j, c->where);
		jsonw_key(j, "ns"); jsonw_int(j, c->ns);
		jsonw_key(j, "share_percent"); jsonw_fixed(j, share, 2);
		jsonw_key(j, "gaps"); jsonw_uint(j, c->pieces);
		jsonw_obj_end(j);
	}
}

/* One table of causes, most idle time first, shares of idle ns. */
static void print_table(struct xp_idle *S, const struct table_names *tn, struct cause_table *t,
			int64_t idle, int64_t rank, int64_t dev)
{
	struct rep *R = S->R;
	size_t shown = R->o->top && R->o->top < t->n ? R->o->top : t->n;

	if (t->n)
		qsort(t->v, t->n, sizeof(*t->v), cmp_cause);
	if (R->o->format == XP_FMT_TEXT && shown) {
		xp_rep_put_row(R, tn->head);
		xp_rep_put_row(R, "    --------  --------------  ------  -----------------  -----");
	} else if (R->o->format == XP_FMT_JSON) {
		jsonw_key(&R->json, tn->json_key);
		jsonw_arr_begin(&R->json);
	}
	for (size_t i = 0; i < shown; i++)
		print_row(S, tn, rank, dev, &t->v[i], idle ? 100.0 * (double)t->v[i].ns / (double)idle : 0);
	if (R->o->format == XP_FMT_JSON) {
		jsonw_arr_end(&R->json);
	} else if (R->o->format == XP_FMT_TEXT && shown < t->n) {
		char line[96];

		snprintf(line, sizeof(line), "    (%zu more %s; --top 0 shows all)", t->n - shown, tn->more);
		xp_rep_put_row(R, line);
	}
}

/* The causes of idle time, then what drained the queue before each gap. */
static void print_causes(struct xp_idle *S, int64_t rank, int64_t dev)
{
	struct rep *R = S->R;

	print_table(S, &cause_names, &S->causes, S->cls_ns[XP_TL_IDLE] + S->cls_ns[XP_TL_RANK], rank,
		    dev);
	print_notes(S);
	if (R->o->format == XP_FMT_TEXT && S->drained.n)
		xp_rep_put_row(R, "    Queue drained by: the call the host was blocked in when the GPU ran out"
			       " of work before each gap");
	print_table(S, &drained_names, &S->drained, S->cls_ns[XP_TL_IDLE], rank, dev);
	if (R->o->format == XP_FMT_JSON)
		jsonw_obj_end(&R->json);
}

/* One device: its steps swept and its gaps attributed, then printed. 1 if
 * it had a window, 0 if not (--step N that it lacks), or a negative errno. */
static int one_device(struct xp_idle *S, const struct xp_tl *tl)
{
	int64_t gpid = tl->gpid, dev = tl->device;
	const struct xp_report_opts *o = S->R->o;
	struct window *w = NULL;
	size_t nw = 0;
	int rc;

	S->window_ns = 0;
	S->span[0] = S->span[1] = 0;
	xp_idle__reset(S);
	memset(S->cls_ns, 0, sizeof(S->cls_ns));
	S->est_ns = 0;
	if ((rc = xp_idle_use(S, tl)) < 0 || (rc = load_windows(S, gpid, &w, &nw)) < 0)
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
		int64_t rank = xp_tl_rank(S->R->db, gpid);

		print_device(S, rank, gpid, dev, nw);
		print_causes(S, rank, dev);
	}
out:
	free(w);
	return rc;
}

static void begin(struct rep *R)
{
	if (R->o->format == XP_FMT_TEXT) {
		xp_rep_put_title(R);
	} else if (R->o->format == XP_FMT_CSV) {
		fputs(csv_head, R->out);
	} else {
		jsonw_key(&R->json, "step");
		if (R->o->step >= 0)
			jsonw_int(&R->json, R->o->step);
		else
			jsonw_null(&R->json);
		jsonw_key(&R->json, "devices");
		jsonw_arr_begin(&R->json);
	}
}

int xp_view_idle(struct rep *R, size_t *rows)
{
	struct xp_tl_set set = { 0 };
	struct xp_idle *S;
	size_t ndev = 0;
	int rc;

	*rows = 0;
	if ((rc = xp_idle_open(R, &S)) < 0)
		return rc;
	if ((rc = xp_tl_load_all(R->db, &set)) < 0)
		goto out;
	begin(R);
	for (size_t i = 0; i < set.ndev; i++) {
		if (!xp_tl_selected(set.dev[i].gpid, R->o->pid) ||
		    !xp_tl_in_window(&set.dev[i], R->o->since, R->o->until))
			continue;
		ndev++;
		if ((rc = one_device(S, &set.dev[i])) < 0)
			goto out;
		*rows += (size_t)rc;
	}
	rc = 0;
	if (R->o->format == XP_FMT_JSON)
		jsonw_arr_end(&R->json);
	if (R->o->step >= 0 && !*rows && ndev)
		xp_rep_foot_line(R, "No step %lld: steps are NVTX ranges named ProfilerStep#N or"
				 " \"step N\" on the process's threads, else the turns of its Python"
				 " loop, from 0", (long long)R->o->step);
out:
	xp_idle_close(S);
	xp_tl_set_free(&set);
	return rc;
}

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
#include "db/db_schema.h"
#include "src/gtid.h"
#include "export/idle_steps.h"
#include "export/idle_sync.h"
#include "export/idle_waits.h"
#include "export/idle_cause.h"
#include "export/elidename.h"
#include "db/launch.h"
#include "db/pypath.h"
#include "db/launch.h"
#include "export/launchsite.h"
#include "export/pyreach.h"
#include "db/stackwalk.h"
#include "export/report_priv.h"
#include "src/strtab.h"
#include "export/thread_samples.h"
#include "export/timeline.h"
#include "src/u64map.h"
#include "src/satmath.h"

enum cause_kind { C_HOST, C_NATIVE, C_NOSAMPLE, C_SYNC, C_LAUNCH, C_RANK, C_UNBLOCKED, C_WAIT,
		  C_HOST_EST, C_NATIVE_EST, C_KINDS };

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

struct cause {
	int kind;
	const char *where;          /* a site (xp_sites) or an interned string */
	int64_t ns;
	uint64_t pieces;            /* gaps (or collectives) it came from */
	uint64_t last_gap;          /* the gap that counted last */
};

struct window {
	int64_t start, end, step;   /* step -1: the whole run */
};

enum steps_from { STEPS_NVTX, STEPS_LOOP, STEPS_RUN };

static const char *const steps_key[] = { "nvtx", "python_loop", "run" };

/* Causes by (kind, where), each a row of the report. */
struct cause_table {
	struct cause *v;
	size_t n, cap;
	struct xp_u64map at;        /* (kind, where) -> index + 1 into v */
	uint64_t generation;        /* counts the resets: a row remembered elsewhere is this one's */
};

/* What a stack says, worked out once for the run (a sample's stack is
 * looked up once, not once per question). */
struct stack_memo {
	const char *site;           /* interned; NULL: not named yet */
	int readable;               /* -1: not walked yet, else readable() */
	size_t host_row;            /* index + 1 into causes.v of (C_HOST, site), */
	uint64_t host_generation;   /* valid while causes.generation is this */
	const char *host, *wait;    /* interned names (name_host); NULL: not named yet */
};

/* Gaps of one kind: between the same launch sites. Their samples are the
 * distribution that time without a sample or a wait takes. */
struct gap_kind {
	const char *next_site;      /* the launch that ended them */
	int64_t sampled_ns;         /* time their samples stand for */
	int64_t unseen_ns;          /* time with no sample and no wait */
	uint64_t unseen_gaps, last_gap;
};

/* What the samples of one kind of gap named, and for how long. */
struct kind_share {
	size_t kind;                /* index into gap_kinds */
	int cause;                  /* C_HOST or C_NATIVE */
	const char *where;
	int64_t ns;
};

struct fixed_text {
	const char *literal, *text;
};

struct xp_idle {
	struct rep *R;
	struct xp_sites *sites;
	const struct xp_tl *tl;     /* the device being reported */
	struct xp_sync_call *syncs; /* this process's, by thread then start */
	size_t nsync;
	int64_t main_gtid;          /* the thread that launched most of the device's work */
	int64_t (*gaps)[2];         /* idle gaps of the window being swept */
	size_t ngaps, gcap;
	int64_t window_start;       /* of the window being swept */
	int steps_from;             /* enum steps_from */
	int64_t span[2];            /* the first window's start, the last's end */
	char loop_line[256];        /* STEPS_LOOP: the loop's first line */
	struct xp_sync_call *sync_by_start; /* the syncs again, by start alone */
	uint64_t gap_no;            /* numbers the gaps (and rank waits) from 1 */
	int64_t cls_ns[XP_TL_CLASSES], window_ns;
	struct cause_table causes;  /* what the host did during the gaps */
	struct cause_table drained; /* the blocking call in progress when each gap began */
	uint32_t *memo_by_id;       /* stack id -> index + 1 into memos, for ids below */
	size_t memo_ids;            /* (stack ids are rowids, 1..N: no hashing a sample) */
	struct xp_u64map memo_at;   /* the other ids -> index + 1 into memos */
	struct stack_memo *memos;
	size_t nmemos, memo_cap;
	struct xp_stackwalk *walk;  /* the sites' */
	int python;                 /* the run has Python lines at launches */
	struct xp_sample_reader *samples; /* the launching threads' */
	struct xp_strtab *names;    /* the texts of causes, interned */
	struct fixed_text fixed[8]; /* string literals interned, by address */
	size_t nfixed;
	struct xp_wait *waits;      /* this process's off-CPU intervals, by thread then start */
	size_t nwaits;
	struct gap_kind *kinds;     /* kinds of gaps of this device */
	size_t nkinds, kind_cap;
	struct xp_u64map kind_at;   /* (site before, site after) -> index + 1 into kinds */
	size_t gap_kind;            /* the gap being attributed: index + 1 into kinds, 0: none */
	int64_t next_stack;         /* the launch stack that ended it */
	struct kind_share *shares;
	size_t nshares, share_cap;
	struct xp_u64map share_at;  /* (kind << 2 | cause, where) -> index + 1 into shares */
	size_t last_share;          /* index + 1 of the share added to last (a gap's samples
				     * mostly repeat one name: no hashing each) */
	int64_t est_ns;             /* idle time estimated, of this device */
	size_t warm_steps;          /* the first steps that are warm-up (warmup_steps) */
	int64_t warm_idle_ns;       /* their idle time */
	size_t skipped;             /* steps --skip-steps left out */
	xp_tl_segment_fn busy;      /* xp_idle_span: the segments that are not idle */
	void *busy_ctx;
	int err;
};

/* text as one pointer per distinct text (causes are keyed by it); NULL:
 * out of memory. */
static const char *intern(struct xp_idle *S, const char *text)
{
	int64_t id;
	int fresh;

	if (!S->names && !(S->names = xp_strtab_new()))
		return NULL;
	if (xp_strtab_intern(S->names, text, strlen(text), &id, &fresh))
		return NULL;
	return xp_strtab_get(S->names, id);
}

/* intern() of a string literal, found by its address after the first time
 * (these name a cause of most gaps: hashing the text each time showed). */
static const char *intern_fixed(struct xp_idle *S, const char *literal)
{
	const char *text;

	for (size_t i = 0; i < S->nfixed; i++)
		if (S->fixed[i].literal == literal)
			return S->fixed[i].text;
	text = intern(S, literal);
	if (text && S->nfixed < sizeof(S->fixed) / sizeof(S->fixed[0]))
		S->fixed[S->nfixed++] = (struct fixed_text){ literal, text };
	return text;
}

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

/* A fresh memo's index + 1 in S->memos; 0 when out of memory. */
static size_t new_memo(struct xp_idle *S)
{
	if (S->nmemos >= UINT32_MAX ||
	    xp_array__reserve((void **)&S->memos, &S->memo_cap, S->nmemos + 1, sizeof(*S->memos), 256))
		return 0;
	S->memos[S->nmemos] = (struct stack_memo){ .readable = -1 };
	return ++S->nmemos;
}

/* The memo of stack (> 0); NULL: out of memory (a later look tries
 * again). The pointer holds until the next stack is looked up. */
static struct stack_memo *memo_of(struct xp_idle *S, int64_t stack)
{
	uint64_t *slot;
	int fresh;

	if (stack >= 0 && (uint64_t)stack < S->memo_ids) {
		uint32_t *at = &S->memo_by_id[stack];

		if (!*at && !(*at = (uint32_t)new_memo(S)))
			return NULL;
		return &S->memos[*at - 1];
	}
	if (xp_u64map_upsert(&S->memo_at, (uint64_t)stack, 0, &slot, &fresh) ||
	    (!*slot && !(*slot = new_memo(S))))
		return NULL;
	return &S->memos[*slot - 1];
}

/* The direct index of stack memos, sized by the largest stack id where
 * that is not far beyond what a run holds: below 2^24 and twice the rows
 * (else all go through the map). 0 or -ENOMEM. */
static int memo_index(struct xp_idle *S)
{
	static const char *const sql[] = { "SELECT count(*) FROM xp_stacks",
					   "SELECT max(id) FROM xp_stacks" };
	int64_t v[2] = { 0, 0 }, max;
	sqlite3_stmt *s;

	for (int i = 0; i < 2; i++)
		if (sqlite3_prepare_v2(S->R->db, sql[i], -1, &s, NULL) == SQLITE_OK) {
			if (sqlite3_step(s) == SQLITE_ROW)
				v[i] = sqlite3_column_int64(s, 0);
			sqlite3_finalize(s);
		}
	max = v[1];
	if (max <= 0 || max >= 1 << 24 || max > 2 * v[0] + 1024)
		return 0;
	S->memo_ids = (size_t)max + 1;
	return (S->memo_by_id = calloc(S->memo_ids, sizeof(*S->memo_by_id))) ? 0 : -ENOMEM;
}

/* The site of a stack as an interned string: stacks that read the same
 * are one cause. */
static const char *site_of(struct xp_idle *S, int64_t stack, const char *none)
{
	struct stack_memo *m;
	const char *text;

	if (stack <= 0)
		return intern_fixed(S, none);
	if (!(m = memo_of(S, stack)))
		return NULL;
	if (!m->site && (text = xp_sites_get(S->sites, stack)))
		m->site = intern(S, text);
	return m->site;
}

/* "data.py load_batch" of CPython's perf map "py::load_batch:/app/data.py"
 * (no line there), a Python line as it is, into out; 1 if library code. */
static int python_name(const struct xp_frame_row *fr, char *out, size_t len)
{
	const char *fn, *colon, *base;

	if (fr->kind == XP_FRAME_PYTHON || strncmp(fr->sym, "py::", 4)) {
		snprintf(out, len, "%s", fr->sym);
		return fr->module && xp_pypath_is_library(fr->module);
	}
	fn = fr->sym + 4;
	colon = strchr(fn, ':');
	if (!colon) {
		snprintf(out, len, "%s", fn);
		return 0;
	}
	base = strrchr(colon + 1, '/');
	base = base ? base + 1 : colon + 1;
	snprintf(out, len, "%s %.*s", base, (int)(colon - fn), fn);
	return xp_pypath_is_library(colon + 1);
}

/* "function (module)" of a native frame. */
static void native_name(const struct xp_frame_row *fr, char *out, size_t len)
{
	char fn[224];
	const char *base = fr->module ? strrchr(fr->module, '/') : NULL;

	xp_elide_name(fr->sym, fn, sizeof(fn));
	base = base ? base + 1 : fr->module;
	if (base && *base)
		snprintf(out, len, "%s (%s)", fn, base);
	else
		snprintf(out, len, "%s", fn);
}

/* Where a CPU sample (wait 0) or an off-CPU stack (wait 1) was, named as
 * every host cause is: the innermost Python line of the program's own
 * files ("train.py:42 step"), else of a library's, else the innermost
 * native function of the program's own code, else the innermost of all
 * ("function (module)"). A wait adds the call it blocked in, when that is
 * another frame: "clock_nanosleep (libc.so.6) at ckpt.py:29 save". */
static void name_host(struct xp_idle *S, int64_t id, int wait, char *buf, size_t len)
{
	char leaf[256] = "", own[256] = "", py[256] = "", pylib[256] = "", n[256];
	struct xp_frame_row fr;
	const char *site;

	while (!py[0] && id > 0 && xp_stackwalk_next(S->walk, &id, &fr)) {
		if (!fr.sym || fr.kind == XP_FRAME_KERNEL || fr.kind == XP_FRAME_KERNEL_UNRESOLVED ||
		    fr.kind == XP_FRAME_NOTE || fr.kind == XP_FRAME_GAP)
			continue;
		if (xp_is_python_frame(fr.kind, fr.sym)) {
			int lib = python_name(&fr, n, sizeof(n));

			if (!leaf[0])
				memcpy(leaf, n, sizeof(leaf));
			if (!lib)
				memcpy(py, n, sizeof(py));
			else if (!pylib[0])
				memcpy(pylib, n, sizeof(pylib));
			continue;
		}
		/* named only where it may be used: a stack is walked to its
		 * root when it has no Python frame */
		if (!leaf[0])
			native_name(&fr, leaf, sizeof(leaf));
		if (!own[0] && !xp_is_cuda_layer(fr.sym, fr.module) && !xp_is_library_frame(fr.sym, fr.module))
			native_name(&fr, own, sizeof(own));
	}
	xp_stackwalk_done(S->walk);
	site = py[0] ? py : pylib[0] ? pylib : own[0] ? own : leaf[0] ? leaf : "?";
	if (wait && leaf[0] && strcmp(leaf, site))
		snprintf(buf, len, "%s at %s", leaf, site);
	else
		snprintf(buf, len, "%s", site);
}

/* name_host of a stack, interned and kept in its memo; NULL: out of memory. */
static const char *host_name(struct xp_idle *S, int64_t stack, int wait)
{
	struct stack_memo *m;
	const char *text;
	char buf[600];

	if (stack <= 0)
		return intern_fixed(S, wait ? "(wait without a stack)" : "(sample without a frame)");
	if (!(m = memo_of(S, stack)))
		return NULL;
	if (wait ? m->wait : m->host)
		return wait ? m->wait : m->host;
	name_host(S, stack, wait, buf, sizeof(buf));
	text = intern(S, buf);
	if ((m = memo_of(S, stack)))
		*(wait ? &m->wait : &m->host) = text;
	return text;
}

/* The kind of the gap between the launches of stacks before and after
 * (index + 1 into S->kinds; 0 when out of memory). */
static size_t gap_kind_of(struct xp_idle *S, int64_t before, int64_t after)
{
	const char *a = site_of(S, before, "(no launch stack)"), *b = site_of(S, after,
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
		S->kinds[S->nkinds] = (struct gap_kind){ .next_site = b };
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

/* Each kind of gap's unseen time, as the samples of its kind shared the
 * sampled time (estimated rows); a kind without a sample leaves it "host
 * not seen" before its launch. */
static void estimate_unseen(struct xp_idle *S)
{
	for (size_t i = 0; i < S->nshares; i++) {
		const struct kind_share *sh = &S->shares[i];
		const struct gap_kind *k = &S->kinds[sh->kind];
		int64_t ns;
		size_t row;

		if (!k->unseen_ns || !k->sampled_ns)
			continue;
		ns = (int64_t)((double)k->unseen_ns * (double)sh->ns / (double)k->sampled_ns + 0.5);
		/* a row of its own number: it counts one piece here, the
		 * kind's gaps in all (kinds that name one place add up) */
		S->gap_no++;
		row = add_cause_to(S, &S->causes, sh->cause == C_HOST ? C_HOST_EST : C_NATIVE_EST,
				   sh->where, ns);
		if (row)
			S->causes.v[row - 1].pieces += k->unseen_gaps - 1;
		S->est_ns = xp_sat_add(S->est_ns, ns);
	}
	for (size_t i = 0; i < S->nkinds; i++) {
		const struct gap_kind *k = &S->kinds[i];
		size_t row;

		if (!k->unseen_ns || k->sampled_ns)
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

		if (sqlite3_prepare_v2(S->R->db, "SELECT rank FROM xp_ranks WHERE pid = ?", -1, &s,
				       NULL) == SQLITE_OK) {
			sqlite3_bind_int64(s, 1, op->late_pid);
			if (sqlite3_step(s) == SQLITE_ROW)
				rank = sqlite3_column_int64(s, 0);
			sqlite3_finalize(s);
		}
		snprintf(who, sizeof(who), "rank %lld (the last to start the collective)", (long long)rank);
		S->gap_no++;
		add_cause(S, C_RANK, intern(S, who), b - a);
	}
}

/* 1 if the sample's stack names what the host ran: a Python frame, or a
 * frame of the program's own code (a C++ program's function). Frame-pointer
 * samples stop in libraries built without them (libcuda, cuBLAS, libtorch):
 * those name nobody's line. */
static int readable(struct xp_idle *S, int64_t stack)
{
	struct xp_frame_row fr;
	struct stack_memo *m;
	int64_t id = stack;
	int found = 0;

	if (stack <= 0)
		return 0;
	if (!(m = memo_of(S, stack))) {
		S->err = -ENOMEM;
		return 0;
	}
	if (m->readable >= 0)
		return m->readable;
	while (!found && id > 0 && xp_stackwalk_next(S->walk, &id, &fr))
		found = xp_is_python_frame(fr.kind, fr.sym) ||
			(fr.sym && fr.kind != XP_FRAME_KERNEL && fr.kind != XP_FRAME_KERNEL_UNRESOLVED &&
			 fr.kind != XP_FRAME_NOTE && fr.kind != XP_FRAME_GAP &&
			 !xp_is_cuda_layer(fr.sym, fr.module) && !xp_is_library_frame(fr.sym, fr.module));
	xp_stackwalk_done(S->walk);
	if ((m = memo_of(S, stack)))
		m->readable = found;
	return found;
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
	m = memo_of(S, stack);
	if (m && m->host_row && m->host_generation == S->causes.generation) {
		add_to_row(S, &S->causes, m->host_row - 1, ns);
		add_share(S, C_HOST, S->causes.v[m->host_row - 1].where, ns);
		return;
	}
	site = host_name(S, stack, 0);
	add_share(S, C_HOST, site, ns);
	if ((row = add_cause_to(S, &S->causes, C_HOST, site, ns)) && (m = memo_of(S, stack))) {
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
		for (*next = i + 1; *next < hi && !readable(S, t->s[*next][1]); ++*next)
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

		if (readable(S, stack)) {
			prev = i;
			add_host_sample(S, stack, ns);
			continue;
		}
		near = nearest_readable(S, t, hi, i, prev, &next);
		where = near < hi ? host_name(S, t->s[near][1], 0) :
			site_of(S, S->next_stack, "(no launch stack)");
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
		name = host_name(S, w->stack, 1);
	} else if ((t = xp_sample_reader_get(S->samples, gtid, &err))) {
		size_t lo = 0, hi = t->n;

		while (lo < hi) {   /* past the last sample before the wait */
			size_t mid = lo + (hi - lo) / 2;

			if (t->s[mid][0] < w->start)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo && (name = host_name(S, t->s[lo - 1][1], 0))) {
			snprintf(buf, sizeof(buf), "%slast seen at %s", w->preempted ? "preempted, " : "",
				 name);
			return intern(S, buf);
		}
	} else {
		S->err = err;
	}
	if (!name)
		name = intern_fixed(S, "(wait without a stack)");
	if (name && w->preempted) {
		snprintf(buf, sizeof(buf), "preempted at %s", name);
		name = intern(S, buf);
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
		add_cause(S, C_SYNC, site_of(S, c->stack, "(sync call without a launch stack)"),
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
			     site_of(S, c->stack, "(sync call without a launch stack)"), b - a);
	else
		add_cause_to(S, &S->drained, C_UNBLOCKED, intern_fixed(S, t < 0 ? "(no GPU work before it)" :
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
			add_cause(S, C_LAUNCH, site_of(S, stack, "(no launch stack)"),
				  b - (launch > a ? launch : a));
		/* the gap's kind: the launch sites before and after it */
		S->next_stack = stack;
		S->gap_kind = gap_kind_of(S, next > 0 ? S->tl->ops[next - 1].stack : -1, stack);
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
	if ((rc = xp_idle_syncs_load(S->R->db, gpid, &S->syncs, &S->nsync)) < 0 || !S->nsync)
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

/* 1 if the run's launch stacks have Python lines, 0 if not, or -EIO. */
static int has_python_lines(sqlite3 *db)
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
			 " samples of gaps between the same launches)",
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
			 (unsigned long long)c->pieces, cause_label[c->kind], c->where);
		xp_rep_put_row(R, line);
	} else if (R->o->format == XP_FMT_CSV) {
		fprintf(R->out, "\"%s\",%lld,%lld,,,,,,,,,\"%s\",", tn->section, (long long)rank,
			(long long)dev, cause_key[c->kind]);
		xp_rep_csv_str(R->out, c->where);
		fprintf(R->out, ",%lld,%.2f,%llu,\"\",\"\"\n", (long long)c->ns, share,
			(unsigned long long)c->pieces);
	} else {
		struct jsonw *j = &R->json;

		jsonw_obj_begin(j);
		jsonw_key(j, "cause"); jsonw_str(j, cause_key[c->kind]);
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
	table_reset(&S->causes);
	table_reset(&S->drained);
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
		S->window_start = a;
		S->span[0] = S->span[1] ? S->span[0] : a;
		S->span[1] = b;
		if ((rc = xp_tl_sweep(S->tl, a, b, on_segment, S)) < 0)
			goto out;
		attribute_gaps(S);
		if (i + 1 == S->warm_steps)
			S->warm_idle_ns = S->cls_ns[XP_TL_IDLE];
	}
	estimate_unseen(S);
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

int xp_idle_use(struct xp_idle *S, const struct xp_tl *tl)
{
	int rc;

	S->tl = tl;
	free(S->waits);
	S->waits = NULL;
	if ((rc = load_syncs(S, tl->gpid)) < 0 ||
	    (rc = xp_idle_waits_load(S->R->db, tl->gpid, &S->waits, &S->nwaits)) < 0)
		return rc;
	S->main_gtid = main_thread(tl);
	return 0;
}

int xp_idle_span(struct xp_idle *S, int64_t a, int64_t b, xp_tl_segment_fn busy, void *ctx)
{
	int rc;

	table_reset(&S->causes);
	table_reset(&S->drained);
	S->busy = busy;
	S->busy_ctx = ctx;
	S->window_start = a;
	rc = b > a ? xp_tl_sweep(S->tl, a, b, on_segment, S) : 0;
	if (!rc)
		attribute_gaps(S);
	estimate_unseen(S);
	S->busy = NULL;
	return rc ? rc : S->err;
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
	return intern(S, text);
}

const char *xp_idle_site(struct xp_idle *S, int64_t stack)
{
	return site_of(S, stack, "(no launch stack)");
}

int xp_idle_open(struct rep *R, struct xp_idle **out)
{
	struct xp_idle *S = calloc(1, sizeof(*S));
	int rc;

	if (!(*out = S))
		return -ENOMEM;
	S->R = R;
	/* read while the timeline loads */
	if ((rc = xp_sample_reader_start(R->db, R->o->pid, &S->samples)) < 0 ||
	    (rc = memo_index(S)) < 0 || (rc = xp_sites_new(R->db, &S->sites)) < 0 ||
	    (rc = has_python_lines(R->db)) < 0) {
		xp_idle_close(S);
		*out = NULL;
		return rc;
	}
	S->walk = xp_sites_walk(S->sites);
	S->python = rc;
	xp_sites_prefer_own(S->sites);
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

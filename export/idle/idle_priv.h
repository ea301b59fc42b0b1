/* idle_priv.h - what --by idle's engine (idle_cause.c: the causes of idle
 * gaps) and its view (view_idle.c: steps, breakdown, tables) share: the
 * engine's state, which the view fills per device and prints from. Not for
 * other users (idle_cause.h is the engine's interface). */
#ifndef XP_IDLE_PRIV_H
#define XP_IDLE_PRIV_H

#include <stddef.h>
#include <stdint.h>

#include <sqlite3.h>

#include "export/idle/idle_cause.h"
#include "export/idle/idle_sync.h"
#include "export/idle/idle_waits.h"
#include "export/names/launchsite.h"
#include "export/idle/thread_samples.h"
#include "export/analysis/timeline.h"
#include "db/stackwalk.h"
#include "src/strtab.h"
#include "src/u64map.h"

enum cause_kind { C_HOST, C_NATIVE, C_NOSAMPLE, C_SYNC, C_LAUNCH, C_RANK, C_UNBLOCKED, C_WAIT,
		  C_HOST_EST, C_NATIVE_EST, C_KINDS };

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
	int64_t gtid;               /* the thread that made it (the first gap's) */
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
	sqlite3 *db;                /* the run's */
	uint32_t pid;               /* --pid: 0, every process */
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

/* idle_names.c: text as one pointer per distinct text (literal: a string
 * literal, found by its address after the first time); NULL: out of memory. */
const char *xp_idle__intern(struct xp_idle *S, const char *text);
const char *xp_idle__intern_fixed(struct xp_idle *S, const char *literal);
/* The memo of stack (> 0); NULL: out of memory. Holds until the next look-up. */
struct stack_memo *xp_idle__memo(struct xp_idle *S, int64_t stack);
/* The direct index of stack memos where the ids allow it. 0 or -ENOMEM. */
int xp_idle__memo_index(struct xp_idle *S);
/* The launch site of a stack, interned (none: the text for no stack). */
const char *xp_idle__site_of(struct xp_idle *S, int64_t stack, const char *none);
/* Where a CPU sample (wait 0) or an off-CPU stack (wait 1) was, interned. */
const char *xp_idle__host_name(struct xp_idle *S, int64_t stack, int wait);
/* 1 if a sample's stack names what the host ran (a Python frame, or the
 * program's own native code). */
int xp_idle__readable(struct xp_idle *S, int64_t stack);
/* Both tables emptied (a device's, a span's rows start afresh). */
void xp_idle__reset(struct xp_idle *S);
/* [a, b) of S->tl swept into S->cls_ns and the tables, its idle gaps
 * attributed. 0 or -ENOMEM (S->err for the rest). */
int xp_idle__sweep(struct xp_idle *S, int64_t a, int64_t b);
/* The unsampled time of the gaps so far shared out as their kinds'
 * samples (estimated rows). */
void xp_idle__estimate(struct xp_idle *S);
/* 1 if the run's launch stacks have Python lines, 0 if not, or -EIO. */
int xp_idle__has_python(sqlite3 *db);

#endif

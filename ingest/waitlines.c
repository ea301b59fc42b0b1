/* waitlines.c - runtime threads' launches at the line their Python thread
 * waited in; see waitlines.h for why that thread's line is theirs. */
#include "ingest/waitlines.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/array.h"
#include "db/db_schema.h"
#include "db/stacktable.h"
#include "db/stackwalk.h"
#include "db/stackwriter.h"
#include "db/waitnote.h"
#include "src/gtid.h"
#include "src/u64map.h"

#define PY 1u                   /* a Python frame at or above the node */
#define NOTE 2u                 /* a note frame at or above: placed by another pass */
#define KNOWN 0x80u

enum { GET_NODE, THREAD_STACKS, WAITS, LAUNCHER, NAME, SET_STACK, NSTMT };

static const char *const stmt_sql[NSTMT] = {
	[GET_NODE] = "SELECT s.parent, s.frame, f.kind, y.value FROM xp_stacks s JOIN xp_frames f"
		     " ON f.id = s.frame LEFT JOIN StringIds y ON y.id = f.symbol WHERE s.id = ?1",
	/* every stack the thread left: a Python thread shows its frames somewhere */
	[THREAD_STACKS] = "SELECT stack_id FROM xp_samples WHERE pid = ?1 AND tid = ?2"
			  " UNION SELECT stack_id FROM xp_switches WHERE pid = ?1 AND tid = ?2"
			  " UNION SELECT stack_id FROM xp_launches WHERE pid = ?1 AND tid = ?2"
			  " AND stack_id IS NOT NULL",
	[WAITS] = "SELECT tid, ts, ts + duration, stack_id FROM xp_switches"
		  " WHERE pid = ?1 AND prev_state != 0 ORDER BY tid, ts",
	[LAUNCHER] = "SELECT EXISTS (SELECT 1 FROM xp_launches WHERE pid = ?1 AND tid = ?2)",
	[NAME] = "SELECT s.value FROM ThreadNames t JOIN StringIds s ON s.id = t.nameId"
		 " WHERE t.globalTid = ?1",
	[SET_STACK] = "UPDATE xp_launches SET stack_id = ?1 WHERE id = ?2",
};

struct launch {
	int64_t id, pid, tid, ts, stack;
};

struct wait {                   /* a voluntary wait with Python frames */
	int64_t tid, ts, end, stack;
	int launches;               /* its thread launched GPU work itself */
};

struct pass {
	sqlite3 *db;
	sqlite3_stmt *st[NSTMT];
	struct xp_stackwriter *w;
	int64_t module;             /* "[waits]" */
	struct xp_u64map bits;      /* (node, 0) -> KNOWN | PY | NOTE */
	struct xp_u64map threads;   /* (pid, tid) -> 1: shows Python frames, 2: never */
	struct xp_u64map pyleaf;    /* (wait stack, 0) -> its innermost Python node */
	struct xp_u64map notes;     /* (launcher gtid, waiter gtid) -> note frame */
	struct xp_u64map made;      /* (node under the note, launch stack) -> new stack */
	int64_t path[XP_STACKWALK_MAX_DEPTH];
	uint8_t own[XP_STACKWALK_MAX_DEPTH];
	struct wait *waits;         /* one process's, by (tid, ts) */
	size_t nwaits, capwaits;
};

/* Node id's row: 1 with its parent, frame and own bits, 0 when there is
 * none, -EIO. */
static int node_row(struct pass *P, int64_t id, int64_t *parent, int64_t *frame, unsigned *own)
{
	sqlite3_stmt *get = P->st[GET_NODE];
	int rc;

	sqlite3_bind_int64(get, 1, id);
	rc = sqlite3_step(get);
	if (rc == SQLITE_ROW) {
		int kind = sqlite3_column_int(get, 2);
		const char *sym = (const char *)sqlite3_column_text(get, 3);

		*parent = sqlite3_column_int64(get, 0);
		*frame = sqlite3_column_int64(get, 1);
		*own = (xp_frame_class(kind, sym, NULL) & XP_FRAME_IS_PYTHON ? PY : 0) |
		       (kind == XP_FRAME_NOTE ? NOTE : 0);
	}
	sqlite3_reset(get);
	return rc == SQLITE_ROW ? 1 : rc == SQLITE_DONE ? 0 : -EIO;
}

/* PY and NOTE of a stack, each node read once over the pass: up to the
 * first node known, then the answers on the way down. */
static int reach(struct pass *P, int64_t id, unsigned *out)
{
	unsigned bits = 0;
	uint64_t *slot;
	size_t len = 0;
	int fresh, rc;

	while (id > 0 && len < XP_STACKWALK_MAX_DEPTH) {
		const uint64_t *known = xp_u64map_find(&P->bits, (uint64_t)id, 0);
		int64_t parent, frame;
		unsigned own;

		if (known) {
			bits = (unsigned)*known & (PY | NOTE);
			break;
		}
		if ((rc = node_row(P, id, &parent, &frame, &own)) <= 0) {
			if (rc < 0)
				return rc;
			break;
		}
		P->path[len] = id;
		P->own[len++] = (uint8_t)own;
		id = parent;
	}
	while (len-- > 0) {
		bits |= P->own[len];
		if (xp_u64map_upsert(&P->bits, (uint64_t)P->path[len], 0, &slot, &fresh))
			return -ENOMEM;
		*slot = KNOWN | bits;
	}
	*out = bits;
	return 0;
}

/* 1 when thread (pid, tid) left a stack with a Python frame of its own
 * anywhere, 0 if never, -errno; once per thread. */
static int python_thread(struct pass *P, int64_t pid, int64_t tid)
{
	sqlite3_stmt *st = P->st[THREAD_STACKS];
	unsigned bits = 0;
	uint64_t *slot;
	int fresh, rc = SQLITE_DONE, err = 0;

	if (xp_u64map_upsert(&P->threads, (uint64_t)pid, (uint64_t)tid, &slot, &fresh))
		return -ENOMEM;
	if (!fresh)
		return *slot == 1;
	sqlite3_bind_int64(st, 1, pid);
	sqlite3_bind_int64(st, 2, tid);
	while (!err && (bits & (PY | NOTE)) != PY && (rc = sqlite3_step(st)) == SQLITE_ROW)
		err = reach(P, sqlite3_column_int64(st, 0), &bits);
	/* a stack with a note has another thread's Python frames: a pass put
	 * the launch there (the backward join, this one) */
	bits = (bits & (PY | NOTE)) == PY ? PY : 0;
	if (!err && !bits && rc != SQLITE_DONE)
		err = -EIO;
	sqlite3_reset(st);
	if (err)
		return err;
	*xp_u64map_find(&P->threads, (uint64_t)pid, (uint64_t)tid) = bits & PY ? 1 : 2;
	return (bits & PY) != 0;
}

/* The launches whose stack has no Python frame and no note, from threads
 * that never show Python frames, by (pid, ts); stack 0 for none. */
static int candidates(struct pass *P, struct launch **out, size_t *n)
{
	sqlite3_stmt *st;
	size_t cap = 0;
	int rc = SQLITE_DONE, err = 0;

	/* a launch without a stack (NULL: unreadable) has no Python frame either */
	if (sqlite3_prepare_v2(P->db, "SELECT id, pid, tid, ts, ifnull(stack_id, 0) FROM xp_launches"
			       " ORDER BY pid, ts, id", -1, &st, NULL)
	    != SQLITE_OK)
		return -EIO;
	while (!err && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct launch l = { sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1),
				    sqlite3_column_int64(st, 2), sqlite3_column_int64(st, 3),
				    sqlite3_column_int64(st, 4) };
		unsigned bits;
		int py;

		if ((err = reach(P, l.stack, &bits)) || (bits & (PY | NOTE)))
			continue;
		if ((py = python_thread(P, l.pid, l.tid)) < 0)
			err = py;
		else if (!py && !(err = xp_array__reserve((void **)out, &cap, *n + 1, sizeof(**out), 64)))
			(*out)[(*n)++] = l;
	}
	if (!err && rc != SQLITE_DONE)
		err = -EIO;
	sqlite3_finalize(st);
	return err;
}

/* Of the waits, those of Python threads that launch GPU work themselves,
 * where one does: the work a runtime thread launches was handed over by
 * such a thread, not by a timer or monitor thread (threading.Timer,
 * tqdm's) that sleeps meanwhile. The waits are by thread. */
static int keep_launchers(struct pass *P, int64_t pid)
{
	sqlite3_stmt *st = P->st[LAUNCHER];
	size_t kept = 0, any = 0;

	for (size_t a = 0, b; a < P->nwaits; a = b) {
		int launches;

		for (b = a; b < P->nwaits && P->waits[b].tid == P->waits[a].tid; b++)
			;
		sqlite3_bind_int64(st, 1, pid);
		sqlite3_bind_int64(st, 2, P->waits[a].tid);
		launches = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int(st, 0) : -1;
		sqlite3_reset(st);
		if (launches < 0)
			return -EIO;
		any |= launches;
		for (size_t i = a; i < b; i++)
			P->waits[i].launches = launches;
	}
	if (!any)
		return 0;
	for (size_t i = 0; i < P->nwaits; i++)
		if (P->waits[i].launches)
			P->waits[kept++] = P->waits[i];
	P->nwaits = kept;
	return 0;
}

/* Process pid's voluntary waits whose stack has Python frames, of the
 * threads that count (keep_launchers). */
static int load_waits(struct pass *P, int64_t pid)
{
	sqlite3_stmt *st = P->st[WAITS];
	int rc = SQLITE_DONE, err = 0;

	P->nwaits = 0;
	sqlite3_bind_int64(st, 1, pid);
	while (!err && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct wait v = { sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1),
				  sqlite3_column_int64(st, 2), sqlite3_column_int64(st, 3), 0 };
		unsigned bits;

		if ((err = reach(P, v.stack, &bits)) || !(bits & PY))
			continue;
		if (!(err = xp_array__reserve((void **)&P->waits, &P->capwaits, P->nwaits + 1,
					      sizeof(*P->waits), 256)))
			P->waits[P->nwaits++] = v;
	}
	if (!err && rc != SQLITE_DONE)
		err = -EIO;
	sqlite3_reset(st);
	return err ? err : keep_launchers(P, pid);
}

/* How many threads were in a Python wait at ts (at most 2 counted); *one:
 * the wait of the first. */
static int waiters(const struct pass *P, int64_t ts, const struct wait **one)
{
	int found = 0;

	for (size_t a = 0, b; a < P->nwaits && found < 2; a = b) {
		size_t lo = a, hi;

		for (b = a; b < P->nwaits && P->waits[b].tid == P->waits[a].tid; b++)
			;
		/* the thread's last wait that began at or before ts */
		hi = b;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;

			if (P->waits[mid].ts <= ts)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo > a && P->waits[lo - 1].end > ts) {
			if (!found)
				*one = &P->waits[lo - 1];
			found++;
		}
	}
	return found;
}

/* The innermost Python node of a wait's stack (the native wait frames
 * below it are not the program's), once per stack; -errno. */
static int64_t python_leaf(struct pass *P, int64_t stack)
{
	int64_t id = stack, parent, frame;
	uint64_t *slot;
	unsigned own = 0;
	int fresh, rc, depth = 0;

	if (xp_u64map_upsert(&P->pyleaf, (uint64_t)stack, 0, &slot, &fresh))
		return -ENOMEM;
	if (!fresh)
		return (int64_t)*slot;
	while (id > 0 && depth++ < XP_STACKWALK_MAX_DEPTH) {
		if ((rc = node_row(P, id, &parent, &frame, &own)) < 0)
			return rc;
		if (!rc || (own & PY))
			break;
		id = parent;
	}
	if (!(own & PY))
		return -EIO;        /* reach saw a Python frame here: the tree changed */
	*xp_u64map_find(&P->pyleaf, (uint64_t)stack, 0) = (uint64_t)id;
	return id;
}

/* A thread's name (ThreadNames) into buf, "" if none. */
static void thread_name(struct pass *P, int64_t pid, int64_t tid, char *buf, size_t len)
{
	sqlite3_stmt *st = P->st[NAME];

	buf[0] = 0;
	sqlite3_bind_int64(st, 1, (int64_t)((uint64_t)pid << XP_GTID_SHIFT | ((uint64_t)tid & XP_GTID_TID_MASK)));
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
		snprintf(buf, len, "%s", (const char *)sqlite3_column_text(st, 0));
	sqlite3_reset(st);
}

/* The note of a launch by l's thread while waiter's thread waited: the
 * launcher's name where it tells the two apart ("python3" both, as
 * threads inherit the process's name, says nothing). Once per pair. */
static int note_frame(struct pass *P, const struct launch *l, int64_t waiter, int64_t *frame)
{
	uint64_t k1 = (uint64_t)l->pid << 32 | (uint32_t)l->tid;
	uint64_t k2 = (uint64_t)l->pid << 32 | (uint32_t)waiter;
	char mine[64], theirs[64], text[160];
	uint64_t *slot;
	int64_t sym;
	int fresh, err;

	if (xp_u64map_upsert(&P->notes, k1, k2, &slot, &fresh))
		return -ENOMEM;
	if (!fresh) {
		*frame = (int64_t)*slot;
		return 0;
	}
	thread_name(P, l->pid, l->tid, mine, sizeof(mine));
	thread_name(P, l->pid, waiter, theirs, sizeof(theirs));
	if (mine[0] && strcmp(mine, theirs))
		snprintf(text, sizeof(text), XP_WAIT_NOTE_OPEN "runtime thread %s" XP_WAIT_NOTE_CLOSE, mine);
	else
		snprintf(text, sizeof(text), XP_WAIT_NOTE_OPEN "a runtime thread" XP_WAIT_NOTE_CLOSE);
	if ((err = xp_stackwriter_string(P->w, text, strlen(text), &sym, NULL)) ||
	    (err = xp_stackwriter_frame(P->w, &(struct xp_frame_key){ .symbol = sym, .module = P->module,
					.kind = XP_FRAME_NOTE }, frame, NULL)))
		return err;
	*xp_u64map_find(&P->notes, k1, k2) = (uint64_t)*frame;
	return 0;
}

/* The launch's own frames, root to leaf, under node: the new stack. */
static int own_frames_under(struct pass *P, int64_t node, int64_t stack, int64_t *out)
{
	int64_t id = stack, parent, frame;
	unsigned own;
	size_t len = 0;
	int rc;

	while (id > 0 && len < XP_STACKWALK_MAX_DEPTH) {
		if ((rc = node_row(P, id, &parent, &frame, &own)) < 0)
			return rc;
		if (!rc)
			break;
		P->path[len++] = frame;
		id = parent;
	}
	while (len-- > 0)
		if ((rc = xp_stackwriter_child(P->w, node, P->path[len], &node)))
			return rc;
	*out = node;
	return 0;
}

/* Launch l re-stacked at the Python line of wait v. */
static int place(struct pass *P, const struct launch *l, const struct wait *v)
{
	sqlite3_stmt *set = P->st[SET_STACK];
	int64_t line = python_leaf(P, v->stack), frame, noted, stack;
	uint64_t *slot;
	int fresh, err;

	if (line < 0)
		return (int)line;
	if ((err = note_frame(P, l, v->tid, &frame)) ||
	    (err = xp_stackwriter_child(P->w, line, frame, &noted)))
		return err;
	if (xp_u64map_upsert(&P->made, (uint64_t)noted, (uint64_t)l->stack, &slot, &fresh))
		return -ENOMEM;
	if (fresh) {
		if ((err = own_frames_under(P, noted, l->stack, &stack)))
			return err;
		*xp_u64map_find(&P->made, (uint64_t)noted, (uint64_t)l->stack) = (uint64_t)stack;
	} else {
		stack = (int64_t)*slot;
	}
	sqlite3_bind_int64(set, 1, stack);
	sqlite3_bind_int64(set, 2, l->id);
	err = sqlite3_step(set) == SQLITE_DONE ? 0 : -EIO;
	sqlite3_reset(set);
	return err;
}

/* Each candidate placed, or counted as left, a process at a time. */
static int place_all(struct pass *P, const struct launch *v, size_t n, struct xp_wait_lines *out)
{
	int err = 0;

	for (size_t a = 0, b; a < n && !err; a = b) {
		for (b = a; b < n && v[b].pid == v[a].pid; b++)
			;
		if ((err = load_waits(P, v[a].pid)) || !P->nwaits)
			continue;       /* no Python wait in the process: nothing to say */
		for (size_t i = a; i < b && !err; i++) {
			const struct wait *one = NULL;
			int k = waiters(P, v[i].ts, &one);

			if (k == 1 && !(err = place(P, &v[i], one)))
				out->placed++;
			else if (!k)
				out->no_waiter++;
			else if (k > 1)
				out->several++;
		}
	}
	return err;
}

/* A cheap first question: Python frames and a voluntary wait at all. */
static int worth_it(sqlite3 *db)
{
	sqlite3_stmt *st;
	int yes = 0;

	if (sqlite3_prepare_v2(db, "SELECT EXISTS (SELECT 1 FROM xp_frames f LEFT JOIN StringIds y"
			       " ON y.id = f.symbol WHERE f.kind = 6 OR (f.kind = 2 AND y.value GLOB 'py::*'))"
			       " AND EXISTS (SELECT 1 FROM xp_switches WHERE prev_state != 0)",
			       -1, &st, NULL) != SQLITE_OK)
		return -EIO;
	if (sqlite3_step(st) == SQLITE_ROW)
		yes = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	return yes;
}

static int set_fact(sqlite3 *db, const char *name, int64_t v)
{
	sqlite3_stmt *st;
	int err;

	if (sqlite3_prepare_v2(db, "INSERT INTO META_DATA_EXPORT(name, value) VALUES (?1, ?2)", -1,
			       &st, NULL) != SQLITE_OK)
		return -EIO;
	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, v);
	err = sqlite3_step(st) == SQLITE_DONE ? 0 : -EIO;
	sqlite3_finalize(st);
	return err;
}

/* The counts, in place of an earlier pass's (a database placed again). */
static int save_counts(sqlite3 *db, const struct xp_wait_lines *n)
{
	int err;

	if (sqlite3_exec(db, "DELETE FROM META_DATA_EXPORT WHERE name GLOB 'xp.wait_lines.*'",
			 NULL, NULL, NULL) != SQLITE_OK)
		return -EIO;
	if (!n->placed && !n->no_waiter && !n->several)
		return 0;
	if ((err = set_fact(db, "xp.wait_lines.placed", n->placed)) ||
	    (err = set_fact(db, "xp.wait_lines.no_waiter", n->no_waiter)))
		return err;
	return set_fact(db, "xp.wait_lines.several", n->several);
}

static void pass_close(struct pass *P)
{
	for (int i = 0; i < NSTMT; i++)
		sqlite3_finalize(P->st[i]);
	xp_stackwriter_close(P->w);
	xp_u64map_free(&P->bits);
	xp_u64map_free(&P->threads);
	xp_u64map_free(&P->pyleaf);
	xp_u64map_free(&P->notes);
	xp_u64map_free(&P->made);
	free(P->waits);
	free(P);
}

int xp_wait_lines(sqlite3 *db, struct xp_wait_lines *out)
{
	struct launch *v = NULL;
	struct pass *P;
	size_t n = 0;
	int err = 0;

	memset(out, 0, sizeof(*out));
	if ((err = worth_it(db)) <= 0)
		return err;
	err = 0;
	if (!(P = calloc(1, sizeof(*P))))
		return -ENOMEM;
	P->db = db;
	xp_u64map_init(&P->bits);
	xp_u64map_init(&P->threads);
	xp_u64map_init(&P->pyleaf);
	xp_u64map_init(&P->notes);
	xp_u64map_init(&P->made);
	for (int i = 0; i < NSTMT && !err; i++)
		if (sqlite3_prepare_v2(db, stmt_sql[i], -1, &P->st[i], NULL) != SQLITE_OK)
			err = -EIO;
	if (!err)
		err = candidates(P, &v, &n);
	if (!err && n && !(err = xp_stackwriter_open(db, &P->w)))
		err = xp_stackwriter_string(P->w, XP_WAIT_NOTE_MODULE, sizeof(XP_WAIT_NOTE_MODULE) - 1,
					    &P->module, NULL);
	if (!err && n)
		err = place_all(P, v, n, out);
	if (!err)
		err = save_counts(db, out);
	free(v);
	pass_close(P);
	return err;
}

int xp_wait_lines_off(sqlite3 *db)
{
	return set_fact(db, "xp.wait_lines.off", 1);
}

/* pywaits.c - see pywaits.h. Each thread's reads in time order (one reader
 * writes them so), found by binary search. */
#include "ingest/pywaits.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/array.h"
#include "src/runfmt_py.h"
#include "src/u64map.h"

struct read {
	uint64_t ts, pc;
};

struct thread {
	struct read *r;
	size_t n, cap;
};

struct xp_pywaits {
	struct thread *threads;
	size_t nthreads, cap;
	struct xp_u64map ids;       /* (pid, tid) -> index + 1 */
	uint64_t counts[5];         /* intervals, blocked, native stacks, Python frames,
				     * blocked call */
};

struct xp_pywaits *xp_pywaits_new(void)
{
	struct xp_pywaits *w = calloc(1, sizeof(*w));

	if (w)
		xp_u64map_init(&w->ids);
	return w;
}

void xp_pywaits_free(struct xp_pywaits *w)
{
	if (!w)
		return;
	for (size_t i = 0; i < w->nthreads; i++)
		free(w->threads[i].r);
	free(w->threads);
	xp_u64map_free(&w->ids);
	free(w);
}

int xp_pywaits_record(struct xp_pywaits *w, const struct xp_record_header *h)
{
	const struct xp_pywait *p = xp_record_payload(h);
	struct thread *t;
	uint64_t *slot;
	int fresh;

	if (h->type != XP_REC_PYWAIT)
		return 0;
	if (xp_record_payload_len(h) < sizeof(*p))
		return -EBADMSG;
	if (xp_u64map_upsert(&w->ids, p->pid, p->tid, &slot, &fresh))
		return -ENOMEM;
	if (fresh) {
		*slot = 0;
		if (xp_array__reserve((void **)&w->threads, &w->cap, w->nthreads + 1,
				      sizeof(*w->threads), 16))
			return -ENOMEM;
		memset(&w->threads[w->nthreads], 0, sizeof(*w->threads));
		*xp_u64map_find(&w->ids, p->pid, p->tid) = ++w->nthreads;
	}
	t = &w->threads[*xp_u64map_find(&w->ids, p->pid, p->tid) - 1];
	if (t->n && p->ts < t->r[t->n - 1].ts)
		return -EBADMSG;
	if (xp_array__reserve((void **)&t->r, &t->cap, t->n + 1, sizeof(*t->r), 64))
		return -ENOMEM;
	t->r[t->n++] = (struct read){ p->ts, p->pc };
	return 1;
}

int xp_pywaits_in(const struct xp_pywaits *w, uint32_t pid, uint32_t tid, uint64_t from,
		  uint64_t until, uint64_t *pc)
{
	const uint64_t *slot = xp_u64map_find(&w->ids, pid, tid);
	const struct thread *t;
	size_t lo = 0, hi;

	if (!slot || !*slot)
		return 0;
	t = &w->threads[*slot - 1];
	hi = t->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->r[mid].ts < from)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == t->n || t->r[lo].ts > until)
		return 0;
	*pc = t->r[lo].pc;
	return 1;
}

void xp_pywaits_count(struct xp_pywaits *w, int blocked, int native, int python, int call)
{
	w->counts[0]++;
	w->counts[1] += !!blocked;
	w->counts[2] += !!native;
	w->counts[3] += !!python;
	w->counts[4] += !!call;
}

int xp_pywaits_save(sqlite3 *db, const struct xp_pywaits *w)
{
	static const char *const names[] = { "xp.waits.intervals", "xp.waits.blocked",
					     "xp.waits.native_stacks", "xp.waits.python_frames",
					     "xp.waits.blocked_call" };
	sqlite3_stmt *st;
	int err = 0;

	if (!w->counts[0])
		return 0;
	if (sqlite3_prepare_v2(db, "INSERT INTO META_DATA_EXPORT(name, value) VALUES (?, ?)", -1,
			       &st, NULL) != SQLITE_OK)
		return -EIO;
	for (int i = 0; i < 5 && !err; i++) {
		char v[32];

		snprintf(v, sizeof(v), "%" PRIu64, w->counts[i]);
		sqlite3_bind_text(st, 1, names[i], -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 2, v, -1, SQLITE_TRANSIENT);
		err = sqlite3_step(st) == SQLITE_DONE ? 0 : -EIO;
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
	return err;
}

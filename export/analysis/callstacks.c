/* callstacks.c - the launch stack of each CUDA call (callstacks.h). */
#include "export/analysis/callstacks.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "src/array.h"
#include "src/u64map.h"

struct launch_rec {
	int64_t stack;              /* xp_stacks id, or -1 */
	uint32_t tid;
	uint32_t next;              /* the same (pid, correlation id)'s next record + 1, 0: none */
};

/* One process's correlation ids: [lo, hi], in an array where dense. */
struct proc {
	int64_t lo, hi;
	size_t count;
	uint32_t *head;             /* corr - lo -> record + 1; NULL: in sparse */
};

struct xp_callstacks {
	struct launch_rec *rec;
	size_t n, cap;
	struct xp_u64map proc_at;   /* pid -> index + 1 into procs */
	struct proc *procs;
	size_t nprocs, procs_cap;
	struct xp_u64map sparse;    /* (pid, corr) -> record + 1, for processes not dense */
};

/* What the scan keeps until the index is built. */
struct scan {
	int64_t *pid, *corr;
	size_t pid_cap, corr_cap;
};

/* Rows the join could match: integer keys, pid and tid in globalTid's
 * ranges (40 and 24 bits). */
static int scan_row(struct xp_callstacks *c, struct scan *sc, sqlite3_stmt *s)
{
	int64_t pid = sqlite3_column_int64(s, 0), tid = sqlite3_column_int64(s, 1);

	for (int i = 0; i < 3; i++)
		if (sqlite3_column_type(s, i) != SQLITE_INTEGER)
			return 0;
	if (pid < -(INT64_C(1) << 39) || pid >= INT64_C(1) << 39 || tid < 0 || tid > 0xffffff)
		return 0;
	if (c->n >= UINT32_MAX - 1)
		return -EFBIG;
	if (xp_array__reserve((void **)&c->rec, &c->cap, c->n + 1, sizeof(*c->rec), 1024) ||
	    xp_array__reserve((void **)&sc->pid, &sc->pid_cap, c->n + 1, sizeof(*sc->pid), 1024) ||
	    xp_array__reserve((void **)&sc->corr, &sc->corr_cap, c->n + 1, sizeof(*sc->corr), 1024))
		return -ENOMEM;
	sc->pid[c->n] = pid;
	sc->corr[c->n] = sqlite3_column_int64(s, 2);
	c->rec[c->n++] = (struct launch_rec){ sqlite3_column_type(s, 3) == SQLITE_NULL ? -1 :
					      sqlite3_column_int64(s, 3), (uint32_t)tid, 0 };
	return 0;
}

static struct proc *proc_of(const struct xp_callstacks *c, int64_t pid)
{
	const uint64_t *v = xp_u64map_find(&c->proc_at, (uint64_t)pid, 0);

	return v ? &c->procs[*v - 1] : NULL;
}

/* Each process's range of ids, and an array for the dense ones. */
static int ranges(struct xp_callstacks *c, const struct scan *sc)
{
	for (size_t i = 0; i < c->n; i++) {
		uint64_t *slot;
		struct proc *p;
		int fresh;

		if (xp_u64map_upsert(&c->proc_at, (uint64_t)sc->pid[i], 0, &slot, &fresh))
			return -ENOMEM;
		if (fresh) {
			if (xp_array__reserve((void **)&c->procs, &c->procs_cap, c->nprocs + 1,
					      sizeof(*c->procs), 8))
				return -ENOMEM;
			c->procs[c->nprocs] = (struct proc){ sc->corr[i], sc->corr[i], 0, NULL };
			*slot = ++c->nprocs;
		}
		p = &c->procs[*slot - 1];
		p->lo = sc->corr[i] < p->lo ? sc->corr[i] : p->lo;
		p->hi = sc->corr[i] > p->hi ? sc->corr[i] : p->hi;
		p->count++;
	}
	for (size_t k = 0; k < c->nprocs; k++) {
		struct proc *p = &c->procs[k];
		uint64_t span = (uint64_t)p->hi - (uint64_t)p->lo;

		/* a range of ids the records fill at least half of */
		if (span < UINT32_MAX && span <= 2 * (uint64_t)p->count + 1024 &&
		    !(p->head = calloc(span + 1, sizeof(*p->head))))
			return -ENOMEM;
	}
	return 0;
}

/* Chains each record under its key, last first, so that chains run in
 * table order. */
static int link(struct xp_callstacks *c, const struct scan *sc)
{
	for (size_t i = c->n; i-- > 0;) {
		struct proc *p = proc_of(c, sc->pid[i]);
		uint32_t *head;
		uint64_t *slot;
		int fresh;

		if (p->head) {
			head = &p->head[(uint64_t)sc->corr[i] - (uint64_t)p->lo];
		} else {
			if (xp_u64map_upsert(&c->sparse, (uint64_t)sc->pid[i], (uint64_t)sc->corr[i],
					     &slot, &fresh))
				return -ENOMEM;
			c->rec[i].next = (uint32_t)*slot;
			*slot = i + 1;
			continue;
		}
		c->rec[i].next = *head;
		*head = (uint32_t)(i + 1);
	}
	return 0;
}

int xp_callstacks_load(sqlite3 *db, struct xp_callstacks **out)
{
	struct xp_callstacks *c = calloc(1, sizeof(*c));
	struct scan sc = { 0 };
	sqlite3_stmt *s = NULL;
	int rc = -ENOMEM, step = SQLITE_DONE;

	*out = NULL;
	if (!c)
		return -ENOMEM;
	xp_u64map_init(&c->proc_at);
	xp_u64map_init(&c->sparse);
	if (sqlite3_prepare_v2(db, "SELECT pid, tid, correlation_id, stack_id FROM xp_launches", -1,
			       &s, NULL) != SQLITE_OK) {
		rc = -EIO;
		goto out;
	}
	rc = 0;
	while (!rc && (step = sqlite3_step(s)) == SQLITE_ROW)
		rc = scan_row(c, &sc, s);
	if (!rc && step != SQLITE_DONE)
		rc = -EIO;
	if (!rc && !(rc = ranges(c, &sc)))
		rc = link(c, &sc);
out:
	sqlite3_finalize(s);
	free(sc.pid);
	free(sc.corr);
	if (rc < 0)
		xp_callstacks_free(c);
	else
		*out = c;
	return rc;
}

size_t xp_callstacks_find(const struct xp_callstacks *c, int64_t gtid, int64_t corr, size_t after)
{
	uint32_t tid = (uint32_t)(gtid & 0xffffff);
	size_t k;

	if (after) {
		k = c->rec[after - 1].next;
	} else {
		const struct proc *p = proc_of(c, gtid >> 24);
		const uint64_t *v;

		if (!p)
			return 0;
		if (p->head)
			k = corr >= p->lo && corr <= p->hi ?
			    p->head[(uint64_t)corr - (uint64_t)p->lo] : 0;
		else
			k = (v = xp_u64map_find(&c->sparse, (uint64_t)(gtid >> 24), (uint64_t)corr)) ?
			    (size_t)*v : 0;
	}
	while (k && c->rec[k - 1].tid != tid)
		k = c->rec[k - 1].next;
	return k;
}

int64_t xp_callstacks_stack(const struct xp_callstacks *c, size_t k)
{
	return c->rec[k - 1].stack;
}

void xp_callstacks_free(struct xp_callstacks *c)
{
	if (!c)
		return;
	for (size_t k = 0; k < c->nprocs; k++)
		free(c->procs[k].head);
	free(c->procs);
	free(c->rec);
	xp_u64map_free(&c->proc_at);
	xp_u64map_free(&c->sparse);
	free(c);
}

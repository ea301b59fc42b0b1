/* coll_inst.c - a job's collectives as instances across ranks (coll_inst.h). */
#include "export/analysis/coll_inst.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "db/db_schema.h"
#include "src/array.h"
#include "src/u64map.h"

static int is_coll(const struct xp_tl_op *op)
{
	return op->cls == XP_TL_COMM && (op->name >= 0 || op->host);
}

/* The slots: per rank's process, its device with the most collectives. */
static int load_slots(sqlite3 *db, const struct xp_tl_set *set, struct xp_coll_job *J)
{
	sqlite3_stmt *s;
	size_t cap = 0;
	int step;

	if (sqlite3_prepare_v2(db, "SELECT rank, pid FROM xp_ranks GROUP BY pid ORDER BY rank, pid",
			       -1, &s, NULL) != SQLITE_OK)
		return -EIO;
	while ((step = sqlite3_step(s)) == SQLITE_ROW) {
		int64_t pid = sqlite3_column_int64(s, 1);
		const struct xp_tl *best = NULL;
		size_t best_n = 0;

		for (size_t d = 0; d < set->ndev; d++) {
			size_t n = 0;

			if ((set->dev[d].gpid >> 24) != pid)
				continue;
			for (size_t i = 0; i < set->dev[d].n; i++)
				n += (size_t)is_coll(&set->dev[d].ops[i]);
			if (!best || n > best_n)
				best = &set->dev[d], best_n = n;
		}
		if (!best)
			continue;
		if (xp_array__reserve((void **)&J->tl, &cap, J->nslots + 1, sizeof(*J->tl), 8) ||
		    !(J->rank = realloc(J->rank, cap * sizeof(*J->rank))) ||
		    !(J->pid = realloc(J->pid, cap * sizeof(*J->pid)))) {
			sqlite3_finalize(s);
			return -ENOMEM;
		}
		J->tl[J->nslots] = best;
		J->rank[J->nslots] = sqlite3_column_int64(s, 0);
		J->pid[J->nslots++] = pid;
	}
	sqlite3_finalize(s);
	return step == SQLITE_DONE ? 0 : -EIO;
}

/* Numbers the instances: the k-th op of a name on a slot is instance
 * (name, k), the same on every slot. */
static int number_ops(struct xp_coll_job *J, struct xp_u64map *at)
{
	if (!(J->inst = calloc(J->nslots ? J->nslots : 1, sizeof(*J->inst))) ||
	    !(J->coll = calloc(J->nslots ? J->nslots : 1, sizeof(*J->coll))) ||
	    !(J->ncoll = calloc(J->nslots ? J->nslots : 1, sizeof(*J->ncoll))))
		return -ENOMEM;
	for (size_t sl = 0; sl < J->nslots; sl++) {
		const struct xp_tl *tl = J->tl[sl];
		struct xp_u64map count;

		xp_u64map_init(&count);
		if (!(J->inst[sl] = malloc((tl->n ? tl->n : 1) * sizeof(**J->inst))) ||
		    !(J->coll[sl] = malloc((tl->n ? tl->n : 1) * sizeof(**J->coll))))
			return -ENOMEM;
		for (size_t i = 0; i < tl->n; i++) {
			uint64_t *k, *slot;
			int fresh;

			J->inst[sl][i] = -1;
			if (!is_coll(&tl->ops[i]))
				continue;
			if (xp_u64map_upsert(&count, (uint64_t)tl->ops[i].name, 0, &k, &fresh) ||
			    xp_u64map_upsert(at, (uint64_t)tl->ops[i].name, (*k)++, &slot, &fresh)) {
				xp_u64map_free(&count);
				return -ENOMEM;
			}
			if (fresh)
				*slot = ++J->ninst;
			J->inst[sl][i] = (int32_t)(*slot - 1);
			J->coll[sl][J->ncoll[sl]++] = (int32_t)i;
		}
		xp_u64map_free(&count);
	}
	return 0;
}

int xp_coll_job_load(sqlite3 *db, const struct xp_tl_set *set, struct xp_coll_job *J)
{
	struct xp_u64map at;
	int rc;

	memset(J, 0, sizeof(*J));
	if (!xp_db_has_table(db, "xp_ranks"))
		return 0;
	xp_u64map_init(&at);
	rc = load_slots(db, set, J);
	rc = rc ? rc : number_ops(J, &at);
	xp_u64map_free(&at);
	if (!rc && !(J->op = malloc((J->ninst * J->nslots > 0 ? J->ninst * J->nslots : 1) * sizeof(*J->op))))
		rc = -ENOMEM;
	if (rc) {
		xp_coll_job_free(J);
		return rc;
	}
	memset(J->op, 0xff, J->ninst * J->nslots * sizeof(*J->op));
	J->t0 = INT64_MAX;
	for (size_t sl = 0; sl < J->nslots; sl++)
		for (size_t i = 0; i < J->tl[sl]->n; i++) {
			if (J->inst[sl][i] >= 0)
				J->op[(size_t)J->inst[sl][i] * J->nslots + sl] = (int32_t)i;
			if (J->tl[sl]->ops[i].start < J->t0)
				J->t0 = J->tl[sl]->ops[i].start;
		}
	J->clock_err = xp_tl_clock_error(db);
	return 0;
}

void xp_coll_job_free(struct xp_coll_job *J)
{
	for (size_t sl = 0; J->inst && sl < J->nslots; sl++)
		free(J->inst[sl]);
	for (size_t sl = 0; J->coll && sl < J->nslots; sl++)
		free(J->coll[sl]);
	free(J->inst);
	free(J->coll);
	free(J->ncoll);
	free(J->tl);
	free(J->rank);
	free(J->pid);
	free(J->op);
	memset(J, 0, sizeof(*J));
}

int xp_coll_slot(const struct xp_coll_job *J, int64_t pid)
{
	for (size_t sl = 0; sl < J->nslots; sl++)
		if (J->pid[sl] == pid)
			return (int)sl;
	return -1;
}

const struct xp_tl_op *xp_coll_op(const struct xp_coll_job *J, size_t inst, size_t slot)
{
	int32_t i = inst < J->ninst && slot < J->nslots ? J->op[inst * J->nslots + slot] : -1;

	return i >= 0 ? &J->tl[slot]->ops[i] : NULL;
}

int xp_coll_too_close(const struct xp_coll_job *J, size_t inst)
{
	int64_t last = INT64_MIN, second = INT64_MIN;

	for (size_t sl = 0; sl < J->nslots; sl++) {
		const struct xp_tl_op *op = xp_coll_op(J, inst, sl);

		if (!op)
			continue;
		if (op->start > last)
			second = last, last = op->start;
		else if (op->start > second)
			second = op->start;
	}
	return second != INT64_MIN && last - second <= J->clock_err;
}

void xp_coll_in_step(const struct xp_coll_job *J, size_t w, size_t i, size_t l, int64_t *pw,
		     int64_t *pl)
{
	const struct xp_tl *tl = J->tl[w];
	const int32_t *coll = J->coll[w];
	int64_t at = tl->ops[i].start, best = INT64_MIN;
	size_t lo = 0, hi = J->ncoll[w];
	int32_t inst = -1;

	while (lo < hi) {           /* past the collectives started before the op */
		size_t mid = lo + (hi - lo) / 2;

		if ((size_t)coll[mid] < i)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* the latest end before the op among the collectives started before
	 * it (one stream's end in order; a few streams may interleave) */
	for (size_t k = 0; k < 64 && lo > 0; k++) {
		const struct xp_tl_op *op = &tl->ops[coll[--lo]];
		int32_t n = J->inst[w][coll[lo]];

		if (op->end > at || op->end <= best || !xp_coll_op(J, (size_t)n, l))
			continue;
		best = op->end;
		inst = n;
	}
	*pw = *pl = J->t0;
	if (inst >= 0) {
		*pw = best;
		*pl = xp_coll_op(J, (size_t)inst, l)->end;
	}
}

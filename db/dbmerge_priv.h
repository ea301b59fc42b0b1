/* dbmerge_priv.h - what the two halves of the merge share: the job's
 * de-duplication state and the run's id maps (dbmerge.c copies rows,
 * dbmerge_shared.c shares names, frames and stack nodes). */
#ifndef XP_DBMERGE_PRIV_H
#define XP_DBMERGE_PRIV_H

#include <errno.h>
#include <stdint.h>
#include <sqlite3.h>

#include "db/dbmerge.h"
#include "db/stackwriter.h"
#include "src/u64map.h"

/* keys of the run's old -> new id map (k1) */
enum { XP_MERGE_KEY_STR = 1, XP_MERGE_KEY_STACK, XP_MERGE_KEY_FRAME };

struct xp_dbmerge {
	sqlite3 *job;
	struct xp_stackwriter *w;   /* the job's names, frames, stack nodes (from the first run) */
	struct xp_u64map map;       /* (XP_MERGE_KEY_*, run's id) -> job's id, this run */
	int64_t module_base;        /* this run's module ids move up by this */
	int rules_checked;          /* every table of the job's schema has a rule */
	const struct xp_merge_run *run;
	uint64_t rows;
	char err[512];              /* the last failure's message (xp_dbmerge_error) */
};

/* Names, frames, then stack nodes of a run into the job (in that order:
 * each maps through the one before). 0, -ENOMEM or -EIO with m->err set. */
int xp_dbmerge_strings(struct xp_dbmerge *m, sqlite3 *run);
int xp_dbmerge_frames(struct xp_dbmerge *m, sqlite3 *run);
int xp_dbmerge_stacks(struct xp_dbmerge *m, sqlite3 *run);
int xp_dbmerge_fail(struct xp_dbmerge *m, sqlite3 *db, const char *table);

static inline int xp_dbmerge_remember(struct xp_dbmerge *m, int kind, int64_t old, int64_t new_id)
{
	uint64_t *slot;
	int fresh;

	if (xp_u64map_upsert(&m->map, (uint64_t)kind, (uint64_t)old, &slot, &fresh))
		return -ENOMEM;
	*slot = (uint64_t)new_id;
	return 0;
}

/* The job's id of a run's id; ids <= 0 ("none") stay, a dangling one
 * stays dangling (-1 is no row anywhere). */
static inline int64_t xp_dbmerge_lookup(const struct xp_dbmerge *m, int kind, int64_t old)
{
	const uint64_t *v;

	if (old <= 0)
		return old;
	v = xp_u64map_find(&m->map, (uint64_t)kind, (uint64_t)old);
	return v ? (int64_t)*v : -1;
}

#endif

/* ddpbuckets.c - DDP's gradient all-reduces named by their bucket; see
 * ddpbuckets.h for why the order of launches says which bucket. */
#include "ingest/ddpbuckets.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "src/array.h"
#include "db/db_schema.h"
#include "db/stackwriter.h"
#include "src/u64map.h"

/* The launch stacks through Reducer::all_reduce_bucket to an NCCL call: a
 * bucket's collective (not the reducer's copies into a bucket, nor the
 * broadcast of rebuilt bucket indices from the forward pass). */
#define ALL_REDUCE_BUCKET "'c10d::Reducer::all_reduce_bucket(%'"
static const char collective_stacks_sql[] =
	"CREATE TEMP TABLE xp_ddp_stacks(leaf INTEGER PRIMARY KEY);"
	"INSERT INTO temp.xp_ddp_stacks WITH RECURSIVE up(leaf, node) AS"
	" (SELECT DISTINCT stack_id, stack_id FROM xp_launches"
	"  UNION ALL SELECT up.leaf, s.parent FROM up JOIN xp_stacks s ON s.id = up.node"
	"  WHERE s.parent != 0)"
	" SELECT up.leaf FROM up JOIN xp_stacks s ON s.id = up.node"
	" JOIN xp_frames f ON f.id = s.frame JOIN StringIds y ON y.id = f.symbol"
	" GROUP BY up.leaf HAVING max(y.value LIKE " ALL_REDUCE_BUCKET ")"
	" AND max(y.value GLOB 'nccl[A-Z]*');";

/* Every launch of the processes that have one, in time order. */
static const char launches_sql[] =
	"SELECT l.id, l.pid, l.tid, l.stack_id, d.leaf IS NOT NULL FROM xp_launches l"
	" LEFT JOIN temp.xp_ddp_stacks d ON d.leaf = l.stack_id"
	" WHERE l.pid IN (SELECT l2.pid FROM xp_launches l2 JOIN temp.xp_ddp_stacks d2"
	" ON d2.leaf = l2.stack_id) ORDER BY l.pid, l.ts, l.id";

struct noted {
	int64_t launch, stack;
	uint32_t bucket;
};

struct pass {                   /* one process's backward pass */
	int64_t pid, tid;
	uint32_t next;              /* the bucket of its next collective */
	int open;
};

static int has_reducer(sqlite3 *db)
{
	sqlite3_stmt *st;
	int yes;

	if (sqlite3_prepare_v2(db, "SELECT 1 FROM xp_frames f JOIN StringIds y ON y.id = f.symbol"
			       " WHERE y.value LIKE " ALL_REDUCE_BUCKET " LIMIT 1", -1, &st, NULL)
	    != SQLITE_OK)
		return 0;
	yes = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	return yes;
}

/* The buckets of the reducers' collectives, into *out (*n of them). */
static int number_launches(sqlite3 *db, struct noted **out, size_t *n)
{
	struct pass p = { .pid = -1 };
	size_t cap = 0;
	sqlite3_stmt *st;
	int rc;

	if (sqlite3_prepare_v2(db, launches_sql, -1, &st, NULL) != SQLITE_OK)
		return -EIO;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t pid = sqlite3_column_int64(st, 1), tid = sqlite3_column_int64(st, 2);

		if (pid != p.pid)
			p = (struct pass){ .pid = pid };
		if (!sqlite3_column_int(st, 4)) {
			/* the process's other threads: this pass is over */
			if (p.open && tid != p.tid)
				p.open = 0;
			continue;
		}
		if (!p.open || tid != p.tid)
			p = (struct pass){ .pid = pid, .tid = tid, .open = 1 };
		if (xp_array__reserve((void **)out, &cap, *n + 1, sizeof(**out), 64)) {
			sqlite3_finalize(st);
			return -ENOMEM;
		}
		(*out)[(*n)++] = (struct noted){ sqlite3_column_int64(st, 0),
						 sqlite3_column_int64(st, 3), p.next++ };
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : -EIO;
}

/* The note node of (stack, bucket): its frame "[DDP bucket K]" under the
 * stack's leaf; made once for each pair (a note frame of its own for each,
 * as it always was: xp_stackwriter_new_note). 0 or a negative errno. */
static int note_node(struct xp_stackwriter *w, struct xp_u64map *nodes, int64_t module,
		     int64_t stack, uint32_t bucket, int64_t *node)
{
	uint64_t *slot;
	char text[48];
	int64_t frame;
	int fresh, err;

	if (xp_u64map_upsert(nodes, (uint64_t)stack, bucket, &slot, &fresh))
		return -ENOMEM;
	if (!fresh) {
		*node = (int64_t)*slot;
		return 0;
	}
	snprintf(text, sizeof(text), "[DDP bucket %u]", bucket);
	if ((err = xp_stackwriter_new_note(w, text, module, &frame)) ||
	    (err = xp_stackwriter_child(w, stack, frame, node)))
		return err;
	*xp_u64map_find(nodes, (uint64_t)stack, bucket) = (uint64_t)*node;
	return 0;
}

static int apply_notes(sqlite3 *db, const struct noted *v, size_t n)
{
	struct xp_stackwriter *w = NULL;
	sqlite3_stmt *set = NULL;
	struct xp_u64map nodes;
	int64_t module = -1;
	int err;

	xp_u64map_init(&nodes);
	err = sqlite3_prepare_v2(db, "UPDATE xp_launches SET stack_id = ?1 WHERE id = ?2", -1, &set,
				 NULL) == SQLITE_OK ? 0 : -EIO;
	if (!err && !(err = xp_stackwriter_open(db, &w)))   /* the notes' module: a name, not a file */
		err = xp_stackwriter_string(w, "[ddp]", 5, &module, NULL);
	for (size_t i = 0; i < n && !err; i++) {
		int64_t node;

		if ((err = note_node(w, &nodes, module, v[i].stack, v[i].bucket, &node)))
			break;
		sqlite3_bind_int64(set, 1, node);
		sqlite3_bind_int64(set, 2, v[i].launch);
		if (sqlite3_step(set) != SQLITE_DONE)
			err = -EIO;
		sqlite3_reset(set);
	}
	sqlite3_finalize(set);
	xp_stackwriter_close(w);
	xp_u64map_free(&nodes);
	return err;
}

int xp_ddp_buckets(sqlite3 *db)
{
	struct noted *v = NULL;
	size_t n = 0;
	int err;

	if (!has_reducer(db))
		return 0;
	if (sqlite3_exec(db, collective_stacks_sql, NULL, NULL, NULL) != SQLITE_OK)
		return -EIO;
	err = number_launches(db, &v, &n);
	if (!err)
		err = apply_notes(db, v, n);
	free(v);
	sqlite3_exec(db, "DROP TABLE temp.xp_ddp_stacks", NULL, NULL, NULL);
	return err ? err : (int)(n < INT32_MAX ? n : INT32_MAX);
}

/* thread_samples.c - the launching threads' CPU samples, read ahead on a
 * thread of their own (thread_samples.h). */
#include "export/idle/thread_samples.h"

#include <errno.h>
#include <stdlib.h>

#include "db/dbtask.h"
#include "export/analysis/timeline.h"
#include "src/array.h"
#include "src/gtid.h"
#include "src/u64map.h"

struct xp_sample_reader {
	sqlite3 *db;                /* the caller's */
	sqlite3_stmt *one;          /* on db: a thread the read-ahead lacks */
	uint32_t pid;
	struct xp_db_task *ahead;   /* the launching threads' (read_all); NULL once joined */
	struct xp_thread_samples *t;
	size_t n, cap;              /* the read-ahead appends until it is joined */
	struct xp_u64map at;        /* gtid -> index + 1 into t, once joined */
};

static const char samples_sql[] = "SELECT ts, stack_id FROM xp_samples WHERE pid = ?1 AND tid = ?2"
				  " ORDER BY ts";

/* Thread gtid's samples through s (samples_sql) into t. 0 or -errno. */
static int read_thread(sqlite3_stmt *s, int64_t gtid, struct xp_thread_samples *t)
{
	size_t cap = 0;
	int step;

	*t = (struct xp_thread_samples){ .gtid = gtid };
	sqlite3_reset(s);
	sqlite3_bind_int64(s, 1, xp_gtid_pid(gtid));
	sqlite3_bind_int64(s, 2, xp_gtid_tid(gtid));
	while ((step = sqlite3_step(s)) == SQLITE_ROW) {
		if (xp_array__reserve((void **)&t->s, &cap, t->n + 1, sizeof(*t->s), 1024))
			return -ENOMEM;
		t->s[t->n][0] = sqlite3_column_int64(s, 0);
		t->s[t->n++][1] = sqlite3_column_int64(s, 1);
	}
	sqlite3_reset(s);
	return step == SQLITE_DONE ? 0 : -EIO;
}

/* Appends gtid's samples read through s. 0 or -errno (nothing appended). */
static int append(struct xp_sample_reader *r, sqlite3_stmt *s, int64_t gtid)
{
	int rc;

	if (xp_array__reserve((void **)&r->t, &r->cap, r->n + 1, sizeof(*r->t), 8))
		return -ENOMEM;
	if ((rc = read_thread(s, gtid, &r->t[r->n])) < 0) {
		free(r->t[r->n].s);
		return rc;
	}
	r->n++;
	return 0;
}

/* Every selected thread that made a CUDA call (a task: dbtask.h). */
static int read_all(sqlite3 *db, void *arg)
{
	struct xp_sample_reader *r = arg;
	sqlite3_stmt *threads = NULL, *one = NULL;
	int rc = 0, step;

	if (sqlite3_prepare_v2(db, "SELECT DISTINCT globalTid FROM CUPTI_ACTIVITY_KIND_RUNTIME"
			       " WHERE globalTid IS NOT NULL", -1, &threads, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, samples_sql, -1, &one, NULL) != SQLITE_OK)
		rc = -EIO;
	while (!rc && (step = sqlite3_step(threads)) == SQLITE_ROW) {
		int64_t gtid = sqlite3_column_int64(threads, 0);

		if (xp_tl_selected(gtid, r->pid))
			rc = append(r, one, gtid);
	}
	if (!rc && step != SQLITE_DONE)
		rc = -EIO;
	sqlite3_finalize(threads);
	sqlite3_finalize(one);
	return rc;
}

int xp_sample_reader_start(sqlite3 *db, uint32_t pid, struct xp_sample_reader **out)
{
	struct xp_sample_reader *r = calloc(1, sizeof(*r));

	*out = r;
	if (!r)
		return -ENOMEM;
	r->db = db;
	r->pid = pid;
	xp_u64map_init(&r->at);
	return xp_db_task_start(db, read_all, r, &r->ahead);
}

/* Joins the read-ahead and indexes what it read. 0 or -errno. */
static int join_ahead(struct xp_sample_reader *r)
{
	uint64_t *slot;
	int fresh, rc;

	if (!r->ahead)
		return 0;
	rc = xp_db_task_join(r->ahead);
	r->ahead = NULL;
	if (rc < 0)
		return rc;
	for (size_t i = 0; i < r->n; i++) {
		if (xp_u64map_upsert(&r->at, (uint64_t)r->t[i].gtid, 0, &slot, &fresh))
			return -ENOMEM;
		*slot = i + 1;
	}
	return 0;
}

const struct xp_thread_samples *xp_sample_reader_get(struct xp_sample_reader *r, int64_t gtid,
						     int *err)
{
	uint64_t *slot;
	int fresh;

	if ((*err = join_ahead(r)) < 0)
		return NULL;
	if ((slot = xp_u64map_find(&r->at, (uint64_t)gtid, 0)))
		return &r->t[*slot - 1];
	if (!r->one && sqlite3_prepare_v2(r->db, samples_sql, -1, &r->one, NULL) != SQLITE_OK) {
		*err = -EIO;
		return NULL;
	}
	if ((*err = append(r, r->one, gtid)) < 0)
		return NULL;
	if (xp_u64map_upsert(&r->at, (uint64_t)gtid, 0, &slot, &fresh)) {
		*err = -ENOMEM;
		return NULL;
	}
	*slot = r->n;
	return &r->t[r->n - 1];
}

void xp_sample_reader_free(struct xp_sample_reader *r)
{
	if (!r)
		return;
	xp_db_task_drop(r->ahead);
	for (size_t i = 0; i < r->n; i++)
		free(r->t[i].s);
	free(r->t);
	xp_u64map_free(&r->at);
	sqlite3_finalize(r->one);
	free(r);
}

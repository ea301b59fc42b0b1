/* pystacks_db.c - how many launches had a Python stack, into the database
 * (xp_python_processes and xp.python.* in META_DATA_EXPORT; xpcorr-db(5)).
 * Nothing is written for a run without Python records. */
#include "ingest/pystacks.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include "db/db_schema.h"
#include "ingest/pystacks_db.h"

static int save_proc(sqlite3_stmt *st, const struct xp_pyproc_stats *p)
{
	char ver[32];
	const int64_t v[] = {
		(int64_t)p->launches, (int64_t)p->with_python, (int64_t)p->joined_gap,
		(int64_t)xp_pyproc_on_python_threads(p), (int64_t)p->lost_no_thread,
		(int64_t)p->lost_unsupported, (int64_t)p->lost_unreadable, (int64_t)p->lost_other,
		(int64_t)p->stacks, (int64_t)p->codes,
	};
	int rc;

	sqlite3_bind_int64(st, 1, p->pid);
	snprintf(ver, sizeof(ver), "%u.%u.%u", p->hexversion >> 24, p->hexversion >> 16 & 0xff,
		 p->hexversion >> 8 & 0xff);
	if (p->hexversion)
		sqlite3_bind_text(st, 2, ver, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, 2);
	if (p->has_info)
		sqlite3_bind_int(st, 3, p->supported);
	else
		sqlite3_bind_null(st, 3);
	if (p->has_info && p->reason[0])
		sqlite3_bind_text(st, 4, p->reason, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, 4);
	for (int i = 0; i < (int)(sizeof(v) / sizeof(v[0])); i++)
		sqlite3_bind_int64(st, 5 + i, v[i]);
	rc = sqlite3_step(st);
	sqlite3_reset(st);
	return rc == SQLITE_DONE ? 0 : -EIO;
}

/* Python frames in CPU samples, per process that xpcap's reader looked at:
 * how (or why not) and how many samples on Python threads got a chain. */
static int save_sampled(sqlite3 *db, const struct xp_pystore *s)
{
	sqlite3_stmt *st = NULL;
	int err = 0;

	if (sqlite3_exec(db, XP_PYTHON_SAMPLED_SQL, NULL, NULL, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, "INSERT INTO xp_python_sampled VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
			       -1, &st, NULL) != SQLITE_OK)
		return -EIO;
	for (size_t i = 0; i < xp_pystore_nprocs(s) && !err; i++) {
		const struct xp_pyproc_stats *p = xp_pystore_proc(s, i);
		char ver[32];

		if (!p->sampler_info)
			continue;
		snprintf(ver, sizeof(ver), "%u.%u.%u", p->hexversion >> 24, p->hexversion >> 16 & 0xff,
			 p->hexversion >> 8 & 0xff);
		sqlite3_bind_int64(st, 1, p->pid);
		if (p->hexversion)
			sqlite3_bind_text(st, 2, ver, -1, SQLITE_TRANSIENT);
		else
			sqlite3_bind_null(st, 2);
		sqlite3_bind_int(st, 3, p->sampler_supported);
		sqlite3_bind_text(st, 4, p->sampler_reason, -1, SQLITE_TRANSIENT);
		sqlite3_bind_int64(st, 5, (int64_t)p->samples);
		sqlite3_bind_int64(st, 6, (int64_t)p->python_samples);
		sqlite3_bind_int64(st, 7, (int64_t)p->sampled_with);
		sqlite3_bind_int64(st, 8, (int64_t)p->snapshots);
		err = sqlite3_step(st) == SQLITE_DONE ? 0 : -EIO;
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
	return err;
}

int xp_pystore_save(sqlite3 *db, const struct xp_pystore *s)
{
	static const char *const names[] = {
		"xp.python.launches", "xp.python.with_python", "xp.python.joined_gap",
		"xp.python.on_python_threads", "xp.python.no_thread", "xp.python.unsupported",
		"xp.python.unreadable", "xp.python.lost_other",
	};
	uint64_t sum[8] = { 0 };
	sqlite3_stmt *st = NULL;
	int err = 0;

	if (!xp_pystore_any(s))
		return 0;
	if ((err = save_sampled(db, s)))
		return err;
	if (sqlite3_prepare_v2(db, "INSERT INTO xp_python_processes(pid, python, supported, reason,"
			       " launches, with_python, joined_gap, on_python_threads, no_thread,"
			       " unsupported, unreadable, lost_other, stack_records, code_records)"
			       " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", -1, &st, NULL)
	    != SQLITE_OK)
		return -EIO;
	for (size_t i = 0; i < xp_pystore_nprocs(s) && !err; i++) {
		const struct xp_pyproc_stats *p = xp_pystore_proc(s, i);

		if (!xp_pyproc_has_launch_side(p))
			continue;       /* only xpcap's reader saw it: xp_python_sampled */
		err = save_proc(st, p);
		sum[0] += p->launches;
		sum[1] += p->with_python;
		sum[2] += p->joined_gap;
		sum[3] += xp_pyproc_on_python_threads(p);
		sum[4] += p->lost_no_thread;
		sum[5] += p->lost_unsupported;
		sum[6] += p->lost_unreadable;
		sum[7] += p->lost_other;
	}
	sqlite3_finalize(st);
	if (err || sqlite3_prepare_v2(db, "INSERT INTO META_DATA_EXPORT(name, value) VALUES (?, ?)",
				      -1, &st, NULL) != SQLITE_OK)
		return -EIO;
	for (int i = 0; i < 8 && !err; i++) {
		char v[32];

		snprintf(v, sizeof(v), "%" PRIu64, sum[i]);
		sqlite3_bind_text(st, 1, names[i], -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 2, v, -1, SQLITE_TRANSIENT);
		err = sqlite3_step(st) == SQLITE_DONE ? 0 : -EIO;
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
	return err;
}

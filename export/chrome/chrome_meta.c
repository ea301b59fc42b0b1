/* chrome_meta.c - the Chrome trace's names and dictionaries: process and
 * thread names ("M" events), Kineto's deviceProperties, and stackFrames, the
 * prefix tree of xp_stacks as chrome://tracing reads it (a sample's or a
 * launch's "sf" names its leaf node), cut to the stacks the events name: a
 * bit per node, not a string per event. */
#include "src/gtid.h"
#include "export/chrome/chrome_priv.h"
#include "db/pyframe.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

static void name_event(struct xp_chrome *c, const char *what, int64_t pid, int64_t tid,
		       const char *key, const char *text, int64_t num)
{
	struct jsonw *w = &c->w;

	xp_chrome_event_begin(c, "M", NULL, what, pid, tid, 0);
	jsonw_key_lit(w, "args");
	jsonw_obj_begin(w);
	jsonw_key(w, key);
	if (text)
		jsonw_str(w, text);
	else
		jsonw_int(w, num);
	jsonw_obj_end(w);
	jsonw_obj_end(w);
}

static void text_of(sqlite3 *db, const char *sql, int64_t pid, char *buf, size_t len)
{
	sqlite3_stmt *st;

	buf[0] = '\0';
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return;         /* a database without the table: nothing to say */
	sqlite3_bind_int64(st, 1, pid);
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
		snprintf(buf, len, "%s", (const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
}

int xp_chrome_process_label(struct xp_chrome *c, int64_t pid, char *buf, size_t len)
{
	char rank[32], host[128];

	text_of(c->db, "SELECT 'rank ' || rank FROM xp_ranks WHERE pid = ?1 AND rank IS NOT NULL"
		" LIMIT 1", pid, rank, sizeof(rank));
	/* a merged job's run (pid >> 22) names its host */
	host[0] = '\0';
	if (c->job)
		text_of(c->db, "SELECT host FROM xp_job_runs WHERE run = ?1 >> 22", pid, host, sizeof(host));
	if (host[0])
		snprintf(buf, len, "%s%s%s, pid %u", rank, rank[0] ? " on " : "", host, xp_pid_local((uint64_t)pid));
	else
		snprintf(buf, len, "%s", rank);
	return host[0] != '\0';
}

int xp_chrome_thread_names(struct xp_chrome *c)
{
	sqlite3_stmt *st = NULL;
	char label[256], name[512];
	int rc;

	if (xp_chrome_prepare(c, &st, "SELECT pid, ifnull(name, '') FROM PROCESSES", NULL, NULL,
			      "pid", "pid"))
		return -EIO;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t pid = sqlite3_column_int64(st, 0);

		/* "python3 (rank 1 on node-b, pid 4000)" in a job, "python3 (rank 1)" */
		xp_chrome_process_label(c, pid, label, sizeof(label));
		snprintf(name, sizeof(name), label[0] ? "%s (%s)" : "%s", (const char *)sqlite3_column_text(st, 1),
			 label);
		name_event(c, "process_name", pid, 0, "name", name, 0);
		name_event(c, "process_sort_index", pid, 0, "sort_index", NULL, pid);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return -EIO;
	if (xp_chrome_prepare(c, &st, "SELECT " XP_SQL_GTID_PID("t.globalTid") ", " XP_SQL_GTID_TID("t.globalTid") ", ifnull(s.value, '')"
			      " FROM ThreadNames t LEFT JOIN StringIds s ON s.id = t.nameId", NULL, NULL,
			      XP_SQL_GTID_PID("t.globalTid"), "t.globalTid"))
		return -EIO;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t pid = sqlite3_column_int64(st, 0), tid = sqlite3_column_int64(st, 1);

		name_event(c, "thread_name", pid, tid, "name", (const char *)sqlite3_column_text(st, 2), 0);
		name_event(c, "thread_sort_index", pid, tid, "sort_index", NULL, tid);
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : -EIO;
}

/* Threads per SM from warps per SM: a crafted count does not overflow. */
static int64_t threads_of(int64_t warps)
{
	int64_t r;

	return __builtin_mul_overflow(warps, 32, &r) ? (warps < 0 ? INT64_MIN : INT64_MAX) : r;
}

int xp_chrome_device_properties(struct xp_chrome *c)
{
	struct jsonw *w = &c->w;
	sqlite3_stmt *st;
	int rc;

	/* one row per device per stream in the table: the first of each id */
	if (sqlite3_prepare_v2(c->db, "SELECT id, ifnull(name, ''), ifnull(uuid, ''), totalMemory,"
			       " computeMajor, computeMinor, smCount, maxWarpsPerSm, l2CacheSize, clockRate"
			       " FROM TARGET_INFO_GPU GROUP BY id ORDER BY id", -1, &st, NULL))
		return -EIO;
	jsonw_arr_begin(w);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		jsonw_newline(w);
		jsonw_obj_begin(w);
		jsonw_key_lit(w, "id"); jsonw_int(w, sqlite3_column_int64(st, 0));
		jsonw_key_lit(w, "name"); jsonw_str(w, (const char *)sqlite3_column_text(st, 1));
		jsonw_key_lit(w, "uuid"); jsonw_str(w, (const char *)sqlite3_column_text(st, 2));
		jsonw_key_lit(w, "totalGlobalMem"); jsonw_int(w, sqlite3_column_int64(st, 3));
		jsonw_key_lit(w, "computeMajor"); jsonw_int(w, sqlite3_column_int64(st, 4));
		jsonw_key_lit(w, "computeMinor"); jsonw_int(w, sqlite3_column_int64(st, 5));
		jsonw_key_lit(w, "numSms"); jsonw_int(w, sqlite3_column_int64(st, 6));
		jsonw_key_lit(w, "maxThreadsPerMultiprocessor");
		jsonw_int(w, threads_of(sqlite3_column_int64(st, 7)));
		jsonw_key_lit(w, "warpSize"); jsonw_int(w, 32);
		jsonw_key_lit(w, "l2CacheSize"); jsonw_int(w, sqlite3_column_int64(st, 8));
		jsonw_key_lit(w, "clockRate"); jsonw_int(w, sqlite3_column_int64(st, 9));
		jsonw_obj_end(w);
	}
	sqlite3_finalize(st);
	jsonw_arr_end(w);
	return rc == SQLITE_DONE ? 0 : -EIO;
}

/* The bitmap covers ids up to a few bits per row of xp_stacks; the ids
 * past it (a crafted database's, far apart) go into a map, so that memory
 * follows the rows and the events, not the largest id. */
int xp_chrome_stacks_init(struct xp_chrome *c)
{
	sqlite3_stmt *st;
	int64_t max = 0, rows = 0;

	if (sqlite3_prepare_v2(c->db, "SELECT count(*) FROM xp_stacks", -1, &st, NULL))
		return -EIO;
	if (sqlite3_step(st) == SQLITE_ROW)
		rows = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	if (sqlite3_prepare_v2(c->db, "SELECT max(id) FROM xp_stacks", -1, &st, NULL))
		return -EIO;
	if (sqlite3_step(st) == SQLITE_ROW)
		max = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	if (rows < 0 || rows > INT64_MAX / 64 - 8192)
		rows = 0;
	c->nstacks = max > 0 && max < INT64_MAX ? max + 1 : 0;
	if (c->nstacks > 64 * rows + 8192)
		c->nstacks = 64 * rows + 8192;
	c->used_stacks = calloc((size_t)c->nstacks / 8 + 1, 1);
	xp_u64map_init(&c->used_far);
	return c->used_stacks ? 0 : -ENOMEM;
}

void xp_chrome_stacks_free(struct xp_chrome *c)
{
	free(c->used_stacks);
	c->used_stacks = NULL;
	xp_u64map_free(&c->used_far);
}

static int used(const struct xp_chrome *c, int64_t id)
{
	if (id >= c->nstacks)
		return xp_u64map_find(&c->used_far, (uint64_t)id, 0) != NULL;
	return id > 0 && (c->used_stacks[id / 8] & (1u << (id % 8)));
}

/* A mark the map has no memory for is lost: that stack's frames are left
 * out of stackFrames, the trace itself stays whole. */
static void mark(struct xp_chrome *c, int64_t id)
{
	uint64_t *slot;
	int fresh;

	if (id >= c->nstacks)
		(void)xp_u64map_upsert(&c->used_far, (uint64_t)id, 0, &slot, &fresh);
	else if (id > 0)
		c->used_stacks[id / 8] |= (uint8_t)(1u << (id % 8));
}

void xp_chrome_sf(struct xp_chrome *c, int64_t stack_id)
{
	jsonw_key_lit(&c->w, "sf");
	jsonw_int(&c->w, stack_id);
	mark(c, stack_id);
}

/* Callers of used nodes are used: a parent's id is smaller than its
 * children's, so one pass from the largest id down closes the set. */
static int mark_callers(struct xp_chrome *c)
{
	sqlite3_stmt *st;
	int rc;

	if (sqlite3_prepare_v2(c->db, "SELECT id, parent FROM xp_stacks ORDER BY id DESC", -1, &st, NULL))
		return -EIO;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		if (used(c, sqlite3_column_int64(st, 0)))
			mark(c, sqlite3_column_int64(st, 1));
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : -EIO;
}

int xp_chrome_stack_frames(struct xp_chrome *c)
{
	struct jsonw *w = &c->w;
	sqlite3_stmt *st;
	char key[24], sql[400];
	int rc;

	if ((rc = mark_callers(c)))
		return rc;
	/* xp_frame_name: defined by xp_chrome_write (a Python line's name, pyframe.h) */
	snprintf(sql, sizeof(sql), "SELECT n.id, n.parent, ifnull(xp_frame_name(f.kind, s.value, m.value,"
		 " %s), '?'), ifnull(m.value, '') FROM xp_stacks n LEFT JOIN xp_frames f ON f.id = n.frame"
		 " LEFT JOIN StringIds s ON s.id = f.symbol"
		 " LEFT JOIN StringIds m ON m.id = f.module ORDER BY n.id", xp_sql_frame_line(c->db));
	if (sqlite3_prepare_v2(c->db, sql, -1, &st, NULL))
		return -EIO;
	jsonw_obj_begin(w);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t parent = sqlite3_column_int64(st, 1);
		const char *module = (const char *)sqlite3_column_text(st, 3);
		const char *slash = strrchr(module, '/');

		if (!used(c, sqlite3_column_int64(st, 0)))
			continue;
		snprintf(key, sizeof(key), "%lld", (long long)sqlite3_column_int64(st, 0));
		jsonw_newline(w);
		jsonw_key(w, key);
		jsonw_obj_begin(w);
		jsonw_key_lit(w, "name"); jsonw_str(w, (const char *)sqlite3_column_text(st, 2));
		jsonw_key_lit(w, "category"); jsonw_str(w, slash ? slash + 1 : module);
		/* a parent not older than its node (a cycle) is left out: a reader
		 * walking up would not end */
		if (parent > 0 && parent < sqlite3_column_int64(st, 0)) {
			snprintf(key, sizeof(key), "%lld", (long long)parent);
			jsonw_key_lit(w, "parent"); jsonw_str(w, key);
		}
		jsonw_obj_end(w);
	}
	sqlite3_finalize(st);
	jsonw_obj_end(w);
	return rc == SQLITE_DONE ? 0 : -EIO;
}

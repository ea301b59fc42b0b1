/* chrome_cpu.c - the CPU threads' events of the Chrome trace: CUDA API calls
 * as slices (cuda_runtime, cuda_driver, with Kineto's args cbid and
 * correlation), NVTX ranges and marks (user_annotation), and CPU samples as
 * instant events named by their leaf frame (cpu_sample). Each table is read
 * one row at a time, API calls as recorded (the viewers sort by time;
 * sorting here cost 10% of the export), samples per thread in time order. */
#include "src/gtid.h"
#include "export/chrome/chrome_priv.h"
#include "src/satmath.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define DRIVER_CBID_BIT 0x80000000u   /* xp_cbid: set for driver API callback ids */

static int api_slices(struct xp_chrome *c)
{
	struct jsonw *w = &c->w;
	sqlite3_stmt *st;
	int rc;

	/* the launch record gives the call's own stack (chrome://tracing's "sf");
	 * "+l.tid": look it up by (pid, correlation id), the selective index */
	if (xp_chrome_prepare(c, &st, "SELECT r.start, r.end, r.eventClass, " XP_SQL_GTID_PID("r.globalTid") ","
			      " " XP_SQL_GTID_TID("r.globalTid") ", r.correlationId, r.nameId, r.xp_cbid,"
			      " r.returnValue, (SELECT l.stack_id FROM xp_launches l WHERE l.pid = " XP_SQL_GTID_PID("r.globalTid")
			      "  AND l.correlation_id = r.correlationId AND +l.tid = " XP_SQL_GTID_TID("r.globalTid") " LIMIT 1)"
			      " FROM CUPTI_ACTIVITY_KIND_RUNTIME r",
			      NULL, "r.start", XP_SQL_GTID_PID("r.globalTid"), "r.rowid"))
		return -EIO;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t start = sqlite3_column_int64(st, 0), end = sqlite3_column_int64(st, 1);
		int64_t ret = sqlite3_column_int64(st, 8), stack = sqlite3_column_int64(st, 9);
		const char *name = xp_chrome_names_get(c->strings, sqlite3_column_int64(st, 6));

		if (!name)
			break;
		xp_chrome_event_begin(c, "X", sqlite3_column_int(st, 2) ? "cuda_driver" : "cuda_runtime",
				      name, sqlite3_column_int64(st, 3), sqlite3_column_int64(st, 4), start);
		jsonw_key_lit(w, "dur"); jsonw_ns_as_us(w, end > start ? xp_sat_sub(end, start) : 0);
		if (stack > 0) {
			xp_chrome_sf(c, stack);
		}
		jsonw_key_lit(w, "args");
		jsonw_obj_begin(w);
		jsonw_key_lit(w, "cbid"); jsonw_int(w, sqlite3_column_int64(st, 7) & ~(int64_t)DRIVER_CBID_BIT);
		jsonw_key_lit(w, "correlation"); jsonw_int(w, sqlite3_column_int64(st, 5));
		if (stack > 0 && (rc = xp_chrome_site_arg(c, stack)))
			break;
		if (ret) {
			jsonw_key_lit(w, "return"); jsonw_int(w, ret);
		}
		jsonw_obj_end(w);
		jsonw_obj_end(w);
	}
	sqlite3_finalize(st);
	if (rc < 0)                     /* the site of a stack: out of memory */
		return rc;
	if (rc == SQLITE_ROW)           /* stopped by a failed name lookup */
		return c->strings->err;
	return rc == SQLITE_DONE ? 0 : -EIO;
}

#define NVTX_MARK 34

static int nvtx_ranges(struct xp_chrome *c)
{
	struct jsonw *w = &c->w;
	sqlite3_stmt *st;
	int rc;

	if (xp_chrome_prepare(c, &st, "SELECT n.start, n.end, n.eventType, " XP_SQL_GTID_PID("n.globalTid") ","
			      " " XP_SQL_GTID_TID("n.globalTid") ", coalesce(n.text, t.value, ''), d.value"
			      " FROM NVTX_EVENTS n LEFT JOIN StringIds t ON t.id = n.textId"
			      " LEFT JOIN StringIds d ON d.id = n.domainId AND n.domainId != 0",
			      NULL, "n.start", XP_SQL_GTID_PID("n.globalTid"), "n.globalTid, n.start"))
		return -EIO;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t start = sqlite3_column_int64(st, 0), end = sqlite3_column_int64(st, 1);
		/* a mark, or a range whose end never came: a point in time */
		int point = sqlite3_column_int(st, 2) == NVTX_MARK || sqlite3_column_type(st, 1) == SQLITE_NULL;
		const char *domain = (const char *)sqlite3_column_text(st, 6);

		xp_chrome_event_begin(c, point ? "i" : "X", "user_annotation",
				      (const char *)sqlite3_column_text(st, 5), sqlite3_column_int64(st, 3),
				      sqlite3_column_int64(st, 4), start);
		if (point) {
			jsonw_key_lit(w, "s"); jsonw_str_lit(w, "t");
		} else {
			jsonw_key_lit(w, "dur"); jsonw_ns_as_us(w, end > start ? xp_sat_sub(end, start) : 0);
		}
		if (domain || (point && sqlite3_column_int(st, 2) != NVTX_MARK)) {
			jsonw_key_lit(w, "args");
			jsonw_obj_begin(w);
			if (domain) {
				jsonw_key_lit(w, "domain"); jsonw_str(w, domain);
			}
			if (point && sqlite3_column_int(st, 2) != NVTX_MARK) {
				jsonw_key_lit(w, "unended"); jsonw_bool(w, 1);
			}
			jsonw_obj_end(w);
		}
		jsonw_obj_end(w);
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : -EIO;
}

/* The samples' CPUs by row id, read in one table scan. The (pid, tid, ts,
 * stack_id) index that orders the samples has no cpu column: looking each
 * row up in the table, thread after thread, read the whole table again for
 * every thread (3M page reads at 10M samples: a third of the export). One
 * byte per sample row (10 MB at 10M); CPUs from 255 up, and all of them when
 * the array cannot be had or the ids are far apart (the largest beyond
 * twice the rows: a crafted database's id of 2^31 would cost 2 GB), are
 * looked up one row at a time. */
#define CPU_LOOKUP 0xff

struct cpus {
	uint8_t *by_row;            /* NULL: every row looked up */
	int64_t n;                  /* entries of by_row: max row id + 1 */
	sqlite3_stmt *one;          /* cpu of one row id */
};

static int cpus_load(struct xp_chrome *c, struct cpus *k)
{
	sqlite3_stmt *st;
	int rc = SQLITE_DONE;

	int64_t rows = 0;

	if (sqlite3_prepare_v2(c->db, "SELECT cpu FROM xp_samples WHERE id = ?", -1, &k->one, NULL) ||
	    sqlite3_prepare_v2(c->db, "SELECT count(*) FROM xp_samples", -1, &st, NULL))
		return -EIO;
	rows = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
	sqlite3_finalize(st);
	if (sqlite3_prepare_v2(c->db, "SELECT max(id) FROM xp_samples", -1, &st, NULL))
		return -EIO;
	k->n = sqlite3_step(st) == SQLITE_ROW ? xp_sat_add(sqlite3_column_int64(st, 0), 1) : 0;
	sqlite3_finalize(st);
	if (k->n <= 0 || k->n > INT32_MAX || k->n > 2 * rows + 1024 ||
	    !(k->by_row = malloc((size_t)k->n)))
		return 0;
	memset(k->by_row, CPU_LOOKUP, (size_t)k->n);
	/* the window only (no index leads with ts: a table scan either way);
	 * "+x.pid": the pid index would read the table out of id order */
	if (xp_chrome_prepare(c, &st, "SELECT x.id, x.cpu FROM xp_samples x", NULL, "x.ts", "+x.pid",
			      "x.id"))
		return -EIO;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t id = sqlite3_column_int64(st, 0), cpu = sqlite3_column_int64(st, 1);

		if (id >= 0 && id < k->n && cpu >= 0 && cpu < CPU_LOOKUP)
			k->by_row[id] = (uint8_t)cpu;
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : -EIO;
}

/* The cpu of sample row id; -1 when the lookup failed. */
static int64_t cpus_get(struct cpus *k, int64_t id)
{
	int64_t cpu = -1;

	if (k->by_row && id >= 0 && id < k->n && k->by_row[id] != CPU_LOOKUP)
		return k->by_row[id];
	sqlite3_bind_int64(k->one, 1, id);
	if (sqlite3_step(k->one) == SQLITE_ROW)
		cpu = sqlite3_column_int64(k->one, 0);
	sqlite3_reset(k->one);
	return cpu;
}

static void cpus_free(struct cpus *k)
{
	free(k->by_row);
	sqlite3_finalize(k->one);
}

/* Each thread's samples in time order, as the (pid, tid, ts) index holds
 * them: the query reads that index alone (the cpu comes from cpus). */
static int sample_rows(struct xp_chrome *c, struct cpus *k)
{
	struct jsonw *w = &c->w;
	sqlite3_stmt *st;
	int rc;

	if (xp_chrome_prepare(c, &st, "SELECT x.ts, x.pid, x.tid, x.stack_id, x.id FROM xp_samples x",
			      NULL, "x.ts", "x.pid", "x.pid, x.tid, x.ts"))
		return -EIO;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t stack = sqlite3_column_int64(st, 3), cpu = cpus_get(k, sqlite3_column_int64(st, 4));
		const char *leaf = xp_chrome_names_get(c->leaves, stack);

		if (!leaf || cpu < 0)
			break;
		xp_chrome_event_begin(c, "i", "cpu_sample", leaf,
				      sqlite3_column_int64(st, 1), sqlite3_column_int64(st, 2),
				      sqlite3_column_int64(st, 0));
		jsonw_key_lit(w, "s"); jsonw_str_lit(w, "t");
		if (stack > 0) {
			xp_chrome_sf(c, stack);
		}
		jsonw_key_lit(w, "args");
		jsonw_obj_begin(w);
		jsonw_key_lit(w, "cpu"); jsonw_int(w, cpu);
		jsonw_obj_end(w);
		jsonw_obj_end(w);
	}
	sqlite3_finalize(st);
	if (rc == SQLITE_ROW)           /* stopped by a failed name or cpu lookup */
		return c->leaves->err ? c->leaves->err : -EIO;
	return rc == SQLITE_DONE ? 0 : -EIO;
}

static int samples(struct xp_chrome *c)
{
	struct cpus k = { 0 };
	int err;

	if (!(err = cpus_load(c, &k)))
		err = sample_rows(c, &k);
	cpus_free(&k);
	return err;
}

int xp_chrome_cpu_events(struct xp_chrome *c)
{
	int err;

	/* the op slices first: a viewer nests a slice in one of the same span
	 * written before it, and an op of one launch spans its call exactly */
	if ((err = xp_chrome_op_slices(c)) || (err = api_slices(c)) || (err = nvtx_ranges(c)) ||
	    (err = samples(c)))
		return err;
	return 0;
}

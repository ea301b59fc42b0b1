/* weights.c - one SQL query per flame-graph weight; see folded.h.
 * Each yields, grouped: pid, tid, thread name, stack id (-1: none), leaf
 * frame text (NULL: none), attribution ('exact', 'inferred', 'none' or
 * NULL), weight, instances; ?1 and ?2 filter pid and tid (< 0: all). */
#include "src/gtid.h"
#include "export/render/weights.h"

#include <errno.h>
#include <string.h>

#include "db/launch.h"

#define THREAD_NAME(gtid) \
	" LEFT JOIN ThreadNames tn ON tn.globalTid = " gtid \
	" LEFT JOIN StringIds tname ON tname.id = tn.nameId"

static const char cpu_sql[] =
	"SELECT x.pid, x.tid, coalesce(tname.value, ''), x.stack_id, NULL, NULL, count(*), count(*)"
	" FROM xp_samples x" THREAD_NAME(XP_SQL_GTID("x.pid", "x.tid"))
	" WHERE (?1 < 0 OR x.pid = ?1) AND (?2 < 0 OR x.tid = ?2)"
	" GROUP BY x.pid, x.tid, x.stack_id";

static const char offcpu_sql[] =
	"SELECT x.pid, x.tid, coalesce(tname.value, ''), x.stack_id, NULL, NULL, sum(x.duration),"
	" count(*) FROM xp_switches x" THREAD_NAME(XP_SQL_GTID("x.pid", "x.tid"))
	" WHERE (?1 < 0 OR x.pid = ?1) AND (?2 < 0 OR x.tid = ?2)"
	" GROUP BY x.pid, x.tid, x.stack_id";

/* The thread is the one that made the launching call; a GPU row with no
 * API call keeps its process and thread 0. */
static const char gpu_sql[] =
	"SELECT ifnull(" XP_SQL_GTID_PID("r.globalTid") ", " XP_SQL_GTID_PID("g.gp") ") AS pid,"
	" ifnull(" XP_SQL_GTID_TID("r.globalTid") ", 0) AS tid,"
	" coalesce(tname.value, ''), ifnull(a.stack_id, -1),"
	" CASE g.t WHEN 'KERNEL' THEN ifnull(ks.value, '[kernel]') WHEN 'MEMCPY' THEN "
	XP_MEMCPY_LABEL("m.copyKind") " ELSE '[memset]' END,"
	" ifnull(a.how, 'none'), sum(g.end - g.start), count(*)"
	" FROM " XP_GPU_ROWS
	" LEFT JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON r.rowid = a.api_rowid"
	THREAD_NAME("r.globalTid")
	" LEFT JOIN CUPTI_ACTIVITY_KIND_KERNEL k ON g.t = 'KERNEL' AND k.rowid = g.r"
	" LEFT JOIN StringIds ks ON ks.id = k.demangledName"
	" LEFT JOIN CUPTI_ACTIVITY_KIND_MEMCPY m ON g.t = 'MEMCPY' AND m.rowid = g.r"
	" WHERE (?1 < 0 OR ifnull(" XP_SQL_GTID_PID("r.globalTid") ", " XP_SQL_GTID_PID("g.gp") ") = ?1)"
	" AND (?2 < 0 OR ifnull(" XP_SQL_GTID_TID("r.globalTid") ", 0) = ?2)"
	" GROUP BY 1, 2, 4, 5, 6";

/* The call's stack: its own launch record (exact), else a CPU sample taken
 * inside the call (inferred: a sync call launches nothing, so has no
 * launch record). */
static const char api_sql[] =
	"SELECT " XP_SQL_GTID_PID("r.globalTid") ", " XP_SQL_GTID_TID("r.globalTid") ","
	" coalesce(tname.value, ''),"
	" coalesce(l.stack_id, x.stack_id, -1), s.value,"
	" CASE WHEN l.stack_id IS NOT NULL THEN 'exact' WHEN x.stack_id IS NOT NULL THEN 'inferred'"
	" ELSE 'none' END, sum(r.end - r.start), count(*)"
	" FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s ON s.id = r.nameId"
	" LEFT JOIN (SELECT pid, tid, correlation_id, min(stack_id) AS stack_id FROM xp_launches"
	"  GROUP BY 1, 2, 3) l ON l.pid = " XP_SQL_GTID_PID("r.globalTid")
	" AND l.tid = " XP_SQL_GTID_TID("r.globalTid")
	"  AND l.correlation_id = r.correlationId"
	" LEFT JOIN (SELECT api_rowid, min(sample_id) AS sid FROM xp_sample_api GROUP BY 1) sa"
	"  ON sa.api_rowid = r.rowid LEFT JOIN xp_samples x ON x.id = sa.sid"
	THREAD_NAME("r.globalTid")
	" WHERE (?1 < 0 OR " XP_SQL_GTID_PID("r.globalTid") " = ?1)"
	" AND (?2 < 0 OR " XP_SQL_GTID_TID("r.globalTid") " = ?2)"
	" GROUP BY 1, 2, 4, 5, 6";

const char *const xp_weight_names[XP_WEIGHT_COUNT] = { "cpu", "gpu", "offcpu", "api" };

int xp_weight_parse(const char *name, enum xp_weight *w)
{
	for (size_t i = 0; i < XP_WEIGHT_COUNT; i++)
		if (!strcmp(name, xp_weight_names[i])) {
			*w = (enum xp_weight)i;
			return 0;
		}
	return -EINVAL;
}

const char *xp_weight_name(enum xp_weight w)
{
	return (unsigned)w < XP_WEIGHT_COUNT ? xp_weight_names[w] : "?";
}

const char *xp_weight_unit(enum xp_weight w)
{
	return w == XP_WEIGHT_CPU ? "samples" : "ns";
}

const char *xp_weight_title(enum xp_weight w)
{
	switch (w) {
	case XP_WEIGHT_CPU: return "CPU samples";
	case XP_WEIGHT_GPU: return "GPU time by launching CPU stack";
	case XP_WEIGHT_OFFCPU: return "Off-CPU time";
	case XP_WEIGHT_API: return "Time in CUDA API calls";
	}
	return "?";
}

const char *xp_weight_sql(enum xp_weight w)
{
	switch (w) {
	case XP_WEIGHT_CPU: return cpu_sql;
	case XP_WEIGHT_GPU: return gpu_sql;
	case XP_WEIGHT_OFFCPU: return offcpu_sql;
	case XP_WEIGHT_API: return api_sql;
	}
	return NULL;
}

int xp_weight_has_rows(sqlite3 *db, enum xp_weight w)
{
	static const char *const sql[] = {
		[XP_WEIGHT_CPU] = "SELECT EXISTS (SELECT 1 FROM xp_samples)",
		[XP_WEIGHT_GPU] = "SELECT EXISTS (SELECT 1 FROM CUPTI_ACTIVITY_KIND_KERNEL) OR"
				  " EXISTS (SELECT 1 FROM CUPTI_ACTIVITY_KIND_MEMCPY) OR"
				  " EXISTS (SELECT 1 FROM CUPTI_ACTIVITY_KIND_MEMSET)",
		[XP_WEIGHT_OFFCPU] = "SELECT EXISTS (SELECT 1 FROM xp_switches)",
		[XP_WEIGHT_API] = "SELECT EXISTS (SELECT 1 FROM CUPTI_ACTIVITY_KIND_RUNTIME)",
	};
	sqlite3_stmt *st;
	int rc;

	if ((unsigned)w >= sizeof(sql) / sizeof(sql[0]) ||
	    sqlite3_prepare_v2(db, sql[w], -1, &st, NULL) != SQLITE_OK)
		return -EIO;
	rc = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int(st, 0) != 0 : -EIO;
	sqlite3_finalize(st);
	return rc;
}

const char *xp_weight_empty_hint(enum xp_weight w)
{
	switch (w) {
	case XP_WEIGHT_CPU: return "no CPU samples in this run";
	case XP_WEIGHT_GPU: return "no GPU activity in this run (see the warning of xpcorr report)";
	case XP_WEIGHT_OFFCPU: return "no off-CPU records in this run: record with"
				      " 'xpcap record --off-cpu'";
	case XP_WEIGHT_API: return "no CUDA API calls in this run";
	}
	return "?";
}

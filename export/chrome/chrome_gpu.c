/* chrome_gpu.c - the GPU side of the Chrome trace: a process per device
 * ("GPU 0", pid = device id, as Kineto), a thread per stream (tid = stream
 * id), kernels, copies and sets as slices in Kineto's categories and args,
 * and a flow arrow from each launching API call to its GPU work (ph "s" at
 * the call, ph "f" bp "e" at the GPU slice, cat and name "ac2g").
 *
 * Ids stay unambiguous when more than one process uses the GPU: streams of
 * the second and later processes on a device get tids from 2^31 up, and a
 * flow's id is the correlation id only for the first GPU process's
 * calls that launched one GPU row; the other flows (other processes, graph
 * launches with many nodes) take ids from 2^32 up. args.correlation always
 * holds the CUPTI correlation id. A backward kernel that ingest put under
 * the forward launch that made its autograd node (ingest/backward.h) gets
 * a second arrow from that launch's API call, cat and name "fwdbwd" (as
 * Kineto links a forward op to its backward op). */
#include "db/db_schema.h"
#include "src/gtid.h"
#include "src/array.h"
#include "export/chrome/chrome_priv.h"
#include "src/satmath.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct xp_chrome_track {
	int64_t device, gpid, context, stream;  /* the key */
	int64_t pid, tid;                      /* its process and thread ids in the trace */
};

/* Columns every GPU query starts with, then the kind's own from COL_KIND. */
enum { COL_START, COL_END, COL_DEVICE, COL_CONTEXT, COL_STREAM, COL_CORR, COL_GPID,
       COL_GRAPH, COL_GRAPH_NODE, COL_STACK, COL_HOW, COL_API_START, COL_API_GTID, COL_KIND };

#define GPU_COMMON "SELECT g.start, g.end, g.deviceId, g.contextId, g.streamId, g.correlationId," \
	" g.globalPid, g.graphId, g.graphNodeId, a.stack_id, a.how, r.start, r.globalTid"
#define GPU_JOIN(table) " FROM CUPTI_ACTIVITY_KIND_" table " g" \
	" LEFT JOIN xp_attribution a ON a.gpu_table = '" table "' AND a.gpu_rowid = g.rowid" \
	" LEFT JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON r.rowid = a.api_rowid"
/* rows without timestamps (device buffer full) cannot be placed */
#define GPU_WHERE "(g.xp_flags & 1) = 0"

void xp_chrome_gpu_fini(struct xp_chrome *c)
{
	free(c->tracks);
	c->tracks = NULL;
	c->ntracks = c->cap_tracks = 0;
}

/* The trace pid of a device: its id, as Kineto's; in a merged job every
 * host has a GPU 0, so each run's devices get pids of their own, from 2^31
 * up (above any pid a run stores, below what viewers read as uint32). */
static int64_t trace_pid(const struct xp_chrome *c, int64_t device, int64_t gpid)
{
	if (!c->job)
		return device;
	return (1ll << 31) + ((int64_t)xp_pid_run(xp_gtid_pid(gpid)) << 8) + (device & 0xff);
}

int64_t xp_chrome_device_pid(const struct xp_chrome *c, int64_t device, int64_t gpid)
{
	return trace_pid(c, device, gpid);
}

static void meta_text(struct xp_chrome *c, const char *what, const char *key, int64_t pid,
		      const char *text)
{
	struct jsonw *w = &c->w;

	xp_chrome_event_begin(c, "M", NULL, what, pid, 0, 0);
	jsonw_key_lit(w, "args"); jsonw_obj_begin(w);
	jsonw_key(w, key); jsonw_str(w, text);
	jsonw_obj_end(w); jsonw_obj_end(w);
}

static int device_names(struct xp_chrome *c, int64_t pid, int64_t device, int64_t gpid)
{
	sqlite3_stmt *st;
	struct jsonw *w = &c->w;
	char name[160];
	int rc;

	snprintf(name, sizeof(name), "GPU %lld", (long long)device);
	if (c->job && sqlite3_prepare_v2(c->db, "SELECT host FROM xp_job_runs WHERE run = ?", -1, &st,
					 NULL) == SQLITE_OK) {
		sqlite3_bind_int64(st, 1, xp_pid_run(xp_gtid_pid(gpid)));
		if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
			snprintf(name, sizeof(name), "GPU %lld (%s)", (long long)device,
				 (const char *)sqlite3_column_text(st, 0));
		sqlite3_finalize(st);
	}
	meta_text(c, "process_name", "name", pid, name);
	if (sqlite3_prepare_v2(c->db, "SELECT name FROM TARGET_INFO_GPU WHERE id = ? AND name IS NOT NULL"
			       " LIMIT 1", -1, &st, NULL))
		return -EIO;
	sqlite3_bind_int64(st, 1, device);
	if ((rc = sqlite3_step(st)) == SQLITE_ROW)
		meta_text(c, "process_labels", "labels", pid, (const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return -EIO;
	/* GPUs after the CPU processes, whose sort index is their pid */
	xp_chrome_event_begin(c, "M", NULL, "process_sort_index", pid, 0, 0);
	jsonw_key_lit(w, "args"); jsonw_obj_begin(w);
	jsonw_key_lit(w, "sort_index"); jsonw_int(w, (1ll << 30) + pid - (c->job ? (1ll << 31) : 0));
	jsonw_obj_end(w); jsonw_obj_end(w);
	return 0;
}

/* Trace viewers read pid and tid as 32-bit numbers (Perfetto's JSON importer
 * as uint32): the tracks of a device's second and later processes, which may
 * use the same stream ids as its first, are numbered from here. */
#define OTHER_TRACKS_TID (1ll << 31)

/* The trace tid of a GPU row's stream; names the device and stream the first
 * time they appear. -ENOMEM, -EIO or 0. */
int xp_chrome_gpu_track(struct xp_chrome *c, sqlite3_stmt *st, int64_t *pid, int64_t *tid)
{
	int64_t device = sqlite3_column_int64(st, COL_DEVICE), gpid = sqlite3_column_int64(st, COL_GPID);
	int64_t context = sqlite3_column_int64(st, COL_CONTEXT), stream = sqlite3_column_int64(st, COL_STREAM);
	/* this device's first track's process (-1: none yet); a value, not a
	 * pointer into tracks, which the reserve below may move */
	int64_t first_gpid = -1;
	int64_t where = trace_pid(c, device, gpid);
	struct jsonw *w = &c->w;
	char name[320], label[256];
	size_t i;
	int err, job;

	for (i = 0; i < c->ntracks; i++) {
		struct xp_chrome_track *t = &c->tracks[i];

		if (t->device == device && t->gpid == gpid && t->context == context && t->stream == stream) {
			*pid = t->pid;
			*tid = t->tid;
			return 0;
		}
		if (t->pid == where && first_gpid < 0)
			first_gpid = t->gpid;
	}
	if (xp_array__reserve((void **)&c->tracks, &c->cap_tracks, c->ntracks + 1, sizeof(*c->tracks),
			      16))
		return -ENOMEM;
	/* a merged job's tracks all name their process: every host has a GPU 0 */
	job = xp_chrome_process_label(c, xp_gtid_pid(gpid), label, sizeof(label));
	if ((first_gpid < 0 || first_gpid == gpid) && stream >= 0 && stream < OTHER_TRACKS_TID)
		*tid = stream;          /* Kineto's: tid = stream id */
	else
		*tid = OTHER_TRACKS_TID + (int64_t)c->ntracks;
	if (job)
		snprintf(name, sizeof(name), "stream %lld (%s)", (long long)stream, label);
	else if (*tid == stream)
		snprintf(name, sizeof(name), "stream %lld", (long long)stream);
	else
		snprintf(name, sizeof(name), "stream %lld (pid %lld)", (long long)stream,
			 (long long)xp_gtid_pid(gpid));
	c->tracks[c->ntracks++] = (struct xp_chrome_track){ device, gpid, context, stream, where, *tid };
	*pid = where;
	if (first_gpid < 0 && (err = device_names(c, where, device, gpid)))
		return err;
	xp_chrome_event_begin(c, "M", NULL, "thread_name", where, *tid, 0);
	jsonw_key_lit(w, "args"); jsonw_obj_begin(w);
	jsonw_key_lit(w, "name"); jsonw_str(w, name);
	jsonw_obj_end(w); jsonw_obj_end(w);
	xp_chrome_event_begin(c, "M", NULL, "thread_sort_index", where, *tid, 0);
	jsonw_key_lit(w, "args"); jsonw_obj_begin(w);
	/* after the first process's streams; below 2^31, as viewers read it */
	jsonw_key_lit(w, "sort_index");
	jsonw_int(w, *tid < OTHER_TRACKS_TID ? *tid : (1ll << 30) + *tid - OTHER_TRACKS_TID);
	jsonw_obj_end(w); jsonw_obj_end(w);
	return 0;
}

/* The slice's opening, up to and with the args it shares with every kind;
 * leaves args open for the kind's own. */
static void slice_begin(struct xp_chrome *c, sqlite3_stmt *st, const char *cat, const char *name,
			int64_t pid, int64_t tid)
{
	struct jsonw *w = &c->w;
	int64_t start = sqlite3_column_int64(st, COL_START), end = sqlite3_column_int64(st, COL_END);
	int64_t stack = sqlite3_column_int64(st, COL_STACK);

	xp_chrome_event_begin(c, "X", cat, name, pid, tid, start);
	jsonw_key_lit(w, "dur"); jsonw_ns_as_us(w, end > start ? xp_sat_sub(end, start) : 0);
	if (stack > 0) {            /* the launching stack, as the correlation found it */
		xp_chrome_sf(c, stack);
	}
	jsonw_key_lit(w, "args");
	jsonw_obj_begin(w);
	jsonw_key_lit(w, "device"); jsonw_int(w, sqlite3_column_int64(st, COL_DEVICE));
	jsonw_key_lit(w, "context"); jsonw_int(w, sqlite3_column_int64(st, COL_CONTEXT));
	jsonw_key_lit(w, "stream"); jsonw_int(w, sqlite3_column_int64(st, COL_STREAM));
	jsonw_key_lit(w, "correlation"); jsonw_int(w, sqlite3_column_int64(st, COL_CORR));
	if (stack > 0 && xp_chrome_site_arg(c, stack) && !w->error)
		w->error = -ENOMEM;         /* ends the export with that error */
}

/* Closes args with what all kinds share at the end, and the event. */
static void slice_end(struct xp_chrome *c, sqlite3_stmt *st)
{
	struct jsonw *w = &c->w;

	if (sqlite3_column_type(st, COL_GRAPH) != SQLITE_NULL) {
		jsonw_key_lit(w, "graph id"); jsonw_int(w, sqlite3_column_int64(st, COL_GRAPH));
		jsonw_key_lit(w, "graph node id"); jsonw_int(w, sqlite3_column_int64(st, COL_GRAPH_NODE));
	}
	if (sqlite3_column_type(st, COL_HOW) != SQLITE_NULL) {
		jsonw_key_lit(w, "launch stack"); jsonw_str(w, (const char *)sqlite3_column_text(st, COL_HOW));
	}
	jsonw_obj_end(w);
	jsonw_obj_end(w);
}

void xp_chrome_flow_event(struct xp_chrome *c, const char *cat, const char *ph, uint64_t id,
			  int64_t pid, int64_t tid, int64_t ts)
{
	struct jsonw *w = &c->w;

	xp_chrome_event_begin(c, ph, cat, cat, pid, tid, ts);
	jsonw_key_lit(w, "id"); jsonw_uint(w, id);
	if (ph[0] == 'f') {         /* bind to the GPU slice that starts here */
		jsonw_key_lit(w, "bp"); jsonw_str_lit(w, "e");
	}
	jsonw_obj_end(w);
}

static void flow_event(struct xp_chrome *c, const char *ph, uint64_t id, int64_t pid, int64_t tid,
		       int64_t ts)
{
	xp_chrome_flow_event(c, "ac2g", ph, id, pid, tid, ts);
}

/* From the API call to the GPU slice, when the call is known and in the window. */
static void flow(struct xp_chrome *c, sqlite3_stmt *st, int64_t pid, int64_t tid)
{
	int64_t gpid = sqlite3_column_int64(st, COL_GPID), api_start, gtid;
	uint64_t id;

	if (sqlite3_column_type(st, COL_API_START) == SQLITE_NULL)
		return;
	api_start = sqlite3_column_int64(st, COL_API_START);
	gtid = sqlite3_column_int64(st, COL_API_GTID);
	if (!xp_chrome_in_window(c, api_start))
		return;
	if (gpid == c->first_gpu_pid && sqlite3_column_type(st, COL_GRAPH) == SQLITE_NULL)
		id = (uint64_t)sqlite3_column_int64(st, COL_CORR);
	else
		id = c->next_flow_id++;
	flow_event(c, "s", id, xp_gtid_pid(gtid), xp_gtid_tid(gtid), api_start);
	flow_event(c, "f", id, pid, tid,
		   sqlite3_column_int64(st, COL_START));
	c->st.flows++;
}

/* Rows of one kind as recorded (viewers sort): a slice and a flow each. */
static int gpu_rows(struct xp_chrome *c, const char *sql,
		    int (*slice)(struct xp_chrome *c, sqlite3_stmt *st, int64_t pid, int64_t tid))
{
	sqlite3_stmt *st;
	int64_t pid, tid;
	int rc, err = 0;

	if (xp_chrome_prepare(c, &st, sql, GPU_WHERE, "g.start", XP_SQL_GTID_PID("g.globalPid"), "g.rowid"))
		return -EIO;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if ((err = xp_chrome_gpu_track(c, st, &pid, &tid)))
			break;
		if (c->first_gpu_pid < 0)
			c->first_gpu_pid = sqlite3_column_int64(st, COL_GPID);
		if ((err = slice(c, st, pid, tid)))
			break;
		flow(c, st, pid, tid);
	}
	sqlite3_finalize(st);
	if (err)
		return err;
	return rc == SQLITE_DONE ? 0 : -EIO;
}

static void dims(struct jsonw *w, const char *key, sqlite3_stmt *st, int col)
{
	jsonw_key(w, key);
	jsonw_arr_begin(w);
	for (int i = 0; i < 3; i++)
		jsonw_int(w, sqlite3_column_int64(st, col + i));
	jsonw_arr_end(w);
}

static int kernel(struct xp_chrome *c, sqlite3_stmt *st, int64_t pid, int64_t tid)
{
	struct jsonw *w = &c->w;
	const char *name = xp_chrome_names_get(c->strings, sqlite3_column_int64(st, COL_KIND));

	if (!name)
		return c->strings->err;
	slice_begin(c, st, "kernel", name, pid, tid);
	jsonw_key_lit(w, "registers per thread"); jsonw_int(w, sqlite3_column_int64(st, COL_KIND + 7));
	jsonw_key_lit(w, "shared memory");
	jsonw_int(w, xp_sat_add(sqlite3_column_int64(st, COL_KIND + 8), sqlite3_column_int64(st, COL_KIND + 9)));
	dims(w, "grid", st, COL_KIND + 1);
	dims(w, "block", st, COL_KIND + 4);
	slice_end(c, st);
	return 0;
}

/* CUPTI's copy and memory kinds (ENUM_CUDA_MEMCPY_OPER, ENUM_CUDA_MEM_KIND),
 * in the words Kineto names copies with. */
static const char *copy_kind(int64_t k)
{
	static const char *const names[] = { "Unknown", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA",
					     "AtoD", "DtoA", "DtoD", "HtoH", "PtoP" };

	return k >= 0 && k < (int64_t)(sizeof(names) / sizeof(names[0])) ? names[k] : "Unknown";
}

static const char *mem_kind(int64_t k)
{
	static const char *const names[] = { "Unknown", "Pageable", "Pinned", "Device", "Array",
					     "Managed", "Device Static", "Managed Static" };

	return k >= 0 && k < (int64_t)(sizeof(names) / sizeof(names[0])) ? names[k] : "Unknown";
}

static void bandwidth(struct jsonw *w, sqlite3_stmt *st, int64_t bytes)
{
	int64_t dur = xp_sat_sub(sqlite3_column_int64(st, COL_END), sqlite3_column_int64(st, COL_START));

	jsonw_key_lit(w, "bytes"); jsonw_int(w, bytes);
	jsonw_key_lit(w, "memory bandwidth (GB/s)");
	jsonw_fixed(w, dur > 0 ? (double)bytes / (double)dur : 0.0, 3);   /* bytes/ns = GB/s */
}

static int memcpy_row(struct xp_chrome *c, sqlite3_stmt *st, int64_t pid, int64_t tid)
{
	int peer = sqlite3_column_type(st, COL_KIND + 4) != SQLITE_NULL;
	char name[80];

	snprintf(name, sizeof(name), "Memcpy %s (%s -> %s)",
		 copy_kind(sqlite3_column_int64(st, COL_KIND + 1)),
		 mem_kind(sqlite3_column_int64(st, COL_KIND + 2)),
		 mem_kind(sqlite3_column_int64(st, COL_KIND + 3)));
	slice_begin(c, st, "gpu_memcpy", name, pid, tid);
	bandwidth(&c->w, st, sqlite3_column_int64(st, COL_KIND));
	if (peer) {                 /* a copy between two GPUs: both named */
		jsonw_key_lit(&c->w, "src device");
		jsonw_int(&c->w, sqlite3_column_int64(st, COL_KIND + 4));
		jsonw_key_lit(&c->w, "dst device");
		jsonw_int(&c->w, sqlite3_column_int64(st, COL_KIND + 5));
	}
	slice_end(c, st);
	return 0;
}

static int memset_row(struct xp_chrome *c, sqlite3_stmt *st, int64_t pid, int64_t tid)
{
	char name[48];

	snprintf(name, sizeof(name), "Memset (%s)", mem_kind(sqlite3_column_int64(st, COL_KIND + 1)));
	slice_begin(c, st, "gpu_memset", name, pid, tid);
	bandwidth(&c->w, st, sqlite3_column_int64(st, COL_KIND));
	jsonw_key_lit(&c->w, "value"); jsonw_int(&c->w, sqlite3_column_int64(st, COL_KIND + 2));
	slice_end(c, st);
	return 0;
}

/* A copy's row; ends: its two GPUs' columns (NULL, NULL in a database made
 * before copies between GPUs had them). */
#define MEMCPY_SQL(ends) GPU_COMMON ", g.bytes, g.copyKind, g.srcKind, g.dstKind, " ends \
	GPU_JOIN("MEMCPY")

int xp_chrome_gpu_events(struct xp_chrome *c)
{
	int err;

	if ((err = gpu_rows(c, GPU_COMMON ", g.demangledName, g.gridX, g.gridY, g.gridZ,"
			    " g.blockX, g.blockY, g.blockZ, g.registersPerThread, g.staticSharedMemory,"
			    " g.dynamicSharedMemory" GPU_JOIN("KERNEL"), kernel)) ||
	    (err = gpu_rows(c, xp_db_has_column(c->db, "CUPTI_ACTIVITY_KIND_MEMCPY", "srcDeviceId")
			    ? MEMCPY_SQL("g.srcDeviceId, g.dstDeviceId") : MEMCPY_SQL("NULL, NULL"),
			    memcpy_row)) ||
	    (err = gpu_rows(c, GPU_COMMON ", g.bytes, g.memKind, g.value" GPU_JOIN("MEMSET"),
			    memset_row)))
		return err;
	return 0;
}

/* Each backward kernel with its forward launch: the GPU row (columns as
 * GPU_COMMON's first seven), then the forward launch's API call. */
static const char fwdbwd_sql[] =
	"SELECT g.start, g.end, g.deviceId, g.contextId, g.streamId, g.correlationId, g.globalPid,"
	" r.start, r.globalTid FROM xp_autograd x JOIN xp_launches f ON f.id = x.forward_launch"
	" JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON r.correlationId = f.correlation_id"
	" AND " XP_SQL_PID_LOCAL(XP_SQL_GTID_PID("r.globalTid")) " = f.pid"
	" JOIN CUPTI_ACTIVITY_KIND_KERNEL g ON g.correlationId = x.correlation_id"
	" AND " XP_SQL_PID_LOCAL(XP_SQL_GTID_PID("g.globalPid")) " = x.pid"
	" WHERE x.forward_launch IS NOT NULL AND " GPU_WHERE " AND (?1 < 0 OR"
	" " XP_SQL_GTID_PID("g.globalPid") " = ?1)";

int xp_chrome_fwdbwd(struct xp_chrome *c)
{
	sqlite3_stmt *st;
	int64_t pid, tid;
	int rc, err = 0;

	/* a database of an older xpcorr has no xp_autograd: nothing to link */
	if (sqlite3_prepare_v2(c->db, fwdbwd_sql, -1, &st, NULL) != SQLITE_OK)
		return 0;
	sqlite3_bind_int64(st, 1, c->o->pid);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t api = sqlite3_column_int64(st, 7), gtid = sqlite3_column_int64(st, 8);
		uint64_t id;

		if (!xp_chrome_in_window(c, api) || !xp_chrome_in_window(c, sqlite3_column_int64(st, COL_START)))
			continue;
		if ((err = xp_chrome_gpu_track(c, st, &pid, &tid)))
			break;
		id = c->next_flow_id++;
		xp_chrome_flow_event(c, "fwdbwd", "s", id, xp_gtid_pid(gtid), xp_gtid_tid(gtid), api);
		xp_chrome_flow_event(c, "fwdbwd", "f", id, pid, tid, sqlite3_column_int64(st, COL_START));
		c->st.flows++;
	}
	sqlite3_finalize(st);
	return err ? err : rc == SQLITE_DONE ? 0 : -EIO;
}

/* gpu_load.c - reads one gpu-<pid>.xpr stream into the GPU tables, and
 * XP_REC_LAUNCH records into xp_launches.
 *
 *   struct xp_gpu_load_stats st; char err[256];
 *   if (xp_gpu_load_stream(db, "run/gpu-123.xpr", &ops, ctx, &st, err, sizeof(err)) < 0)
 *       fprintf(stderr, "xpcorr: %s\n", err);
 *
 * Records come in any order but a string always precedes its first use;
 * per-stream string ids are mapped to StringIds through ops->intern_string.
 * Every record's size is checked against its type before a field is read.
 *
 * Pid rule: rows get the pid of the pid space of cpu.xpr (the root pid
 * namespace, where xpcap's BPF runs). The stream header's pid is that pid
 * when the writer knew it; when it is 0 we take the process record's
 * ns_pid when ns_depth is 1 (no container: ns_pid = pid) and otherwise
 * the outermost pid the process saw (ns_pid) as the best guess. API records
 * give the process's own pid: it is replaced by the mapped pid. Thread ids
 * are kept as written (in a container they are the container's tids and
 * exact launches cannot match; the join then says "launch from another
 * thread").
 *
 * Clock rule: with clock_method CALLBACK the times are CLOCK_MONOTONIC
 * already; with CALIBRATED, the rows of CUPTI's clock (activity records,
 * NVTX, API records flagged XP_GPU_API_FROM_ACTIVITY) are converted after
 * the stream from its clock pairs (see calibrate()).
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/array.h"
#include "src/gtid.h"
#include "ingest/gpu_ingest.h"
#include "db/launch.h"
#include "src/jobrank.h"
#include "src/runfile.h"
#include "src/runfmt_gpu.h"
#include "src/runnames.h"
#include "ingest/symbolize.h"
#include "src/u64map.h"

#define GLOBAL_PID(p) xp_gpid(p)
#define GLOBAL_TID(p, t) xp_gtid(p, t)

void xp_short_name(const char *dm, char *out, size_t outlen)
{
	static const char anon[] = "(anonymous namespace)";
	size_t n = strlen(dm), end = n, start = 0;
	int depth = 0;

	/* the name ends at the parameter list: the first '(' outside <> */
	for (size_t i = 0; i < n; i++) {
		if (dm[i] == '<')
			depth++;
		else if (dm[i] == '>' && depth > 0)
			depth--;
		else if (dm[i] == '(' && depth == 0) {
			if (!strncmp(dm + i, anon, sizeof(anon) - 1)) {
				i += sizeof(anon) - 2;
				continue;
			}
			end = i;
			break;
		}
	}
	/* drop template arguments at the end: k<int, 4> -> k */
	if (end > 0 && dm[end - 1] == '>') {
		depth = 0;
		for (size_t i = end; i-- > 0;) {
			if (dm[i] == '>')
				depth++;
			else if (dm[i] == '<' && --depth == 0) {
				end = i;
				break;
			}
		}
	}
	/* the last component: after the last "::" or space outside <> */
	depth = 0;
	for (size_t i = 0; i < end; i++) {
		if (dm[i] == '<')
			depth++;
		else if (dm[i] == '>' && depth > 0)
			depth--;
		else if (depth == 0 && dm[i] == ' ')
			start = i + 1;
		else if (depth == 0 && dm[i] == ':' && i + 1 < end && dm[i + 1] == ':')
			start = i + 2;
	}
	if (start >= end) {
		start = 0;
		end = n;
	}
	if (outlen == 0)
		return;
	n = end - start < outlen - 1 ? end - start : outlen - 1;
	memcpy(out, dm + start, n);
	out[n] = '\0';
}

/* Per-stream string id -> StringIds ids: entries in order of definition,
 * found through src/u64map (the ids come from the stream, which is hostile
 * input: the shared map's hash, not one of our own). */
struct str_entry {
	uint32_t id;                /* stream id */
	int64_t sid;                /* StringIds id of the text */
	int64_t demangled;          /* kernel names: StringIds ids, -1 until computed */
	int64_t shortname;
	char *text;
};

/* The loader's insert statements, one per table. */
enum { S_KERNEL, S_MEMCPY, S_MEMSET, S_SYNC, S_API, S_NVTX, S_NVTX_END, S_DEVICE, S_PROC,
       S_STATUS, S_CLOCK, S_LOST, S_GRAPH, S_RANK, S_COUNT };

struct gpu_loader {
	sqlite3 *db;
	const char *path;           /* base name, for source columns */
	const struct xp_gpu_sink_ops *ops;
	void *ctx;
	struct xp_gpu_load_stats *st;
	struct str_entry *tab;
	size_t cap, used;
	struct xp_u64map tab_index; /* stream id -> 1 + its index in tab */
	int64_t unknown_sid;
	uint32_t pid;               /* mapped pid */
	uint32_t own_pid;
	uint32_t header_pid;
	uint32_t clock_method;      /* of the last process record */
	struct xp_gpu_clock clk[2]; /* first pair at start, last at exit */
	int have_clk[2];
	int64_t first_rowid[6];     /* rows of this stream: rowid > these */
	sqlite3_stmt *ins[S_COUNT];
};


static const char *const ins_sql[S_COUNT] = {
	[S_KERNEL] = "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL(start,end,deviceId,contextId,streamId,"
		"correlationId,globalPid,demangledName,shortName,mangledName,gridX,gridY,gridZ,"
		"blockX,blockY,blockZ,registersPerThread,staticSharedMemory,dynamicSharedMemory,"
		"graphNodeId,graphId,xp_flags) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
	[S_MEMCPY] = "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY(start,end,deviceId,contextId,streamId,"
		"correlationId,globalPid,bytes,copyKind,srcKind,dstKind,graphNodeId,graphId,xp_flags,"
		"srcDeviceId,srcContextId,dstDeviceId,dstContextId)"
		" VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
	[S_MEMSET] = "INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET(start,end,deviceId,contextId,streamId,"
		"correlationId,globalPid,value,bytes,memKind,graphNodeId,graphId,xp_flags)"
		" VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?)",
	[S_SYNC] = "INSERT INTO CUPTI_ACTIVITY_KIND_SYNCHRONIZATION(start,end,globalPid,"
		"correlationId,contextId,streamId,eventId,syncType,returnValue) VALUES(?,?,?,?,?,?,?,?,?)",
	[S_API] = "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME(start,end,eventClass,globalTid,"
		"correlationId,nameId,returnValue,xp_cbid,xp_flags) VALUES(?,?,?,?,?,?,?,?,?)",
	[S_NVTX] = "INSERT INTO NVTX_EVENTS(start,end,eventType,rangeId,globalTid,textId,domainId)"
		" VALUES(?,?,?,?,?,?,?)",
	[S_NVTX_END] = "INSERT INTO temp.xp_nvtx_end(globalPid,rangeId,ts) VALUES(?,?,?)",
	[S_DEVICE] = "INSERT INTO TARGET_INFO_GPU(id,name,uuid,smCount,totalMemory,computeMajor,"
		"computeMinor,clockRate,l2CacheSize,maxWarpsPerSm,isMig,globalPid)"
		" VALUES(?,?,?,?,?,?,?,?,?,?,?,?)",
	[S_PROC] = "INSERT INTO xp_gpu_processes(pid,own_pid,ns_pid,ns_depth,ppid,init_tid,"
		"cupti_version,driver_version,cuda_version,clock_method,flags,exe_name,source)"
		" VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?)",
	[S_STATUS] = "INSERT INTO xp_gpu_status(ts,pid,code,severity,detail,text,source)"
		" VALUES(?,?,?,?,?,?,?)",
	[S_CLOCK] = "INSERT INTO xp_gpu_clock(pid,mono_before,cupti_ts,mono_after,at_exit)"
		" VALUES(?,?,?,?,?)",
	[S_LOST] = "INSERT INTO xp_losses(ts,kind,reason,count,source) VALUES(?,?,?,?,?)",
	[S_RANK] = "INSERT INTO xp_ranks(pid,host,rank,local_rank,world_size,local_world_size,source)"
		   " VALUES(?,?,?,?,?,?,?)",
	[S_GRAPH] = "INSERT INTO xp_graph_events(ts,globalTid,event,graphId,nodeId,origNodeId,"
		    "origGraphId,execId,nodeType,correlationId) VALUES(?,?,?,?,?,?,?,?,?,?)",
};

static int str_add(struct gpu_loader *L, uint32_t id, const char *text, size_t len)
{
	uint64_t *slot;
	int fresh;
	char *t;
	int64_t sid;

	if (xp_array__reserve((void **)&L->tab, &L->cap, L->used + 1, sizeof(*L->tab), 1024) ||
	    xp_u64map_upsert(&L->tab_index, id, 0, &slot, &fresh))
		return -ENOMEM;
	t = strndup(text, len);
	if (!t)
		return -ENOMEM;
	sid = L->ops->intern_string(L->ctx, t);
	if (sid < 0) {
		free(t);
		return (int)(sid < -4095 ? -EIO : sid);
	}
	if (fresh)
		*slot = ++L->used;
	else                        /* redefined: the last wins */
		free(L->tab[*slot - 1].text);
	L->tab[*slot - 1] = (struct str_entry){ .id = id, .sid = sid, .demangled = -1,
						.shortname = -1, .text = t };
	return 0;
}

/* StringIds id for a stream string id; 0 stays NULL-ish "no name" = -1. */
static struct str_entry *str_get(struct gpu_loader *L, uint32_t id)
{
	uint64_t *slot = id ? xp_u64map_find(&L->tab_index, id, 0) : NULL;

	return slot ? &L->tab[*slot - 1] : NULL;
}

static int64_t unknown_sid(struct gpu_loader *L)
{
	if (L->unknown_sid < 0)
		L->unknown_sid = L->ops->intern_string(L->ctx, "[unknown]");
	return L->unknown_sid;
}

static int64_t name_sid(struct gpu_loader *L, uint32_t id)
{
	struct str_entry *e = str_get(L, id);

	if (e)
		return e->sid;
	if (id)
		L->st->unknown_strings++;
	return unknown_sid(L);
}

static int kernel_names(struct gpu_loader *L, uint32_t id, int64_t *mangled, int64_t *dem,
			int64_t *shrt)
{
	struct str_entry *e = str_get(L, id);
	char *d, sn[512];

	if (!e) {
		if (id)
			L->st->unknown_strings++;
		*mangled = *dem = *shrt = unknown_sid(L);
		return *mangled < 0 ? -EIO : 0;
	}
	if (e->demangled < 0) {
		d = xp_demangle_dup(e->text);
		if (!d)
			return -ENOMEM;
		xp_short_name(d, sn, sizeof(sn));
		e->demangled = L->ops->intern_string(L->ctx, d);
		e->shortname = L->ops->intern_string(L->ctx, sn);
		free(d);
		if (e->demangled < 0 || e->shortname < 0)
			return -EIO;
	}
	*mangled = e->sid;
	*dem = e->demangled;
	*shrt = e->shortname;
	return 0;
}

/* binds a list of int64 values to parameters 1.. */
static void bind_all(sqlite3_stmt *s, const int64_t *v, int n)
{
	for (int i = 0; i < n; i++)
		sqlite3_bind_int64(s, i + 1, v[i]);
}

static int step(sqlite3_stmt *s)
{
	int rc = sqlite3_step(s);

	sqlite3_reset(s);
	sqlite3_clear_bindings(s);
	return rc == SQLITE_DONE ? 0 : -EIO;
}

static void bind_graph(sqlite3_stmt *s, int col, uint64_t node, uint32_t graph)
{
	if (graph || node) {
		sqlite3_bind_int64(s, col, (int64_t)node);
		sqlite3_bind_int64(s, col + 1, graph);
	}
}

/* Whether a record's start and end could be one activity of a run: a
 * record 0 .. 2^63-1 (a torn write, a crafted stream) would overflow every
 * sum of durations after it; it is skipped and counted instead. The table
 * of kinds (runnames.h) says which kinds are activities with a span. */
static bool span_fits(const struct xp_rec_kind *k, const void *p, struct xp_gpu_load_stats *st)
{
	uint64_t start, end;

	if (!k || !k->span)
		return true;
	memcpy(&start, (const unsigned char *)p + k->times[0], sizeof(start));
	memcpy(&end, (const unsigned char *)p + k->times[1], sizeof(end));
	if ((end > start ? end - start : start - end) <= XP_GPU_SPAN_MAX_NS)
		return true;
	if (!st->bad_times++) {
		st->bad_start = (int64_t)start;
		st->bad_end = (int64_t)end;
	}
	return false;
}

/* 0 or -EBADMSG with *why: the record holds its fixed part and its tail.
 * Sizes and times of the kinds a GPU stream holds, from the table of kinds;
 * the CPU stream's kinds are not loaded here, and pass. */
static int check_gpu_record(const struct xp_record_header *h, const char **why)
{
	const struct xp_rec_kind *k = xp_rec_kind_of(h->type);
	uint32_t len = xp_record_payload_len(h), fixed;
	const void *p = xp_record_payload(h);

	if (!k || !(k->streams & XP_STREAM_GPU))
		return 0;
	fixed = k->fixed;
	*why = "record shorter than its type";
	if (len < fixed)
		return -EBADMSG;
	*why = "text longer than its record";
	if (h->type == XP_REC_GPU_STRING &&
	    ((const struct xp_gpu_string *)p)->len > len - fixed)
		return -EBADMSG;
	if (h->type == XP_REC_GPU_STATUS &&
	    ((const struct xp_gpu_status *)p)->text_len > len - fixed)
		return -EBADMSG;
	*why = "string id 0";
	if (h->type == XP_REC_GPU_STRING && ((const struct xp_gpu_string *)p)->id == 0)
		return -EBADMSG;
	/* the database keeps signed 64-bit ns; later arithmetic on them must
	 * not overflow (2^63 ns is 292 years of CLOCK_MONOTONIC) */
	*why = "timestamp beyond 2^63 ns";
	if (!xp_rec_kind_times_fit(k, p))
		return -EBADMSG;
	return 0;
}

static int load_kernel(struct gpu_loader *L, const struct xp_gpu_kernel *k)
{
	int64_t mangled = 0, dem = 0, shrt = 0;
	int rc = kernel_names(L, k->name, &mangled, &dem, &shrt);
	int64_t v[] = { (int64_t)k->start, (int64_t)k->end, k->device, k->context, k->stream,
			(int64_t)k->correlation_id, GLOBAL_PID(L->pid), dem, shrt, mangled,
			k->grid[0], k->grid[1], k->grid[2], k->block[0], k->block[1], k->block[2],
			k->registers, k->static_shared, k->dynamic_shared };
	sqlite3_stmt *s = L->ins[S_KERNEL];

	if (rc < 0)
		return rc;
	bind_all(s, v, 19);
	bind_graph(s, 20, k->graph_node_id, k->graph_id);
	sqlite3_bind_int64(s, 22, k->flags);
	L->st->kernels++;
	return step(s);
}

/* peer: the two GPUs of a copy between them, or NULL */
static int load_memcpy(struct gpu_loader *L, const struct xp_gpu_memcpy *m,
		       const struct xp_gpu_memcpy_peer *peer)
{
	int64_t v[] = { (int64_t)m->start, (int64_t)m->end, m->device, m->context, m->stream,
			(int64_t)m->correlation_id, GLOBAL_PID(L->pid), (int64_t)m->bytes,
			m->copy_kind, m->src_kind, m->dst_kind };
	sqlite3_stmt *s = L->ins[S_MEMCPY];

	bind_all(s, v, 11);
	bind_graph(s, 12, m->graph_node_id, m->graph_id);
	sqlite3_bind_int64(s, 14, m->flags);
	if (peer) {
		int64_t ends[] = { peer->src_device, peer->src_context, peer->dst_device,
				   peer->dst_context };

		for (int i = 0; i < 4; i++)
			sqlite3_bind_int64(s, 15 + i, ends[i]);
	}
	L->st->memcpys++;
	return step(s);
}

static int load_memset(struct gpu_loader *L, const struct xp_gpu_memset *m)
{
	int64_t v[] = { (int64_t)m->start, (int64_t)m->end, m->device, m->context, m->stream,
			(int64_t)m->correlation_id, GLOBAL_PID(L->pid), m->value, (int64_t)m->bytes,
			m->memory_kind };
	sqlite3_stmt *s = L->ins[S_MEMSET];

	bind_all(s, v, 10);
	bind_graph(s, 11, m->graph_node_id, m->graph_id);
	sqlite3_bind_int64(s, 13, m->flags);
	L->st->memsets++;
	return step(s);
}

static int load_api(struct gpu_loader *L, const struct xp_gpu_api *a)
{
	uint32_t pid = (a->pid == L->own_pid || a->pid == 0) ? L->pid : a->pid;
	int64_t v[] = { (int64_t)a->start, (int64_t)a->end, (a->cbid >> 31) & 1,
			GLOBAL_TID(pid, a->tid), (int64_t)a->correlation_id, name_sid(L, a->name),
			a->ret, a->cbid, a->flags };

	if (v[5] < 0)
		return -EIO;
	bind_all(L->ins[S_API], v, 9);
	L->st->apis++;
	return step(L->ins[S_API]);
}

/* A graph event: ts is the library's (CLOCK_MONOTONIC), as API records'. */
static int load_graph(struct gpu_loader *L, const struct xp_gpu_graph *g)
{
	uint32_t pid = (g->pid == L->own_pid || g->pid == 0) ? L->pid : g->pid;
	int64_t v[] = { (int64_t)g->ts, GLOBAL_TID(pid, g->tid), g->event, g->graph_id,
			(int64_t)g->node_id, (int64_t)g->orig_node_id, g->orig_graph_id, g->exec_id,
			g->node_type, (int64_t)g->correlation_id };

	bind_all(L->ins[S_GRAPH], v, 10);
	return step(L->ins[S_GRAPH]);
}

/* The process's rank: the mapped pid, the host as text (NUL within its 64
 * bytes, else cut there). */
static int load_rank(struct gpu_loader *L, const struct xp_gpu_rank *k)
{
	sqlite3_stmt *s = L->ins[S_RANK];
	uint32_t pid = (k->pid == L->own_pid || k->pid == 0) ? L->pid : k->pid;
	int64_t v[] = { pid, 0, k->rank, k->local_rank, k->world_size, k->local_world_size };

	bind_all(s, v, 6);
	sqlite3_bind_text(s, 2, k->host, (int)strnlen(k->host, sizeof(k->host)), SQLITE_TRANSIENT);
	sqlite3_bind_text(s, 7, xp_job_rank_source(k->source), -1, SQLITE_STATIC);
	return step(s);
}

static int load_sync(struct gpu_loader *L, const struct xp_gpu_sync *y)
{
	int64_t v[] = { (int64_t)y->start, (int64_t)y->end, GLOBAL_PID(L->pid),
			(int64_t)y->correlation_id, y->context, y->stream, y->event, y->type, y->ret };

	bind_all(L->ins[S_SYNC], v, 9);
	L->st->syncs++;
	return step(L->ins[S_SYNC]);
}

static int load_nvtx(struct gpu_loader *L, const struct xp_gpu_nvtx *n)
{
	uint32_t pid = (n->pid == L->own_pid || n->pid == 0) ? L->pid : n->pid;

	L->st->nvtx++;
	if (n->edge == XP_NVTX_END) {
		int64_t v[] = { GLOBAL_PID(pid), (int64_t)n->id, (int64_t)n->ts };

		bind_all(L->ins[S_NVTX_END], v, 3);
		return step(L->ins[S_NVTX_END]);
	}
	int64_t v[] = { (int64_t)n->ts, 0, n->edge == XP_NVTX_MARK ? 34 : 60, (int64_t)n->id,
			GLOBAL_TID(pid, n->tid), name_sid(L, n->name),
			n->domain ? name_sid(L, n->domain) : 0 };
	sqlite3_stmt *s = L->ins[S_NVTX];

	bind_all(s, v, 7);
	if (n->edge != XP_NVTX_MARK)
		sqlite3_bind_null(s, 2);    /* set from the END edge after the stream */
	else
		sqlite3_bind_int64(s, 2, (int64_t)n->ts);
	return step(s);
}

static int load_device(struct gpu_loader *L, const struct xp_gpu_device *d)
{
	static const char hex[] = "0123456789abcdef";
	char uuid[33];
	struct str_entry *e = str_get(L, d->name);
	sqlite3_stmt *s = L->ins[S_DEVICE];
	int64_t v[] = { d->id, 0, 0, d->sm_count, (int64_t)d->global_memory, d->cc_major,
			d->cc_minor, (int64_t)d->core_clock_khz * 1000, d->l2_size,
			d->max_warps_per_sm, d->mig, GLOBAL_PID(L->pid) };

	for (int i = 0; i < 16; i++) {
		uuid[2 * i] = hex[d->uuid[i] >> 4];
		uuid[2 * i + 1] = hex[d->uuid[i] & 15];
	}
	uuid[32] = '\0';
	bind_all(s, v, 12);
	sqlite3_bind_text(s, 2, e ? e->text : "[unknown]", -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(s, 3, uuid, -1, SQLITE_TRANSIENT);
	return step(s);
}

static int load_process(struct gpu_loader *L, const struct xp_gpu_process *p)
{
	sqlite3_stmt *s = L->ins[S_PROC];

	L->own_pid = p->pid;
	L->clock_method = p->clock_method;
	if (!L->header_pid)
		L->pid = p->ns_pid ? p->ns_pid : p->pid;
	int64_t v[] = { L->pid, p->pid, p->ns_pid, p->ns_depth, p->ppid, p->init_tid,
			p->cupti_version, p->driver_version, p->cuda_version, p->clock_method,
			p->flags, p->exe_name ? name_sid(L, p->exe_name) : 0 };
	bind_all(s, v, 12);
	sqlite3_bind_text(s, 13, L->path, -1, SQLITE_STATIC);
	return step(s);
}

static int load_status(struct gpu_loader *L, const struct xp_gpu_status *t)
{
	sqlite3_stmt *s = L->ins[S_STATUS];
	int64_t v[] = { (int64_t)t->ts, L->pid, t->code, t->severity, t->detail };

	bind_all(s, v, 5);
	sqlite3_bind_text(s, 6, (const char *)(t + 1), t->text_len, SQLITE_TRANSIENT);
	sqlite3_bind_text(s, 7, L->path, -1, SQLITE_STATIC);
	return step(s);
}

static int load_clock(struct gpu_loader *L, const struct xp_gpu_clock *c)
{
	int64_t v[] = { L->pid, (int64_t)c->mono_before, (int64_t)c->cupti_ts,
			(int64_t)c->mono_after, c->when };

	int w = c->when ? 1 : 0;

	if (w == 1 || !L->have_clk[0]) {    /* first start pair, last exit pair */
		L->clk[w] = *c;
		L->have_clk[w] = 1;
	}
	bind_all(L->ins[S_CLOCK], v, 5);
	return step(L->ins[S_CLOCK]);
}

static int load_lost(struct gpu_loader *L, const struct xp_lost *l)
{
	sqlite3_stmt *s = L->ins[S_LOST];
	int64_t v[] = { (int64_t)l->ts, l->kind, l->reason, (int64_t)l->count };

	L->st->lost += l->count;
	bind_all(s, v, 4);
	sqlite3_bind_text(s, 5, L->path, -1, SQLITE_STATIC);
	return step(s);
}

static int load_record(struct gpu_loader *L, const struct xp_record_header *h)
{
	const void *p = xp_record_payload(h);

	switch (h->type) {
	case XP_REC_GPU_STRING: {
		const struct xp_gpu_string *s = p;

		L->st->strings++;
		return str_add(L, s->id, (const char *)(s + 1), s->len);
	}
	case XP_REC_GPU_PROCESS: return load_process(L, p);
	case XP_REC_GPU_DEVICE: return load_device(L, p);
	case XP_REC_GPU_CLOCK: return load_clock(L, p);
	case XP_REC_GPU_STATUS: return load_status(L, p);
	case XP_REC_GPU_API: return load_api(L, p);
	case XP_REC_GPU_KERNEL: return load_kernel(L, p);
	case XP_REC_GPU_MEMCPY: return load_memcpy(L, p, NULL);
	case XP_REC_GPU_MEMCPY_PEER: return load_memcpy(L, p, p);
	case XP_REC_GPU_MEMSET: return load_memset(L, p);
	case XP_REC_GPU_SYNC: return load_sync(L, p);
	case XP_REC_GPU_NVTX: return load_nvtx(L, p);
	case XP_REC_GPU_GRAPH: return load_graph(L, p);
	case XP_REC_GPU_RANK: return load_rank(L, p);
	case XP_REC_LOST: return load_lost(L, p);
	}
	L->st->skipped++;
	return 0;
}

/* NVTX ranges: their END edges may come before their START. */
static int finish_nvtx(struct gpu_loader *L)
{
	static const char sql[] =
		"UPDATE NVTX_EVENTS SET end = (SELECT min(e.ts) FROM temp.xp_nvtx_end e"
		" WHERE e.rangeId = NVTX_EVENTS.rangeId"
		"  AND e.globalPid = " XP_SQL_GPID(XP_SQL_GTID_PID("NVTX_EVENTS.globalTid")) ")"
		" WHERE end IS NULL AND eventType = 60;"
		"DELETE FROM temp.xp_nvtx_end;";

	return sqlite3_exec(L->db, sql, NULL, NULL, NULL) == SQLITE_OK ? 0 : -EIO;
}

/* Tables whose times come from CUPTI's clock, and which of their rows. */
static const char *const cupti_timed[6][2] = {
	{ "CUPTI_ACTIVITY_KIND_KERNEL", "1" }, { "CUPTI_ACTIVITY_KIND_MEMCPY", "1" },
	{ "CUPTI_ACTIVITY_KIND_MEMSET", "1" }, { "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", "1" },
	{ "CUPTI_ACTIVITY_KIND_RUNTIME", "xp_flags & 1" },   /* XP_GPU_API_FROM_ACTIVITY */
	{ "NVTX_EVENTS", "1" },
};

static int first_rowids(struct gpu_loader *L)
{
	for (int i = 0; i < 6; i++) {
		char sql[128];
		sqlite3_stmt *s;

		snprintf(sql, sizeof(sql), "SELECT ifnull(max(rowid), 0) FROM %s", cupti_timed[i][0]);
		if (sqlite3_prepare_v2(L->db, sql, -1, &s, NULL) != SQLITE_OK)
			return -EIO;
		L->first_rowid[i] = sqlite3_step(s) == SQLITE_ROW ? sqlite3_column_int64(s, 0) : 0;
		sqlite3_finalize(s);
	}
	return 0;
}

/* clock_method CALIBRATED: CUPTI's clock to CLOCK_MONOTONIC, after the
 * stream (the exit pair comes last). The offset is the midpoint of each
 * pair's two monotonic reads minus the CUPTI reading; with a start and an
 * exit pair it is interpolated linearly in CUPTI time (drift), with one it
 * is constant. Without any pair the times stay CUPTI's, and a warning row
 * in xp_gpu_status says so. */
static int calibrate(struct gpu_loader *L)
{
	int64_t off[2], c[2], doff = 0, dc = 1;
	int first = L->have_clk[0] ? 0 : 1;

	if (L->clock_method != XP_GPU_CLOCK_CALIBRATED)
		return 0;
	if (!L->have_clk[0] && !L->have_clk[1]) {
		static const char text[] = "CUPTI clock without clock pairs: GPU times left uncalibrated";
		struct {
			struct xp_gpu_status st;
			char text[sizeof(text)];
		} w = { .st = { .severity = XP_GPU_STATUS_WARN, .text_len = sizeof(text) - 1 } };

		memcpy(w.text, text, sizeof(text));
		return load_status(L, &w.st);
	}
	for (int w = 0; w < 2; w++) {
		const struct xp_gpu_clock *k = &L->clk[L->have_clk[w] ? w : first];

		c[w] = (int64_t)k->cupti_ts;
		off[w] = (int64_t)(k->mono_before + (k->mono_after - k->mono_before) / 2) - c[w];
	}
	if (c[1] > c[0]) {
		doff = off[1] - off[0];
		dc = c[1] - c[0];
	}
	for (int i = 0; i < 6; i++) {
		char sql[600];
		sqlite3_stmt *s;
		int rc;

#define XP_CAL(x) "(" x " + :off + (:doff * (" x " - :c0)) / :dc)"
		snprintf(sql, sizeof(sql), "UPDATE %s SET start = " XP_CAL("start") ","
			 " end = CASE WHEN end IS NULL OR end = 0 THEN end ELSE " XP_CAL("end") " END"
			 " WHERE rowid > :first AND start != 0 AND %s", cupti_timed[i][0],
			 cupti_timed[i][1]);
#undef XP_CAL
		if (sqlite3_prepare_v2(L->db, sql, -1, &s, NULL) != SQLITE_OK)
			return -EIO;
		sqlite3_bind_int64(s, sqlite3_bind_parameter_index(s, ":off"), off[0]);
		sqlite3_bind_int64(s, sqlite3_bind_parameter_index(s, ":doff"), doff);
		sqlite3_bind_int64(s, sqlite3_bind_parameter_index(s, ":c0"), c[0]);
		sqlite3_bind_int64(s, sqlite3_bind_parameter_index(s, ":dc"), dc);
		sqlite3_bind_int64(s, sqlite3_bind_parameter_index(s, ":first"), L->first_rowid[i]);
		rc = sqlite3_step(s);
		sqlite3_finalize(s);
		if (rc != SQLITE_DONE)
			return -EIO;
	}
	return 0;
}

/* "PATH: database: why", for a failed statement; returns rc. */
static int db_error(sqlite3 *db, const char *path, int rc, char *err, size_t errlen)
{
	snprintf(err, errlen, "%s: database: %s", path, sqlite3_errmsg(db));
	return rc;
}

/* The stream's reader; the header must say GPU. 0 or -errno with err. */
static int open_stream(struct xp_reader **r, const char *path, char *err, size_t errlen)
{
	const struct xp_file_header *fh;
	int rc = xp_reader_open(r, path);

	if (rc < 0) {
		/* the reader stays open after a bad header, to say what was wrong */
		if (*r)
			snprintf(err, errlen, "%s at offset %llu: %s", path,
				 (unsigned long long)xp_reader_offset(*r), xp_reader_error(*r));
		else
			snprintf(err, errlen, "cannot read %s: %s", path, strerror(-rc));
		return rc;
	}
	fh = xp_reader_header(*r);
	if (fh->stream != XP_STREAM_GPU) {
		snprintf(err, errlen, "%s: not a GPU stream (stream kind %u)", path, fh->stream);
		return -EINVAL;
	}
	return 0;
}

/* The temporary NVTX table, the rows already there, the inserts. 0 or -EIO. */
static int prepare_load(struct gpu_loader *L)
{
	if (sqlite3_exec(L->db, "CREATE TEMP TABLE IF NOT EXISTS xp_nvtx_end(globalPid, rangeId, ts)",
			 NULL, NULL, NULL) != SQLITE_OK || first_rowids(L) < 0)
		return -EIO;
	for (int i = 0; i < S_COUNT; i++)
		if (sqlite3_prepare_v2(L->db, ins_sql[i], -1, &L->ins[i], NULL) != SQLITE_OK)
			return -EIO;
	return 0;
}

/* Every record of r into the tables, then the NVTX ends and the clock.
 * 0 or -errno with err ("PATH at offset N: why"). */
static int load_records(struct gpu_loader *L, struct xp_reader *r, const char *path, char *err,
			size_t errlen)
{
	const struct xp_record_header *h;
	const char *why = NULL;
	int rc;

	while ((rc = xp_reader_next(r, &h)) > 0) {
		L->st->records++;
		if (check_gpu_record(h, &why) < 0) {
			snprintf(err, errlen, "%s at offset %llu: %s (type %u, %u bytes)", path,
				 (unsigned long long)xp_reader_offset(r), why, h->type, h->size);
			return -EBADMSG;
		}
		if (!span_fits(xp_rec_kind_of(h->type), xp_record_payload(h), L->st))
			continue;
		rc = load_record(L, h);
		if (rc == -EIO)
			return db_error(L->db, path, rc, err, errlen);
		if (rc < 0) {
			snprintf(err, errlen, "%s at offset %llu: %s", path,
				 (unsigned long long)xp_reader_offset(r), strerror(-rc));
			return rc;
		}
	}
	if (rc < 0) {
		snprintf(err, errlen, "%s at offset %llu: %s", path,
			 (unsigned long long)xp_reader_offset(r), xp_reader_error(r));
		finish_nvtx(L);
		calibrate(L);
		return rc;
	}
	rc = finish_nvtx(L);
	if (rc == 0)
		rc = calibrate(L);
	return rc < 0 ? db_error(L->db, path, rc, err, errlen) : rc;
}

int xp_gpu_load_stream(sqlite3 *db, const char *path, const struct xp_gpu_sink_ops *ops,
		       void *ctx, struct xp_gpu_load_stats *st, char *err, size_t errlen)
{
	struct gpu_loader L = { .db = db, .path = path, .ops = ops, .ctx = ctx, .st = st,
			    .unknown_sid = -1 };
	struct xp_reader *r = NULL;
	int rc;

	xp_u64map_init(&L.tab_index);
	memset(st, 0, sizeof(*st));
	if (errlen)
		err[0] = '\0';
	rc = open_stream(&r, path, err, errlen);
	if (rc < 0)
		goto out;
	if (ops->budget)
		xp_reader_set_budget(r, ops->budget(ctx));
	L.header_pid = L.pid = xp_reader_header(r)->pid;
	/* rows name their stream by file name: a run directory moves */
	L.path = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	rc = prepare_load(&L);
	if (rc < 0)
		rc = db_error(db, path, rc, err, errlen);
	else
		rc = load_records(&L, r, path, err, errlen);
	if (rc == 0) {
		st->pid = L.pid;
		st->own_pid = L.own_pid;
	}
out:
	for (int i = 0; i < S_COUNT; i++)
		sqlite3_finalize(L.ins[i]);
	for (size_t i = 0; i < L.used; i++)
		free(L.tab[i].text);
	free(L.tab);
	xp_u64map_free(&L.tab_index);
	xp_reader_close(r);
	return rc;
}

/* XP_REC_LAUNCH -> xp_launches */
struct xp_launch_writer {
	sqlite3 *db;
	const struct xp_gpu_sink_ops *ops;
	void *ctx;
	sqlite3_stmt *ins;
};

int xp_launch_writer_open(struct xp_launch_writer **out, sqlite3 *db,
			  const struct xp_gpu_sink_ops *ops, void *ctx)
{
	struct xp_launch_writer *w = calloc(1, sizeof(*w));

	*out = NULL;
	if (!w)
		return -ENOMEM;
	*w = (struct xp_launch_writer){ .db = db, .ops = ops, .ctx = ctx };
	if (sqlite3_prepare_v2(db, XP_LAUNCH_INSERT_SQL, -1, &w->ins, NULL) != SQLITE_OK) {
		free(w);
		return -EIO;
	}
	*out = w;
	return 0;
}

int xp_launch_writer_add(struct xp_launch_writer *w, const struct xp_record_header *h)
{
	const struct xp_launch *l = xp_record_payload(h);
	const uint64_t *ips;
	const char *why;
	int64_t stack = -1;

	if (h->type != XP_REC_LAUNCH || h->size < sizeof(*h) || xp_record_check(h, &why) < 0)
		return -EBADMSG;
	ips = xp_record_stack_ips(h, sizeof(*l), &l->stack);
	if (!ips)
		return -EBADMSG;
	if (l->stack.kernel_depth + l->stack.user_depth > 0) {
		stack = w->ops->intern_stack(w->ctx, l->pid, l->ts, ips, l->stack.kernel_depth,
					     ips + l->stack.kernel_depth, l->stack.user_depth);
		if (stack < 0)
			return stack < -4095 ? -EIO : (int)stack;
	}
	xp_launch_bind(w->ins, l, stack);
	return step(w->ins);
}

void xp_launch_writer_close(struct xp_launch_writer *w)
{
	if (!w)
		return;
	sqlite3_finalize(w->ins);
	free(w);
}


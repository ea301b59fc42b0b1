/* gpu_rows.c - one GPU record to its row: the insert statement of each
 * table and the writer of each kind, with the pid and name rules of
 * gpu_load.c's header. A writer trusts the record: gpu_load.c checked its
 * size and times against the table of kinds before.
 */
#include <errno.h>
#include <string.h>

#include "ingest/gpu_loader.h"
#include "src/jobrank.h"

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

/* The inserts of every table. 0 or -EIO. */
int xp_gpuload_prepare_rows(struct gpu_loader *L)
{
	for (int i = 0; i < S_COUNT; i++)
		if (sqlite3_prepare_v2(L->db, ins_sql[i], -1, &L->ins[i], NULL) != SQLITE_OK)
			return -EIO;
	return 0;
}

/* binds a list of int64 values to parameters 1.. */
static void bind_all(sqlite3_stmt *s, const int64_t *v, int n)
{
	for (int i = 0; i < n; i++)
		sqlite3_bind_int64(s, i + 1, v[i]);
}

int xp_gpuload_step(sqlite3_stmt *s)
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
static int load_kernel(struct gpu_loader *L, const struct xp_gpu_kernel *k)
{
	int64_t mangled = 0, dem = 0, shrt = 0;
	int rc = xp_gpuload_kernel_names(L, k->name, &mangled, &dem, &shrt);
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
	return xp_gpuload_step(s);
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
	return xp_gpuload_step(s);
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
	return xp_gpuload_step(s);
}

static int load_api(struct gpu_loader *L, const struct xp_gpu_api *a)
{
	uint32_t pid = (a->pid == L->own_pid || a->pid == 0) ? L->pid : a->pid;
	int64_t v[] = { (int64_t)a->start, (int64_t)a->end, (a->cbid >> 31) & 1,
			GLOBAL_TID(pid, a->tid), (int64_t)a->correlation_id, xp_gpuload_name_sid(L, a->name),
			a->ret, a->cbid, a->flags };

	if (v[5] < 0)
		return -EIO;
	bind_all(L->ins[S_API], v, 9);
	L->st->apis++;
	return xp_gpuload_step(L->ins[S_API]);
}

/* A graph event: ts is the library's (CLOCK_MONOTONIC), as API records'. */
static int load_graph(struct gpu_loader *L, const struct xp_gpu_graph *g)
{
	uint32_t pid = (g->pid == L->own_pid || g->pid == 0) ? L->pid : g->pid;
	int64_t v[] = { (int64_t)g->ts, GLOBAL_TID(pid, g->tid), g->event, g->graph_id,
			(int64_t)g->node_id, (int64_t)g->orig_node_id, g->orig_graph_id, g->exec_id,
			g->node_type, (int64_t)g->correlation_id };

	bind_all(L->ins[S_GRAPH], v, 10);
	return xp_gpuload_step(L->ins[S_GRAPH]);
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
	return xp_gpuload_step(s);
}

static int load_sync(struct gpu_loader *L, const struct xp_gpu_sync *y)
{
	int64_t v[] = { (int64_t)y->start, (int64_t)y->end, GLOBAL_PID(L->pid),
			(int64_t)y->correlation_id, y->context, y->stream, y->event, y->type, y->ret };

	bind_all(L->ins[S_SYNC], v, 9);
	L->st->syncs++;
	return xp_gpuload_step(L->ins[S_SYNC]);
}

static int load_nvtx(struct gpu_loader *L, const struct xp_gpu_nvtx *n)
{
	uint32_t pid = (n->pid == L->own_pid || n->pid == 0) ? L->pid : n->pid;

	L->st->nvtx++;
	if (n->edge == XP_NVTX_END) {
		int64_t v[] = { GLOBAL_PID(pid), (int64_t)n->id, (int64_t)n->ts };

		bind_all(L->ins[S_NVTX_END], v, 3);
		return xp_gpuload_step(L->ins[S_NVTX_END]);
	}
	int64_t v[] = { (int64_t)n->ts, 0, n->edge == XP_NVTX_MARK ? 34 : 60, (int64_t)n->id,
			GLOBAL_TID(pid, n->tid), xp_gpuload_name_sid(L, n->name),
			n->domain ? xp_gpuload_name_sid(L, n->domain) : 0 };
	sqlite3_stmt *s = L->ins[S_NVTX];

	bind_all(s, v, 7);
	if (n->edge != XP_NVTX_MARK)
		sqlite3_bind_null(s, 2);    /* set from the END edge after the stream */
	else
		sqlite3_bind_int64(s, 2, (int64_t)n->ts);
	return xp_gpuload_step(s);
}

static int load_device(struct gpu_loader *L, const struct xp_gpu_device *d)
{
	static const char hex[] = "0123456789abcdef";
	char uuid[33];
	struct str_entry *e = xp_gpuload_str_get(L, d->name);
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
	return xp_gpuload_step(s);
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
			p->flags, p->exe_name ? xp_gpuload_name_sid(L, p->exe_name) : 0 };
	bind_all(s, v, 12);
	sqlite3_bind_text(s, 13, L->path, -1, SQLITE_STATIC);
	return xp_gpuload_step(s);
}

int xp_gpuload_status(struct gpu_loader *L, const struct xp_gpu_status *t)
{
	sqlite3_stmt *s = L->ins[S_STATUS];
	int64_t v[] = { (int64_t)t->ts, L->pid, t->code, t->severity, t->detail };

	bind_all(s, v, 5);
	sqlite3_bind_text(s, 6, (const char *)(t + 1), t->text_len, SQLITE_TRANSIENT);
	sqlite3_bind_text(s, 7, L->path, -1, SQLITE_STATIC);
	return xp_gpuload_step(s);
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
	return xp_gpuload_step(L->ins[S_CLOCK]);
}

static int load_lost(struct gpu_loader *L, const struct xp_lost *l)
{
	sqlite3_stmt *s = L->ins[S_LOST];
	int64_t v[] = { (int64_t)l->ts, l->kind, l->reason, (int64_t)l->count };

	L->st->lost += l->count;
	bind_all(s, v, 4);
	sqlite3_bind_text(s, 5, L->path, -1, SQLITE_STATIC);
	return xp_gpuload_step(s);
}

int xp_gpuload_record(struct gpu_loader *L, const struct xp_record_header *h)
{
	const void *p = xp_record_payload(h);

	switch (h->type) {
	case XP_REC_GPU_STRING: {
		const struct xp_gpu_string *s = p;

		L->st->strings++;
		return xp_gpuload_str_add(L, s->id, (const char *)(s + 1), s->len);
	}
	case XP_REC_GPU_PROCESS: return load_process(L, p);
	case XP_REC_GPU_DEVICE: return load_device(L, p);
	case XP_REC_GPU_CLOCK: return load_clock(L, p);
	case XP_REC_GPU_STATUS: return xp_gpuload_status(L, p);
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

/* convert.c - CUPTI activity structs to the project's GPU records.
 * See convert.h; the record layouts are documented in src/runfmt_gpu.h. */
#include "cupti/convert.h"

#include <errno.h>
#include <string.h>

#include "src/marker.h"

_Static_assert(sizeof(struct xp_gpu_kernel) % 8 == 0, "8-aligned record");
_Static_assert(sizeof(struct xp_gpu_memcpy) % 8 == 0, "8-aligned record");
_Static_assert(sizeof(struct xp_gpu_memset) % 8 == 0, "8-aligned record");
_Static_assert(sizeof(struct xp_gpu_sync) % 8 == 0, "8-aligned record");
_Static_assert(sizeof(struct xp_gpu_api) % 8 == 0, "8-aligned record");
_Static_assert(sizeof(struct xp_gpu_nvtx) % 8 == 0, "8-aligned record");
_Static_assert(sizeof(struct xp_gpu_device) % 8 == 0, "8-aligned record");
_Static_assert(sizeof(struct xp_gpu_process) % 8 == 0, "8-aligned record");
_Static_assert(sizeof(struct xp_gpu_status) % 8 == 0, "8-aligned record");
_Static_assert(sizeof(struct xp_gpu_overhead) % 8 == 0, "8-aligned record");
_Static_assert(sizeof(struct xp_gpu_clock) % 8 == 0, "8-aligned record");
_Static_assert(sizeof(struct xp_gpu_string) % 8 == 0, "8-aligned record");

void xp_conv_init(struct xp_conv *c, struct xpc_strintern *strings,
		  xp_emit_fn emit, void *emit_ctx)
{
	memset(c, 0, sizeof(*c));
	c->strings = strings;
	c->emit = emit;
	c->emit_ctx = emit_ctx;
}

static int emit(struct xp_conv *c, uint32_t type, const void *p, size_t len,
		const void *tail, size_t tail_len)
{
	int err = c->emit(c->emit_ctx, type, p, len, tail, tail_len);

	if (err && !c->last_error)
		c->last_error = err;
	return err;
}

int xp_conv_string(struct xp_conv *c, const char *s, uint32_t *id)
{
	struct xp_gpu_string rec;
	int fresh = xpc_strintern__intern(c->strings, s, id);

	if (fresh < 0) {
		if (!c->last_error)
			c->last_error = fresh;
		return fresh;
	}
	if (!fresh)
		return 0;
	rec.id = *id;
	rec.len = (uint32_t)strnlen(s, XP_STR_MAX);
	return emit(c, XP_REC_GPU_STRING, &rec, sizeof(rec), s, rec.len);
}

/* start = end = 0: the device-side record buffer was full; keep the record
 * (its correlation is still useful) but count the missing times. */
static uint32_t check_timestamps(struct xp_conv *c, uint32_t type,
				 uint64_t start, uint64_t end)
{
	if (start || end)
		return 0;
	c->no_timestamp[type]++;
	return XP_GPU_F_NO_TIMESTAMP;
}

void xp_kernel_from_cupti(const CUpti_ActivityKernel10 *k, uint32_t name,
			  struct xp_gpu_kernel *out)
{
	memset(out, 0, sizeof(*out));
	out->start = k->start;
	out->end = k->end;
	out->correlation_id = k->correlationId;
	out->graph_node_id = k->graphNodeId;
	out->graph_id = k->graphId;
	out->device = k->deviceId;
	out->context = k->contextId;
	out->stream = k->streamId;
	out->grid[0] = k->gridX;
	out->grid[1] = k->gridY;
	out->grid[2] = k->gridZ;
	out->block[0] = k->blockX;
	out->block[1] = k->blockY;
	out->block[2] = k->blockZ;
	out->registers = k->registersPerThread;
	out->static_shared = k->staticSharedMemory;
	out->dynamic_shared = k->dynamicSharedMemory;
	out->name = name;
	if (k->isDeviceLaunched)
		out->flags |= XP_GPU_F_DEVICE_LAUNCH;
}

/* The fields a copy record and a peer-to-peer one share (two CUPTI structs
 * with the same names), into a struct xp_gpu_memcpy. */
#define MEMCPY_COMMON(out, m) do {                                              \
		(out)->start = (m)->start;                                      \
		(out)->end = (m)->end;                                          \
		(out)->correlation_id = (m)->correlationId;                     \
		(out)->bytes = (m)->bytes;                                      \
		(out)->graph_node_id = (m)->graphNodeId;                        \
		(out)->graph_id = (m)->graphId;                                 \
		(out)->device = (m)->deviceId;                                  \
		(out)->context = (m)->contextId;                                \
		(out)->stream = (m)->streamId;                                  \
		(out)->copy_kind = (m)->copyKind;                               \
		(out)->src_kind = (m)->srcKind;                                 \
		(out)->dst_kind = (m)->dstKind;                                 \
		if ((m)->flags & CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC)              \
			(out)->flags |= XP_GPU_F_ASYNC;                         \
	} while (0)

void xp_memcpy_from_cupti(const CUpti_ActivityMemcpy6 *m, struct xp_gpu_memcpy *out)
{
	memset(out, 0, sizeof(*out));
	MEMCPY_COMMON(out, m);
	if (m->isDeviceLaunched)
		out->flags |= XP_GPU_F_DEVICE_LAUNCH;
}

void xp_memcpy_peer_from_cupti(const CUpti_ActivityMemcpyPtoP4 *m, struct xp_gpu_memcpy_peer *out)
{
	memset(out, 0, sizeof(*out));
	MEMCPY_COMMON(&out->copy, m);
	out->src_device = m->srcDeviceId;
	out->src_context = m->srcContextId;
	out->dst_device = m->dstDeviceId;
	out->dst_context = m->dstContextId;
}

void xp_memset_from_cupti(const CUpti_ActivityMemset4 *m, struct xp_gpu_memset *out)
{
	memset(out, 0, sizeof(*out));
	out->start = m->start;
	out->end = m->end;
	out->correlation_id = m->correlationId;
	out->bytes = m->bytes;
	out->graph_node_id = m->graphNodeId;
	out->graph_id = m->graphId;
	out->device = m->deviceId;
	out->context = m->contextId;
	out->stream = m->streamId;
	out->value = m->value;
	out->memory_kind = m->memoryKind;
	if (m->flags & CUPTI_ACTIVITY_FLAG_MEMSET_ASYNC)
		out->flags |= XP_GPU_F_ASYNC;
	if (m->isDeviceLaunched)
		out->flags |= XP_GPU_F_DEVICE_LAUNCH;
}

void xp_sync_from_cupti(const CUpti_ActivitySynchronization2 *s, struct xp_gpu_sync *out)
{
	memset(out, 0, sizeof(*out));
	out->start = s->start;
	out->end = s->end;
	out->correlation_id = s->correlationId;
	out->type = (uint32_t)s->type;
	out->context = s->contextId;
	out->stream = s->streamId;
	out->event = s->cudaEventId;
	out->ret = (int32_t)s->returnValue;
}

void xp_api_from_cupti(const CUpti_ActivityAPI *a, struct xp_gpu_api *out)
{
	memset(out, 0, sizeof(*out));
	out->start = a->start;
	out->end = a->end;
	out->correlation_id = a->correlationId;
	out->pid = a->processId;
	out->tid = a->threadId;
	out->cbid = XP_CBID(a->kind == CUPTI_ACTIVITY_KIND_DRIVER, a->cbid);
	out->ret = (int32_t)a->returnValue;
	out->flags = XP_GPU_API_FROM_ACTIVITY;
}

static int convert_kernel(struct xp_conv *c, const CUpti_ActivityKernel10 *k)
{
	struct xp_gpu_kernel r;
	uint32_t name;

	/* Copy the name out now: CUPTI may reuse its memory after the buffer. */
	if (xp_conv_string(c, k->name, &name))
		return c->last_error;
	xp_kernel_from_cupti(k, name, &r);
	r.flags |= check_timestamps(c, XP_REC_GPU_KERNEL, r.start, r.end);
	return emit(c, XP_REC_GPU_KERNEL, &r, sizeof(r), NULL, 0);
}

static int convert_memcpy(struct xp_conv *c, const CUpti_ActivityMemcpy6 *m)
{
	struct xp_gpu_memcpy r;

	xp_memcpy_from_cupti(m, &r);
	r.flags |= check_timestamps(c, XP_REC_GPU_MEMCPY, r.start, r.end);
	return emit(c, XP_REC_GPU_MEMCPY, &r, sizeof(r), NULL, 0);
}

static int convert_memcpy_peer(struct xp_conv *c, const CUpti_ActivityMemcpyPtoP4 *m)
{
	struct xp_gpu_memcpy_peer r;

	xp_memcpy_peer_from_cupti(m, &r);
	r.copy.flags |= check_timestamps(c, XP_REC_GPU_MEMCPY_PEER, r.copy.start, r.copy.end);
	return emit(c, XP_REC_GPU_MEMCPY_PEER, &r, sizeof(r), NULL, 0);
}

static int convert_memset(struct xp_conv *c, const CUpti_ActivityMemset4 *m)
{
	struct xp_gpu_memset r;

	xp_memset_from_cupti(m, &r);
	r.flags |= check_timestamps(c, XP_REC_GPU_MEMSET, r.start, r.end);
	return emit(c, XP_REC_GPU_MEMSET, &r, sizeof(r), NULL, 0);
}

static int convert_sync(struct xp_conv *c, const CUpti_ActivitySynchronization2 *s)
{
	struct xp_gpu_sync r;

	xp_sync_from_cupti(s, &r);
	return emit(c, XP_REC_GPU_SYNC, &r, sizeof(r), NULL, 0);
}

static int convert_api(struct xp_conv *c, const CUpti_ActivityAPI *a)
{
	struct xp_gpu_api r;

	xp_api_from_cupti(a, &r);
	return emit(c, XP_REC_GPU_API, &r, sizeof(r), NULL, 0);
}

static void object_ids(CUpti_ActivityObjectKind kind, const CUpti_ActivityObjectKindId *id,
		       uint32_t *pid, uint32_t *tid)
{
	*pid = *tid = 0;
	if (kind == CUPTI_ACTIVITY_OBJECT_PROCESS || kind == CUPTI_ACTIVITY_OBJECT_THREAD) {
		*pid = id->pt.processId;
		if (kind == CUPTI_ACTIVITY_OBJECT_THREAD)
			*tid = id->pt.threadId;
	}
}

static int convert_marker(struct xp_conv *c, const CUpti_ActivityMarker2 *m)
{
	struct xp_gpu_nvtx r;

	memset(&r, 0, sizeof(r));
	r.ts = m->timestamp;
	r.id = m->id;
	if (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_START)
		r.edge = XP_NVTX_START;
	else if (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_END)
		r.edge = XP_NVTX_END;
	else
		r.edge = XP_NVTX_MARK;
	r.object_kind = (uint32_t)m->objectKind;
	object_ids(m->objectKind, &m->objectId, &r.pid, &r.tid);
	if (r.edge != XP_NVTX_END && xp_conv_string(c, m->name, &r.name))
		return c->last_error;
	if (xp_conv_string(c, m->domain, &r.domain))
		return c->last_error;
	return emit(c, XP_REC_GPU_NVTX, &r, sizeof(r), NULL, 0);
}

static int convert_overhead(struct xp_conv *c, const CUpti_ActivityOverhead3 *o)
{
	struct xp_gpu_overhead r;

	memset(&r, 0, sizeof(r));
	r.start = o->start;
	r.end = o->end;
	r.correlation_id = o->correlationId;
	r.kind = (uint32_t)o->overheadKind;
	r.object_kind = (uint32_t)o->objectKind;
	object_ids(o->objectKind, &o->objectId, &r.pid, &r.tid);
	return emit(c, XP_REC_GPU_OVERHEAD, &r, sizeof(r), NULL, 0);
}

static int convert_device(struct xp_conv *c, const CUpti_ActivityDevice5 *d)
{
	struct xp_gpu_device r;

	memset(&r, 0, sizeof(r));
	r.global_memory = d->globalMemorySize;
	r.id = d->id;
	r.sm_count = d->numMultiprocessors;
	r.cc_major = d->computeCapabilityMajor;
	r.cc_minor = d->computeCapabilityMinor;
	r.core_clock_khz = d->coreClockRate;
	r.max_warps_per_sm = d->maxWarpsPerMultiprocessor;
	r.l2_size = d->l2CacheSize;
	memcpy(r.uuid, &d->uuid, sizeof(r.uuid));
	r.mig = d->isMigEnabled;
	if (xp_conv_string(c, d->name, &r.name))
		return c->last_error;
	return emit(c, XP_REC_GPU_DEVICE, &r, sizeof(r), NULL, 0);
}

int xp_convert_activity(struct xp_conv *c, const CUpti_Activity *rec)
{
	int err;

	switch (rec->kind) {
	case CUPTI_ACTIVITY_KIND_KERNEL:
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
		err = convert_kernel(c, (const CUpti_ActivityKernel10 *)rec);
		break;
	case CUPTI_ACTIVITY_KIND_MEMCPY:
		err = convert_memcpy(c, (const CUpti_ActivityMemcpy6 *)rec);
		break;
	case CUPTI_ACTIVITY_KIND_MEMCPY2:
		err = convert_memcpy_peer(c, (const CUpti_ActivityMemcpyPtoP4 *)rec);
		break;
	case CUPTI_ACTIVITY_KIND_MEMSET:
		err = convert_memset(c, (const CUpti_ActivityMemset4 *)rec);
		break;
	case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
		err = convert_sync(c, (const CUpti_ActivitySynchronization2 *)rec);
		break;
	case CUPTI_ACTIVITY_KIND_RUNTIME:
	case CUPTI_ACTIVITY_KIND_DRIVER:
		err = convert_api(c, (const CUpti_ActivityAPI *)rec);
		break;
	case CUPTI_ACTIVITY_KIND_MARKER:
		err = convert_marker(c, (const CUpti_ActivityMarker2 *)rec);
		break;
	case CUPTI_ACTIVITY_KIND_OVERHEAD:
		err = convert_overhead(c, (const CUpti_ActivityOverhead3 *)rec);
		break;
	case CUPTI_ACTIVITY_KIND_DEVICE:
		err = convert_device(c, (const CUpti_ActivityDevice5 *)rec);
		break;
	default:
		/* MARKER_DATA (colours), NAME (thread names) and kinds we never
		 * enable: not part of the format yet. */
		c->ignored++;
		return 0;
	}
	if (err)
		return err;
	c->converted++;
	return 1;
}

int xp_conv_emit_losses(struct xp_conv *c, uint64_t ts, uint64_t dropped)
{
	struct xp_lost l;
	int err = 0;

	for (uint32_t type = 0; type < XP_CONV_TYPES; type++) {
		if (!c->no_timestamp[type])
			continue;
		memset(&l, 0, sizeof(l));
		l.ts = ts;
		l.kind = type;
		l.reason = XP_LOST_GPU_NO_TIMESTAMP;
		l.count = c->no_timestamp[type];
		c->no_timestamp[type] = 0;
		err = err ? err : emit(c, XP_REC_LOST, &l, sizeof(l), NULL, 0);
	}
	if (dropped) {
		memset(&l, 0, sizeof(l));
		l.ts = ts;
		l.kind = 0;
		l.reason = XP_LOST_CUPTI_DROPPED;
		l.count = dropped;
		err = err ? err : emit(c, XP_REC_LOST, &l, sizeof(l), NULL, 0);
	}
	return err;
}

/* test-cupti-convert.c - CUPTI activity structs in, GPU records out, with
 * hand-made CUPTI records (CI has no GPU): field mapping, name interning
 * (a name is copied, written once, before its first use), timestamp-less
 * records counted as losses, unknown kinds skipped. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check-main.h"
#include "cupti/convert.h"
#include "src/marker.h"

/* A sink that keeps the records in memory. */
struct rec {
	uint32_t type;
	/* records are read back through their structs: keep 8-byte alignment */
	_Alignas(8) unsigned char data[256];
	size_t len;
};

static struct rec recs[64];
static int nrecs;
static uint32_t next_id;
static struct xpc_strintern *tab;
static struct xp_conv conv;

static int sink(void *ctx, uint32_t type, const void *fixed, size_t fixed_len,
		const void *tail, size_t tail_len)
{
	struct rec *r = &recs[nrecs++];

	(void)ctx;
	ck_assert_int_lt(nrecs, 64);
	ck_assert_uint_le(fixed_len + tail_len, sizeof(r->data));
	r->type = type;
	memcpy(r->data, fixed, fixed_len);
	if (tail_len)
		memcpy(r->data + fixed_len, tail, tail_len);
	r->len = fixed_len + tail_len;
	return 0;
}

static void setup(void)
{
	nrecs = 0;
	next_id = 0;
	tab = xpc_strintern__new(&next_id);
	ck_assert_ptr_nonnull(tab);
	xp_conv_init(&conv, tab, sink, NULL);
}

static void teardown(void)
{
	xpc_strintern__free(tab);
}

static CUpti_ActivityKernel10 fake_kernel(const char *name, uint32_t corr)
{
	CUpti_ActivityKernel10 k;

	memset(&k, 0, sizeof(k));
	k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
	k.start = 1000;
	k.end = 2500;
	k.deviceId = 1;
	k.contextId = 2;
	k.streamId = 13;
	k.gridX = 16; k.gridY = 2; k.gridZ = 1;
	k.blockX = 256; k.blockY = 1; k.blockZ = 1;
	k.registersPerThread = 32;
	k.staticSharedMemory = 1024;
	k.dynamicSharedMemory = 4096;
	k.correlationId = corr;
	k.graphId = 5;
	k.graphNodeId = 0x100000007ull;
	k.name = name;
	return k;
}

START_TEST(kernel_fields_and_name)
{
	char name[] = "_Z7k_alphaPfi";
	CUpti_ActivityKernel10 k = fake_kernel(name, 77);
	const struct xp_gpu_string *s;
	const struct xp_gpu_kernel *r;

	ck_assert_int_eq(xp_convert_activity(&conv, (CUpti_Activity *)&k), 1);
	ck_assert_int_eq(nrecs, 2);
	ck_assert_uint_eq(recs[0].type, XP_REC_GPU_STRING);
	s = (const void *)recs[0].data;
	ck_assert_uint_eq(s->id, 1);
	ck_assert_uint_eq(s->len, strlen(name));
	ck_assert(memcmp(recs[0].data + sizeof(*s), name, s->len) == 0);

	ck_assert_uint_eq(recs[1].type, XP_REC_GPU_KERNEL);
	r = (const void *)recs[1].data;
	ck_assert_uint_eq(r->start, 1000);
	ck_assert_uint_eq(r->end, 2500);
	ck_assert_uint_eq(r->correlation_id, 77);
	ck_assert_uint_eq(r->device, 1);
	ck_assert_uint_eq(r->context, 2);
	ck_assert_uint_eq(r->stream, 13);
	ck_assert_int_eq(r->grid[0], 16);
	ck_assert_int_eq(r->grid[1], 2);
	ck_assert_int_eq(r->block[0], 256);
	ck_assert_uint_eq(r->registers, 32);
	ck_assert_int_eq(r->static_shared, 1024);
	ck_assert_int_eq(r->dynamic_shared, 4096);
	ck_assert_uint_eq(r->graph_id, 5);
	ck_assert_uint_eq(r->graph_node_id, 0x100000007ull);
	ck_assert_uint_eq(r->name, 1);
	ck_assert_uint_eq(r->flags, 0);

	/* CUPTI may reuse the name's memory: the copy must not change. */
	memset(name, 'x', sizeof(name) - 1);
	k = fake_kernel("_Z7k_alphaPfi", 78);
	ck_assert_int_eq(xp_convert_activity(&conv, (CUpti_Activity *)&k), 1);
	ck_assert_int_eq(nrecs, 3);     /* no second string record */
	ck_assert_uint_eq(((const struct xp_gpu_kernel *)recs[2].data)->name, 1);
}
END_TEST

START_TEST(zero_timestamps_are_losses)
{
	CUpti_ActivityKernel10 k = fake_kernel("k", 1);
	const struct xp_lost *l;

	k.start = k.end = 0;
	ck_assert_int_eq(xp_convert_activity(&conv, (CUpti_Activity *)&k), 1);
	ck_assert_int_eq(xp_convert_activity(&conv, (CUpti_Activity *)&k), 1);
	ck_assert_uint_eq(((const struct xp_gpu_kernel *)recs[1].data)->flags, XP_GPU_F_NO_TIMESTAMP);
	ck_assert_int_eq(xp_conv_emit_losses(&conv, 99, 5), 0);
	ck_assert_int_eq(nrecs, 5);
	ck_assert_uint_eq(recs[3].type, XP_REC_LOST);
	l = (const void *)recs[3].data;
	ck_assert_uint_eq(l->kind, XP_REC_GPU_KERNEL);
	ck_assert_uint_eq(l->reason, XP_LOST_GPU_NO_TIMESTAMP);
	ck_assert_uint_eq(l->count, 2);
	l = (const void *)recs[4].data;
	ck_assert_uint_eq(l->reason, XP_LOST_CUPTI_DROPPED);
	ck_assert_uint_eq(l->count, 5);
	/* Reported once. */
	ck_assert_int_eq(xp_conv_emit_losses(&conv, 100, 0), 0);
	ck_assert_int_eq(nrecs, 5);
}
END_TEST

START_TEST(memcpy_memset_sync)
{
	CUpti_ActivityMemcpy6 m;
	CUpti_ActivityMemcpyPtoP4 p;
	const struct xp_gpu_memcpy_peer *rp;
	CUpti_ActivityMemset4 s;
	CUpti_ActivitySynchronization2 y;
	const struct xp_gpu_memcpy *rm;
	const struct xp_gpu_memset *rs;
	const struct xp_gpu_sync *ry;

	memset(&m, 0, sizeof(m));
	m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
	m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
	m.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
	m.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	m.flags = CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC;
	m.bytes = 16384;
	m.start = 10;
	m.end = 20;
	m.streamId = 14;
	m.correlationId = 5;
	m.graphId = 3;
	m.graphNodeId = 9;
	ck_assert_int_eq(xp_convert_activity(&conv, (CUpti_Activity *)&m), 1);
	rm = (const void *)recs[0].data;
	ck_assert_uint_eq(recs[0].type, XP_REC_GPU_MEMCPY);
	ck_assert_uint_eq(rm->bytes, 16384);
	ck_assert_uint_eq(rm->copy_kind, CUPTI_ACTIVITY_MEMCPY_KIND_HTOD);
	ck_assert_uint_eq(rm->src_kind, CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE);
	ck_assert_uint_eq(rm->dst_kind, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE);
	ck_assert_uint_eq(rm->flags, XP_GPU_F_ASYNC);
	ck_assert_uint_eq(rm->stream, 14);
	ck_assert_uint_eq(rm->correlation_id, 5);
	ck_assert_uint_eq(rm->graph_id, 3);
	ck_assert_uint_eq(rm->graph_node_id, 9);

	memset(&p, 0, sizeof(p));
	p.kind = CUPTI_ACTIVITY_KIND_MEMCPY2;   /* a copy from GPU 0 to GPU 1 */
	p.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_PTOP;
	p.srcKind = p.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	p.bytes = 1 << 20;
	p.start = 21;
	p.end = 29;
	p.deviceId = 0;
	p.srcDeviceId = 0;
	p.srcContextId = 1;
	p.dstDeviceId = 1;
	p.dstContextId = 2;
	p.correlationId = 8;
	ck_assert_int_eq(xp_convert_activity(&conv, (CUpti_Activity *)&p), 1);
	rp = (const void *)recs[1].data;
	ck_assert_uint_eq(recs[1].type, XP_REC_GPU_MEMCPY_PEER);
	ck_assert_uint_eq(rp->copy.copy_kind, CUPTI_ACTIVITY_MEMCPY_KIND_PTOP);
	ck_assert_uint_eq(rp->copy.bytes, 1 << 20);
	ck_assert_uint_eq(rp->copy.end, 29);
	ck_assert_uint_eq(rp->copy.correlation_id, 8);
	ck_assert_uint_eq(rp->src_device, 0);
	ck_assert_uint_eq(rp->src_context, 1);
	ck_assert_uint_eq(rp->dst_device, 1);
	ck_assert_uint_eq(rp->dst_context, 2);

	memset(&s, 0, sizeof(s));
	s.kind = CUPTI_ACTIVITY_KIND_MEMSET;
	s.value = 0xab;
	s.bytes = 64;
	s.start = 30;
	s.end = 31;
	s.correlationId = 6;
	s.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	ck_assert_int_eq(xp_convert_activity(&conv, (CUpti_Activity *)&s), 1);
	rs = (const void *)recs[2].data;
	ck_assert_uint_eq(recs[2].type, XP_REC_GPU_MEMSET);
	ck_assert_uint_eq(rs->value, 0xab);
	ck_assert_uint_eq(rs->bytes, 64);
	ck_assert_uint_eq(rs->memory_kind, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE);
	ck_assert_uint_eq(rs->correlation_id, 6);

	memset(&y, 0, sizeof(y));
	y.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
	y.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE;
	y.start = 40;
	y.end = 90;
	y.correlationId = 7;
	y.streamId = 14;
	y.cudaEventId = CUPTI_SYNCHRONIZATION_INVALID_VALUE;
	ck_assert_int_eq(xp_convert_activity(&conv, (CUpti_Activity *)&y), 1);
	ry = (const void *)recs[3].data;
	ck_assert_uint_eq(recs[3].type, XP_REC_GPU_SYNC);
	ck_assert_uint_eq(ry->type, CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE);
	ck_assert_uint_eq(ry->end, 90);
	ck_assert_uint_eq(ry->event, CUPTI_SYNCHRONIZATION_INVALID_VALUE);
}
END_TEST

START_TEST(api_activity_has_driver_bit)
{
	CUpti_ActivityAPI a;
	const struct xp_gpu_api *r;

	memset(&a, 0, sizeof(a));
	a.kind = CUPTI_ACTIVITY_KIND_DRIVER;
	a.cbid = CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel;
	a.start = 5;
	a.end = 8;
	a.processId = 100;
	a.threadId = 101;
	a.correlationId = 42;
	a.returnValue = 0;
	ck_assert_int_eq(xp_convert_activity(&conv, (CUpti_Activity *)&a), 1);
	r = (const void *)recs[0].data;
	ck_assert_uint_eq(r->cbid, XP_CBID(1, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel));
	ck_assert_uint_eq(r->correlation_id, 42);
	ck_assert_uint_eq(r->tid, 101);
	ck_assert_uint_eq(r->flags, XP_GPU_API_FROM_ACTIVITY);
}
END_TEST

START_TEST(nvtx_range_edges)
{
	CUpti_ActivityMarker2 m;
	const struct xp_gpu_nvtx *r;

	memset(&m, 0, sizeof(m));
	m.kind = CUPTI_ACTIVITY_KIND_MARKER;
	m.flags = CUPTI_ACTIVITY_FLAG_MARKER_START;
	m.timestamp = 100;
	m.id = 3;
	m.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
	m.objectId.pt.processId = 10;
	m.objectId.pt.threadId = 11;
	m.name = "phase_alpha";
	ck_assert_int_eq(xp_convert_activity(&conv, (CUpti_Activity *)&m), 1);
	m.flags = CUPTI_ACTIVITY_FLAG_MARKER_END;
	m.timestamp = 200;
	m.name = NULL;
	ck_assert_int_eq(xp_convert_activity(&conv, (CUpti_Activity *)&m), 1);
	ck_assert_int_eq(nrecs, 3);
	r = (const void *)recs[1].data;
	ck_assert_uint_eq(r->edge, XP_NVTX_START);
	ck_assert_uint_eq(r->name, 1);
	ck_assert_uint_eq(r->tid, 11);
	ck_assert_uint_eq(r->pid, 10);
	r = (const void *)recs[2].data;
	ck_assert_uint_eq(r->edge, XP_NVTX_END);
	ck_assert_uint_eq(r->id, 3);
	ck_assert_uint_eq(r->name, 0);
}
END_TEST

START_TEST(unknown_kind_skipped)
{
	CUpti_ActivityMarkerData2 d;

	memset(&d, 0, sizeof(d));
	d.kind = CUPTI_ACTIVITY_KIND_MARKER_DATA;
	ck_assert_int_eq(xp_convert_activity(&conv, (CUpti_Activity *)&d), 0);
	ck_assert_int_eq(nrecs, 0);
	ck_assert_uint_eq(conv.ignored, 1);
}
END_TEST

START_TEST(strtab_grows_and_dedups)
{
	char buf[32];
	uint32_t id, again;

	for (int i = 0; i < 5000; i++) {
		snprintf(buf, sizeof(buf), "kernel_%d", i);
		ck_assert_int_eq(xpc_strintern__intern(tab, buf, &id), 1);
		ck_assert_uint_eq(id, (uint32_t)i + 1);
	}
	ck_assert_int_eq(xpc_strintern__intern(tab, "kernel_4321", &again), 0);
	ck_assert_uint_eq(again, 4322);
	ck_assert_uint_eq(xpc_strintern__count(tab), 5000);
	ck_assert_int_eq(xpc_strintern__intern(tab, "", &id), 0);
	ck_assert_uint_eq(id, 0);
	ck_assert_int_eq(xpc_strintern__intern(tab, NULL, &id), 0);
}
END_TEST

static Suite *cupti_convert_suite(void)
{
	Suite *s = suite_create("cupti-convert");
	TCase *tc = tcase_create("convert");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, kernel_fields_and_name);
	tcase_add_test(tc, zero_timestamps_are_losses);
	tcase_add_test(tc, memcpy_memset_sync);
	tcase_add_test(tc, api_activity_has_driver_bit);
	tcase_add_test(tc, nvtx_range_edges);
	tcase_add_test(tc, unknown_kind_skipped);
	tcase_add_test(tc, strtab_grows_and_dedups);
	suite_add_tcase(s, tc);
	return s;
}

XP_CHECK_MAIN(cupti_convert_suite)

/* runnames.c - the table of record kinds (type, name, stream, fixed size,
 * checked times, dump fields) and of loss reasons (runnames.h). */
#include "src/runnames.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "src/runfmt.h"
#include "src/runfmt_gpu.h"
#include "src/runfmt_py.h"

#define F(t) sizeof(struct t)
#define NO_TIMES 0, 0, { 0 }
#define SPAN_AT(t, s, e) 1, 2, { offsetof(struct t, s), offsetof(struct t, e) }
#define SPAN(t) SPAN_AT(t, start, end)
#define TS(t, f) 0, 1, { offsetof(struct t, f) }
#define STACK "flags kstack ustack [copy ip bp word0 key]"
#define MEMCPY "start end corr bytes kind src dst dev stream graph node flags"

/* In the order of their codes: dump lists them so, and xp_rec_kind_of
 * searches by halves. Only the GPU stream's activities have their times
 * checked (ingest/gpu_load.c): the CPU loader takes times as they come. */
const struct xp_rec_kind xp_rec_kinds[] = {
	{ XP_REC_SAMPLE, "sample", XP_STREAM_CPU, 1, F(xp_sample), NO_TIMES,
	  "ts pid tid cpu comm " STACK },
	{ XP_REC_FORK, "fork", XP_STREAM_CPU, 1, F(xp_task), NO_TIMES, "ts pid ppid tid ptid" },
	{ XP_REC_EXIT, "exit", XP_STREAM_CPU, 1, F(xp_task), NO_TIMES, "ts pid ppid tid ptid" },
	{ XP_REC_COMM, "comm", XP_STREAM_CPU, 1, F(xp_comm), NO_TIMES, "ts pid tid exec comm" },
	{ XP_REC_EXEC, "exec", XP_STREAM_CPU, 1, F(xp_exec), NO_TIMES, "ts pid tid path" },
	{ XP_REC_MMAP, "mmap", XP_STREAM_CPU, 1, F(xp_mmap), NO_TIMES,
	  "ts pid addr len pgoff prot flags build_id path" },
	{ XP_REC_LAUNCH, "launch", XP_STREAM_CPU, 1, F(xp_launch), NO_TIMES,
	  "ts pid tid cpu corr cbid " STACK },
	{ XP_REC_SWITCH, "switch", XP_STREAM_CPU, 1, F(xp_switch), NO_TIMES,
	  "ts dur pid tid state " STACK },
	{ XP_REC_PYSTACK, "pystack", XP_STREAM_CPU, 0, F(xp_pystack), NO_TIMES,
	  "ts pid tid corr flags [key] frames" },
	{ XP_REC_PYCODE, "pycode", XP_STREAM_CPU, 0, F(xp_pycode), NO_TIMES,
	  "pid code version first_line file qualname linetable" },
	{ XP_REC_PYINFO, "pyinfo", XP_STREAM_CPU, 0, F(xp_pyinfo), NO_TIMES,
	  "ts pid version supported reason" },
	{ XP_REC_AUTOGRAD, "autograd", XP_STREAM_CPU, 0, F(xp_autograd), NO_TIMES,
	  "corr tid flags thread seq_next [node_seq node_thread node]" },
	{ XP_REC_AUTOGRAD_INFO, "autograd_info", XP_STREAM_CPU, 0, F(xp_autograd_info), NO_TIMES,
	  "ts pid flags nodes rejected reason" },
	{ XP_REC_PYSAMPLE, "pysample", XP_STREAM_CPU, 0, F(xp_pystack), NO_TIMES,
	  "ts pid tid corr flags [key] frames" },
	{ XP_REC_PYWAIT, "pywait", XP_STREAM_CPU, 0, F(xp_pywait), NO_TIMES,
	  "ts pid tid syscall pc sp" },
	{ XP_REC_GPU_STRING, "gpu_string", XP_STREAM_GPU, 0, F(xp_gpu_string), NO_TIMES, "id text" },
	{ XP_REC_GPU_PROCESS, "gpu_process", XP_STREAM_GPU, 0, F(xp_gpu_process), NO_TIMES,
	  "ts pid ns_pid ns_depth ppid init_tid cupti driver cuda clock flags exe" },
	{ XP_REC_GPU_DEVICE, "gpu_device", XP_STREAM_GPU, 0, F(xp_gpu_device), NO_TIMES,
	  "id name sms cc mem mig uuid" },
	{ XP_REC_GPU_CLOCK, "gpu_clock", XP_STREAM_GPU, 0, F(xp_gpu_clock),
	  0, 3, { offsetof(struct xp_gpu_clock, mono_before), offsetof(struct xp_gpu_clock, cupti_ts),
		  offsetof(struct xp_gpu_clock, mono_after) },
	  "when mono_before cupti mono_after" },
	{ XP_REC_GPU_STATUS, "gpu_status", XP_STREAM_GPU, 0, F(xp_gpu_status), NO_TIMES,
	  "ts code severity detail text" },
	{ XP_REC_GPU_API, "gpu_api", XP_STREAM_GPU, 0, F(xp_gpu_api), SPAN(xp_gpu_api),
	  "start end corr pid tid cbid name ret flags" },
	{ XP_REC_GPU_KERNEL, "gpu_kernel", XP_STREAM_GPU, 0, F(xp_gpu_kernel), SPAN(xp_gpu_kernel),
	  "start end corr dev ctx stream graph node grid block regs smem dsmem name flags" },
	{ XP_REC_GPU_MEMCPY, "gpu_memcpy", XP_STREAM_GPU, 0, F(xp_gpu_memcpy), SPAN(xp_gpu_memcpy),
	  MEMCPY },
	{ XP_REC_GPU_MEMSET, "gpu_memset", XP_STREAM_GPU, 0, F(xp_gpu_memset), SPAN(xp_gpu_memset),
	  "start end corr bytes value dev stream graph node flags" },
	{ XP_REC_GPU_SYNC, "gpu_sync", XP_STREAM_GPU, 0, F(xp_gpu_sync), SPAN(xp_gpu_sync),
	  "start end corr type ctx stream event ret" },
	{ XP_REC_GPU_NVTX, "gpu_nvtx", XP_STREAM_GPU, 0, F(xp_gpu_nvtx), TS(xp_gpu_nvtx, ts),
	  "ts id edge pid tid name domain" },
	/* CUPTI's own overhead: not loaded, so its times are not checked */
	{ XP_REC_GPU_OVERHEAD, "gpu_overhead", XP_STREAM_GPU, 0, F(xp_gpu_overhead), NO_TIMES,
	  "start end corr kind pid tid" },
	{ XP_REC_GPU_GRAPH, "gpu_graph", XP_STREAM_GPU, 0, F(xp_gpu_graph), NO_TIMES,
	  "ts event graph node orig_node orig_graph exec type corr pid tid" },
	{ XP_REC_GPU_RANK, "gpu_rank", XP_STREAM_GPU, 0, F(xp_gpu_rank), NO_TIMES,
	  "pid source rank local_rank world_size local_world_size host" },
	{ XP_REC_GPU_MEMCPY_PEER, "gpu_memcpy_peer", XP_STREAM_GPU, 0, F(xp_gpu_memcpy_peer),
	  SPAN_AT(xp_gpu_memcpy_peer, copy.start, copy.end),
	  MEMCPY " src_dev src_ctx dst_dev dst_ctx" },
	{ XP_REC_LOST, "lost", XP_STREAM_ANY, 1, F(xp_lost), NO_TIMES, "ts kind reason count" },
	/* readers expand these: none reaches dump */
	{ XP_REC_ZBLOCK, "zblock", XP_STREAM_ANY, 0, F(xp_zblock), NO_TIMES, NULL },
};
const unsigned xp_rec_nkinds = sizeof(xp_rec_kinds) / sizeof(xp_rec_kinds[0]);

/* meta.json's spellings are capture's since the first runs; the database's
 * are the documented ones (xpcorr-db(5)). */
const struct xp_loss_reason xp_loss_reasons[] = {
	{ XP_LOST_RINGBUF_FULL, "ringbuf_full", "ringbuf_full" },
	{ XP_LOST_PERF_LOST, "perf_lost", "perf_lost" },
	{ XP_LOST_STACK, "stack_unreadable", "stack" },
	{ XP_LOST_WRITE, "write_failed", "write" },
	{ XP_LOST_NO_MEMORY, "no_memory", "no_memory" },
	{ XP_LOST_PRIVILEGED, "privileged", "privileged" },
	{ XP_LOST_PY_UNSUPPORTED, "python_unsupported", NULL },
	{ XP_LOST_PY_NO_THREAD, "python_no_thread", NULL },
	{ XP_LOST_PY_UNREADABLE, "python_unreadable", NULL },
};
const unsigned xp_loss_nreasons = sizeof(xp_loss_reasons) / sizeof(xp_loss_reasons[0]);

/* by halves: the GPU loader asks once a record */
const struct xp_rec_kind *xp_rec_kind_of(uint32_t type)
{
	unsigned lo = 0, hi = xp_rec_nkinds;

	while (lo < hi) {
		unsigned mid = lo + (hi - lo) / 2;

		if (xp_rec_kinds[mid].type == type)
			return &xp_rec_kinds[mid];
		if (xp_rec_kinds[mid].type < type)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

int xp_rec_kind_times_fit(const struct xp_rec_kind *k, const void *p)
{
	for (unsigned i = 0; i < k->ntimes; i++) {
		uint64_t t;

		memcpy(&t, (const unsigned char *)p + k->times[i], sizeof(t));
		if (t > INT64_MAX)
			return 0;
	}
	return 1;
}

const char *xp_rec_kind_name(uint32_t type)
{
	const struct xp_rec_kind *k = xp_rec_kind_of(type);

	return k ? k->name : NULL;
}

const char *xp_rec_kind_name_in(uint32_t type, unsigned streams)
{
	const struct xp_rec_kind *k = xp_rec_kind_of(type);

	return k && (k->streams & streams) ? k->name : NULL;
}

uint32_t xp_rec_kind_of_name(const char *name)
{
	for (unsigned i = 0; i < xp_rec_nkinds; i++)
		if (!strcmp(xp_rec_kinds[i].name, name))
			return xp_rec_kinds[i].type;
	return 0;
}

static const struct xp_loss_reason *reason_of(uint32_t code)
{
	for (unsigned i = 0; i < xp_loss_nreasons; i++)
		if (xp_loss_reasons[i].code == code)
			return &xp_loss_reasons[i];
	return NULL;
}

const char *xp_loss_reason_name(uint32_t code)
{
	const struct xp_loss_reason *r = reason_of(code);

	return r ? r->name : "unknown";
}

const char *xp_loss_reason_meta_key(uint32_t code)
{
	const struct xp_loss_reason *r = reason_of(code);

	return r ? r->meta_key : NULL;
}

uint32_t xp_loss_reason_of_meta_key(const char *key)
{
	for (unsigned i = 0; i < xp_loss_nreasons; i++)
		if ((xp_loss_reasons[i].meta_key && !strcmp(xp_loss_reasons[i].meta_key, key)) ||
		    !strcmp(xp_loss_reasons[i].name, key))
			return xp_loss_reasons[i].code;
	return 0;
}

/* runnames.c - the names of record kinds and loss reasons (runnames.h). */
#include "src/runnames.h"

#include <stddef.h>
#include <string.h>

#include "src/runfmt.h"
#include "src/runfmt_gpu.h"
#include "src/runfmt_py.h"

/* in the order of their codes (dump lists them so) */
const struct xp_rec_kind xp_rec_kinds[] = {
	{ XP_REC_SAMPLE, "sample", XP_STREAM_CPU, 1 },
	{ XP_REC_FORK, "fork", XP_STREAM_CPU, 1 },
	{ XP_REC_EXIT, "exit", XP_STREAM_CPU, 1 },
	{ XP_REC_COMM, "comm", XP_STREAM_CPU, 1 },
	{ XP_REC_EXEC, "exec", XP_STREAM_CPU, 1 },
	{ XP_REC_MMAP, "mmap", XP_STREAM_CPU, 1 },
	{ XP_REC_LAUNCH, "launch", XP_STREAM_CPU, 1 },
	{ XP_REC_SWITCH, "switch", XP_STREAM_CPU, 1 },
	{ XP_REC_PYSTACK, "pystack", XP_STREAM_CPU, 0 },
	{ XP_REC_PYCODE, "pycode", XP_STREAM_CPU, 0 },
	{ XP_REC_PYINFO, "pyinfo", XP_STREAM_CPU, 0 },
	{ XP_REC_AUTOGRAD, "autograd", XP_STREAM_CPU, 0 },
	{ XP_REC_AUTOGRAD_INFO, "autograd_info", XP_STREAM_CPU, 0 },
	{ XP_REC_PYSAMPLE, "pysample", XP_STREAM_CPU, 0 },
	{ XP_REC_GPU_STRING, "gpu_string", XP_STREAM_GPU, 0 },
	{ XP_REC_GPU_PROCESS, "gpu_process", XP_STREAM_GPU, 0 },
	{ XP_REC_GPU_DEVICE, "gpu_device", XP_STREAM_GPU, 0 },
	{ XP_REC_GPU_CLOCK, "gpu_clock", XP_STREAM_GPU, 0 },
	{ XP_REC_GPU_STATUS, "gpu_status", XP_STREAM_GPU, 0 },
	{ XP_REC_GPU_API, "gpu_api", XP_STREAM_GPU, 0 },
	{ XP_REC_GPU_KERNEL, "gpu_kernel", XP_STREAM_GPU, 0 },
	{ XP_REC_GPU_MEMCPY, "gpu_memcpy", XP_STREAM_GPU, 0 },
	{ XP_REC_GPU_MEMSET, "gpu_memset", XP_STREAM_GPU, 0 },
	{ XP_REC_GPU_SYNC, "gpu_sync", XP_STREAM_GPU, 0 },
	{ XP_REC_GPU_NVTX, "gpu_nvtx", XP_STREAM_GPU, 0 },
	{ XP_REC_GPU_OVERHEAD, "gpu_overhead", XP_STREAM_GPU, 0 },
	{ XP_REC_GPU_GRAPH, "gpu_graph", XP_STREAM_GPU, 0 },
	{ XP_REC_GPU_RANK, "gpu_rank", XP_STREAM_GPU, 0 },
	{ XP_REC_LOST, "lost", XP_STREAM_ANY, 1 },
	{ XP_REC_ZBLOCK, "zblock", XP_STREAM_ANY, 0 },
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

static const struct xp_rec_kind *kind_of(uint32_t type)
{
	for (unsigned i = 0; i < xp_rec_nkinds; i++)
		if (xp_rec_kinds[i].type == type)
			return &xp_rec_kinds[i];
	return NULL;
}

const char *xp_rec_kind_name(uint32_t type)
{
	const struct xp_rec_kind *k = kind_of(type);

	return k ? k->name : NULL;
}

const char *xp_rec_kind_name_in(uint32_t type, unsigned streams)
{
	const struct xp_rec_kind *k = kind_of(type);

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

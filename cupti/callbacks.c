/* callbacks.c - CUPTI API callbacks on launch-class calls only.
 *
 * Enabled per callback id (not per domain): launches, graph launches,
 * copies, memsets and host syncs. On ENTER of the outermost such call of a
 * thread we call the marker (xpcap's uprobe takes the user stack there), or
 * take the stack ourselves with --launch-stacks inproc (stacks.c), and
 * remember the start time; on its EXIT we queue one XP_REC_GPU_API record
 * in the thread's batch (written every 64 calls, by the flusher, or at exit).
 * That replaces CUPTI's RUNTIME activity kind, which costs ~4 us more per
 * launch in PyTorch (DESIGN.md). A runtime launch also fires the driver
 * callback (cudaLaunchKernel -> cuLaunchKernel) with the same correlation
 * id: the thread-local depth keeps only the outermost. Calls that launch
 * nothing (cuKernelGetName, cudaMalloc, ...) are never enabled, so never
 * reach the marker; stream capture begin/end and graph instantiation are,
 * for the stack of where a graph was made (graphs.c records what it holds).
 *   xpc_callbacks_enable(sub, XPC_CALLBACKS_ALL);   // from InitializeInjection
 * The other levels exist to measure what each part costs (bench/gpu-overhead):
 * DRIVER leaves out the runtime layer, NONE keeps only the activity records.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cupti.h>

#include "src/marker.h"
#include "cupti/stacks.h"
#include "cupti/window.h"
#include "cupti/selftime.h"
#include "cupti/xpcupti.h"

#define RT(name) CUPTI_RUNTIME_TRACE_CBID_##name
#define DRV(name) CUPTI_DRIVER_TRACE_CBID_##name

static const CUpti_CallbackId runtime_ids[] = {
	/* kernel launches */
	RT(cudaLaunch_v3020), RT(cudaLaunch_ptsz_v7000),
	RT(cudaLaunchKernel_v7000), RT(cudaLaunchKernel_ptsz_v7000),
	RT(cudaLaunchKernelExC_v11060), RT(cudaLaunchKernelExC_ptsz_v11060),
	RT(cudaLaunchCooperativeKernel_v9000), RT(cudaLaunchCooperativeKernel_ptsz_v9000),
	RT(cudaLaunchCooperativeKernelMultiDevice_v9000),
	RT(__cudaLaunchKernel_v13000), RT(__cudaLaunchKernel_ptsz_v13000),
	RT(cudaGraphLaunch_v10000), RT(cudaGraphLaunch_ptsz_v10000),
	/* graphs made from streams and instantiated: where they were captured */
	RT(cudaStreamBeginCapture_v10000), RT(cudaStreamBeginCapture_ptsz_v10000),
	RT(cudaStreamBeginCaptureToGraph_v12030), RT(cudaStreamEndCapture_v10000),
	RT(cudaStreamEndCapture_ptsz_v10000), RT(cudaGraphInstantiate_v10000),
	RT(cudaGraphInstantiate_v12000), RT(cudaGraphInstantiateWithFlags_v11040),
	RT(cudaGraphInstantiateWithParams_v12000), RT(cudaGraphInstantiateWithParams_ptsz_v12000),
	/* copies */
	RT(cudaMemcpy_v3020), RT(cudaMemcpy2D_v3020), RT(cudaMemcpyToArray_v3020),
	RT(cudaMemcpy2DToArray_v3020), RT(cudaMemcpyFromArray_v3020),
	RT(cudaMemcpy2DFromArray_v3020), RT(cudaMemcpyArrayToArray_v3020),
	RT(cudaMemcpy2DArrayToArray_v3020), RT(cudaMemcpyToSymbol_v3020),
	RT(cudaMemcpyFromSymbol_v3020), RT(cudaMemcpyAsync_v3020),
	RT(cudaMemcpyToArrayAsync_v3020), RT(cudaMemcpyFromArrayAsync_v3020),
	RT(cudaMemcpy2DAsync_v3020), RT(cudaMemcpy2DToArrayAsync_v3020),
	RT(cudaMemcpy2DFromArrayAsync_v3020), RT(cudaMemcpyToSymbolAsync_v3020),
	RT(cudaMemcpyFromSymbolAsync_v3020), RT(cudaMemcpy3D_v3020),
	RT(cudaMemcpy3DAsync_v3020), RT(cudaMemcpyPeer_v4000), RT(cudaMemcpyPeerAsync_v4000),
	RT(cudaMemcpy3DPeer_v4000), RT(cudaMemcpy3DPeerAsync_v4000),
	RT(cudaMemcpy_ptds_v7000), RT(cudaMemcpy2D_ptds_v7000),
	RT(cudaMemcpyToArray_ptds_v7000), RT(cudaMemcpy2DToArray_ptds_v7000),
	RT(cudaMemcpyFromArray_ptds_v7000), RT(cudaMemcpy2DFromArray_ptds_v7000),
	RT(cudaMemcpyArrayToArray_ptds_v7000), RT(cudaMemcpy2DArrayToArray_ptds_v7000),
	RT(cudaMemcpyToSymbol_ptds_v7000), RT(cudaMemcpyFromSymbol_ptds_v7000),
	RT(cudaMemcpyAsync_ptsz_v7000), RT(cudaMemcpyToArrayAsync_ptsz_v7000),
	RT(cudaMemcpyFromArrayAsync_ptsz_v7000), RT(cudaMemcpy2DAsync_ptsz_v7000),
	RT(cudaMemcpy2DToArrayAsync_ptsz_v7000), RT(cudaMemcpy2DFromArrayAsync_ptsz_v7000),
	RT(cudaMemcpyToSymbolAsync_ptsz_v7000), RT(cudaMemcpyFromSymbolAsync_ptsz_v7000),
	RT(cudaMemcpy3D_ptds_v7000), RT(cudaMemcpy3DAsync_ptsz_v7000),
	RT(cudaMemcpy3DPeer_ptds_v7000), RT(cudaMemcpy3DPeerAsync_ptsz_v7000),
	RT(cudaMemcpyBatchAsync_v12080), RT(cudaMemcpyBatchAsync_ptsz_v12080),
	RT(cudaMemcpy3DBatchAsync_v12080), RT(cudaMemcpy3DBatchAsync_ptsz_v12080),
	RT(cudaMemcpyBatchAsync_v13000), RT(cudaMemcpyBatchAsync_ptsz_v13000),
	RT(cudaMemcpy3DBatchAsync_v13000), RT(cudaMemcpy3DBatchAsync_ptsz_v13000),
	/* memsets */
	RT(cudaMemset_v3020), RT(cudaMemset2D_v3020), RT(cudaMemsetAsync_v3020),
	RT(cudaMemset2DAsync_v3020), RT(cudaMemset3D_v3020), RT(cudaMemset3DAsync_v3020),
	RT(cudaMemset_ptds_v7000), RT(cudaMemset2D_ptds_v7000), RT(cudaMemsetAsync_ptsz_v7000),
	RT(cudaMemset2DAsync_ptsz_v7000), RT(cudaMemset3D_ptds_v7000),
	RT(cudaMemset3DAsync_ptsz_v7000),
	/* host waits: where the CPU stalls on the GPU */
	RT(cudaDeviceSynchronize_v3020), RT(cudaThreadSynchronize_v3020),
	RT(cudaStreamSynchronize_v3020), RT(cudaStreamSynchronize_ptsz_v7000),
	RT(cudaEventSynchronize_v3020),
};

static const CUpti_CallbackId driver_ids[] = {
	/* kernel launches */
	DRV(cuLaunch), DRV(cuLaunchKernel), DRV(cuLaunchKernel_ptsz),
	DRV(cuLaunchKernelEx), DRV(cuLaunchKernelEx_ptsz),
	DRV(cuLaunchCooperativeKernel), DRV(cuLaunchCooperativeKernel_ptsz),
	DRV(cuLaunchCooperativeKernelMultiDevice),
	DRV(cuGraphLaunch), DRV(cuGraphLaunch_ptsz),
	DRV(cuStreamBeginCapture), DRV(cuStreamBeginCapture_ptsz), DRV(cuStreamBeginCapture_v2),
	DRV(cuStreamBeginCapture_v2_ptsz), DRV(cuStreamEndCapture), DRV(cuStreamEndCapture_ptsz),
	DRV(cuGraphInstantiate), DRV(cuGraphInstantiate_v2), DRV(cuGraphInstantiateWithFlags),
	DRV(cuGraphInstantiateWithParams),
	/* copies (current _v2 entry points and their per-thread variants) */
	DRV(cuMemcpy), DRV(cuMemcpyAsync), DRV(cuMemcpy_ptds), DRV(cuMemcpyAsync_ptsz),
	DRV(cuMemcpyPeer), DRV(cuMemcpyPeerAsync), DRV(cuMemcpy3DPeer), DRV(cuMemcpy3DPeerAsync),
	DRV(cuMemcpyPeer_ptds), DRV(cuMemcpy3DPeer_ptds), DRV(cuMemcpyPeerAsync_ptsz),
	DRV(cuMemcpy3DPeerAsync_ptsz),
	DRV(cuMemcpyHtoD_v2), DRV(cuMemcpyHtoDAsync_v2), DRV(cuMemcpyDtoH_v2),
	DRV(cuMemcpyDtoHAsync_v2), DRV(cuMemcpyDtoD_v2), DRV(cuMemcpyDtoDAsync_v2),
	DRV(cuMemcpyAtoH_v2), DRV(cuMemcpyAtoHAsync_v2), DRV(cuMemcpyAtoD_v2),
	DRV(cuMemcpyDtoA_v2), DRV(cuMemcpyAtoA_v2), DRV(cuMemcpy2D_v2),
	DRV(cuMemcpy2DUnaligned_v2), DRV(cuMemcpy2DAsync_v2), DRV(cuMemcpy3D_v2),
	DRV(cuMemcpy3DAsync_v2), DRV(cuMemcpyHtoA_v2), DRV(cuMemcpyHtoAAsync_v2),
	DRV(cuMemcpyHtoD_v2_ptds), DRV(cuMemcpyDtoH_v2_ptds), DRV(cuMemcpyDtoD_v2_ptds),
	DRV(cuMemcpyDtoA_v2_ptds), DRV(cuMemcpyAtoD_v2_ptds), DRV(cuMemcpyHtoA_v2_ptds),
	DRV(cuMemcpyAtoH_v2_ptds), DRV(cuMemcpyAtoA_v2_ptds), DRV(cuMemcpy2D_v2_ptds),
	DRV(cuMemcpy2DUnaligned_v2_ptds), DRV(cuMemcpy3D_v2_ptds),
	DRV(cuMemcpyHtoAAsync_v2_ptsz), DRV(cuMemcpyAtoHAsync_v2_ptsz),
	DRV(cuMemcpyHtoDAsync_v2_ptsz), DRV(cuMemcpyDtoHAsync_v2_ptsz),
	DRV(cuMemcpyDtoDAsync_v2_ptsz), DRV(cuMemcpy2DAsync_v2_ptsz),
	DRV(cuMemcpy3DAsync_v2_ptsz),
	DRV(cuMemcpyBatchAsync), DRV(cuMemcpyBatchAsync_ptsz), DRV(cuMemcpy3DBatchAsync),
	DRV(cuMemcpy3DBatchAsync_ptsz), DRV(cuMemcpyBatchAsync_v2),
	DRV(cuMemcpyBatchAsync_v2_ptsz), DRV(cuMemcpy3DBatchAsync_v2),
	DRV(cuMemcpy3DBatchAsync_v2_ptsz),
	/* memsets */
	DRV(cuMemsetD8_v2), DRV(cuMemsetD16_v2), DRV(cuMemsetD32_v2), DRV(cuMemsetD2D8_v2),
	DRV(cuMemsetD2D16_v2), DRV(cuMemsetD2D32_v2), DRV(cuMemsetD8_v2_ptds),
	DRV(cuMemsetD16_v2_ptds), DRV(cuMemsetD32_v2_ptds), DRV(cuMemsetD2D8_v2_ptds),
	DRV(cuMemsetD2D16_v2_ptds), DRV(cuMemsetD2D32_v2_ptds),
	DRV(cuMemsetD8Async), DRV(cuMemsetD16Async), DRV(cuMemsetD32Async),
	DRV(cuMemsetD2D8Async), DRV(cuMemsetD2D16Async), DRV(cuMemsetD2D32Async),
	DRV(cuMemsetD8Async_ptsz), DRV(cuMemsetD16Async_ptsz), DRV(cuMemsetD32Async_ptsz),
	DRV(cuMemsetD2D8Async_ptsz), DRV(cuMemsetD2D16Async_ptsz),
	DRV(cuMemsetD2D32Async_ptsz),
	/* host waits */
	DRV(cuCtxSynchronize), DRV(cuCtxSynchronize_v2), DRV(cuStreamSynchronize),
	DRV(cuStreamSynchronize_ptsz), DRV(cuEventSynchronize),
};

/* CUPTI's symbolName (the kernel's name) is valid on kernel launches only. */
static const char *kernel_name(int is_driver, CUpti_CallbackId cbid, const CUpti_CallbackData *cb)
{
	switch (is_driver ? 0u : cbid) {
	case RT(cudaLaunch_v3020): case RT(cudaLaunch_ptsz_v7000):
	case RT(cudaLaunchKernel_v7000): case RT(cudaLaunchKernel_ptsz_v7000):
	case RT(cudaLaunchKernelExC_v11060): case RT(cudaLaunchKernelExC_ptsz_v11060):
	case RT(cudaLaunchCooperativeKernel_v9000): case RT(cudaLaunchCooperativeKernel_ptsz_v9000):
	case RT(__cudaLaunchKernel_v13000): case RT(__cudaLaunchKernel_ptsz_v13000):
		return cb->symbolName;
	}
	switch (is_driver ? cbid : 0u) {
	case DRV(cuLaunch): case DRV(cuLaunchKernel): case DRV(cuLaunchKernel_ptsz):
	case DRV(cuLaunchKernelEx): case DRV(cuLaunchKernelEx_ptsz):
	case DRV(cuLaunchCooperativeKernel): case DRV(cuLaunchCooperativeKernel_ptsz):
		return cb->symbolName;
	}
	return NULL;
}

#define MAX_CBID 1024                   /* above every id in the tables */
#define BATCH XPC_API_BATCH

/* String id of each API's name, written once per (domain, cbid), always
 * under out_lock and before the first record that uses it. */
static uint32_t api_name_id[2][MAX_CBID];

/* API records wait in a per-thread batch, which the flusher drains every
 * XPC_API_DRAIN_MS (a thread drains it itself only when it fills: at over
 * BATCH calls in that time), so a launching thread seldom takes the
 * shared out_lock, and seldom writes the stream's MiB to the file. A batch
 * is a ring with one producer, its owner, which queues a record with plain
 * stores and takes no lock (a locked instruction per call waited for the
 * launch record's stores to reach the cache); whoever drains it (the
 * owner when it is full, the flusher, the exit handler) holds its lock.
 * Batches live in a registry that is never shrunk (a dead thread's batch
 * is reused by the next new thread), so the flusher and the exit handler
 * can drain every thread's records. Lock order: registry_lock, batch lock,
 * out_lock. */
struct pending {
	struct xp_gpu_api r;
	const char *fname;              /* CUPTI's functionName: a global constant */
};

struct batch {
	pthread_mutex_t lock;           /* the drainers */
	int in_use;                     /* owned by a live thread (registry_lock) */
	uint32_t head;                  /* atomic: records queued, the owner's */
	uint32_t tail;                  /* atomic: records drained, the drainers' */
	struct batch *next;             /* registry, never unlinked */
	struct pending recs[BATCH];
};

static struct batch *registry;
static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_key_t batch_key;
static int have_batch_key;

/* The library's own time on one outermost call in XPC_SELF_TIME_EVERY on
 * average, drawn at random (selftime.h says why; two more clock reads on
 * those): what our code adds to a launch, apart from CUPTI's share,
 * reported at exit (xpc_callbacks_self_time). A timed call over
 * XPC_SELF_TIME_CAP_NS is counted in slow instead. XPCAP_BENCH=selftime_all
 * times every call, to check the estimate against. */
static struct {
	uint64_t enter_ns, exit_ns, calls, slow;        /* atomic */
} self_time;
static int self_time_all;               /* XPCAP_BENCH=selftime_all */

/* A thread's state, in one thread-local struct whose address a callback
 * takes once: in a shared library each access to a thread-local variable
 * after a call is a call of __tls_get_addr (some 15 a launch, 6% of our
 * time in bench/launch-cost). */
struct thread_state {
	uint32_t time_draw;             /* xpc_self_time_draw's state */
	int timed;                      /* the open outermost call is timed */
	uint64_t timed_enter_ns;        /* ... and its time at the call */
	int depth;                      /* tracked calls open on this thread */
	uint32_t window_gen;            /* the capture window this thread last saw */
	uint64_t open_corr;             /* the outermost one's correlation id */
	pid_t tid;
	struct batch *batch;
};
static __thread struct thread_state me;

static pid_t tid_now(struct thread_state *t)
{
	if (!t->tid)
		t->tid = (pid_t)syscall(SYS_gettid);
	return t->tid;
}

/* Appends the batched records to the stream (once it is closed, drops
 * them); how many. Caller holds b->lock. */
static uint32_t drain(struct batch *b)
{
	uint32_t t = b->tail, h = __atomic_load_n(&b->head, __ATOMIC_ACQUIRE), n = h - t;

	if (t == h)
		return 0;
	pthread_mutex_lock(&xpc.out_lock);
	for (; t != h && xpc.w && !xpc.out_closed; t++) {
		struct pending *p = &b->recs[t % BATCH];
		uint32_t cbid = p->r.cbid & ~XP_CBID_DRIVER;
		uint32_t *name = &api_name_id[!!(p->r.cbid & XP_CBID_DRIVER)][cbid < MAX_CBID ? cbid : 0];

		if (!*name && p->fname && cbid < MAX_CBID) {
			struct xp_gpu_string s;

			s.id = __atomic_add_fetch(&xpc.next_string_id, 1, __ATOMIC_RELAXED);
			s.len = (uint32_t)strnlen(p->fname, 256);
			if (xp_writer_append(xpc.w, XP_REC_GPU_STRING, &s, sizeof(s), p->fname, s.len) == 0)
				*name = s.id;
		}
		p->r.name = cbid < MAX_CBID ? *name : 0;
		xp_writer_append(xpc.w, XP_REC_GPU_API, &p->r, sizeof(p->r), NULL, 0);
	}
	pthread_mutex_unlock(&xpc.out_lock);
	__atomic_store_n(&b->tail, h, __ATOMIC_RELEASE);      /* the owner may reuse them */
	return n;
}

/* Thread exit: write what is left and hand the batch to the next thread. */
static void batch_release(void *arg)
{
	struct batch *b = arg;

	pthread_mutex_lock(&registry_lock);
	pthread_mutex_lock(&b->lock);
	drain(b);
	pthread_mutex_unlock(&b->lock);
	b->in_use = 0;
	pthread_mutex_unlock(&registry_lock);
}

static struct batch *batch_get(struct thread_state *t)
{
	struct batch *b;

	if (t->batch || !have_batch_key)
		return t->batch;
	pthread_mutex_lock(&registry_lock);
	for (b = registry; b && b->in_use; b = b->next)
		;
	if (!b && (b = calloc(1, sizeof(*b)))) {
		pthread_mutex_init(&b->lock, NULL);
		b->next = registry;
		registry = b;
	}
	if (b)
		b->in_use = 1;
	pthread_mutex_unlock(&registry_lock);
	if (b && pthread_setspecific(batch_key, b)) {
		batch_release(b);
		b = NULL;
	}
	t->batch = b;
	return b;
}

uint64_t xpc_callbacks_drain_all(void)
{
	uint64_t n = 0;

	pthread_mutex_lock(&registry_lock);
	for (struct batch *b = registry; b; b = b->next) {
		pthread_mutex_lock(&b->lock);
		n += drain(b);
		pthread_mutex_unlock(&b->lock);
	}
	pthread_mutex_unlock(&registry_lock);
	return n;
}

/* Outermost EXIT: one API record that ended at end, batched (written
 * directly if this thread could not get a batch). */
static void write_api(struct thread_state *t, int is_driver, CUpti_CallbackId cbid,
		      const CUpti_CallbackData *cb, uint64_t end)
{
	struct batch *b = batch_get(t);
	struct batch one;
	struct pending *p;
	uint32_t h;

	if (!b) {
		memset(&one, 0, sizeof(one));
		b = &one;
	} else if (b->head - __atomic_load_n(&b->tail, __ATOMIC_ACQUIRE) == BATCH) {
		pthread_mutex_lock(&b->lock);
		drain(b);
		pthread_mutex_unlock(&b->lock);
	}
	h = b->head;
	p = &b->recs[h % BATCH];
	memset(&p->r, 0, sizeof(p->r));
	p->r.end = end;
	p->r.start = cb->correlationData ? *cb->correlationData : p->r.end;
	p->r.correlation_id = cb->correlationId;
	p->r.pid = (uint32_t)xpc.pid;
	p->r.tid = (uint32_t)tid_now(t);
	p->r.cbid = XP_CBID(is_driver, cbid);
	p->r.ret = cb->functionReturnValue ? *(const int *)cb->functionReturnValue : 0;
	p->fname = cb->functionName;
	__atomic_store_n(&b->head, h + 1, __ATOMIC_RELEASE);
	if (b == &one)
		drain(b);
}

void CUPTIAPI xpc_api_callback(void *userdata, CUpti_CallbackDomain domain,
			       CUpti_CallbackId cbid, const void *cbdata)
{
	const CUpti_CallbackData *cb = cbdata;
	int is_driver = domain == CUPTI_CB_DOMAIN_DRIVER_API;
	struct thread_state *t;
	uint64_t end;

	(void)userdata;
	if (domain == CUPTI_CB_DOMAIN_RESOURCE) {
		xpc_graph_event(cbid, cbdata);
		return;
	}
	if (domain != CUPTI_CB_DOMAIN_RUNTIME_API && !is_driver && domain != CUPTI_CB_DOMAIN_NVTX)
		return;
	if (!__atomic_load_n(&xpc.active, __ATOMIC_RELAXED))
		return;
	if (xpc.window_on && xpc_window_event(domain, cbid, cbdata))
		return;
	if (domain == CUPTI_CB_DOMAIN_NVTX)
		return;
	t = &me;
	__asm__("" : "+r"(t));          /* kept, not looked up again after each call */
	if (cb->callbackSite == CUPTI_API_ENTER) {
		uint64_t now;

		/* a window closed while a call of this thread was open: its
		 * EXIT never came, and must not hide the calls of the next */
		if (xpc.window_on && t->window_gen != __atomic_load_n(&xpc.window_gen, __ATOMIC_ACQUIRE)) {
			t->window_gen = __atomic_load_n(&xpc.window_gen, __ATOMIC_ACQUIRE);
			t->depth = 0;
		}
		if (t->depth++ > 0)
			return;
		t->open_corr = cb->correlationId;
		now = xpc_now();
		if (cb->correlationData)
			*cb->correlationData = now;
		/* the stack: taken here (--launch-stacks inproc) or by the uprobe */
		if (xpc_stacks_on())
			xpc_stack_take(now, cb->correlationId, XP_CBID(is_driver, cbid),
				       kernel_name(is_driver, cbid, cb));
		else
			xpcap_correlation_marker(cb->correlationId, XP_CBID(is_driver, cbid));
		t->timed = self_time_all || xpc_self_time_draw(&t->time_draw, (uint32_t)tid_now(t));
		if (t->timed)
			t->timed_enter_ns = xpc_now() - now;
		return;
	}
	/* EXIT. depth 0 here means the ENTER came before tracing began. */
	if (t->depth == 0 || --t->depth > 0)
		return;
	t->open_corr = 0;
	end = xpc_now();
	if (t->timed) {
		uint64_t at_exit;

		write_api(t, is_driver, cbid, cb, end);
		at_exit = xpc_now() - end;
		/* preempted, or waiting on the kernel: counted, not averaged */
		if (t->timed_enter_ns + at_exit > XPC_SELF_TIME_CAP_NS) {
			__atomic_add_fetch(&self_time.slow, 1, __ATOMIC_RELAXED);
		} else {
			__atomic_add_fetch(&self_time.enter_ns, t->timed_enter_ns, __ATOMIC_RELAXED);
			__atomic_add_fetch(&self_time.exit_ns, at_exit, __ATOMIC_RELAXED);
			__atomic_add_fetch(&self_time.calls, 1, __ATOMIC_RELAXED);
		}
		t->timed = 0;
		return;
	}
	write_api(t, is_driver, cbid, cb, end);
}

void xpc_callbacks_time_all(int on)
{
	self_time_all = on;
}

void xpc_callbacks_self_time(uint64_t *enter_ns, uint64_t *exit_ns, uint64_t *calls,
			     uint64_t *slow)
{
	*slow = __atomic_load_n(&self_time.slow, __ATOMIC_RELAXED);
	*calls = __atomic_load_n(&self_time.calls, __ATOMIC_RELAXED);
	*enter_ns = __atomic_load_n(&self_time.enter_ns, __ATOMIC_RELAXED);
	*exit_ns = __atomic_load_n(&self_time.exit_ns, __ATOMIC_RELAXED);
}

uint64_t xpc_open_correlation(void)
{
	return me.depth > 0 ? me.open_corr : 0;
}

static CUpti_SubscriberHandle enabled_sub;
static enum xpc_callback_level enabled_level = XPC_CALLBACKS_NONE;

void xpc_callbacks_switch(int on)
{
	for (size_t i = 0; enabled_level == XPC_CALLBACKS_ALL &&
	     i < sizeof(runtime_ids) / sizeof(runtime_ids[0]); i++)
		cuptiEnableCallback(on, enabled_sub, CUPTI_CB_DOMAIN_RUNTIME_API, runtime_ids[i]);
	for (size_t i = 0; enabled_level != XPC_CALLBACKS_NONE &&
	     i < sizeof(driver_ids) / sizeof(driver_ids[0]); i++)
		cuptiEnableCallback(on, enabled_sub, CUPTI_CB_DOMAIN_DRIVER_API, driver_ids[i]);
}

int xpc_callbacks_enable(CUpti_SubscriberHandle sub, enum xpc_callback_level level)
{
	CUptiResult res;

	enabled_sub = sub;
	enabled_level = level;
	if (level == XPC_CALLBACKS_NONE)
		return 0;

	/* Without a key threads write each record directly: slower, still right. */
	have_batch_key = pthread_key_create(&batch_key, batch_release) == 0;

	for (size_t i = 0; level == XPC_CALLBACKS_ALL && i < sizeof(runtime_ids) / sizeof(runtime_ids[0]); i++) {
		res = cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_RUNTIME_API, runtime_ids[i]);
		if (res != CUPTI_SUCCESS)
			return (int)res;
	}
	for (size_t i = 0; i < sizeof(driver_ids) / sizeof(driver_ids[0]); i++) {
		res = cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_DRIVER_API, driver_ids[i]);
		if (res != CUPTI_SUCCESS)
			return (int)res;
	}
	return xpc_graphs_enable(sub);
}

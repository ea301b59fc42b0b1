/* init.c - InitializeInjection: turns tracing on inside cuInit, and the
 * exit and fork handlers that end it.
 *
 * libcuda calls InitializeInjection (found through CUDA_INJECTION64_PATH)
 * on the thread that first initializes the driver, before any context
 * exists. We subscribe first and configure CUPTI only once the subscription
 * is ours: if torch.profiler or nsys already holds it, changing the clock or
 * the thread-id type under them would corrupt their data. Any failure logs
 * one line (xpcap-cupti: ...), leaves a status record in the run when it can,
 * and returns 1 with tracing off: the program must run exactly as without
 * us. Nothing here exits, aborts, or installs signal handlers; SIGINT and
 * SIGTERM end the program as usual (atexit runs if the program exits
 * normally, the flusher bounds the loss otherwise).
 *
 *   CUDA_INJECTION64_PATH=/path/libxpcupti.so XPCAP_RUN_DIR=/abs/run ./app
 *   XPCAP_API_TRACE=1   also enable CUPTI RUNTIME+DRIVER activity (costly)
 *   XPCAP_NVTX=0        do not enable NVTX marker records
 *   XPCAP_LAUNCH_STACKS=inproc XPCAP_LAUNCH_COPY=8192  take launch stacks
 *                       here, into launch-<pid>.xpr, not by the uprobe (stacks.c),
 *                       with the Python frames of Python threads (pyframes.c)
 *   XPCAP_PYFRAMES=0    no Python frames (what the walker costs: bench/)
 *   NVTX_INJECTION64_PATH=<this library>  set by xpcap before the
 *                       program starts for NVTX ranges (README.md)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "src/marker.h"
#include "cupti/pyframes.h"
#include "cupti/stacks.h"
#include "cupti/window.h"
#include "cupti/selftime.h"
#include "cupti/xpcupti.h"

struct xpc_state xpc = {
	.out_lock = PTHREAD_MUTEX_INITIALIZER,
	.conv_lock = PTHREAD_MUTEX_INITIALIZER,
};

static uint64_t CUPTIAPI monotonic_timestamp(void)
{
	return xpc_now();
}

static int env_flag(const char *name, int dflt)
{
	const char *v = getenv(name);

	if (!v || !*v)
		return dflt;
	return strcmp(v, "0") != 0;
}

/* XPCAP_CALLBACKS=driver|none: benchmark knobs (what the callbacks cost);
 * anything else is the default. */
static enum xpc_callback_level callback_level(void)
{
	const char *v = getenv("XPCAP_CALLBACKS");

	if (v && strcmp(v, "driver") == 0)
		return XPC_CALLBACKS_DRIVER;
	if (v && strcmp(v, "none") == 0)
		return XPC_CALLBACKS_NONE;
	return XPC_CALLBACKS_ALL;
}

/* XPCAP_BENCH=hwtrace,notscb,launchapi,prealloc: benchmark knobs that
 * try CUPTI settings below its default cost (bench/overhead_harness.py's
 * "floor" group measures each); unknown words are ignored. */
static int bench_knob(const char *word)
{
	const char *v = getenv("XPCAP_BENCH");
	size_t n = strlen(word);

	for (const char *p = v; p && *p; p += strcspn(p, ","), p += *p == ',') {
		if (!strncmp(p, word, n) && (p[n] == ',' || !p[n]))
			return 1;
	}
	return 0;
}

static const char *cupti_error(CUptiResult res)
{
	const char *s = NULL;

	if (cuptiGetResultString(res, &s) != CUPTI_SUCCESS || !s)
		return "unknown CUPTI error";
	return s;
}

/* Activity kinds, in the order enabled. Required ones failing turns tracing
 * off; optional ones leave a warning in the run. */
struct kind {
	CUpti_ActivityKind kind;
	int required;
	uint32_t needs_flag;            /* XP_GPU_PROC_* that must be set, or 0 */
};

static const struct kind kinds[] = {
	{ CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, 1, 0 },
	{ CUPTI_ACTIVITY_KIND_MEMCPY, 1, 0 },
	{ CUPTI_ACTIVITY_KIND_MEMCPY2, 0, 0 },     /* copies between GPUs: only there */
	{ CUPTI_ACTIVITY_KIND_MEMSET, 1, 0 },
	/* off unless XPCAP_SYNC=1: on the H100 it cost 3.3 us a launch in the
	 * launch-heavy PyTorch loop (CUPTI floor 3.86 us [3.68, 6.96] with it,
	 * 0.56 [-1.05, 1.91] without; 14 paired rounds), and the API records
	 * of the sync calls already say where the host waited */
	{ CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, 0, XP_GPU_PROC_SYNC },
	{ CUPTI_ACTIVITY_KIND_DEVICE, 0, 0 },
	{ CUPTI_ACTIVITY_KIND_OVERHEAD, 0, XP_GPU_PROC_OVERHEAD },
	/* NVTX through CUPTI: NVTX_INJECTION64_PATH names us (nvtx.c forwards). */
	{ CUPTI_ACTIVITY_KIND_MARKER, 0, XP_GPU_PROC_NVTX },
	{ CUPTI_ACTIVITY_KIND_RUNTIME, 0, XP_GPU_PROC_API_TRACE },
	{ CUPTI_ACTIVITY_KIND_DRIVER, 0, XP_GPU_PROC_API_TRACE },
	/* Never CUPTI_ACTIVITY_KIND_GRAPH_TRACE: it replaces the per-node kernel
	 * records of graph launches by one record per graph. */
};

static int enable_kinds(void)
{
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		const struct kind *k = &kinds[i];
		CUptiResult res;
		char text[160];

		if (k->needs_flag && !(xpc.proc_flags & k->needs_flag))
			continue;
		if ((k->kind == CUPTI_ACTIVITY_KIND_RUNTIME || k->kind == CUPTI_ACTIVITY_KIND_DRIVER) &&
		    bench_knob("launchapi"))
			continue;
		res = cuptiActivityEnable(k->kind);
		if (res == CUPTI_SUCCESS)
			continue;
		snprintf(text, sizeof(text), "cuptiActivityEnable(%d): %s",
			 (int)k->kind, cupti_error(res));
		if (k->required) {
			xpc_status(XP_GPU_ST_CUPTI_ERROR, XP_GPU_STATUS_FATAL, (int32_t)res, text);
			xpc_log("%s; GPU tracing off", text);
			return -EIO;
		}
		xpc.proc_flags &= ~k->needs_flag;
		xpc_status(XP_GPU_ST_KIND_OFF, XP_GPU_STATUS_WARN, (int32_t)k->kind, text);
	}
	if (bench_knob("launchapi")) {
		/* API records of the launch-class calls only, not of every call */
		static const CUpti_CallbackId rt[] = { CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
			CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000,
			CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020,
			CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_v3020 };
		static const CUpti_CallbackId drv[] = { CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
			CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx };

		for (size_t i = 0; i < sizeof(rt) / sizeof(rt[0]); i++)
			cuptiActivityEnableRuntimeApi(rt[i], 1);
		for (size_t i = 0; i < sizeof(drv) / sizeof(drv[0]); i++)
			cuptiActivityEnableDriverApi(drv[i], 1);
	}
	return 0;
}

static void disable_kinds(void)
{
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		cuptiActivityDisable(kinds[i].kind);
}

void xpc_activity_switch(int on)
{
	if (on) {
		enable_kinds();
		return;
	}
	/* DEVICE stays: its record comes once, when a context is made */
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (kinds[i].kind != CUPTI_ACTIVITY_KIND_DEVICE)
			cuptiActivityDisable(kinds[i].kind);
}

/* --launch-stacks inproc: launch-<pid>.xpr instead of the marker uprobe.
 * Any failure leaves the marker in charge (xpcap attached the uprobe too). */
static void stacks_start(const char *dir)
{
	const char *mode = getenv(XP_ENV_LAUNCH_STACKS), *copy = getenv(XP_ENV_LAUNCH_COPY);
	char name[64], text[160];
	unsigned long bytes = 8192;
	char *end;
	int fd, err;

	if (!mode || strcmp(mode, "inproc"))
		return;
	if (copy && *copy) {
		errno = 0;
		bytes = strtoul(copy, &end, 10);
		if (errno || *end || bytes > XP_USER_COPY_MAX)
			bytes = 8192;
	}
	bytes = (bytes + 7) & ~7ul;
	if (!env_flag("XPCAP_PYFRAMES", 1))
		xpc_py_disable();
	snprintf(name, sizeof(name), "launch-%d.xpr", (int)xpc.pid);
	fd = xpc_run_file_create(dir, name);
	err = fd < 0 ? fd : xpc_stacks_start(fd, xpc.pid, (uint32_t)bytes);
	if (err) {
		snprintf(text, sizeof(text), "in-process launch stacks off (%s/%s: %s): the"
			 " uprobe takes them", dir, name, strerror(-err));
		xpc_status(XP_GPU_ST_LAUNCH_STACKS, XP_GPU_STATUS_WARN, err, text);
		xpc_log("%s", text);
		return;
	}
	snprintf(text, sizeof(text), "in-process launch stacks: %s", bytes ?
		 "stack copies" : "frame-pointer walk");
	xpc_status(XP_GPU_ST_LAUNCH_STACKS, XP_GPU_STATUS_INFO, (int32_t)bytes, text);
	snprintf(text, sizeof(text), "python frames %s: %s", xpc_py_on() ? "on" : "off",
		 xpc_py_reason());
	xpc_status(XP_GPU_ST_LAUNCH_STACKS, XP_GPU_STATUS_INFO, xpc_py_on(), text);
}

/* What the Python frame walker did, by reason (pyframes.c). */
static void py_status(uint64_t py_stacks)
{
	struct xpc_py_stats st;
	char text[240];

	xpc_py_stats(&st);
	if (!py_stacks && !st.no_thread && !st.unsupported && !st.unreadable)
		return;
	snprintf(text, sizeof(text), "python stacks %llu, no Python thread %llu, unsupported"
		 " interpreter %llu, unreadable %llu, truncated %llu, code objects %llu (lost %llu)",
		 (unsigned long long)py_stacks, (unsigned long long)st.no_thread,
		 (unsigned long long)st.unsupported, (unsigned long long)st.unreadable,
		 (unsigned long long)st.truncated, (unsigned long long)st.codes,
		 (unsigned long long)st.codes_lost);
	xpc_status(XP_GPU_ST_LAUNCH_STACKS, st.unreadable || st.codes_lost ? XP_GPU_STATUS_WARN :
		   XP_GPU_STATUS_INFO, 0, text);
}

static void stacks_finish(void)
{
	struct xpc_stacks_stats st;
	char text[288];

	if (!xpc_stacks_on())
		return;
	if (xpc_stacks_finish()) {
		xpc_status(XP_GPU_ST_LAUNCH_STACKS, XP_GPU_STATUS_WARN, -ETIMEDOUT,
			   "launch stacks: the writer did not stop within 1 s at exit (stuck"
			   " writing?); left running, the last launch records lost");
		return;
	}
	xpc_stacks_stats(&st);
	snprintf(text, sizeof(text), "launch stacks taken %llu (%llu named an earlier copy of the"
		 " same frames), lost %llu (ring full), ip only %llu (not on the thread's stack),"
		 " %llu kept without their stack copy (ring full), writer CPU %.3f s",
		 (unsigned long long)st.taken, (unsigned long long)st.borrowed,
		 (unsigned long long)st.lost, (unsigned long long)st.no_copy,
		 (unsigned long long)st.copy_dropped, (double)st.writer_cpu_ns / 1e9);
	xpc_status(XP_GPU_ST_LAUNCH_STACKS, st.lost || st.copy_dropped ? XP_GPU_STATUS_WARN :
		   XP_GPU_STATUS_INFO, 0, text);
	py_status(st.py_stacks);
}

/* What our own code took per launch-class call (callbacks.c times one in
 * 64 at random, or every one under XPCAP_BENCH=selftime_all): the part of the recording's cost that is ours, not CUPTI's. */
static void self_time_status(void)
{
	uint64_t at_call, at_return, calls, slow, per_call;
	char text[320];

	xpc_callbacks_self_time(&at_call, &at_return, &calls, &slow);
	if (!calls)
		return;
	per_call = (at_call + at_return) / calls;
	snprintf(text, sizeof(text), "library code per launch-class call %llu ns: %llu at the call"
		 " (the launch stack), %llu at its return (the API record); %llu calls timed,"
		 " one in 64 at random; %llu more took over %u us (preempted, or waiting on the"
		 " kernel), left out", (unsigned long long)per_call, (unsigned long long)(at_call / calls),
		 (unsigned long long)(at_return / calls), (unsigned long long)calls,
		 (unsigned long long)slow, XPC_SELF_TIME_CAP_NS / 1000);
	xpc_status(XP_GPU_ST_SELF_TIME, XP_GPU_STATUS_INFO,
		   (int32_t)(per_call < INT32_MAX ? per_call : INT32_MAX), text);
}

static void at_exit(void)
{
	char text[160];

	/* A forked child inherits this handler but not CUPTI's threads. */
	if (getpid() != xpc.pid || !__atomic_load_n(&xpc.active, __ATOMIC_RELAXED))
		return;
	/* the last flush, on the flusher: the exit waits for it bounded; one
	 * that did not end may hold conv_lock or out_lock, so take none */
	if (xpc_flusher_stop()) {
		__atomic_store_n(&xpc.active, 0, __ATOMIC_RELAXED);
		xpc_log("the last flush did not end within 2 s; the run's last GPU records are lost");
		xpc_stacks_finish();        /* its own file, no lock of ours */
		return;
	}
	xpc_write_clock_pair(1);
	pthread_mutex_lock(&xpc.conv_lock);
	snprintf(text, sizeof(text), "records %llu, cupti dropped %llu, strings %zu",
		 (unsigned long long)xpc.conv.converted,
		 (unsigned long long)xpc.cupti_dropped, xpc_strintern__count(xpc.strings));
	pthread_mutex_unlock(&xpc.conv_lock);
	self_time_status();
	xpc_status(XP_GPU_ST_STOPPED, XP_GPU_STATUS_INFO, 0, text);
	/* Off first, then drain: threads still running add nothing after. */
	__atomic_store_n(&xpc.active, 0, __ATOMIC_RELAXED);
	xpc_callbacks_drain_all();
	stacks_finish();
	xpc_out_finish();
}

static void at_fork_child(void)
{
	/* CUDA cannot be used in the child of an initialized parent anyway;
	 * stop recording so the child never touches the parent's stream. */
	__atomic_store_n(&xpc.active, 0, __ATOMIC_RELAXED);
}

/* Subscribes; on a conflict names the other subscriber. */
static int subscribe(void)
{
	CUpti_SubscriberParams params;
	char other[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN + 64];
	char text[sizeof(other) + 128];
	CUptiResult res;

	memset(&params, 0, sizeof(params));
	memset(other, 0, sizeof(other));
	params.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
	params.subscriberName = "xpcap";
	params.oldSubscriberName = other;
	params.oldSubscriberSize = sizeof(other);
	res = cuptiSubscribe_v2(&xpc.sub, xpc_api_callback, NULL, &params);
	if (res == CUPTI_SUCCESS)
		return 0;
	if (res == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
		snprintf(text, sizeof(text), "another CUPTI client holds the subscription (%s)",
			 other[0] ? other : "unnamed");
		xpc_status(XP_GPU_ST_SUBSCRIBER, XP_GPU_STATUS_FATAL, (int32_t)res, text);
		xpc_log("%s; GPU tracing off", text);
		return -EBUSY;
	}
	snprintf(text, sizeof(text), "cuptiSubscribe: %s", cupti_error(res));
	xpc_status(XP_GPU_ST_CUPTI_ERROR, XP_GPU_STATUS_FATAL, (int32_t)res, text);
	xpc_log("%s; GPU tracing off", text);
	return -EIO;
}

/* XPCAP_BENCH=prealloc: CUPTI's device buffers for timestamps made before
 * the first launch, and larger (CUPTI 13 has no per-thread activity
 * buffer attribute, the other lead of the same kind). */
static void prealloc_device_buffers(void)
{
	size_t size = 32u << 20, count = 4;
	size_t len = sizeof(size);
	CUptiResult res;

	res = cuptiActivitySetAttribute(CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE, &len, &size);
	if (res == CUPTI_SUCCESS) {
		len = sizeof(count);
		res = cuptiActivitySetAttribute(CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_PRE_ALLOCATE_VALUE,
						&len, &count);
	}
	if (res != CUPTI_SUCCESS)
		xpc_log("XPCAP_BENCH=prealloc: %s", cupti_error(res));
}

static int configure(void)
{
	CUptiResult res;
	int err;

	/* Kernel-visible tids in activity records, not pthread_self(). */
	cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
	/* CUPTI's default clock is CLOCK_REALTIME; ours is the BPF clock. */
	res = bench_knob("notscb") ? CUPTI_ERROR_NOT_SUPPORTED :
	      cuptiActivityRegisterTimestampCallback(monotonic_timestamp);
	xpc.clock_method = res == CUPTI_SUCCESS ? XP_GPU_CLOCK_CALLBACK : XP_GPU_CLOCK_CALIBRATED;
	if (bench_knob("hwtrace") && (res = cuptiActivityEnableHWTrace(1)) != CUPTI_SUCCESS)
		xpc_log("XPCAP_BENCH=hwtrace: %s", cupti_error(res));
	if (bench_knob("prealloc"))
		prealloc_device_buffers();
	res = cuptiActivityRegisterCallbacks(xpc_buffer_requested, xpc_buffer_completed);
	if (res != CUPTI_SUCCESS)
		goto cupti_fail;
	xpc_callbacks_time_all(bench_knob("selftime_all"));
	err = xpc_callbacks_enable(xpc.sub, callback_level());
	if (!err && xpc.window_on)
		err = xpc_window_subscribe(xpc.sub);
	if (err) {
		res = (CUptiResult)err;
		goto cupti_fail;
	}
	return enable_kinds();

cupti_fail:
	{
		char text[160];

		snprintf(text, sizeof(text), "CUPTI setup: %s", cupti_error(res));
		xpc_status(XP_GPU_ST_CUPTI_ERROR, XP_GPU_STATUS_FATAL, (int32_t)res, text);
		xpc_log("%s; GPU tracing off", text);
	}
	return -EIO;
}

__attribute__((visibility("default")))
int InitializeInjection(void)
{
	static int once;
	const char *dir = getenv(XP_ENV_RUN_DIR);
	int err;

	if (__atomic_exchange_n(&once, 1, __ATOMIC_RELAXED))
		return 1;
	/* a setuid, setgid or file-capability program, or one that made
	 * itself non-dumpable before it used CUDA: its memory is not the
	 * user's to copy, and root must not create files in a directory that
	 * the user's environment names. One that does so later keeps its
	 * launch stacks out from then on (stacks.c). */
	if (getauxval(AT_SECURE) || prctl(PR_GET_DUMPABLE) != 1) {
		xpc_log("privileged program (secure execution or not dumpable); GPU tracing off");
		return 1;
	}
	xpc.pid = getpid();
	if (!dir || !*dir) {
		xpc_log("%s is not set; GPU tracing off", XP_ENV_RUN_DIR);
		return 1;
	}
	xpc.strings = xpc_strintern__new(&xpc.next_string_id);
	if (!xpc.strings) {
		xpc_log("out of memory; GPU tracing off");
		return 1;
	}
	xp_conv_init(&xpc.conv, xpc.strings, xpc_stage_emit, NULL);
	err = xpc_out_open(dir, xpc.pid);
	if (err) {
		xpc_log("cannot create %s/gpu-%d.xpr: %s; GPU tracing off", dir,
			(int)xpc.pid, strerror(-err));
		return 1;
	}
	if (env_flag("XPCAP_API_TRACE", 0))
		xpc.proc_flags |= XP_GPU_PROC_API_TRACE;
	if (env_flag("XPCAP_SYNC", 0))
		xpc.proc_flags |= XP_GPU_PROC_SYNC;
	if (env_flag("XPCAP_NVTX", 1))
		xpc.proc_flags |= XP_GPU_PROC_NVTX;
	xpc.proc_flags |= XP_GPU_PROC_OVERHEAD;
	xpc.window_on = xpc_window_configure();
	if (xpc_window_nvtx())
		xpc.proc_flags |= XP_GPU_PROC_NVTX;
	if (subscribe())
		goto off;
	if (configure()) {
		disable_kinds();
		cuptiUnsubscribe(xpc.sub);
		goto off;
	}
	if (xpc.window_on)
		xpc_window_start();
	xpc_write_process();
	xpc_write_clock_pair(0);
	if (atexit(at_exit) || pthread_atfork(NULL, NULL, at_fork_child)) {
		/* Without the exit flush the tail of the run would be lost
		 * silently: rather say so and trace nothing. */
		xpc_status(XP_GPU_ST_CUPTI_ERROR, XP_GPU_STATUS_FATAL, 0, "atexit failed");
		xpc_log("cannot register exit handler; GPU tracing off");
		disable_kinds();
		cuptiUnsubscribe(xpc.sub);
		goto off;
	}
	stacks_start(dir);
	__atomic_store_n(&xpc.active, 1, __ATOMIC_RELAXED);
	if (xpc_flusher_start())
		xpc_status(XP_GPU_ST_CUPTI_ERROR, XP_GPU_STATUS_WARN, 0,
			   "no flush thread: a killed program loses its last records");
	xpc_status(XP_GPU_ST_STARTED, XP_GPU_STATUS_INFO, 0, NULL);
	xpc_out_flush();
	return 1;

off:
	xpc_out_finish();
	return 1;
}

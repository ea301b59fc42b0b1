/* test-cupti-window.c - the capture window (cupti/window.c) never holds its
 * lock across a CUPTI call that may call back. cudaProfilerStop turns
 * activity off (cuptiActivityDisable), and CUPTI may hand buffers back from
 * inside that call: on the calling thread, or on its own thread while the
 * caller waits. The buffer-completion callback (buffers.c) asks the window
 * whether each record was launched inside it, under the window's lock; with
 * the lock held across the disable, that was a deadlock. Here CUPTI's
 * activity calls are replaced by ones that do exactly that (no GPU in CI),
 * the rest is the library's own code: the kernel launched inside the window
 * must reach the stream, and nothing may hang (CK_DEFAULT_TIMEOUT). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check-main.h"
#include "src/marker.h"
#include "src/runfile.h"
#include "src/runfmt_gpu.h"
#include "cupti/window.h"
#include "cupti/xpcupti.h"

#define CORR_START 5
#define CORR_KERNEL 7
#define CORR_STOP 9

static int deliver_on;                  /* 0: none, 1: this thread, 2: a thread of "CUPTI" */
static int delivered, handed;           /* the buffer went out once; GetNextRecord's state */
static CUpti_ActivityKernel10 kernel;

static void deliver(void)
{
	uint8_t *buf = malloc(64);

	handed = 0;
	xpc_buffer_completed(NULL, 0, buf, 64, 64);
}

static void *cupti_thread(void *arg)
{
	(void)arg;
	deliver();
	return NULL;
}

/* CUPTI may flush what it holds of a kind it turns off: here always, once */
CUptiResult CUPTIAPI cuptiActivityDisable(CUpti_ActivityKind kind)
{
	pthread_t t;

	(void)kind;
	if (!deliver_on || __atomic_exchange_n(&delivered, 1, __ATOMIC_RELAXED))
		return CUPTI_SUCCESS;
	if (deliver_on == 1) {
		deliver();
	} else {
		/* CUPTI's own thread delivers, the caller waits for it */
		ck_assert_int_eq(pthread_create(&t, NULL, cupti_thread, NULL), 0);
		pthread_join(t, NULL);
	}
	return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityEnable(CUpti_ActivityKind kind)
{
	(void)kind;
	return CUPTI_SUCCESS;
}

/* The buffer holds one kernel record, launched inside the window. */
CUptiResult CUPTIAPI cuptiActivityGetNextRecord(uint8_t *buffer, size_t valid, CUpti_Activity **rec)
{
	(void)buffer;
	(void)valid;
	if (handed++)
		return CUPTI_ERROR_MAX_LIMIT_REACHED;
	*rec = (CUpti_Activity *)&kernel;
	return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityGetNumDroppedRecords(CUcontext ctx, uint32_t stream, size_t *n)
{
	(void)ctx;
	(void)stream;
	*n = 0;
	return CUPTI_SUCCESS;
}

static void profiler_call(CUpti_CallbackId cbid, uint32_t corr)
{
	CUpti_CallbackData cb;

	memset(&cb, 0, sizeof(cb));
	cb.callbackSite = CUPTI_API_ENTER;
	cb.correlationId = corr;
	cb.functionName = "cudaProfilerStart";
	ck_assert_int_eq(xpc_window_event(CUPTI_CB_DOMAIN_RUNTIME_API, cbid, &cb), 1);
}

/* cudaProfilerStart, a kernel, cudaProfilerStop whose disable hands the
 * kernel's buffer back (how: deliver_on); the kernel must be in the stream. */
static void window_round(int how)
{
	char dir[] = "/tmp/xp-test-window-XXXXXX", path[256];
	struct xp_reader *r = NULL;
	const struct xp_record_header *h;
	int err, kernels = 0;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	setenv(XP_ENV_CAPTURE_RANGE, "cudaProfilerApi", 1);
	xpc.pid = getpid();
	xpc.strings = xpc_strintern__new(&xpc.next_string_id);
	xp_conv_init(&xpc.conv, xpc.strings, xpc_stage_emit, NULL);
	ck_assert_int_eq(xpc_out_open(dir, xpc.pid), 0);
	xpc.window_on = xpc_window_configure();
	ck_assert_int_eq(xpc.window_on, 1);
	xpc_window_start();
	xpc.active = 1;
	memset(&kernel, 0, sizeof(kernel));
	kernel.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
	kernel.correlationId = CORR_KERNEL;
	kernel.start = 100;
	kernel.end = 200;
	kernel.name = "inside";
	profiler_call(CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000, CORR_START);
	deliver_on = how;
	profiler_call(CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStop_v4000, CORR_STOP);
	ck_assert_int_eq(delivered, 1);
	xpc.active = 0;
	xpc_out_finish();

	snprintf(path, sizeof(path), "%s/gpu-%d.xpr", dir, (int)xpc.pid);
	err = xp_reader_open(&r, path);
	while (err == 0 && (err = xp_reader_next(r, &h)) > 0) {
		err = 0;
		if (h->type == XP_REC_GPU_KERNEL) {
			const struct xp_gpu_kernel *k = xp_record_payload(h);

			ck_assert_uint_eq(k->correlation_id, CORR_KERNEL);
			kernels++;
		}
	}
	ck_assert_int_eq(err, 0);
	ck_assert_int_eq(kernels, 1);
	xp_reader_close(r);
	unlink(path);
	rmdir(dir);
}

START_TEST(disable_delivers_on_the_calling_thread)
{
	window_round(1);
}
END_TEST

START_TEST(disable_waits_for_cuptis_thread)
{
	window_round(2);
}
END_TEST

static Suite *cupti_window_suite(void)
{
	Suite *s = suite_create("cupti-window");
	TCase *tc = tcase_create("window");

	/* each test in its own process (the library's state is global), and
	 * a deadlock ends as a timeout, not a hung test run */
	tcase_set_timeout(tc, 10);
	tcase_add_test(tc, disable_delivers_on_the_calling_thread);
	tcase_add_test(tc, disable_waits_for_cuptis_thread);
	suite_add_tcase(s, tc);
	return s;
}

XP_CHECK_MAIN(cupti_window_suite)

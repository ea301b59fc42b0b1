/* launchcost.c - the injection library's per-launch path on the CPU, part
 * by part, for bench/launch-cost (which loads it into python3 with ctypes:
 * the Python frames the walker reads are real ones).
 *
 * A launch is what CUPTI does for cudaLaunchKernel: xpc_api_callback on the
 * runtime ENTER, the driver ENTER, the driver EXIT and the runtime EXIT,
 * with --launch-stacks inproc on (xpc_stack_take from the first). The
 * parts are the same functions called alone from the same place: under
 * `native` bytes of C frames (as libtorch's dispatcher stands between
 * Python and the launch) and after `pollute` bytes of other memory were
 * written (the program's own work between launches). Each call is timed
 * alone; lc_round returns the median of n, and the base part (an empty
 * call) is the timer's own share, which the script subtracts.
 *   lc_start(dir, 65528, 1); lc_round(LC_LAUNCH, 2000, 7680, 262144); lc_finish();
 * Built with the library's own sources and flags, not sanitized. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "src/marker.h"
#include "cupti/autograd.h"
#include "cupti/launchring.h"
#include "cupti/pyframes.h"
#include "cupti/selftime.h"
#include "cupti/stackreuse.h"
#include "cupti/stacks.h"
#include "cupti/xpcupti.h"

#define EXPORT __attribute__((visibility("default")))
#ifndef XPC_SELF_TIME_CAP_NS
#define CAP_NS 50000u                   /* builds from before the cap */
#else
#define CAP_NS XPC_SELF_TIME_CAP_NS
#endif

enum {
	LC_BASE,        /* an empty call: the timer's own cost */
	LC_LAUNCH,      /* the four callbacks of one cudaLaunchKernel */
	LC_NOW,         /* one clock read (xpc_now) */
	LC_PYWALK,      /* the Python frames (xpc_py_take) */
	LC_KEY,         /* the launch's key and the reuse table (stackreuse.c) */
	LC_COPY,        /* the native stack copy a launch that copies makes */
	LC_RING,        /* a borrowed launch's record into a ring and published */
	LC_AUTOGRAD,    /* PyTorch's autograd state (xpc_autograd_take) */
	LC_PARTS
};

/* A kernel's name as CUPTI gives a PyTorch launch (the key hashes it). */
static const char kernel[] = "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_13BinaryFunctor"
	"IfffNS0_15binary_internal10MulFunctorIfEEEESt5arrayIPcLm3EEEEviT0_T1_";

#define MAX_N (1u << 16)
static uint64_t took[MAX_N];
static unsigned char work[32u << 20];
static uint64_t work_off;
static uint64_t corr = 1;
static uint64_t last_mean, last_p99, last_capped;       /* of the last lc_round */
static uint64_t last_copy;              /* bytes the copy part copied */
static uintptr_t stack_hi;

static uint64_t py[XPC_PYSTACK_MAX / 8], ag[XPC_AUTOGRAD_MAX / 8];
static unsigned char copy_dst[4u << 20] __attribute__((aligned(64)));
static uint64_t copy_off;
static struct xpc_ring ring;
static uint32_t copy_max;

/* the callback data CUPTI hands one launch's four callbacks */
struct cb_set {
	CUpti_CallbackData rt_enter, drv_enter, drv_exit, rt_exit;
	uint64_t rt_data, drv_data;
	int ret;
};

EXPORT int lc_start(const char *dir, unsigned copy, int pywalk)
{
	char path[512];
	int fd, err;

	xpc.pid = getpid();
	xpc.strings = xpc_strintern__new(&xpc.next_string_id);
	xp_conv_init(&xpc.conv, xpc.strings, xpc_stage_emit, NULL);
	if ((err = xpc_out_open(dir, xpc.pid)))
		return err;
	snprintf(path, sizeof(path), "%s/launch-%d.xpr", dir, (int)xpc.pid);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	if (!pywalk)
		xpc_py_disable();
	if ((err = xpc_stacks_start(fd, xpc.pid, copy)))
		return err;
	copy_max = copy;
	if (xpc_ring_init(&ring, 2u << 20, 4096))
		return -1;
	xpc_callbacks_enable(NULL, XPC_CALLBACKS_ALL);  /* fails without a GPU; sets up batching */
	xpc.active = 1;
	/* as init.c: its thread drains the API records */
	return xpc_flusher_start();
}

/* 1 once the autograd finder found libtorch_cpu.so's functions */
EXPORT int lc_autograd_on(void)
{
	uint64_t buf[128];

	return xpc_autograd_info(buf, sizeof(buf), 0, 0) &&
	       (((struct xp_autograd_info *)buf)->flags & XP_AUTOGRAD_INFO_ON);
}

EXPORT void lc_finish(uint64_t out[7])
{
	struct xpc_stacks_stats s;

	xpc_flusher_stop();
	xpc.active = 0;
	xpc_callbacks_drain_all();
	xpc_stacks_finish();
	xpc_out_finish();
	xpc_stacks_stats(&s);
#ifdef XPC_SELF_TIME_CAP_NS
	xpc_callbacks_self_time(&out[0], &out[1], &out[2], &out[6]);
#else   /* a build from before the cap, for comparisons */
	xpc_callbacks_self_time(&out[0], &out[1], &out[2]);
	out[6] = 0;
#endif
	out[3] = s.taken;
	out[4] = s.borrowed;
	out[5] = s.lost + s.copy_dropped;
}

static void cb_init(struct cb_set *c)
{
	memset(c, 0, sizeof(*c));
	c->rt_enter.callbackSite = CUPTI_API_ENTER;
	c->rt_enter.functionName = "cudaLaunchKernel";
	c->rt_enter.symbolName = kernel;
	c->rt_enter.correlationData = &c->rt_data;
	c->drv_enter = c->rt_enter;
	c->drv_enter.functionName = "cuLaunchKernel";
	c->drv_enter.correlationData = &c->drv_data;
	c->drv_exit = c->drv_enter;
	c->drv_exit.callbackSite = CUPTI_API_EXIT;
	c->drv_exit.functionReturnValue = &c->ret;
	c->rt_exit = c->rt_enter;
	c->rt_exit.callbackSite = CUPTI_API_EXIT;
	c->rt_exit.functionReturnValue = &c->ret;
}

static void cb_next(struct cb_set *c)
{
	uint32_t id = (uint32_t)corr++;

	c->rt_enter.correlationId = c->drv_enter.correlationId = id;
	c->drv_exit.correlationId = c->rt_exit.correlationId = id;
}

static uint64_t stack_sp(void)
{
	uint64_t sp;

	__asm__ volatile("mov %%rsp, %0" : "=r"(sp));
	return sp;
}

/* One call of the part; the callers hold the frames and the timer. */
__attribute__((noinline)) static void one(int part, struct cb_set *c, uintptr_t eval)
{
	uintptr_t e;

	switch (part) {
	case LC_BASE:
		break;
	case LC_LAUNCH:
		xpc_api_callback(NULL, CUPTI_CB_DOMAIN_RUNTIME_API,
				 CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, &c->rt_enter);
		xpc_api_callback(NULL, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
				 &c->drv_enter);
		xpc_api_callback(NULL, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
				 &c->drv_exit);
		xpc_api_callback(NULL, CUPTI_CB_DOMAIN_RUNTIME_API,
				 CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, &c->rt_exit);
		break;
	case LC_NOW:
		__asm__ volatile("" : : "r"(xpc_now()));
		break;
	case LC_PYWALK:
		xpc_py_take(py, 1, corr, 1, &e);
		break;
	case LC_KEY: {
		const struct xp_pystack *ps = (const void *)py;
		uint32_t len = (uint32_t)(sizeof(*ps) + ps->nframes * sizeof(struct xp_pyframe)), id;
		/* a depth of its own: the launches' keys keep their counts */
		uint64_t k = xpc_reuse_key(XP_CBID(0, 211), kernel, 0x5151, ps + 1,
					   len - (uint32_t)sizeof(*ps));

		__asm__ volatile("" : : "r"(xpc_reuse_decide(k, &id)));
		break;
	}
	case LC_COPY: {
		uint64_t sp = stack_sp(), n = stack_hi > sp ? stack_hi - sp : 0;

		/* as stacks.c's plan(): to the innermost evaluation, else all */
		n = n < copy_max ? n : copy_max;
		if (eval > sp && eval < stack_hi && eval - sp + 1024 < n)
			n = eval - sp + 1024;
		n &= ~7ull;
		last_copy = n;
		if (copy_off + n > sizeof(copy_dst))
			copy_off = 0;
		memcpy(copy_dst + copy_off, (const void *)sp, n);
		copy_off = (copy_off + n + 255) & ~255ull;
		break;
	}
	case LC_RING: {
		uint64_t pos;
		void *p = xpc_ring_reserve(&ring, 104, 0, &pos);

		if (p) {
			memcpy(p, py, 104);
			xpc_ring_publish(&ring, pos);
		}
		break;
	}
	case LC_AUTOGRAD:
		xpc_autograd_take(ag, corr, 1);
		break;
	}
	__asm__ volatile("" ::: "memory");
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static uint64_t now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static uint64_t run(int part, uint64_t n, uint64_t pollute)
{
	struct cb_set c;
	uintptr_t eval = 0;
	size_t len;
	uint16_t note;

	cb_init(&c);
	xpc_py_take(py, 1, corr, 1, &eval);
	for (uint64_t i = 0; i < n; i++) {
		uint64_t t0;

		for (uint64_t b = 0; b < pollute; b += 64) {
			work[work_off] = (unsigned char)i;
			work_off = (work_off + 64) % sizeof(work);
		}
		cb_next(&c);
		t0 = now();
		one(part, &c, eval);
		took[i] = now() - t0;
		if (part == LC_RING && xpc_ring_next(&ring, &len, &note))
			xpc_ring_release(&ring);
	}
	uint64_t i;

	qsort(took, n, sizeof(took[0]), cmp_u64);
	/* the mean over the fastest 99%: a launch's share of the rare slow
	 * ones (a batch drained, a full copy) without the other programs'
	 * preemptions of a loaded machine */
	last_mean = 0;
	for (i = 0; i < n - n / 100; i++)
		last_mean += took[i];
	last_mean /= n - n / 100;
	last_p99 = took[n - 1 - n / 100];
	/* the mean of the calls under the self-timer's cap: what a launch
	 * costs on average, its rare slow ones (a drain, a copy) included */
	last_capped = 0;
	for (i = 0; i < n && took[i] <= CAP_NS; i++)
		last_capped += took[i];
	last_capped = i ? last_capped / i : 0;
	return took[n / 2];
}

/* native bytes of C frames, about FRAME a level, then the part */
#define FRAME 192
__attribute__((noinline)) static uint64_t descend(uint64_t levels, int part, uint64_t n,
						  uint64_t pollute)
{
	volatile unsigned char pad[FRAME - 32];
	uint64_t r;

	pad[0] = (unsigned char)levels;
	r = levels ? descend(levels - 1, part, n, pollute) : run(part, n, pollute);
	__asm__ volatile("" : : "r"(pad[0]) : "memory");   /* not a tail call */
	return r;
}

/* The median ns of one call of part, n calls (at most 65536). */
EXPORT uint64_t lc_round(int part, uint64_t n, uint64_t native, uint64_t pollute)
{
	pthread_attr_t a;
	void *lo;
	size_t size;

	if (part < 0 || part >= LC_PARTS || !n)
		return 0;
	if (!stack_hi && !pthread_getattr_np(pthread_self(), &a)) {
		if (!pthread_attr_getstack(&a, &lo, &size))
			stack_hi = (uintptr_t)lo + size;
		pthread_attr_destroy(&a);
	}
	if (n > MAX_N)
		n = MAX_N;
	return descend(native / FRAME, part, n, pollute);
}

/* The last round's mean over its fastest 99%, its 99th percentile, the
 * bytes a copy took, and its mean under the self-timer's cap. */
EXPORT void lc_last(uint64_t out[4])
{
	out[3] = last_capped;
	out[0] = last_mean;
	out[1] = last_p99;
	out[2] = last_copy;
}

/* Launches that lost their copy or their record so far (the writer fell
 * behind): the bench says how many of them fell in its timed rounds. */
EXPORT uint64_t lc_dropped(void)
{
	struct xpc_stacks_stats st;

	xpc_stacks_stats(&st);
	return st.lost + st.copy_dropped;
}

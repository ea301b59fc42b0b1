/* window.c - the capture window inside the program: xpcap record
 * --capture-range cudaProfilerApi | nvtx:NAME [--capture-range-count N],
 * --delay S and --duration S.
 *
 * Outside the window the program runs with CUPTI activity off and the
 * launch-class callbacks off, so it pays no more than CUPTI's subscription
 * and the few callbacks that open the window: cudaProfilerStart/Stop (and
 * the driver's cuProfilerStart/Stop under them), or NVTX ranges. Inside
 * it, everything is on as in a run without a window. xpcap passes the
 * window in the environment (marker.h), the times as absolute
 * CLOCK_MONOTONIC ns, so a child that execs later keeps the same bounds.
 * Each opening and closing is a status record (XP_GPU_ST_WINDOW), and for
 * a range also a call of the marker (XP_CBID_WINDOW_OPEN/CLOSE): xpcap's
 * uprobe sees it, and writes CPU samples only inside the window.
 *
 * An activity record can arrive after its window closed (a kernel launched
 * just before cudaProfilerStop ends later): what is kept is what was
 * launched inside, by correlation id against the ids of the calls that
 * opened and closed the window (cudaProfilerApi) or by the activity being
 * off outside (NVTX and time windows have no id of their own).
 *
 * win.lock guards the window's state only; no CUPTI call is ever made
 * under it. CUPTI may hand activity buffers back from inside
 * cuptiActivityDisable/Enable (on the calling thread, or on its own thread
 * while the caller waits), and the buffer-completion callback takes
 * win.lock (xpc_window_keeps, under conv_lock): holding win.lock across
 * those calls deadlocked (tests/test-cupti-window.c). A transition changes
 * the state under the lock, then switch_cupti() brings CUPTI to the
 * latest state with no lock held; a thread that finds another already
 * switching leaves the work to it and never waits.
 *   XPCAP_CAPTURE_RANGE=nvtx:step XPCAP_CAPTURE_RANGE_COUNT=2 ...
 */
#include "cupti/window.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cupti.h>
#include <generated_nvtx_meta.h>

#include "src/marker.h"
#include "cupti/xpcupti.h"

#define MAX_SPANS 64                    /* correlation bounds kept per process */

enum { RANGE_NONE, RANGE_PROFILER, RANGE_NVTX };

struct corr_span {
	uint64_t lo;                    /* correlation id of the opening call, 0: none */
	uint64_t hi;                    /* of the closing call, 0: open or none */
};

static struct {
	int configured;                 /* a window was given */
	int range;                      /* RANGE_* */
	char name[256];                 /* nvtx:NAME */
	unsigned count;                 /* ranges to record */
	uint64_t from_ns, until_ns;     /* time bounds; until 0: none */
	pthread_mutex_t lock;           /* guards what follows */
	int open;
	int done;                       /* no window will open again */
	unsigned opened;                /* ranges opened so far */
	pid_t owner_tid;                /* nvtx: the thread whose range opened it */
	int owner_depth;                /* its push depth inside that range */
	uint64_t owner_id;              /* or the nvtxRangeStart id, 0: a push */
	unsigned nspans;
	struct corr_span spans[MAX_SPANS];
} win = { .lock = PTHREAD_MUTEX_INITIALIZER, .count = 1 };

static __thread int nvtx_depth;         /* pushes open on this thread */

/* CUPTI's side of the window, apart from win.lock (switch_cupti) */
static struct {
	int busy;                       /* atomic: a thread is switching */
	int again;                      /* atomic: the state changed since it read it */
	int on;                         /* the switcher's: what CUPTI has now */
} sw = { .on = 1 };                     /* on after configure(), before start */

static uint64_t env_u64(const char *name)
{
	const char *v = getenv(name);
	char *end;
	unsigned long long n;

	if (!v || !*v)
		return 0;
	errno = 0;
	n = strtoull(v, &end, 10);
	return errno || *end ? 0 : (uint64_t)n;
}

int xpc_window_configure(void)
{
	const char *r = getenv(XP_ENV_CAPTURE_RANGE);
	uint64_t count = env_u64(XP_ENV_CAPTURE_COUNT);

	win.from_ns = env_u64(XP_ENV_WINDOW_FROM);
	win.until_ns = env_u64(XP_ENV_WINDOW_UNTIL);
	if (r && !strcmp(r, "cudaProfilerApi")) {
		win.range = RANGE_PROFILER;
	} else if (r && !strncmp(r, "nvtx:", 5) && r[5] && strlen(r + 5) < sizeof(win.name)) {
		win.range = RANGE_NVTX;
		snprintf(win.name, sizeof(win.name), "%s", r + 5);
	} else if (r && *r) {
		xpc_log("%s=%s is not cudaProfilerApi or nvtx:NAME; no capture window",
			XP_ENV_CAPTURE_RANGE, r);
		return 0;
	}
	win.count = count ? (unsigned)(count < 1000000 ? count : 1000000) : 1;
	win.configured = win.range != RANGE_NONE || win.from_ns || win.until_ns;
	return win.configured;
}

int xpc_window_nvtx(void)
{
	return win.range == RANGE_NVTX;
}

static int time_allows(uint64_t now)
{
	return now >= win.from_ns && (!win.until_ns || now < win.until_ns);
}

static void say(int opened, unsigned n, const char *why)
{
	char text[400];

	snprintf(text, sizeof(text), "capture window %u %s (%s)", n,
		 opened ? "opened" : "closed", why);
	xpc_status(XP_GPU_ST_WINDOW, XP_GPU_STATUS_INFO, opened, text);
}

/* CUPTI's callbacks and activity to the window's latest state, with no
 * lock held (the header says why). One thread switches at a time; a
 * thread that finds one switching sets `again` and returns, and the
 * switcher reads the state once more before it stops. */
static void switch_cupti(void)
{
	__atomic_store_n(&sw.again, 1, __ATOMIC_SEQ_CST);
	while (__atomic_load_n(&sw.again, __ATOMIC_SEQ_CST) &&
	       !__atomic_exchange_n(&sw.busy, 1, __ATOMIC_SEQ_CST)) {
		int want;

		__atomic_store_n(&sw.again, 0, __ATOMIC_SEQ_CST);
		pthread_mutex_lock(&win.lock);
		want = win.open;
		pthread_mutex_unlock(&win.lock);
		if (want != sw.on) {
			xpc_callbacks_switch(want);
			xpc_activity_switch(want);
			sw.on = want;
		}
		__atomic_store_n(&sw.busy, 0, __ATOMIC_SEQ_CST);
	}
}

/* What a transition made under win.lock leaves to do after it. */
struct change {
	int happened;
	int opened;
	unsigned n;                     /* the window's number */
	const char *why;
};

/* After win.lock is released: CUPTI switched, the marker's call (xpcap's
 * uprobe sees the range), the status record. */
static void settle(const struct change *c)
{
	if (!c->happened)
		return;
	switch_cupti();
	if (win.range != RANGE_NONE)
		xpcap_correlation_marker(0, c->opened ? XP_CBID_WINDOW_OPEN : XP_CBID_WINDOW_CLOSE);
	say(c->opened, c->n, c->why);
}

/* Everything on, as without a window. Caller holds win.lock. */
static void open_locked(uint64_t corr, const char *why, struct change *c)
{
	if (win.open || win.done)
		return;
	win.open = 1;
	win.opened++;
	if (win.range == RANGE_PROFILER && win.nspans < MAX_SPANS)
		win.spans[win.nspans++] = (struct corr_span){ .lo = corr };
	__atomic_add_fetch(&xpc.window_gen, 1, __ATOMIC_RELEASE);
	*c = (struct change){ 1, 1, win.opened, why };
}

/* Everything off; the last range, or the end of --duration, ends it for
 * good. Caller holds win.lock. */
static void close_locked(uint64_t corr, const char *why, int last, struct change *c)
{
	if (!win.open)
		return;
	win.open = 0;
	if (win.range == RANGE_PROFILER && win.nspans)
		win.spans[win.nspans - 1].hi = corr;
	if (last || (win.range != RANGE_NONE && win.opened >= win.count))
		win.done = 1;
	*c = (struct change){ 1, 0, win.opened, why };
}

void xpc_window_start(void)
{
	uint64_t now = xpc_now();
	struct change c = { 0 };

	pthread_mutex_lock(&win.lock);
	if (win.range == RANGE_NONE && time_allows(now)) {
		/* open from the start: only the end of --duration will close it */
		win.open = 1;
		win.opened = 1;
	} else {
		c = (struct change){ 1, 0, 0, win.range == RANGE_PROFILER ? "until cudaProfilerStart" :
				     win.range == RANGE_NVTX ? "until the NVTX range" :
				     "until --delay ends" };
	}
	pthread_mutex_unlock(&win.lock);
	if (c.happened) {
		switch_cupti();
		say(0, 0, c.why);
	}
}

void xpc_window_tick(uint64_t now)
{
	struct change c = { 0 };

	if (!win.configured)
		return;
	pthread_mutex_lock(&win.lock);
	if (win.until_ns && now >= win.until_ns) {
		close_locked(0, "--duration ended", 1, &c);
		win.done = 1;
	} else if (win.range == RANGE_NONE && time_allows(now)) {
		open_locked(0, "--delay ended", &c);
	}
	pthread_mutex_unlock(&win.lock);
	settle(&c);
}

uint64_t xpc_window_deadline(uint64_t now)
{
	uint64_t d = 0;

	if (!win.configured || win.done)
		return 0;
	if (win.range == RANGE_NONE && now < win.from_ns)
		d = win.from_ns;
	else if (win.until_ns && now < win.until_ns)
		d = win.until_ns;
	return d;
}

static pid_t gettid_now(void)
{
	return (pid_t)syscall(SYS_gettid);
}

/* cudaProfilerStart/Stop, and cuProfilerStart/Stop under them (already
 * open or closed then: nothing happens). */
static void profiler_event(int start, uint64_t corr)
{
	struct change c = { 0 };

	pthread_mutex_lock(&win.lock);
	if (start && time_allows(xpc_now()))
		open_locked(corr, "cudaProfilerStart", &c);
	else if (!start)
		close_locked(corr, "cudaProfilerStop", 0, &c);
	pthread_mutex_unlock(&win.lock);
	settle(&c);
}

static const char *attr_name(const nvtxEventAttributes_t *a)
{
	if (!a || a->messageType != NVTX_MESSAGE_TYPE_ASCII)
		return NULL;
	return a->message.ascii;
}

/* The name a range call gives, or NULL (wide and registered strings are
 * not compared). */
static const char *nvtx_name(CUpti_CallbackId cbid, const void *params)
{
	switch (cbid) {
	case CUPTI_CBID_NVTX_nvtxRangePushA:
		return ((const nvtxRangePushA_params *)params)->message;
	case CUPTI_CBID_NVTX_nvtxRangeStartA:
		return ((const nvtxRangeStartA_params *)params)->message;
	case CUPTI_CBID_NVTX_nvtxRangePushEx:
		return attr_name(((const nvtxRangePushEx_params *)params)->eventAttrib);
	case CUPTI_CBID_NVTX_nvtxRangeStartEx:
		return attr_name(((const nvtxRangeStartEx_params *)params)->eventAttrib);
	case CUPTI_CBID_NVTX_nvtxDomainRangePushEx:
		return attr_name(((const nvtxDomainRangePushEx_params *)params)->core.eventAttrib);
	case CUPTI_CBID_NVTX_nvtxDomainRangeStartEx:
		return attr_name(((const nvtxDomainRangeStartEx_params *)params)->core.eventAttrib);
	}
	return NULL;
}

static int nvtx_is(CUpti_CallbackId cbid, int what)
{
	switch (cbid) {
	case CUPTI_CBID_NVTX_nvtxRangePushA: case CUPTI_CBID_NVTX_nvtxRangePushW:
	case CUPTI_CBID_NVTX_nvtxRangePushEx: case CUPTI_CBID_NVTX_nvtxDomainRangePushEx:
		return what == 'p';
	case CUPTI_CBID_NVTX_nvtxRangePop: case CUPTI_CBID_NVTX_nvtxDomainRangePop:
		return what == 'o';
	case CUPTI_CBID_NVTX_nvtxRangeStartA: case CUPTI_CBID_NVTX_nvtxRangeStartW:
	case CUPTI_CBID_NVTX_nvtxRangeStartEx: case CUPTI_CBID_NVTX_nvtxDomainRangeStartEx:
		return what == 's';
	case CUPTI_CBID_NVTX_nvtxRangeEnd: case CUPTI_CBID_NVTX_nvtxDomainRangeEnd:
		return what == 'e';
	}
	return 0;
}

static uint64_t end_id(CUpti_CallbackId cbid, const void *params)
{
	if (cbid == CUPTI_CBID_NVTX_nvtxDomainRangeEnd)
		return ((const nvtxDomainRangeEnd_params *)params)->core.id;
	return ((const nvtxRangeEnd_params *)params)->id;
}

/* A push opens at this thread's new depth and the pop back to below it
 * closes; a start opens and the end of the same id closes. */
static void nvtx_event(CUpti_CallbackId cbid, const CUpti_NvtxData *d)
{
	struct change c = { 0 };
	const char *name;

	if (nvtx_is(cbid, 'p'))
		nvtx_depth++;
	if (!d || !d->functionParams)
		goto out;
	pthread_mutex_lock(&win.lock);
	if (!win.open && (nvtx_is(cbid, 'p') || nvtx_is(cbid, 's'))) {
		name = nvtx_name(cbid, d->functionParams);
		if (name && !strcmp(name, win.name) && !win.done && time_allows(xpc_now())) {
			win.owner_tid = gettid_now();
			win.owner_depth = nvtx_depth;
			win.owner_id = nvtx_is(cbid, 's') && d->functionReturnValue ?
				       *(const nvtxRangeId_t *)d->functionReturnValue : 0;
			open_locked(0, win.name, &c);
		}
	} else if (win.open && nvtx_is(cbid, 'o') && !win.owner_id &&
		   nvtx_depth == win.owner_depth && gettid_now() == win.owner_tid) {
		close_locked(0, win.name, 0, &c);
	} else if (win.open && nvtx_is(cbid, 'e') && win.owner_id &&
		   end_id(cbid, d->functionParams) == win.owner_id) {
		close_locked(0, win.name, 0, &c);
	}
	pthread_mutex_unlock(&win.lock);
	settle(&c);
out:
	if (nvtx_is(cbid, 'o') && nvtx_depth > 0)
		nvtx_depth--;
}

static int profiler_call(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, int *start)
{
	if (domain == CUPTI_CB_DOMAIN_RUNTIME_API)
		*start = cbid == CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000 ? 1 :
			 cbid == CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStop_v4000 ? 0 : -1;
	else if (domain == CUPTI_CB_DOMAIN_DRIVER_API)
		*start = cbid == CUPTI_DRIVER_TRACE_CBID_cuProfilerStart ? 1 :
			 cbid == CUPTI_DRIVER_TRACE_CBID_cuProfilerStop ? 0 : -1;
	else
		*start = -1;
	return *start >= 0;
}

int xpc_window_event(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void *cbdata)
{
	const CUpti_CallbackData *cb = cbdata;
	int live = win.configured && !__atomic_load_n(&win.done, __ATOMIC_RELAXED), start;

	if (domain == CUPTI_CB_DOMAIN_NVTX) {
		if (live)
			nvtx_event(cbid, cbdata);
		return 1;
	}
	/* only a window enables these: never treated as launch-class calls */
	if (!profiler_call(domain, cbid, &start))
		return 0;
	if (live && win.range == RANGE_PROFILER && cb->callbackSite == CUPTI_API_ENTER)
		profiler_event(start, cb->correlationId);
	return 1;
}

int xpc_window_subscribe(CUpti_SubscriberHandle sub)
{
	static const CUpti_CallbackId nvtx_ids[] = {
		CUPTI_CBID_NVTX_nvtxRangePushA, CUPTI_CBID_NVTX_nvtxRangePushW,
		CUPTI_CBID_NVTX_nvtxRangePushEx, CUPTI_CBID_NVTX_nvtxRangePop,
		CUPTI_CBID_NVTX_nvtxRangeStartA, CUPTI_CBID_NVTX_nvtxRangeStartW,
		CUPTI_CBID_NVTX_nvtxRangeStartEx, CUPTI_CBID_NVTX_nvtxRangeEnd,
		CUPTI_CBID_NVTX_nvtxDomainRangePushEx, CUPTI_CBID_NVTX_nvtxDomainRangePop,
		CUPTI_CBID_NVTX_nvtxDomainRangeStartEx, CUPTI_CBID_NVTX_nvtxDomainRangeEnd,
	};
	CUptiResult res = CUPTI_SUCCESS;

	if (win.range == RANGE_PROFILER) {
		res = cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_RUNTIME_API,
					  CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000);
		if (res == CUPTI_SUCCESS)
			res = cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_RUNTIME_API,
						  CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStop_v4000);
		if (res == CUPTI_SUCCESS)
			res = cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_DRIVER_API,
						  CUPTI_DRIVER_TRACE_CBID_cuProfilerStart);
		if (res == CUPTI_SUCCESS)
			res = cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_DRIVER_API,
						  CUPTI_DRIVER_TRACE_CBID_cuProfilerStop);
	}
	for (size_t i = 0; win.range == RANGE_NVTX && res == CUPTI_SUCCESS &&
	     i < sizeof(nvtx_ids) / sizeof(nvtx_ids[0]); i++)
		res = cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_NVTX, nvtx_ids[i]);
	return res == CUPTI_SUCCESS ? 0 : (int)res;
}

/* The correlation id of an activity record that has one, else 0. */
static uint64_t correlation_of(const CUpti_Activity *rec)
{
	switch (rec->kind) {
	case CUPTI_ACTIVITY_KIND_KERNEL:
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
		return ((const CUpti_ActivityKernel10 *)rec)->correlationId;
	case CUPTI_ACTIVITY_KIND_MEMCPY:
		return ((const CUpti_ActivityMemcpy6 *)rec)->correlationId;
	case CUPTI_ACTIVITY_KIND_MEMCPY2:
		return ((const CUpti_ActivityMemcpyPtoP4 *)rec)->correlationId;
	case CUPTI_ACTIVITY_KIND_MEMSET:
		return ((const CUpti_ActivityMemset4 *)rec)->correlationId;
	case CUPTI_ACTIVITY_KIND_RUNTIME:
	case CUPTI_ACTIVITY_KIND_DRIVER:
		return ((const CUpti_ActivityAPI *)rec)->correlationId;
	default:
		return 0;
	}
}

int xpc_window_keeps(const CUpti_Activity *rec)
{
	uint64_t corr;
	int keep = 0;

	if (win.range != RANGE_PROFILER || !(corr = correlation_of(rec)))
		return 1;
	pthread_mutex_lock(&win.lock);
	for (unsigned i = 0; i < win.nspans && !keep; i++)
		keep = corr > win.spans[i].lo && (!win.spans[i].hi || corr < win.spans[i].hi);
	/* more ranges than spans kept: the later ones are not checked */
	keep |= win.nspans == MAX_SPANS;
	pthread_mutex_unlock(&win.lock);
	return keep;
}

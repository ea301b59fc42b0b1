/* xpcupti.h - state shared by the files of the injection library.
 *
 * One process, one session: init.c fills `xpc` inside cuInit, callbacks.c
 * and buffers.c feed records through output.c into run/gpu-<pid>.xpr.
 * Nothing here is exported (the library is built -fvisibility=hidden with a
 * version script): the only public symbols are InitializeInjection and the
 * marker. */
#ifndef XPCUPTI_H
#define XPCUPTI_H

#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>

#include <cupti.h>

#include "cupti/convert.h"
#include "src/runfile.h"
#include "src/runfmt_gpu.h"
#include "cupti/strintern.h"

#define XPC_LOG_PREFIX "xpcap-cupti: "

struct xpc_state {
	int active;                     /* atomic: callbacks and buffers record */
	pid_t pid;                      /* getpid() at init; 0 before */
	uint32_t proc_flags;            /* XP_GPU_PROC_* in force */
	uint32_t clock_method;          /* enum xp_gpu_clock_method */
	uint32_t next_string_id;        /* shared by all string ids (atomic) */
	int window_on;                  /* a capture window was given (window.c) */
	uint32_t window_gen;            /* atomic: bumped as each window opens */
	CUpti_SubscriberHandle sub;

	pthread_mutex_t out_lock;       /* guards w and out_closed */
	struct xp_writer *w;            /* NULL: nothing can be written */
	int out_closed;                 /* set at exit: drop further records */

	pthread_mutex_t conv_lock;      /* guards conv and strings */
	struct xp_conv conv;
	struct xpc_strintern *strings;
	uint64_t cupti_dropped;         /* records CUPTI reported dropped */
};

extern struct xpc_state xpc;

/* output.c */
/* Creates dir/name (new, never through a link): an fd, or -errno. dir must
 * be absolute and free of "..". */
int xpc_run_file_create(const char *dir, const char *name);
int xpc_out_open(const char *dir, pid_t pid);
int xpc_emit(void *ctx, uint32_t type, const void *fixed, size_t fixed_len,
	     const void *tail, size_t tail_len);
void xpc_out_flush(void);
/* Conversion side (call with conv_lock held): stage records, then append
 * them under one out_lock hold. xpc_stage_emit is the xp_conv emit fn. */
int xpc_stage_emit(void *ctx, uint32_t type, const void *fixed, size_t fixed_len,
		   const void *tail, size_t tail_len);
void xpc_stage_flush(void);
void xpc_out_finish(void);
/* One line to stderr for the life of the process, then silence. */
void xpc_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A status record (if the stream is open); text may be NULL. */
void xpc_status(uint32_t code, uint32_t severity, int32_t detail, const char *text);
uint64_t xpc_now(void);

/* callbacks.c */
/* API records a thread keeps before writing them itself: the flusher
 * (buffers.c) drains them every XPC_API_DRAIN_MS until XPC_API_DRAIN_HOLD_MS
 * after its last drain that found some (at its 500 ms period before), so
 * a thread fills its batch (and then takes out_lock, maybe writes a MiB)
 * only at over 256k launch-class calls a second, or in the first period.
 * Before: 64, drained by the thread itself, 7% of its time in our code
 * (bench/launch-cost), a write() included. */
#define XPC_API_BATCH 512
#define XPC_API_DRAIN_MS 2
#define XPC_API_DRAIN_HOLD_MS 1000
void CUPTIAPI xpc_api_callback(void *userdata, CUpti_CallbackDomain domain,
			       CUpti_CallbackId cbid, const void *cbdata);
enum xpc_callback_level {
	XPC_CALLBACKS_ALL,          /* runtime and driver launch-class calls (default) */
	XPC_CALLBACKS_DRIVER,       /* driver calls only (XPCAP_CALLBACKS=driver) */
	XPC_CALLBACKS_NONE,         /* activity records only (XPCAP_CALLBACKS=none) */
};
int xpc_callbacks_enable(CUpti_SubscriberHandle sub, enum xpc_callback_level level);
/* The launch-class callbacks on or off (the capture window, window.c). */
void xpc_callbacks_switch(int on);
/* Writes the API records every thread has batched (flusher, exit). */
uint64_t xpc_callbacks_drain_all(void);     /* records written */
/* The library's own ns on the outermost calls it timed (one in 64): at the
 * call (the launch stack) and at its return (the API record). */
/* Our own ns at the call and at its return, summed over the calls timed
 * (selftime.h), and how many timed calls took over XPC_SELF_TIME_CAP_NS
 * (left out of the sums) */
void xpc_callbacks_self_time(uint64_t *enter_ns, uint64_t *exit_ns, uint64_t *calls,
			     uint64_t *slow);
void xpc_callbacks_time_all(int on);   /* time every call, not one in 64 at random */

/* The correlation id of the outermost tracked CUDA call open on this
 * thread, 0 outside one (a captured launch's, while CUPTI makes its node). */
uint64_t xpc_open_correlation(void);

/* graphs.c */
void xpc_graph_event(CUpti_CallbackId cbid, const CUpti_ResourceData *rd);
int xpc_graphs_enable(CUpti_SubscriberHandle sub);

/* init.c: the activity kinds on, or off but for DEVICE (window.c) */
void xpc_activity_switch(int on);

/* buffers.c */
void CUPTIAPI xpc_buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records);
void CUPTIAPI xpc_buffer_completed(CUcontext ctx, uint32_t stream_id, uint8_t *buffer,
				   size_t size, size_t valid_size);
int xpc_flusher_start(void);
/* At exit: the last forced flush, on the flusher, waited for at most
 * FLUSHER_JOIN_MS (buffers.c): 0, or -ETIMEDOUT with it left running. */
int xpc_flusher_stop(void);

/* meta/procinfo.c */
void xpc_write_process(void);
void xpc_write_clock_pair(uint32_t when);

/* marker.c: exported, see src/marker.h */
__attribute__((visibility("default")))
void xpcap_correlation_marker(uint64_t correlation_id, uint32_t cbid);

#endif

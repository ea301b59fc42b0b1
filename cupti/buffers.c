/* buffers.c - CUPTI activity buffers in, GPU records out, and the flusher.
 *
 * CUPTI asks for a buffer (xpc_buffer_requested), fills it from its own
 * threads, and hands it back (xpc_buffer_completed) on its worker thread,
 * or on the thread that calls cuptiActivityFlushAll. Conversion runs under
 * conv_lock (one buffer at a time: the string table is not thread-safe);
 * records go out through output.c. Buffers are per thread and come in any
 * order, so readers join by correlation id.
 *
 * The flusher thread calls cuptiActivityFlushAll every XP_GPU_FLUSH_PERIOD_MS and
 * writes what is buffered, so that a SIGKILL or a crash loses at most about
 * that much: atexit handlers do not run then. While threads launch (and
 * XPC_API_DRAIN_HOLD_MS after), it also drains their API records
 * (callbacks.c) every XPC_API_DRAIN_MS, so that they do not write them
 * (and the GPU stream's MiB) on their own time. At exit it makes the last,
 * forced flush, and the exit handler waits for it at most FLUSHER_JOIN_MS:
 * every CUPTI call of ours that can block (on CUPTI's threads, on the
 * completion callback's conv_lock, on a write()) runs on this thread, which
 * the program's exit waits for only that long (README: Never making the
 * program wait).
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cupti/joinwait.h"
#include "cupti/window.h"
#include "cupti/xpcupti.h"

#define BUFFER_SIZE (8u << 20)      /* CUPTI suggests 1-10 MB */

void CUPTIAPI xpc_buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
	/* CUPTI wants 8-byte alignment; a NULL buffer makes CUPTI drop and count. */
	*buffer = aligned_alloc(8, BUFFER_SIZE);
	*size = *buffer ? BUFFER_SIZE : 0;
	*max_records = 0;
}

void CUPTIAPI xpc_buffer_completed(CUcontext ctx, uint32_t stream_id, uint8_t *buffer,
				   size_t size, size_t valid_size)
{
	CUpti_Activity *rec = NULL;
	size_t dropped = 0;

	(void)size;
	/* Ask before taking our lock: CUPTI may take its own locks here. */
	if (cuptiActivityGetNumDroppedRecords(ctx, stream_id, &dropped) != CUPTI_SUCCESS)
		dropped = 0;
	if (__atomic_load_n(&xpc.active, __ATOMIC_RELAXED) && buffer) {
		pthread_mutex_lock(&xpc.conv_lock);
		while (cuptiActivityGetNextRecord(buffer, valid_size, &rec) == CUPTI_SUCCESS)
			if (!xpc.window_on || xpc_window_keeps(rec))
				xp_convert_activity(&xpc.conv, rec);
		xpc.cupti_dropped += dropped;
		xp_conv_emit_losses(&xpc.conv, xpc_now(), dropped);
		xpc_stage_flush();
		pthread_mutex_unlock(&xpc.conv_lock);
	}
	free(buffer);
}

/* The longest the program's exit waits for the last flush: converting
 * some full 8 MiB buffers takes a few hundred ms */
#define FLUSHER_JOIN_MS 2000

static pthread_t flusher;
static int flusher_running;
static int flusher_stop;
static pthread_mutex_t flusher_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t flusher_cond;

static void *flusher_main(void *arg)
{
	struct timespec until;
	uint64_t flushed = xpc_now();
	uint64_t found = 0;             /* when a drain last found API records */

	(void)arg;
	pthread_mutex_lock(&flusher_lock);
	while (!flusher_stop) {
		uint64_t now = xpc_now(), next = flushed + XP_GPU_FLUSH_PERIOD_MS * 1000000ull;
		uint64_t bound = xpc_window_deadline(now);
		int drain_only = 0;

		/* wake at the capture window's next time bound too, and to
		 * drain the launching threads' API records */
		if (bound && bound < next)
			next = bound;
		if (found && now - found < XPC_API_DRAIN_HOLD_MS * 1000000ull &&
		    now + XPC_API_DRAIN_MS * 1000000ull < next) {
			next = now + XPC_API_DRAIN_MS * 1000000ull;
			drain_only = 1;
		}
		until.tv_sec = (time_t)(next / 1000000000ull);
		until.tv_nsec = (long)(next % 1000000000ull);
		pthread_cond_timedwait(&flusher_cond, &flusher_lock, &until);
		if (flusher_stop)
			break;
		pthread_mutex_unlock(&flusher_lock);
		if (xpc.window_on && !drain_only)
			xpc_window_tick(xpc_now());
		if (__atomic_load_n(&xpc.active, __ATOMIC_RELAXED)) {
			if (!drain_only)
				cuptiActivityFlushAll(0);
			if (xpc_callbacks_drain_all())
				found = xpc_now();
			if (!drain_only)
				xpc_out_flush();
		}
		if (!drain_only)
			flushed = xpc_now();
		pthread_mutex_lock(&flusher_lock);
	}
	pthread_mutex_unlock(&flusher_lock);
	/* the exit's flush, here: the exit handler waits for it bounded */
	cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	return NULL;
}

int xpc_flusher_start(void)
{
	pthread_condattr_t ca;
	sigset_t all, old;
	int err;

	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&flusher_cond, &ca);
	pthread_condattr_destroy(&ca);
	/* The thread must never take the program's signals (SIGINT, SIGCHLD...):
	 * it is created with all of them blocked. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&flusher, NULL, flusher_main, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err)
		return -err;
	flusher_running = 1;
	return 0;
}

int xpc_flusher_stop(void)
{
	if (!flusher_running) {
		/* no thread to run it on: the exit makes the flush itself */
		cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
		return 0;
	}
	pthread_mutex_lock(&flusher_lock);
	flusher_stop = 1;
	pthread_cond_signal(&flusher_cond);
	pthread_mutex_unlock(&flusher_lock);
	if (xpc_join_bounded(flusher, FLUSHER_JOIN_MS))
		return -ETIMEDOUT;          /* left running, maybe holding our locks */
	flusher_running = 0;
	return 0;
}

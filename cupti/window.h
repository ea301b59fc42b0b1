/* window.h - the capture window inside the program (window.c): recording
 * only between cudaProfilerStart/Stop, inside an NVTX range, or between
 * --delay and --duration; CUPTI activity and launch callbacks off outside.
 *   if (xpc_window_configure()) ...            // InitializeInjection, from the env
 *   xpc_window_subscribe(sub);                 // the calls that open and close it
 *   xpc_window_start();                        // off until it opens
 *   if (xpc_window_event(domain, cbid, data)) return;   // first in the callback
 *   if (!xpc_window_keeps(rec)) continue;      // activity launched outside
 */
#ifndef XPC_WINDOW_H
#define XPC_WINDOW_H

#include <stdint.h>

#include <cupti.h>

/* 1 when the environment gives a window, else 0 (then nothing else here
 * does anything). */
int xpc_window_configure(void);
/* A window of NVTX ranges: NVTX must stay on. */
int xpc_window_nvtx(void);
/* Enables the callbacks that open and close it: 0 or a CUptiResult. */
int xpc_window_subscribe(CUpti_SubscriberHandle sub);
/* Once tracing is configured: turns it off unless the window is open now. */
void xpc_window_start(void);
/* A callback of the window's own calls (NVTX, cudaProfilerStart/Stop):
 * handled, 1; else 0 and the callback goes on. */
int xpc_window_event(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void *cbdata);
/* The flusher: opens or closes at the time bounds. */
void xpc_window_tick(uint64_t now);
/* The next time bound after now (CLOCK_MONOTONIC ns), or 0. */
uint64_t xpc_window_deadline(uint64_t now);
/* 0 for an activity record of a call made outside the window. */
int xpc_window_keeps(const CUpti_Activity *rec);

#endif

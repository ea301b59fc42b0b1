/* marker.h - the correlation marker: the contract between the CUPTI
 * injection library (which calls it) and xpcap's uprobe (which fires on it).
 *
 * The injection library exports this symbol, never inlined, with a 5-byte
 * nop as its first instruction so the kernel can optimize the uprobe. It is
 * called on ENTER of the outermost launch-class CUDA API call of a thread:
 *   xpcap_correlation_marker(cbdata->correlationId, XP_CBID(domain, cbid));
 * The uprobe reads the two arguments from the registers (rdi, rsi). */
#ifndef XP_MARKER_H
#define XP_MARKER_H

#include <stdint.h>

#define XP_MARKER_SYMBOL "xpcap_correlation_marker"
/* cbid as recorded: the CUPTI callback id, bit 31 set for the driver API. */
#define XP_CBID_DRIVER (1u << 31)
#define XP_CBID(is_driver, cbid) ((uint32_t)(cbid) | ((is_driver) ? XP_CBID_DRIVER : 0u))

/* Environment the injection library reads (set by xpcap record). */
#define XP_ENV_RUN_DIR "XPCAP_RUN_DIR"      /* where to write gpu-<pid>.xpr */
/* --launch-stacks inproc: the library takes launch stacks itself, into
 * launch-<pid>.xpr, and calls the marker only if that cannot start. */
#define XP_ENV_LAUNCH_STACKS "XPCAP_LAUNCH_STACKS"  /* "inproc" */
#define XP_ENV_LAUNCH_COPY "XPCAP_LAUNCH_COPY"      /* bytes of stack per launch; 0: fp walk */
#define XP_ENV_PYFRAMES "XPCAP_PYFRAMES"            /* "0": no Python frames at launches */
#define XP_ENV_STACK_REUSE "XPCAP_STACK_REUSE"      /* "0": every launch copies its stack */
/* The capture window (xpcap record --capture-range, --delay, --duration):
 * outside it the library records nothing and CUPTI activity is off. */
#define XP_ENV_CAPTURE_RANGE "XPCAP_CAPTURE_RANGE"  /* "cudaProfilerApi" | "nvtx:NAME" */
#define XP_ENV_CAPTURE_COUNT "XPCAP_CAPTURE_RANGE_COUNT"  /* ranges to record, default 1 */
#define XP_ENV_WINDOW_FROM "XPCAP_WINDOW_FROM_NS"   /* CLOCK_MONOTONIC ns: nothing before */
#define XP_ENV_WINDOW_UNTIL "XPCAP_WINDOW_UNTIL_NS" /* CLOCK_MONOTONIC ns: nothing after */
/* The library calls the marker with correlation id 0 and one of these as
 * its range window opens and closes: xpcap's drain then writes CPU samples
 * only while a window is open (no CUPTI callback id comes near them). */
#define XP_CBID_WINDOW_OPEN 0x7fff0001u
#define XP_CBID_WINDOW_CLOSE 0x7fff0002u

#endif

/* pyframes.h - Python stacks at launches (records in src/runfmt_py.h).
 *
 * At the start of in-process launch stacks, looks once for a CPython
 * interpreter in this process (symbols, version, build) without linking or
 * initializing it. At each launch, on a thread that runs Python, walks that
 * thread's interpreter frames without the GIL and without calling the
 * interpreter: the frames become an XP_REC_PYSTACK next to the launch record,
 * and each code object met for the first time an XP_REC_PYCODE, queued for
 * the writer thread. stacks.c drives it:
 *
 *   xpc_py_start(pid);                                  // once, before launches
 *   n = xpc_py_take(slot_space, ts, corr, tid, &eval);  // per launch: bytes, 0 = none
 *   n = xpc_py_ready(); xpc_py_drain(writer, &n);       // writer thread: PYCODE records
 *
 * Nothing here allocates, locks or calls into the interpreter after
 * xpc_py_start; interpreter memory is read with bounded loops and sanity
 * checks (the frame chain of the calling thread), or with process_vm_readv
 * where a bad pointer is possible (strings, line tables, a new thread state). */
#ifndef XPCUPTI_PYFRAMES_H
#define XPCUPTI_PYFRAMES_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "src/runfmt_py.h"

struct xp_writer;

/* Bytes xpc_py_take may write: a pystack record's payload, all frames. */
#define XPC_PYSTACK_MAX (sizeof(struct xp_pystack) + XP_PY_MAX_FRAMES * sizeof(struct xp_pyframe))

struct xpc_py_stats {
	uint64_t no_thread;             /* launching thread had no Python thread state or frame */
	uint64_t unsupported;           /* interpreter present but not known to the walker */
	uint64_t unreadable;            /* a check failed mid-walk: stack dropped */
	uint64_t truncated;             /* stacks cut at XP_PY_MAX_FRAMES (also in with_stack) */
	uint64_t codes;                 /* code object records queued */
	uint64_t codes_lost;            /* code records that found the queue full or too large */
};

/* Turns the walker off for this process (before xpc_py_start). */
void xpc_py_disable(void);
/* Looks for the interpreter; afterwards xpc_py_info says what it found.
 * Allocates the code table and queue when the interpreter is supported. */
void xpc_py_start(pid_t pid);
/* Whether the walker runs (after xpc_py_start), and the one-line reason
 * that XP_REC_PYINFO carries (the version and offsets, or why not). */
int xpc_py_on(void);
const char *xpc_py_reason(void);
/* The XP_REC_PYINFO payload (struct + reason + padding) into buf; its size. */
size_t xpc_py_info(void *buf, size_t size, uint64_t ts);
/* The calling thread's Python frames as an XP_REC_PYSTACK payload at dst
 * (XPC_PYSTACK_MAX bytes of room, 8-byte aligned; written as the walk goes,
 * so the caller's own memory, not the ring): its size, or 0 for none
 * (counted).
 * *eval: where on the thread's C stack the innermost Python evaluation
 * runs, a local of its _PyEval_EvalFrameDefault (3.11: the _PyCFrame that
 * tstate->cframe names; 3.12+: the entry frame, the first frame up the
 * chain that the C stack owns); 0 if not known (walker off, no Python on
 * this thread, 3.10). Above it the native stack is the interpreter's own,
 * which the Python stack already says: launch stack copies can stop there. */
uint32_t xpc_py_take(void *dst, uint64_t ts, uint64_t correlation_id, uint32_t tid,
		     uintptr_t *eval);
/* Writer thread only: bytes of code records queued whole now. */
size_t xpc_py_ready(void);
/* Writer thread only: appends queued code records within *bytes of the
 * queue (taken from it), or drops them (w NULL); how many. */
uint64_t xpc_py_drain(struct xp_writer *w, size_t *bytes);
void xpc_py_stats(struct xpc_py_stats *out);

#endif

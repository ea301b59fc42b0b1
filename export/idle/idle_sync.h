/* idle_sync.h - the CUDA calls in which a process's threads were blocked
 * waiting for the GPU, for `xpcorr report --by idle` (view_idle.c): every
 * synchronize (cudaStreamSynchronize, cudaDeviceSynchronize,
 * cudaEventSynchronize, cuStreamSynchronize, ...), every copy call that is
 * not asynchronous (cudaMemcpy, cuMemcpyDtoH, ...) and every asynchronous
 * copy to pageable host memory (which returns only when the copy is done),
 * from the CUPTI API records; each with the stack of its launch record, else
 * the nearest launch record's of the same thread (a call the injection
 * library took no stack for is named by the line its thread was at).
 *
 *   struct xp_sync_call *c; size_t n;
 *   if (xp_idle_syncs_load(db, gpid, &c, &n) == 0) { ...; free(c); }
 */
#ifndef XP_IDLE_SYNC_H
#define XP_IDLE_SYNC_H

#include <stddef.h>
#include <stdint.h>
#include <sqlite3.h>

struct xp_sync_call {
	int64_t gtid, start, end;   /* the calling thread (globalTid) and the call's interval */
	int64_t stack;              /* xp_stacks id, -1: no launch record on its thread */
};

/* The process's (of globalTid gpid) blocking calls, by thread then start,
 * into *out (malloc'd, NULL when none): 0, -EIO or -ENOMEM. */
int xp_idle_syncs_load(sqlite3 *db, int64_t gpid, struct xp_sync_call **out, size_t *n);

#endif

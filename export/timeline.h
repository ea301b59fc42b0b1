/* timeline.h - one device's GPU work as a timeline, what the analyses
 * (--by idle, --by launch, --by overlap) read: its kernels, copies and sets
 * in start order, each with the CUDA call that launched it, the collectives
 * of a job matched across ranks (the k-th launch of one NCCL kernel name on
 * every rank is one collective), and a sweep that splits a window into
 * segments of one class each: compute over communication over memory over
 * waiting for another rank over idle.
 *
 *   struct xp_tl tl;
 *   if (xp_tl_load(db, gpid, device, &tl) == 0) {
 *           xp_tl_sweep(&tl, w0, w1, on_segment, ctx);   // [w0, w1) in ns
 *           xp_tl_free(&tl);
 *   }
 */
#ifndef XP_TIMELINE_H
#define XP_TIMELINE_H

#include <stddef.h>
#include <stdint.h>
#include <sqlite3.h>

enum xp_tl_class {
	XP_TL_COMPUTE,              /* kernels other than collectives */
	XP_TL_COMM,                 /* NCCL and gloo kernels, once every rank is there */
	XP_TL_MEM,                  /* memcpy, memset */
	XP_TL_RANK,                 /* a collective's kernel before the last rank started it */
	XP_TL_IDLE,                 /* nothing ran */
	XP_TL_CLASSES
};

/* SQL: whether a kernel name (a text column) is a collective library's. */
#define XP_SQL_IS_COLLECTIVE(name) "(" name " LIKE 'nccl%' OR " name " LIKE '%gloo%')"

struct xp_tl_op {
	int64_t start, end;         /* ns on the GPU */
	int64_t launch;             /* its CUDA call's start, or -1 without one */
	int64_t launch_end;         /* the call's return, or -1 */
	int64_t gtid;               /* the launching thread (globalTid), or -1 */
	int64_t stack;              /* the launch stack, or -1 */
	int64_t name;               /* StringIds id of the kernel's name, or -1 (copies, sets) */
	int64_t api_name;           /* StringIds id of the launching call's name, or -1 */
	int64_t stream;
	int64_t wait;               /* collectives: ns from start until the last rank started */
	int64_t late_pid;           /* and that rank's process (pid of xp_ranks), or -1 */
	int cls;                    /* enum xp_tl_class: compute, comm or mem */
};

struct xp_tl {
	int64_t gpid, device;
	struct xp_tl_op *ops;       /* by start */
	size_t n;
};

/* The (globalPid, deviceId) pairs with GPU work, where filter (a WHERE
 * text over the columns gp and start, see xp_rep_filter) holds; bound by
 * bind(ctx, stmt). *out malloc'd pairs. 0, -EIO or -ENOMEM. */
int xp_tl_devices(sqlite3 *db, const char *filter, void (*bind)(void *ctx, sqlite3_stmt *s),
		  void *ctx, int64_t (**out)[2], size_t *n);
/* Loads the device's work (rows without timestamps left out: the device's
 * buffer was full, XP_GPU_F_NO_TIMESTAMP). 0, -EIO or -ENOMEM. */
int xp_tl_load(sqlite3 *db, int64_t gpid, int64_t device, struct xp_tl *tl);
void xp_tl_free(struct xp_tl *tl);

/* One segment [a, b) of class cls; op: the latest started op of that class
 * still running (NULL for idle). */
typedef void (*xp_tl_segment_fn)(void *ctx, int64_t a, int64_t b, int cls, const struct xp_tl_op *op);
/* Calls fn for every segment of [w0, w1), in order, adjacent segments of
 * one class merged when their op is the same. 0 or -ENOMEM. */
int xp_tl_sweep(const struct xp_tl *tl, int64_t w0, int64_t w1, xp_tl_segment_fn fn, void *ctx);
/* The rank of a process (a globalPid) in xp_ranks, or -1. */
int64_t xp_tl_rank(sqlite3 *db, int64_t gpid);
/* The p-th percentile (0..100, nearest rank) of n sorted values; 0 if n is 0. */
int64_t xp_tl_percentile(const int64_t *sorted, size_t n, double p);
/* Sorts n values in place. */
void xp_tl_sort(int64_t *v, size_t n);
/* The index of the first op starting at or after t (tl->n if none). */
size_t xp_tl_first_from(const struct xp_tl *tl, int64_t t);

#endif

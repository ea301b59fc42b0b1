/* timeline.h - one device's GPU work as a timeline, what the analyses
 * (--by idle, --by launch, --by overlap) read: its kernels, copies and sets
 * in start order, each with the CUDA call that launched it, the collectives
 * of a job matched across ranks (the k-th launch of one NCCL kernel name on
 * every rank is one collective), and a sweep that splits a window into
 * segments of one class each: compute over communication over memory over
 * waiting for another rank over idle.
 *
 *   struct xp_tl_set set;
 *   if (xp_tl_load_all(db, &set) == 0) {
 *           for (size_t i = 0; i < set.ndev; i++)
 *                   xp_tl_sweep(&set.dev[i], w0, w1, on_segment, ctx);   // [w0, w1) in ns
 *           xp_tl_set_free(&set);
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
/* SQL (a SELECT): every collective kernel of a job's ranks as one instance
 * of its collective: the i-th launch of its name in its process is the
 * i-th instance on every rank. Columns id (kernel rowid), gp (globalPid),
 * start, nm (demangledName), i. */
#define XP_SQL_COLL_KERNELS \
	"SELECT k.rowid AS id, k.globalPid AS gp, k.start AS start, k.demangledName AS nm," \
	" row_number() OVER (PARTITION BY k.globalPid, k.demangledName ORDER BY k.start) AS i" \
	" FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds n ON n.id = k.demangledName" \
	" WHERE " XP_SQL_IS_COLLECTIVE("n.value") " AND (k.globalPid >> 24) IN (SELECT pid FROM xp_ranks)"

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
	int host;                   /* a collective the host waited in (host_coll.h), no GPU
				     * work: [start, end) its wait; the sweep sees its
				     * wait for the last rank alone */
};

struct xp_tl {
	int64_t gpid, device;
	struct xp_tl_op *ops;       /* by start */
	int64_t *reach;             /* reach[i]: the latest end of ops[0..i] */
	size_t n, cap;
};

/* A CUDA call (CUPTI_ACTIVITY_KIND_RUNTIME row). */
struct xp_tl_api {
	int64_t start, end, gtid, name;
	int64_t stack;              /* -1: not looked up */
	int64_t corr;               /* correlationId, or -1 */
};

struct xp_tl_set {
	struct xp_tl *dev;          /* by (globalPid, deviceId) */
	size_t ndev, dev_cap;
	struct xp_tl_api *api;      /* every CUDA call, in table order */
	size_t napi, api_cap;
};

/* Every device's work, in one pass over each table (rows without
 * timestamps left out: the device's buffer was full). 0, -EIO or -ENOMEM. */
int xp_tl_load_all(sqlite3 *db, struct xp_tl_set *set);
void xp_tl_set_free(struct xp_tl_set *set);
/* Whether --pid pid (0: every process) selects the process of gpid (in a
 * merged job, the pid on every host). */
int xp_tl_selected(int64_t gpid, uint32_t pid);
/* Whether work of the device starts in [since, until) (until 0: no end). */
int xp_tl_in_window(const struct xp_tl *tl, int64_t since, int64_t until);

/* One segment [a, b) of class cls; op: the latest started op of that class
 * still running (NULL for idle). */
typedef void (*xp_tl_segment_fn)(void *ctx, int64_t a, int64_t b, int cls, const struct xp_tl_op *op);
/* Calls fn for every segment of [w0, w1), in order, adjacent segments of
 * one class merged when their op is the same. 0 or -ENOMEM. */
int xp_tl_sweep(const struct xp_tl *tl, int64_t w0, int64_t w1, xp_tl_segment_fn fn, void *ctx);
/* The rank of a process (a globalPid) in xp_ranks into *rank, -1 when it
 * has none. 0 or -EIO (sqlite3_errmsg). */
int xp_tl_rank(sqlite3 *db, int64_t gpid, int64_t *rank);
/* The clock alignment's error of a merged job (its runs' largest spread,
 * xp_job_runs.spread_ns), 0 for one run (one clock). */
int64_t xp_tl_clock_error(sqlite3 *db);
/* The p-th percentile (0..100, nearest rank) of n sorted values; 0 if n is 0. */
int64_t xp_tl_percentile(const int64_t *sorted, size_t n, double p);
/* Sorts n values in place. */
void xp_tl_sort(int64_t *v, size_t n);
/* The index of the first op starting at or after t (tl->n if none). */
size_t xp_tl_first_from(const struct xp_tl *tl, int64_t t);
/* The device of a rank's host taken alone: a CPU-only rank's timeline,
 * which holds its host-side collectives (host_coll.h) and nothing else. */
#define XP_TL_HOST_ONLY (-1)
/* How reports name a timeline's device: "device 2", or "host only (no
 * GPU work)" for XP_TL_HOST_ONLY. */
void xp_tl_device_name(int64_t device, char *out, size_t len);
/* A timeline of gpid's host alone (device XP_TL_HOST_ONLY, no ops) added
 * to set in its order; NULL when out of memory. */
struct xp_tl *xp_tl_add_host(struct xp_tl_set *set, int64_t gpid);
/* n ops (by start) added to tl among its own, by start (an op added after
 * the device's ops of the same start): indices of tl's ops move. 0 or
 * -ENOMEM (tl unchanged). */
int xp_tl_insert(struct xp_tl *tl, const struct xp_tl_op *add, size_t n);

#endif

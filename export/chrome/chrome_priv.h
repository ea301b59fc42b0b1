/* chrome_priv.h - what the parts of the Chrome trace writer share: the writer
 * state, the event header every event starts with, and the time and pid
 * filter added to each query. chrome_cpu.c writes the CPU threads' events,
 * chrome_gpu.c the GPU streams' and the flows, chrome_meta.c the names,
 * device properties and stack frames, chrome.c puts the file together. */
#ifndef XP_CHROME_PRIV_H
#define XP_CHROME_PRIV_H

#include "export/chrome/chrome.h"
#include "export/chrome/chrome_names.h"
#include "export/render/jsonw.h"
#include "export/names/launchsite.h"
#include "src/u64map.h"

struct xp_chrome_track;                /* chrome_gpu.c: one per (device, process, stream) */

struct xp_chrome {
	sqlite3 *db;
	const struct xp_chrome_opts *o;
	struct jsonw w;
	struct xp_chrome_stats st;
	struct xp_chrome_track *tracks;   /* GPU tracks seen so far: a few, never per event */
	size_t ntracks, cap_tracks;
	int64_t first_gpu_pid;         /* flows of this process use the bare correlation id */
	int job;                       /* a merged job: each run's GPUs a process of their own */
	uint64_t next_flow_id;         /* ids of the other flows, from 2^32 up */
	struct xp_chrome_names *strings;  /* StringIds values by id */
	struct xp_chrome_names *leaves;   /* a stack's leaf function by xp_stacks id */
	uint8_t *used_stacks;          /* bit per xp_stacks id that an event names */
	int64_t nstacks;               /* ids in used_stacks: to the largest, or as many
					* as the rows allow (xp_chrome_stacks_init) */
	struct xp_u64map used_far;     /* the used ids from nstacks up */
	struct xp_sites *sites;        /* a stack's launch site in words, for args */
	struct xp_sites *capture_sites; /* ... the program's own line (graph captures) */
};

/* Opens an event object and writes ph, cat, name, pid, tid and ts; the caller
 * adds its own keys and closes it with jsonw_obj_end. cat may be NULL. */
void xp_chrome_event_begin(struct xp_chrome *c, const char *ph, const char *cat, const char *name,
			      int64_t pid, int64_t tid, int64_t ts_ns);

/* Prepares "SELECT_FROM WHERE where AND <filters> ORDER BY order" with the
 * options' time window on time_col and pid filter on pid_expr (either may be
 * NULL: no such filter), and binds them. 0 or -EIO. */
int xp_chrome_prepare(struct xp_chrome *c, sqlite3_stmt **st, const char *select_from,
			 const char *where, const char *time_col, const char *pid_expr,
			 const char *order);

/* Writes "sf": the event's stack (an xp_stacks leaf), kept for stackFrames. */
void xp_chrome_sf(struct xp_chrome *c, int64_t stack_id);
/* Writes args' "launch_site" of a stack ("train.py:42 forward › aten::mm"):
 * Perfetto shows args, not "sf". 0 or -ENOMEM/-EIO. */
int xp_chrome_site_arg(struct xp_chrome *c, int64_t stack_id);

/* Whether a time is inside the options' window (for the far end of a flow). */
int xp_chrome_in_window(const struct xp_chrome *c, int64_t ts);

int xp_chrome_cpu_events(struct xp_chrome *c);       /* API slices, NVTX, samples */
int xp_chrome_op_slices(struct xp_chrome *c);        /* cpu_op, python_function (chrome_ops.c) */
int xp_chrome_gpu_events(struct xp_chrome *c);       /* kernels, copies, sets, flows */
int xp_chrome_graph_replays(struct xp_chrome *c);    /* CUDA graph replays around their kernels */
int xp_chrome_idle_events(struct xp_chrome *c);      /* GPU idle gaps per device (chrome_idle.c) */
/* The trace pid of a device of a process (globalPid). */
int64_t xp_chrome_device_pid(const struct xp_chrome *c, int64_t device, int64_t gpid);
/* The trace's thread id of the GPU track of a row whose columns 2, 3, 4 and 6
 * are device, context, stream and globalPid (named when new). 0 or -ENOMEM. */
int xp_chrome_gpu_track(struct xp_chrome *c, sqlite3_stmt *st, int64_t *pid, int64_t *tid);
int xp_chrome_fwdbwd(struct xp_chrome *c);
/* One end of a flow (ph "s", or "f" bound to the slice that encloses ts),
 * its cat and name cat. */
void xp_chrome_flow_event(struct xp_chrome *c, const char *cat, const char *ph, uint64_t id,
			  int64_t pid, int64_t tid, int64_t ts);          /* forward launch -> backward kernels */
void xp_chrome_gpu_fini(struct xp_chrome *c);
/* "rank 1 on node-b, pid 4000" (a merged job's process: 1), "rank 1" or "" (0). */
int xp_chrome_process_label(struct xp_chrome *c, int64_t pid, char *buf, size_t len);
int xp_chrome_thread_names(struct xp_chrome *c);     /* process and thread name metadata */
int xp_chrome_device_properties(struct xp_chrome *c);
int xp_chrome_stacks_init(struct xp_chrome *c);     /* the bitmap of used stacks */
void xp_chrome_stacks_free(struct xp_chrome *c);
/* The frames of the stacks that events named, with their callers. */
int xp_chrome_stack_frames(struct xp_chrome *c);

#endif

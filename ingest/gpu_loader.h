/* gpu_loader.h - what the files of the GPU stream loader share: the
 * loader's state and the calls between its parts. gpu_load.c walks a
 * stream and checks each record, gpu_strings.c maps the stream's string ids
 * to StringIds, gpu_rows.c writes one record's row, gpu_clock.c finishes
 * NVTX ranges and CUPTI's clock after the stream, launch_writer.c is
 * XP_REC_LAUNCH -> xp_launches. Private to ingest/.
 */
#ifndef XP_GPU_LOADER_H
#define XP_GPU_LOADER_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

#include "ingest/gpu_ingest.h"
#include "src/gtid.h"
#include "src/runfmt_gpu.h"
#include "src/u64map.h"

#define GLOBAL_PID(p) xp_gpid(p)
#define GLOBAL_TID(p, t) xp_gtid(p, t)

/* Per-stream string id -> StringIds ids: entries in order of definition,
 * found through src/u64map (the ids come from the stream, which is hostile
 * input: the shared map's hash, not one of our own). */
struct str_entry {
	uint32_t id;                /* stream id */
	int64_t sid;                /* StringIds id of the text */
	int64_t demangled;          /* kernel names: StringIds ids, -1 until computed */
	int64_t shortname;
	char *text;
};

/* The loader's insert statements, one per table. */
enum { S_KERNEL, S_MEMCPY, S_MEMSET, S_SYNC, S_API, S_NVTX, S_NVTX_END, S_DEVICE, S_PROC,
       S_STATUS, S_CLOCK, S_LOST, S_GRAPH, S_RANK, S_COUNT };

struct gpu_loader {
	sqlite3 *db;
	const char *path;           /* base name, for source columns */
	const struct xp_gpu_sink_ops *ops;
	void *ctx;
	struct xp_gpu_load_stats *st;
	struct str_entry *tab;
	size_t cap, used;
	struct xp_u64map tab_index; /* stream id -> 1 + its index in tab */
	int64_t unknown_sid;
	uint32_t pid;               /* mapped pid */
	uint32_t own_pid;
	uint32_t header_pid;
	uint32_t clock_method;      /* of the last process record */
	struct xp_gpu_clock clk[2]; /* first pair at start, last at exit */
	int have_clk[2];
	int64_t first_rowid[6];     /* rows of this stream: rowid > these */
	sqlite3_stmt *ins[S_COUNT];
};

/* gpu_strings.c: 0 or -errno (-EIO: the sink failed) */
int xp_gpuload_str_add(struct gpu_loader *L, uint32_t id, const char *text, size_t len);
struct str_entry *xp_gpuload_str_get(struct gpu_loader *L, uint32_t id);
/* StringIds id of a stream string id ("[unknown]" for one never defined), <0 error */
int64_t xp_gpuload_name_sid(struct gpu_loader *L, uint32_t id);
/* a kernel's mangled, demangled and short names as StringIds ids */
int xp_gpuload_kernel_names(struct gpu_loader *L, uint32_t id, int64_t *mangled, int64_t *dem,
			    int64_t *shrt);

/* gpu_rows.c: 0 or -errno (-EIO: read sqlite3_errmsg) */
int xp_gpuload_prepare_rows(struct gpu_loader *L);
int xp_gpuload_record(struct gpu_loader *L, const struct xp_record_header *h);
int xp_gpuload_status(struct gpu_loader *L, const struct xp_gpu_status *t);
int xp_gpuload_step(sqlite3_stmt *s);

/* gpu_clock.c: 0 or -EIO */
int xp_gpuload_first_rowids(struct gpu_loader *L);
int xp_gpuload_finish_nvtx(struct gpu_loader *L);
int xp_gpuload_calibrate(struct gpu_loader *L);

#endif

/* loader.h - what the files of the run loader share (load.c puts a run
 * together, frames.c names addresses, stacks.c builds the stack tree,
 * records.c turns records into rows; load.c's parts are loader_db.c,
 * load_meta.c, load_stream.c, load_gpu.c and load_finish.c): the loader
 * state and the helpers they call in each other (xp_loader_*). Private to
 * ingest/. */
#ifndef XP_LOADER_H
#define XP_LOADER_H

#include "ingest/load.h"
#include "db/launch.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ingest/backward.h"
#include "ingest/borrowed.h"
#include "db/db_schema.h"
#include "ingest/gpu_ingest.h"
#include "ingest/kallsyms.h"
#include "ingest/mappings.h"
#include "db/ownframes.h"
#include "src/runmeta.h"
#include "src/runnames.h"
#include "src/gtid.h"
#include "ingest/perfmap.h"
#include "ingest/pysplice.h"
#include "ingest/pystacks.h"
#include "ingest/pystacks_db.h"
#include "ingest/pywaits.h"
#include "src/runfile.h"
#include "src/runfmt_gpu.h"
#include "src/runfmt_py.h"
#include "db/stackwriter.h"
#include "ingest/symbolize.h"
#include "ingest/unwind.h"
#include "src/utf8.h"
#include "src/u64map.h"


#define MAX_STREAMS 4096            /* *.xpr files per run */
#define PROGRESS_EVERY 65536        /* records between progress calls */
#define NAME_MAX_LEN 1024           /* longest symbol name kept */

/* ipcache key tags (top byte of k1): what k2 means */
#define TAG_MODULE  (1ull << 56)    /* k1: module id, k2: file offset */
#define TAG_JIT     (2ull << 56)    /* k1: pid, k2: address (perf map) */
#define TAG_KERNEL  (3ull << 56)    /* k2: kernel address */
#define TAG_UNKNOWN (4ull << 56)    /* k1: pid, k2: address with no mapping */
#define TAG_PYTHON  (5ull << 56)    /* k1: code index (pystacks.h), k2: instruction offset */

/* An ipcache value is a frame id, or with CHAIN set an inline chain:
 * (start in L->chains) << 5 | frame count */
#define CHAIN (1ull << 62)

enum { STMT_SAMPLE, STMT_TASK, STMT_MAPPING, STMT_MODULE, STMT_LOSS, STMT_META, STMT_COUNT, STMT_WARNING, STMT_THREAD,
       STMT_PROCESS, STMT_ENV, STMT_LAUNCH, STMT_SWITCH, NSTMT };

struct node_info {
	uint16_t depth;             /* frames from the root, this one included */
	uint16_t resolved;          /* of which symbolized */
};

struct loader {
	sqlite3 *db;
	const struct xp_load_opts *o;
	struct xp_load_result *res;
	sqlite3_stmt *st[NSTMT];
	struct xp_stackwriter *w;   /* StringIds, xp_frames, xp_stacks (db/stackwriter.h) */
	uint8_t *frame_resolved;    /* by frame id: bit 0 symbolized, then enum xp_pyrole << 1 */
	size_t frame_cap;
	uint8_t *frame_own;         /* by frame id: enum xp_own (db/ownframes.h) */
	size_t own_cap;
	struct node_info *nodes;    /* by stack node id */
	size_t node_cap;
	struct xp_u64map ipcache;   /* TAG_* keys -> frame id */
	struct xp_u64map rawstacks; /* 128-bit hash of (pid, IPs) -> stack id */
	struct xp_mappings *maps;
	struct xp_symbolizer *sym;
	struct xp_unwinder *uw;     /* dwarf-mode stack copies */
	struct xp_borrowed *borrowed; /* launch stacks' frames by key (borrowed.h) */
	uint64_t walked[2 * XP_MAX_STACK_DEPTH]; /* kernel IPs + unwound user IPs */
	struct xp_kallsyms *ksyms;
	struct xp_u64map perfmaps;  /* pid -> index + 1 in pmaps, or UINT64_MAX: none */
	struct xp_perfmap **pmaps;
	size_t npmaps, pmaps_cap;
	struct xp_u64map pm_inodes; /* (dev, inode) -> index + 1 in pmaps, 0: unusable */
	struct xp_perfmap_budget pm_budget; /* what the run's maps may still take */
	struct xp_u64map threads;   /* (pid, tid) -> comm string id */
	struct xp_u64map procs;     /* (pid, 0) -> name string id, 0 until named */
	uint64_t counts[128];       /* records per type in the current stream */
	uint64_t lost_records;
	uint64_t bytes_done, bytes_total;
	struct xp_read_budget budget; /* what the run's readers may still take */
	uint64_t max_records;       /* budget.records as it started, for messages */
	char budget_hint[256];      /* budget_hint()'s text */
	uint64_t *stream_records;   /* by stream: records pass 1 took, for pass 2 */
	int64_t kallsyms_bytes;     /* meta.json's size of the kallsyms copy, or -1 */
	char kallsyms_error[128];   /* meta.json's why the copy is missing, or "" */
	const char *ksyms_cut;      /* why the copy is taken as truncated, or NULL */
	uint64_t ksyms_beyond;      /* kernel addresses past its last symbol */
	int64_t *chains;            /* frame ids of inline chains, root first */
	size_t nchains, chains_cap;
	char (*inl)[XP_INLINE_NAME_LEN]; /* scratch for inline names */
	int64_t kernel_module, unknown_module, jit_module;
	struct xp_pystore *py;      /* Python stacks of launches (pystacks.h) */
	struct xp_pywaits *pyw;     /* the calls a normal user's waits blocked in (pywaits.h) */
	struct xp_agstore *ag;      /* PyTorch autograd at launches (backward.h) */
	uint32_t stream_pid;        /* header pid of the stream being read */
	int64_t gap_frame;          /* the gap frame of pysplice.h, 0 until needed */
	uint64_t py_window;         /* ns: the latest sample's period, how far a CPU
				     * sample takes xpcap's read of its Python chain */
	int64_t py_native[2 * XP_MAX_STACK_DEPTH * (XP_INLINE_MAX + 1)]; /* splice scratch */
	uint8_t py_role[2 * XP_MAX_STACK_DEPTH * (XP_INLINE_MAX + 1)];
	unsigned py_nnative;
	int64_t py_out[2 * XP_MAX_STACK_DEPTH * (XP_INLINE_MAX + 1) + XP_PY_MAX_FRAMES + 1];
	int collecting;             /* stack_id collects user frames into py_native */
	char name[NAME_MAX_LEN + 64];
};

/* loader_db.c: 0 or -errno; a database failure is -EIO with res->error set */
int xp_loader_prepare(struct loader *L);
int xp_loader_db_fail(struct loader *L, const char *what);   /* res->error, -EIO */
int xp_loader_intern_str(struct loader *L, const char *s, int64_t *id);
int xp_loader_step(struct loader *L, int which);
int xp_loader_written(struct loader *L, int err);     /* a stackwriter call's -EIO: res->error */
int xp_loader_warn(struct loader *L, const char *file, uint64_t offset, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* load_meta.c: meta.json and the kallsyms copy, before the streams */
int xp_loader_meta(struct loader *L);
int xp_loader_kallsyms(struct loader *L);

/* load_stream.c: one CPU-side stream in one pass (1 or 2); index in
 * L->stream_records. The hint names the budget that stopped a reader. */
int xp_loader_stream(struct loader *L, const char *path, const char *file, int pass, int index);
const char *xp_loader_budget_hint(struct loader *L, int err);

/* load_gpu.c: one gpu-PID.xpr (pass 3) */
int xp_loader_gpu_stream(struct loader *L, const char *path, const char *file);

/* load_finish.c: modules, tasks, stores and facts after the streams */
int xp_loader_finish(struct loader *L);

/* frames.c */
int xp_loader_frame_id(struct loader *L, const char *symbol, int64_t module,
		enum xp_frame_kind kind, int64_t *id);
/* The frame of a Python line (db/pyframe.h): its code's qualified name,
 * file (a StringIds id) and line (-1: none known), interned once. */
int xp_loader_pyline_id(struct loader *L, const char *qualname, int64_t file, int line,
			int64_t *id);
int xp_loader_kernel_frame(struct loader *L, uint64_t ip, int64_t *id);
uint64_t xp_loader_mono_ns(void);
int xp_loader_user_frame(struct loader *L, uint32_t pid, uint64_t ts, uint64_t ip,
		      int is_return, int64_t *id);

/* stacks.c */
int xp_loader_stack_id(struct loader *L, uint32_t pid, uint64_t ts, const uint64_t *ips,
		    unsigned nk, unsigned nu, const struct xp_pystack_view *py, int64_t *id);

/* records.c */
const char *xp_loader_kind_name(uint32_t type);
int xp_loader_pass1_record(struct loader *L, const struct xp_record_header *h);
int xp_loader_pass2_record(struct loader *L, const struct xp_record_header *h);

#endif

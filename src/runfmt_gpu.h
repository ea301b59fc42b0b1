/* runfmt_gpu.h - GPU stream records: what the CUPTI injection library writes
 * to run/gpu-<pid>.xpr (stream XP_STREAM_GPU, record types 32-95).
 *
 * Same rules as runfmt.h: fixed-width little-endian fields, explicit padding,
 * 8-byte aligned records, no pointers, timestamps CLOCK_MONOTONIC ns (see
 * xp_gpu_process.clock_method for how the library got them). CUPTI record
 * layouts never reach the disk: the library converts each CUPTI activity
 * record into one of the structs below (cupti/convert.c).
 *
 * How a GPU stream reads, for the run-format man page:
 *
 *  - Order. Records are NOT in time order. CUPTI hands over per-thread
 *    buffers whenever it likes, and API records are batched per calling
 *    thread (up to 64, or 500 ms) before they are written. Join by (pid, correlation_id), never by
 *    position. A string record always comes before the first record that
 *    uses its id.
 *  - Strings (XP_REC_GPU_STRING). Names are interned per stream: id -> bytes.
 *    Ids start at 1; 0 means "no name". Kernel names are stored as CUPTI gives
 *    them (mangled); demangle offline. API function names are strings too.
 *  - Process (XP_REC_GPU_PROCESS). Written once at start, with pid in the
 *    process's own namespace and in the outermost one visible in
 *    /proc/self/status (NSpid/NStgid), versions, and the clock method.
 *    A second one may follow with the same pid (e.g. at exit); the last wins.
 *  - Clock pairs (XP_REC_GPU_CLOCK). cuptiGetTimestamp() bracketed by two
 *    CLOCK_MONOTONIC reads, at start and at exit, so a reader can check (or,
 *    when clock_method is CALIBRATED, compute) the offset and drift.
 *  - Correlation. Every GPU activity record (kernel, memcpy, memset, sync)
 *    carries the CUPTI correlation id of the API call that caused it. The
 *    API record (XP_REC_GPU_API) of that call and the uprobe record
 *    (XP_REC_LAUNCH in cpu.xpr, via the marker) carry the same id. One API
 *    call can cause many GPU records (a graph launch: one kernel record per
 *    node, all with the launch's correlation id, graph_id and their node id).
 *  - Losses. XP_REC_LOST (struct xp_lost from runfmt.h) with reason
 *    XP_LOST_CUPTI_DROPPED (CUPTI had no buffer: kind is 0 because CUPTI
 *    does not say which kind) or XP_LOST_GPU_NO_TIMESTAMP (the record came,
 *    with start = end = 0, because the device-side buffer ran out: kind names
 *    the record type; such records are still written, with
 *    XP_GPU_F_NO_TIMESTAMP set). XP_LOST_WRITE counts records the library
 *    could not write (disk full).
 *  - API records (XP_REC_GPU_API) cover launch-class calls only (launches,
 *    graph launches, copies, memsets, host syncs), one per outermost call of
 *    a thread: a runtime call and the driver call it makes share the
 *    correlation id, and only the runtime one is recorded. With
 *    XP_GPU_PROC_API_TRACE, records from CUPTI's RUNTIME/DRIVER activity
 *    (flag XP_GPU_API_FROM_ACTIVITY) cover every call, nested ones included.
 *  - Status (XP_REC_GPU_STATUS). Why tracing stopped or is partial, e.g.
 *    another CUPTI subscriber (torch.profiler, nsys) held the subscription.
 *    A stream with a status record of severity XP_GPU_STATUS_FATAL has no
 *    activity records after it.
 */
#ifndef XP_RUNFMT_GPU_H
#define XP_RUNFMT_GPU_H

#include "src/runfmt.h"

enum xp_gpu_record_type {
	XP_REC_GPU_STRING = 32,     /* struct xp_gpu_string + bytes: interned name */
	XP_REC_GPU_PROCESS = 33,    /* struct xp_gpu_process: who wrote the stream */
	XP_REC_GPU_DEVICE = 34,     /* struct xp_gpu_device: one GPU */
	XP_REC_GPU_CLOCK = 35,      /* struct xp_gpu_clock: CUPTI vs monotonic pair */
	XP_REC_GPU_STATUS = 36,     /* struct xp_gpu_status + text: library state */
	XP_REC_GPU_API = 37,        /* struct xp_gpu_api: one CUDA API call */
	XP_REC_GPU_KERNEL = 38,     /* struct xp_gpu_kernel: one kernel execution */
	XP_REC_GPU_MEMCPY = 39,     /* struct xp_gpu_memcpy: one copy */
	XP_REC_GPU_MEMSET = 40,     /* struct xp_gpu_memset: one memset */
	XP_REC_GPU_SYNC = 41,       /* struct xp_gpu_sync: a host wait on the GPU */
	XP_REC_GPU_NVTX = 42,       /* struct xp_gpu_nvtx: NVTX range edge or mark */
	XP_REC_GPU_OVERHEAD = 43,   /* struct xp_gpu_overhead: CUPTI/driver overhead */
	XP_REC_GPU_GRAPH = 44,      /* struct xp_gpu_graph: a CUDA graph's life event */
	XP_REC_GPU_RANK = 45,       /* struct xp_gpu_rank: the process's place in a job */
	XP_REC_GPU_MEMCPY_PEER = 46, /* struct xp_gpu_memcpy_peer: a copy between two GPUs */
};

/* Loss reasons of the GPU stream (xp_lost.reason); numbered apart from the
 * CPU ones in enum xp_lost_reason. */
#define XP_LOST_CUPTI_DROPPED     16  /* CUPTI dropped records: no host buffer */
#define XP_LOST_GPU_NO_TIMESTAMP  17  /* start = end = 0: device buffer full */

/* Flags shared by activity records (field `flags`). */
#define XP_GPU_F_NO_TIMESTAMP  (1u << 0)  /* start/end unknown (both 0) */
#define XP_GPU_F_ASYNC         (1u << 1)  /* memcpy: asynchronous */
#define XP_GPU_F_DEVICE_LAUNCH (1u << 2)  /* launched from the device (CDP) */

struct xp_gpu_string {
	uint32_t id;                /* >= 1, unique in the stream */
	uint32_t len;               /* bytes that follow, without NUL */
	/* char bytes[len], then NUL padding to 8 bytes */
};

/* How GPU timestamps were made monotonic (xp_gpu_process.clock_method). */
enum xp_gpu_clock_method {
	XP_GPU_CLOCK_CALLBACK = 1,  /* CUPTI timestamp callback = CLOCK_MONOTONIC */
	XP_GPU_CLOCK_CALIBRATED = 2,/* CUPTI's own clock: fit from xp_gpu_clock pairs */
};

struct xp_gpu_process {
	uint64_t ts;                /* ns, when written */
	uint32_t pid;               /* getpid(): the process's own pid namespace */
	uint32_t ns_pid;            /* first NSpid entry (outermost visible ns), else pid */
	uint32_t ppid;              /* getppid() */
	uint32_t init_tid;          /* thread that ran cuInit */
	uint32_t cupti_version;     /* cuptiGetVersion(), e.g. 130001 */
	uint32_t driver_version;    /* cuDriverGetVersion(), e.g. 13000; 0 unknown */
	uint32_t cuda_version;      /* CUPTI headers the library was built with (CUDA_VERSION) */
	uint32_t clock_method;      /* enum xp_gpu_clock_method */
	uint32_t flags;             /* XP_GPU_PROC_* */
	uint32_t ns_depth;          /* number of NSpid entries (1 = no container) */
	uint32_t pad;               /* 0 */
	uint32_t exe_name;          /* string id of /proc/self/exe, 0 unknown */
};

#define XP_GPU_PROC_API_TRACE (1u << 0)  /* RUNTIME/DRIVER activity kinds on */
#define XP_GPU_PROC_NVTX      (1u << 1)  /* NVTX marker kinds on */
#define XP_GPU_PROC_OVERHEAD  (1u << 2)  /* OVERHEAD kind on */
#define XP_GPU_PROC_SYNC      (1u << 3)  /* SYNCHRONIZATION kind on (XPCAP_SYNC=1) */

struct xp_gpu_device {
	uint64_t global_memory;     /* bytes */
	uint32_t id;                /* CUPTI device id (= deviceId in activity records) */
	uint32_t sm_count;          /* multiprocessors */
	uint32_t cc_major;          /* compute capability */
	uint32_t cc_minor;
	uint32_t core_clock_khz;    /* CUPTI coreClockRate */
	uint32_t max_warps_per_sm;
	uint32_t l2_size;           /* bytes */
	uint32_t name;              /* string id */
	uint8_t uuid[16];           /* CUuuid bytes */
	uint32_t mig;               /* 1 if MIG is enabled */
	uint32_t pad;               /* 0 */
};

struct xp_gpu_clock {
	uint64_t mono_before;       /* CLOCK_MONOTONIC ns just before */
	uint64_t cupti_ts;          /* cuptiGetTimestamp() */
	uint64_t mono_after;        /* CLOCK_MONOTONIC ns just after */
	uint32_t when;              /* 0 = at start, 1 = at exit */
	uint32_t pad;               /* 0 */
};

enum xp_gpu_status_code {
	XP_GPU_ST_STARTED = 1,      /* tracing on (info) */
	XP_GPU_ST_SUBSCRIBER = 2,   /* another CUPTI subscriber: text names it */
	XP_GPU_ST_CUPTI_ERROR = 3,  /* a CUPTI call failed: detail = CUptiResult */
	XP_GPU_ST_NVTX_OFF = 4,     /* NVTX disabled on purpose (text says why) */
	XP_GPU_ST_KIND_OFF = 5,     /* an activity kind could not be enabled: detail = kind */
	XP_GPU_ST_STOPPED = 6,      /* clean end at exit (info) */
	XP_GPU_ST_LAUNCH_STACKS = 7, /* in-process launch stacks (launch-<pid>.xpr): text says how */
	XP_GPU_ST_SELF_TIME = 8,    /* at exit: the library's own ns per launch-class call
				     * (detail), measured on one in 64; text: the parts */
	XP_GPU_ST_WINDOW = 9,       /* the capture window opened (detail 1) or closed (0):
				     * text says which and why (--capture-range, --delay) */
};

/* The library flushes CUPTI's buffers and its own stream this often, so a
 * process killed without exit handlers loses at most this much at the end. */
#define XP_GPU_FLUSH_PERIOD_MS 500

#define XP_GPU_STATUS_INFO  0
#define XP_GPU_STATUS_WARN  1
#define XP_GPU_STATUS_FATAL 2   /* tracing is off from here on */

struct xp_gpu_status {
	uint64_t ts;                /* ns */
	uint32_t code;              /* enum xp_gpu_status_code */
	uint32_t severity;          /* XP_GPU_STATUS_* */
	int32_t detail;             /* code-specific number (CUptiResult, kind) */
	uint16_t text_len;          /* bytes of text that follow, without NUL */
	uint16_t pad;               /* 0 */
	/* char text[text_len], then NUL padding to 8 bytes */
};

#define XP_GPU_API_FROM_ACTIVITY (1u << 0)  /* from CUPTI RUNTIME/DRIVER activity,
					      not the library's own callback */

struct xp_gpu_api {
	uint64_t start;             /* ns, at the API's entry */
	uint64_t end;               /* ns, at its return */
	uint64_t correlation_id;    /* CUPTI correlation id */
	uint32_t pid;               /* process, own namespace (CUPTI's view) */
	uint32_t tid;               /* gettid(), own namespace */
	uint32_t cbid;              /* CUPTI callback id, XP_CBID_DRIVER for the driver API */
	uint32_t name;              /* string id of the function name, 0 unknown */
	int32_t ret;                /* cudaError_t / CUresult returned */
	uint32_t flags;             /* XP_GPU_API_* */
};

struct xp_gpu_kernel {
	uint64_t start;             /* ns, on the GPU; 0 if XP_GPU_F_NO_TIMESTAMP */
	uint64_t end;               /* ns */
	uint64_t correlation_id;    /* of the launching API call */
	uint64_t graph_node_id;     /* CUDA graph node, 0 if not from a graph */
	uint32_t graph_id;          /* CUDA graph, 0 if not from a graph */
	uint32_t device;            /* device id */
	uint32_t context;           /* context id */
	uint32_t stream;            /* stream id */
	int32_t grid[3];            /* grid dims x, y, z */
	int32_t block[3];           /* block dims x, y, z */
	uint32_t registers;         /* registers per thread */
	int32_t static_shared;      /* static shared memory per block, bytes */
	int32_t dynamic_shared;     /* dynamic shared memory per block, bytes */
	uint32_t name;              /* string id of the mangled name */
	uint32_t flags;             /* XP_GPU_F_* */
	uint32_t pad;               /* 0 */
};

struct xp_gpu_memcpy {
	uint64_t start;             /* ns */
	uint64_t end;               /* ns */
	uint64_t correlation_id;
	uint64_t bytes;             /* bytes copied */
	uint64_t graph_node_id;     /* 0 if not from a graph */
	uint32_t graph_id;          /* 0 if not from a graph */
	uint32_t device;
	uint32_t context;
	uint32_t stream;
	uint8_t copy_kind;          /* CUpti_ActivityMemcpyKind: 1 HtoD, 2 DtoH, 8 DtoD, ... */
	uint8_t src_kind;           /* CUpti_ActivityMemoryKind: 1 pageable, 2 pinned, 3 device, ... */
	uint8_t dst_kind;           /* CUpti_ActivityMemoryKind */
	uint8_t pad8;               /* 0 */
	uint32_t flags;             /* XP_GPU_F_* */
};

/* A peer-to-peer copy (CUPTI's MEMCPY2): a copy with both GPUs named.
 * Readers that predate it skip it as an unknown type. */
struct xp_gpu_memcpy_peer {
	struct xp_gpu_memcpy copy;  /* copy.device: the GPU the copy ran on */
	uint32_t src_device;
	uint32_t src_context;
	uint32_t dst_device;
	uint32_t dst_context;
};

struct xp_gpu_memset {
	uint64_t start;             /* ns */
	uint64_t end;               /* ns */
	uint64_t correlation_id;
	uint64_t bytes;
	uint64_t graph_node_id;     /* 0 if not from a graph */
	uint32_t graph_id;          /* 0 if not from a graph */
	uint32_t device;
	uint32_t context;
	uint32_t stream;
	uint32_t value;             /* value set */
	uint16_t memory_kind;       /* CUpti_ActivityMemoryKind */
	uint16_t pad16;             /* 0 */
	uint32_t flags;             /* XP_GPU_F_* */
	uint32_t pad;               /* 0 */
};

struct xp_gpu_sync {
	uint64_t start;             /* ns, host wait began */
	uint64_t end;               /* ns */
	uint64_t correlation_id;    /* of the sync API call */
	uint32_t type;              /* CUpti_ActivitySynchronizationType: 1 event, 2 stream-wait-event,
				       3 stream, 4 context */
	uint32_t context;
	uint32_t stream;            /* CUPTI_SYNCHRONIZATION_INVALID_VALUE (~0) if none */
	uint32_t event;             /* cudaEventId, ~0 if none */
	uint32_t flags;             /* XP_GPU_F_* */
	int32_t ret;                /* returnValue */
};

/* xp_gpu_nvtx.edge */
#define XP_NVTX_MARK  0u        /* instantaneous marker */
#define XP_NVTX_START 1u        /* range start (push or start); name set */
#define XP_NVTX_END   2u        /* range end (pop or end): same id as its start */

struct xp_gpu_nvtx {
	uint64_t ts;                /* ns */
	uint64_t id;                /* range id: pairs START with END */
	uint32_t edge;              /* XP_NVTX_* */
	uint32_t object_kind;       /* CUpti_ActivityObjectKind: 1 process, 2 thread, ... */
	uint32_t pid;               /* when object_kind is process or thread */
	uint32_t tid;               /* when object_kind is thread */
	uint32_t name;              /* string id (START and MARK), 0 on END */
	uint32_t domain;            /* string id of the NVTX domain, 0 = default */
};

/* What happened to a CUDA graph (CUPTI's resource callbacks). A captured
 * kernel launch makes a node (NODE_CREATED inside the launch call: its
 * correlation_id is that launch's, whose stack the launch record holds);
 * instantiating a graph clones its nodes into the graph exec (NODE_CLONED:
 * node_id new, orig_node_id the captured one), and kernels of replays carry
 * the clones' ids (graphNodeId). */
enum xp_gpu_graph_event {
	XP_GRAPH_CREATED = 1,       /* graph_id */
	XP_GRAPH_CLONED = 2,        /* graph_id from orig_graph_id */
	XP_GRAPH_DESTROYED = 3,     /* graph_id */
	XP_GRAPH_NODE_CREATED = 4,  /* node_id in graph_id, node_type */
	XP_GRAPH_NODE_CLONED = 5,   /* node_id (in graph_id, exec_id) from orig_node_id */
	XP_GRAPH_NODE_DESTROYED = 6,
	XP_GRAPH_EXEC_CREATED = 7,  /* exec_id from graph_id */
	XP_GRAPH_EXEC_DESTROYED = 8,
};

struct xp_gpu_graph {
	uint64_t ts;                /* ns, when the callback ran */
	uint64_t node_id;           /* CUPTI's node id, 0 none */
	uint64_t orig_node_id;      /* NODE_CLONED: the node copied */
	uint64_t correlation_id;    /* the CUDA call open on the thread (0 none) */
	uint32_t pid;
	uint32_t tid;
	uint32_t event;             /* enum xp_gpu_graph_event */
	uint32_t graph_id;          /* 0 none */
	uint32_t orig_graph_id;     /* GRAPH_CLONED: the original */
	uint32_t exec_id;           /* 0 none */
	uint32_t node_type;         /* CUgraphNodeType (NODE_*) */
	uint32_t pad;               /* 0 */
};

/* Who the process is in a distributed job, from the launcher's variables in
 * its own environment (torchrun's RANK..., Slurm's SLURM_PROCID..., Open
 * MPI's OMPI_COMM_WORLD_*, PMI's PMI_RANK/PMI_SIZE): nothing else of the
 * environment is kept. -1 where the launcher gave none. */
enum xp_gpu_rank_source {
	XP_RANK_NONE = 0, XP_RANK_TORCHRUN = 1, XP_RANK_SLURM = 2, XP_RANK_OMPI = 3, XP_RANK_PMI = 4,
};

struct xp_gpu_rank {
	uint32_t pid;
	uint32_t source;            /* enum xp_gpu_rank_source */
	int32_t rank;
	int32_t local_rank;
	int32_t world_size;
	int32_t local_world_size;
	char host[64];              /* gethostname(), NUL-terminated */
};

struct xp_gpu_overhead {
	uint64_t start;             /* ns */
	uint64_t end;               /* ns */
	uint64_t correlation_id;    /* 0 if none */
	uint32_t kind;              /* CUpti_ActivityOverheadKind */
	uint32_t object_kind;       /* CUpti_ActivityObjectKind */
	uint32_t pid;               /* when object_kind is process or thread */
	uint32_t tid;               /* when object_kind is thread */
};

#endif

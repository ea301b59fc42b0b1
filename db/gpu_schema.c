/* gpu_schema.c - the GPU tables, named and shaped like Nsight Systems'
 * SQLite export so that users' nsys SQL runs unchanged, plus our own xp_*
 * tables for GPU processes, status and attribution (xp_launches is the
 * base schema's, db_schema.c). Documented column by column
 * in xpcorr-gpu-db(5).
 *
 *   if (xp_gpu_schema_create(db) < 0) ... sqlite3_errmsg(db) ...
 *
 * nsys conventions kept: globalPid = pid << 24, globalTid = pid << 24 | tid,
 * names are StringIds ids, times are ns.
 */
#include <errno.h>
#include <stddef.h>

#include "db/db_schema.h"

static const char schema[] =
	"CREATE TABLE IF NOT EXISTS CUPTI_ACTIVITY_KIND_KERNEL ("
	" start INTEGER NOT NULL,"        /* ns, GPU start */
	" end INTEGER NOT NULL,"          /* ns */
	" deviceId INTEGER NOT NULL,"
	" contextId INTEGER NOT NULL,"
	" streamId INTEGER NOT NULL,"
	" correlationId INTEGER,"         /* of the launching API call */
	" globalPid INTEGER,"             /* pid << 24 */
	" demangledName INTEGER NOT NULL,"/* StringIds */
	" shortName INTEGER NOT NULL,"    /* StringIds: function name only */
	" mangledName INTEGER,"           /* StringIds: as CUPTI gave it */
	" gridX INTEGER NOT NULL, gridY INTEGER NOT NULL, gridZ INTEGER NOT NULL,"
	" blockX INTEGER NOT NULL, blockY INTEGER NOT NULL, blockZ INTEGER NOT NULL,"
	" registersPerThread INTEGER NOT NULL,"
	" staticSharedMemory INTEGER NOT NULL,"
	" dynamicSharedMemory INTEGER NOT NULL,"
	" graphNodeId INTEGER,"           /* NULL when not from a graph */
	" graphId INTEGER,"
	" xp_flags INTEGER NOT NULL DEFAULT 0);"  /* XP_GPU_F_* */
	"CREATE TABLE IF NOT EXISTS CUPTI_ACTIVITY_KIND_MEMCPY ("
	" start INTEGER NOT NULL, end INTEGER NOT NULL,"
	" deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, streamId INTEGER NOT NULL,"
	" correlationId INTEGER, globalPid INTEGER,"
	" bytes INTEGER NOT NULL,"
	" copyKind INTEGER NOT NULL,"     /* ENUM_CUDA_MEMCPY_OPER */
	" srcKind INTEGER, dstKind INTEGER,"  /* ENUM_CUDA_MEM_KIND */
	" graphNodeId INTEGER, graphId INTEGER,"
	" xp_flags INTEGER NOT NULL DEFAULT 0,"
	/* a copy between two GPUs (peer to peer): both ends; else NULL */
	" srcDeviceId INTEGER, srcContextId INTEGER, dstDeviceId INTEGER, dstContextId INTEGER);"
	"CREATE TABLE IF NOT EXISTS CUPTI_ACTIVITY_KIND_MEMSET ("
	" start INTEGER NOT NULL, end INTEGER NOT NULL,"
	" deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, streamId INTEGER NOT NULL,"
	" correlationId INTEGER, globalPid INTEGER,"
	" value INTEGER NOT NULL, bytes INTEGER NOT NULL,"
	" memKind INTEGER,"               /* ENUM_CUDA_MEM_KIND */
	" graphNodeId INTEGER, graphId INTEGER,"
	" xp_flags INTEGER NOT NULL DEFAULT 0);"
	"CREATE TABLE IF NOT EXISTS CUPTI_ACTIVITY_KIND_SYNCHRONIZATION ("
	" start INTEGER NOT NULL, end INTEGER NOT NULL,"
	" globalPid INTEGER,"             /* the record names no thread; see the API call */
	" correlationId INTEGER, contextId INTEGER, streamId INTEGER, eventId INTEGER,"
	" syncType INTEGER NOT NULL,"     /* 1 event, 2 stream wait event, 3 stream, 4 context */
	" returnValue INTEGER);"
	"CREATE TABLE IF NOT EXISTS CUPTI_ACTIVITY_KIND_RUNTIME ("
	" start INTEGER NOT NULL, end INTEGER NOT NULL,"
	" eventClass INTEGER NOT NULL,"   /* 0 runtime, 1 driver (cbid high bit) */
	" globalTid INTEGER,"             /* pid << 24 | tid */
	" correlationId INTEGER,"
	" nameId INTEGER NOT NULL,"       /* StringIds: function name */
	" returnValue INTEGER NOT NULL,"
	" callchainId INTEGER,"           /* NULL: the stack is in xp_attribution */
	" xp_cbid INTEGER,"               /* CUPTI callback id */
	" xp_flags INTEGER NOT NULL DEFAULT 0);"  /* 1: from CUPTI activity (CUPTI clock) */
	"CREATE INDEX IF NOT EXISTS xp_runtime_corr ON CUPTI_ACTIVITY_KIND_RUNTIME(correlationId);"
	"CREATE TABLE IF NOT EXISTS NVTX_EVENTS ("
	" start INTEGER NOT NULL, end INTEGER,"
	" eventType INTEGER NOT NULL,"    /* 34 mark, 60 start/end range */
	" rangeId INTEGER, category INTEGER, color INTEGER,"
	" text TEXT,"                     /* NULL: the name is textId */
	" globalTid INTEGER, endGlobalTid INTEGER,"
	" textId INTEGER,"                /* StringIds */
	" domainId INTEGER,"              /* StringIds id of the domain, 0 default */
	" uint64Value INTEGER, int64Value INTEGER, doubleValue REAL, uint32Value INTEGER,"
	" int32Value INTEGER, floatValue REAL, jsonTextId INTEGER, jsonText TEXT);"
	"CREATE INDEX IF NOT EXISTS xp_nvtx_thread ON NVTX_EVENTS(globalTid, start);"
	"CREATE TABLE IF NOT EXISTS TARGET_INFO_GPU ("
	" id INTEGER NOT NULL,"           /* CUPTI device id = deviceId */
	" name TEXT, uuid TEXT,"          /* uuid as 32 hex digits */
	" smCount INTEGER, totalMemory INTEGER,"
	" computeMajor INTEGER, computeMinor INTEGER,"
	" clockRate INTEGER,"             /* Hz */
	" l2CacheSize INTEGER, maxWarpsPerSm INTEGER,"
	" isMig INTEGER, globalPid INTEGER);"
	"CREATE TABLE IF NOT EXISTS ENUM_CUDA_MEMCPY_OPER (id INTEGER PRIMARY KEY, name TEXT, label TEXT);"
	"INSERT OR IGNORE INTO ENUM_CUDA_MEMCPY_OPER VALUES"
	" (0,'CUDA_MEMCPY_OPER_UNKNOWN','Unknown'),(1,'CUDA_MEMCPY_OPER_HTOD','Host-to-Device'),"
	" (2,'CUDA_MEMCPY_OPER_DTOH','Device-to-Host'),(3,'CUDA_MEMCPY_OPER_HTOA','Host-to-Array'),"
	" (4,'CUDA_MEMCPY_OPER_ATOH','Array-to-Host'),(5,'CUDA_MEMCPY_OPER_ATOA','Array-to-Array'),"
	" (6,'CUDA_MEMCPY_OPER_ATOD','Array-to-Device'),(7,'CUDA_MEMCPY_OPER_DTOA','Device-to-Array'),"
	" (8,'CUDA_MEMCPY_OPER_DTOD','Device-to-Device'),(9,'CUDA_MEMCPY_OPER_HTOH','Host-to-Host'),"
	" (10,'CUDA_MEMCPY_OPER_PTOP','Peer-to-Peer');"
	"CREATE TABLE IF NOT EXISTS ENUM_CUDA_MEM_KIND (id INTEGER PRIMARY KEY, name TEXT, label TEXT);"
	"INSERT OR IGNORE INTO ENUM_CUDA_MEM_KIND VALUES"
	" (0,'CUDA_MEMOPR_MEMORY_KIND_UNKNOWN','Unknown'),(1,'CUDA_MEMOPR_MEMORY_KIND_PAGEABLE','Pageable'),"
	" (2,'CUDA_MEMOPR_MEMORY_KIND_PINNED','Pinned'),(3,'CUDA_MEMOPR_MEMORY_KIND_DEVICE','Device'),"
	" (4,'CUDA_MEMOPR_MEMORY_KIND_ARRAY','Array'),(5,'CUDA_MEMOPR_MEMORY_KIND_MANAGED','Managed'),"
	" (6,'CUDA_MEMOPR_MEMORY_KIND_DEVICE_STATIC','Device Static'),"
	" (7,'CUDA_MEMOPR_MEMORY_KIND_MANAGED_STATIC','Managed Static');"
	/* ours */
	"CREATE TABLE IF NOT EXISTS xp_gpu_processes ("
	" pid INTEGER NOT NULL,"          /* in the pid space of cpu.xpr */
	" own_pid INTEGER, ns_pid INTEGER, ns_depth INTEGER, ppid INTEGER, init_tid INTEGER,"
	" cupti_version INTEGER, driver_version INTEGER, cuda_version INTEGER,"
	" clock_method INTEGER, flags INTEGER, exe_name INTEGER,"  /* StringIds */
	" source TEXT);"                  /* the stream file */
	"CREATE TABLE IF NOT EXISTS xp_gpu_status ("
	" ts INTEGER, pid INTEGER, code INTEGER, severity INTEGER, detail INTEGER,"
	" text TEXT, source TEXT);"
	/* CUDA graphs' life (runfmt_gpu.h XP_REC_GPU_GRAPH): a captured node's
	 * correlationId is the launch that made it; a node cloned into an exec
	 * names the captured one in origNodeId */
	"CREATE TABLE IF NOT EXISTS xp_graph_events ("
	" ts INTEGER NOT NULL, globalTid INTEGER, event INTEGER NOT NULL, graphId INTEGER,"
	" nodeId INTEGER, origNodeId INTEGER, origGraphId INTEGER, execId INTEGER,"
	" nodeType INTEGER, correlationId INTEGER);"
	/* a process's place in a distributed job (runfmt_gpu.h XP_REC_GPU_RANK) */
	"CREATE TABLE IF NOT EXISTS xp_ranks ("
	" pid INTEGER NOT NULL, host TEXT, rank INTEGER, local_rank INTEGER,"
	" world_size INTEGER, local_world_size INTEGER, source TEXT);"
	"CREATE TABLE IF NOT EXISTS xp_gpu_clock ("
	" pid INTEGER, mono_before INTEGER, cupti_ts INTEGER, mono_after INTEGER, at_exit INTEGER);"
	"CREATE TABLE IF NOT EXISTS xp_attribution ("
	" gpu_table TEXT NOT NULL,"       /* 'KERNEL' | 'MEMCPY' | 'MEMSET' */
	" gpu_rowid INTEGER NOT NULL,"    /* rowid in CUPTI_ACTIVITY_KIND_<gpu_table> */
	" api_rowid INTEGER,"             /* rowid in CUPTI_ACTIVITY_KIND_RUNTIME, NULL if none */
	" stack_id INTEGER,"              /* launching CPU stack, NULL if none */
	" how TEXT NOT NULL,"             /* 'exact' | 'inferred' | 'none' */
	" reason TEXT NOT NULL,"
	" distance_ns INTEGER NOT NULL DEFAULT 0);"
	"CREATE TABLE IF NOT EXISTS xp_sample_api (sample_id INTEGER NOT NULL, api_rowid INTEGER NOT NULL);"
	"CREATE TABLE IF NOT EXISTS xp_correlation_counts (reason TEXT NOT NULL, count INTEGER NOT NULL);"
	"CREATE TABLE IF NOT EXISTS xp_launch_rejects ("
	" launch_rowid INTEGER NOT NULL,"  /* rowid in xp_launches */
	" reason TEXT NOT NULL);"         /* as in xp_correlation_counts */
	/* written by the correlation so that the unfiltered report reads a few
	 * rows per group instead of sorting every GPU row (report_groups.h) */
	"CREATE TABLE IF NOT EXISTS xp_report_groups ("
	" view TEXT NOT NULL,"            /* 'kernel' | 'kernel_mangled' | 'stack' | 'api' */
	" key INTEGER NOT NULL,"          /* name id (StringIds), or stack id (-1: none) */
	" instances INTEGER NOT NULL, total_ns INTEGER NOT NULL,"
	" min_ns INTEGER NOT NULL, max_ns INTEGER NOT NULL,"
	" avg_ns REAL NOT NULL, med_ns REAL NOT NULL, stddev_ns REAL NOT NULL,"
	" PRIMARY KEY (view, key)) WITHOUT ROWID;"
	"CREATE TABLE IF NOT EXISTS xp_report_kernel_stacks ("
	" mangled INTEGER NOT NULL,"      /* 0: key is demangledName, 1: mangledName */
	" key INTEGER NOT NULL, stack_id INTEGER NOT NULL,"  /* -1: no stack */
	" how TEXT NOT NULL, reason TEXT NOT NULL, gpu_ns INTEGER NOT NULL,"
	" PRIMARY KEY (mangled, key, stack_id, how, reason)) WITHOUT ROWID;"
	/* PyTorch autograd at each launch (ingest/backward_store.c fills it,
	 * ingest/backward_join.c joins it) and what each process's library found */
	"CREATE TABLE IF NOT EXISTS xp_autograd(pid INTEGER NOT NULL, correlation_id INTEGER NOT NULL,"
	" tid INTEGER NOT NULL, thread_id INTEGER NOT NULL, seq_next INTEGER NOT NULL,"
	" node TEXT, node_seq INTEGER, node_thread INTEGER,"
	" forward_launch INTEGER, how TEXT, unknown TEXT);"
	"CREATE TABLE IF NOT EXISTS xp_autograd_processes(pid INTEGER NOT NULL, reads INTEGER NOT NULL,"
	" nodes INTEGER NOT NULL, rejected INTEGER NOT NULL, reason TEXT);"
	"CREATE TABLE IF NOT EXISTS xp_report_coverage ("
	" how TEXT NOT NULL, reason TEXT NOT NULL, records INTEGER NOT NULL, gpu_ns INTEGER NOT NULL);";

int xp_gpu_schema_create(sqlite3 *db)
{
	return sqlite3_exec(db, schema, NULL, NULL, NULL) == SQLITE_OK ? 0 : -EIO;
}

/* launch.h - what report and the GPU-weighted exports share about launching
 * stacks: the GPU rows of every kind with their attribution, and which
 * frames belong to the CUDA stack itself (skipped at the leaf end).
 *
 *   sqlite3_prepare_v2(db, "SELECT g.t, a.stack_id FROM " XP_GPU_ROWS, ...);
 *   if (xp_is_cuda_layer("cudaLaunchKernel", "/usr/lib/libcudart.so.13")) ...
 */
#ifndef XP_LAUNCH_H
#define XP_LAUNCH_H

#include <stdint.h>
#include <sqlite3.h>

/* The GPU rows of every kind, each with its attribution (or NULLs):
 * g.t ('KERNEL'|'MEMCPY'|'MEMSET'), g.r (rowid), g.start, g.end, g.gp
 * (globalPid), a.* (xp_attribution). */
#define XP_GPU_ROWS \
	"(SELECT 'KERNEL' AS t, rowid AS r, start, end, globalPid AS gp FROM CUPTI_ACTIVITY_KIND_KERNEL" \
	" UNION ALL SELECT 'MEMCPY', rowid, start, end, globalPid FROM CUPTI_ACTIVITY_KIND_MEMCPY" \
	" UNION ALL SELECT 'MEMSET', rowid, start, end, globalPid FROM CUPTI_ACTIVITY_KIND_MEMSET) g" \
	" LEFT JOIN xp_attribution a ON a.gpu_table = g.t AND a.gpu_rowid = g.r"

/* "[memcpy HtoD]" for a copyKind column (ENUM_CUDA_MEMCPY_OPER ids). */
#define XP_MEMCPY_LABEL(col) \
	"'[memcpy ' || CASE " col " WHEN 1 THEN 'HtoD' WHEN 2 THEN 'DtoH' WHEN 3 THEN 'HtoA'" \
	" WHEN 4 THEN 'AtoH' WHEN 5 THEN 'AtoA' WHEN 6 THEN 'AtoD' WHEN 7 THEN 'DtoA' WHEN 8 THEN 'DtoD'" \
	" WHEN 9 THEN 'HtoH' WHEN 10 THEN 'PtoP' ELSE 'other' END || ']'"

/* 1 for a frame of our marker, CUPTI, the driver or the runtime (also a
 * statically linked cudart): every launch passes through them, so launch
 * stacks start at the leaf-most frame of the caller's own code. Either
 * argument may be NULL. */
int xp_is_cuda_layer(const char *sym, const char *module);

/* The one way a row goes into xp_launches: prepare XP_LAUNCH_INSERT_SQL,
 * bind with xp_launch_bind, step. A launch without a stack frame is stored
 * with stack_id NULL (readers: "(no stack)"), never a node id 0. */
#define XP_LAUNCH_INSERT_SQL "INSERT INTO xp_launches(ts, pid, tid, cpu, correlation_id, cbid," \
	" stack_id) VALUES (?, ?, ?, ?, ?, ?, ?)"
struct xp_launch;
void xp_launch_bind(sqlite3_stmt *ins, const struct xp_launch *l, int64_t stack);

/* 1 for a frame of a library the program calls rather than its own code:
 * cuBLAS, cuDNN, NCCL and the other CUDA libraries, libtorch and XLA, the
 * Python runtime, libc and libstdc++ (by module, or the module an unresolved
 * frame's name carries); also the "[unknown]" of an address in no module. */
int xp_is_library_frame(const char *sym, const char *module);

#endif

/* stacktable.h - the whole stack prefix tree and its frames' classes in
 * memory, for the exports that walk every stack of a run at once (folded
 * lines, how much GPU time reaches Python): one load, arrays by place, one
 * set of rules for what a frame is. A node's or a frame's place is its id
 * where ids are dense (a database we wrote: 1..N), else a number given in
 * the rows' order: memory follows the rows, not the largest id a crafted
 * database holds. A parent is always at a smaller place (0 at a root), so
 * every walk up ends. A single stack is read with stackwalk.h.
 *
 *   struct xp_stack_table t;
 *   if (xp_stack_table_load(db, NULL, NULL, &t) == 0) {
 *           for (int64_t n = xp_stack_table_node(&t, leaf_id); n > 0; n = t.parent[n])
 *                   if (t.frame_class[t.frame[n]] & XP_FRAME_IS_PYTHON) ...
 *           xp_stack_table_free(&t);
 *   }
 */
#ifndef XP_STACKTABLE_H
#define XP_STACKTABLE_H

#include <sqlite3.h>
#include <stdint.h>

/* bits of frame_class */
#define XP_FRAME_IS_KERNEL 1u   /* the kernel's own code (resolved or not) */
#define XP_FRAME_IS_CUDA 2u     /* the CUDA layers: marker, CUPTI, driver, runtime */
#define XP_FRAME_IS_PYTHON 4u   /* a Python line or a py:: perf-map function */
#define XP_FRAME_IS_LINE 8u     /* a Python line (file:line) */
#define XP_FRAME_IS_INTERP 16u  /* in the interpreter itself (python3.X, libpython) */
#define XP_FRAME_IS_WAITED 32u  /* the note of a launch placed at the line its Python
				 * thread waited in (db/waitnote.h) */

struct xp_u64map;

struct xp_stack_table {
	int64_t nnodes;             /* node places 0..nnodes-1 (0: none) */
	int64_t *parent;            /* by node place: its parent's place, smaller; 0 at a
				     * root, for a parent not in the table, or a cycle */
	int64_t *frame;             /* by node place: its frame's place (0: none) */
	int64_t nframes;            /* frame places 0..nframes-1 (0: none) */
	uint8_t *frame_class;       /* by frame place: XP_FRAME_IS_* */
	uint8_t *frame_own;         /* by frame place: enum xp_own (ownframes.h) */
	struct xp_u64map *nodes_at; /* node id -> place; NULL: the id is the place */
	struct xp_u64map *frames_at; /* frame id -> place; NULL: the id is the place */
};

/* Called once per frame with its place (< nframes) and name (a Python
 * line's made by pyframe.h), for a caller that keeps its own rendering of
 * names; a non-zero return stops the load with that code. */
typedef int (*xp_frame_fn)(void *ctx, int64_t place, const char *symbol, const char *module,
			   unsigned frame_class);

/* 0, -EIO (no stack tables) or -ENOMEM; on error t holds nothing to free. */
int xp_stack_table_load(sqlite3 *db, xp_frame_fn each_frame, void *ctx, struct xp_stack_table *t);
void xp_stack_table_free(struct xp_stack_table *t);
/* The place of node id (an xp_stacks id), 0 where the table has none. */
int64_t xp_stack_table_node(const struct xp_stack_table *t, int64_t id);

/* A stack's nodes, leaf first, without the recorder's own frames
 * (ownframes.h) that databases made before ingest cut them hold: at the
 * leaf, or under a backward launch's note re-stacked on its forward launch.
 * The new depth. */
int xp_stack_table_drop_own(const struct xp_stack_table *t, int64_t *path, int depth);

/* The class of one frame (the same rules the table applies). */
unsigned xp_frame_class(int kind, const char *symbol, const char *module);

#endif

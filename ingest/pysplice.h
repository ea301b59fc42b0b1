/* pysplice.h - put a launch's Python frames (runfmt_py.h) where the native
 * unwind of its stack has the interpreter's own frames, so the stack reads
 * from the script's <module> through the Python lines into the C++ and the
 * CUDA call.
 *
 * Each _PyEval_EvalFrameDefault activation in the native stack runs one
 * group of Python frames: an XP_PYFRAME_ENTRY frame and the frames called
 * from it without leaving the interpreter (3.11+), innermost first on both
 * sides. Groups and activations are matched in that order; the activation's
 * frame (with what was inlined into it) gives way to the group's frames, and
 * the perf-trampoline frame that called it (py::NAME:FILE from the perf map,
 * a function name without a line) is dropped. Where the native unwind has
 * fewer activations than there are groups (it stopped early: modules
 * missing on this machine, no unwind information), the outer groups go on
 * top of what it gave, under a gap frame that says native frames are
 * missing in between. Where it has more and the Python stack was not cut
 * (XP_PYSTACK_TRUNCATED), nothing is matched: all of the Python frames go on
 * top, above the gap, and the native stack stays as it was. Where the
 * native copy stopped at the innermost evaluation on purpose (bounded), the
 * outer groups go on top of it with no gap frame: only the interpreter's
 * own frames between the groups are missing, and those say nothing more.
 *
 *   struct xp_splice_in in = { native, roles, nn, py, entry, np, truncated, bounded,
 *                              gap_frame };
 *   unsigned n = xp_pysplice(&in, out, &how);    // out: nn + np + 1 frame ids, root first
 */
#ifndef XP_PYSPLICE_H
#define XP_PYSPLICE_H

#include <stdint.h>

/* What a native frame is to the splice. */
enum xp_pyrole {
	XP_PYROLE_NATIVE = 0,       /* any other function */
	XP_PYROLE_EVAL = 1,         /* _PyEval_EvalFrameDefault (or a .cold part of it) */
	XP_PYROLE_TRAMPOLINE = 2,   /* a perf-trampoline frame, py::NAME:FILE */
	XP_PYROLE_INLINED = 3,      /* inlined into the frame before it (root first) */
};

/* The role of a frame of xp_frames kind (db_schema.h) and symbol. */
enum xp_pyrole xp_pyrole_of(int kind, const char *symbol);

enum xp_splice_how {
	XP_SPLICE_MATCHED = 1,      /* every group in place of an activation */
	XP_SPLICE_GAP = 2,          /* some or all groups on top, above the gap frame */
};

struct xp_splice_in {
	const int64_t *native;      /* native frame ids, root first */
	const uint8_t *role;        /* enum xp_pyrole of each */
	unsigned nnative;
	const int64_t *py;          /* Python frame ids, innermost first (at most
				     * XP_PY_MAX_FRAMES are used) */
	const uint8_t *entry;       /* non-zero: the frame has XP_PYFRAME_ENTRY */
	unsigned npy;
	int truncated;              /* the Python stack lost its outermost frames */
	int bounded;                /* the native copy stopped at the innermost
				     * evaluation (XP_STACK_COPY_TO_PYTHON) */
	int64_t gap;                /* frame id of the gap frame */
};

/* Writes the stack, root first, to out (room for nnative + npy + 1 ids) and
 * returns its length; *how is an enum xp_splice_how. */
unsigned xp_pysplice(const struct xp_splice_in *in, int64_t *out, int *how);

#endif

/* stacktree.h - call stacks as a prefix tree (id, parent, frame), in the
 * manner of pprof and Perfetto: a stack is the id of its leaf node, and
 * stacks sharing callers share nodes, so 10 million samples of 30 frames
 * need only as many rows as there are distinct call paths.
 *
 *   struct xp_stacktree t; int64_t node = 0; int fresh;
 *   xp_stacktree_init(&t);
 *   for (each frame, root first)
 *       xp_stacktree_add(&t, node, frame_id, &node, &fresh);   // fresh: insert row
 *   sample.stack_id = node;
 */
#ifndef XP_STACKTREE_H
#define XP_STACKTREE_H

#include <stdint.h>

#include "src/u64map.h"

struct xp_stacktree {
	struct xp_u64map nodes;     /* (parent, frame) -> id */
	int64_t next_id;            /* ids start at 1; 0 is "no parent" */
};

void xp_stacktree_init(struct xp_stacktree *t);
void xp_stacktree_free(struct xp_stacktree *t);
/* The child of parent (0 = root) with this frame, created if new. 0 or -ENOMEM. */
int xp_stacktree_add(struct xp_stacktree *t, int64_t parent, int64_t frame,
		     int64_t *id, int *fresh);
static inline int64_t xp_stacktree_count(const struct xp_stacktree *t)
{
	return t->next_id - 1;
}

#endif

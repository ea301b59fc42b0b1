/* stacktree.c - stack prefix tree on top of u64map; see stacktree.h. */
#include "ingest/stacktree.h"

void xp_stacktree_init(struct xp_stacktree *t)
{
	xp_u64map_init(&t->nodes);
	t->next_id = 1;
}

void xp_stacktree_free(struct xp_stacktree *t)
{
	xp_u64map_free(&t->nodes);
}

int xp_stacktree_add(struct xp_stacktree *t, int64_t parent, int64_t frame,
		     int64_t *id, int *fresh)
{
	uint64_t *slot;
	int err = xp_u64map_upsert(&t->nodes, (uint64_t)parent, (uint64_t)frame,
				   &slot, fresh);

	if (err)
		return err;
	if (*fresh)
		*slot = (uint64_t)t->next_id++;
	*id = (int64_t)*slot;
	return 0;
}

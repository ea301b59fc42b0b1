/* borrowed.c - frames of launch-stack keys (see borrowed.h): (pid, key) to
 * an entry through the shared u64 map, entries in a growing array. */
#include "ingest/borrowed.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "src/array.h"
#include "src/u64map.h"

struct borrowed_stack {
	unsigned n;
	uint64_t *ips;
	int64_t stack;                  /* the stack id its launch made */
};

struct xp_borrowed {
	struct xp_u64map index;         /* (pid, key) -> entry number + 1 */
	struct borrowed_stack *e;
	size_t n, cap;
};

struct xp_borrowed *xp_borrowed_new(void)
{
	struct xp_borrowed *b = calloc(1, sizeof(*b));

	if (b)
		xp_u64map_init(&b->index);
	return b;
}

void xp_borrowed_free(struct xp_borrowed *b)
{
	if (!b)
		return;
	for (size_t i = 0; i < b->n; i++)
		free(b->e[i].ips);
	free(b->e);
	xp_u64map_free(&b->index);
	free(b);
}

/* The entry of a new key, appended. NULL: out of memory. */
static struct borrowed_stack *append(struct xp_borrowed *b)
{
	if (xp_array__reserve((void **)&b->e, &b->cap, b->n + 1, sizeof(*b->e), 64))
		return NULL;
	b->e[b->n] = (struct borrowed_stack){ 0, NULL, 0 };
	return &b->e[b->n++];
}

int xp_borrowed_put(struct xp_borrowed *b, uint32_t pid, uint32_t key, const uint64_t *ips,
		    unsigned n, int64_t stack)
{
	uint64_t *slot, *copy;
	struct borrowed_stack *e;
	int fresh, how;

	if (!key)
		return XP_BORROWED_NEW;         /* no key (a damaged run): nothing to keep */
	if (!(copy = malloc((n ? n : 1) * sizeof(*ips))))
		return -ENOMEM;
	if (n)
		memcpy(copy, ips, n * sizeof(*ips));
	if (xp_u64map_upsert(&b->index, pid, key, &slot, &fresh)) {
		free(copy);
		return -ENOMEM;
	}
	if (fresh) {
		if (!(e = append(b))) {
			free(copy);
			return -ENOMEM;     /* slot stays 0: found as missing */
		}
		*slot = b->n;
		how = XP_BORROWED_NEW;
	} else if (!*slot) {            /* an earlier append failed */
		free(copy);
		return -ENOMEM;
	} else {
		e = &b->e[*slot - 1];
		how = e->stack == stack ? XP_BORROWED_SAME : XP_BORROWED_DIFFERED;
	}
	free(e->ips);
	*e = (struct borrowed_stack){ n, copy, stack };
	return how;
}

const uint64_t *xp_borrowed_get(const struct xp_borrowed *b, uint32_t pid, uint32_t key,
				unsigned *n)
{
	const uint64_t *slot = key ? xp_u64map_find(&b->index, pid, key) : NULL;

	if (!slot || !*slot)
		return NULL;
	*n = b->e[*slot - 1].n;
	return b->e[*slot - 1].ips;
}

/* borrowed.c - frames of launch-stack keys (see borrowed.h): an open
 * addressing table of (pid, key) that doubles as it fills. */
#include "borrowed.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct entry {
	uint64_t pk;                    /* pid << 32 | key; 0: free (keys start at 1) */
	unsigned n;
	uint64_t *ips;
	int64_t stack;                  /* the stack id its launch made */
};

struct xp_borrowed {
	struct entry *e;
	size_t cap, used;               /* cap: a power of two */
};

struct xp_borrowed *xp_borrowed_new(void)
{
	struct xp_borrowed *b = calloc(1, sizeof(*b));

	if (b && !(b->e = calloc(b->cap = 64, sizeof(*b->e)))) {
		free(b);
		b = NULL;
	}
	return b;
}

void xp_borrowed_free(struct xp_borrowed *b)
{
	if (!b)
		return;
	for (size_t i = 0; i < b->cap; i++)
		free(b->e[i].ips);
	free(b->e);
	free(b);
}

static struct entry *find(const struct xp_borrowed *b, uint64_t pk)
{
	size_t i = (size_t)((pk * 0x9e3779b97f4a7c15ull) >> 20) & (b->cap - 1);

	while (b->e[i].pk && b->e[i].pk != pk)
		i = (i + 1) & (b->cap - 1);
	return &b->e[i];
}

static int grow(struct xp_borrowed *b)
{
	struct xp_borrowed n = { .cap = b->cap * 2 };

	if (!(n.e = calloc(n.cap, sizeof(*n.e))))
		return -ENOMEM;
	for (size_t i = 0; i < b->cap; i++)
		if (b->e[i].pk)
			*find(&n, b->e[i].pk) = b->e[i];
	free(b->e);
	b->e = n.e;
	b->cap = n.cap;
	return 0;
}

int xp_borrowed_put(struct xp_borrowed *b, uint32_t pid, uint32_t key, const uint64_t *ips,
		    unsigned n, int64_t stack)
{
	uint64_t pk = (uint64_t)pid << 32 | key;
	struct entry *e;
	uint64_t *copy;
	int how;

	if (!key)
		return XP_BORROWED_NEW;         /* no key (a damaged run): nothing to keep */
	if ((b->used + 1) * 4 > b->cap * 3 && grow(b))
		return -ENOMEM;
	e = find(b, pk);
	if (!(copy = malloc((n ? n : 1) * sizeof(*ips))))
		return -ENOMEM;
	memcpy(copy, ips, n * sizeof(*ips));
	how = !e->pk ? XP_BORROWED_NEW : e->stack == stack ? XP_BORROWED_SAME : XP_BORROWED_DIFFERED;
	if (!e->pk)
		b->used++;
	free(e->ips);
	*e = (struct entry){ pk, n, copy, stack };
	return how;
}

const uint64_t *xp_borrowed_get(const struct xp_borrowed *b, uint32_t pid, uint32_t key,
				unsigned *n)
{
	const struct entry *e = find(b, (uint64_t)pid << 32 | key);

	if (!key || !e->pk)
		return NULL;
	*n = e->n;
	return e->ips;
}

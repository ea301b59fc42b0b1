/* u64map.c - linear-probing hash map of (u64, u64) -> u64; see u64map.h. */
#include "u64map.h"

#include <errno.h>
#include <stdlib.h>

void xp_u64map_init(struct xp_u64map *m)
{
	m->slots = NULL;
	m->cap = 0;
	m->count = 0;
}

void xp_u64map_free(struct xp_u64map *m)
{
	free(m->slots);
	xp_u64map_init(m);
}

static size_t slot_of(const struct xp_u64map *m, uint64_t k1, uint64_t k2)
{
	return (size_t)(xp_hash64(k1 ^ xp_hash64(k2)) & (m->cap - 1));
}

static int grow(struct xp_u64map *m)
{
	size_t cap = m->cap ? m->cap * 2 : 1024;
	struct xp_u64map_entry *old = m->slots, *slots;
	size_t old_cap = m->cap;

	if (cap > SIZE_MAX / sizeof(*slots))
		return -ENOMEM;
	slots = calloc(cap, sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	m->slots = slots;
	m->cap = cap;
	for (size_t i = 0; i < old_cap; i++) {
		size_t j;

		if (!old[i].used)
			continue;
		j = slot_of(m, old[i].k1, old[i].k2);
		while (slots[j].used)
			j = (j + 1) & (cap - 1);
		slots[j] = old[i];
	}
	free(old);
	return 0;
}

int xp_u64map_upsert(struct xp_u64map *m, uint64_t k1, uint64_t k2,
		     uint64_t **slot, int *fresh)
{
	size_t i;

	/* keep the load factor under 1/2 so probes stay short */
	if ((m->count + 1) * 2 > m->cap) {
		int err = grow(m);

		if (err)
			return err;
	}
	i = slot_of(m, k1, k2);
	while (m->slots[i].used) {
		if (m->slots[i].k1 == k1 && m->slots[i].k2 == k2) {
			*slot = &m->slots[i].value;
			*fresh = 0;
			return 0;
		}
		i = (i + 1) & (m->cap - 1);
	}
	m->slots[i].used = 1;
	m->slots[i].k1 = k1;
	m->slots[i].k2 = k2;
	m->slots[i].value = 0;
	m->count++;
	*slot = &m->slots[i].value;
	*fresh = 1;
	return 0;
}

uint64_t *xp_u64map_find(const struct xp_u64map *m, uint64_t k1, uint64_t k2)
{
	size_t i;

	if (!m->cap)
		return NULL;
	i = slot_of(m, k1, k2);
	while (m->slots[i].used) {
		if (m->slots[i].k1 == k1 && m->slots[i].k2 == k2)
			return &m->slots[i].value;
		i = (i + 1) & (m->cap - 1);
	}
	return NULL;
}

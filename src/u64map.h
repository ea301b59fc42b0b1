/* u64map.h - open-addressing hash map from a pair of u64 keys to a u64 value.
 * The one hash table behind frame, stack-tree and symbol-cache de-duplication:
 * no per-entry allocation, so tens of millions of lookups stay cheap. Slots
 * are hashed with a random key per process, so keys from a hostile run
 * cannot be chosen to collide; the order of entries differs between runs.
 *
 *   struct xp_u64map m; uint64_t *slot; int fresh;
 *   xp_u64map_init(&m);
 *   if (xp_u64map_upsert(&m, parent, frame, &slot, &fresh) == 0 && fresh) *slot = next_id++;
 *   xp_u64map_free(&m);
 */
#ifndef XP_U64MAP_H
#define XP_U64MAP_H

#include <stddef.h>
#include <stdint.h>

struct xp_u64map_entry {
	uint64_t k1, k2;            /* key; an entry is used when used != 0 */
	uint64_t value;
	uint64_t used;
};

struct xp_u64map {
	struct xp_u64map_entry *slots;
	size_t cap;                 /* power of two, or 0 */
	size_t count;
};

void xp_u64map_init(struct xp_u64map *m);
void xp_u64map_free(struct xp_u64map *m);
/* Finds (k1, k2) or inserts it with value 0; *slot points at the value
 * (valid until the next upsert) and *fresh tells whether it was inserted.
 * 0 or -ENOMEM. */
int xp_u64map_upsert(struct xp_u64map *m, uint64_t k1, uint64_t k2,
		     uint64_t **slot, int *fresh);
/* The value pointer or NULL. */
uint64_t *xp_u64map_find(const struct xp_u64map *m, uint64_t k1, uint64_t k2);
/* The used entries sorted by (k1, k2), in a new array the caller frees
 * (NULL when there are none): the slots' order follows the process's key,
 * so whatever is written in that order would differ between ingests.
 * 0 and *out, *n, or -ENOMEM. */
int xp_u64map_sorted(const struct xp_u64map *m, struct xp_u64map_entry **out, size_t *n);

/* This process's random key (two words, set once): hashes of what a run
 * holds mix it in, so that a run cannot choose keys that collide. */
const uint64_t *xp_hash_key(void);

static inline uint64_t xp_hash64(uint64_t x)
{
	/* splitmix64 finalizer: good avalanche for sequential ids and addresses.
	 * Unkeyed and invertible: for keys from input, go through a map */
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	x ^= x >> 31;
	return x;
}

#endif

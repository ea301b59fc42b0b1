/* u64map.c - linear-probing hash map of (u64, u64) -> u64; see u64map.h. */
#include "src/u64map.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

/* Keys come from runs, and a run may come from someone who wants ingest
 * slow: with a known hash, keys chosen to share one slot make every probe
 * walk all of them (200k records: 29 s instead of 0.1 s). A random key per
 * process, mixed in before each finalizer, leaves nothing to aim at. */
static uint64_t seed[2];
static pthread_once_t seed_once = PTHREAD_ONCE_INIT;

static void seed_init(void)
{
	struct timespec t;

	if (getrandom(seed, sizeof(seed), GRND_NONBLOCK) == (ssize_t)sizeof(seed))
		return;
	/* no entropy yet (early boot): what an outsider cannot know in advance */
	clock_gettime(CLOCK_MONOTONIC, &t);
	seed[0] = xp_hash64((uint64_t)t.tv_nsec ^ (uint64_t)(uintptr_t)&t);
	seed[1] = xp_hash64(seed[0] ^ (uint64_t)getpid() ^ (uint64_t)t.tv_sec << 32);
}

const uint64_t *xp_hash_key(void)
{
	pthread_once(&seed_once, seed_init);
	return seed;
}

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
	return (size_t)(xp_hash64(k1 ^ seed[0] ^ xp_hash64(k2 ^ seed[1])) & (m->cap - 1));
}

static int grow(struct xp_u64map *m)
{
	size_t cap = m->cap ? m->cap * 2 : 1024;
	struct xp_u64map_entry *old = m->slots, *slots;
	size_t old_cap = m->cap;

	if (cap > SIZE_MAX / sizeof(*slots))
		return -ENOMEM;
	/* every slot_of comes after a first grow: the seed is set by then */
	xp_hash_key();
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

static int by_key(const void *a, const void *b)
{
	const struct xp_u64map_entry *x = a, *y = b;

	if (x->k1 != y->k1)
		return x->k1 < y->k1 ? -1 : 1;
	return x->k2 < y->k2 ? -1 : x->k2 > y->k2;
}

int xp_u64map_sorted(const struct xp_u64map *m, struct xp_u64map_entry **out, size_t *n)
{
	struct xp_u64map_entry *v = NULL;
	size_t k = 0;

	if (m->count && !(v = malloc(m->count * sizeof(*v))))
		return -ENOMEM;
	for (size_t i = 0; i < m->cap; i++)
		if (m->slots[i].used)
			v[k++] = m->slots[i];
	if (k)
		qsort(v, k, sizeof(*v), by_key);
	*out = v;
	*n = k;
	return 0;
}

/* strtab.c - string interner (FNV-1a hashed, open addressing over ids). */
#include "src/strtab.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "src/array.h"
#include "src/u64map.h"

#define STRTAB_MAX_LEN (1u << 20)

struct xp_strtab {
	char **strs;                /* strs[id - 1], NUL terminated, owned */
	size_t *lens;
	size_t count, strs_cap;
	uint32_t *slots;            /* id or 0 for empty */
	uint64_t *hashes;           /* hash of each slot's string */
	size_t cap;                 /* slots, power of two */
	uint64_t key[2];            /* xp_hash_key(): strings come from runs */
};

/* FNV-1a from a keyed start, then a keyed finalizer: plain FNV's low bits
 * follow only the strings' low bits, so names could be picked to share a
 * slot; with the process's key nothing can be aimed at. */
static uint64_t hash_bytes(const struct xp_strtab *t, const char *s, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ull ^ t->key[0];

	for (size_t i = 0; i < len; i++) {
		h ^= (unsigned char)s[i];
		h *= 0x100000001b3ull;
	}
	return xp_hash64(h ^ t->key[1]);
}

struct xp_strtab *xp_strtab_new(void)
{
	struct xp_strtab *t = calloc(1, sizeof(struct xp_strtab));
	const uint64_t *key = xp_hash_key();

	if (t) {
		t->key[0] = key[0];
		t->key[1] = key[1];
	}
	return t;
}

void xp_strtab_free(struct xp_strtab *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->count; i++)
		free(t->strs[i]);
	free(t->strs);
	free(t->lens);
	free(t->slots);
	free(t->hashes);
	free(t);
}

static int grow_slots(struct xp_strtab *t)
{
	size_t cap = t->cap ? t->cap * 2 : 256;
	uint32_t *slots = calloc(cap, sizeof(*slots));
	uint64_t *hashes = calloc(cap, sizeof(*hashes));

	if (!slots || !hashes) {
		free(slots);
		free(hashes);
		return -ENOMEM;
	}
	for (size_t i = 0; i < t->cap; i++) {
		size_t j;

		if (!t->slots[i])
			continue;
		j = t->hashes[i] & (cap - 1);
		while (slots[j])
			j = (j + 1) & (cap - 1);
		slots[j] = t->slots[i];
		hashes[j] = t->hashes[i];
	}
	free(t->slots);
	free(t->hashes);
	t->slots = slots;
	t->hashes = hashes;
	t->cap = cap;
	return 0;
}

int xp_strtab_intern(struct xp_strtab *t, const char *s, size_t len,
		     int64_t *id, int *fresh)
{
	uint64_t h = hash_bytes(t, s, len);
	size_t i;
	char *copy;

	if (len > STRTAB_MAX_LEN)
		return -E2BIG;
	if ((t->count + 1) * 2 > t->cap && grow_slots(t))
		return -ENOMEM;
	for (i = h & (t->cap - 1); t->slots[i]; i = (i + 1) & (t->cap - 1)) {
		uint32_t k = t->slots[i] - 1;

		if (t->hashes[i] == h && t->lens[k] == len && !memcmp(t->strs[k], s, len)) {
			*id = t->slots[i];
			*fresh = 0;
			return 0;
		}
	}
	if (t->count == t->strs_cap) {
		/* two arrays of one capacity: the same growth for each */
		size_t strs_cap = t->strs_cap, lens_cap = t->strs_cap;

		if (xp_array__reserve((void **)&t->strs, &strs_cap, t->count + 1, sizeof(*t->strs), 256) ||
		    xp_array__reserve((void **)&t->lens, &lens_cap, t->count + 1, sizeof(*t->lens), 256))
			return -ENOMEM;
		t->strs_cap = strs_cap;
	}
	copy = malloc(len + 1);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, s, len);
	copy[len] = '\0';
	t->strs[t->count] = copy;
	t->lens[t->count] = len;
	t->count++;
	t->slots[i] = (uint32_t)t->count;
	t->hashes[i] = h;
	*id = (int64_t)t->count;
	*fresh = 1;
	return 0;
}

const char *xp_strtab_get(const struct xp_strtab *t, int64_t id)
{
	if (id < 1 || (size_t)id > t->count)
		return NULL;
	return t->strs[id - 1];
}

size_t xp_strtab_count(const struct xp_strtab *t)
{
	return t->count;
}

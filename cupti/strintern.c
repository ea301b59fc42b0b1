/* strintern.c - open-addressing hash table of copied names (strintern.h).
 * Sized for the few thousand distinct kernels of a large PyTorch run; grows
 * by doubling at 50% load. */
#include "cupti/strintern.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct slot {
	uint64_t hash;              /* 0 = empty */
	char *str;                  /* owned copy */
	uint32_t id;
};

struct xpc_strintern {
	struct slot *slots;
	size_t cap;                 /* power of two */
	size_t count;
	uint32_t *next_id;          /* shared counter */
};

static uint64_t hash_str(const char *s, size_t n)
{
	uint64_t h = 1469598103934665603ull;    /* FNV-1a */

	for (size_t i = 0; i < n; i++) {
		h ^= (unsigned char)s[i];
		h *= 1099511628211ull;
	}
	return h ? h : 1;
}

struct xpc_strintern *xpc_strintern__new(uint32_t *next_id)
{
	struct xpc_strintern *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->cap = 256;
	t->slots = calloc(t->cap, sizeof(*t->slots));
	if (!t->slots) {
		free(t);
		return NULL;
	}
	t->next_id = next_id;
	return t;
}

static struct slot *find(struct slot *slots, size_t cap, uint64_t h,
			 const char *s, size_t n)
{
	size_t i = h & (cap - 1);

	for (;;) {
		struct slot *sl = &slots[i];

		if (!sl->hash)
			return sl;
		if (sl->hash == h && strncmp(sl->str, s, n) == 0 && sl->str[n] == '\0')
			return sl;
		i = (i + 1) & (cap - 1);
	}
}

static int grow(struct xpc_strintern *t)
{
	size_t cap = t->cap * 2;
	struct slot *slots = calloc(cap, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; i < t->cap; i++) {
		struct slot *old = &t->slots[i];

		if (old->hash)
			*find(slots, cap, old->hash, old->str, strlen(old->str)) = *old;
	}
	free(t->slots);
	t->slots = slots;
	t->cap = cap;
	return 0;
}

int xpc_strintern__intern(struct xpc_strintern *t, const char *s, uint32_t *id)
{
	size_t n;
	uint64_t h;
	struct slot *sl;

	*id = 0;
	if (!s || !*s)
		return 0;
	n = strnlen(s, XP_STR_MAX);
	h = hash_str(s, n);
	sl = find(t->slots, t->cap, h, s, n);
	if (sl->hash) {
		*id = sl->id;
		return 0;
	}
	if ((t->count + 1) * 2 > t->cap) {
		if (grow(t))
			return -ENOMEM;
		sl = find(t->slots, t->cap, h, s, n);
	}
	sl->str = strndup(s, n);
	if (!sl->str)
		return -ENOMEM;
	sl->hash = h;
	sl->id = __atomic_add_fetch(t->next_id, 1, __ATOMIC_RELAXED);
	t->count++;
	*id = sl->id;
	return 1;
}

size_t xpc_strintern__count(const struct xpc_strintern *t)
{
	return t->count;
}

void xpc_strintern__free(struct xpc_strintern *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->cap; i++)
		free(t->slots[i].str);
	free(t->slots);
	free(t);
}

/* wtab.c - keyed weights over an interner; see wtab.h. */
#include "export/render/wtab.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "src/array.h"
#include "src/strtab.h"

struct xp_wtab {
	struct xp_strtab *keys;
	struct xp_wrow *rows;       /* by key id - 1 */
	size_t cap;
};

struct xp_wtab *xp_wtab_new(void)
{
	struct xp_wtab *t = calloc(1, sizeof(*t));

	if (t && !(t->keys = xp_strtab_new())) {
		free(t);
		return NULL;
	}
	return t;
}

void xp_wtab_free(struct xp_wtab *t)
{
	if (!t)
		return;
	xp_strtab_free(t->keys);
	free(t->rows);
	free(t);
}

int xp_wtab_add(struct xp_wtab *t, int side, const char *key, size_t len,
		uint64_t weight, uint64_t n)
{
	int64_t id;
	int fresh, err;

	if (side < 0 || side > 1)
		return -EINVAL;
	err = xp_strtab_intern(t->keys, key, len, &id, &fresh);
	if (err)
		return err;
	if ((size_t)id > t->cap) {
		size_t was = t->cap;

		if (xp_array__reserve((void **)&t->rows, &t->cap, (size_t)id, sizeof(*t->rows), 256))
			return -ENOMEM;
		memset(t->rows + was, 0, (t->cap - was) * sizeof(*t->rows));
	}
	t->rows[id - 1].w[side] += weight;
	t->rows[id - 1].n[side] += n;
	return 0;
}

size_t xp_wtab_count(const struct xp_wtab *t)
{
	return xp_strtab_count(t->keys);
}

static int cmp_key(const void *a, const void *b)
{
	return strcmp(((const struct xp_wrow *)a)->key, ((const struct xp_wrow *)b)->key);
}

int xp_wtab_rows(const struct xp_wtab *t, struct xp_wrow **rows, size_t *n)
{
	*n = xp_wtab_count(t);
	*rows = NULL;
	if (!*n)
		return 0;
	*rows = malloc(*n * sizeof(**rows));
	if (!*rows)
		return -ENOMEM;
	for (size_t i = 0; i < *n; i++) {
		(*rows)[i] = t->rows[i];
		(*rows)[i].key = xp_strtab_get(t->keys, (int64_t)i + 1);
	}
	qsort(*rows, *n, sizeof(**rows), cmp_key);
	return 0;
}

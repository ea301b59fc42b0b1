/* ipset.c - see ipset.h. */
#include "capture/ipset.h"

#include <errno.h>
#include <stdlib.h>

void ipset_init(struct ipset *s, size_t max)
{
	xp_u64map_init(&s->map);
	s->max = max;
	s->full = false;
}

void ipset_add(struct ipset *s, const uint64_t *ips, size_t n)
{
	uint64_t *slot;
	int fresh;

	for (size_t i = 0; i < n && !s->full; i++)
		if (s->map.count >= s->max || xp_u64map_upsert(&s->map, 0, ips[i], &slot, &fresh))
			s->full = true;
}

int ipset_sorted(const struct ipset *s, uint64_t **ips, size_t *n)
{
	struct xp_u64map_entry *e;
	size_t count;
	int err;

	*ips = NULL;
	*n = 0;
	if (s->full)
		return -E2BIG;
	err = xp_u64map_sorted(&s->map, &e, &count);
	if (err || !count)
		return err;
	*ips = malloc(count * sizeof(**ips));
	for (size_t i = 0; *ips && i < count; i++)
		(*ips)[i] = e[i].k2;
	free(e);
	if (!*ips)
		return -ENOMEM;
	*n = count;
	return 0;
}

void ipset_free(struct ipset *s)
{
	xp_u64map_free(&s->map);
}

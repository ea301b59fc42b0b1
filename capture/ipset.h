/* ipset.h - the distinct kernel IPs a run's stacks hold, up to a bound:
 * what the run's kallsyms copy must name (kernaddr.h). Past the bound, or
 * out of memory, the set says so and the copy holds every text symbol.
 *
 *   struct ipset s;
 *   ipset_init(&s, 65536);
 *   ipset_add(&s, ips, n);                    // each stack's kernel part
 *   ipset_sorted(&s, &ips, &n);               // -E2BIG once past the bound
 *   ipset_free(&s);
 */
#ifndef XP_IPSET_H
#define XP_IPSET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "src/u64map.h"

struct ipset {
	struct xp_u64map map;
	size_t max;
	bool full;                  /* more than max, or out of memory */
};

void ipset_init(struct ipset *s, size_t max);
void ipset_add(struct ipset *s, const uint64_t *ips, size_t n);
/* The IPs in ascending order, malloc'd (NULL and 0 when none). 0, -E2BIG
 * when the set ran past its bound, or -ENOMEM. */
int ipset_sorted(const struct ipset *s, uint64_t **ips, size_t *n);
void ipset_free(struct ipset *s);

#endif

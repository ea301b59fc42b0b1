/* rank_host.h - --by rank's collectives that the ranks waited for on their
 * hosts (analysis/host_coll.h: gloo's, c10d work): a section of each
 * rank's waits in them, and per collective what the spread table says of
 * a collective: the rank the others waited for and how long they did.
 * report_rank_host.c computes and prints the section; report_rank.c puts
 * the rows in its spread table.
 *
 *   struct xp_rank_host_coll *c; size_t n;
 *   xp_rank_host_section(R, &H);
 *   if (xp_rank_host_colls(R->o, &H, &c, &n) == 0) { ...; free(c); }
 */
#ifndef XP_RANK_HOST_H
#define XP_RANK_HOST_H

#include <stddef.h>
#include <stdint.h>

#include "export/analysis/host_coll.h"
#include "export/report/report_priv.h"

/* One host-side collective (one name of H's) over the job. */
struct xp_rank_host_coll {
	const char *name;           /* H's */
	int64_t spread_ns;          /* the ranks' time in its waits: most - least */
	int64_t late_rank;          /* the rank the others waited for longest; -1: none */
	int64_t wait_ns;            /* every rank's wait for the last to enter, in all */
	int64_t late_ns;            /* of which for late_rank (outside the clocks' error) */
	int64_t unsure_ns;          /* of which where the last two entered within it */
	int64_t late_stack;         /* where late_rank waited in its first late entry, -1 */
};

/* The host-side collectives of the instances --pid/--since/--until select,
 * by name, into *out (malloc'd; *n of them). 0 or -ENOMEM. */
int xp_rank_host_colls(const struct xp_report_opts *o, const struct xp_host_colls *H,
		       struct xp_rank_host_coll **out, size_t *n);
/* The section: per rank and collective its waits, their time, its waits
 * for others, the instances it entered last; or why none were matched. */
int xp_rank_host_section(struct rep *R, const struct xp_host_colls *H);

#endif

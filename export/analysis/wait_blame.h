/* wait_blame.h - what --by wait's parts share (view_wait.c splits the waits,
 * view_wait_out.c prints the totals): the kinds of cause beyond --by idle's,
 * a row of a stretch's causes, and the totals. */
#ifndef XP_WAIT_BLAME_H
#define XP_WAIT_BLAME_H

#include <stddef.h>
#include <stdint.h>

#include "src/u64map.h"

struct rep;

#define MAX_DEPTH 4                 /* ranks followed past the late one, at most */

enum {
	XP_WAIT_GPU = 32,           /* + XP_TL_COMPUTE, _COMM, _MEM: the GPU's own work */
	XP_WAIT_RANK = 40,          /* waiting for another rank (followed there) */
	XP_WAIT_CYCLE,              /* ... for a rank of the chain already */
	XP_WAIT_DEPTH,              /* ... past MAX_DEPTH */
	XP_WAIT_CLOSE,              /* entries within the clocks' error */
	XP_WAIT_NONE,               /* the late rank did nothing more than the waiting one */
	XP_WAIT_KINDS
};

/* One cause of one stretch. */
struct xp_wait_row {
	int kind;                   /* idle_cause.h's kinds, or the above */
	const char *where;          /* interned */
	int64_t ns, big;            /* in all; its largest piece */
	int32_t slot, inst;         /* XP_WAIT_RANK: the rank and instance of the largest piece */
};

/* A total: waits of rank waiter charged to late, at culprit's cause. */
struct xp_wait_total {
	size_t waiter, late, culprit;   /* slots (coll_inst.h) */
	int kind;
	const char *where;
	int64_t ns;
	uint64_t waits, last;       /* the first waits it has a part of */
};

struct xp_wait_table {
	struct xp_wait_total *v;
	size_t n, cap;
	struct xp_u64map at;
	int64_t total_ns;           /* every collective wait */
	uint64_t nwaits;
};

/* One part of a wait: ns of it charged to the late rank's row r. */
typedef void (*xp_wait_part_fn)(void *ctx, const struct xp_wait_row *r, int64_t ns);

/* A wait of ns shared among the causes the late rank (rows l[0..nl)) spent
 * more time in than the waiting one (w[0..nw)) since they were last in
 * step: among kinds by their net excess, within a kind among its places
 * by theirs (rows' where compared as pointers: interned). part gets each
 * share, the parts adding up to ns; 0 (no call) when nothing took the
 * late rank longer. */
int xp_wait_share(const struct xp_wait_row *w, size_t nw, const struct xp_wait_row *l, size_t nl,
		  int64_t ns, xp_wait_part_fn part, void *ctx);

/* A sum of stretches' rows: rows r[0..nr) added to *v (*n of them, by
 * kind and where; where compared as pointers). 0 or -ENOMEM. */
int xp_wait_rows_add(struct xp_wait_row **v, size_t *n, size_t *cap, const struct xp_wait_row *r,
		     size_t nr);

/* ns of wait wid more to (waiter, late, culprit, kind, where). 0 or -ENOMEM
 * (where NULL: out of memory already). */
int xp_wait_table_add(struct xp_wait_table *t, size_t waiter, size_t late, size_t culprit, int kind,
		      const char *where, int64_t ns, uint64_t wid);

/* The totals printed in R's format, ranks by rank[slot]; clock_err: the
 * job's clock alignment error. */
void xp_wait_print(struct rep *R, struct xp_wait_table *t, const int64_t *rank, int64_t clock_err);

#endif

/* wait_share.c - the one rule that shares a collective wait among the late
 * rank's causes (wait_blame.h): --by wait on a merged job (view_wait.c)
 * and `xpcorr job --by wait` on the ranks' summaries (jobwait.c) both call
 * it, so the two charge alike. */
#include <errno.h>
#include <string.h>

#include "src/array.h"

#include "export/analysis/wait_blame.h"
#include "src/satmath.h"

static int64_t ns_in(const struct xp_wait_row *v, size_t n, int kind, const char *where)
{
	for (size_t i = 0; i < n; i++)
		if (v[i].kind == kind && v[i].where == where)
			return v[i].ns;
	return 0;
}

/* The late rank's excess over the waiting one per kind of cause (net: a
 * blocking call named differently on the two is no excess), into net[],
 * and per kind the sum of its places' positive excess, into pos[]. The sum
 * of the positive kinds' net excess: 0 when there is none. */
static double excess(const struct xp_wait_row *w, size_t nw, const struct xp_wait_row *l,
		     size_t nl, double net[XP_WAIT_KINDS], double pos[XP_WAIT_KINDS])
{
	double sum = 0;

	memset(net, 0, XP_WAIT_KINDS * sizeof(*net));
	memset(pos, 0, XP_WAIT_KINDS * sizeof(*pos));
	for (size_t i = 0; i < nl; i++) {
		int64_t e = xp_sat_sub(l[i].ns, ns_in(w, nw, l[i].kind, l[i].where));

		net[l[i].kind] += (double)l[i].ns;
		pos[l[i].kind] += e > 0 ? (double)e : 0;
	}
	for (size_t i = 0; i < nw; i++)
		net[w[i].kind] -= (double)w[i].ns;
	for (int k = 0; k < XP_WAIT_KINDS; k++)
		sum += net[k] > 0 && pos[k] > 0 ? net[k] : 0;
	return sum;
}

int xp_wait_share(const struct xp_wait_row *w, size_t nw, const struct xp_wait_row *l, size_t nl,
		  int64_t ns, xp_wait_part_fn part, void *ctx)
{
	double net[XP_WAIT_KINDS], pos[XP_WAIT_KINDS], sum = excess(w, nw, l, nl, net, pos);
	int64_t left = ns;
	size_t last = 0;

	for (size_t i = 0; i < nl; i++)
		if (net[l[i].kind] > 0 && pos[l[i].kind] > 0 && l[i].ns > ns_in(w, nw, l[i].kind, l[i].where))
			last = i + 1;
	if (sum <= 0 || !last)
		return 0;
	for (size_t i = 0; i < last; i++) {
		int64_t e = xp_sat_sub(l[i].ns, ns_in(w, nw, l[i].kind, l[i].where)), part_ns;
		double d;

		if (e <= 0 || net[l[i].kind] <= 0 || pos[l[i].kind] <= 0)
			continue;
		/* the last takes the rounding: the parts add up to the wait */
		d = (double)ns * net[l[i].kind] / sum * (double)e / pos[l[i].kind] + 0.5;
		/* at most what is left (a double of 2^63 is no int64) */
		part_ns = i + 1 == last || !(d < (double)left) ? left : (int64_t)d;
		left -= part_ns;
		part(ctx, &l[i], part_ns);
	}
	return 1;
}

int xp_wait_rows_add(struct xp_wait_row **v, size_t *n, size_t *cap, const struct xp_wait_row *r,
		     size_t nr)
{
	for (size_t i = 0; i < nr; i++) {
		size_t k = 0;

		while (k < *n && ((*v)[k].kind != r[i].kind || (*v)[k].where != r[i].where))
			k++;
		if (k == *n) {
			if (xp_array__reserve((void **)v, cap, *n + 1, sizeof(**v), 16))
				return -ENOMEM;
			(*v)[(*n)++] = (struct xp_wait_row){ .kind = r[i].kind, .where = r[i].where,
							     .slot = -1, .inst = -1 };
		}
		(*v)[k].ns = xp_sat_add((*v)[k].ns, r[i].ns);
	}
	return 0;
}

int xp_wait_table_add(struct xp_wait_table *t, size_t waiter, size_t late, size_t culprit, int kind,
		      const char *where, int64_t ns, uint64_t wid)
{
	uint64_t *slot;
	int fresh;

	if (ns <= 0)
		return 0;
	if (!where || xp_u64map_upsert(&t->at, (uint64_t)kind << 58 | (uint64_t)waiter << 38 |
				       (uint64_t)late << 19 | culprit, (uint64_t)(uintptr_t)where,
				       &slot, &fresh))
		return -ENOMEM;
	if (fresh) {
		if (xp_array__reserve((void **)&t->v, &t->cap, t->n + 1, sizeof(*t->v), 64))
			return -ENOMEM;
		t->v[t->n] = (struct xp_wait_total){ .waiter = waiter, .late = late, .culprit = culprit,
						     .kind = kind, .where = where };
		*slot = ++t->n;
	}
	/* saturated: a crafted summary's waits may each be near the int64 limit */
	t->v[*slot - 1].ns = xp_sat_add(t->v[*slot - 1].ns, ns);
	t->v[*slot - 1].waits += t->v[*slot - 1].last != wid;
	t->v[*slot - 1].last = wid;
	return 0;
}

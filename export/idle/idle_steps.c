/* idle_steps.c - steps from the Python loop of the launches (idle_steps.h). */
#include "export/idle/idle_steps.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/array.h"
#include "db/db_schema.h"
#include "db/stackwalk.h"
#include "src/strtab.h"
#include "src/u64map.h"

#define MAX_PY 64                   /* Python frames kept a launch, the outermost */

struct py_line {
	int64_t func;               /* interned "module\037qualname" */
	int64_t line;
};

struct py_chain {
	size_t off, len;            /* into the pool, outermost first */
};

struct loop_launch {
	int64_t at, gtid, stack;
	size_t chain;               /* index into chains; (size_t)-1: no usable stack */
};

struct loop_candidate {
	size_t depth;
	int64_t func, target, last; /* the line it returns to, the furthest line it returns from */
	uint64_t count;
	size_t ref;                 /* a launch that returned: its outer frames are the loop's */
};

struct loop_finder {
	struct xp_stackwalk *walk;
	struct xp_strtab *funcs;
	struct xp_u64map chain_at;  /* stack -> chain index + 1; 0: no usable stack */
	struct py_chain *chains;
	size_t nchain, ccap;
	struct py_line *pool;
	size_t npool, pcap;
	struct loop_launch *l;
	size_t nl, lcap;
	struct loop_candidate *cand;
	size_t ncand, candcap;
	struct xp_u64map cand_at;   /* (depth, func), target -> index + 1 */
};

static int push_frame(struct loop_finder *F, const struct xp_frame_row *fr)
{
	int64_t id;
	char key[1024];
	int fresh, n;

	/* a Python line with its line, as data (db/pyframe.h) */
	if (!fr->py || fr->py->line < 0)
		return 0;
	n = snprintf(key, sizeof(key), "%s\037%s", fr->py->file, fr->py->qualname);
	if (n < 0 || (size_t)n >= sizeof(key))
		n = sizeof(key) - 1;
	if (xp_strtab_intern(F->funcs, key, (size_t)n, &id, &fresh) ||
	    xp_array__reserve((void **)&F->pool, &F->pcap, F->npool + 1, sizeof(*F->pool), 256))
		return -ENOMEM;
	F->pool[F->npool++] = (struct py_line){ id, fr->py->line };
	return 0;
}

/* The stack's Python frames into the pool, outermost first: 1, or 0 for a
 * stack with none or with a note (a backward launch's borrowed stack). */
static int read_chain(struct loop_finder *F, int64_t stack, struct py_chain *c)
{
	struct xp_frame_row fr;
	int64_t id = stack;
	int rc = 1;

	c->off = F->npool;
	while (rc > 0 && id > 0 && xp_stackwalk_next(F->walk, &id, &fr)) {
		if (fr.kind == XP_FRAME_NOTE)
			rc = 0;
		else if (fr.kind == XP_FRAME_PYTHON && fr.sym && push_frame(F, &fr))
			rc = -ENOMEM;
	}
	xp_stackwalk_done(F->walk);
	c->len = F->npool - c->off;
	if (rc <= 0 || !c->len) {
		F->npool = c->off;
		return rc;
	}
	for (size_t i = 0; i < c->len / 2; i++) {  /* read from the leaf: turn it */
		struct py_line t = F->pool[c->off + i];

		F->pool[c->off + i] = F->pool[c->off + c->len - 1 - i];
		F->pool[c->off + c->len - 1 - i] = t;
	}
	if (c->len > MAX_PY) {
		F->npool = c->off + MAX_PY;
		c->len = MAX_PY;
	}
	return 1;
}

/* The chain index of a stack, read once; (size_t)-1 for none. */
static int chain_of(struct loop_finder *F, int64_t stack, size_t *out)
{
	uint64_t *slot;
	struct py_chain c;
	int fresh, rc;

	*out = (size_t)-1;
	if (stack <= 0)
		return 0;
	if (xp_u64map_upsert(&F->chain_at, (uint64_t)stack, 0, &slot, &fresh))
		return -ENOMEM;
	if (!fresh) {
		*out = (size_t)*slot - 1;
		return 0;
	}
	if ((rc = read_chain(F, stack, &c)) <= 0)
		return rc;
	if (xp_array__reserve((void **)&F->chains, &F->ccap, F->nchain + 1, sizeof(*F->chains), 64))
		return -ENOMEM;
	F->chains[F->nchain] = c;
	*out = F->nchain++;
	*xp_u64map_find(&F->chain_at, (uint64_t)stack, 0) = F->nchain;
	return 0;
}

static int cmp_launch(const void *pa, const void *pb)
{
	const struct loop_launch *a = pa, *b = pb;

	if (a->gtid != b->gtid)
		return (a->gtid > b->gtid) - (a->gtid < b->gtid);
	return (a->at > b->at) - (a->at < b->at);
}

/* The device's launches (one per call), by thread then call. */
static int collect_launches(struct loop_finder *F, const struct xp_tl *tl)
{
	size_t kept = 0;

	for (size_t i = 0; i < tl->n; i++) {
		const struct xp_tl_op *op = &tl->ops[i];

		if (op->launch < 0 || op->stack <= 0 || op->gtid < 0)
			continue;
		if (xp_array__reserve((void **)&F->l, &F->lcap, F->nl + 1, sizeof(*F->l), 256))
			return -ENOMEM;
		F->l[F->nl++] = (struct loop_launch){ op->launch, op->gtid, op->stack, (size_t)-1 };
	}
	if (F->nl)
		qsort(F->l, F->nl, sizeof(*F->l), cmp_launch);
	for (size_t i = 0; i < F->nl; i++) {     /* a graph's work is one call */
		if (kept && F->l[kept - 1].gtid == F->l[i].gtid && F->l[kept - 1].at == F->l[i].at)
			continue;
		F->l[kept++] = F->l[i];
	}
	F->nl = kept;
	for (size_t i = 0; i < F->nl; i++) {
		int rc = chain_of(F, F->l[i].stack, &F->l[i].chain);

		if (rc < 0)
			return rc;
	}
	return 0;
}

/* [*lo, *hi) of the launches: the thread with the most Python launches. */
static void main_thread_range(const struct loop_finder *F, size_t *lo, size_t *hi)
{
	size_t best = 0, a = 0;

	*lo = *hi = 0;
	while (a < F->nl) {
		size_t b = a, n = 0;

		for (; b < F->nl && F->l[b].gtid == F->l[a].gtid; b++)
			n += F->l[b].chain != (size_t)-1;
		if (n > best) {
			best = n;
			*lo = a;
			*hi = b;
		}
		a = b;
	}
}

static const struct py_line *frames(const struct loop_finder *F, const struct loop_launch *l, size_t *len)
{
	const struct py_chain *c = &F->chains[l->chain];

	*len = c->len;
	return F->pool + c->off;
}

/* Launch j after launch i: went a function back to a lower line? */
static int note_return(struct loop_finder *F, size_t i, size_t j)
{
	size_t na, nb, k = 0;
	const struct py_line *a = frames(F, &F->l[i], &na), *b = frames(F, &F->l[j], &nb);
	struct loop_candidate *c;
	uint64_t *slot;
	int fresh;

	while (k < na && k < nb && a[k].func == b[k].func && a[k].line == b[k].line)
		k++;
	if (k == na || k == nb || a[k].func != b[k].func || b[k].line >= a[k].line)
		return 0;
	if (xp_u64map_upsert(&F->cand_at, (uint64_t)k << 40 | (uint64_t)b[k].func, (uint64_t)b[k].line,
			     &slot, &fresh))
		return -ENOMEM;
	if (fresh) {
		if (xp_array__reserve((void **)&F->cand, &F->candcap, F->ncand + 1, sizeof(*F->cand), 16))
			return -ENOMEM;
		F->cand[F->ncand] = (struct loop_candidate){ .depth = k, .func = b[k].func,
							.target = b[k].line, .ref = j };
		*slot = ++F->ncand;
	}
	c = &F->cand[*slot - 1];
	c->count++;
	c->last = a[k].line > c->last ? a[k].line : c->last;
	return 0;
}

/* The loop: the outermost function that went back at least twice to one
 * line; there, of the lines it went back to about as often as the most
 * (an eighth of it or more), the first: a loop around another loop (the
 * micro-steps of a step) comes back to a line before the inner one's, less
 * often; an epoch's loop around the steps' far less often. NULL: none. */
static const struct loop_candidate *pick_loop(const struct loop_finder *F)
{
	const struct loop_candidate *best = NULL;
	size_t depth = (size_t)-1;
	uint64_t most = 0;

	for (size_t i = 0; i < F->ncand; i++)
		if (F->cand[i].count >= 2 && F->cand[i].depth < depth)
			depth = F->cand[i].depth;
	for (size_t i = 0; i < F->ncand; i++)
		if (F->cand[i].depth == depth && F->cand[i].count > most)
			most = F->cand[i].count;
	for (size_t i = 0; i < F->ncand; i++) {
		const struct loop_candidate *c = &F->cand[i];

		if (c->depth == depth && c->count >= 2 && c->count * 8 >= most &&
		    (!best || c->target < best->target))
			best = c;
	}
	return best;
}

/* The line of launch l in the loop's function, or -1 if l is not in it. */
static int64_t loop_line(const struct loop_finder *F, const struct loop_candidate *c, const struct loop_launch *l)
{
	size_t n, nr;
	const struct py_line *f, *ref = frames(F, &F->l[c->ref], &nr);

	if (l->chain == (size_t)-1)
		return -1;
	f = frames(F, l, &n);
	if (n <= c->depth || f[c->depth].func != c->func)
		return -1;
	for (size_t k = 0; k < c->depth; k++)
		if (f[k].func != ref[k].func || f[k].line != ref[k].line)
			return -1;
	return f[c->depth].line;
}

static int add_step(struct xp_loop_steps *s, size_t *cap, int64_t at)
{
	if (xp_array__reserve((void **)&s->w, cap, s->n + 1, sizeof(*s->w), 64))
		return -ENOMEM;
	if (s->n)
		s->w[s->n - 1][1] = at;
	s->w[s->n][0] = s->w[s->n][1] = at;
	s->n++;
	return 0;
}

/* Cuts [lo, hi) at every return to the loop's first line; the last step
 * ends with the work launched in it up to the loop's last launch. */
static int cut_steps(const struct loop_finder *F, const struct loop_candidate *c, size_t lo, size_t hi,
		     const struct xp_tl *tl, struct xp_loop_steps *s)
{
	int64_t prev = -1, last = -1, line;
	size_t cap = 0;

	for (size_t i = lo; i < hi; i++) {
		if ((line = loop_line(F, c, &F->l[i])) < 0)
			continue;
		if (line == c->target && prev != c->target && add_step(s, &cap, F->l[i].at))
			return -ENOMEM;
		if (s->n && line >= c->target && line <= c->last)
			last = F->l[i].at;
		prev = line;
	}
	if (s->n < 3)
		return 0;
	s->w[s->n - 1][1] = last + 1;
	for (size_t i = 0; i < tl->n; i++)
		if (tl->ops[i].launch >= s->w[s->n - 1][0] && tl->ops[i].launch <= last &&
		    tl->ops[i].end > s->w[s->n - 1][1])
			s->w[s->n - 1][1] = tl->ops[i].end;
	return 1;
}

/* The loop's first line as its frame reads. */
static void name_loop(struct loop_finder *F, const struct loop_candidate *c, struct xp_loop_steps *s)
{
	struct xp_frame_row fr;
	const char *texts[MAX_PY * 4];
	char *copy[MAX_PY * 4];
	size_t n = 0;
	int64_t id = F->l[c->ref].stack;

	snprintf(s->line, sizeof(s->line), "?");
	while (id > 0 && n < MAX_PY * 4 && xp_stackwalk_next(F->walk, &id, &fr))
		if (fr.kind == XP_FRAME_PYTHON && fr.sym && (copy[n] = strdup(fr.sym)))
			texts[n] = copy[n], n++;
	xp_stackwalk_done(F->walk);
	if (c->depth < n)
		snprintf(s->line, sizeof(s->line), "%s", texts[n - 1 - c->depth]);
	for (size_t i = 0; i < n; i++)
		free(copy[i]);
}

static void finder_free(struct loop_finder *F)
{
	xp_strtab_free(F->funcs);
	xp_u64map_free(&F->chain_at);
	xp_u64map_free(&F->cand_at);
	free(F->chains);
	free(F->pool);
	free(F->l);
	free(F->cand);
}

int xp_loop_steps_find(struct xp_stackwalk *walk, const struct xp_tl *tl, struct xp_loop_steps *s)
{
	struct loop_finder F = { .walk = walk };
	const struct loop_candidate *c;
	size_t lo, hi, prev = (size_t)-1;
	int rc = -ENOMEM;

	memset(s, 0, sizeof(*s));
	if (!(F.funcs = xp_strtab_new()) || (rc = collect_launches(&F, tl)) < 0)
		goto out;
	main_thread_range(&F, &lo, &hi);
	for (size_t i = lo; i < hi && rc >= 0; i++) {
		if (F.l[i].chain == (size_t)-1)
			continue;
		if (prev != (size_t)-1)
			rc = note_return(&F, prev, i);
		prev = i;
	}
	if (rc < 0 || !(c = pick_loop(&F)))
		goto out;
	if ((rc = cut_steps(&F, c, lo, hi, tl, s)) == 1)
		name_loop(&F, c, s);
out:
	finder_free(&F);
	if (rc <= 0) {
		free(s->w);
		s->w = NULL;
		s->n = 0;
	}
	return rc;
}

void xp_loop_steps_free(struct xp_loop_steps *s)
{
	free(s->w);
	s->w = NULL;
	s->n = 0;
}

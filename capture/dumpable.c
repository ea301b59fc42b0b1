/* dumpable.c - see dumpable.h. Marks (processes seen not dumpable) are
 * few and never forgotten: an open-addressing set that grows. Looks are
 * cached per pass in a small direct-mapped table. */
#include "capture/dumpable.h"

#include <stdlib.h>

#define CACHE_SLOTS 1024            /* a power of two */
#define FIRST_MARKS 64              /* a power of two */
#define NONE UINT64_MAX

struct mark {
	pid_t pid;                  /* 0: free slot */
	uint64_t seen;              /* when last seen not dumpable (or its fork) */
	uint64_t until;             /* its records before this ts are dropped; NONE: all */
};

struct look {
	pid_t pid;
	uint32_t pass;              /* the pass it was made in */
	int verdict;                /* what dumpable_look_fn said */
	uint64_t at;                /* when: it tells nothing of records after */
};

struct dumpable {
	dumpable_look_fn look;
	void *ctx;
	dumpable_now_fn now;
	uint32_t pass;
	struct look cache[CACHE_SLOTS];
	struct mark *marks;
	size_t nmarks, cap;         /* cap: a power of two, 0 before the first */
};

struct dumpable *dumpable_new(dumpable_look_fn look, void *ctx, dumpable_now_fn now)
{
	struct dumpable *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->look = look;
	t->ctx = ctx;
	t->now = now;
	t->pass = 1;
	return t;
}

void dumpable_free(struct dumpable *t)
{
	if (!t)
		return;
	free(t->marks);
	free(t);
}

void dumpable_pass(struct dumpable *t)
{
	t->pass++;
}

static size_t slot_of(pid_t pid, size_t cap)
{
	return ((size_t)(uint32_t)pid * 2654435761u) & (cap - 1);
}

static struct mark *find(struct dumpable *t, pid_t pid)
{
	if (!t->cap)
		return NULL;
	for (size_t i = slot_of(pid, t->cap);; i = (i + 1) & (t->cap - 1)) {
		if (t->marks[i].pid == pid)
			return &t->marks[i];
		if (!t->marks[i].pid)
			return NULL;
	}
}

static struct mark *slot_for(struct mark *marks, size_t cap, pid_t pid)
{
	size_t i = slot_of(pid, cap);

	while (marks[i].pid && marks[i].pid != pid)
		i = (i + 1) & (cap - 1);
	return &marks[i];
}

/* At most half full; NULL when out of memory. */
static struct mark *add(struct dumpable *t, pid_t pid)
{
	struct mark *m = find(t, pid);

	if (m)
		return m;
	if ((t->nmarks + 1) * 2 > t->cap) {
		size_t cap = t->cap ? t->cap * 2 : FIRST_MARKS;
		struct mark *marks = calloc(cap, sizeof(*marks));

		if (!marks)
			return NULL;
		for (size_t i = 0; i < t->cap; i++)
			if (t->marks[i].pid)
				*slot_for(marks, cap, t->marks[i].pid) = t->marks[i];
		free(t->marks);
		t->marks = marks;
		t->cap = cap;
	}
	m = slot_for(t->marks, t->cap, pid);
	m->pid = pid;
	m->seen = 0;
	m->until = NONE;
	t->nmarks++;
	return m;
}

static struct look *cached(struct dumpable *t, pid_t pid)
{
	return &t->cache[(uint32_t)pid & (CACHE_SLOTS - 1)];
}

/* Out from seen on. Out of memory: the record at hand is dropped all
 * the same, and the next pass looks again. */
static void mark(struct dumpable *t, pid_t pid, uint64_t seen)
{
	struct mark *m = add(t, pid);

	if (!m)
		return;
	if (seen > m->seen)
		m->seen = seen;
	m->until = NONE;
}

/* pid's verdict for a record at ts, looked at once per pass (again for
 * a record taken after the look: the rings fill while they are read). A
 * process not dumpable is marked. */
static int look(struct dumpable *t, pid_t pid, uint64_t ts)
{
	struct look *c = cached(t, pid);

	if (c->pid != pid || c->pass != t->pass || ts > c->at) {
		c->pid = pid;
		c->pass = t->pass;
		c->at = t->now();
		c->verdict = t->look(t->ctx, pid);
	}
	if (c->verdict == 0)
		mark(t, pid, c->at);
	return c->verdict;
}

bool dumpable_keeps(struct dumpable *t, pid_t pid, uint64_t ts)
{
	struct mark *m = find(t, pid);

	if (m && ts < m->until)
		return false;
	/* gone and never seen out: nothing tells otherwise */
	return look(t, pid, ts) != 0;
}

bool dumpable_allowed(struct dumpable *t, pid_t pid)
{
	struct mark *m = find(t, pid);

	if (m && m->until == NONE)
		return false;
	return look(t, pid, 0) != 0;
}

void dumpable_exec(struct dumpable *t, pid_t pid, uint64_t ts)
{
	struct mark *m = find(t, pid);
	struct look *c = cached(t, pid);

	if (c->pid == pid)
		c->pid = 0;             /* the look was of the old image */
	/* a look after the exec saw the new image itself out */
	if (!m || ts <= m->seen)
		return;
	if (m->until == NONE || ts > m->until)
		m->until = ts;
}

void dumpable_fork(struct dumpable *t, pid_t child, pid_t parent, uint64_t ts)
{
	struct mark *pm = find(t, parent);

	if (pm && ts < pm->until) {
		struct look *c = cached(t, child);

		if (c->pid == child)
			c->pid = 0;
		mark(t, child, ts);
		return;
	}
	dumpable_exec(t, child, ts);
}

/* mappings.c - per-process mapping timelines; see mappings.h.
 * A process has at most a few thousand executable mappings, so a linear scan
 * per lookup is fine: callers cache results per stack and per module offset. */
#include "ingest/mappings.h"

#include <errno.h>
#include <stdlib.h>

#include "src/array.h"
#include "src/u64map.h"

#define FORK_DEPTH_MAX 16           /* bounds the walk up a fork chain */

struct space {
	uint32_t pid, ppid;         /* ppid 0: no known parent */
	uint64_t fork_ts;
	uint64_t exec_ts;           /* last exec, 0 if none */
	uint64_t comm_exec_ts;      /* an exec's comm not yet followed by its exec record */
	int time_dependent;
	struct xp_mapping *m;
	uint32_t count;
	size_t cap;
};

struct xp_mappings {
	struct xp_u64map by_pid;    /* pid -> index + 1 in spaces */
	struct space *spaces;
	uint32_t nspaces;
	size_t cap;
	uint32_t total;             /* mappings over all spaces */
};

struct xp_mappings *xp_mappings_new(void)
{
	struct xp_mappings *ms = calloc(1, sizeof(*ms));

	if (ms)
		xp_u64map_init(&ms->by_pid);
	return ms;
}

void xp_mappings_free(struct xp_mappings *ms)
{
	if (!ms)
		return;
	for (uint32_t i = 0; i < ms->nspaces; i++)
		free(ms->spaces[i].m);
	free(ms->spaces);
	xp_u64map_free(&ms->by_pid);
	free(ms);
}

static struct space *find_space(const struct xp_mappings *ms, uint32_t pid)
{
	uint64_t *v = xp_u64map_find(&ms->by_pid, pid, 0);

	return v ? &ms->spaces[*v - 1] : NULL;
}

static int get_space(struct xp_mappings *ms, uint32_t pid, struct space **out)
{
	uint64_t *slot;
	int fresh, err;

	err = xp_u64map_upsert(&ms->by_pid, pid, 0, &slot, &fresh);
	if (err)
		return err;
	if (fresh) {
		if (xp_array__reserve((void **)&ms->spaces, &ms->cap, (size_t)ms->nspaces + 1,
				      sizeof(*ms->spaces), 16))
			return -ENOMEM;
		ms->spaces[ms->nspaces] = (struct space){ .pid = pid };
		*slot = ++ms->nspaces;
	}
	*out = &ms->spaces[*slot - 1];
	return 0;
}

int xp_mappings_add(struct xp_mappings *ms, uint32_t pid, uint64_t ts,
		    uint64_t start, uint64_t len, uint64_t pgoff,
		    uint32_t module, int from_proc)
{
	struct space *s;
	uint64_t from = from_proc ? 0 : ts;
	int err;

	if (len == 0 || start + len < start)
		return -EINVAL;
	if (ms->total >= XP_MAPPINGS_MAX)
		return -E2BIG;
	err = get_space(ms, pid, &s);
	if (err)
		return err;
	for (uint32_t i = 0; i < s->count; i++) {
		struct xp_mapping *o = &s->m[i];

		if (o->start < start + len && start < o->end && o->ts_end == UINT64_MAX) {
			/* identical re-report (e.g. /proc snapshot then event): keep one */
			if (o->start == start && o->end == start + len && o->pgoff == pgoff &&
			    o->module == module)
				return 0;
			if (o->ts_start < from) {
				o->ts_end = from;
				s->time_dependent = 1;
			}
		}
	}
	if (xp_array__reserve((void **)&s->m, &s->cap, (size_t)s->count + 1, sizeof(*s->m), 16))
		return -ENOMEM;
	s->m[s->count++] = (struct xp_mapping){
		.start = start, .end = start + len, .pgoff = pgoff,
		.ts_start = from, .ts_end = UINT64_MAX, .module = module,
		.id = ms->total++,
	};
	return 0;
}

#define EXEC_SPAN_NS 10000000000ull  /* an exec's comm to its exec record, at most */

int xp_mappings_comm_exec(struct xp_mappings *ms, uint32_t pid, uint64_t ts)
{
	struct space *s;
	int err = get_space(ms, pid, &s);

	/* the exec record was read first: that exec is done */
	if (!err && !(s->exec_ts && s->exec_ts >= ts && s->exec_ts - ts <= EXEC_SPAN_NS))
		s->comm_exec_ts = ts;
	return err;
}

int xp_mappings_exec(struct xp_mappings *ms, uint32_t pid, uint64_t ts)
{
	struct space *s;
	int err = get_space(ms, pid, &s);

	if (err)
		return err;
	/* the new image's mappings, between the comm and here, stay */
	if (s->comm_exec_ts && s->comm_exec_ts <= ts && ts - s->comm_exec_ts <= EXEC_SPAN_NS)
		ts = s->comm_exec_ts;
	s->comm_exec_ts = 0;
	for (uint32_t i = 0; i < s->count; i++)
		if (s->m[i].ts_start < ts && s->m[i].ts_end > ts)
			s->m[i].ts_end = ts;
	s->exec_ts = ts;
	s->time_dependent = 1;
	return 0;
}

int xp_mappings_fork(struct xp_mappings *ms, uint32_t pid, uint32_t ppid,
		     uint64_t ts)
{
	struct space *s;
	int err;

	if (pid == ppid)
		return 0;           /* a new thread, same address space */
	err = get_space(ms, pid, &s);
	if (err)
		return err;
	s->ppid = ppid;
	s->fork_ts = ts;
	s->time_dependent = 1;
	return 0;
}

static const struct xp_mapping *lookup_in(const struct space *s, uint64_t ts,
					  uint64_t ip)
{
	const struct xp_mapping *best = NULL, *earliest = NULL;

	for (uint32_t i = 0; i < s->count; i++) {
		const struct xp_mapping *m = &s->m[i];

		if (ip < m->start || ip >= m->end)
			continue;
		if (m->ts_start <= ts && ts < m->ts_end &&
		    (!best || m->ts_start >= best->ts_start))
			best = m;
		if (!earliest || m->ts_start < earliest->ts_start)
			earliest = m;
	}
	if (best)
		return best;
	/* a sample older than every mapping that covers ip: the side-band
	 * record came late; only trust it if nothing ended before ts */
	if (earliest && earliest->ts_start > ts)
		return earliest;
	return NULL;
}

const struct xp_mapping *xp_mappings_lookup(const struct xp_mappings *ms,
					    uint32_t pid, uint64_t ts, uint64_t ip)
{
	const struct space *s = find_space(ms, pid);

	for (int depth = 0; s && depth < FORK_DEPTH_MAX; depth++) {
		const struct xp_mapping *m = lookup_in(s, ts, ip);

		if (m)
			return m;
		/* inherited from the parent as it was at fork, unless exec'd since */
		if (!s->ppid || (s->exec_ts && s->exec_ts <= ts))
			return NULL;
		ts = s->fork_ts;
		s = find_space(ms, s->ppid);
	}
	return NULL;
}

uint32_t xp_mappings_layout_owner(const struct xp_mappings *ms, uint32_t pid, uint64_t ts)
{
	const struct space *s = find_space(ms, pid), *parent;

	for (int depth = 0; s && depth < FORK_DEPTH_MAX; depth++) {
		if (s->count || !s->ppid || (s->exec_ts && s->exec_ts <= ts) ||
		    !(parent = find_space(ms, s->ppid)))
			return s->pid;
		ts = s->fork_ts;
		s = parent;
	}
	return s ? s->pid : pid;
}

int xp_mappings_time_dependent(const struct xp_mappings *ms, uint32_t pid)
{
	const struct space *s = find_space(ms, pid);

	return s ? s->time_dependent : 0;
}

uint32_t xp_mappings_count(const struct xp_mappings *ms)
{
	return ms->total;
}

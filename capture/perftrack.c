/* perftrack.c - see perftrack.h. Names live in an open-addressing table
 * keyed by tid; a full table reuses the home slot of the newest tid (a
 * name lost is a sample named as its process, not an error). */
#include "capture/perftrack.h"

#include <stdlib.h>
#include <string.h>

#include "src/u64map.h"

#define NAMES 8192                  /* a power of two */
#define PROBES 16
#define PENDING 64                  /* execs waiting for their first mapping */

struct name {
	uint32_t tid;               /* 0: empty */
	char comm[XP_COMM_LEN];
};

struct perftrack {
	struct name names[NAMES];
	struct xp_exec pending[PENDING];   /* pid 0: empty */
};

struct perftrack *perftrack_new(void)
{
	return calloc(1, sizeof(struct perftrack));
}

void perftrack_free(struct perftrack *t)
{
	free(t);
}

static struct name *slot_of(struct perftrack *t, uint32_t tid, bool add)
{
	uint32_t home = (uint32_t)xp_hash64(tid) & (NAMES - 1);

	for (uint32_t i = 0; i < PROBES; i++) {
		struct name *n = &t->names[(home + i) & (NAMES - 1)];

		if (n->tid == tid)
			return n;
		if (!n->tid)
			return add ? n : NULL;
	}
	return add ? &t->names[home] : NULL;
}

static void set_name(struct perftrack *t, uint32_t tid, const char *comm)
{
	struct name *n;

	if (!tid)
		return;
	n = slot_of(t, tid, true);
	n->tid = tid;
	memcpy(n->comm, comm, XP_COMM_LEN);
}

void perftrack_set_comm(struct perftrack *t, uint32_t tid, const char comm[XP_COMM_LEN])
{
	set_name(t, tid, comm);
}

void perftrack_comm(const struct perftrack *t, uint32_t tid, char out[XP_COMM_LEN])
{
	const struct name *n = slot_of((struct perftrack *)t, tid, false);

	if (n)
		memcpy(out, n->comm, XP_COMM_LEN);
	else
		memset(out, 0, XP_COMM_LEN);
}

static struct xp_exec *pending_of(struct perftrack *t, uint32_t pid)
{
	for (int i = 0; i < PENDING; i++)
		if (t->pending[i].pid == pid)
			return &t->pending[i];
	return NULL;
}

/* An exec's COMM: pending until its mapping, or written now (no path)
 * when too many wait. */
static bool exec_seen(struct perftrack *t, const struct xp_comm *c, struct xp_exec *x)
{
	struct xp_exec e = { .ts = c->ts, .pid = c->pid, .tid = c->tid, .old_tid = c->tid };
	struct xp_exec *p = pending_of(t, c->pid);

	if (!p)
		p = pending_of(t, 0);
	if (p && p->pid == c->pid) {
		*x = *p;                /* exec'd again before mapping anything */
		*p = e;
		return true;
	}
	if (p) {
		*p = e;
		return false;
	}
	*x = e;
	return true;
}

bool perftrack_before(struct perftrack *t, const struct perfconv_rec *r, struct xp_exec *x)
{
	struct xp_exec *p;
	char comm[XP_COMM_LEN];

	switch (r->type) {
	case XP_REC_COMM:
		set_name(t, r->u.comm.tid, r->u.comm.comm);
		return (r->u.comm.flags & XP_COMM_EXEC) && r->u.comm.pid &&
		       exec_seen(t, &r->u.comm, x);
	case XP_REC_FORK:
		/* a new task starts with its parent thread's name */
		perftrack_comm(t, r->u.task.ptid, comm);
		if (comm[0])
			set_name(t, r->u.task.tid, comm);
		return false;
	case XP_REC_MMAP:
		p = r->u.mmap.pid ? pending_of(t, r->u.mmap.pid) : NULL;
		if (!p || r->u.mmap.ts < p->ts)
			return false;
		*x = *p;
		x->path_len = (uint16_t)r->path_len;
		memset(p, 0, sizeof(*p));
		return true;
	default:
		return false;
	}
}

bool perftrack_flush(struct perftrack *t, struct xp_exec *x)
{
	for (int i = 0; i < PENDING; i++) {
		if (t->pending[i].pid) {
			*x = t->pending[i];
			memset(&t->pending[i], 0, sizeof(t->pending[i]));
			return true;
		}
	}
	return false;
}

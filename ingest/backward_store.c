/* backward_store.c - the autograd records of a run, kept for the join;
 * see backward.h for the join and why it holds. */
#include "ingest/backward.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/array.h"
#include "db/db_schema.h"
#include "src/runfile.h"
#include "src/runfmt_py.h"
#include "src/strtab.h"
#include "src/u64map.h"

struct ag_row {
	uint64_t corr, thread_id, seq_next, node_seq, node_thread;
	uint32_t pid, tid;
	int64_t node;               /* name id in names (strtab), 0: no node ran */
};

struct ag_proc {
	uint32_t pid;
	uint32_t flags;             /* XP_AUTOGRAD_INFO_* */
	uint64_t nodes, rejected;
	char reason[256];
};

struct xp_agstore {
	struct ag_row *rows;
	size_t n, cap;
	struct ag_proc *procs;
	size_t nprocs, capprocs;
	struct xp_strtab *names;
};

struct xp_agstore *xp_agstore_new(void)
{
	struct xp_agstore *s = calloc(1, sizeof(*s));

	if (s && !(s->names = xp_strtab_new())) {
		free(s);
		s = NULL;
	}
	return s;
}

void xp_agstore_free(struct xp_agstore *s)
{
	if (!s)
		return;
	free(s->rows);
	free(s->procs);
	xp_strtab_free(s->names);
	free(s);
}

/* The node's name after its fixed part, checked against the record. */
static int add_launch(struct xp_agstore *s, uint32_t pid, const struct xp_record_header *h)
{
	const struct xp_autograd *a = xp_record_payload(h);
	uint32_t len = xp_record_payload_len(h);
	struct ag_row *r;
	char name[XP_AUTOGRAD_NODE_NAME_MAX + 1], shortname[96];

	if (len < sizeof(*a))
		return -EBADMSG;
	if (xp_array__reserve((void **)&s->rows, &s->cap, s->n + 1, sizeof(*s->rows), 1024))
		return -ENOMEM;
	r = &s->rows[s->n];
	*r = (struct ag_row){ a->correlation_id, a->thread_id, a->seq_next, 0, 0, pid, a->tid, 0 };
	if (a->flags & XP_AUTOGRAD_NODE) {
		const struct xp_autograd_node *n = (const void *)(a + 1);
		int fresh;

		if (len < sizeof(*a) + sizeof(*n) || n->name_len > XP_AUTOGRAD_NODE_NAME_MAX ||
		    len - sizeof(*a) - sizeof(*n) < n->name_len)
			return -EBADMSG;
		memcpy(name, n + 1, n->name_len);
		name[n->name_len] = '\0';
		xp_autograd_node_name(name, shortname, sizeof(shortname));
		if (xp_strtab_intern(s->names, shortname, strlen(shortname), &r->node, &fresh))
			return -ENOMEM;
		r->node_seq = n->node_seq;
		r->node_thread = n->node_thread;
	}
	s->n++;
	return 1;
}

static int add_info(struct xp_agstore *s, uint32_t pid, const struct xp_record_header *h)
{
	const struct xp_autograd_info *i = xp_record_payload(h);
	uint32_t len = xp_record_payload_len(h);
	struct ag_proc *p = NULL;

	if (len < sizeof(*i) || len - sizeof(*i) < i->reason_len)
		return -EBADMSG;
	for (size_t k = 0; k < s->nprocs && !p; k++)
		if (s->procs[k].pid == pid)
			p = &s->procs[k];
	if (!p) {           /* the latest record of a process wins */
		if (xp_array__reserve((void **)&s->procs, &s->capprocs, s->nprocs + 1,
				      sizeof(*s->procs), 8))
			return -ENOMEM;
		p = &s->procs[s->nprocs++];
	}
	p->pid = pid;
	p->flags = i->flags;
	p->nodes = i->nodes;
	p->rejected = i->rejected;
	snprintf(p->reason, sizeof(p->reason), "%.*s", (int)i->reason_len, (const char *)(i + 1));
	for (char *c = p->reason; *c; c++)
		if ((unsigned char)*c < 0x20)
			*c = ' ';
	return 1;
}

int xp_agstore_record(struct xp_agstore *s, uint32_t stream_pid, const struct xp_record_header *h)
{
	if (h->type == XP_REC_AUTOGRAD)
		return add_launch(s, stream_pid, h);
	if (h->type == XP_REC_AUTOGRAD_INFO)
		return add_info(s, stream_pid, h);
	return 0;
}

void xp_autograd_node_name(const char *m, char *out, size_t len)
{
	const char *p = m, *last = NULL;
	size_t last_len = 0;

	if (*p == 'N')
		p++;
	while (*p >= '1' && *p <= '9') {
		char *end;
		unsigned long n = strtoul(p, &end, 10);

		if (n > strlen(end) && strlen(m) >= XP_AUTOGRAD_NODE_NAME_MAX) {
			/* cut by the recorder (XP_AUTOGRAD_NODE_NAME_MAX): the
			 * innermost name's start, said to be cut; never the
			 * namespace before it (ScaledDotProductEfficientAttention
			 * Backward0 is not "generated") */
			if (*end)
				snprintf(out, len, "%s\u2026", end);
			else if (last)
				snprintf(out, len, "%.*s::\u2026", (int)last_len, last);
			else
				snprintf(out, len, "%s", m);
			return;
		}
		if (n > strlen(end))
			break;
		last = end;
		last_len = n;
		p = end + n;
	}
	if (last)
		snprintf(out, len, "%.*s", (int)last_len, last);
	else
		snprintf(out, len, "%s", m);
}

static int save_rows(sqlite3 *db, const struct xp_agstore *s)
{
	sqlite3_stmt *st;
	int err = 0;

	if (sqlite3_prepare_v2(db, "INSERT INTO xp_autograd(pid, correlation_id, tid, thread_id,"
			       " seq_next, node, node_seq, node_thread) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
			       -1, &st, NULL) != SQLITE_OK)
		return -EIO;
	for (size_t i = 0; i < s->n && !err; i++) {
		const struct ag_row *r = &s->rows[i];

		sqlite3_bind_int64(st, 1, r->pid);
		sqlite3_bind_int64(st, 2, (int64_t)r->corr);
		sqlite3_bind_int64(st, 3, r->tid);
		sqlite3_bind_int64(st, 4, (int64_t)r->thread_id);
		sqlite3_bind_int64(st, 5, (int64_t)r->seq_next);
		if (r->node) {
			sqlite3_bind_text(st, 6, xp_strtab_get(s->names, r->node), -1, SQLITE_STATIC);
			sqlite3_bind_int64(st, 7, (int64_t)r->node_seq);   /* UINT64_MAX: -1 */
			sqlite3_bind_int64(st, 8, (int64_t)r->node_thread);
		} else {
			for (int c = 6; c <= 8; c++)
				sqlite3_bind_null(st, c);
		}
		err = sqlite3_step(st) == SQLITE_DONE ? 0 : -EIO;
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
	return err;
}

int xp_agstore_save(sqlite3 *db, const struct xp_agstore *s)
{
	sqlite3_stmt *st;
	int err;

	if ((err = save_rows(db, s)))
		return err;
	if (sqlite3_prepare_v2(db, "INSERT INTO xp_autograd_processes(pid, reads, nodes, rejected,"
			       " reason) VALUES (?, ?, ?, ?, ?)", -1, &st, NULL) != SQLITE_OK)
		return -EIO;
	for (size_t i = 0; i < s->nprocs && !err; i++) {
		const struct ag_proc *p = &s->procs[i];

		sqlite3_bind_int64(st, 1, p->pid);
		sqlite3_bind_int(st, 2, !!(p->flags & XP_AUTOGRAD_INFO_ON));
		sqlite3_bind_int64(st, 3, (int64_t)p->nodes);
		sqlite3_bind_int64(st, 4, (int64_t)p->rejected);
		sqlite3_bind_text(st, 5, p->reason, -1, SQLITE_STATIC);
		err = sqlite3_step(st) == SQLITE_DONE ? 0 : -EIO;
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
	return err;
}

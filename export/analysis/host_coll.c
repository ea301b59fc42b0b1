/* host_coll.c - collectives the ranks waited for on their hosts (host_coll.h). */
#include "export/analysis/host_coll.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/db_schema.h"
#include "db/stackwalk.h"
#include "export/names/framename.h"
#include "src/array.h"
#include "src/gtid.h"
#include "src/u64map.h"

/* Pieces of one wait on one thread with one stack this close are one wait
 * (a condition variable woken and put back to sleep), not two: two calls
 * from Python are further apart. */
#define SAME_WAIT_NS 5000

/* A frame in which the host waits for c10d work to finish. */
static int is_wait_frame(const char *sym)
{
	return sym && (!strncmp(sym, "c10d::Work::wait(", 17) ||
		       (!strncmp(sym, "c10d::ProcessGroupGloo::", 24) && strstr(sym, "::wait(")));
}

/* A frame of the C library: the blocked call's own (a futex wait is two or
 * three of them, unwound as far as the unwinder got), not a native caller. */
static int is_libc(const char *module)
{
	const char *base = module ? strrchr(module, '/') : NULL;

	base = base ? base + 1 : module;
	return base && (!strncmp(base, "libc.so", 7) || !strncmp(base, "libc-", 5) ||
			!strncmp(base, "libpthread", 10));
}

/* A Python function of torch.distributed that waits for its collective's
 * work before it returns (async_op=False): where a normal user's stack
 * has no native frames (perf gives off-CPU intervals none; the frame
 * reader adds the blocked call and the Python frames), the wait is known
 * by being blocked with this as the innermost Python frame. */
static int is_blocking_collective(const char *file, size_t flen, const char *name, size_t nlen)
{
	static const char c10d[] = "/torch/distributed/distributed_c10d.py";
	static const char *const names[] = {
		"all_reduce", "all_reduce_coalesced", "reduce", "broadcast", "all_gather",
		"all_gather_into_tensor", "all_gather_coalesced", "reduce_scatter",
		"reduce_scatter_tensor", "all_to_all", "all_to_all_single", "gather", "scatter",
		"barrier", "monitored_barrier", "send", "recv",
	};

	if (!file || flen < sizeof(c10d) - 1 || memcmp(file + flen - (sizeof(c10d) - 1), c10d,
						   sizeof(c10d) - 1))
		return 0;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strlen(names[i]) == nlen && !memcmp(names[i], name, nlen))
			return 1;
	return 0;
}

/* A frame's Python function and file (*py, *file with their lengths), from
 * a Python line or a perf map's "py::NAME:FILE"; 0 when not Python. */
static int python_frame(const struct xp_frame_row *fr, const char **py, size_t *plen,
			const char **file, size_t *flen)
{
	if (fr->py && fr->py->qualname && *fr->py->qualname) {
		*py = fr->py->qualname;
		*plen = strlen(*py);
		*file = fr->py->file;
		*flen = *file ? strlen(*file) : 0;
		return 1;
	}
	if (!xp_frame_perfmap(fr, py, plen, file))
		return 0;
	*flen = *file ? strlen(*file) : 0;
	return 1;
}

/* The index of name in H->names, added if new; (size_t)-1: out of memory. */
static size_t name_index(struct xp_host_colls *H, const char *name, size_t len)
{
	char **v;

	for (size_t i = 0; i < H->nnames; i++)
		if (strlen(H->names[i]) == len && !strncmp(H->names[i], name, len))
			return i;
	if (!(v = realloc(H->names, (H->nnames + 1) * sizeof(*v))))
		return (size_t)-1;
	H->names = v;
	if (!(v[H->nnames] = strndup(name, len)))
		return (size_t)-1;
	return H->nnames++;
}

/* Whether stack holds a wait frame: 0 no, 1 yes with *name (the first
 * Python function above it, else the frame's own name up to its '('),
 * -ENOMEM. A stack of at most one native frame (the blocked call) under
 * its Python frames, libc's not counted, is a wait where its innermost
 * Python frame is a blocking collective, named by it. */
static int classify(struct xp_host_colls *H, struct xp_stackwalk *walk, int64_t stack, size_t *name)
{
	struct xp_frame_row fr;
	char frame[128] = "";
	int found = 0, python = 0, native = 0;

	*name = (size_t)-1;
	for (int64_t id = stack; *name == (size_t)-1 && id > 0 && xp_stackwalk_next(walk, &id, &fr);) {
		const char *py, *file;
		size_t plen, flen;
		int is_py = python_frame(&fr, &py, &plen, &file, &flen);

		if (!found && is_wait_frame(fr.sym)) {
			found = 1;
			snprintf(frame, sizeof(frame), "%.*s", (int)strcspn(fr.sym, "("), fr.sym);
		} else if (is_py && (found || (!python++ && native <= 1 &&
					       is_blocking_collective(file, flen, py, plen)))) {
			found = 1;
			if ((*name = name_index(H, py, plen)) == (size_t)-1) {
				xp_stackwalk_done(walk);
				return -ENOMEM;
			}
		} else if (!is_py && fr.kind != XP_FRAME_GAP && fr.kind != XP_FRAME_NOTE &&
			   !is_libc(fr.module)) {
			native++;
		}
	}
	xp_stackwalk_done(walk);
	if (found && *name == (size_t)-1 && (*name = name_index(H, frame, strlen(frame))) == (size_t)-1)
		return -ENOMEM;
	return found;
}

/* One rank's waits, in the order they began, into *out (*n). */
static int rank_waits(sqlite3 *db, struct xp_host_colls *H, struct xp_stackwalk *walk,
		      struct xp_u64map *memo, int64_t pid, struct xp_host_wait **out, size_t *n)
{
	sqlite3_stmt *s;
	size_t cap = 0;
	int step, rc = 0;

	*out = NULL;
	*n = 0;
	if (sqlite3_prepare_v2(db, "SELECT ts, ts + duration, tid, stack_id FROM xp_switches"
			       " WHERE pid = ?1 AND prev_state != 0 AND duration > 0 AND stack_id > 0"
			       " ORDER BY ts, tid", -1, &s, NULL) != SQLITE_OK)
		return -EIO;
	sqlite3_bind_int64(s, 1, pid);
	while (!rc && (step = sqlite3_step(s)) == SQLITE_ROW) {
		int64_t a = sqlite3_column_int64(s, 0), b = sqlite3_column_int64(s, 1);
		int64_t gtid = xp_gtid((uint64_t)pid, (uint64_t)sqlite3_column_int64(s, 2));
		int64_t stack = sqlite3_column_int64(s, 3);
		struct xp_host_wait *last = *n ? &(*out)[*n - 1] : NULL;
		uint64_t *slot;
		size_t name;
		int fresh;

		/* memo: 0 not walked, 1 no wait, name + 2 */
		if ((rc = xp_u64map_upsert(memo, (uint64_t)stack, 0, &slot, &fresh)) < 0)
			break;
		if (!*slot) {
			if ((rc = classify(H, walk, stack, &name)) < 0)
				break;
			*slot = rc ? name + 2 : 1;
			rc = 0;
		}
		if (*slot == 1)
			continue;
		if (last && last->gtid == gtid && last->stack == stack && a - last->end <= SAME_WAIT_NS) {
			last->end = b;
			continue;
		}
		if (xp_array__reserve((void **)out, &cap, *n + 1, sizeof(**out), 64)) {
			rc = -ENOMEM;
			break;
		}
		(*out)[(*n)++] = (struct xp_host_wait){ a, b, gtid, stack, (size_t)(*slot - 2) };
	}
	sqlite3_finalize(s);
	if (!rc && step != SQLITE_DONE)
		rc = -EIO;
	return rc;
}

/* The ranks: one process each, by rank. */
static int load_ranks(sqlite3 *db, struct xp_host_colls *H)
{
	sqlite3_stmt *s;
	size_t cap = 0;
	int step;

	if (sqlite3_prepare_v2(db, "SELECT rank, pid FROM xp_ranks GROUP BY pid ORDER BY rank, pid",
			       -1, &s, NULL) != SQLITE_OK)
		return -EIO;
	while ((step = sqlite3_step(s)) == SQLITE_ROW) {
		if (xp_array__reserve((void **)&H->rank, &cap, H->nranks + 1, sizeof(*H->rank), 8) ||
		    !(H->pid = realloc(H->pid, cap * sizeof(*H->pid))) ||
		    !(H->count = realloc(H->count, cap * sizeof(*H->count)))) {
			sqlite3_finalize(s);
			return -ENOMEM;
		}
		H->rank[H->nranks] = sqlite3_column_int64(s, 0);
		H->count[H->nranks] = 0;
		H->pid[H->nranks++] = sqlite3_column_int64(s, 1);
	}
	sqlite3_finalize(s);
	return step == SQLITE_DONE ? 0 : -EIO;
}

/* The rank that entered instance k last (ties: the first by rank), and
 * whether the one before it entered within the clocks' error. */
static void find_late(struct xp_host_colls *H, size_t k)
{
	int64_t second = INT64_MIN, last;
	size_t late = 0;

	for (size_t r = 1; r < H->nranks; r++)
		if (xp_host_coll_at(H, k, r)->entry > xp_host_coll_at(H, k, late)->entry)
			late = r;
	last = xp_host_coll_at(H, k, late)->entry;
	for (size_t r = 0; r < H->nranks; r++)
		if (r != late && xp_host_coll_at(H, k, r)->entry > second)
			second = xp_host_coll_at(H, k, r)->entry;
	H->late[k] = late;
	H->close[k] = second != INT64_MIN && last - second <= H->clock_err;
}

/* Every rank's waits, matched by their order where the counts agree. */
static int load_waits(sqlite3 *db, struct xp_host_colls *H)
{
	struct xp_host_wait **per = calloc(H->nranks ? H->nranks : 1, sizeof(*per));
	struct xp_stackwalk *walk = NULL;
	struct xp_u64map memo;
	size_t any = 0;
	int rc;

	xp_u64map_init(&memo);
	if (!per)
		return -ENOMEM;
	/* no stacks to read (not the main loader's database): no host waits */
	if ((rc = xp_stackwalk_open(db, &walk)) == -EIO)
		rc = 0;
	for (size_t r = 0; !rc && walk && r < H->nranks; r++) {
		rc = rank_waits(db, H, walk, &memo, H->pid[r], &per[r], &H->count[r]);
		any += H->count[r];
	}
	for (size_t r = 1; !rc && r < H->nranks; r++)
		H->mismatch |= H->count[r] != H->count[0];
	if (!rc && any && !H->mismatch && H->nranks > 1) {
		H->ninst = H->count[0];
		if (!(H->w = malloc(H->ninst * H->nranks * sizeof(*H->w))))
			rc = -ENOMEM;
		for (size_t r = 0; !rc && r < H->nranks; r++)
			for (size_t k = 0; k < H->ninst; k++)
				H->w[k * H->nranks + r] = per[r][k];
	}
	if (!rc && H->ninst && (!(H->late = malloc(H->ninst * sizeof(*H->late))) ||
				!(H->close = malloc(H->ninst))))
		rc = -ENOMEM;
	for (size_t k = 0; !rc && k < H->ninst; k++)
		find_late(H, k);
	H->each = per;
	xp_u64map_free(&memo);
	if (walk)
		xp_stackwalk_close(walk);
	return rc;
}

int xp_host_colls_load(sqlite3 *db, struct xp_host_colls *H)
{
	int rc;

	memset(H, 0, sizeof(*H));
	if (!xp_db_has_table(db, "xp_ranks") || !xp_db_has_table(db, "xp_switches") ||
	    !xp_db_has_table(db, "xp_stacks"))
		return 0;
	H->clock_err = xp_tl_clock_error(db);
	if ((rc = load_ranks(db, H)) < 0 || (rc = load_waits(db, H)) < 0)
		xp_host_colls_free(H);
	return rc;
}

void xp_host_colls_free(struct xp_host_colls *H)
{
	for (size_t i = 0; i < H->nnames; i++)
		free(H->names[i]);
	free(H->names);
	for (size_t r = 0; H->each && r < H->nranks; r++)
		free(H->each[r]);
	free(H->each);
	free(H->rank);
	free(H->pid);
	free(H->count);
	free(H->w);
	free(H->late);
	free(H->close);
	memset(H, 0, sizeof(*H));
}

size_t xp_host_colls_odd(const struct xp_host_colls *H)
{
	for (size_t r = 1; H->mismatch && r < H->nranks; r++)
		if (H->count[r] != H->count[0])
			return r;
	return 0;
}

const struct xp_host_wait *xp_host_coll_at(const struct xp_host_colls *H, size_t inst, size_t r)
{
	return &H->w[inst * H->nranks + r];
}

size_t xp_host_coll_late(const struct xp_host_colls *H, size_t inst, int *close)
{
	*close = H->close[inst];
	return H->late[inst];
}

int64_t xp_host_coll_wait(const struct xp_host_colls *H, size_t inst, size_t r)
{
	int close;
	const struct xp_host_wait *w = xp_host_coll_at(H, inst, r);
	int64_t last = xp_host_coll_at(H, inst, xp_host_coll_late(H, inst, &close))->entry - w->entry;

	return last < w->end - w->entry ? last : w->end - w->entry;
}

/* ops (n of them) onto every device timeline of pid. */
static int add_to_process(struct xp_tl_set *set, int64_t pid, const struct xp_tl_op *ops, size_t n)
{
	struct xp_tl *host;
	int rc = 0, found = 0;

	for (size_t d = 0; d < set->ndev && !rc; d++)
		if ((set->dev[d].gpid >> 24) == pid) {
			rc = xp_tl_insert(&set->dev[d], ops, n);
			found = 1;
		}
	/* a CPU-only rank: its host's own timeline */
	if (!rc && !found && n)
		rc = (host = xp_tl_add_host(set, (int64_t)((uint64_t)pid << 24))) ?
		     xp_tl_insert(host, ops, n) : -ENOMEM;
	return rc;
}

int xp_host_colls_timelines(sqlite3 *db, struct xp_tl_set *set, struct xp_host_colls *H)
{
	int rc;

	if ((rc = xp_tl_load_all(db, set)) < 0 || (rc = xp_host_colls_load(db, H)) < 0)
		return rc;
	return xp_host_colls_add(H, set);
}

int xp_host_colls_add_each(const struct xp_host_colls *H, struct xp_tl_set *set)
{
	int rc = 0;

	for (size_t r = 0; r < H->nranks && !rc; r++) {
		struct xp_tl_op *ops = malloc((H->count[r] ? H->count[r] : 1) * sizeof(*ops));

		if (!ops)
			return -ENOMEM;
		for (size_t k = 0; k < H->count[r]; k++) {
			const struct xp_host_wait *w = &H->each[r][k];

			ops[k] = (struct xp_tl_op){ .start = w->entry, .end = w->end, .launch = -1,
						    .launch_end = -1, .gtid = w->gtid, .stack = w->stack,
						    .name = -1, .api_name = -1, .stream = -1,
						    .late_pid = H->pid[r], .cls = XP_TL_COMM, .host = 1 };
		}
		rc = add_to_process(set, H->pid[r], ops, H->count[r]);
		free(ops);
	}
	return rc;
}

int xp_host_colls_add(const struct xp_host_colls *H, struct xp_tl_set *set)
{
	struct xp_tl_op *ops;
	int rc = 0;

	if (!H->ninst)
		return 0;
	if (!(ops = malloc(H->ninst * sizeof(*ops))))
		return -ENOMEM;
	for (size_t r = 0; r < H->nranks && !rc; r++) {
		for (size_t k = 0; k < H->ninst; k++) {
			const struct xp_host_wait *w = xp_host_coll_at(H, k, r);
			int close;
			size_t late = xp_host_coll_late(H, k, &close);

			ops[k] = (struct xp_tl_op){ .start = w->entry, .end = w->end, .launch = -1,
						    .launch_end = -1, .gtid = w->gtid, .stack = w->stack,
						    .name = -1, .api_name = -1, .stream = -1,
						    .wait = xp_host_coll_wait(H, k, r),
						    .late_pid = H->pid[late], .cls = XP_TL_COMM,
						    .host = 1 };
		}
		rc = add_to_process(set, H->pid[r], ops, H->ninst);
	}
	free(ops);
	return rc;
}

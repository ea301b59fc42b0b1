/* jobview.c - a job's views from its ranks' summaries (jobsum.h): two
 * passes over the summaries, one run open at a time. The first adds up
 * ranks, kernels, sites and idle causes, and keeps of every collective
 * instance only its last entry on the job's clock (memory: one run's
 * instances, not the job's); the second charges each rank's wait in every
 * instance that all ranks entered to the last one. */
#include "export/job/jobview_priv.h"

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "db/db_schema.h"
#include "db/dbcheck.h"
#include "src/array.h"
#include "src/satmath.h"

int jv_fail(struct jv *J, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(J->err, J->errlen, fmt, ap);
	va_end(ap);
	return err;
}

static uint64_t str_hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;       /* FNV-1a */

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return xp_hash64(h);
}

int jv_intern(struct jv_names *t, const char *s, int64_t *id)
{
	uint64_t h = str_hash(s ? s : ""), *slot;
	int fresh;

	for (uint64_t probe = 0;; probe++) {
		if (xp_u64map_upsert(&t->at, h, probe, &slot, &fresh))
			return -ENOMEM;
		if (!fresh && !strcmp(t->v[*slot - 1], s ? s : "")) {
			*id = (int64_t)*slot - 1;
			return 0;
		}
		if (fresh)
			break;
	}
	if (xp_array__reserve((void **)&t->v, &t->cap, t->n + 1, sizeof(*t->v), 64) ||
	    !(t->v[t->n] = strdup(s ? s : "")))
		return -ENOMEM;
	*slot = ++t->n;
	*id = (int64_t)t->n - 1;
	return 0;
}

int jv_prep(struct jv *J, sqlite3 *db, const char *path, const char *sql, sqlite3_stmt **st)
{
	if (sqlite3_prepare_v2(db, sql, -1, st, NULL) == SQLITE_OK)
		return 0;
	return jv_fail(J, -EIO, "cannot read %s: %s", path, sqlite3_errmsg(db));
}

/* The line of a statement that failed: -ETIME with the work limit's text
 * when the limit stopped it (the connection says SQLITE_INTERRUPT), else
 * -EIO with SQLite's. */
static int read_failed(struct jv *J, const struct jv_run *R)
{
	char msg[256];

	if (sqlite3_errcode(R->db) != SQLITE_INTERRUPT)
		return jv_fail(J, -EIO, "cannot read %s: %s", R->r->path, sqlite3_errmsg(R->db));
	xp_db_work_why(msg, sizeof(msg));
	return jv_fail(J, -ETIME, "cannot read %s: %s", R->r->path, msg);
}

int jv_end(struct jv *J, const struct jv_run *R, sqlite3_stmt *st, int step)
{
	int err = step == SQLITE_DONE ? 0 : read_failed(J, R);

	sqlite3_finalize(st);
	return err;
}

int jv_spend(struct jv *J, const char *path, uint64_t steps)
{
	char msg[256];

	if (!xp_db_work_spend(steps))
		return 0;
	xp_db_work_why(msg, sizeof(msg));
	return jv_fail(J, -ETIME, "cannot read %s: %s", path, msg);
}

int64_t jv_job_name(const struct jv_run *R, int64_t local)
{
	const uint64_t *v = xp_u64map_find(&R->name_of, (uint64_t)local, 0);

	return v ? (int64_t)*v - 1 : -1;
}

/* The rank index of pid in R (-1: not a ranked process); the first of
 * the run's ranks with it, in a summary that repeats a pid. */
int64_t jv_rank_of_pid(const struct jv *J, const struct jv_run *R, int64_t pid)
{
	const uint64_t *v = xp_u64map_find(&R->pid_of, (uint64_t)pid, 0);

	(void)J;
	return v ? (int64_t)*v - 1 : -1;
}

static int64_t rank_of_number(const struct jv *J, const struct jv_run *R, int64_t rank)
{
	const uint64_t *v = xp_u64map_find(&R->num_of, (uint64_t)rank, 0);

	(void)J;
	return v ? (int64_t)*v - 1 : -1;
}

/* A run's ranks by pid and by number: a look-up per row, not a scan of
 * the run's ranks (a summary may hold thousands). */
static int index_ranks(struct jv *J, struct jv_run *R)
{
	uint64_t *slot;
	int fresh;

	for (size_t i = R->first; i < R->first + R->nranks; i++) {
		if (xp_u64map_upsert(&R->pid_of, (uint64_t)J->ranks[i].pid, 0, &slot, &fresh))
			return jv_fail(J, -ENOMEM, "out of memory");
		if (fresh)
			*slot = i + 1;
		if (xp_u64map_upsert(&R->num_of, (uint64_t)J->ranks[i].rank, 0, &slot, &fresh))
			return jv_fail(J, -ENOMEM, "out of memory");
		if (fresh)
			*slot = i + 1;
	}
	return 0;
}

static int kern_reserve(struct jv *J, int64_t id)
{
	if ((size_t)id < J->nkern)
		return 0;
	if (xp_array__reserve((void **)&J->kern, &J->kern_cap, (size_t)id + 1, sizeof(*J->kern), 16))
		return -ENOMEM;
	memset(J->kern + J->nkern, 0, ((size_t)id + 1 - J->nkern) * sizeof(*J->kern));
	for (size_t i = J->nkern; i <= (size_t)id; i++)
		J->kern[i].late_rank = J->kern[i].max_rank = J->kern[i].site = -1;
	J->nkern = (size_t)id + 1;
	return 0;
}

static int load_names(struct jv *J, struct jv_run *R)
{
	sqlite3_stmt *st;
	uint64_t *slot;
	int64_t id;
	int fresh, err = 0, step;

	if ((err = jv_prep(J, R->db, R->r->path, "SELECT id, value FROM xs_name", &st)))
		return err;
	while (!err && (step = sqlite3_step(st)) == SQLITE_ROW) {
		if ((err = jv_intern(&J->names, (const char *)sqlite3_column_text(st, 1), &id)) ||
		    (err = kern_reserve(J, id)) ||
		    (err = xp_u64map_upsert(&R->name_of, (uint64_t)sqlite3_column_int64(st, 0), 0,
					    &slot, &fresh)))
			break;
		*slot = (uint64_t)id + 1;
	}
	if (err) {
		sqlite3_finalize(st);
		return jv_fail(J, err, "out of memory");
	}
	return jv_end(J, R, st, step);
}

/* A rank in two runs would be counted twice (a run given twice, or a
 * copy of it): said in J->err. */
static int seen_twice(struct jv *J, const struct jv_run *R, int64_t rank)
{
	uint64_t *slot;
	int fresh;

	if (xp_u64map_upsert(&J->rank_at, (uint64_t)rank, 0, &slot, &fresh))
		return jv_fail(J, -ENOMEM, "out of memory");
	if (fresh) {
		*slot = R->index;
		return 0;
	}
	return jv_fail(J, -EINVAL, "rank %lld is in %s and in %s: give each rank's run once",
		    (long long)rank, R->r[(ptrdiff_t)*slot - (ptrdiff_t)R->index].path, R->r->path);
}

static int load_ranks(struct jv *J, struct jv_run *R)
{
	sqlite3_stmt *st;
	int err, step;

	if ((err = jv_prep(J, R->db, R->r->path, "SELECT pid, rank, world, host, gpu_ns, kernels, coll_ns,"
			" sync_ns FROM xs_rank ORDER BY rank, pid", &st)))
		return err;
	R->first = J->nranks;
	while ((step = sqlite3_step(st)) == SQLITE_ROW) {
		struct jv_rank *k;

		if (xp_array__reserve((void **)&J->ranks, &J->rank_cap, J->nranks + 1, sizeof(*k), 64)) {
			sqlite3_finalize(st);
			return jv_fail(J, -ENOMEM, "out of memory");
		}
		if (seen_twice(J, R, sqlite3_column_int64(st, 1))) {
			sqlite3_finalize(st);
			return -EINVAL;
		}
		k = &J->ranks[J->nranks++];
		*k = (struct jv_rank){ .pid = sqlite3_column_int64(st, 0),
				       .rank = sqlite3_column_int64(st, 1),
				       .world = sqlite3_column_int64(st, 2), .run = R->index,
				       .gpu = sqlite3_column_int64(st, 4),
				       .kernels = sqlite3_column_int64(st, 5),
				       .coll = sqlite3_column_int64(st, 6),
				       .sync = sqlite3_column_int64(st, 7) };
		snprintf(k->host, sizeof(k->host), "%s",
			 sqlite3_column_text(st, 3) ? (const char *)sqlite3_column_text(st, 3) : "?");
	}
	R->nranks = J->nranks - R->first;
	return (err = jv_end(J, R, st, step)) ? err : index_ranks(J, R);
}

/* A (a, b) pair's totals in map/array: found or added. */
static struct jv_pair *pair_at(struct xp_u64map *at, struct jv_pair **v, size_t *n, size_t *cap,
			       int64_t a, int64_t b)
{
	uint64_t *slot;
	int fresh;

	if (xp_u64map_upsert(at, (uint64_t)a, (uint64_t)b, &slot, &fresh))
		return NULL;
	if (fresh) {
		if (xp_array__reserve((void **)v, cap, *n + 1, sizeof(**v), 64))
			return NULL;
		(*v)[*n] = (struct jv_pair){ .a = a, .b = b };
		*slot = (*n)++;
	}
	return &(*v)[*slot];
}

/* A rank's total of a kernel, n of them in ns: the job's total, and the
 * ranks' least and most (rank -1: a process of no rank, in the total only). */
static void kern_add(struct jv *J, struct jv_kernel *k, int64_t rank, int64_t ns, int64_t n)
{
	k->ns = xp_sat_add(k->ns, ns);
	k->n = xp_sat_add(k->n, n);
	if (rank < 0)
		return;
	if (!k->nranks++ || ns < k->min)
		k->min = ns;
	if (k->max_rank < 0 || ns > k->max ||
	    (ns == k->max && J->ranks[rank].rank < J->ranks[k->max_rank].rank)) {
		k->max = ns;
		k->max_rank = rank;
	}
}

/* Per rank and kernel: the spread's inputs; per site and kernel: totals. */
static int load_kernels(struct jv *J, struct jv_run *R)
{
	sqlite3_stmt *st;
	int err, step;

	/* total(): a float where sum() would fail on overflow (the rows' own
	 * numbers at the int64 limits), clamped when read */
	if ((err = jv_prep(J, R->db, R->r->path, "SELECT pid, name, max(coll), total(ns), total(n)"
			" FROM xs_kernel GROUP BY pid, name", &st)))
		return err;
	while ((step = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t name = jv_job_name(R, sqlite3_column_int64(st, 1));

		if (name < 0)
			continue;
		J->kern[name].coll |= sqlite3_column_int(st, 2) != 0;
		kern_add(J, &J->kern[name], jv_rank_of_pid(J, R, sqlite3_column_int64(st, 0)),
			 sqlite3_column_int64(st, 3), sqlite3_column_int64(st, 4));
	}
	return jv_end(J, R, st, step);
}

/* A rank's count of waits in a host-side collective: the fewest and most
 * (before kern_add counts the rank). */
static void host_count(struct jv_kernel *k, int64_t rank, int64_t n)
{
	k->coll = k->host = 1;
	if (rank < 0)
		return;
	if (!k->nranks || n < k->nlo)
		k->nlo = n, k->nlo_rank = rank;
	if (!k->nranks || n > k->nhi)
		k->nhi = n, k->nhi_rank = rank;
}

/* The time each rank's host spent in host-side collectives (a summary
 * before version 3 has none). */
static int load_host(struct jv *J, struct jv_run *R)
{
	sqlite3_stmt *st;
	int err, step;

	if (!xp_db_has_table(R->db, "xs_host"))
		return 0;
	if ((err = jv_prep(J, R->db, R->r->path, "SELECT pid, name, total(ns), total(n)"
			" FROM xs_host GROUP BY pid, name", &st)))
		return err;
	while ((step = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t name = jv_job_name(R, sqlite3_column_int64(st, 1));
		int64_t rank = jv_rank_of_pid(J, R, sqlite3_column_int64(st, 0));

		if (name < 0)
			continue;
		host_count(&J->kern[name], rank, sqlite3_column_int64(st, 3));
		kern_add(J, &J->kern[name], rank, sqlite3_column_int64(st, 2), sqlite3_column_int64(st, 3));
	}
	return jv_end(J, R, st, step);
}

/* A host-side collective the ranks waited in different numbers of times:
 * which wait pairs with which is not known (one missing from the middle
 * shifts every later one), so none of its instances is matched, as
 * report --by rank does on a merged job (host_coll.h). */
static void unmatch_host(struct jv *J)
{
	for (size_t i = 0; i < J->ninst; i++) {
		const struct jv_kernel *k = &J->kern[J->inst[i].name];

		if (k->host && k->nlo != k->nhi)
			J->inst[i].cnt = 0;
	}
}

static int load_sites(struct jv *J, struct jv_run *R)
{
	sqlite3_stmt *st;
	int64_t site;
	int err, step;

	if ((err = jv_prep(J, R->db, R->r->path, "SELECT site, name, total(ns), total(n) FROM xs_kernel"
			" GROUP BY site, name", &st)))
		return err;
	while (!err && (step = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t name = jv_job_name(R, sqlite3_column_int64(st, 1));
		struct jv_pair *p;

		if (name < 0)
			continue;
		if ((err = jv_intern(&J->names, (const char *)sqlite3_column_text(st, 0), &site)) ||
		    !(p = pair_at(&J->site_at, &J->sites, &J->nsites, &J->site_cap, site, name))) {
			err = -ENOMEM;
			break;
		}
		p->ns = xp_sat_add(p->ns, sqlite3_column_int64(st, 2));
		p->n = xp_sat_add(p->n, sqlite3_column_int64(st, 3));
		p->ranks++;
	}
	if (err) {
		sqlite3_finalize(st);
		return jv_fail(J, err, "out of memory");
	}
	return jv_end(J, R, st, step);
}

static int load_devices(struct jv *J, struct jv_run *R)
{
	sqlite3_stmt *st;
	int err, step;

	if ((err = jv_prep(J, R->db, R->r->path, "SELECT rank, device, steps, window_ns, compute_ns,"
			" comm_ns, mem_ns, idle_ns FROM xs_device", &st)))
		return err;
	while ((step = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t rank = rank_of_number(J, R, sqlite3_column_int64(st, 0));

		if (rank < 0)
			continue;
		if (xp_array__reserve((void **)&J->devs, &J->dev_cap, J->ndevs + 1, sizeof(*J->devs), 64)) {
			sqlite3_finalize(st);
			return jv_fail(J, -ENOMEM, "out of memory");
		}
		J->devs[J->ndevs++] = (struct jv_dev){ .rank = (size_t)rank,
			.device = sqlite3_column_int64(st, 1), .steps = sqlite3_column_int64(st, 2),
			.window = sqlite3_column_int64(st, 3), .compute = sqlite3_column_int64(st, 4),
			.comm = sqlite3_column_int64(st, 5), .mem = sqlite3_column_int64(st, 6),
			.idle = sqlite3_column_int64(st, 7) };
	}
	return jv_end(J, R, st, step);
}

/* The idle causes of the ranks' own views, added up by (cause, where). */
static int load_causes(struct jv *J, struct jv_run *R)
{
	sqlite3_stmt *st;
	int64_t cause, where;
	int err, step;

	if ((err = jv_prep(J, R->db, R->r->path, "SELECT cause, ifnull(site, ''), total(ns), total(gaps),"
			" count(DISTINCT rank) FROM xs_idle GROUP BY 1, 2", &st)))
		return err;
	while (!err && (step = sqlite3_step(st)) == SQLITE_ROW) {
		struct jv_pair *p;

		if ((err = jv_intern(&J->names, (const char *)sqlite3_column_text(st, 0), &cause)) ||
		    (err = jv_intern(&J->names, (const char *)sqlite3_column_text(st, 1), &where)) ||
		    !(p = pair_at(&J->cause_at, &J->causes, &J->ncauses, &J->cause_cap, cause, where))) {
			err = -ENOMEM;
			break;
		}
		p->ns = xp_sat_add(p->ns, sqlite3_column_int64(st, 2));
		p->n = xp_sat_add(p->n, sqlite3_column_int64(st, 3));
		p->ranks = xp_sat_add(p->ranks, sqlite3_column_int64(st, 4));
	}
	if (err) {
		sqlite3_finalize(st);
		return jv_fail(J, err, "out of memory");
	}
	return jv_end(J, R, st, step);
}

/* One rank's entry into an instance: its last entry, the one before, and
 * the sum of the entries (from the first seen, against overflow). */
static void enter(struct jv *J, struct jv_inst *in, size_t rank, int64_t start)
{
	if (!in->cnt++) {
		*in = (struct jv_inst){ .name = in->name, .last = start, .second = INT64_MIN, .base = start, .cnt = 1,
					.late = (uint32_t)rank };
		return;
	}
	in->sumoff = xp_sat_add(in->sumoff, xp_sat_sub(start, in->base));
	/* ties: the rank given first, as the merged job's lower pid */
	if (start > in->last || (start == in->last && rank < in->late)) {
		in->second = in->last;
		in->last = start;
		in->late = (uint32_t)rank;
	} else if (start > in->second) {
		in->second = start;
	}
	(void)J;
}

static int load_instances(struct jv *J, struct jv_run *R)
{
	sqlite3_stmt *st;
	int err, step;

	if ((err = jv_prep(J, R->db, R->r->path, "SELECT pid, name, nth, start FROM xs_coll", &st)))
		return err;
	while ((step = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t rank = jv_rank_of_pid(J, R, sqlite3_column_int64(st, 0));
		int64_t name = jv_job_name(R, sqlite3_column_int64(st, 1));
		uint64_t *slot;
		int fresh;

		if (rank < 0 || name < 0)
			continue;
		if (xp_u64map_upsert(&J->inst_at, (uint64_t)name, (uint64_t)sqlite3_column_int64(st, 2),
				     &slot, &fresh) ||
		    (fresh && xp_array__reserve((void **)&J->inst, &J->inst_cap, J->ninst + 1,
						sizeof(*J->inst), 256))) {
			sqlite3_finalize(st);
			return jv_fail(J, -ENOMEM, "out of memory");
		}
		if (fresh)
			J->inst[*slot = J->ninst++] = (struct jv_inst){ .name = name };
		enter(J, &J->inst[*slot], (size_t)rank,
		      xp_sat_add(sqlite3_column_int64(st, 3), R->r->shift_ns));
	}
	return jv_end(J, R, st, step);
}

/* Pass two: each rank's wait in the instances every rank entered. */
static int charge_waits(struct jv *J, struct jv_run *R)
{
	sqlite3_stmt *st;
	int err, step;

	if ((err = jv_prep(J, R->db, R->r->path, "SELECT pid, name, nth, start FROM xs_coll", &st)))
		return err;
	while ((step = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t rank = jv_rank_of_pid(J, R, sqlite3_column_int64(st, 0));
		int64_t name = jv_job_name(R, sqlite3_column_int64(st, 1));
		const uint64_t *slot = name < 0 ? NULL :
			xp_u64map_find(&J->inst_at, (uint64_t)name, (uint64_t)sqlite3_column_int64(st, 2));
		const struct jv_inst *in = slot ? &J->inst[*slot] : NULL;
		int64_t w;

		if (rank < 0 || !in || in->cnt != J->nranks)
			continue;
		w = xp_sat_sub(in->last, xp_sat_add(sqlite3_column_int64(st, 3), R->r->shift_ns));
		J->ranks[rank].wait = xp_sat_add(J->ranks[rank].wait, w);
		J->ranks[in->late].waited_on = xp_sat_add(J->ranks[in->late].waited_on, w);
	}
	return jv_end(J, R, st, step);
}

/* Per collective: the others' wait in each instance every rank entered,
 * charged to the last to enter it, apart where the last two entered
 * within the clock alignment's error (report_rank.c's rule). */
static int collective_waits(struct jv *J)
{
	for (size_t i = 0; i < J->ninst; i++) {
		const struct jv_inst *in = &J->inst[i];
		struct jv_kernel *k = &J->kern[in->name];
		int64_t w = xp_sat_sub(xp_sat_mul(in->cnt, xp_sat_sub(in->last, in->base)), in->sumoff);
		int unsure = in->cnt > 1 && xp_sat_sub(in->last, in->second) <= J->clock_err;

		if (in->cnt != J->nranks)
			continue;
		J->complete++;
		if (!k->late_by && (!(k->late_by = calloc(J->nranks, sizeof(int64_t))) ||
				    !(k->unsure_by = calloc(J->nranks, sizeof(int64_t)))))
			return jv_fail(J, -ENOMEM, "out of memory");
		k->wait = xp_sat_add(k->wait, w);
		k->late_by[in->late] = xp_sat_add(k->late_by[in->late], unsure ? 0 : w);
		if (unsure) {
			k->unsure = xp_sat_add(k->unsure, w);
			k->unsure_by[in->late] = xp_sat_add(k->unsure_by[in->late], w);
		}
	}
	for (size_t n = 0; n < J->nkern; n++) {
		struct jv_kernel *k = &J->kern[n];

		for (size_t r = 0; k->late_by && r < J->nranks; r++)
			if (k->late_by[r] > k->late_ns ||
			    (k->late_by[r] && k->late_by[r] == k->late_ns &&
			     J->ranks[r].rank < J->ranks[k->late_rank].rank)) {
				k->late_ns = k->late_by[r];
				k->late_rank = (int64_t)r;
			}
	}
	return 0;
}

/* The slowest rank of a kernel (a collective's: the one waited for). */
static int64_t slowest_of(const struct jv_kernel *k)
{
	return k->coll && k->late_rank >= 0 ? k->late_rank : k->max_rank;
}

/* Pass two: where each kernel's slowest rank launched most of it. */
static int slow_sites(struct jv *J, struct jv_run *R)
{
	sqlite3_stmt *st;
	int64_t site;
	int err = 0, step;

	for (size_t i = R->first; i < R->first + R->nranks; i++)
		if (J->ranks[i].slowest)
			break;
		else if (i + 1 == R->first + R->nranks)
			return 0;
	if (!R->nranks || (err = jv_prep(J, R->db, R->r->path, xp_db_has_table(R->db, "xs_host") ?
				      "SELECT pid, name, site, total(ns) FROM (SELECT pid, name,"
				      " site, ns FROM xs_kernel UNION ALL SELECT pid, name, site,"
				      " ns FROM xs_host) GROUP BY 1, 2, 3" :
				      "SELECT pid, name, site, total(ns) FROM xs_kernel GROUP BY 1, 2, 3",
				      &st)))
		return err;
	while (!err && (step = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t rank = jv_rank_of_pid(J, R, sqlite3_column_int64(st, 0));
		int64_t name = jv_job_name(R, sqlite3_column_int64(st, 1)), ns = sqlite3_column_int64(st, 3);
		struct jv_kernel *k = name >= 0 ? &J->kern[name] : NULL;

		if (rank < 0 || !k || slowest_of(k) != rank || (k->site >= 0 && ns <= k->site_ns))
			continue;
		if ((err = jv_intern(&J->names, (const char *)sqlite3_column_text(st, 2), &site)))
			break;
		k->site = site;
		k->site_ns = ns;
	}
	if (err) {
		sqlite3_finalize(st);
		return jv_fail(J, err, "out of memory");
	}
	return jv_end(J, R, st, step);
}

typedef int (*jv_pass_fn)(struct jv *J, struct jv_run *R);

/* fns over every run's summary, one open at a time. */
static int each_run(struct jv *J, const struct xp_jobrun *runs, size_t n, const jv_pass_fn *fns,
		    size_t nfns, size_t *first, size_t *count)
{
	int err = 0;

	for (size_t i = 0; i < n && !err; i++) {
		struct jv_run R = { .r = &runs[i], .index = i, .first = first[i], .nranks = count[i] };

		xp_u64map_init(&R.name_of);
		xp_u64map_init(&R.pid_of);
		xp_u64map_init(&R.num_of);
		err = xp_jobsum_open(runs[i].path, &R.db, J->err, J->errlen);
		if (!err)
			err = index_ranks(J, &R);
		for (size_t f = 0; f < nfns && !err; f++)
			err = fns[f](J, &R);
		first[i] = R.first;
		count[i] = R.nranks;
		xp_u64map_free(&R.name_of);
		xp_u64map_free(&R.pid_of);
		xp_u64map_free(&R.num_of);
		sqlite3_close(R.db);
	}
	return err;
}

static void jv_free(struct jv *J)
{
	for (size_t i = 0; i < J->names.n; i++)
		free(J->names.v[i]);
	free(J->names.v);
	xp_u64map_free(&J->names.at);
	for (size_t i = 0; i < J->nkern; i++) {
		free(J->kern[i].late_by);
		free(J->kern[i].unsure_by);
	}
	free(J->kern);
	free(J->ranks);
	free(J->sites);
	free(J->causes);
	free(J->devs);
	free(J->inst);
	xp_u64map_free(&J->site_at);
	xp_u64map_free(&J->cause_at);
	xp_u64map_free(&J->inst_at);
	xp_u64map_free(&J->rank_at);
	jv_wait_free(J);
}

int xp_jobview(const struct xp_jobrun *runs, size_t n, const struct xp_jobview_opts *o,
	       FILE *out, char *err, size_t errlen)
{
	static const jv_pass_fn first_pass[] = { load_names, load_ranks, load_kernels, load_host,
						 load_sites, load_devices, load_causes, load_instances };
	static const jv_pass_fn second_pass[] = { load_names, charge_waits, slow_sites };
	/* --by wait: the late ranks' stretches, then each wait against its late rank's */
	static const jv_pass_fn late_pass[] = { load_names, jv_wait_late };
	static const jv_pass_fn charge_pass[] = { load_names, jv_wait_charge };
	struct jv J = { .o = o, .err = err, .errlen = errlen };
	size_t *first = calloc(n ? n : 1, sizeof(*first)), *count = calloc(n ? n : 1, sizeof(*count));
	int rc = first && count ? 0 : jv_fail(&J, -ENOMEM, "out of memory");

	xp_u64map_init(&J.names.at);
	xp_u64map_init(&J.site_at);
	xp_u64map_init(&J.cause_at);
	xp_u64map_init(&J.inst_at);
	xp_u64map_init(&J.rank_at);
	for (size_t i = 0; i < n; i++)
		if (runs[i].spread_ns > J.clock_err)
			J.clock_err = runs[i].spread_ns;
	if (!rc)
		rc = each_run(&J, runs, n, first_pass, 8, first, count);
	if (!rc) {
		unmatch_host(&J);
		rc = collective_waits(&J);
	}
	for (size_t i = 0; !rc && i < J.nkern; i++)
		if (slowest_of(&J.kern[i]) >= 0)
			J.ranks[slowest_of(&J.kern[i])].slowest = 1;
	/* the names again: the second pass maps each run's ids anew */
	if (!rc)
		rc = each_run(&J, runs, n, second_pass, 3, first, count);
	if (!rc && o->by == XP_JOB_WAIT && !(rc = each_run(&J, runs, n, late_pass, 2, first, count)) &&
	    !(rc = each_run(&J, runs, n, charge_pass, 2, first, count)))
		rc = jv_wait_share_host(&J);
	if (!rc)
		rc = jv_print(&J, out);
	jv_free(&J);
	free(first);
	free(count);
	return rc;
}

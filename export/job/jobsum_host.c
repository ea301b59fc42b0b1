/* jobsum_host.c - a rank's host-side collectives in its job summary
 * (jobsum_host.h): each wait of its host in c10d work (host_coll.h) a row
 * of xs_coll, as a collective kernel is, so that `xpcorr job` matches
 * and blames gloo's collectives as it does NCCL's; their time per place
 * in xs_host, as xs_kernel has a kernel's. */
#include "export/job/jobsum_host.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "export/names/launchsite.h"

int xp_jobsum_host_base(sqlite3 *db, int64_t *base)
{
	sqlite3_stmt *st;
	int64_t max = 0;
	int rc;

	*base = 1;
	if (sqlite3_prepare_v2(db, "SELECT ifnull(max(id), 0) FROM StringIds", -1, &st, NULL)
	    != SQLITE_OK)
		return -EIO;
	if ((rc = sqlite3_step(st)) == SQLITE_ROW)
		max = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW)
		return -EIO;
	/* a database's ids near the int64 limit leave no room after them */
	if (max < 0 || max > INT64_MAX / 2)
		return -EOVERFLOW;
	*base = max + 1;
	return 0;
}

int64_t xp_jobsum_host_name(const struct xp_host_colls *H, int64_t base, size_t r, size_t k)
{
	return base + (int64_t)H->each[r][k].name;
}

/* Its names, as --by rank names them. */
static int put_names(sqlite3 *sum, const struct xp_host_colls *H, int64_t base)
{
	sqlite3_stmt *ins;
	int rc = SQLITE_DONE;

	if (sqlite3_prepare_v2(sum, "INSERT INTO xs_name VALUES(?, ?)", -1, &ins, NULL) != SQLITE_OK)
		return -EIO;
	for (size_t i = 0; i < H->nnames && rc == SQLITE_DONE; i++) {
		char name[300];

		snprintf(name, sizeof(name), XP_HOST_COLL_LABEL, H->names[i]);
		sqlite3_bind_int64(ins, 1, base + (int64_t)i);
		sqlite3_bind_text(ins, 2, name, -1, SQLITE_TRANSIENT);
		rc = sqlite3_step(ins);
		sqlite3_reset(ins);
	}
	sqlite3_finalize(ins);
	return rc == SQLITE_DONE ? 0 : -EIO;
}

/* Rank r's waits: the k-th of a name its nth, entered at its start. */
static int put_waits(sqlite3_stmt *ins, const struct xp_host_colls *H, int64_t base, size_t r)
{
	size_t *nth = calloc(H->nnames ? H->nnames : 1, sizeof(*nth));
	int rc = SQLITE_DONE;

	if (!nth)
		return -ENOMEM;
	for (size_t k = 0; k < H->count[r] && rc == SQLITE_DONE; k++) {
		const struct xp_host_wait *w = &H->each[r][k];

		sqlite3_bind_int64(ins, 1, H->pid[r]);
		sqlite3_bind_int64(ins, 2, xp_jobsum_host_name(H, base, r, k));
		sqlite3_bind_int64(ins, 3, (int64_t)nth[w->name]++);
		sqlite3_bind_int64(ins, 4, w->entry);
		sqlite3_bind_int64(ins, 5, w->entry);
		sqlite3_bind_int64(ins, 6, w->end);
		rc = sqlite3_step(ins);
		sqlite3_reset(ins);
	}
	free(nth);
	return rc == SQLITE_DONE ? 0 : -EIO;
}

/* Rank r's time in its waits per (where it waited, name) into xs_host. */
static int put_times(sqlite3_stmt *ins, struct xp_sites *sites, const struct xp_host_colls *H,
		     int64_t base, size_t r)
{
	int rc = SQLITE_DONE;

	for (size_t k = 0; k < H->count[r] && rc == SQLITE_DONE; k++) {
		const struct xp_host_wait *w = &H->each[r][k];
		const char *site = xp_sites_get(sites, w->stack);

		if (!site)
			return -EIO;
		sqlite3_bind_int64(ins, 1, H->pid[r]);
		sqlite3_bind_text(ins, 2, site, -1, SQLITE_TRANSIENT);
		sqlite3_bind_int64(ins, 3, xp_jobsum_host_name(H, base, r, k));
		sqlite3_bind_int64(ins, 4, w->end - w->entry);
		rc = sqlite3_step(ins);
		sqlite3_reset(ins);
	}
	return rc == SQLITE_DONE ? 0 : -EIO;
}

int xp_jobsum_put_host(sqlite3 *db, sqlite3 *sum, const struct xp_host_colls *H, int64_t base)
{
	struct xp_sites *sites = NULL;
	sqlite3_stmt *coll = NULL, *time = NULL;
	int err;

	if (!H->nnames)
		return 0;
	if ((uint64_t)H->nnames > (uint64_t)(INT64_MAX - base))
		return -EOVERFLOW;
	if ((err = put_names(sum, H, base)) || (err = xp_sites_new(db, &sites)))
		return err;
	xp_sites_prefer_own(sites);
	if (sqlite3_prepare_v2(sum, "INSERT INTO xs_coll VALUES(?,?,?,?,?,?)", -1, &coll, NULL)
	    != SQLITE_OK ||
	    sqlite3_prepare_v2(sum, "INSERT INTO xs_host VALUES(?1, ?2, ?3, ?4, 1)"
			       " ON CONFLICT(pid, site, name) DO UPDATE SET ns = ns + excluded.ns,"
			       " n = n + 1", -1, &time, NULL) != SQLITE_OK)
		err = -EIO;
	for (size_t r = 0; r < H->nranks && !err; r++)
		if (!(err = put_waits(coll, H, base, r)))
			err = put_times(time, sites, H, base, r);
	sqlite3_finalize(coll);
	sqlite3_finalize(time);
	xp_sites_free(sites);
	return err;
}

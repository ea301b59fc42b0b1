/* jobsum_host.h - the host-side collectives (analysis/host_coll.h) of a
 * run's ranks in its job summary: rows of xs_coll under names of their
 * own, numbered after the database's StringIds (base), each "NAME
 * (host-side: c10d::Work::wait)" in xs_name; the k-th wait of a name on a
 * rank its nth; and their time in xs_host. jobsum_wait.c gives the same
 * waits the same names.
 *
 *   int64_t base;
 *   xp_jobsum_host_base(db, &base);
 *   xp_jobsum_put_host(db, sum, &H, base);
 */
#ifndef XP_JOBSUM_HOST_H
#define XP_JOBSUM_HOST_H

#include <stddef.h>
#include <stdint.h>
#include <sqlite3.h>

#include "export/analysis/host_coll.h"

/* The first id after db's StringIds. 0, -EIO, or -EOVERFLOW where they
 * reach past half the int64 range (a crafted database). */
int xp_jobsum_host_base(sqlite3 *db, int64_t *base);
/* The summary's name of rank r's k-th wait. */
int64_t xp_jobsum_host_name(const struct xp_host_colls *H, int64_t base, size_t r, size_t k);
/* Every rank's waits into xs_coll, their names into xs_name, their time
 * per (where it waited, as launchsite.h names a stack; name) into
 * xs_host. 0, -EIO or -ENOMEM. */
int xp_jobsum_put_host(sqlite3 *db, sqlite3 *sum, const struct xp_host_colls *H, int64_t base);

#endif

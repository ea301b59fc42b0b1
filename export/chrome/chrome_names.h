/* chrome_names.h - names by id for the Chrome trace writer, through a small
 * direct-mapped cache: a trace names millions of events with a few thousand
 * distinct strings, and a cached name saves SQLite joins per event. Memory is
 * fixed (NAME_SLOTS names, 1 MiB of slots), whatever the number of events or
 * ids; the slots hold the leaves of a run's tens of thousands of stacks
 * (4096 slots missed one sample in eight at 10M samples).
 *
 *   struct xp_chrome_names *n;
 *   xp_chrome_names_new(db, "SELECT value FROM StringIds WHERE id = ?", "?", &n);
 *   const char *s = xp_chrome_names_get(n, id);    // NULL: error, see n->err
 */
#ifndef XP_CHROME_NAMES_H
#define XP_CHROME_NAMES_H

#include <sqlite3.h>
#include <stdint.h>

#define NAME_SLOTS 65536

struct xp_chrome_names {
	sqlite3_stmt *st;           /* one text column for one bound id */
	const char *missing;        /* the name of an id the query does not find */
	int err;                    /* -EIO or -ENOMEM once a lookup failed */
	int64_t id[NAME_SLOTS];     /* 0: empty slot (ids start at 1) */
	char *name[NAME_SLOTS];
};

/* 0, -EIO (sqlite3_errmsg) or -ENOMEM. */
int xp_chrome_names_new(sqlite3 *db, const char *sql, const char *missing,
			struct xp_chrome_names **out);
const char *xp_chrome_names_get(struct xp_chrome_names *n, int64_t id);
void xp_chrome_names_free(struct xp_chrome_names *n);

#endif

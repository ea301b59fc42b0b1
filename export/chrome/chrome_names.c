/* chrome_names.c - cached names by id (see chrome_names.h). */
#include "export/chrome/chrome_names.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int xp_chrome_names_new(sqlite3 *db, const char *sql, const char *missing,
			struct xp_chrome_names **out)
{
	struct xp_chrome_names *n = calloc(1, sizeof(*n));

	*out = NULL;
	if (!n)
		return -ENOMEM;
	if (sqlite3_prepare_v2(db, sql, -1, &n->st, NULL) != SQLITE_OK) {
		xp_chrome_names_free(n);
		return -EIO;
	}
	n->missing = missing;
	*out = n;
	return 0;
}

const char *xp_chrome_names_get(struct xp_chrome_names *n, int64_t id)
{
	size_t slot = (size_t)((uint64_t)id % NAME_SLOTS);
	const char *text;
	int rc;

	if (id <= 0)
		return n->missing;
	if (n->id[slot] == id)
		return n->name[slot];
	sqlite3_bind_int64(n->st, 1, id);
	rc = sqlite3_step(n->st);
	text = rc == SQLITE_ROW ? (const char *)sqlite3_column_text(n->st, 0) : NULL;
	free(n->name[slot]);
	n->name[slot] = strdup(text ? text : n->missing);
	n->id[slot] = n->name[slot] ? id : 0;
	sqlite3_reset(n->st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		n->err = -EIO;
	else if (!n->name[slot])
		n->err = -ENOMEM;
	return n->err ? NULL : n->name[slot];
}

void xp_chrome_names_free(struct xp_chrome_names *n)
{
	if (!n)
		return;
	for (size_t i = 0; i < NAME_SLOTS; i++)
		free(n->name[i]);
	sqlite3_finalize(n->st);
	free(n);
}
